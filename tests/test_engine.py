"""The bulk engine: results in the partitions' order wherever the work ran (pgm_explore._engine)."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
import time

import pytest

from pgm_explore._engine import Engine, EngineUnavailable, WorkersLost, cores, engine


def slow_square(n: int) -> tuple[int, int]:
    """Later partitions finish first, so order cannot come from finishing times."""
    time.sleep(0.02 * (5 - n % 5))
    return n, os.getpid()


def freeze_count(n: int) -> tuple[int, int]:
    import gc

    return n, gc.get_freeze_count()


def fails_at_three(n: int) -> int:
    if n == 3:
        raise ValueError("partition 3 is bad")
    return n


def dies_at_one(n: int) -> int:
    """The worker dies under partition 1, as one the system kills for its memory does."""
    if n == 1:
        os._exit(9)
    return n


def slowly(n: int) -> int:
    time.sleep(0.5)
    return n


def test_this_process_keeps_order_and_is_lazy() -> None:
    seen: list[int] = []

    def work(n: int) -> int:
        seen.append(n)
        return n * n

    with engine(0) as e:
        assert type(e) is Engine and e.workers == 1
        results = e.map(work, range(5))
        assert seen == []  # nothing is done before it is asked for (live logs)
        assert next(results) == 0 and seen == [0]
        assert list(results) == [1, 4, 9, 16]


def test_cores_is_positive() -> None:
    assert cores() >= 1


@pytest.mark.slow
def test_local_workers_keep_order_and_share_the_work() -> None:
    with engine(2) as e:
        assert e.workers == 2
        results = list(e.map(slow_square, range(20)))
    assert [n for n, _ in results] == list(range(20))
    assert len({pid for _, pid in results}) == 2
    assert os.getpid() not in {pid for _, pid in results}


@pytest.mark.slow
def test_a_partition_is_worked_on_with_the_workers_older_objects_frozen() -> None:
    import gc

    with engine(1) as e:
        counts = list(e.map(freeze_count, range(3)))
        assert [n for n, _ in counts] == [0, 1, 2]
        assert all(count > 0 for _, count in counts)
        # ... and given back after each: between tasks, nothing of the worker is frozen.
        assert list(e.client.run(gc.get_freeze_count).values()) == [0]
    assert gc.get_freeze_count() == 0  # (this process's objects are not the workers' to freeze)


def test_work_within_frozen_work_leaves_the_freeze_alone_without_counting_the_frozen_objects(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import gc

    from pgm_explore._engine import older_objects_frozen

    asked: list[int] = []
    with older_objects_frozen():
        frozen = gc.get_freeze_count()
        # (counting them walks every frozen object: a corpus's transcripts, each within its batch, must not)
        monkeypatch.setattr(gc, "get_freeze_count", lambda: asked.append(1) or frozen)
        with older_objects_frozen():
            pass
        monkeypatch.undo()
        # The inner one gave nothing back and froze nothing more. (Fewer is no failure: a frozen
        # object still dies when its last reference goes, as those of an earlier test's cluster do
        # in its threads; under load one run here saw 36 of 96,510 go.)
        assert 0 < gc.get_freeze_count() <= frozen
    assert asked == []
    assert gc.get_freeze_count() == 0


def niceness(n: int) -> tuple[int, int]:
    return n, os.nice(0)


@pytest.mark.slow
@pytest.mark.skipif(not hasattr(os, "nice"), reason="no niceness on this system")
def test_local_workers_give_way_to_this_process() -> None:
    # The work runs on a thread of the worker's own: it has the worker's lower priority (a
    # check's transcript rules, in this process, keep up with what the workers send).
    from pgm_explore._engine import WORKER_NICENESS

    mine = os.nice(0)
    with engine(2) as e:
        seen = list(e.map(niceness, range(4)))
        assert set(e.client.run(os.nice, 0).values()) == {min(mine + WORKER_NICENESS, 19)}
    assert [n for n, _ in seen] == list(range(4))
    assert {nice for _, nice in seen} == {min(mine + WORKER_NICENESS, 19)}
    assert os.nice(0) == mine  # (this process keeps its own)


def test_local_workers_log_nothing_short_of_a_crash() -> None:
    import logging

    def level() -> int:
        return logging.getLogger("distributed.worker").getEffectiveLevel()

    with engine(1) as e:
        # (a heartbeat that meets the scheduler closing must not print a traceback on the command's stderr)
        assert list(e.client.run(level).values()) == [logging.CRITICAL]
    assert level() != logging.CRITICAL  # (this process's logging is the person's)


@pytest.mark.slow
def test_an_exception_comes_at_its_partition() -> None:
    got: list[int] = []
    with engine(2) as e, pytest.raises(ValueError, match="partition 3 is bad"):
        for n in e.map(fails_at_three, range(8)):
            got.append(n)
    assert got == [0, 1, 2]


@pytest.mark.slow
def test_work_still_pending_when_the_engine_closed_is_let_go_quietly() -> None:
    # What Ctrl-C does to a command that was writing a result out, outside the generator: the
    # `with` closes the engine, and the generator, still at a yield with partitions pending, is
    # finished later, when it is collected (it asked the closed client to cancel them, and raised).
    e = engine(1)
    results = e.map(slow_square, range(10))
    assert next(results)[0] == 0
    e.close()
    results.close()
    e.close()  # (again: nothing)


@pytest.mark.slow
def test_workers_that_die_under_the_work_are_a_plain_error_after_what_came_before() -> None:
    got: list[int] = []
    with engine(2) as e, pytest.raises(WorkersLost) as raised:
        for n in e.map(dies_at_one, range(4)):
            got.append(n)
    assert got == [0]
    assert str(raised.value) == (
        "the work stopped on 2 local worker processes: the workers given a part of it died while working "
        "on it, one after the other (out of memory? killed?)"
    )


WORKER_STATE = """
import json, os, sys
from pgm_explore._engine import engine


def state(dask_worker):
    modules = sorted(m for m in ("pandas", "prometheus_client") if m in sys.modules)
    return os.getppid(), modules, "profile-cycle" in dask_worker.periodic_callbacks


if __name__ == "__main__":
    seen = []
    for _ in range(2):
        with engine(2, preload=["pgm_explore.analysis._corpus"]) as e:
            seen.append(sorted(e.client.run(state).values()))
    print(json.dumps({"me": os.getpid(), "here": "pandas" in sys.modules, "seen": seen}))
"""


@pytest.mark.slow
def test_local_workers_start_with_the_works_modules_imported(tmp_path) -> None:
    # A new interpreter, as a command is: a process's forkserver keeps the modules it was
    # started with. Nothing is submitted, so what the workers hold, they started with.
    script = tmp_path / "workers.py"
    script.write_text(WORKER_STATE, encoding="utf-8")
    run = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    got = json.loads(run.stdout)
    first, second = got["seen"]
    # Both clusters' workers are forked from one process, which is not this one: the second
    # cluster reuses what the first one imported.
    parents = {parent for parent, _, _ in first + second}
    assert len(first) == len(second) == 2 and len(parents) == 1 and got["me"] not in parents
    # The work's module (and pandas, which it imports) came with the fork; prometheus_client,
    # for metrics nobody reads, was never imported, and no profiler samples the work.
    assert all(modules == ["pandas"] and not profiling for _, modules, profiling in first + second)
    # This process did not import pandas for the workers' sake: distributed's own preload does,
    # unless the private flag _engine sets (distributed.utils._forkserver_preload_set, which has no
    # public equivalent) still means what it meant. (numpy tells nothing: distributed.protocol
    # imports it wherever it is installed.)
    assert got["here"] is False


FORKSERVER = """
import contextlib, json, os, sys, time
import psutil
from pgm_explore._engine import _start_forkserver

_start_forkserver([])


def forkserver():
    for child in psutil.Process().children():
        with contextlib.suppress(psutil.Error):
            if "forkserver" in " ".join(child.cmdline()):
                return child
    return None


# (A child just started may not show its command line yet, on a loaded machine.)
deadline = time.monotonic() + 120
while (server := forkserver()) is None and time.monotonic() < deadline:
    time.sleep(0.02)
assert server is not None, "no forkserver"
# Once the forkserver has loaded numpy (with distributed), and before a worker is forked from it
# (OpenBLAS ends its threads before a fork):
deadline = time.monotonic() + 120
while not any("openblas" in m.path.lower() for m in server.memory_maps()) and time.monotonic() < deadline:
    time.sleep(0.02)
time.sleep(0.3)
names = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS")
print(json.dumps({
    "server": {name: server.environ().get(name) for name in names},
    "here": {name: os.environ.get(name) for name in names},
    "threads": server.num_threads(),
}))
"""


@pytest.mark.skipif(sys.platform != "linux", reason="a forkserver whose memory maps psutil reads")
def test_the_forkserver_starts_as_dask_starts_a_worker_one_thread_for_numerics() -> None:
    # What Dask sets before it spawns a worker (distributed.nanny.pre-spawn-environ), unless the
    # environment says otherwise; numpy's OpenBLAS then starts no thread to spin in the forkserver.
    env = {name: value for name, value in os.environ.items() if not name.endswith("_NUM_THREADS")}
    env["OMP_NUM_THREADS"] = "3"
    run = subprocess.run([sys.executable, "-c", FORKSERVER], capture_output=True, text=True, timeout=300, env=env)
    assert run.returncode == 0, run.stderr
    got = json.loads(run.stdout)
    assert got["server"] == {"OMP_NUM_THREADS": "3", "MKL_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1"}
    # This process's own environment is as it was: a notebook's numpy keeps its threads.
    assert got["here"] == {"OMP_NUM_THREADS": "3", "MKL_NUM_THREADS": None, "OPENBLAS_NUM_THREADS": None}
    assert got["threads"] == 1


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.mark.slow
def test_an_existing_cluster_started_from_the_command_line(tmp_path) -> None:
    port = _free_port()
    address = f"tcp://127.0.0.1:{port}"
    bin_dir = os.path.dirname(sys.executable)
    # The workers import the work by name, as pickle does: this test module must be on their path.
    here = os.path.dirname(os.path.abspath(__file__))
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [here, os.environ.get("PYTHONPATH")]))}
    procs = [
        subprocess.Popen(
            [os.path.join(bin_dir, "dask"), "scheduler", "--host", "127.0.0.1", "--port", str(port), "--no-dashboard"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            env=env,
            cwd=tmp_path,
        )
    ]
    try:
        procs.append(
            subprocess.Popen(
                [
                    os.path.join(bin_dir, "dask"),
                    "worker",
                    address,
                    "--nworkers",
                    "1",
                    "--nthreads",
                    "1",
                    "--no-dashboard",
                ],
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                env=env,
                cwd=tmp_path,
            )
        )
        from distributed import Client

        # A scheduler must be running when the work starts (one not there yet is an error at
        # once): a script that starts one waits for it, as this does.
        with Client(address, timeout=60) as client:
            client.wait_for_workers(1, timeout=120)
        with engine(scheduler=address) as e:
            assert e.where == f"the Dask cluster at {address}"
            results = list(e.map(slow_square, range(10)))
        assert [n for n, _ in results] == list(range(10))
        assert os.getpid() not in {pid for _, pid in results}
    finally:
        for proc in reversed(procs):
            proc.terminate()
            proc.wait(30)


def test_an_unreachable_scheduler_is_a_plain_error() -> None:
    port = _free_port()  # nothing listens there
    with pytest.raises(EngineUnavailable, match=f"the Dask scheduler at tcp://127.0.0.1:{port}"):
        engine(scheduler=f"tcp://127.0.0.1:{port}", timeout=2)


@pytest.mark.slow
def test_a_cluster_without_workers_is_a_plain_error_and_one_that_gets_one_is_used(
    tmp_path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # (Work sent to a scheduler whose workers were not started, or cannot reach it, waited for
    # them for ever, without a word; so did work whose workers all left the cluster.)
    import pgm_explore._engine as engine_module

    monkeypatch.setattr(engine_module, "_LOOK_EVERY", 0.5)
    port = _free_port()
    address = f"tcp://127.0.0.1:{port}"
    dask = os.path.join(os.path.dirname(sys.executable), "dask")
    here = os.path.dirname(os.path.abspath(__file__))
    quiet = {
        "stdout": subprocess.DEVNULL,
        "stderr": subprocess.DEVNULL,
        "cwd": tmp_path,
        "env": {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [here, os.environ.get("PYTHONPATH")]))},
    }
    procs = [
        subprocess.Popen([dask, "scheduler", "--host", "127.0.0.1", "--port", str(port), "--no-dashboard"], **quiet)
    ]
    joining: threading.Timer | None = None
    try:
        deadline = time.monotonic() + 60
        while True:  # (the scheduler up: it answers the probe)
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                assert time.monotonic() < deadline
                time.sleep(0.1)
        began = time.monotonic()
        with pytest.raises(EngineUnavailable) as raised:
            engine(scheduler=address, timeout=2)
        assert time.monotonic() - began < 20
        assert str(raised.value) == (
            f"could not start work on the Dask scheduler at {address}: no worker has joined it within 2 s "
            "(are its workers started, and can they reach the scheduler?)"
        )
        # A worker that joins while the work waits for one: the work goes on with it.
        worker = [dask, "worker", address, "--nworkers", "1", "--nthreads", "1", "--no-dashboard"]
        joining = threading.Timer(1.0, lambda: procs.append(subprocess.Popen(worker, **quiet)))
        joining.start()
        with engine(scheduler=address) as e:
            assert [n for n, _ in e.map(slow_square, range(3))] == [0, 1, 2]
            # Its worker leaves while the work goes on: the work stops, said plainly.
            monkeypatch.setattr(engine_module, "WORKERS_TIMEOUT", 2.0)
            results = e.map(slowly, range(20))
            assert next(results) == 0
            procs[-1].terminate()
            procs[-1].wait(30)
            left = time.monotonic()
            with pytest.raises(WorkersLost) as lost:
                list(results)
            assert time.monotonic() - left < 30
            assert str(lost.value) == (
                f"the work stopped on the Dask cluster at {address}: it has had no worker for 2 s "
                "(they all left, or died)"
            )
    finally:
        if joining is not None:
            joining.join()
        for proc in reversed(procs):
            proc.terminate()
            proc.wait(30)


def test_an_unreachable_scheduler_fails_fast() -> None:
    # With the client's own minute to start (START_TIMEOUT), a refused connection is said at
    # once rather than retried for that minute (the bound leaves a loaded machine plenty).
    port = _free_port()
    began = time.monotonic()
    with pytest.raises(EngineUnavailable) as raised:
        engine(scheduler=f"tcp://127.0.0.1:{port}")
    assert time.monotonic() - began < 30
    assert str(raised.value) == (
        f"could not start work on the Dask scheduler at tcp://127.0.0.1:{port}: "
        "nothing accepts connections there (is the scheduler running?)"
    )


@pytest.mark.parametrize(
    ("address", "reason"),
    [
        ("tcp://localhost", "not an address of the form tcp://HOST:PORT"),
        ("tcp://no-such-host.invalid:8786", "the host name cannot be resolved"),
    ],
)
def test_a_scheduler_address_that_cannot_be_one_is_a_plain_error(address: str, reason: str) -> None:
    with pytest.raises(EngineUnavailable, match=f"^could not start work on the Dask scheduler at {address}: {reason}"):
        engine(scheduler=address)


def _serve(server: socket.socket, held: list[socket.socket], greeting: bytes | None) -> None:
    """Accept every connection; say ``greeting`` at once, or (None) answer what is said as a web server does."""
    while True:
        try:
            connection, _ = server.accept()
        except OSError:  # the server is closed: the test is over
            return
        held.append(connection)
        if greeting is not None:
            connection.sendall(greeting)
        elif connection.recv(1024):
            connection.sendall(b"HTTP/1.1 400 Bad Request\r\ncontent-length: 0\r\n\r\n")


@pytest.mark.parametrize(
    ("greeting", "reason"),
    [
        # A web server (such as the dashboard's port, 8787, given for the scheduler's) says nothing
        # until spoken to: the client would wait for its handshake for ever.
        pytest.param(
            None,
            "what answers there says nothing for 5 s: it is not a Dask scheduler",
            marks=pytest.mark.slow,  # it waits out those 5 s
        ),
        # A server that speaks first (SSH): the client would take its first bytes for the length of
        # a message and run out of memory allocating it.
        (b"SSH-2.0-OpenSSH_9.2p1 Debian-2\r\n", "what answers there is not a Dask scheduler"),
    ],
)
def test_a_server_that_is_no_scheduler_is_a_plain_error(greeting: bytes | None, reason: str) -> None:
    with socket.create_server(("127.0.0.1", 0)) as server:
        held: list[socket.socket] = []
        threading.Thread(target=_serve, args=(server, held, greeting), daemon=True).start()
        address = f"tcp://127.0.0.1:{server.getsockname()[1]}"
        try:
            with pytest.raises(EngineUnavailable) as raised:
                engine(scheduler=address, timeout=5)
        finally:
            for connection in held:
                connection.close()
    assert str(raised.value) == f"could not start work on the Dask scheduler at {address}: {reason}"
