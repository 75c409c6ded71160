"""Work done on a helper process gives exactly the results made in this one.

``pgm_explore._bulk`` hands batches of whole lines of a large file to a helper process.
These tests give every file a helper and small batches (with a :class:`Job`'s sizes), and
compare message by message, finding by finding, with the inline path; then they break the
helper in each way it can break and check that nothing is lost or changed. The jobs below
tell where they ran: a helper process is spawned afresh, and imports this module to run them.
"""

from __future__ import annotations

import io
import multiprocessing
import os
import pickle
import threading
import time
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from pgm_explore import _bulk
from pgm_explore._bulk import SUMMARY, Job, answer, iter_reported, iter_worked, serve, summary
from pgm_explore._facts import FACTS, Facts
from pgm_explore._sources import Item, UnreadablePath, iter_documents, iter_stream
from pgm_explore.cli import main
from pgm_explore.dialogue import TranscriptChecker, TranscriptFinding, check_documents, check_paths
from pgm_explore.validation import Report, ReportFields

DATA = Path(__file__).resolve().parents[1] / "data" / "transcripts"
SMALL = {"min_bytes": 0, "batch_bytes": 1500}  # every file gets a helper; batches of a few lines

pytestmark = pytest.mark.skipif(
    len(os.sched_getaffinity(0)) < 2 if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1) < 2,
    reason="a helper process needs a second core",
)

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
    # facts that MessagePack cannot carry (an int beyond 64 bits; a lone surrogate in a
    # finding's path): pickled
    b'{"Header": "PGM-KPA-V1.0", "Mode": "RQ", "DialogID": "dlg-x", "QueryID": "q-\\ud800", "TurnIndex": 1'
    + b"0" * 30
    + b"}\n",
    b"[" * 3000 + b"]" * 3000 + b"\n",
    b'"a JSON string"\n',
    b"[1, 2]\n",
    b"null\n",
    b'{"Header": "PGM-KDA-V1.0", "Mode": "RS", "Feasibility": [' + b"[" * 900 + b"]" * 900 + b"]}\n",
]

# --- jobs that tell where they ran, or break in the helper ---------------------------------------

_HOME = "PGM_EXPLORE_TEST_HOME"
"""The pid of the process running the tests (a spawned helper inherits the environment)."""


def _in_helper() -> bool:
    return os.environ.get(_HOME) not in (None, str(os.getpid()))


def placed(item: Item) -> tuple[int, ReportFields]:
    """The item's report fields and the pid of the process that made them."""
    return os.getpid(), summary(item)


def dies_at_once(item: Item) -> ReportFields:
    if _in_helper():
        os._exit(3)
    return summary(item)


def dies_after_some_batches(item: Item) -> ReportFields:
    if _in_helper() and item.line is not None and item.line > 300:
        os._exit(3)
    return summary(item)


def fails_in_helper(item: Item) -> ReportFields:
    if _in_helper() and item.line is not None and item.line > 100:
        raise RuntimeError("only in the helper")
    return summary(item)


def silent_in_helper(item: Item) -> ReportFields:
    if _in_helper():
        time.sleep(600)
    return summary(item)


def garbled(values: list[Any]) -> bytes:
    return b"junk!"


def one_short(values: list[Any]) -> bytes:
    return pickle.dumps(values[:-1])


def fails_at_line_5(item: Item) -> ReportFields:
    if item.line == 5:
        raise ValueError("line 5 is cursed")
    return summary(item)


@pytest.fixture(autouse=True)
def home(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv(_HOME, str(os.getpid()))
    monkeypatch.delenv("PGM_EXPLORE_PARALLEL", raising=False)
    yield
    assert not multiprocessing.active_children()  # no helper is left running


@pytest.fixture(params=["forked", "spawned"])
def started(request: pytest.FixtureRequest) -> Iterator[str]:
    """How the helper starts: forked from a process running one thread, or a fresh
    interpreter where another thread runs (as in a notebook's kernel)."""
    if request.param == "forked":
        yield request.param
        return
    stop = threading.Event()
    waiting = threading.Thread(target=stop.wait)
    waiting.start()
    try:
        yield request.param
    finally:
        stop.set()
        waiting.join()


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


def _seen(reports: Iterator[Report]) -> list[object]:
    # repr() tells 1 from 1.0 and True, and keeps the order of keys.
    return [(report.source, repr(report.to_dict())) for report in reports]


def _fields(pairs: Iterator[tuple[str, ReportFields]]) -> list[object]:
    return [(source, repr(Report(*fields, source).to_dict())) for source, fields in pairs]


def _found(findings: Iterator[TranscriptFinding]) -> list[dict[str, Any]]:
    return [f.to_dict() | {"path": f.path} for f in findings]


def _checked(path: Path, job: Job[Facts], *, parallel: bool = True) -> Iterator[TranscriptFinding]:
    """What check_paths does, with ``job`` for the facts."""
    checker = TranscriptChecker()
    for source, facts in iter_worked(path, job, parallel=parallel):
        yield from checker.feed_facts(source, facts)
    yield from checker.finish()


def test_the_helper_makes_the_reports_made_here(started: str, transcript: Path) -> None:
    inline = _seen(iter_reported(transcript, parallel=False))
    assert _seen(iter_reported(transcript, job=replace(SUMMARY, **SMALL))) == inline
    assert [source for source, _ in inline] == [item.source for item in iter_documents(transcript)]
    placed_pairs = list(iter_worked(transcript, Job(placed, **SMALL)))
    assert _fields((source, fields) for source, (_, fields) in placed_pairs) == inline
    elsewhere = sum(pid != os.getpid() for _, (pid, _) in placed_pairs)
    assert elsewhere > len(inline) // 2  # the helper did most of the work


def test_checking_finds_the_same_with_a_helper(transcript: Path) -> None:
    inline = _found(check_paths([transcript], parallel=False))
    assert _found(_checked(transcript, replace(FACTS, **SMALL))) == inline
    assert _found(_checked(transcript, replace(FACTS, **SMALL), parallel=False)) == inline
    documents = [(item.source, item.document, item.problem) for item in iter_documents(transcript)]
    assert _found(check_documents(documents)) == inline
    assert {f["rule"] for f in inline} >= {"syntax", "not-object", "too-large", "request-unknown", "turn-gap"}


def test_the_check_command_says_the_same_with_a_helper(
    transcript: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # A file as large as the command gives a helper: the transcript again and again (its ids
    # reused, so that the rules have much to say at every repeat).
    text = transcript.read_bytes()
    large = tmp_path / "large.jsonl"
    large.write_bytes(text * (FACTS.min_bytes // len(text) + 1))
    assert _bulk._worth_a_helper(str(large), FACTS.min_bytes)
    outputs = []
    for parallel in ("0", "1"):
        monkeypatch.setenv("PGM_EXPLORE_PARALLEL", parallel)
        status = main(["check", "--format", "text", "--no-color", str(large)])
        outputs.append((status, capsys.readouterr().out))
    assert outputs[0] == outputs[1]
    assert outputs[0][0] == 1 and "query-id-reused" in outputs[0][1]


@pytest.mark.parametrize(
    "job",
    [
        Job(dies_at_once, **SMALL),
        Job(dies_after_some_batches, **SMALL),
        Job(fails_in_helper, **SMALL),
        Job(summary, encode=garbled, **SMALL),
        Job(summary, encode=one_short, **SMALL),
        Job(silent_in_helper, patience=0.5, **SMALL),
        Job(lambda item: summary(item), **SMALL),  # spawned, no helper can start: it cannot be pickled
    ],
    ids=["dies-at-once", "dies-after-some-batches", "fails", "sends-garbage", "miscounts", "silent", "unpicklable"],
)
def test_a_failing_helper_changes_nothing(started: str, job: Job[ReportFields], transcript: Path) -> None:
    inline = _seen(iter_reported(transcript, parallel=False))
    assert _fields(iter_worked(transcript, job)) == inline


@pytest.mark.parametrize("parallel", [True, False])
def test_a_failing_job_raises_naming_the_message(parallel: bool, transcript: Path) -> None:
    with pytest.raises(ValueError, match="cursed") as raised:
        list(iter_worked(transcript, Job(fails_at_line_5, **SMALL), parallel=parallel))
    assert f"(while working on the message at {transcript}:5)" in raised.value.__notes__


def test_stopping_early_stops_the_helper(started: str, transcript: Path) -> None:
    reports = iter_reported(transcript, job=replace(SUMMARY, **SMALL))
    first = [next(reports) for _ in range(20)]
    assert [r.source for r in first] == [item.source for item in list(iter_documents(transcript))[:20]]
    assert multiprocessing.active_children()
    reports.close()  # type: ignore[attr-defined]  # (a generator)
    assert not multiprocessing.active_children()


def test_two_helpers_at_once_each_end_with_their_reader(started: str, transcript: Path) -> None:
    first, second = (iter_reported(transcript, job=replace(SUMMARY, **SMALL)) for _ in range(2))
    for _ in range(2):  # (a helper starts after the first message)
        next(first), next(second)  # (the second helper, forked, holds the first one's pipe too)
    count = len(list(iter_documents(transcript)))
    for _ in range(count - 3):
        next(first)
    began = time.monotonic()
    assert len(list(first)) == 1  # the last report, then the first helper's end
    assert time.monotonic() - began < 5  # (not the 10 s a helper waiting for its pipe to end is given)
    second.close()  # type: ignore[attr-defined]  # (a generator)


class _FailingDisk(io.FileIO):
    """A file whose disk goes away once ``limit`` bytes of it have been read (such a disk
    cannot be had on demand): every read from there on fails, as on a real one."""

    def __init__(self, path: Path, limit: int) -> None:
        super().__init__(path, "rb")
        self.limit = limit
        self.failed_at: int | None = None

    def read(self, size: int | None = -1) -> bytes:
        if self.tell() >= self.limit:
            self.failed_at = self.tell()
            raise OSError(5, "the disk went away")
        return super().read(size)


def test_what_was_read_comes_out_before_a_read_error(transcript: Path) -> None:
    # The reading of this process fails; the helper, which reads the file on its own, does not.
    disk = _FailingDisk(transcript, transcript.stat().st_size // 2)
    job = replace(SUMMARY, **SMALL)
    seen = []
    with disk, pytest.raises(UnreadablePath, match="the disk went away"):
        seen.extend(source for source, _ in _bulk._read_in_batches(disk, str(transcript), f"{transcript}:", 1, job))
    assert disk.failed_at is not None
    read = [item for item in iter_documents(transcript) if item.offset + len(item.raw) <= disk.failed_at]
    assert len(read) > 30 and seen == [item.source for item in read]


def test_an_unreadable_path_is_reported_at_once(tmp_path: Path) -> None:
    missing = tmp_path / "missing.jsonl"
    with pytest.raises(UnreadablePath, match="no such file"):
        iter_reported(missing, job=replace(SUMMARY, **SMALL))
    with pytest.raises(UnreadablePath, match="no such file"):
        iter_worked(missing, replace(FACTS, **SMALL))


def test_batches_are_whole_lines() -> None:
    text = b"a\n" + b"b" * 20 + b"\n\r\n  \nccc\r\n" + b"d" * 9 + b"\nlast, no line break"
    batches = list(_bulk._regions(io.BytesIO(text[2:]), 2, 2, 8))
    assert b"".join(b.data for b in batches) == text[2:]
    assert all(b.data.endswith(b"\n") for b in batches[:-1])
    for batch in batches:  # each knows where it starts, in bytes and in lines
        assert text[batch.start :].startswith(batch.data)
        assert batch.first == text[: batch.start].count(b"\n") + 1
        assert batch.lines == len(batch.data.splitlines()) == batch.data.count(b"\n") + (batch is batches[-1])
    assert any(b.data.startswith(b"b" * 20 + b"\n") for b in batches)  # a line longer than a batch, whole


def test_crlf_blank_lines_and_no_final_line_break(tmp_path: Path) -> None:
    lines = [
        line.rstrip(b"\n")
        for path in sorted(DATA.rglob("*.jsonl"))[:4]
        for line in path.read_bytes().splitlines(keepends=True)
    ]
    ends = [b"\r\n", b"\n", b"\n  \t\n", b"\n\n"]
    text = b"".join(line + ends[i % len(ends)] for i, line in enumerate(lines)) + lines[0]
    path = tmp_path / "mixed.jsonl"
    path.write_bytes(text)
    inline = _found(check_paths([path], parallel=False))
    assert _found(_checked(path, replace(FACTS, **SMALL))) == inline
    reports = _seen(iter_reported(path, job=replace(SUMMARY, **SMALL)))
    assert reports == _seen(iter_reported(path, parallel=False))
    last_line = text.count(b"\n") + 1
    assert reports[-1][0] == f"{path}:{last_line}"


def _helped(path: Path | str, min_bytes: int) -> bool:
    """Whether a message of ``path`` was made in another process."""
    job = Job(placed, min_bytes=min_bytes, batch_bytes=8)
    return any(pid != os.getpid() for _, (pid, _) in iter_worked(path, job))


def test_only_large_regular_files_get_a_helper(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    small, large = tmp_path / "small.jsonl", tmp_path / "large.jsonl"
    small.write_bytes(b"{}\n" * 10)
    large.write_bytes(b"{}\n" * 1000)
    assert not _helped(small, 3000)
    assert _helped(large, 3000)
    fifo = tmp_path / "pipe.jsonl"
    if hasattr(os, "mkfifo"):
        os.mkfifo(fifo)
        writer = threading.Thread(target=fifo.write_bytes, args=(b"{}\n" * 1000,))
        writer.start()
        assert not _helped(fifo, 0)
        writer.join()
    monkeypatch.setenv("PGM_EXPLORE_PARALLEL", "0")
    assert not _helped(large, 0)
    monkeypatch.delenv("PGM_EXPLORE_PARALLEL")
    if hasattr(os, "sched_setaffinity"):  # one core: a helper would only take turns with this process
        cores = os.sched_getaffinity(0)
        os.sched_setaffinity(0, {min(cores)})
        try:
            assert not _helped(large, 0)
        finally:
            os.sched_setaffinity(0, cores)


def test_serve_answers_each_request_in_turn(tmp_path: Path) -> None:
    text = b'{"Header": "PGM-KPA-V1.0"}\n\n{oops\n[1]\n'
    path = tmp_path / "t.jsonl"
    path.write_bytes(text)
    here, there = multiprocessing.Pipe()
    server = threading.Thread(target=serve, args=(there, str(path), SUMMARY))
    server.start()
    here.send((0, 34, 1))  # lines 1-3: a message, a blank line, a broken one
    first = here.recv_bytes()
    here.send((34, len(text), 4))
    second = here.recv_bytes()
    here.close()  # the end of the requests ends the loop
    server.join(timeout=10)
    assert not server.is_alive()
    assert first == answer(text[:34], 1, SUMMARY) and second == answer(text[34:], 4, SUMMARY)
    (kpa, oops), (array,) = pickle.loads(first[1:]), pickle.loads(second[1:])
    assert kpa[0] == "BKN-PAL" and not kpa[2]
    assert oops[0] is None and oops[3][0].rule == "syntax" and oops[3][0].line == 3
    assert array[3][0].rule == "not-object"


def test_facts_travel_as_messagepack_or_else_as_a_pickle() -> None:
    plain = b'{"Header": "PGM-KPA-V1.0", "Mode": "RQ", "DialogID": "d", "QueryID": "q-1", "TurnIndex": 0}\n'
    # An int beyond 64 bits (a lone surrogate no longer reaches the facts: it is an encoding finding).
    odd = (
        b'{"Header": "PGM-KPA-V1.0", "Mode": "RQ", "DialogID": "d", "QueryID": "q-2", "TurnIndex": 1'
        + b"0" * 30
        + b"}\n"
    )
    facts: list[Facts] = []
    for data, how, decode in ((plain, b"E", FACTS.decode), (plain + odd, b"P", pickle.loads)):
        made = answer(data, 1, FACTS)
        assert made[:1] == how
        facts = decode(made[1:])
        assert facts == [FACTS.work(item) for item in iter_stream(io.BytesIO(data), "", "jsonl", unread=True)]
    assert facts[1].query_id == "q-2" and facts[1].turn == 10**30
