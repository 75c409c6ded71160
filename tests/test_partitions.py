"""A big file cut into partitions and worked on anywhere gives exactly what reading it whole gives.

``pgm_explore.io.iter_worked`` cuts a regular JSON Lines file into byte ranges of whole lines
when the work is spread (or ``PGM_EXPLORE_PARTITION_BYTES`` asks for partitions); each is read,
decoded and validated on its own, and the client numbers the lines. These tests cut small files
into many partitions and compare message by message, finding by finding and byte by byte with
the reading of the whole file in this process: partitions worked on here, on two local worker
processes (``--workers 2``) and on a real ``dask.distributed`` cluster reached by its address
(``--scheduler``).
"""

from __future__ import annotations

import io
import pickle
import re
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from pgm_explore._engine import Engine, engine_for
from pgm_explore.cli import main
from pgm_explore.cli._output import ANSI, clean, json_str
from pgm_explore.dialogue import TranscriptChecker, TranscriptFinding, check_paths
from pgm_explore.dialogue._facts import PackedFacts, facts_batch, item_facts, packed_facts_batch, unpacked_facts
from pgm_explore.io import Item, UnreadablePath, iter_batched, iter_documents, iter_reports, iter_worked, report_fields
from pgm_explore.io import _partitions as partitioned
from pgm_explore.io._partitions import (
    HELD,
    HELD_BYTES,
    Left,
    Partition,
    Pushed,
    _Reported,
    partitions,
    work_on_partition,
)
from pgm_explore.validation import Report

DATA = Path(__file__).resolve().parents[1] / "data" / "transcripts"

# Lines that read badly, each in its own way, between the messages of the transcripts.
_HOSTILE = [
    b"\n",
    b"   \n",
    b"{oops\n",
    b'{"Header": "PGM-KDA-V1.0", "Mode": "RQ", "x": NaN}\n',
    b'{"Header": "\xff\xfe"}\n',
    b'{"Header": "PGM-KPA-V1.0", "Mode": "RQ", "QueryID": "\\ud800"}\n',
    b"[" + b"9" * 5000 + b"]\n",
    b'{"Header": "PGM-KPA-V1.0", "TurnIndex": 123456789012345678901234567890}\n',
    b'{"Header": "PGM-KPA-V1.0", "Mode": "RQ", "DialogID": "dlg-x", "QueryID": "q-\\ud800", "TurnIndex": 1'
    + b"0" * 30
    + b"}\n",
    b"[" * 3000 + b"]" * 3000 + b"\n",
    b'"a JSON string"\n',
    b"[1, 2]\n",
    b"null\n",
    b'{"Header": "PGM-KPA-V1.0", "Header": "twice", "Mode": "RQ"}\n',
    b"\xef\xbb\xbf" + b'{"Header": "PGM-KPA-V1.0", "Mode": "RQ"}\n',  # a BOM: only the json module reads it
    b'{"Header": "PGM-KPA-V1.0", "Mode": "RQ", "x": 1e999}\n',
    b'{"Header": "PGM-KDA-V1.0", "Mode": "RS", "Feasibility": [' + b"[" * 900 + b"]" * 900 + b"]}\n",
]


@pytest.fixture(autouse=True)
def _whole_by_default(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("PGM_EXPLORE_PARTITION_BYTES", raising=False)
    monkeypatch.delenv("PGM_EXPLORE_PARALLEL", raising=False)


@pytest.fixture
def transcript(tmp_path: Path) -> Path:
    """Every transcript of data/ in one file, with the hostile lines spread among them."""
    lines: list[bytes] = []
    for path in sorted(DATA.rglob("*.jsonl")):
        lines.extend(path.read_bytes().splitlines(keepends=True))
    for position, hostile in enumerate(_HOSTILE):
        lines.insert(position * len(lines) // len(_HOSTILE), hostile)
    path = tmp_path / "all.jsonl"
    path.write_bytes(b"".join(line if line.endswith(b"\n") else line + b"\n" for line in lines))
    return path


@pytest.fixture(scope="module")
def cluster() -> Iterator[str]:
    """A real dask.distributed cluster of two worker processes; its scheduler's address."""
    import logging

    from distributed import LocalCluster

    with LocalCluster(
        n_workers=2,
        threads_per_worker=1,
        processes=True,
        dashboard_address=None,
        scheduler_kwargs={"dashboard_address": "127.0.0.1:0"},
        silence_logs=logging.ERROR,
    ) as local:
        yield local.scheduler_address


def _seen(reports: Iterator[Report]) -> list[object]:
    # repr() tells 1 from 1.0 and True, and keeps the order of keys.
    return [(report.source, repr(report.to_dict())) for report in reports]


def _found(findings: Iterator[TranscriptFinding]) -> list[dict[str, Any]]:
    return [f.to_dict() for f in findings]


def _checked(path: Path, engine: Engine, step: int) -> Iterator[TranscriptFinding]:
    """What check_paths does, the file cut into partitions of ``step`` bytes."""
    checker = TranscriptChecker()
    for source, facts in iter_worked(path, item_facts, engine=engine, step=step):
        yield from checker.feed_facts(source, facts)
    yield from checker.finish()


@pytest.mark.parametrize("step", [1, 7, 100, 1500, 40_000, 10**9])
def test_partitions_make_the_reports_made_from_the_whole_file(
    step: int, transcript: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    whole = _seen(iter_reports(transcript, parallel=False))
    monkeypatch.setenv("PGM_EXPLORE_PARTITION_BYTES", str(step))
    assert _seen(iter_reports(transcript, parallel=False)) == whole
    assert {rule for _, text in whole for rule in ("syntax", "too-deep", "encoding", "duplicate-key") if rule in text}


@pytest.mark.parametrize("step", [1, 333, 1500, 10**9])
def test_partitions_give_the_same_findings(step: int, transcript: Path) -> None:
    whole = _found(check_paths([transcript], parallel=False))
    with Engine() as here:
        assert _found(_checked(transcript, here, step)) == whole
    assert {f["rule"] for f in whole} >= {"syntax", "not-object", "request-unknown", "turn-gap"}


def test_partitions_are_whole_lines_each_counted_once(tmp_path: Path) -> None:
    text = b"a\n" + b"b" * 20 + b"\n\r\n  \nccc\r\n" + b"d" * 9 + b"\n\n\nlast, no line break"
    path = tmp_path / "lines.jsonl"
    path.write_bytes(text)
    lines = text.split(b"\n")
    for step, largest, workers in [
        *((step, 0, 1) for step in range(1, len(text) + 2)),
        *((step, largest, workers) for step in (1, 2, 5) for largest in (7, 20) for workers in (1, 2)),
    ]:
        total, numbered = 0, []
        for partition in partitions(str(path), 0, len(text), step, largest, workers):
            count, done = work_on_partition(_raws, partition)
            for got in done:  # (the lines that are no JSON are left for the client to word)
                if isinstance(got, Left):
                    numbered.append((total + got.number, got.value.raw))  # type: ignore[union-attr]
                else:
                    numbered += [(total + number, raw) for number, raw in got]
            total += count
        assert total == len(lines), step
        expected = [(n, line + b"\n") for n, line in enumerate(lines, 1) if line.strip()]
        expected[-1] = (len(lines), lines[-1])  # (no line break after the last)
        assert numbered == expected, step


def test_partitions_grow_while_much_is_left() -> None:
    # A partition costs the client and its worker some milliseconds whatever its size: with a
    # largest size, they are large at first and shrink to the step at the end, where the workers
    # must finish together; they still cover the range from start to the end, each byte once.
    size, start, step, largest = 10_000_000, 1234, 100_000, 1_000_000
    for workers in (1, 2, 3):
        cut = list(partitions("f.jsonl", start, size, step, largest, workers))
        ends = [p.end if p.end is not None else size for p in cut]
        assert [p.start for p in cut] == [start, *ends[:-1]] and cut[-1].end is None
        lengths = [end - p.start for p, end in zip(cut, ends, strict=True)]
        assert lengths[0] == largest and lengths[-2] == step and lengths[-1] <= step
        assert lengths == sorted(lengths, reverse=True)
        assert all(
            max(step, (size - p.start) // (2 * workers)) >= length for p, length in zip(cut, lengths, strict=True)
        )
        assert len(cut) < (size - start) // step / 2, workers
    assert [p.end for p in partitions("f", 0, 10, 3, 2)] == [3, 6, 9, None]  # (largest below step: step)
    assert [p.end for p in partitions("f", 0, 10, 3)] == [3, 6, 9, None]


def test_partitions_shrink_to_the_least_at_the_end() -> None:
    # On workers, what the client still has to do once they are done is what the last partitions
    # made: they go on shrinking below the step, grown or not, down to the least size.
    size, start, step, least = 10_000_000, 1234, 400_000, 50_000
    for largest, workers in ((0, 1), (0, 2), (1_000_000, 2), (1_000_000, 3)):
        cut = list(partitions("f.jsonl", start, size, step, largest, workers, least))
        ends = [p.end if p.end is not None else size for p in cut]
        assert [p.start for p in cut] == [start, *ends[:-1]] and cut[-1].end is None
        lengths = [end - p.start for p, end in zip(cut, ends, strict=True)]
        assert lengths[0] == max(step, largest) and lengths == sorted(lengths, reverse=True)
        assert lengths[-2] == least and lengths[-1] <= least
        assert all(
            length == min(max(step, largest), max(least, (size - p.start) // (2 * workers)))
            for p, length in zip(cut[:-1], lengths[:-1], strict=True)
        )
    # (a least above the step is the step: as without it)
    assert [p.end for p in partitions("f", 0, 10, 3, 0, 1, 5)] == [3, 6, 9, None]


class _Recording(Engine):
    """Takes note of the partitions it is given, and works on none."""

    def __init__(self, *, spread: bool) -> None:
        self.in_process = not spread
        self.cut: list[Partition] = []

    @property
    def workers(self) -> int:
        return 2

    def map(self, work: Any, partitions: Any) -> Iterator[Any]:
        self.cut.extend(partitions)
        return iter(())


def test_partitions_on_workers_shrink_at_the_end_when_asked(tmp_path: Path) -> None:
    # Asked to (a check: its rules go on alone with the batches in flight once the workers are
    # done), the last partitions on workers shrink below the step down to the least size; in this
    # process, one after the other, and unasked (validate), they keep the step to the end.
    step = 2 * partitioned.PARTITION_BYTES
    path = tmp_path / "big.jsonl"
    path.write_bytes(b"{}\n" * (6 * step // 3))
    for spread, shrink in ((True, True), (False, True), (True, False)):
        engine = _Recording(spread=spread)
        got = partitioned.iter_partitioned(str(path), str, list, engine, 0, 1, step, shrink=shrink)
        assert list(got) == []
        lengths = [(p.end or 6 * step) - p.start for p in engine.cut]
        assert sum(lengths) == 6 * step
        if spread and shrink:
            assert lengths[:3] == [step] * 3 and lengths[3] == 3 * step // 4
            assert lengths[-2] == partitioned.PARTITION_BYTES and lengths == sorted(lengths, reverse=True)
        else:
            assert lengths == [step] * 6, (spread, shrink)


def test_a_check_asks_for_the_shrinking_end_and_validate_does_not(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # validate's client has next to nothing to do once the workers are done: more partitions at
    # the end would cost it more than they save.
    from pgm_explore.dialogue._facts import iter_facts

    step = 2 * partitioned.PARTITION_BYTES
    monkeypatch.setenv("PGM_EXPLORE_PARTITION_BYTES", str(step))
    path = tmp_path / "big.jsonl"
    path.write_bytes(b"{}\n" * (6 * step // 3))
    check, validate = _Recording(spread=True), _Recording(spread=True)
    assert list(iter_facts(str(path), check)) != []  # (the first message, read here)
    assert len(list(iter_batched(path, report_fields, Pushed(_Reported), engine=validate))) == 1
    lengths = {}
    for name, engine in (("check", check), ("validate", validate)):
        lengths[name] = [(p.end or 6 * step) - p.start for p in engine.cut]
        assert sum(lengths[name]) == 6 * step - 3, name  # (all but the first line, read here)
    assert lengths["validate"][:-1] == [step] * 5
    assert lengths["check"][:2] == [step] * 2 and lengths["check"][-2] == partitioned.PARTITION_BYTES


def test_partitions_grow_only_while_what_came_back_is_small() -> None:
    # A worker holds a partition's output until it sends it: partitions grow only once the output
    # of those done is no larger than their bytes, and go back to the step when it grows larger.
    growth = partitioned.Growth(1_000_000, len)
    size, step = 10_000_000, 100_000
    cut = partitions("f.jsonl", 0, size, step, growth.largest, 2)
    first = next(cut)
    assert first.end == step  # (nothing came back yet)
    growth.told(step, ["x" * 100, partitioned.Left(3, partitioned.Reread(b"{"))])  # (a line left: not output)
    grown = next(cut)
    assert grown.end is not None and grown.end - grown.start == 1_000_000
    growth.told(1_000_000, ["x" * 2_000_000])  # (now more output than bytes read)
    back = next(cut)
    assert back.end is not None and back.end - back.start == step
    growth.told(step, ["x" * 10])
    assert growth.largest() == 0  # (2,000,110 characters out of 1,200,000 bytes)


def _kept(cut: list[Partition], partitions: Iterator[Partition]) -> Iterator[Partition]:
    for partition in partitions:
        cut.append(partition)
        yield partition


def _raw(item: Item) -> bytes | None:
    return item.raw


def _raws(items: Iterator[Item]) -> list[tuple[int | None, bytes | None]]:
    return [(item.line, item.raw) for item in items]


def test_crlf_blank_lines_and_no_final_line_break(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    lines = [
        line.rstrip(b"\n")
        for path in sorted(DATA.rglob("*.jsonl"))[:4]
        for line in path.read_bytes().splitlines(keepends=True)
    ]
    ends = [b"\r\n", b"\n", b"\n  \t\n", b"\n\n"]
    text = b"".join(line + ends[i % len(ends)] for i, line in enumerate(lines)) + lines[0]
    path = tmp_path / "mixed.jsonl"
    path.write_bytes(text)
    whole = _seen(iter_reports(path, parallel=False))
    findings = _found(check_paths([path], parallel=False))
    with Engine() as here:
        for step in (50, 999):
            assert _found(_checked(path, here, step)) == findings
            monkeypatch.setenv("PGM_EXPLORE_PARTITION_BYTES", str(step))
            assert _seen(iter_reports(path, parallel=False)) == whole
    last_line = text.count(b"\n") + 1
    assert whole[-1][0] == f"{path}:{last_line}"


def test_a_file_sniffed_as_json_lines_is_cut_after_its_first_message(
    tmp_path: Path, transcript: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "log.txt"  # no extension that says: the content decides
    path.write_bytes(transcript.read_bytes())
    whole = _seen(iter_reports(path, parallel=False))
    assert whole[0][0] == f"{path}:2" and len(whole) > 100  # (line 1 is blank)
    monkeypatch.setenv("PGM_EXPLORE_PARTITION_BYTES", "500")
    assert _seen(iter_reports(path, parallel=False)) == whole


def test_what_was_read_comes_out_before_a_read_error(transcript: Path) -> None:
    # Each partition opens the file afresh: once the file is gone, the next partition fails.
    whole = [item.source for item in iter_documents(transcript)]
    seen = []
    with Engine() as here, pytest.raises(UnreadablePath, match="no such file"):
        for source, _ in iter_worked(transcript, _raw, engine=here, step=2000):
            seen.append(source)
            if len(seen) == 40:
                transcript.unlink()
    assert 40 <= len(seen) < len(whole)
    assert seen == whole[: len(seen)]


def test_an_unreadable_path_is_reported_at_once(tmp_path: Path) -> None:
    missing = tmp_path / "missing.jsonl"
    with Engine() as here:
        with pytest.raises(UnreadablePath, match="no such file"):
            iter_reports(missing, engine=here)
        with pytest.raises(UnreadablePath, match="no such file"):
            iter_worked(missing, item_facts, engine=here, step=10)


def _cursed(item: Item) -> bytes | None:
    if item.line == 5:
        raise ValueError("line 5 is cursed")
    return item.raw


def test_a_failing_work_raises_naming_the_message(transcript: Path) -> None:
    with pytest.raises(ValueError, match="cursed") as raised:
        list(iter_worked(transcript, _cursed))
    assert f"(while working on the message at {transcript}:5)" in raised.value.__notes__


def test_small_inputs_stay_in_this_process(tmp_path: Path, transcript: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    size = transcript.stat().st_size
    with engine_for([str(transcript), "-", str(tmp_path / "missing")], min_bytes=size + 1) as small:
        assert small.in_process
    monkeypatch.setenv("PGM_EXPLORE_PARALLEL", "0")
    with engine_for([str(transcript)], min_bytes=1) as kept:
        assert kept.in_process
    with engine_for([str(transcript)], workers=0, min_bytes=1) as asked:
        assert asked.in_process


def _run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    status = main(argv)
    captured = capsys.readouterr()
    return status, captured.out, captured.err


@pytest.mark.slow
@pytest.mark.parametrize("command", ["check", "validate"])
def test_the_commands_say_the_same_on_a_dask_cluster(
    command: str,
    cluster: str,
    transcript: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for form in (["--format", "json"], ["--no-color"], ["--color"]):
        here = _run([command, *form, "--workers", "0", str(transcript)], capsys)
        monkeypatch.setenv("PGM_EXPLORE_PARTITION_BYTES", "3000")  # about 20 partitions
        there = _run([command, *form, "--scheduler", cluster, str(transcript)], capsys)
        monkeypatch.delenv("PGM_EXPLORE_PARTITION_BYTES")
        assert there == here
        assert here[0] == 1 and here[1].count("\n") > 100


@pytest.mark.slow
def test_validate_on_workers_started_beforehand_says_what_the_command_says(
    transcript: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # bench_validate.py measures the command's steady rate through run_on, on workers it started as
    # the command starts its own: what it measures must be the command, the same bytes and status,
    # pass after pass on the same workers.
    from pgm_explore._engine import engine
    from pgm_explore.cli import _validate as command
    from pgm_explore.cli import build_parser

    with engine(2, preload=command.PRELOAD) as workers:
        for form in (["--format", "json"], ["--no-color"], ["--format", "json"]):
            here = _run(["validate", *form, "--workers", "0", str(transcript)], capsys)
            monkeypatch.setenv("PGM_EXPLORE_PARTITION_BYTES", "3000")  # about 20 partitions
            args = build_parser().parse_args(["validate", *form, "--workers", "2", str(transcript)])
            out, err = io.StringIO(), io.StringIO()
            there = (command.run_on(workers, args, out, err), out.getvalue(), err.getvalue())
            monkeypatch.delenv("PGM_EXPLORE_PARTITION_BYTES")
            assert there == here
            assert here[0] == 1 and here[1].count("\n") > 100
        # Without a step asked for, the partitions on workers grow while much of the file is left
        # (up to command.LARGEST; a smaller least partition here, so that this small file has some):
        # the same bytes, and a progress bar is told each partition's bytes, every byte once.
        monkeypatch.setattr(partitioned, "PARTITION_BYTES", 500)
        cut: list[Partition] = []
        cutting = partitioned.partitions
        monkeypatch.setattr(partitioned, "partitions", lambda *args: _kept(cut, cutting(*args)))
        here = _run(["validate", "--format", "json", "--workers", "0", str(transcript)], capsys)
        cut.clear()
        args = build_parser().parse_args(["validate", "--format", "json", "--workers", "2", str(transcript)])
        out, err = io.StringIO(), io.StringIO()
        assert (command.run_on(workers, args, out, err), out.getvalue(), err.getvalue()) == here
        size = transcript.stat().st_size
        lengths = [(size if p.end is None else p.end) - p.start for p in cut]
        # (The first ones, cut before any came back, have the step's size.)
        assert len(lengths) > 4 and max(lengths) > 2 * lengths[0] and lengths[0] >= lengths[-2], lengths
        told: list[int] = []
        cut.clear()
        batches = iter_batched(
            transcript, report_fields, Pushed(_Reported), engine=workers, progress=told.append, largest=command.LARGEST
        )
        assert sum(1 for _ in batches) > len(cut) > 4
        assert sum(told) == size and len(told) == len(cut) + 1  # (the first message, read here, then each partition)
        # A file whose small lines each make a long report (a number a line: not a message) is
        # never cut larger than the step: a worker would hold a hundred times its partition.
        numbers = transcript.parent / "numbers.jsonl"
        numbers.write_bytes(b"".join(b"%d\n" % n for n in range(40_000)))
        cut.clear()
        here = _run(["validate", "--format", "json", "--workers", "0", str(numbers)], capsys)
        cut.clear()
        args = build_parser().parse_args(["validate", "--format", "json", "--workers", "2", str(numbers)])
        out, err = io.StringIO(), io.StringIO()
        assert (command.run_on(workers, args, out, err), out.getvalue(), err.getvalue()) == here
        lengths = [(numbers.stat().st_size if p.end is None else p.end) - p.start for p in cut]
        assert len(lengths) > 8 and len(set(lengths[:-1])) == 1 and lengths[-1] <= lengths[0], lengths
        assert next(workers.map(len, [[1, 2]])) == 2  # (still running: run_on leaves them to its caller)


@pytest.mark.slow
def test_check_says_the_same_on_local_workers(
    transcript: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # Two files of one transcript: a Response of the second answers a Request of the first.
    text = transcript.read_bytes()
    half = text.index(b"\n", len(text) // 2) + 1
    first, second = tmp_path / "first.jsonl", tmp_path / "second.jsonl"
    first.write_bytes(text[:half])
    second.write_bytes(text[half:])
    here = _run(["check", "--format", "json", "--workers", "0", str(transcript)], capsys)
    monkeypatch.setenv("PGM_EXPLORE_PARTITION_BYTES", "2000")
    there = _run(["check", "--format", "json", "--workers", "2", str(first), str(second)], capsys)
    renamed = here[1].replace(str(transcript), "@")
    assert there[0] == here[0] == 1
    # The same findings, each named after the file and line it is in now.
    split = there[1].replace(f"{first}:", "@:")
    lines_before = text[:half].count(b"\n")
    # (every place a line names, its source's and those its message cites: a message may cite a line
    # of either file)
    in_second = re.compile(rf"{re.escape(str(second))}:(\d+)")
    for line in split.splitlines():
        line = in_second.sub(lambda m: f"@:{int(m[1]) + lines_before}", line)
        assert line in renamed
    assert split.count("\n") == renamed.count("\n")


@pytest.mark.slow
def test_check_says_the_same_on_local_workers_with_the_shrinking_end(
    transcript: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # A check's last partitions shrink below the step on workers (a smaller least size here, so
    # that this small file has some): the same bytes as in this process, on real workers.
    here = _run(["check", "--format", "json", "--workers", "0", str(transcript)], capsys)
    monkeypatch.setenv("PGM_EXPLORE_PARTITION_BYTES", "3000")
    monkeypatch.setattr(partitioned, "PARTITION_BYTES", 500)
    cut: list[Partition] = []
    cutting = partitioned.partitions
    monkeypatch.setattr(partitioned, "partitions", lambda *args: _kept(cut, cutting(*args)))
    there = _run(["check", "--format", "json", "--workers", "2", str(transcript)], capsys)
    assert there == here and here[0] == 1 and here[1].count("\n") > 10
    size = transcript.stat().st_size
    lengths = [(size if p.end is None else p.end) - p.start for p in cut]
    assert lengths[0] == 3000 and lengths[-2] == 500 and lengths == sorted(lengths, reverse=True), lengths


@pytest.mark.parametrize("form", [["--format", "json"], ["--no-color"], ["--color"]])
def test_validate_writes_the_same_bytes_from_partitions(
    form: list[str],
    tmp_path: Path,
    transcript: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The workers write the output of their partitions and the client puts the line numbers
    # in: a name that JSON and the terminal escape must come out as when each message is
    # written on its own (as from a pipe, read message by message), and so must the lines
    # the workers leave for the client (NaN, bad UTF-8, a BOM, blank lines).
    odd = tmp_path / 'we"ird \x1b[2J né.jsonl'
    odd.write_bytes(transcript.read_bytes())
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(odd.read_bytes())))
    status, piped, err = _run(["validate", *form, "--input-format", "jsonl", "-"], capsys)
    if form == ["--format", "json"]:
        named = piped.replace('{"source":"-:', f'{{"source":"{json_str(str(odd))[1:-1]}:')
    else:
        bold = ANSI.bold if form == ["--color"] else ""
        named = re.sub(rf"^{re.escape(bold)}-:", lambda _: f"{bold}{clean(str(odd))}:", piped, flags=re.MULTILINE)
    assert status == 1 and named.count("\n") > 100 and named != piped
    for step in (None, 1, 700, 5000):
        if step:
            monkeypatch.setenv("PGM_EXPLORE_PARTITION_BYTES", str(step))
        assert _run(["validate", *form, "--workers", "0", str(odd)], capsys) == (status, named, err), step


def test_the_client_writes_each_line_number_as_str_does() -> None:
    # The client writes a partition's numbers in two pieces each (thousands, then three digits) when
    # they rise without a gap, one by one otherwise: every number must read as str() writes it.
    from pgm_explore.cli._validate import PIECE, Lines

    for numbers in (
        range(1, 2),
        range(1, 2500),
        range(998, 1003),
        range(1000, 1001),
        [1, 3, 4],
        [5, 999, 1000, 1002],
        list(range(7, 3007)),
    ):
        parts = [f"<{n}>" for n in range(len(numbers) + 1)]
        for base in (0, 1, 998, 999_000, 10**12 - 5):
            lines = Lines(parts, numbers, len(numbers), 0, 0, 0)
            written = lines.text(base)
            assert written == "".join(p + str(base + n) for p, n in zip(parts, numbers, strict=False)) + parts[-1]
            pieces = list(lines.pieces(base))
            assert "".join(pieces) == written and len(pieces) == -(-len(numbers) // PIECE)


def _held_back(tmp_path: Path, among: tuple[bytes, ...] = ()) -> Path:
    """A file whose messages the typed reader does not take come in runs of more than HELD between
    clean ones, two of them over HELD_BYTES alone, ``among`` in the middle."""
    clean_lines = (DATA / "full-session.jsonl").read_bytes().splitlines(keepends=True)
    wrong = [b'{"Header": "PGM-KPA-V1.0", "Mode": "RQ", "Question": %d}\n' % n for n in range(3 * HELD)]
    big = b'{"Header": "PGM-KPA-V1.0", "Mode": "RQ", "Locale": "' + b"x" * HELD_BYTES + b'"}\n'
    lines = [line for pair in zip(wrong, clean_lines * 20, strict=False) for line in pair]
    path = tmp_path / "mixed.jsonl"
    path.write_bytes(b"".join([*lines[:50], big, *among, *lines[50:], *wrong[len(lines) // 2 :], big]))
    return path


@pytest.mark.parametrize("form", [["--format", "json"], ["--no-color"]])
def test_validate_judges_the_messages_it_holds_back_in_their_places(
    form: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # A partition's worker judges the messages the typed reader did not take a few at a time
    # (HELD of them, or HELD_BYTES of their text): each one's output must still come in its
    # place among the clean messages', counted once, as when each message is written on its own.
    path = _held_back(tmp_path)
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(path.read_bytes())))
    status, piped, err = _run(["validate", *form, "--input-format", "jsonl", "-"], capsys)
    if form == ["--format", "json"]:
        named = piped.replace('{"source":"-:', f'{{"source":"{json_str(str(path))[1:-1]}:')
    else:
        named = re.sub(r"^-:", lambda _: f"{clean(str(path))}:", piped, flags=re.MULTILINE)
    assert status == 1 and named.count("does not conform" if form == ["--no-color"] else '"conforms":false') > 3 * HELD
    for step in (None, 3000):
        if step:
            monkeypatch.setenv("PGM_EXPLORE_PARTITION_BYTES", str(step))
        assert _run(["validate", *form, "--workers", "0", str(path)], capsys) == (status, named, err), step


def test_validate_writes_a_repeated_mistake_once_a_partition(tmp_path: Path) -> None:
    # Messages with the same findings (report_fields gives them as one tuple) share one output text
    # on the worker, sent once in the pickle of its lines, not once a message: the same bytes.
    from functools import partial

    from pgm_explore.cli._validate import Lines, Writer

    lines = [b'{"Header": "PGM-KPA-V1.0", "Mode": "RQ", "TurnIndex": %d}\n' % n for n in range(300)]
    clean_lines = (DATA / "full-session.jsonl").read_bytes().splitlines(keepends=True)
    path = tmp_path / "repeated.jsonl"
    path.write_bytes(b"".join(clean_lines + lines + clean_lines + lines[:5]))
    for form in ("json", "text"):
        count, done = work_on_partition(
            Pushed(partial(Writer, form, ANSI if form == "text" else None, str(path))), Partition(str(path), 0, None)
        )
        (written,) = done
        assert isinstance(written, Lines) and written.messages == count == len(clean_lines) * 2 + 305
        start = len(clean_lines)
        repeated = written.parts[start + 1 : start + 300] + written.parts[-5:-1]
        assert len({id(part) for part in repeated}) == 1 and "required" in repeated[0]
        assert len(pickle.dumps(written)) < sum(map(len, repeated)) / 10
        assert (
            written.text(0)
            == "".join(part + str(number) for part, number in zip(written.parts, written.numbers, strict=False))
            + written.parts[-1]
        )


def test_iter_reports_judges_the_messages_it_holds_back_in_their_places(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The library's batch holds back the messages the typed reader did not take, as validate's
    # worker does: each report still comes in its place, the same as each message reported alone.
    from pgm_explore.io import validate_file

    path = _held_back(tmp_path, tuple(_HOSTILE))
    alone = _seen(iter(validate_file(path)))
    assert sum("'conforms': False" in seen for _, seen in alone) > 3 * HELD
    for step in (None, 3000):
        if step:
            monkeypatch.setenv("PGM_EXPLORE_PARTITION_BYTES", str(step))
        assert _seen(iter_reports(path, parallel=False)) == alone, step


def test_batches_on_workers_come_in_larger_partitions(tmp_path: Path) -> None:
    # Each partition costs the client some milliseconds however small: a batch, whose result is
    # compact, takes about eight partitions a worker, from 1 MiB up to 16 MiB.
    from pgm_explore.io._partitions import BATCH_BYTES, PARTITION_BYTES, _step

    path = tmp_path / "sparse.jsonl"
    with path.open("wb") as file:
        for size, workers, expected in [
            (10 * 2**20, 2, PARTITION_BYTES),
            (128 * 2**20, 2, 8 * 2**20),
            (2**30, 2, BATCH_BYTES),
            (2**30, 0, PARTITION_BYTES),  # (in this process: as small as ever)
        ]:
            file.truncate(size)
            file.flush()
            assert _step(str(path), workers, BATCH_BYTES) == expected, (size, workers)
            assert _step(str(path), workers, PARTITION_BYTES) == PARTITION_BYTES


def test_validate_in_this_process_when_told(transcript: Path, capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = _run(["validate", "--format", "json", "--workers", "0", str(transcript)], capsys)
    assert status == 1 and out.count("\n") == len(list(iter_documents(transcript)))


@pytest.mark.slow
def test_workers_that_cannot_start_are_a_plain_error(tmp_path: Path) -> None:
    # A script without `if __name__ == "__main__":` is run again by every spawned worker, whose
    # own start then fails: the script gets EngineUnavailable with a plain reason, never a hang.
    import subprocess
    import sys

    script = tmp_path / "unguarded.py"
    script.write_text(
        "from pgm_explore._engine import engine_for\n"
        f"with engine_for([{str(script)!r}], workers=2, min_bytes=1) as e:\n"
        "    print('started', e.where)\n",
        encoding="utf-8",
    )
    run = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert run.returncode != 0
    assert "EngineUnavailable: could not start work on 2 local worker processes" in run.stderr


@pytest.mark.parametrize("protocol", [4, 5])
def test_packed_facts_leave_their_chunks_out_of_a_pickle_that_can(transcript: Path, protocol: int) -> None:
    # Dask pickles a worker's result in protocol 5 between the worker and the client, giving
    # pickle a buffer_callback: the chunks of facts travel as frames of their own, out of the
    # pickle, and come back as memoryviews of them. Its scheduler, relaying, speaks 4.
    path = transcript.with_name("long.jsonl")
    path.write_bytes(transcript.read_bytes() * 40)
    packed = packed_facts_batch(iter_documents(path))
    assert len(packed.chunks) > 1
    buffers: list[pickle.PickleBuffer] = []
    data = pickle.dumps(packed, protocol=protocol, buffer_callback=buffers.append if protocol >= 5 else None)
    back = pickle.loads(data, buffers=[memoryview(buffer) for buffer in buffers])
    assert unpacked_facts(back) == unpacked_facts(packed)
    if protocol >= 5:
        assert [bytes(buffer.raw()) for buffer in buffers] == [bytes(chunk) for chunk in packed.chunks]
        assert not any(bytes(chunk) in data for chunk in packed.chunks)
        assert all(type(chunk) is memoryview for chunk in back.chunks)
    else:
        assert buffers == [] and all(type(chunk) is bytes for chunk in back.chunks)
    # (without a buffer_callback, protocol 5 writes them into the pickle, as bytes)
    assert unpacked_facts(pickle.loads(pickle.dumps(packed, protocol=5))) == unpacked_facts(packed)


def test_packed_facts_are_the_facts_and_share_repeated_findings(transcript: Path) -> None:
    # What a worker packs is what the client unpacks, and a mistake repeated on every line
    # (nine findings of a header-only message) stays one tuple of findings, as pickle kept it.
    header_only = b'{"Header": "PGM-KPA-V1.0"}\n'
    path = transcript.with_name("repeated.jsonl")
    path.write_bytes(header_only * 50 + transcript.read_bytes() + header_only * 50)
    numbers, facts = facts_batch(iter_documents(path))
    packed = packed_facts_batch(iter_documents(path))
    assert isinstance(packed, PackedFacts) and len(packed.table) < len(packed.marks)
    assert unpacked_facts(packed) == (numbers, facts)
    repeated = [f.findings for f in unpacked_facts(packed)[1][:50]]
    assert len(repeated[0]) == 9 and all(findings is repeated[0] for findings in repeated)
    assert unpacked_facts((numbers, facts)) == (numbers, facts)
