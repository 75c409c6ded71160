"""`pgm-explore validate`: the public contract other tools parse (sources, JSON lines, exit
statuses), the text for people, standard input and closed pipes; in process and as a command."""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from conftest import EXAMPLES, KINDS, ROOT, example_files, minimal_message

from pgm_explore.cli import main
from pgm_explore.io import validate_file
from pgm_explore.validation import validate

# The minimal conforming BKN-PAL Request of conftest, with a DataType, as the CLI examples use.
PAL_RQ: dict[str, Any] = minimal_message("BKN-PAL", "RQ") | {"QueryID": "q-1"}
PAL_RQ["DataXMData"] = {**PAL_RQ["DataXMData"], "DataID": "q-1", "DataType": "PGM-KPA-V1.0"}
BAD_PAL_RS = {"Header": "PGM-KPA-V1.0", "Mode": "RS"}
REPORT_KEYS = ["source", "type", "mode", "conforms", "findings"]
FINDING_KEYS = ["severity", "rule", "path", "message", "spec"]
ANSI = re.compile(r"\x1b\[[0-9;]*m")


def line(doc: Any) -> str:
    return json.dumps(doc) + "\n"


def write(path: Path, text: str | bytes) -> str:
    if isinstance(text, str):
        text = text.encode()
    path.write_bytes(text)
    return str(path)


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    status = main(list(argv))
    out, err = capsys.readouterr()
    return status, out, err


def objects(out: str) -> list[dict[str, Any]]:
    return [json.loads(text) for text in out.splitlines()]


def command(
    *args: str, stdin: bytes | None = None, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-m", "pgm_explore", *args],
        input=stdin,
        capture_output=True,
        timeout=60,
        env={**os.environ, **(env or {})},
        check=False,
    )


# --- the JSON lines --------------------------------------------------------------------------


def test_json_lines_have_exact_keys_in_order_and_match_the_report(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write(tmp_path / "m.jsonl", line(PAL_RQ) + line(BAD_PAL_RS) + "{oops\n")
    status, out, err = run(capsys, "validate", "--format", "json", path)
    assert (status, err) == (1, "")
    first, second, third = objects(out)
    for obj in (first, second, third):
        assert list(obj) == REPORT_KEYS
    assert first == {"source": f"{path}:1", "type": "BKN-PAL", "mode": "RQ", "conforms": True, "findings": []}
    assert second == validate(BAD_PAL_RS, source=f"{path}:2").to_dict()
    assert [list(f) for f in second["findings"]] == [FINDING_KEYS] * len(second["findings"])
    assert third["type"] is None and third["mode"] is None and third["conforms"] is False
    assert third["findings"] == [
        {
            "severity": "error",
            "rule": "syntax",
            "path": "$",
            "message": "Not valid JSON: Expecting property name enclosed in double quotes.",
            "spec": third["findings"][0]["spec"],
            "line": 3,
            "column": 2,
        }
    ]


@pytest.mark.parametrize(
    "name",
    ["a.jsonl", 'we"ird\\name\n.jsonl', "ünïcode.jsonl", os.fsdecode(b"\xff-not-utf8.jsonl")],
    ids=["plain", "quote-backslash-newline", "unicode", "lone-surrogate"],
)
def test_the_fast_json_lines_equal_encoding_the_reports(
    name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # The name becomes every report's source: quotes, backslashes, a newline, non-ASCII, and bytes
    # that are not UTF-8 (a lone surrogate in Python's str) must come out as json.dumps writes them.
    path = tmp_path / name
    path.write_text(line(PAL_RQ) + line(PAL_RQ | {"Question": ""}) + line(BAD_PAL_RS), encoding="utf-8")
    status, out, _ = run(capsys, "validate", "--format", "json", str(path))
    assert status == 1
    reports = validate_file(path)
    assert [r.findings != () for r in reports] == [False, True, True]
    assert out.splitlines() == [json.dumps(r.to_dict(), separators=(",", ":")) for r in reports]


def test_json_output_is_ascii(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write(tmp_path / "m.json", json.dumps(BAD_PAL_RS | {"Mode": "Réponse"}))
    _, out, _ = run(capsys, "validate", "--format", "json", path)
    assert out.isascii()
    assert any("Réponse" in f["message"] for f in objects(out)[0]["findings"])


# --- sources -----------------------------------------------------------------------------------


def test_sources_name_the_path_the_line_and_the_index(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    one = write(tmp_path / "one.json", json.dumps(PAL_RQ, indent=2))
    many = write(tmp_path / "many.json", json.dumps([PAL_RQ, BAD_PAL_RS, PAL_RQ]))
    lines = write(tmp_path / "lines.jsonl", "\n" + line(PAL_RQ) + "   \n\n" + line(PAL_RQ).replace("\n", "\r\n"))
    _, out, _ = run(capsys, "validate", "--format", "json", one, many, lines)
    assert [o["source"] for o in objects(out)] == [
        one,
        f"{many}#0",
        f"{many}#1",
        f"{many}#2",
        f"{lines}:2",  # blank lines are skipped but counted (DECISIONS D18)
        f"{lines}:5",
    ]
    assert [o["conforms"] for o in objects(out)] == [True, True, False, True, True, True]


def test_other_extensions_are_read_by_content(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    pretty = write(tmp_path / "pretty.txt", json.dumps(PAL_RQ, indent=2))
    lines = write(tmp_path / "lines.log", line(PAL_RQ) + line(PAL_RQ))
    array = write(tmp_path / "array", json.dumps([PAL_RQ, PAL_RQ]))
    ndjson = write(tmp_path / "x.ndjson", line(PAL_RQ))
    _, out, _ = run(capsys, "validate", "--format", "json", pretty, lines, array, ndjson)
    assert [o["source"] for o in objects(out)] == [
        pretty,
        f"{lines}:1",
        f"{lines}:2",
        f"{array}#0",
        f"{array}#1",
        f"{ndjson}:1",
    ]


def test_input_format_overrides_the_extension(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write(tmp_path / "really-lines.json", line(PAL_RQ) + line(PAL_RQ))
    _, out, _ = run(capsys, "validate", "--format", "json", path)
    assert [(o["source"], o["findings"][0]["rule"]) for o in objects(out)] == [(path, "syntax")]
    _, out, _ = run(capsys, "validate", "--format", "json", "--input-format", "jsonl", path)
    assert [o["source"] for o in objects(out)] == [f"{path}:1", f"{path}:2"]


# --- exit statuses --------------------------------------------------------------------------


def test_exit_0_when_every_message_conforms(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run(capsys, "validate", write(tmp_path / "a.json", json.dumps(PAL_RQ)))[0] == 0


def test_exit_1_when_one_does_not(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    good = write(tmp_path / "a.json", json.dumps(PAL_RQ))
    bad = write(tmp_path / "b.json", json.dumps(BAD_PAL_RS))
    assert run(capsys, "validate", good, bad)[0] == 1


def test_warnings_do_not_change_the_status(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write(tmp_path / "a.json", json.dumps(PAL_RQ | {"Question": ""}))
    status, out, _ = run(capsys, "validate", "--format", "json", path)
    assert status == 0
    assert [(f["severity"], f["rule"]) for f in objects(out)[0]["findings"]] == [("warning", "empty-value")]


@pytest.mark.parametrize("what", ["missing", "directory", "socket"])
def test_exit_2_for_an_unreadable_path_and_the_others_still_run(
    what: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = write(tmp_path / "bad.json", json.dumps(BAD_PAL_RS))
    good = write(tmp_path / "good.json", json.dumps(PAL_RQ))
    target = tmp_path / "target.json"
    with contextlib.closing(socket.socket(socket.AF_UNIX)) as listener:
        if what == "directory":
            target.mkdir()
        elif what == "socket":  # there and readable by its mode, but no file opens it (even for root)
            listener.bind(str(target))
        status, out, err = run(capsys, "validate", "--format", "json", bad, str(target), good)
    assert status == 2  # 2 wins over the 1 that bad.json alone would give
    assert [o["source"] for o in objects(out)] == [bad, good]
    reason = {"missing": "no such file", "directory": "it is a directory", "socket": "No such device or address"}[what]
    assert err.startswith(f"pgm-explore validate: cannot read {target}: {reason}")
    assert "Traceback" not in err


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() == 0, reason="root reads every file")
def test_exit_2_for_a_file_without_read_permission(tmp_path: Path) -> None:
    path = tmp_path / "secret.json"
    path.write_text(json.dumps(PAL_RQ))
    path.chmod(0)
    result = command("validate", str(path))
    assert result.returncode == 2
    assert b"permission denied" in result.stderr


@pytest.mark.parametrize(
    "argv",
    [
        [],
        ["validate"],
        ["validate", "--format", "yaml", "x.json"],
        ["validate", "--bogus", "x.json"],
        ["frobnicate"],
    ],
)
def test_exit_2_for_usage_errors(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    status, out, err = run(capsys, *argv)
    assert status == 2
    assert out == ""
    assert "usage: pgm-explore" in err


def test_help_explains_inputs_outputs_and_statuses(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = run(capsys, "validate", "--help")
    assert status == 0
    for words in ("PATH.jsonl", "standard input", "NO_COLOR", "exit status", "PATH#0", "--format", "141"):
        assert words in out
    status, out, _ = run(capsys, "--help")
    assert status == 0 and "validate" in out


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = run(capsys, "--version")
    assert status == 0 and out.startswith("pgm-explore ")


# --- standard input --------------------------------------------------------------------------


def _stdin(monkeypatch: pytest.MonkeyPatch, data: bytes) -> None:
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data)))


@pytest.mark.parametrize(
    ("data", "sources"),
    [
        (line(PAL_RQ) + "\n" + line(BAD_PAL_RS), ["-:1", "-:3"]),
        (json.dumps(PAL_RQ, indent=2), ["-"]),
        (line(PAL_RQ), ["-"]),
        (json.dumps([PAL_RQ, BAD_PAL_RS], indent=1), ["-#0", "-#1"]),
        ("{broken\n" + line(PAL_RQ), ["-:1", "-:2"]),
        ("", ["-"]),
    ],
    ids=["jsonl", "pretty", "one-line", "array", "jsonl-broken-first-line", "empty"],
)
def test_stdin_is_recognised_by_content(
    data: str, sources: list[str], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    _stdin(monkeypatch, data.encode())
    status, out, err = run(capsys, "validate", "--format", "json", "-")
    assert [o["source"] for o in objects(out)] == sources
    assert err == ""
    assert status == (0 if all(o["conforms"] for o in objects(out)) else 1)


def test_stdin_through_the_command() -> None:
    result = command("validate", "--format", "json", "-", stdin=(line(PAL_RQ) + line(BAD_PAL_RS)).encode())
    assert result.returncode == 1
    assert [json.loads(text)["source"] for text in result.stdout.splitlines()] == ["-:1", "-:2"]
    assert result.stderr == b""


# --- text for people --------------------------------------------------------------------------


def test_text_output_is_the_reports_and_a_summary(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    good = write(tmp_path / "good.json", json.dumps(PAL_RQ))
    bad = write(tmp_path / "bad.jsonl", line(BAD_PAL_RS) + line(PAL_RQ | {"Question": ""}))
    status, out, _ = run(capsys, "validate", good, bad)
    assert status == 1
    reports = [
        validate(PAL_RQ, source=good),
        validate(BAD_PAL_RS, source=f"{bad}:1"),
        validate(PAL_RQ | {"Question": ""}, source=f"{bad}:2"),
    ]
    errors = len(reports[1].errors)
    assert out == "".join(f"{r}\n" for r in reports) + (
        f"3 messages: 2 conform, 1 does not conform ({errors} errors, 1 warning)\n"
    )
    assert "\x1b[" not in out


def test_summary_counts_unreadable_paths(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    good = write(tmp_path / "good.json", json.dumps(PAL_RQ))
    _, out, _ = run(capsys, "validate", good, str(tmp_path / "nope.json"))
    assert (
        out.splitlines()[-1]
        == "1 message: 1 conforms, 0 do not conform (0 errors, 0 warnings); 1 path could not be read"
    )


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.mark.parametrize(
    ("argv", "no_color", "coloured"),
    [
        ([], None, True),
        ([], "1", False),
        (["--no-color"], None, False),
        (["--color"], "1", True),
    ],
)
def test_colour_on_a_terminal_unless_no_color(
    argv: list[str],
    no_color: str | None,
    coloured: bool,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    path = write(tmp_path / "m.jsonl", line(PAL_RQ) + line(BAD_PAL_RS))
    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.delenv("TERM", raising=False)
    if no_color is not None:
        monkeypatch.setenv("NO_COLOR", no_color)
    terminal = _Terminal()
    monkeypatch.setattr(sys, "stdout", terminal)
    assert main(["validate", *argv, path]) == 1
    out = terminal.getvalue()
    assert ("\x1b[" in out) is coloured
    reports = [validate(PAL_RQ, source=f"{path}:1"), validate(BAD_PAL_RS, source=f"{path}:2")]
    assert ANSI.sub("", out).splitlines()[:-1] == "\n".join(str(r) for r in reports).splitlines()


def test_no_colour_through_a_pipe(tmp_path: Path) -> None:
    path = write(tmp_path / "m.json", json.dumps(BAD_PAL_RS))
    result = command("validate", path, env={"TERM": "xterm-256color"})
    assert result.returncode == 1
    assert b"\x1b[" not in result.stdout
    assert result.stdout.decode().startswith(f"{path}: BKN-PAL RS: does not conform\n")


# --- the command as installed, and closed pipes ---------------------------------------------


def test_console_script_and_module_agree(tmp_path: Path) -> None:
    path = write(tmp_path / "m.json", json.dumps(PAL_RQ))
    module = command("validate", "--format", "json", path)
    script = Path(sys.executable).with_name("pgm-explore")
    if not script.exists():
        pytest.skip("the console script is not installed in this environment")
    installed = subprocess.run([str(script), "validate", "--format", "json", path], capture_output=True, timeout=60)
    assert module.returncode == installed.returncode == 0
    assert module.stdout == installed.stdout


def test_closed_pipe_ends_quietly(tmp_path: Path) -> None:
    # Far more output than a pipe buffer holds, so that writing goes on after the reader left.
    path = write(tmp_path / "many.jsonl", line(PAL_RQ) * 20_000)
    with subprocess.Popen(
        [sys.executable, "-m", "pgm_explore", "validate", "--format", "json", path],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    ) as process:
        assert process.stdout is not None and process.stderr is not None
        first = process.stdout.readline()
        process.stdout.close()  # like `| head -1`
        err = process.stderr.read()
        assert process.wait(timeout=60) == 141  # 128 + SIGPIPE, as its --help says
    assert json.loads(first)["source"] == f"{path}:1"
    assert err == b"", err.decode(errors="replace")


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="no /dev/full, the disk that is always full")
@pytest.mark.parametrize(
    "argv",
    [
        ["validate", "--format", "json", "data/transcripts/full-session.jsonl"],
        ["check", "data/transcripts/defective/turn-gap.jsonl"],
        ["check", "--corpus", "--format", "json", "data/transcripts"],
        ["table", "messages", "data/transcripts/full-session.jsonl"],
    ],
    ids=lambda argv: "-".join(a for a in argv if not a.startswith(("-", "data"))),
)
def test_a_full_disk_is_said_plainly_with_status_2(argv: list[str]) -> None:
    # (`pgm-explore check big.jsonl > findings.jsonl` with the disk full: a traceback before)
    with open("/dev/full", "w") as full:
        done = subprocess.run(
            [sys.executable, "-m", "pgm_explore", *argv], stdout=full, stderr=subprocess.PIPE, cwd=ROOT, timeout=300
        )
    assert done.stderr.decode() == f"pgm-explore {argv[0]}: cannot write the output: No space left on device\n"
    assert done.returncode == 2


# --- the examples of the repository ----------------------------------------------------------

VALID = example_files("valid")
MALFORMED = sorted(
    p for p in (EXAMPLES / "malformed").glob("*.json*") if ".expected" not in p.name and p.suffix in (".json", ".jsonl")
)


@pytest.mark.skipif(not VALID, reason="no example files")
def test_every_valid_example_conforms(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, err = run(capsys, "validate", "--format", "json", *map(str, VALID))
    found = objects(out)
    assert [o["source"] for o in found] == [str(p) for p in VALID]
    assert [o["source"] for o in found if not o["conforms"] or o["findings"]] == []
    assert (status, err) == (0, "")


@pytest.mark.parametrize("path", MALFORMED, ids=lambda p: p.name)
def test_malformed_examples_read_as_expected(path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    expected = json.loads(path.with_name(path.name.removesuffix(path.suffix) + ".expected.json").read_text())
    status, out, err = run(capsys, "validate", "--format", "json", str(path))
    (found,) = objects(out)
    assert (status, err, found["source"], found["conforms"]) == (1, "", str(path), expected["conforms"])
    assert [f["rule"] for f in found["findings"]] == expected["rules"]
    assert [f["path"] for f in found["findings"]] == expected["paths"]
    if "line" in expected:
        assert (found["findings"][0]["line"], found["findings"][0]["column"]) == (expected["line"], expected["column"])


def test_every_invalid_example_reads_as_validate_reads_it(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    # The bulk reader (msgspec first, the json module for what it leaves) and validate() of the
    # text give the same findings: numbers a double would move onto an integer included (issue 24).
    # Each file as one line of JSON Lines (no JSON string holds a line break), which msgspec reads first.
    texts = [p.read_bytes().replace(b"\n", b" ") for p in example_files("invalid")]
    path = write(tmp_path / "invalid.jsonl", b"\n".join(texts).decode())
    _, out, err = run(capsys, "validate", "--format", "json", path)
    assert err == ""
    assert [o["findings"] for o in objects(out)] == [validate(text).to_dict()["findings"] for text in texts]


@pytest.mark.parametrize(("type_name", "mode"), KINDS)
def test_every_type_and_mode_through_jsonl(
    type_name: str, mode: str | None, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    doc = minimal_message(type_name, mode)
    path = write(tmp_path / "m.jsonl", line(doc))
    status, out, _ = run(capsys, "validate", "--format", "json", path)
    assert (status, objects(out)) == (0, [validate(doc, source=f"{path}:1").to_dict()])


def test_validate_and_check_of_a_small_file_import_no_web_client() -> None:
    # Every command imports the launcher of lab and app (pgm_explore._launch): what it needs to
    # wait for a server (urllib.request, and with it http.client and ssl) and to make a token
    # (secrets) it imports where it does so: 8% of the instructions of `pgm-explore validate FILE`.
    transcript = ROOT / "data" / "transcripts" / "market-wallet-limit.jsonl"
    code = (
        "import contextlib, io, sys; from pgm_explore.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        f"    main(['validate', {str(transcript)!r}]); main(['check', {str(transcript)!r}])\n"
        "print(sorted(m for m in ('urllib.request', 'http.client', 'ssl', 'secrets') if m in sys.modules))"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=True)
    assert result.stdout.strip() == "[]"
