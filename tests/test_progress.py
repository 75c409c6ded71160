"""Progress bars on long work (issue 20), tried for real: the commands run as separate processes
with standard error on a pseudo-terminal, as a person at a terminal runs them. The work is made
to last longer than the bar's delay by a named pipe that this test fills only after a while
(reading it waits, as a slow disk or a live log would). The bar shows on the terminal's stderr;
standard output holds the same bytes as without a terminal; with stderr not a terminal, or with
--no-progress, nothing is drawn."""

from __future__ import annotations

import fcntl
import os
import pty
import re
import shutil
import struct
import subprocess
import sys
import termios
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import ROOT

from pgm_explore._progress import DELAY

# Each test waits out the bar's delay on purpose (the named pipe below), in a process of its own.
pytestmark = pytest.mark.slow

TRANSCRIPTS = ROOT / "data" / "transcripts"
SLOW = DELAY + 1.0  # seconds the named pipe keeps its reader waiting


def _fill_later(fifo: Path, data: bytes) -> threading.Thread:
    """Fill ``fifo`` SLOW seconds after the command opened it (its start-up, imports included,
    does not count: the bar's delay runs from when the work starts)."""

    def fill() -> None:
        deadline = time.monotonic() + 120
        while True:
            try:  # (without a reader, a non-blocking open for writing fails with ENXIO)
                fd = os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)
                break
            except OSError:
                if time.monotonic() > deadline:
                    return
                time.sleep(0.05)
        time.sleep(SLOW)
        os.set_blocking(fd, True)
        with os.fdopen(fd, "wb") as pipe:
            pipe.write(data)

    thread = threading.Thread(target=fill, daemon=True)
    thread.start()
    return thread


@pytest.fixture
def logs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A corpus whose first transcript is a named pipe, filled after SLOW seconds."""
    folder = tmp_path / "logs"
    folder.mkdir()
    os.mkfifo(folder / "a-slow.jsonl")
    for name, source in (("b.jsonl", "defective/turn-gap.jsonl"), ("c.jsonl", "long-deliberation.jsonl")):
        shutil.copyfile(TRANSCRIPTS / source, folder / name)
    monkeypatch.chdir(tmp_path)
    yield folder


def run(
    argv: list[str], *, terminal: bool, fifo: Path | None, data: bytes = b"", size: tuple[int, int] = (24, 100)
) -> tuple[int, bytes, bytes]:
    """``pgm-explore ARGV`` in its own process, its stderr a terminal of ``size`` (lines,
    columns) or not: (status, stdout, what stderr showed)."""
    env = {**os.environ, "TERM": "xterm", "COLUMNS": "100"}
    env.pop("NO_COLOR", None)
    filler = _fill_later(fifo, data) if fifo is not None else None
    command = [sys.executable, "-m", "pgm_explore", *argv]
    if not terminal:
        done = subprocess.run(command, capture_output=True, timeout=300, env=env, check=False)
        if filler is not None:
            filler.join(30)
        return done.returncode, done.stdout, done.stderr
    controller, terminal_end = pty.openpty()
    fcntl.ioctl(terminal_end, termios.TIOCSWINSZ, struct.pack("HHHH", *size, 0, 0))
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=terminal_end, env=env)
    os.close(terminal_end)
    shown = bytearray()
    reader = threading.Thread(target=_drain, args=(controller, shown), daemon=True)
    reader.start()
    out, _ = proc.communicate(timeout=300)
    reader.join(30)
    os.close(controller)
    if filler is not None:
        filler.join(30)
    return proc.returncode, out, bytes(shown)


def _drain(fd: int, into: bytearray) -> None:
    while True:
        try:
            chunk = os.read(fd, 4096)
        except OSError:  # EIO: the command closed the terminal's last end
            return
        if not chunk:
            return
        into += chunk


# "  50%|█████     | 1/2 [00:03<00:03, ...]": tqdm's bar with what is done, elapsed and left.
BAR = re.compile(rb"\d+%\|.*\| *[\d.]+[kMG]?B?/[\d.]+[kMG]?B? \[\d\d:\d\d<")


def test_check_corpus_shows_a_bar_on_a_terminal_and_stdout_is_unchanged(logs: Path) -> None:
    data = (TRANSCRIPTS / "defective" / "unanswered-request.jsonl").read_bytes()
    argv = ["check", "--corpus", "--format", "json", "logs"]
    status, out, shown = run(argv, terminal=True, fifo=logs / "a-slow.jsonl", data=data)
    assert BAR.search(shown), shown
    assert b" files" in shown and b"check:" in shown
    plain_status, plain_out, plain_err = run(argv, terminal=False, fifo=logs / "a-slow.jsonl", data=data)
    assert (status, out) == (
        plain_status,
        plain_out,
    ) and plain_err == b""  # never on stdout, nothing without a terminal
    assert out.count(b"\n") >= 2


def test_no_progress_hides_it(logs: Path) -> None:
    data = (TRANSCRIPTS / "full-session.jsonl").read_bytes()
    status, out, shown = run(
        ["check", "--corpus", "--no-progress", "--no-color", "logs"],
        terminal=True,
        fifo=logs / "a-slow.jsonl",
        data=data,
    )
    assert shown == b"" and status == 0 and out.endswith(b"warning\n")


def test_check_of_one_transcript_counts_bytes(logs: Path) -> None:
    data = (TRANSCRIPTS / "full-session.jsonl").read_bytes()
    # The named pipe first, then a regular file whose bytes the bar counts.
    argv = ["check", "--format", "json", "logs/a-slow.jsonl", "logs/c.jsonl"]
    status, out, shown = run(argv, terminal=True, fifo=logs / "a-slow.jsonl", data=data)
    assert re.search(rb"check: .*[\d.]+[kM]?B [\[|]", shown) or re.search(rb"[\d.]+[kM]?B/s", shown), shown
    plain = run(argv, terminal=False, fifo=logs / "a-slow.jsonl", data=data)
    assert plain == (status, out, b"")


def test_validate_shows_a_bar_too(logs: Path) -> None:
    data = (TRANSCRIPTS / "full-session.jsonl").read_bytes()
    argv = ["validate", "--format", "json", "logs/a-slow.jsonl", "logs/c.jsonl"]
    status, out, shown = run(argv, terminal=True, fifo=logs / "a-slow.jsonl", data=data)
    assert b"validate:" in shown and re.search(rb"[\d.]+[kM]?B/s", shown), shown
    assert run(argv, terminal=False, fifo=logs / "a-slow.jsonl", data=data) == (status, out, b"")


def test_a_terminal_nobody_sized_shows_the_bar_too(logs: Path) -> None:
    # (0 lines and 0 columns, as `script` or `docker exec -t` give before a size is set: tqdm drew
    # nothing there, its bar below a screen of no lines)
    data = (TRANSCRIPTS / "full-session.jsonl").read_bytes()
    argv = ["validate", "--format", "json", "logs/a-slow.jsonl", "logs/c.jsonl"]
    status, out, shown = run(argv, terminal=True, fifo=logs / "a-slow.jsonl", data=data, size=(0, 0))
    assert b"validate:" in shown and re.search(rb"[\d.]+[kM]?B/s", shown), shown
    assert run(argv, terminal=False, fifo=logs / "a-slow.jsonl", data=data) == (status, out, b"")


def test_table_corpus_shows_a_bar_too(logs: Path) -> None:
    data = (TRANSCRIPTS / "full-session.jsonl").read_bytes()
    argv = ["table", "pastatus", "--corpus", "logs"]
    status, out, shown = run(argv, terminal=True, fifo=logs / "a-slow.jsonl", data=data)
    assert BAR.search(shown) and b"transcripts" in shown, shown
    assert run(argv, terminal=False, fifo=logs / "a-slow.jsonl", data=data) == (status, out, b"")
    assert out.startswith(b"transcript,PAStatus,count\n")


def test_a_corpus_shows_a_bar_in_a_notebook(logs: Path) -> None:
    """In a Jupyter kernel, the Corpus's bar is a widget under the cell (tqdm.notebook), not text on stderr."""
    import nbformat
    from nbclient import NotebookClient

    notebook = nbformat.v4.new_notebook()
    notebook.cells = [
        nbformat.v4.new_code_cell(
            f"from pgm_explore.analysis import Corpus\nCorpus({str(logs)!r}).summary()[['messages', 'errors']].sum().tolist()"
        )
    ]
    data = (TRANSCRIPTS / "full-session.jsonl").read_bytes()
    filler = _fill_later(logs / "a-slow.jsonl", data)
    NotebookClient(notebook, timeout=180, kernel_name="python3").execute()
    filler.join(30)
    outputs = notebook.cells[0].outputs
    assert any("application/vnd.jupyter.widget-view+json" in o.get("data", {}) for o in outputs), outputs
    assert not [o for o in outputs if o.get("name") == "stderr"], outputs  # the bar is the widget, not text
    assert outputs[-1]["data"]["text/plain"] == "[132, 0]"  # 22 + 5 + 105 messages, the corpus read whole
