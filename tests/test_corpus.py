"""Corpora (issue 20): ``check --corpus`` and ``table --corpus``, their public contract (files
found, order, names, the JSON lines of each transcript exactly those of a separate
``check --format json FILE``, the text summary, exit statuses, unreadable files), the same
bytes in this process, on a real ``dask.distributed`` LocalCluster and on an existing cluster
started with the ``dask`` command line; and the :class:`pgm_explore.analysis.Corpus` object."""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from conftest import ROOT

from pgm_explore import analysis
from pgm_explore.analysis import Corpus
from pgm_explore.analysis._corpus import _Job, _tabulate_batch
from pgm_explore.cli import main
from pgm_explore.dialogue import Transcript, corpus_files
from pgm_explore.io import UnreadablePath

TRANSCRIPTS = ROOT / "data" / "transcripts"

# name in the corpus -> the data file it is a copy of (findings of every kind: errors,
# warnings, a JSON array, a clean transcript, unanswered Requests at the end).
LAYOUT = {
    "logs/day1/a.jsonl": "defective/turn-gap.jsonl",
    "logs/day1/b.json": "defective/merged-log-out-of-order.json",
    "logs/day2/z.jsonl": "full-session.jsonl",
    "logs/b.jsonl": "defective/duplicate-response.jsonl",
    "logs/x.json/c.jsonl": "defective/unanswered-request.jsonl",  # a directory named like a file
    "single.log": "defective/stance-constraints.jsonl",  # given by name: read by its content
}
# The PATHs given, and the transcripts they stand for, in the contract's order: the PATHs as
# given, a directory's files sorted by their path inside it.
GIVEN = ["single.log", "logs"]
ORDER = [
    "single.log",
    "logs/b.jsonl",
    "logs/day1/a.jsonl",
    "logs/day1/b.json",
    "logs/day2/z.jsonl",
    "logs/x.json/c.jsonl",
]
SUMMARY = re.compile(r"^(\d+) messages? in (\d+) dialogues?: (\d+) errors?, (\d+) warnings?$")


@pytest.fixture
def corpus(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    for name, source in LAYOUT.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(TRANSCRIPTS / source, tmp_path / name)
    (tmp_path / "logs" / "notes.txt").write_text("not a transcript\n")  # neither *.jsonl nor *.json
    monkeypatch.chdir(tmp_path)
    return tmp_path


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    status = main(list(argv))
    out, err = capsys.readouterr()
    return status, out, err


def alone(*argv: str) -> subprocess.CompletedProcess[str]:
    """A separate ``pgm-explore`` process, as a person or a script runs it."""
    return subprocess.run(
        [sys.executable, "-m", "pgm_explore", *argv], capture_output=True, text=True, timeout=120, check=False
    )


# --- which files, in which order, under which names -------------------------------------------------


def test_directories_stand_for_their_transcript_files_sorted_by_path(corpus: Path) -> None:
    assert corpus_files(GIVEN) == ORDER
    assert corpus_files(["logs/", "single.log"]) == [*ORDER[1:], "single.log"]  # PATHs in the order given
    assert corpus_files(["logs/day2/z.jsonl", "logs/day1"]) == [
        "logs/day2/z.jsonl",
        "logs/day1/a.jsonl",
        "logs/day1/b.json",
    ]


def test_a_missing_path_and_standard_input_are_refused(corpus: Path) -> None:
    with pytest.raises(UnreadablePath, match="cannot read nowhere: no such file"):
        corpus_files(["logs", "nowhere"])
    with pytest.raises(UnreadablePath, match="standard input cannot be a transcript of a corpus"):
        corpus_files(["-"])


# --- check --corpus: the contract -------------------------------------------------------------------


def test_json_lines_are_those_of_each_transcript_checked_alone(
    corpus: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    status, out, err = run(capsys, "check", "--corpus", "--format", "json", *GIVEN)
    separately = [alone("check", "--format", "json", name) for name in ORDER]
    assert out == "".join(done.stdout for done in separately)
    assert err == ""
    # Each transcript's lines come in its place, named as the directory given joined with the file's path.
    sources = [line.split('"source":"', 1)[1].split('"', 1)[0] for line in out.splitlines()]
    owners = [next(name for name in ORDER if s == name or s.startswith((name + ":", name + "#"))) for s in sources]
    assert owners == sorted(owners, key=ORDER.index) and set(owners) == set(ORDER) - {"logs/day2/z.jsonl"}
    assert status == 1 == max(done.returncode for done in separately)


def test_text_is_each_transcripts_findings_then_one_summary_line(
    corpus: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    status, out, _ = run(capsys, "check", "--corpus", "--no-color", *GIVEN)
    blocks, totals = [], [0, 0, 0, 0]
    for name in ORDER:
        done = alone("check", "--no-color", name)
        *findings, last = done.stdout.splitlines(keepends=True)
        blocks += findings
        for i, n in enumerate(SUMMARY.match(last.strip()).groups()):  # type: ignore[union-attr]
            totals[i] += int(n)
    messages, dialogues, errors, warnings = totals
    summary = f"6 transcripts, {messages} messages in {dialogues} dialogues: {errors} errors, {warnings} warnings\n"
    assert out == "".join(blocks) + summary
    assert status == 1


def test_a_clean_corpus_exits_zero_and_an_empty_one_too(corpus: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run(capsys, "check", "--corpus", "--format", "json", "logs/day2") == (0, "", "")
    (corpus / "empty").mkdir()
    status, out, _ = run(capsys, "check", "--corpus", "--no-color", "empty")
    assert (status, out) == (0, "0 transcripts, 0 messages in 0 dialogues: 0 errors, 0 warnings\n")


def test_a_missing_path_checks_nothing(corpus: Path, capsys: pytest.CaptureFixture[str]) -> None:
    status, out, err = run(capsys, "check", "--corpus", "logs", "nowhere", "-")
    assert (status, out) == (2, "")
    assert err.splitlines() == [
        "pgm-explore check: cannot read nowhere: no such file or directory",
        "pgm-explore check: cannot read -: standard input cannot be a transcript of a corpus: give files or directories",
    ]


def test_an_unreadable_transcript_is_reported_and_the_others_are_checked(
    corpus: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    os.symlink(corpus / "gone.jsonl", corpus / "logs" / "day1" / "ab.jsonl")  # a link to nothing
    status, out, err = run(capsys, "check", "--corpus", "--format", "json", "logs")
    assert status == 2
    assert err == "pgm-explore check: cannot read logs/day1/ab.jsonl: no such file\n"
    alone_err = alone("check", "logs/day1/ab.jsonl")
    assert (alone_err.returncode, alone_err.stderr) == (2, err)  # as check says it of that file alone
    _, everything, _ = run(capsys, "check", "--corpus", "--format", "json", "logs/b.jsonl", "logs/day1/a.jsonl")
    assert everything in out  # the transcripts before and after it are all there
    status, text, _ = run(capsys, "check", "--corpus", "--no-color", "logs")
    assert status == 2 and text.splitlines()[-1].endswith("; 1 transcript could not be read")


def test_table_workers_need_a_corpus(corpus: Path, capsys: pytest.CaptureFixture[str]) -> None:
    status, out, err = run(capsys, "table", "messages", "--workers", "2", "single.log")
    assert (status, out, err) == (2, "", "pgm-explore table: --workers and --scheduler go with --corpus\n")


# --- batches of transcripts, as workers check them ---------------------------------------------------


def test_a_batch_writes_what_its_transcripts_write_one_by_one(corpus: Path) -> None:
    # A worker sends back one value a batch: what the transcripts wrote to each stream, in
    # order, a pair ending with each transcript that wrote to standard error (the missing one).
    from pgm_explore.cli._check import FileCheck, check_file, check_files
    from pgm_explore.cli._output import PLAIN

    paths = ("single.log", "logs/b.jsonl", "logs/missing.jsonl", "logs/day1/a.jsonl", "logs/day2/z.jsonl")
    done = check_files(FileCheck(paths, "json", PLAIN))
    each = [check_file(path, "json", PLAIN) for path in paths]
    assert done.written == (
        (each[0].out + each[1].out + each[2].out, each[2].err),
        (each[3].out + each[4].out, ""),
    )
    assert each[2].err.startswith("pgm-explore check: cannot read logs/missing.jsonl")
    assert (done.transcripts, done.unread, done.status) == (5, 1, 2)
    assert done.messages == sum(e.messages for e in each) > 0
    assert (done.errors, done.warnings) == (sum(e.errors for e in each), sum(e.warnings for e in each))


def test_the_files_of_a_batch_are_one_producers_for_the_typed_reader(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Lines the typed reader refuses (messages that are not clean) cost it a read each until it
    # gives up on them; over the files of a batch it gives up once, not file after file.
    import pgm_explore.io._read as reading
    from pgm_explore.cli._check import FileCheck, check_file, check_files
    from pgm_explore.cli._output import PLAIN

    line = b'{"Header":"PGM-KPA-V1.0","Mode":"RQ","Time":"now"}\n'
    paths = []
    for n in range(20):
        (tmp_path / f"{n}.jsonl").write_bytes(line * 3)
        paths.append(str(tmp_path / f"{n}.jsonl"))
    offered: list[bytes] = []

    def counting(real: Any) -> Any:
        def counted(raw: bytes) -> object:
            offered.append(raw)
            return real(raw)

        return counted

    # (A file's first line is read on its own, the rest partition by partition, as Structs.)
    for name in ("read_clean", "read_clean_typed"):
        monkeypatch.setattr(reading, name, counting(getattr(reading, name)))
    each = [check_file(path, "json", PLAIN).out for path in paths]
    assert len(offered) == 60  # file by file: every line tried
    offered.clear()
    done = check_files(FileCheck(tuple(paths), "json", PLAIN))
    assert len(offered) == reading._TRIES + 1
    assert done.written == (("".join(each), ""),) and done.errors > 0


def test_batches_hold_about_an_eighth_of_a_workers_share(tmp_path: Path) -> None:
    from pgm_explore.dialogue._corpus import BATCH_BYTES, BATCH_LARGEST, FILE_BYTES, batches

    names = []
    for n in range(400):
        (tmp_path / f"{n:03d}.jsonl").write_bytes(b" " * 20_000)
        names.append(str(tmp_path / f"{n:03d}.jsonl"))
    weight = 400 * (20_000 + FILE_BYTES)
    for workers in (1, 2):
        cut = batches(names, workers)
        assert [name for batch in cut for name in batch] == names
        share = max(BATCH_BYTES, min(BATCH_LARGEST, weight // (8 * workers)))
        per = -(-share // (20_000 + FILE_BYTES))  # files until a batch weighs its share
        assert [len(batch) for batch in cut[:-1]] == [per] * (len(cut) - 1) and len(cut[-1]) <= per
    assert len(batches(names, 1)) == 8 and len(batches(names, 8)) == 11  # (at least a MiB a batch)


# --- the same bytes wherever the work runs ----------------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize("form", ["json", "text"])
def test_two_local_worker_processes_give_the_same_bytes(
    corpus: Path, capsys: pytest.CaptureFixture[str], form: str
) -> None:
    # Files go to the workers in batches of a MiB or more (docs/tables.md), a MiB for a corpus this
    # small: two transcripts of more than a MiB each (a long blank line at their end) end two batches, so the workers share three.
    padded = (TRANSCRIPTS / "full-session.jsonl").read_bytes() + b" " * (1 << 20) + b"\n"
    for name in ("logs/big.jsonl", "logs/day2/big.jsonl"):
        (corpus / name).write_bytes(padded)
    here = run(capsys, "check", "--corpus", "--format", form, "--no-color", "--workers", "0", *GIVEN)
    there = run(capsys, "check", "--corpus", "--format", form, "--no-color", "--workers", "2", *GIVEN)
    assert there == here and here[0] == 1 and here[1]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture
def cluster(corpus: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A Dask scheduler and two workers started with the ``dask`` command line in a folder of their
    own, as a cluster is: not the corpus's, which the tests' commands run in and name relatively."""
    with _cluster(tmp_path_factory.mktemp("elsewhere")) as address:
        yield address


@contextlib.contextmanager
def _cluster(folder: Path) -> Iterator[str]:
    port = _free_port()
    address = f"tcp://127.0.0.1:{port}"
    dask = os.path.join(os.path.dirname(sys.executable), "dask")
    quiet = {"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL, "cwd": folder}
    # (--dashboard-address: the scheduler's HTTP server for health, on the loopback and a free port)
    listen = ["--host", "127.0.0.1", "--port", str(port), "--no-dashboard", "--dashboard-address", "127.0.0.1:0"]
    procs = [
        subprocess.Popen(
            [dask, "scheduler", *listen],
            **quiet,
        )
    ]
    try:
        procs.append(
            subprocess.Popen([dask, "worker", address, "--nworkers", "2", "--nthreads", "1", "--no-dashboard"], **quiet)
        )
        from distributed import Client

        with Client(address, timeout=60) as client:
            client.wait_for_workers(2, timeout=120)
        yield address
    finally:
        for proc in reversed(procs):
            proc.terminate()
            proc.wait(30)


@pytest.mark.slow
def test_an_existing_cluster_gives_the_same_bytes(
    cluster: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # (Its workers, in a folder of their own, read "logs/b.jsonl" from the command's, and the
    # output names it as given: they said "no such file" of each, once.)
    here = run(capsys, "check", "--corpus", "--format", "json", *GIVEN)
    there = run(capsys, "check", "--corpus", "--format", "json", "--scheduler", cluster, *GIVEN)
    assert there == here and here[1]
    table_here = run(capsys, "table", "findings", "--corpus", *GIVEN)
    table_there = run(capsys, "table", "findings", "--corpus", "--scheduler", cluster, *GIVEN)
    assert table_there == table_here and table_here[0] == 0
    # One file cut into partitions: the workers' packed facts come back through the scheduler,
    # which relays them in pickle's protocol 4 (local workers send them to the client in 5).
    joined = Path("joined.jsonl")  # (a session twice: findings all along it)
    joined.write_bytes(Path("logs/day2/z.jsonl").read_bytes() * 2 + Path("logs/b.jsonl").read_bytes())
    monkeypatch.setenv("PGM_EXPLORE_PARTITION_BYTES", "4000")
    for command in ("check", "validate"):
        here = run(capsys, command, "--format", "json", "--workers", "0", str(joined))
        there = run(capsys, command, "--format", "json", "--scheduler", cluster, str(joined))
        assert there == here and here[1].count("\n") > 30, command
    from distributed import Client

    with Client(cluster, timeout=60):  # (a corpus's dask DataFrame computed on that cluster)
        lazy = Corpus(*GIVEN).findings(lazy=True).compute()
    pd.testing.assert_frame_equal(lazy.reset_index(drop=True), Corpus(*GIVEN, workers=0).findings())


def test_an_unreachable_scheduler_is_a_usage_error(corpus: Path, capsys: pytest.CaptureFixture[str]) -> None:
    port = _free_port()  # nothing listens there: said at once, not after the client's minute of retries
    status, out, err = run(capsys, "check", "--corpus", "--scheduler", f"tcp://127.0.0.1:{port}", "logs")
    assert (status, out) == (2, "")
    assert err == (
        f"pgm-explore check: could not start work on the Dask scheduler at tcp://127.0.0.1:{port}: "
        "nothing accepts connections there (is the scheduler running?)\n"
    )


# --- table --corpus -------------------------------------------------------------------------------


@pytest.mark.parametrize("what", ["messages", "pastatus", "findings"])
def test_table_is_each_transcripts_table_with_its_path_first(
    corpus: Path, capsys: pytest.CaptureFixture[str], what: str
) -> None:
    status, out, err = run(capsys, "table", what, "--corpus", *GIVEN)
    assert (status, err) == (0, "")
    header, *rows = out.splitlines(keepends=True)
    expected = []
    for name in ORDER:
        own_header, *own_rows = run(capsys, "table", what, name)[1].splitlines(keepends=True)
        assert header == "transcript," + own_header
        expected += [f"{name},{row}" for row in own_rows]
    assert rows == expected


def test_table_of_a_corpus_with_an_unreadable_transcript_writes_nothing(
    corpus: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    os.symlink(corpus / "gone.jsonl", corpus / "logs" / "day1" / "ab.jsonl")
    assert run(capsys, "table", "messages", "--corpus", "logs") == (
        2,
        "",
        "pgm-explore table: cannot read logs/day1/ab.jsonl: no such file\n",
    )


@pytest.mark.slow
def test_table_on_local_workers_is_the_same(corpus: Path, capsys: pytest.CaptureFixture[str]) -> None:
    here = run(capsys, "table", "messages", "--corpus", "--format", "json", *GIVEN)
    there = run(capsys, "table", "messages", "--corpus", "--format", "json", "--workers", "2", *GIVEN)
    assert there == here and here[0] == 0


@pytest.mark.parametrize("what", ["messages", "summary"])
def test_a_worker_sends_back_one_table_for_its_partition_of_transcripts(corpus: Path, what: str) -> None:
    """A batch of files is one table (one DataFrame to pickle), the files' tables one under the other."""
    part = _tabulate_batch(_Job(what, tuple(ORDER)))
    assert part.unreadable is None and part.files == len(ORDER) and isinstance(part.frame, pd.DataFrame)
    one_by_one = Corpus(*ORDER, workers=0).table(what)  # a file a batch, in this process
    pd.testing.assert_frame_equal(part.frame, one_by_one)
    assert part.frame["transcript"].drop_duplicates().tolist() == ORDER


def test_a_partition_stops_at_a_transcript_that_cannot_be_read(corpus: Path) -> None:
    os.symlink(corpus / "gone.jsonl", corpus / "logs" / "ab.jsonl")
    part = _tabulate_batch(_Job("messages", ("logs/b.jsonl", "logs/ab.jsonl", "logs/day1/a.jsonl")))
    assert (part.files, part.frame) == (1, None)
    assert part.unreadable is not None and part.unreadable.path == "logs/ab.jsonl"


@pytest.mark.slow
def test_table_of_a_corpus_with_an_unreadable_transcript_on_local_workers_writes_nothing(
    corpus: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    os.symlink(corpus / "gone.jsonl", corpus / "logs" / "day1" / "ab.jsonl")
    assert run(capsys, "table", "messages", "--corpus", "--workers", "2", "logs") == (
        2,
        "",
        "pgm-explore table: cannot read logs/day1/ab.jsonl: no such file\n",
    )


# --- the Corpus object ------------------------------------------------------------------------------


def test_corpus_tables_are_the_transcripts_tables_one_under_the_other(corpus: Path) -> None:
    c = Corpus(*GIVEN, workers=0)
    assert (len(c), list(c.files)) == (6, ORDER)
    for what in analysis.TABLES:
        frame = c.table(what)
        assert isinstance(frame, pd.DataFrame) and list(frame.columns) == ["transcript", *analysis.DTYPES[what]]
        expected = pd.concat(
            [analysis.TABLES[what](Transcript.load(name)).assign(transcript=name) for name in ORDER], ignore_index=True
        )
        pd.testing.assert_frame_equal(frame, expected[frame.columns], check_dtype=False)
        assert frame["transcript"].dtype == "string"
    summary = c.summary()
    assert list(summary.columns) == ["transcript", "messages", "dialogues", "errors", "warnings"]
    t = Transcript.load("logs/b.jsonl")
    assert summary.iloc[1].tolist() == ["logs/b.jsonl", len(t.messages), len(t.dialogues()), t.errors, t.warnings]


def test_pa_status_over_many_sessions(corpus: Path) -> None:
    counts = Corpus("logs", workers=0).pastatus()
    assert len(counts) == 10 * 5  # ten codes a transcript
    total = counts.groupby("PAStatus")["count"].sum()
    one_by_one = sum(analysis.pa_status_counts(Transcript.load(f)).set_index("PAStatus")["count"] for f in ORDER[1:])
    assert total.to_dict() == one_by_one.to_dict()


def test_lazy_tables_are_dask_dataframes_with_a_partition_per_transcript(corpus: Path) -> None:
    dd = pytest.importorskip("dask.dataframe", reason="dask's dataframes need pyarrow")

    c = Corpus(*GIVEN, workers=0)
    lazy = c.messages(lazy=True)
    assert isinstance(lazy, dd.DataFrame) and lazy.npartitions == 6
    assert list(lazy.columns) == list(c.messages().columns)
    pd.testing.assert_frame_equal(lazy.compute(scheduler="sync").reset_index(drop=True), c.messages())
    with pytest.raises(ValueError, match="no table 'nonsense'"):
        c.table("nonsense")


@pytest.mark.slow
def test_a_notebook_kernel_builds_tables_on_local_workers(corpus: Path) -> None:
    # The workers are forked from a forkserver that the kernel starts; each worker imports the
    # kernel's main module (ipykernel_launcher) again, as a spawned one would. Two corpora in
    # one kernel: the second cluster is forked from the same forkserver.
    nbformat = pytest.importorskip("nbformat", reason="the notebook extra")
    nbclient = pytest.importorskip("nbclient", reason="the notebook extra")
    code = (
        "from pgm_explore.analysis import Corpus\n"
        f"given = {GIVEN!r}\n"
        "here = Corpus(*given, workers=0, progress=False).messages()\n"
        "for _ in range(2):\n"
        "    print(Corpus(*given, workers=2, progress=False).messages().equals(here), len(here))\n"
    )
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(code)])
    nbclient.NotebookClient(
        notebook, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(corpus)}}
    ).execute()
    printed = "".join(output.get("text", "") for output in notebook.cells[0].outputs)
    rows = len(Corpus(*GIVEN, workers=0).messages())
    assert printed == f"True {rows}\nTrue {rows}\n"


def test_an_unreadable_transcript_is_a_plain_error(corpus: Path) -> None:
    os.symlink(corpus / "gone.jsonl", corpus / "logs" / "ab.jsonl")
    with pytest.raises(UnreadablePath, match=r"cannot read logs/ab\.jsonl"):
        Corpus("logs", workers=0).findings()


def test_the_notebook_display_escapes_names_and_never_raises(corpus: Path) -> None:
    (corpus / "odd").mkdir()
    shutil.copyfile(TRANSCRIPTS / "full-session.jsonl", corpus / "odd" / "<i>x<i>.jsonl")
    c = Corpus("odd", "logs", workers=0)
    bundle = c._repr_mimebundle_()
    assert "&lt;i&gt;x&lt;i&gt;.jsonl" in bundle["text/html"] and "<i>x" not in bundle["text/html"]
    assert bundle["text/plain"].startswith("Corpus of 6 transcripts (")
    assert "odd/<i>x<i>.jsonl" in bundle["text/plain"]
    assert set(c._repr_mimebundle_(include={"text/plain"})) == {"text/plain"}
    c.files = None  # type: ignore[assignment]  # whatever breaks, the display shows something
    broken = c._repr_mimebundle_()
    assert broken["text/plain"] and broken["text/html"]


def test_many_files_are_listed_in_part(tmp_path: Path) -> None:
    for n in range(25):
        (tmp_path / f"s{n:02d}.jsonl").write_text("")
    text = str(Corpus(tmp_path, workers=0))
    assert text.count("\n") == 21 and text.endswith("... and 5 more")
