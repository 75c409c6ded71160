"""`pgm-explore check`: the public contract other tools parse (JSON keys and their order, sources,
exit statuses), agreement with the library and the sidecars of data/transcripts, streaming, the
text for people; in process and as a command."""

from __future__ import annotations

import contextlib
import importlib.util
import io
import json
import os
import re
import select
import socket
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from conftest import ROOT, minimal_message

from pgm_explore import cli
from pgm_explore.cli import main
from pgm_explore.dialogue import Transcript, check_paths
from pgm_explore.validation import RULES

TRANSCRIPTS = ROOT / "data" / "transcripts"
FILES = sorted(
    p for p in TRANSCRIPTS.rglob("*") if p.suffix in (".json", ".jsonl") and not p.name.endswith(".expected.json")
)
VALID = [p for p in FILES if p.parent == TRANSCRIPTS]
DEFECTIVE = [p for p in FILES if p.parent == TRANSCRIPTS / "defective"]
MARKET = TRANSCRIPTS / "market-wallet-limit.jsonl"
KEYS = ["source", "dialog", "type", "rule", "severity", "message", "spec", "path"]
ANSI = re.compile(r"\x1b\[[0-9;]*m")

# A Response to a Request nobody sent: an error (request-unknown) wherever it appears.
ORPHAN = minimal_message("BKN-PAL", "RS") | {"QueryID": "q-2"}


def _id(path: Path) -> str:
    return str(path.relative_to(TRANSCRIPTS))


def _sidecar(path: Path) -> dict[str, Any]:
    return json.loads(path.with_name(path.name.removesuffix(path.suffix) + ".expected.json").read_text())


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    status = main(list(argv))
    out, err = capsys.readouterr()
    return status, out, err


def objects(out: str) -> list[dict[str, Any]]:
    return [json.loads(text) for text in out.splitlines()]


def command(*args: str, stdin: bytes | None = None) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-m", "pgm_explore", *args], input=stdin, capture_output=True, timeout=60, check=False
    )


def lines_of(path: Path) -> list[str]:
    return path.read_text(encoding="utf-8").splitlines(keepends=True)


# --- the JSON lines --------------------------------------------------------------------------


def test_every_json_finding_has_the_path_the_text_output_shows(capsys: pytest.CaptureFixture[str]) -> None:
    # issue #12: the text output had the JSON path and the JSON output dropped it.
    path = str(TRANSCRIPTS / "defective" / "turn-gap.jsonl")
    _, out, _ = run(capsys, "check", "--format", "json", path)
    found = objects(out)
    assert [(f["rule"], f["path"]) for f in found] == [("turn-gap", "$.TurnIndex")]
    _, text, _ = run(capsys, "check", path)
    assert "[turn-gap] $.TurnIndex:" in text


@pytest.mark.parametrize("path", FILES, ids=_id)
def test_json_lines_are_the_library_findings_with_exact_keys_in_order(
    path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    status, out, err = run(capsys, "check", "--format", "json", str(path))
    found = objects(out)
    assert [list(obj) for obj in found] == [KEYS] * len(found)
    # The same findings as the library's streaming path, in the same order.
    assert found == [f.to_dict() for f in check_paths([str(path)])]
    assert err == ""
    assert status == (1 if any(f["severity"] == "error" for f in found) else 0)


@pytest.mark.parametrize("path", FILES, ids=_id)
def test_json_output_is_what_the_sidecar_lists(path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    expected = _sidecar(path)
    status, out, _ = run(capsys, "check", "--format", "json", str(path))
    key, separator = ("index", "#") if path.suffix == ".json" else ("line", ":")
    found = Counter()
    for obj in objects(out):
        name, _, where = obj["source"].rpartition(separator)
        assert name == str(path), obj["source"]
        found[(int(where), obj["rule"])] += 1
        assert obj["severity"] == RULES[obj["rule"]].severity
    assert found == Counter((item[key], item["rule"]) for item in expected["findings"])
    assert sum(obj["severity"] == "error" for obj in objects(out)) == expected["errors"]
    assert status == (1 if expected["errors"] else 0)


def test_sources_name_the_line_of_json_lines_and_the_index_of_an_array(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lines = tmp_path / "t.jsonl"
    lines.write_text("\n" + json.dumps(ORPHAN) + "\n")  # blank lines are counted (D18)
    array = tmp_path / "t.json"
    array.write_text(json.dumps([ORPHAN | {"QueryID": "q-3"}]))
    _, out, _ = run(capsys, "check", "--format", "json", str(lines))
    assert [(o["source"], o["rule"], o["dialog"], o["type"]) for o in objects(out)] == [
        (f"{lines}:2", "request-unknown", "d-1", "BKN-PAL")
    ]
    _, out, _ = run(capsys, "check", "--format", "json", str(array))
    assert [(o["source"], o["rule"]) for o in objects(out)] == [(f"{array}#0", "request-unknown")]


def test_unreadable_text_is_a_finding_without_dialogue_or_type(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "t.jsonl"
    path.write_text('{"Header": \n"a JSON string, not a message"\n')
    status, out, _ = run(capsys, "check", "--format", "json", str(path))
    found = objects(out)
    assert [(o["source"], o["rule"], o["dialog"], o["type"]) for o in found] == [
        (f"{path}:1", "syntax", None, None),
        (f"{path}:2", "not-object", None, None),  # as validate reads it, not as JSON text to parse
    ]
    assert status == 1
    status, out, _ = run(capsys, "check", str(path))
    assert re.search(r"^  error \[syntax\] \$ \(line \d+, column \d+\): ", out, re.MULTILINE)


def test_json_output_is_ascii(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "t.jsonl"
    path.write_text(json.dumps(ORPHAN | {"DialogID": "dialogue-été"}, ensure_ascii=False) + "\n", encoding="utf-8")
    _, out, _ = run(capsys, "check", "--format", "json", str(path))
    assert out.isascii()
    assert objects(out)[0]["dialog"] == "dialogue-été"


# --- one transcript over several PATHs ---------------------------------------------------------


def test_paths_are_one_transcript_in_the_order_given(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    lines = lines_of(MARKET)
    first, second = tmp_path / "first.jsonl", tmp_path / "second.jsonl"
    first.write_text("".join(lines[:4]))  # the Responses of some of these Requests are in the second part
    second.write_text("".join(lines[4:]))
    status, out, _ = run(capsys, "check", "--format", "json", str(first), str(second))
    assert (status, out) == (0, "")
    status, out, _ = run(capsys, "check", "--format", "json", str(second), str(first))
    found = objects(out)
    assert status == 1
    assert {o["rule"] for o in found} >= {"request-unknown", "dialog-not-opened", "unanswered"}
    assert {o["source"].rpartition(":")[0] for o in found} == {str(first), str(second)}


def test_standard_input(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    data = MARKET.read_bytes() + json.dumps(ORPHAN).encode() + b"\n"
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data)))
    status, out, err = run(capsys, "check", "--format", "json", "-")
    assert [(o["source"], o["rule"]) for o in objects(out)] == [("-:14", "request-unknown")]
    assert (status, err) == (1, "")


def test_standard_input_through_the_command() -> None:
    result = command("check", "--format", "json", "-", stdin=MARKET.read_bytes())
    assert (result.returncode, result.stdout, result.stderr) == (0, b"", b"")
    orphans = [ORPHAN, ORPHAN | {"QueryID": "q-3"}]
    result = command("check", "-", stdin="".join(json.dumps(o) + "\n" for o in orphans).encode())
    assert result.returncode == 1
    assert result.stdout.decode().splitlines()[-1] == "2 messages in 1 dialogue: 2 errors, 0 warnings"


# --- exit statuses -------------------------------------------------------------------------------


@pytest.mark.parametrize("path", VALID, ids=_id)
def test_exit_0_for_a_valid_transcript(path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run(capsys, "check", "--format", "json", str(path))[:2] == (0, "")


def test_exit_1_with_an_error_and_0_with_warnings_only(capsys: pytest.CaptureFixture[str]) -> None:
    errors = [p for p in DEFECTIVE if _sidecar(p)["errors"]]
    warnings = [p for p in DEFECTIVE if not _sidecar(p)["errors"]]
    assert errors and warnings
    for path in errors:
        assert run(capsys, "check", str(path))[0] == 1, path
    for path in warnings:
        status, out, _ = run(capsys, "check", str(path))
        assert status == 0, path
        assert "warning" in out


@pytest.mark.parametrize("what", ["missing", "directory"])
@pytest.mark.parametrize("output", ["text", "json"])
def test_exit_2_and_nothing_checked_when_a_path_cannot_be_read(
    what: str, output: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    target = tmp_path / "target.jsonl"
    if what == "directory":
        target.mkdir()
    bad = TRANSCRIPTS / "defective" / "turn-gap.jsonl"
    status, out, err = run(capsys, "check", "--format", output, str(bad), str(target))
    assert (status, out) == (2, "")  # a transcript with a part missing would give false findings
    reason = {"missing": "no such file", "directory": "it is a directory"}[what]
    assert err.startswith(f"pgm-explore check: cannot read {target}: {reason}")
    assert "nothing was read" in err and "Traceback" not in err


def test_every_unreadable_path_is_named(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    one, two = tmp_path / "one.jsonl", tmp_path / "two.jsonl"
    status, _, err = run(capsys, "check", str(one), str(MARKET), str(two), str(one))
    assert status == 2
    assert [line.split(": ")[1] for line in err.splitlines()[:2]] == [f"cannot read {one}", f"cannot read {two}"]
    assert len(err.splitlines()) == 3


def test_a_path_that_fails_later_stops_the_check_there(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    target = tmp_path / "target.jsonl"
    unanswered = TRANSCRIPTS / "defective" / "unanswered-request.jsonl"
    # A socket passes the look before reading (it is there, not a folder, readable by its mode)
    # and fails when it is opened, for root too.
    with contextlib.closing(socket.socket(socket.AF_UNIX)) as listener:
        listener.bind(str(target))
        status, out, err = run(capsys, "check", str(unanswered), str(target))
    assert status == 2
    # Only the end of the transcript shows a Request unanswered: the end was never read.
    assert out.splitlines() == [
        "6 messages in 3 dialogues: 0 errors, 0 warnings; stopped at a path that could not be read"
    ]
    assert err == f"pgm-explore check: cannot read {target}: No such device or address; checking stopped there\n"


def test_workers_lost_half_way_are_said_plainly_with_status_2(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # (How the engine stops when the workers die under the work: tests/test_engine.py.)
    from pgm_explore._engine import WorkersLost
    from pgm_explore.cli import _check

    def half_way(paths: Any, form: Any, palette: Any, out: Any, *args: Any, **kwargs: Any) -> Any:
        out.write("the findings before\n")
        raise WorkersLost("the work stopped on 2 local worker processes: ...")

    monkeypatch.setattr(_check, "check_transcript", half_way)
    status, out, err = run(capsys, "check", str(MARKET))
    assert (status, out) == (2, "the findings before\n")
    assert err == "pgm-explore check: the work stopped on 2 local worker processes: ...\n"


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() == 0, reason="root reads every file")
def test_exit_2_for_a_file_without_read_permission(tmp_path: Path) -> None:
    path = tmp_path / "secret.jsonl"
    path.write_text(MARKET.read_text())
    path.chmod(0)
    result = command("check", str(MARKET), str(path))
    assert (result.returncode, result.stdout) == (2, b"")
    assert b"permission denied" in result.stderr


@pytest.mark.parametrize(
    "argv",
    [["check"], ["check", "--format", "yaml", "x.jsonl"], ["check", "--bogus", "x.jsonl"]],
)
def test_exit_2_for_usage_errors(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    status, out, err = run(capsys, *argv)
    assert (status, out) == (2, "")
    assert "usage: pgm-explore" in err


def test_help_explains_the_contract(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = run(capsys, "check", "--help")
    assert status == 0
    for words in ('{"source": ..., "dialog": ..., "type": ..., "rule": ...', "PATH:LINE", "PATH#INDEX", "exit status"):
        assert words in out
    assert "check" in run(capsys, "--help")[1]


# --- streaming ---------------------------------------------------------------------------------


def test_check_streams_and_never_loads_the_transcript(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("check must not hold the transcript in memory")

    monkeypatch.setattr(Transcript, "load", refuse)
    monkeypatch.setattr(Transcript, "from_items", refuse)
    assert run(capsys, "check", str(TRANSCRIPTS / "long-deliberation.jsonl"))[0] == 0


@pytest.mark.skipif(sys.platform == "win32", reason="select() on pipes is POSIX")
def test_findings_come_out_while_the_input_is_still_open() -> None:
    """Like `tail -f log | pgm-explore check --format json -`: a finding is written (and
    flushed) as soon as its message is read, not when the input ends."""
    with subprocess.Popen(
        [sys.executable, "-m", "pgm_explore", "check", "--format", "json", "-"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    ) as process:
        assert process.stdin and process.stdout and process.stderr
        # Standard input is JSON Lines once a second line follows the first.
        process.stdin.write((json.dumps(ORPHAN) + "\n" + json.dumps(ORPHAN | {"QueryID": "q-3"}) + "\n").encode())
        process.stdin.flush()
        ready, _, _ = select.select([process.stdout], [], [], 30)
        assert ready, "no finding before the end of the input"
        first = json.loads(process.stdout.readline())
        process.stdin.close()
        rest = process.stdout.read()
        assert process.wait(timeout=60) == 1
        assert process.stderr.read() == b""
    assert (first["source"], first["rule"]) == ("-:1", "request-unknown")
    assert [json.loads(text)["source"] for text in rest.splitlines()] == ["-:2"]


def test_closed_pipe_ends_quietly(tmp_path: Path) -> None:
    # Far more findings than a pipe buffer holds, so that writing goes on after the reader left.
    path = tmp_path / "many.jsonl"
    path.write_text("".join(json.dumps(ORPHAN | {"QueryID": f"q-{n}"}) + "\n" for n in range(3, 3000)))
    with subprocess.Popen(
        [sys.executable, "-m", "pgm_explore", "check", "--format", "json", str(path)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    ) as process:
        assert process.stdout is not None and process.stderr is not None
        first = process.stdout.readline()
        process.stdout.close()  # like `| head -1`
        err = process.stderr.read()
        assert process.wait(timeout=60) == cli.EXIT_BROKEN_PIPE
    assert json.loads(first)["source"] == f"{path}:1"
    assert err == b"", err.decode(errors="replace")


# --- text for people -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "summary"),
    [
        ("market-wallet-limit.jsonl", "13 messages in 3 dialogues: 0 errors, 0 warnings"),
        # Four MCP dialogues: two opened by PC Prompts (with their BKN-PRC turns), DAC and PAL.
        ("full-session.jsonl", "22 messages in 4 dialogues: 0 errors, 0 warnings"),
        ("long-deliberation.jsonl", "105 messages in 3 dialogues: 0 errors, 0 warnings"),
    ],
)
def test_a_valid_transcript_is_one_summary_line(name: str, summary: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert run(capsys, "check", str(TRANSCRIPTS / name)) == (0, summary + "\n", "")


def test_the_summary_counts_each_dialogue_once(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # D15: a PC Prompt belongs to the BKN-PRC dialogue it opens; turns are counted per DialogID
    # and data type, whatever the Mode (or none) of the message.
    def message(type_name: str, mode: str | None, dialog: str, query: str) -> dict[str, Any]:
        doc = minimal_message(type_name, mode or "RQ") | {"DialogID": dialog}
        if type_name != "PC Prompt":
            doc["QueryID"] = query
        if mode is None:
            doc.pop("Mode", None)
        return doc

    messages = [
        message("PC Prompt", None, "d-1", ""),
        message("BKN-PRC", "RQ", "d-1", "q-1"),  # d-1 BKN-PRC, as the PC Prompt
        message("BKN-DAC", None, "d-1", "q-2"),  # d-1 BKN-DAC
        message("BKN-DAC", "RQ", "d-1", "q-3"),
        message("BKN-PRC", None, "d-2", "q-4"),  # d-2 BKN-PRC
        message("BKN-PRC", "RQ", "d-2", "q-5"),
        message("BKN-PAL", None, "d-3", "q-6"),  # d-3 BKN-PAL
        message("BKN-PAL", None, "d-3", "q-7"),
        message("PC Prompt", None, "d-4", ""),  # d-4 BKN-PRC
        message("BKN-PRC", None, "d-4", "q-8"),
        message("BKN-DAC", "RS", "d-5", "q-9"),  # d-5 BKN-DAC
    ]
    path = tmp_path / "t.jsonl"
    path.write_text("".join(json.dumps(m) + "\n" for m in messages), encoding="utf-8")
    _, out, _ = run(capsys, "check", str(path))
    assert out.splitlines()[-1].startswith("11 messages in 6 dialogues: ")


def test_text_shows_each_finding_under_its_message(capsys: pytest.CaptureFixture[str]) -> None:
    path = TRANSCRIPTS / "defective" / "merged-log-out-of-order.json"
    status, out, _ = run(capsys, "check", str(path))
    findings = list(check_paths([str(path)]))
    assert status == 1
    assert out.splitlines() == [
        f"{path}#1: BKN-DAC, dialogue dlg-a51c-dac",
        f"  error [request-unknown] $.RequestID: {findings[0].message}",
        f"      spec: {findings[0].spec}",
        f"{path}#2: BKN-DAC, dialogue dlg-a51c-dac",
        f"  warning [time-backwards] $.QueryTime: {findings[1].message}",
        f"      spec: {findings[1].spec}",
        # Found at the end of the transcript, about the message just shown: under the same name.
        f"  warning [unanswered] $.QueryID: {findings[2].message}",
        f"      spec: {findings[2].spec}",
        "5 messages in 2 dialogues: 1 error, 2 warnings",
    ]
    assert "\x1b[" not in out


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.mark.parametrize(
    ("argv", "no_color", "coloured"),
    [([], None, True), ([], "1", False), (["--no-color"], None, False), (["--color"], "1", True)],
)
def test_colour_on_a_terminal_unless_no_color(
    argv: list[str], no_color: str | None, coloured: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = str(TRANSCRIPTS / "defective" / "response-to-unknown-request.jsonl")
    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.delenv("TERM", raising=False)
    if no_color is not None:
        monkeypatch.setenv("NO_COLOR", no_color)
    terminal = _Terminal()
    monkeypatch.setattr(sys, "stdout", terminal)
    assert main(["check", *argv, path]) == 1
    out = terminal.getvalue()
    assert ("\x1b[" in out) is coloured
    plain = io.StringIO()
    monkeypatch.setattr(sys, "stdout", plain)
    main(["check", "--no-color", path])
    assert ANSI.sub("", out) == plain.getvalue()


def test_no_colour_through_a_pipe() -> None:
    result = command("check", str(TRANSCRIPTS / "defective" / "turn-gap.jsonl"))
    assert result.returncode == 0
    assert b"\x1b[" not in result.stdout
    assert result.stdout.decode().endswith("5 messages in 2 dialogues: 0 errors, 1 warning\n")


def test_the_command_agrees_with_the_function() -> None:
    path = str(TRANSCRIPTS / "defective" / "commitment-status-wrong.jsonl")
    result = command("check", "--format", "json", path)
    assert result.returncode == 0
    assert [json.loads(text) for text in result.stdout.splitlines()] == [f.to_dict() for f in check_paths([path])]


def test_the_benchmark_transcript_is_clean_but_for_its_cut_end(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """benchmarks/bench_check.py measures realistic transcripts: the scenarios replayed with fresh
    ids and interleaved. Only Requests cut off by the end of the file may be left unanswered."""
    monkeypatch.setattr(sys, "dont_write_bytecode", True)  # no __pycache__ inside benchmarks/
    spec = importlib.util.spec_from_file_location("bench_check", ROOT / "benchmarks" / "bench_check.py")
    assert spec and spec.loader
    bench = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, "bench_check", bench)  # dataclasses look their module up
    spec.loader.exec_module(bench)
    path = tmp_path / "bench.jsonl"
    bench.generate(path, 3_000)
    status, out, _ = run(capsys, "check", "--format", "json", str(path))
    assert status == 0
    assert {o["rule"] for o in objects(out)} <= {"unanswered"}
    assert len(objects(out)) <= bench.CONCURRENT * 3
    ids = [json.loads(line).get("QueryID") for line in path.read_text().splitlines()]
    assert len(ids) == 3_000 and len({i for i in ids if i}) == len([i for i in ids if i])
