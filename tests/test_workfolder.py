"""Names in the work folder (pgm_explore._workfolder): nothing typed names a file outside it.

Every trick of issue 19 is tried: paths, the parent folder, home, links that lead out, names a
file system folds together (case, Unicode forms, compatibility forms), trailing dots and spaces,
Windows' devices and reserved characters, NUL and control characters; and, with hypothesis, any
text at all: a name is refused, or it is one plain name of the folder.
"""

from __future__ import annotations

import os
import tempfile
import unicodedata
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pgm_explore._workfolder import MAX_OPEN_BYTES, NameRefused, WorkFolder, file_name, fold

REFUSED = {
    "parent": "../kernel.json",
    "parent alone": "..",
    "parent, then a name": "../../share/jupyter/kernels/python3/kernel.json",
    "this folder": ".",
    "absolute": "/etc/passwd",
    "absolute json": "/usr/share/jupyter/kernels/python3/kernel.json",
    "home": "~/.jupyter/jupyter_server_config.json",
    "home alone": "~",
    "home of a user": "~root",
    "subfolder": "drafts/app.json",
    "backslash": "..\\kernel.json",
    "windows drive": "C:\\Users\\kernel.json",
    "drive-relative": "C:kernel.json",
    "alternate data stream": "message.json:hidden",
    "hidden": ".bashrc",
    "hidden json": ".pgm-explore-drafts",
    "NUL": "message\x00.json",
    "escape": "message\x1b[2J.json",
    "newline": "message\n.json",
    "tab": "mess\tage",
    "DEL": "message\x7f",
    "bidi override": "evil\u202enosj.exe",
    "zero width space": "mes\u200bsage",
    "byte-order mark": "\ufeffmessage",
    "lone surrogate": "message\ud800",
    "unassigned": "message\u0378",
    "line separator": "mess\u2028age",
    "trailing dot": "message.",
    "trailing dot after json": "message.json.",
    "trailing dots": "message...",
    "device": "CON",
    "device json": "con.json",
    "device, another case": "Nul.txt",
    "port": "COM1",
    "printer": "lpt9.json",
    "device, then spaces": "aux .json",
    "device in superscript": "COM\u00b9",  # NFKC: COM1
    "fullwidth parent": "\uff0e\uff0e\uff0fkernel.json",  # NFKC: ../kernel.json
    "fullwidth solidus": "a\uff0fb",
    "fullwidth reverse solidus": "a\uff3cb",
    "fullwidth colon": "a\uff1ab",
    "less than": "a<b",
    "greater than": "a>b",
    "pipe": "a|b",
    "question mark": "what?",
    "star": "*.json",
    "quote": 'a"b',
    "empty": "",
    "spaces": "   ",
    "too long": "a" * 300,
    "too long in bytes": "é" * 130,
}

ACCEPTED = {
    "message": "message.json",
    "  message  ": "message.json",
    "kda-1.json": "kda-1.json",
    "Report.JSON": "Report.JSON",
    "my message": "my message.json",
    "Résumé": "Résumé.json",
    "e\u0301t\u00e9": "\u00e9t\u00e9.json",  # NFC
    "名前": "名前.json",
    "x.py": "x.py.json",  # Save writes JSON, never a module a kernel would import
    "console": "console.json",
    "com10": "com10.json",
    "a..b": "a..b.json",
    "a b.c d": "a b.c d.json",
}


@pytest.mark.parametrize("typed", REFUSED.values(), ids=REFUSED.keys())
def test_a_name_that_is_no_plain_name_is_refused(typed: str) -> None:
    with pytest.raises(NameRefused):
        file_name(typed)


@pytest.mark.parametrize(("typed", "name"), ACCEPTED.items(), ids=ACCEPTED.keys())
def test_a_plain_name_is_one_json_file_name(typed: str, name: str) -> None:
    assert file_name(typed) == name


_PIECES = st.sampled_from(
    [
        "..",
        ".",
        "/",
        "\\",
        "~",
        ":",
        "\x00",
        " ",
        "\u2215",
        "\uff0f",
        "\uff0e",
        "\u202e",
        "con",
        "json",
        "a",
        "é",
        "e\u0301",
    ]
)
TYPED = st.one_of(st.text(max_size=40), st.lists(_PIECES, max_size=12).map("".join))


@settings(max_examples=400, deadline=None)
@given(TYPED)
def test_whatever_is_typed_names_a_file_of_the_folder_or_nothing(typed: str) -> None:
    try:
        name = file_name(typed)
    except NameRefused:
        return
    for form in (name, unicodedata.normalize("NFKC", name), unicodedata.normalize("NFD", name)):
        assert "/" not in form and "\\" not in form and not form.startswith((".", "~"))
    folder = Path("/srv/work")
    assert (folder / name).parent == folder
    assert os.path.dirname(os.path.normpath(os.path.join(folder, name))) == str(folder)
    assert name.lower().endswith(".json") and len(name.encode("utf-8")) <= 255
    assert not any(unicodedata.category(c) in ("Cc", "Cf", "Cs") for c in name)
    assert file_name(name) == name  # a name is its own name


@settings(max_examples=150, deadline=None)
@given(TYPED)
def test_saving_under_whatever_is_typed_writes_inside_the_folder_only(typed: str) -> None:
    with tempfile.TemporaryDirectory() as base:
        root = Path(base)
        work, beside = root / "work", root / "beside"
        work.mkdir()
        beside.mkdir()
        (beside / "kernel.json").write_text("{}", encoding="utf-8")
        try:
            written = WorkFolder(work).write(typed, '{"saved": true}\n')
        except NameRefused:
            written = None
        everything = sorted(p.relative_to(root).as_posix() for p in root.rglob("*"))
        assert (beside / "kernel.json").read_text(encoding="utf-8") == "{}"
        if written is None:
            assert everything == ["beside", "beside/kernel.json", "work"]
        else:
            assert written.parent == work.resolve()
            assert everything == ["beside", "beside/kernel.json", "work", f"work/{written.name}"]


@pytest.fixture
def folder(tmp_path: Path) -> WorkFolder:
    work, outside = tmp_path / "work", tmp_path / "outside"
    work.mkdir()
    outside.mkdir()
    (outside / "secret.json").write_text('{"secret": 1}\n', encoding="utf-8")
    (work / "message.json").write_text('{"Header": "PGM-PCP-V1.0"}\n', encoding="utf-8")
    (work / "notes.txt").write_text("not JSON", encoding="utf-8")
    (work / ".hidden.json").write_text("{}", encoding="utf-8")
    (work / "out.json").symlink_to(outside / "secret.json")  # a link leading out
    (work / "up.json").symlink_to("../outside/secret.json")  # the same, relative
    (work / "inside.json").symlink_to(work / "message.json")  # a link to a file of the folder
    (work / "broken.json").symlink_to(work / "gone.json")
    (work / "folder.json").mkdir()
    (work / "outside-dir.json").symlink_to(outside)
    os.mkfifo(work / "pipe.json")  # opening it for reading would wait for a writer forever
    return WorkFolder(work)


def test_open_lists_the_folders_json_files_and_links_inside_it_only(folder: WorkFolder) -> None:
    assert folder.names() == ["inside.json", "message.json"]


@pytest.mark.parametrize(
    "typed", ["out.json", "up", "broken.json", "folder.json", "outside-dir.json", "pipe.json", "../outside/secret.json"]
)
def test_open_refuses_what_is_not_a_file_of_the_folder(folder: WorkFolder, typed: str) -> None:
    with pytest.raises((NameRefused, FileNotFoundError)) as refused:
        folder.read(typed)
    assert '"secret": 1' not in str(refused.value)  # (nothing of its content)


def test_open_reads_a_file_and_a_link_inside_by_name_in_any_case_and_form(folder: WorkFolder) -> None:
    expected = b'{"Header": "PGM-PCP-V1.0"}\n'
    assert folder.read("message") == ("message.json", expected)
    assert folder.read("MESSAGE.JSON") == ("message.json", expected)
    assert folder.read("inside.json") == ("inside.json", expected)
    with pytest.raises(FileNotFoundError):
        folder.read("missing.json")


@pytest.mark.parametrize("typed", ["out.json", "up.json", "inside.json", "folder.json", "pipe.json", "broken"])
def test_save_never_writes_through_a_link_nor_over_what_is_not_a_file(folder: WorkFolder, typed: str) -> None:
    before = (folder.path.parent / "outside" / "secret.json").read_bytes()
    with pytest.raises(NameRefused):
        folder.write(typed, "{}\n", overwrite=True)
    assert (folder.path.parent / "outside" / "secret.json").read_bytes() == before
    assert (folder.path / "message.json").read_bytes() == b'{"Header": "PGM-PCP-V1.0"}\n'


def test_save_takes_a_name_a_folding_system_would_merge_for_the_file_there(folder: WorkFolder) -> None:
    with pytest.raises(FileExistsError):
        folder.write("MESSAGE", "{}\n")  # on a case-insensitive system it is message.json
    assert folder.write("Message.Json", "{}\n", overwrite=True).name == "message.json"
    assert sorted(p.name for p in folder.path.glob("*ssage*")) == ["message.json"]
    composed, decomposed = "caf\u00e9.json", "cafe\u0301.json"
    os.close(os.open(folder.path / decomposed, os.O_CREAT | os.O_WRONLY))  # as macOS writes names
    assert fold(composed) == fold(decomposed)
    assert folder.write(composed, "{}\n", overwrite=True).name == decomposed
    assert composed not in os.listdir(folder.path)


def test_open_refuses_a_file_too_large_to_open(folder: WorkFolder) -> None:
    with open(folder.path / "huge.json", "wb") as stream:
        stream.truncate(MAX_OPEN_BYTES + 1)
    with pytest.raises(NameRefused, match="too large"):
        folder.read("huge.json")
