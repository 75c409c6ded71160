"""pgm_explore.io, the public reading API: the same messages, names and reports as the command."""

from __future__ import annotations

import importlib
import io
import json
from pathlib import Path

import pytest

import pgm_explore
from pgm_explore import io as pio
from pgm_explore.cli import main

ROOT = Path(__file__).resolve().parents[1]
TRANSCRIPT = ROOT / "data" / "transcripts" / "market-wallet-limit.jsonl"
PAL_REQUEST = b'{"Header": "PGM-KPA-V1.0", "Mode": "RQ"}'


def test_all_is_sorted_public_and_documented_here() -> None:
    module = importlib.import_module("pgm_explore.io")
    assert module.__all__ == sorted(module.__all__)
    for name in module.__all__:
        owner = getattr(module, name).__module__
        assert not any(part.startswith("_") for part in owner.split(".")), f"{name} is {owner}"


def test_validate_file_is_the_same_from_the_package() -> None:
    assert pgm_explore.validate_file is pio.validate_file


@pytest.mark.parametrize(
    ("name", "content", "sources"),
    [
        ("one.json", PAL_REQUEST, ["one.json"]),
        ("many.json", b"[" + PAL_REQUEST + b", " + PAL_REQUEST + b"]", ["many.json#0", "many.json#1"]),
        ("lines.jsonl", PAL_REQUEST + b"\n\n" + PAL_REQUEST + b"\n", ["lines.jsonl:1", "lines.jsonl:3"]),
        ("lines.ndjson", PAL_REQUEST + b"\n", ["lines.ndjson:1"]),
        ("sniffed.txt", PAL_REQUEST + b"\n" + PAL_REQUEST + b"\n", ["sniffed.txt:1", "sniffed.txt:2"]),
    ],
)
def test_files_and_streams_name_their_messages_alike(
    name: str, content: bytes, sources: list[str], tmp_path: Path
) -> None:
    path = tmp_path / name
    path.write_bytes(content)
    assert [item.source for item in pio.iter_documents(path)] == [str(tmp_path / s) for s in sources]
    kind = pio.input_kind(name)
    assert [item.source for item in pio.iter_stream(io.BytesIO(content), name, kind)] == sources
    assert [r.source for r in pio.validate_file(name, content)] == sources
    assert [r.to_dict() for r in pio.validate_file(path)] == [r.to_dict() for r in pio.iter_reports(path)]


def test_kind_overrides_the_extension(tmp_path: Path) -> None:
    path = tmp_path / "lines.json"
    path.write_bytes(PAL_REQUEST + b"\n" + PAL_REQUEST + b"\n")
    as_json = list(pio.iter_documents(path))
    as_lines = list(pio.iter_documents(path, kind="jsonl"))
    assert len(as_json) == 1 and as_json[0].problem is not None  # two values are no one JSON value
    assert [item.document for item in as_lines] == [json.loads(PAL_REQUEST)] * 2


def test_what_is_wrong_inside_a_file_is_a_finding_and_reading_goes_on() -> None:
    items = list(pio.iter_stream(io.BytesIO(b'{oops\n\xff\n{"a": NaN}\n{"a": 1}\n'), "bad.jsonl", "jsonl"))
    assert [item.source for item in items] == ["bad.jsonl:1", "bad.jsonl:2", "bad.jsonl:3", "bad.jsonl:4"]
    assert [item.problem is not None for item in items] == [True, True, True, False]


@pytest.mark.parametrize("where", ["missing", "directory"])
def test_an_unreadable_path_raises_at_once(where: str, tmp_path: Path) -> None:
    path = tmp_path / "missing.jsonl" if where == "missing" else tmp_path
    with pytest.raises(pio.UnreadablePath) as caught:
        pio.iter_documents(path)  # no next(): the call itself says so
    assert str(caught.value).startswith(f"cannot read {path}: ")
    with pytest.raises(pio.UnreadablePath):
        pio.iter_reports(path)
    with pytest.raises(pio.UnreadablePath):
        pio.validate_file(path)
    assert isinstance(caught.value, pgm_explore.PgmExploreError)


def test_the_reports_are_those_of_the_command(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["validate", "--format", "json", str(TRANSCRIPT)]) == 0
    printed = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [r.to_dict() for r in pio.iter_reports(TRANSCRIPT)] == printed
    assert [r.to_dict() for r in pio.iter_reports(TRANSCRIPT, parallel=False)] == printed
    assert len(printed) == len(list(pio.iter_documents(TRANSCRIPT))) > 10
