"""The command's own process ends without the interpreter's teardown (pgm_explore/cli/_process.py),
and nothing else changes: what a normal exit does that can be seen still happens, in its order,
and a program that calls ``main`` keeps nothing."""

from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from pgm_explore.cli._output import EXIT_INTERRUPTED, EXIT_TERMINATED

ROOT = Path(__file__).resolve().parents[1]
TRANSCRIPT = ROOT / "data" / "transcripts" / "market-wallet-limit.jsonl"


def _python(code: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", code, *args], capture_output=True, text=True, timeout=300, check=False, cwd=ROOT
    )


_ENDING = """
import atexit, sys, threading, time
from pgm_explore.cli._process import end
log = open(sys.argv[1], "a")
def late():
    time.sleep(0.3)
    log.write("thread\\n"); log.flush()
threading.Thread(target=late).start()          # not a daemon: the interpreter would wait for it
atexit.register(lambda: (log.write("hook\\n"), log.close()))
sys.stdout.write("x" * 100_000)                # buffered, no newline: flushed by end
sys.stderr.write("unfinished line")
end(3)
print("never")
"""


def test_end_waits_for_threads_runs_the_hooks_then_flushes_and_exits_with_the_status(tmp_path: Path) -> None:
    log = tmp_path / "log.txt"
    done = _python(_ENDING, str(log))
    assert done.returncode == 3, done.stderr
    assert done.stdout == "x" * 100_000
    assert done.stderr == "unfinished line"
    assert log.read_text() == "thread\nhook\n"


def test_end_after_the_reader_went_away_still_exits_with_the_status() -> None:
    # A pipe whose reader has gone: the buffered output cannot be flushed, the status still comes out.
    code = (
        "import sys, time\nfrom pgm_explore.cli._process import end\n"
        "time.sleep(0.3)\nsys.stdout.write('lost')\nend(141)"
    )
    env = {name: value for name, value in os.environ.items() if name != "PYTHONUNBUFFERED"}
    child = subprocess.Popen(
        [sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=ROOT, env=env
    )
    assert child.stdout is not None and child.stderr is not None
    child.stdout.close()
    assert child.wait(timeout=300) == 141
    assert child.stderr.read() == b""
    child.stderr.close()


_KEEPING = """
import json, sys
from pgm_explore.cli import _process, main
if sys.argv[1] == "own":
    _process.ends_itself()
status = main(sys.argv[2:])
print(json.dumps({"status": status, "kept": [type(value).__name__ for value in _process._kept]}))
"""


def test_only_the_commands_own_check_or_table_of_one_transcript_leaves_it_unfreed(tmp_path: Path) -> None:
    import json

    def kept(who: str, *argv: str) -> dict[str, object]:
        done = _python(_KEEPING, who, *argv)
        assert done.returncode == 0, done.stderr
        return json.loads(done.stdout.splitlines()[-1])

    one = ("check", "--format", "json", str(TRANSCRIPT))
    assert kept("own", *one) == {"status": 0, "kept": ["TranscriptChecker"]}
    assert kept("own", "check", str(TRANSCRIPT)) == {"status": 0, "kept": ["TranscriptChecker"]}
    # table holds its table, a row a message for some: left unfreed too.
    assert kept("own", "table", "messages", str(TRANSCRIPT)) == {"status": 0, "kept": ["DataFrame"]}
    assert kept("called", "table", "messages", str(TRANSCRIPT)) == {"status": 0, "kept": []}
    # main called by a program (a notebook, a test) keeps nothing: its process goes on.
    assert kept("called", *one) == {"status": 0, "kept": []}
    # Nor does a corpus, whose transcripts are checked one after the other in the same process.
    corpus = tmp_path / "logs"
    corpus.mkdir()
    for name in ("a.jsonl", "b.jsonl"):  # (a warning each: the text format writes a block for it)
        (corpus / name).write_bytes((ROOT / "data/transcripts/defective/turn-gap.jsonl").read_bytes())
    for form in ("text", "json"):
        assert kept("own", "check", "--corpus", "--format", form, "--workers", "0", str(corpus)) == {
            "status": 0,
            "kept": [],
        }


_ENTRY = """
import atexit, runpy, sys
from pgm_explore.cli import _process
# (atexit hooks run on either way out: this says whether the command ended its process itself)
atexit.register(lambda: print("ends itself:", _process._ending))
sys.argv = ["pgm-explore", *sys.argv[2:]]
runpy.run_module(MODULE, run_name="__main__", alter_sys=True)
"""


def test_the_scripts_first_step_ends_an_interrupt_with_the_commands_statuses() -> None:
    # (pgm_explore/__main__.py holds Ctrl-C before it can import pgm_explore.cli._output)
    from pgm_explore import __main__ as first_step

    assert (first_step.EXIT_INTERRUPTED, first_step.EXIT_TERMINATED) == (EXIT_INTERRUPTED, EXIT_TERMINATED)


_MADE_INTERRUPTED = """
import sys, pgm_explore.cli
class Part:
    def __set_name__(self, owner, name):
        raise {exception}
def command():
    # (Ctrl-C as a class is made, as when a module of dataclasses is imported: Python 3.11 raises
    # a RuntimeError from it)
    class Made:
        part = Part()
pgm_explore.cli.command = command
from pgm_explore.__main__ import command as first_step
first_step()
"""


def test_an_interrupt_as_a_class_is_made_ends_the_command_quietly() -> None:
    done = _python(_MADE_INTERRUPTED.format(exception="KeyboardInterrupt"))
    assert (done.returncode, done.stderr) == (EXIT_INTERRUPTED, "")
    # (any other error as before: Python's traceback)
    done = _python(_MADE_INTERRUPTED.format(exception="ValueError('a bug')"))
    assert done.returncode == 1
    assert done.stderr.startswith("Traceback") and "ValueError: a bug" in done.stderr


def test_the_script_and_python_m_end_through_command() -> None:
    import tomllib

    scripts = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["scripts"]
    assert scripts["pgm-explore"] == "pgm_explore.__main__:command"
    transcript = str(ROOT / "data/transcripts/defective/turn-gap.jsonl")
    for module in ("pgm_explore", "pgm_explore.cli"):
        done = _python(_ENTRY.replace("MODULE", repr(module)), module, "check", "--format", "json", transcript)
        # The findings in full and the status of a transcript with a warning, as main returns it.
        assert done.returncode == 0, done.stderr
        assert [line for line in done.stdout.splitlines() if '"rule":"turn-gap"' in line]
        assert done.stdout.endswith("\n")
        assert done.stdout.splitlines()[-1] == "ends itself: True"


ORPHAN = {"Header": "PGM-KPA-V1.0", "Mode": "RS", "RequestID": "q-9", "DialogID": "d"}
"""A Response to no Request, without most of what a Response has: findings as soon as it is read."""


@pytest.mark.parametrize(
    ("number", "status"),
    [(signal.SIGINT, EXIT_INTERRUPTED), (signal.SIGTERM, EXIT_TERMINATED)],
    ids=["ctrl-c", "sigterm"],
)
def test_a_signal_ends_the_command_with_its_status_and_nothing_on_stderr(number: int, status: int) -> None:
    # `tail -f log | pgm-explore check -`, stopped by Ctrl-C or `kill`: the command is at work
    # (its first finding is out) when the signal comes.
    with subprocess.Popen(
        [sys.executable, "-m", "pgm_explore", "check", "--format", "json", "-"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        # (Python's own handling of SIGINT, whatever this process's is: a background job ignores it)
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    ) as process:
        assert process.stdin and process.stdout and process.stderr
        process.stdin.write((json.dumps(ORPHAN) + "\n" + json.dumps(ORPHAN | {"RequestID": "q-8"}) + "\n").encode())
        process.stdin.flush()
        ready, _, _ = select.select([process.stdout], [], [], 60)
        assert ready, "no finding"
        assert json.loads(process.stdout.readline())["source"] == "-:1"
        process.send_signal(number)
        assert process.wait(timeout=60) == status
        assert process.stderr.read() == b""


def test_sigterm_is_left_as_it_is_in_a_program_that_calls_main() -> None:
    # (Only the command's own process makes SIGTERM stop it as Ctrl-C does; a program's is its own.)
    done = _python(
        "import signal\nfrom pgm_explore.cli import main\nmain(['--version'])\n"
        "print(signal.getsignal(signal.SIGTERM) == signal.SIG_DFL)"
    )
    assert done.stdout.splitlines()[-1] == "True", done.stderr


_NUMERICS = """
import json, os, sys
from pgm_explore.cli import main
argv = ["table", "messages", sys.argv[2]]
if sys.argv[1] == "own":
    sys.argv = ["pgm-explore", *argv]
    argv = None
sys.stdout, out = open(os.devnull, "w"), sys.stdout
status = main(argv)
out.write(json.dumps({
    "status": status,
    "environ": {name: os.environ.get(name) for name in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS")},
    "threads": len(os.listdir("/proc/self/task")),
}))
"""


@pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="threads counted in /proc")
def test_a_command_that_may_start_workers_keeps_numpy_to_one_thread_in_its_own_process_only() -> None:
    # table imports pandas, and so numpy, whose OpenBLAS starts a thread for each other core as it
    # loads, to spin for some 0.16 s of CPU before it sleeps: the command calls no numerical library.
    # (Without the variables of whoever runs the tests: Dask's nannies leave them in this process.)
    env = {name: value for name, value in os.environ.items() if not name.endswith("_NUM_THREADS")}

    def run(who: str) -> dict[str, object]:
        done = subprocess.run(
            [sys.executable, "-c", _NUMERICS, who, str(TRANSCRIPT)],
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
            cwd=ROOT,
            env=env,
        )
        assert done.returncode == 0, done.stderr
        return json.loads(done.stdout)

    own, called = run("own"), run("called")
    assert own["status"] == called["status"] == 0
    assert own["environ"] == {"OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1"}
    # main called by a program (a notebook) leaves its process's numpy as it would be.
    assert called["environ"] == {"OMP_NUM_THREADS": None, "MKL_NUM_THREADS": None, "OPENBLAS_NUM_THREADS": None}
    if (os.cpu_count() or 1) > 1:
        assert own["threads"] < called["threads"]
