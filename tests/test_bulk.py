"""Validation on a helper process gives exactly the reports made in this one.

``pgm_explore._bulk`` hands batches of whole lines of a large file to a helper process.
These tests make every file large enough for a helper and batches small, and compare
message by message, finding by finding, with the inline path; then they break the helper
in each way it can break and check that nothing is lost or changed.
"""

from __future__ import annotations

import io
import pickle
import sys
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import IO

import pytest

from pgm_explore import _bulk
from pgm_explore._bulk import SUMMARY, _read_frame, _write_frame, answer, iter_reported, serve
from pgm_explore._sources import UnreadablePath, iter_documents, iter_stream
from pgm_explore.cli import main
from pgm_explore.dialogue import check_documents, check_paths
from pgm_explore.dialogue._facts import FACTS
from pgm_explore.validation import Report

DATA = Path(__file__).resolve().parents[1] / "data" / "transcripts"
ROOT = str(Path(_bulk.__file__).resolve().parent.parent)

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


@pytest.fixture
def forced(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every file gets a helper, and batches of a few lines (some lines are longer than a batch)."""
    worth = _bulk._worth_a_helper
    monkeypatch.setattr(_bulk, "_worth_a_helper", lambda path, min_bytes: worth(path, 0))
    monkeypatch.setattr(_bulk, "_BATCH", 1500)
    monkeypatch.setattr(_bulk, "_cores", lambda: 2)
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


def _seen(reports: Iterator[Report]) -> list[object]:
    # repr() tells 1 from 1.0 and True, and keeps the order of keys.
    return [(report.source, repr(report.to_dict())) for report in reports]


class _Counting:
    """Counts the batches handed to helpers (to show the helper did the work)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.batches = 0
        self.helpers: list[_bulk._Helper] = []
        take, start = _bulk._Helper.take, _bulk._Helper.start

        def counted_take(helper: _bulk._Helper, batch: _bulk._Batch) -> bool:
            taken = take(helper, batch)
            self.batches += taken
            return taken

        def recorded_start(path: str, job: _bulk.Job[object]) -> _bulk._Helper | None:
            helper = start(path, job)
            if helper is not None:
                self.helpers.append(helper)
            return helper

        monkeypatch.setattr(_bulk._Helper, "take", counted_take)
        monkeypatch.setattr(_bulk._Helper, "start", staticmethod(recorded_start))


def test_the_helper_makes_the_reports_made_here(
    forced: None, transcript: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    counting = _Counting(monkeypatch)
    inline = _seen(iter_reported(transcript, parallel=False))
    helped = _seen(iter_reported(transcript))
    assert counting.batches > 10
    assert helped == inline
    assert [source for source, _ in inline] == [item.source for item in iter_documents(transcript)]
    assert all(helper._process.poll() is not None for helper in counting.helpers)  # none left running


def test_check_paths_finds_the_same_with_a_helper(
    forced: None, transcript: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    counting = _Counting(monkeypatch)
    inline = [f.to_dict() | {"path": f.path} for f in check_paths([transcript], parallel=False)]
    helped = [f.to_dict() | {"path": f.path} for f in check_paths([transcript])]
    assert counting.batches > 10
    assert helped == inline
    documents = [(item.source, item.document, item.problem) for item in iter_documents(transcript)]
    assert [f.to_dict() | {"path": f.path} for f in check_documents(documents)] == inline
    assert {f["rule"] for f in inline} >= {"syntax", "not-object", "too-large", "request-unknown", "turn-gap"}


def test_the_check_command_says_the_same_with_a_helper(
    forced: None, transcript: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    outputs = []
    for parallel in ("0", "1"):
        monkeypatch.setenv("PGM_EXPLORE_PARALLEL", parallel)
        status = main(["check", "--format", "text", "--no-color", str(transcript)])
        outputs.append((status, capsys.readouterr().out))
    assert outputs[0] == outputs[1]
    assert outputs[0][0] == 1 and "messages" in outputs[0][1]


# The helper's side, as the programs below use it: the request, and what is asked.
_ASKED = (
    "import pickle, sys; from pgm_explore._bulk import _job_named, _read_frame, _write_frame, answer; "
    "job = _job_named(sys.argv[2]); file = open(sys.argv[1], 'rb'); "
    "def asked(frame):\n"
    "    start, end, first = pickle.loads(frame); file.seek(start); return file.read(end - start), first\n"
)


@pytest.mark.parametrize(
    "program",
    [
        "import sys; sys.exit(3)",  # dies at once
        # answers one batch, then dies
        _ASKED
        + "data, first = asked(_read_frame(sys.stdin.buffer)); _write_frame(sys.stdout.buffer, answer(data, first, job))",
        # answers garbage
        "import sys; sys.stdout.buffer.write(bytes([5, 0, 0, 0, 0, 0, 0, 0]) + b'junk!'); sys.stdout.flush()",
        # answers a batch with the right CRC and no reports
        _ASKED + "data, first = asked(_read_frame(sys.stdin.buffer)); "
        "_write_frame(sys.stdout.buffer, answer(data, first, job)[:5] + pickle.dumps([])); sys.stdin.read()",
        # reads other bytes than were read here (the file changed)
        _ASKED + "for frame in iter(lambda: _read_frame(sys.stdin.buffer), None):\n"
        "    data, first = asked(frame); _write_frame(sys.stdout.buffer, answer(b'{}\\n' * data.count(10), first, job))",
        # answers nothing, and never ends
        "import time; time.sleep(600)",
    ],
    ids=["dies-at-once", "dies-after-one-batch", "sends-garbage", "miscounts", "other-bytes", "silent"],
)
def test_a_failing_helper_changes_nothing(
    program: str, forced: None, transcript: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_bulk, "_PATIENCE", 0.5)
    inline = _seen(iter_reported(transcript, parallel=False))
    code = f"import sys; sys.path.insert(0, {ROOT!r}); {program}"
    monkeypatch.setattr(_bulk, "_command", lambda path, job: [sys.executable, "-c", code, path, job.name])
    assert _seen(iter_reported(transcript)) == inline


def test_no_helper_can_start(forced: None, transcript: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    inline = _seen(iter_reported(transcript, parallel=False))
    monkeypatch.setattr(_bulk, "_command", lambda path, job: ["/nonexistent/python", path])
    assert _seen(iter_reported(transcript)) == inline


def test_stopping_early_stops_the_helper(forced: None, transcript: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    counting = _Counting(monkeypatch)
    reports = iter_reported(transcript)
    first = [next(reports) for _ in range(20)]
    assert [r.source for r in first] == [item.source for item in list(iter_documents(transcript))[:20]]
    reports.close()  # type: ignore[attr-defined]
    (helper,) = counting.helpers
    assert helper._process.poll() is not None


def test_what_was_read_comes_out_before_a_read_error(
    forced: None, transcript: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    regions = _bulk._regions

    def failing(file: IO[bytes], start: int, first: int) -> Iterator[_bulk._Batch[object]]:
        for count, batch in enumerate(regions(file, start, first)):
            if count == 30:
                raise OSError(5, "the disk went away")
            yield batch
            read_until[0] = batch.first + batch.data.count(b"\n")

    read_until = [0]
    monkeypatch.setattr(_bulk, "_regions", failing)
    seen = []
    with pytest.raises(UnreadablePath, match="the disk went away"):
        seen.extend(report.source for report in iter_reported(transcript))
    expected = [item.source for item in iter_documents(transcript) if item.line < read_until[0]]
    assert len(expected) > 30 and seen == expected


def test_an_unreadable_path_is_reported_at_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_bulk, "_worth_a_helper", lambda path, min_bytes: True)  # even so
    missing = tmp_path / "missing.jsonl"
    with pytest.raises(UnreadablePath, match="no such file"):
        iter_reported(missing)
    with pytest.raises(UnreadablePath, match="no such file"):
        _bulk.iter_worked(missing, FACTS)


def test_batches_are_whole_lines(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_bulk, "_BATCH", 8)
    text = b"a\n" + b"b" * 20 + b"\n\r\n  \nccc\r\n" + b"d" * 9 + b"\nlast, no line break"
    batches = list(_bulk._regions(io.BytesIO(text[2:]), 2, 2))
    assert b"".join(b.data for b in batches) == text[2:]
    assert all(b.data.endswith(b"\n") for b in batches[:-1])
    for batch in batches:  # each knows where it starts, in bytes and in lines
        assert text[batch.start :].startswith(batch.data)
        assert batch.first == text[: batch.start].count(b"\n") + 1
        assert batch.lines == len(batch.data.splitlines()) == batch.data.count(b"\n") + (batch is batches[-1])
    assert any(b.data.startswith(b"b" * 20 + b"\n") for b in batches)  # a line longer than a batch, whole


def test_crlf_blank_lines_and_no_final_line_break(forced: None, tmp_path: Path) -> None:
    lines = [
        line.rstrip(b"\n")
        for path in sorted(DATA.rglob("*.jsonl"))[:4]
        for line in path.read_bytes().splitlines(keepends=True)
    ]
    ends = [b"\r\n", b"\n", b"\n  \t\n", b"\n\n"]
    text = b"".join(line + ends[i % len(ends)] for i, line in enumerate(lines)) + lines[0]
    path = tmp_path / "mixed.jsonl"
    path.write_bytes(text)
    inline = [f.to_dict() for f in check_paths([path], parallel=False)]
    assert [f.to_dict() for f in check_paths([path])] == inline
    reports = _seen(iter_reported(path))
    assert reports == _seen(iter_reported(path, parallel=False))
    last_line = text.count(b"\n") + 1
    assert reports[-1][0] == f"{path}:{last_line}"


def test_only_large_regular_files_get_a_helper(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_bulk, "_cores", lambda: 2)
    monkeypatch.delenv("PGM_EXPLORE_PARALLEL", raising=False)
    small, large = tmp_path / "small.jsonl", tmp_path / "large.jsonl"
    small.write_bytes(b"{}\n")
    large.write_bytes(b"{}\n" * 1000)
    assert not _bulk._worth_a_helper(str(small), 3000)
    assert _bulk._worth_a_helper(str(large), 3000)
    assert not _bulk._worth_a_helper("-", 0)
    assert not _bulk._worth_a_helper(str(tmp_path), 0)
    monkeypatch.setenv("PGM_EXPLORE_PARALLEL", "0")
    assert not _bulk._worth_a_helper(str(large), 3000)
    monkeypatch.delenv("PGM_EXPLORE_PARALLEL")
    monkeypatch.setattr(_bulk, "_cores", lambda: 1)
    assert not _bulk._worth_a_helper(str(large), 3000)


def test_serve_answers_each_request_in_turn(tmp_path: Path) -> None:
    text = b'{"Header": "PGM-KPA-V1.0"}\n\n{oops\n[1]\n'
    path = tmp_path / "t.jsonl"
    path.write_bytes(text)
    requests = io.BytesIO()
    _write_frame(requests, pickle.dumps((0, 34, 1)))  # lines 1-3: a message, a blank line, a broken one
    _write_frame(requests, pickle.dumps((34, len(text), 4)))
    requests.seek(0)
    answers = io.BytesIO()
    serve(str(path), "pgm_explore._bulk:SUMMARY", requests, answers)
    answers.seek(0)
    first, second = _read_frame(answers), _read_frame(answers)
    assert _read_frame(answers) is None
    assert first == answer(text[:34], 1, SUMMARY) and second == answer(text[34:], 4, SUMMARY)
    assert first[:4] == zlib.crc32(text[:34]).to_bytes(4, "little")
    (kpa, oops), (array,) = pickle.loads(first[5:]), pickle.loads(second[5:])
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
    for data, how in ((plain, b"E"), (plain + odd, b"P")):
        made = answer(data, 1, FACTS)
        assert made[4:5] == how
        facts = _bulk._decoded(FACTS, made[4:])
        assert facts == [FACTS.work(item) for item in iter_stream(io.BytesIO(data), "", "jsonl", unread=True)]
    assert facts is not None and facts[1].query_id == "q-2" and facts[1].turn == 10**30
