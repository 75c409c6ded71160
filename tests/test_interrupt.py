"""Ctrl-C at a terminal, or `kill` and `timeout`: a command working on local workers stops at once,
says nothing, and leaves no process behind (pgm_explore._engine, pgm_explore.cli._process).

A terminal's Ctrl-C signals every process of the command's process group: the command, the
forkserver its workers are forked from, and the workers; `kill` and `timeout` send SIGTERM to the
command alone. Each test starts the command as a shell does (a process group of its own, SIGINT
handled as Python does by default), waits for a moment of its work, and sends the signal so.
"""

from __future__ import annotations

import importlib.util
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import psutil
import pytest

from pgm_explore.cli._output import EXIT_INTERRUPTED, EXIT_TERMINATED

ROOT = Path(__file__).resolve().parents[1]
MESSAGES = 300_000
"""Enough for two workers to be at work for seconds on any machine this runs on."""

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not hasattr(os, "killpg"), reason="no process groups on this system"),
]

Moment = Callable[[psutil.Process], bool]


@pytest.fixture(scope="module")
def transcript(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A clean transcript of the benchmarks' short mix (its generator, as tests/test_cli_check.py uses it)."""
    spec = importlib.util.spec_from_file_location("bench_check", ROOT / "benchmarks" / "bench_check.py")
    assert spec and spec.loader
    bench = importlib.util.module_from_spec(spec)
    sys.modules["bench_check"] = bench  # (dataclasses look their module up)
    dont_write = sys.dont_write_bytecode
    sys.dont_write_bytecode = True  # (no __pycache__ inside benchmarks/)
    try:
        spec.loader.exec_module(bench)
        path = tmp_path_factory.mktemp("interrupt") / "short.jsonl"
        bench.generate(path, MESSAGES, "short")
    finally:
        sys.dont_write_bytecode = dont_write
        del sys.modules["bench_check"]
    return path


def _helpers(command: psutil.Process) -> list[tuple[psutil.Process, int]]:
    """The command's children (the forkserver) and theirs (the workers) still running, each with its
    parent's pid (a process may end between two looks: it is left out)."""
    try:
        found = command.children(recursive=True)
    except psutil.NoSuchProcess:
        return []
    helpers = []
    for process in found:
        try:
            if process.status() != psutil.STATUS_ZOMBIE:
                helpers.append((process, process.ppid()))
        except psutil.NoSuchProcess:
            continue
    return helpers


def _workers(command: psutil.Process) -> list[psutil.Process]:
    """The helpers that the command did not start itself: the workers, forked from the forkserver."""
    return [process for process, parent in _helpers(command) if parent != command.pid]


def _running(process: psutil.Process) -> bool:
    try:
        return process.status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def _user_cpu(process: psutil.Process) -> float:
    try:
        return float(process.cpu_times().user)
    except psutil.NoSuchProcess:
        return 0.0


def forkserver_importing(command: psutil.Process) -> bool:
    """The forkserver imports what the workers run: it has spent a tenth of a second and more of
    CPU (before, the interpreter is still starting, and Python's handling of SIGINT is not set
    up), and forked no worker yet."""
    return not _workers(command) and any(_importing(process) for process, _ in _helpers(command))


def _importing(process: psutil.Process) -> bool:
    try:
        return "multiprocessing.forkserver" in " ".join(process.cmdline()) and _user_cpu(process) >= 0.15
    except psutil.NoSuchProcess:
        return False


def workers_starting(command: psutil.Process) -> bool:
    """A worker has been forked: the cluster is starting."""
    return bool(_workers(command))


def workers_at_work(command: psutil.Process) -> bool:
    """A worker has spent half a second of CPU: partitions are being read."""
    return any(_user_cpu(worker) >= 0.5 for worker in _workers(command))


def _interrupted(
    argv: list[str],
    moment: Moment,
    number: int = signal.SIGINT,
    *,
    group: bool = True,
    program: tuple[str, ...] = (sys.executable, "-m", "pgm_explore"),
) -> tuple[int, bytes, float, list[str]]:
    """Run ``pgm-explore ARGV`` (by ``program``) in a process group of its own and send it the signal
    ``number`` at ``moment``, to the whole group (a terminal's Ctrl-C) or to the command alone
    (`kill`); return its exit status, its standard error, the seconds it took to end after the
    signal, and the processes of its group still running once they have had the time to end."""
    with subprocess.Popen(
        [*program, *argv],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        start_new_session=True,
        # (as a shell starts a command: Python's own handling of SIGINT, whatever this process's is)
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    ) as process:
        command = psutil.Process(process.pid)
        try:
            deadline = time.monotonic() + 120
            while not moment(command):
                assert process.poll() is None, "the command ended before the moment came"
                assert time.monotonic() < deadline, "the moment never came"
                time.sleep(0.001)
            if group:
                os.killpg(process.pid, number)
            else:
                process.send_signal(number)
            signalled = time.monotonic()
            _, err = process.communicate(timeout=60)
            took = time.monotonic() - signalled
            # (The forkserver ends when it sees the command gone: at once, or a loaded machine's while.)
            left = _left_in_group(process.pid)
            return process.returncode, err, took, [" ".join(p.cmdline()) for p in left]
        finally:
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGKILL)


def _left_in_group(group: int, patience: float = 30.0) -> list[psutil.Process]:
    """The processes of the process group ``group`` still running after up to ``patience`` seconds."""
    deadline = time.monotonic() + patience
    while True:
        left = [p for p in psutil.process_iter() if _in_group(p, group) and _running(p)]
        if not left or time.monotonic() > deadline:
            return left
        time.sleep(0.05)


def _in_group(process: psutil.Process, group: int) -> bool:
    try:
        return os.getpgid(process.pid) == group
    except (ProcessLookupError, PermissionError):
        return False


@pytest.mark.parametrize(
    ("command", "moment"),
    [
        ("check", forkserver_importing),
        ("validate", workers_starting),
        ("check", workers_starting),
        ("validate", workers_at_work),
        ("check", workers_at_work),
    ],
    ids=lambda value: value if isinstance(value, str) else value.__name__,
)
def test_ctrl_c_stops_the_command_quietly_and_leaves_no_process(command: str, moment: Moment, transcript: Path) -> None:
    status, err, took, left = _interrupted([command, "--workers", "2", "--format", "json", str(transcript)], moment)
    assert err.decode(errors="replace") == ""  # (no traceback of the command, the forkserver or a worker)
    assert status == EXIT_INTERRUPTED
    assert took < 30, f"{took:.1f} s to stop"  # (about 0.3 s; while the workers start, until they have)
    assert left == []


@pytest.mark.parametrize("moment", [workers_starting, workers_at_work], ids=lambda moment: moment.__name__)
def test_sigterm_stops_the_command_as_ctrl_c_does(moment: Moment, transcript: Path) -> None:
    # (`timeout 60 pgm-explore check ...`: the command alone is signalled. By default the process
    # ended at once, and multiprocessing's resource tracker warned of the semaphores left behind.)
    argv = ["check", "--workers", "2", "--format", "json", str(transcript)]
    status, err, took, left = _interrupted(argv, moment, signal.SIGTERM, group=False)
    assert err.decode(errors="replace") == ""
    assert status == EXIT_TERMINATED
    assert took < 30, f"{took:.1f} s to stop"
    assert left == []


def test_interrupting_a_kernel_stops_its_workers_quietly(transcript: Path, tmp_path: Path) -> None:
    """Jupyter's Interrupt (jupyter_client signals the kernel's process group, as a terminal does):
    `check_paths` on local workers stops with KeyboardInterrupt, its workers end, nothing is printed
    to the kernel's stderr (the server's terminal), and the kernel goes on."""
    manager = pytest.importorskip("jupyter_client.manager")
    logged = tmp_path / "kernel.err"
    km = manager.KernelManager(kernel_name="python3")
    with logged.open("wb") as log:
        km.start_kernel(stdout=log, stderr=log)
    kc = km.client()
    kc.start_channels()
    try:
        kc.wait_for_ready(timeout=120)
        code = f"""
from pgm_explore.dialogue import check_paths
for finding in check_paths([{str(transcript)!r}], workers=2):
    pass
"""
        asked = kc.execute(code)
        kernel = psutil.Process(km.provisioner.process.pid)
        deadline = time.monotonic() + 120
        while not workers_at_work(kernel):
            assert time.monotonic() < deadline, "the workers never got to work"
            time.sleep(0.005)
        workers = _workers(kernel)
        km.interrupt_kernel()
        interrupted = time.monotonic()
        while (reply := kc.get_shell_msg(timeout=60))["parent_header"].get("msg_id") != asked:
            pass
        took = time.monotonic() - interrupted
        assert (reply["content"]["status"], reply["content"].get("ename")) == ("error", "KeyboardInterrupt")
        assert took < 30, f"{took:.1f} s to stop"
        deadline = time.monotonic() + 30  # (at once, or a loaded machine's while)
        while any(_running(p) for p in workers) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not any(_running(p) for p in workers)
        for _ in range(20):  # (the kernel aborts what was asked right after an error: ask again)
            again = kc.execute_interactive("print(1 + 1)", timeout=60)
            if again["content"]["status"] != "aborted":
                break
            time.sleep(0.5)
        assert again["content"]["status"] == "ok"
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)
    shown = logged.read_text(errors="replace")
    assert "Traceback" not in shown and "KeyboardInterrupt" not in shown, shown


def importing(delay: float) -> Moment:
    """``delay`` seconds after msgspec's compiled module is loaded: the command is importing its own
    modules (for about a fifth of a second), then builds its parser and starts reading. (Before
    that module is loaded the interpreter is starting, or pip's script: Python's own moments.)"""
    loaded: list[float] = []

    def moment(command: psutil.Process) -> bool:
        if not loaded:
            try:
                maps = Path(f"/proc/{command.pid}/maps").read_text(encoding="utf-8", errors="replace")
            except OSError:
                return False
            if "msgspec/_core" not in maps:
                return False
            loaded.append(time.monotonic())
        return time.monotonic() - loaded[0] >= delay

    moment.__name__ = f"importing+{delay:.2f}s"
    return moment


SCRIPT = Path(sys.executable).with_name("pgm-explore")
"""The ``pgm-explore`` script pip wrote beside this interpreter."""


@pytest.mark.skipif(not Path("/proc/self/maps").exists(), reason="no /proc to see what a process has loaded")
@pytest.mark.parametrize("program", [(str(SCRIPT),), (sys.executable, "-m", "pgm_explore")], ids=["script", "python-m"])
def test_ctrl_c_as_the_command_starts_stops_it_quietly(program: tuple[str, ...], transcript: Path) -> None:
    # Ctrl-C as soon as a wrong file name is seen in the command line: while the command imports
    # its modules it printed the traceback of whatever import it stopped; while msgspec imported
    # datetime, the interrupt was lost and the command crashed later (SIGSEGV, pgm_explore/__init__.py).
    argv = ["validate", "--workers", "0", "--format", "json", str(transcript)]
    for step in range(16):
        status, err, _, _ = _interrupted(argv, importing(step * 0.02), program=program)
        assert (status, err.decode(errors="replace")) == (EXIT_INTERRUPTED, ""), f"Ctrl-C {step * 0.02:.2f} s in"


@pytest.mark.parametrize(
    "module", ["pgm_explore.cli", "pgm_explore.io", "pgm_explore.validation", "pgm_explore.dialogue"]
)
def test_msgspec_finds_datetime_imported(module: str) -> None:
    """msgspec's init imports datetime's C API without looking at the result: imported before,
    that import runs no Python code that Ctrl-C could stop (pgm_explore/__init__.py)."""
    code = f"""
import sys
class Spy:
    def find_spec(self, name, path=None, target=None):
        if name == "msgspec._core":
            print("datetime" in sys.modules)
sys.meta_path.insert(0, Spy())
import {module}
"""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT)
    assert done.stdout == "True\n"
