"""Where bulk work runs: in this process, on local worker processes, or on a Dask cluster.

Reading, decoding and judging messages depends on one message alone; the transcript rules
need the messages in order. Bulk work is therefore cut into *partitions* (the files of a
corpus, byte ranges of one big file, cut at line ends) that a function turns into compact
results on its own, and the results come back **in the order of the partitions**, however
the work was spread. :func:`engine` gives the one interface for the three places work can
run:

- in this process (``workers=0``): no start-up cost, what small inputs, standard input and
  live logs (``tail -f``) need;
- on ``workers`` local worker processes, a :class:`distributed.LocalCluster` started for
  the work and closed after it, its workers forked from a process that has imported
  distributed and the work's modules once (:func:`_start_forkserver`);
- on an existing Dask cluster (``scheduler="tcp://host:8786"``), whose workers must import
  ``pgm_explore`` and see the same files (the readers send them a relative path made absolute,
  or the caller's folder: :func:`pgm_explore.io._read.reading_from`).

The function given to :meth:`Engine.map` must be defined at the top of a module (workers
import it by name, as pickle does) and so must its arguments' types. Dask is imported only
when work leaves this process, so a small check starts as fast as before. This module sits
below every layer: it knows nothing of messages.
"""

from __future__ import annotations

import contextlib
import gc
import logging
import os
import signal
import socket
import stat
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from contextlib import AbstractContextManager, contextmanager
from typing import TYPE_CHECKING, Any, TypeVar

from pgm_explore._signals import interrupts_deferred
from pgm_explore.errors import PgmExploreError

if TYPE_CHECKING:
    from types import TracebackType

    from distributed import Client, Future, LocalCluster

__all__ = ["Engine", "EngineUnavailable", "WorkersLost", "cores", "engine", "engine_for", "older_objects_frozen"]

T = TypeVar("T")
R = TypeVar("R")

START_TIMEOUT = 60.0
"""Seconds to wait for local workers to start or a scheduler to answer (a loaded machine
took 10 s for two workers)."""

PROBE_TIMEOUT = 5.0
"""Seconds to wait for a scheduler's address to accept a connection at all. The Dask client
retries a refused connection until :data:`START_TIMEOUT`, so a mistyped address or a
scheduler not started yet would keep the user waiting a minute for its error."""

WORKERS_TIMEOUT = 30.0
"""Seconds to wait for a worker to join a Dask cluster that has none (one started with the work,
its workers still coming up; or one whose workers all left while it worked)."""

_LOOK_EVERY = 5.0
"""Seconds between looks at a cluster's workers while a result is awaited."""

HANDSHAKE_TIMEOUT = 15.0
"""Seconds to wait for what accepts the connection to say its first word (a Dask scheduler sends
its handshake at once; a loaded machine may delay it a little)."""


class EngineUnavailable(PgmExploreError):
    """The Dask cluster asked for cannot be reached, or local workers cannot start."""


class WorkersLost(EngineUnavailable):
    """The work stopped half way: its workers died while working on it (out of memory, killed), or
    a cluster's workers all left it. What came before is given; the rest cannot be."""


def cores() -> int:
    """The cores this process may use (what ``--workers`` defaults to for large work)."""
    if hasattr(os, "process_cpu_count"):  # Python 3.13: honours the affinity mask
        return os.process_cpu_count() or 1
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0)) or 1
    return os.cpu_count() or 1


class Engine(AbstractContextManager["Engine"]):
    """Runs a function over partitions, giving the results in the partitions' order.

    This base class runs everything in this process, one partition after the other: the
    results are made when they are asked for, so a reader of a live log sees each one as
    soon as its partition is done.
    """

    where = "this process"
    in_process = True
    """True when the work runs here, one partition after the other (nothing to gain from
    cutting work that is not spread)."""

    @property
    def workers(self) -> int:
        """How many partitions are worked on at once."""
        return 1

    def map(self, work: Callable[[T], R], partitions: Iterable[T]) -> Iterator[R]:
        """``work(p)`` for each partition ``p``, in order.

        An exception raised by ``work`` is raised here, at its partition, after the
        results of the partitions before it.
        """
        return (work(partition) for partition in partitions)

    def close(self) -> None:
        """Let go of the workers (nothing to do in this process)."""

    def __exit__(
        self, kind: type[BaseException] | None, value: BaseException | None, traceback: TracebackType | None
    ) -> None:
        self.close()


class _DaskEngine(Engine):
    """The same work spread over the workers of a ``distributed.Client``.

    At most :attr:`window` partitions are submitted ahead of the one whose result is
    awaited: the memory the results take stays bounded however many partitions there are,
    and a slow consumer (the transcript rules) holds the workers back instead of piling
    results up.
    """

    in_process = False

    def __init__(self, client: Client, *, own_cluster: bool) -> None:
        self._client = client
        self._own = own_cluster
        self._closed = False
        n = len(client.scheduler_info(n_workers=-1).get("workers", {})) or 1
        self._workers = n
        self.window = 2 * n + 2
        self.where = f"{n} local worker processes" if own_cluster else f"the Dask cluster at {client.scheduler.address}"

    @property
    def workers(self) -> int:
        return self._workers

    @property
    def client(self) -> Client:
        """The ``distributed.Client`` the work goes through (for collections such as dask DataFrames)."""
        return self._client

    def map(self, work: Callable[[T], R], partitions: Iterable[T]) -> Iterator[R]:
        pending: deque[Future] = deque()
        try:
            for partition in partitions:
                # pure=False: two equal partitions (the same file twice) are two pieces of work.
                pending.append(self._client.submit(_frozen_work, work, partition, pure=False))
                if len(pending) >= self.window:
                    yield self._result(pending.popleft())
            while pending:
                yield self._result(pending.popleft())
        finally:
            # Stopped early (an exception, a closed output): what is left is not wanted. (Once the
            # engine is closed, nothing is: a generator interrupted while it waited at a yield is
            # finished only after the `with` that closed the engine, when it is collected.)
            if pending and not self._closed:
                self._client.cancel(list(pending))

    def _result(self, future: Future) -> Any:
        """The result of ``future``, or :class:`WorkersLost` when no worker will give it: the
        scheduler gave up after as many workers died running it as Dask allows
        (``distributed.scheduler.allowed-failures``), or the cluster has had no worker for
        :data:`WORKERS_TIMEOUT` seconds (a cluster whose workers all left keeps the work
        waiting for new ones, for ever)."""
        from distributed import KilledWorker

        alone_since = None
        while True:
            try:
                return future.result(timeout=_LOOK_EVERY)
            except KilledWorker:
                raise WorkersLost(
                    f"the work stopped on {self.where}: the workers given a part of it died while working on it, "
                    "one after the other (out of memory? killed?)"
                ) from None
            except TimeoutError:
                if future.done():
                    return future.result()  # (a TimeoutError of the work's own)
            if self._client.scheduler_info(n_workers=-1).get("workers"):
                alone_since = None
            elif alone_since is None:
                alone_since = time.monotonic()
            elif time.monotonic() - alone_since >= WORKERS_TIMEOUT:
                raise WorkersLost(
                    f"the work stopped on {self.where}: it has had no worker for {WORKERS_TIMEOUT:g} s "
                    "(they all left, or died)"
                )

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        cluster = self._client.cluster if self._own else None
        # (Ctrl-C again while closing waits for the close: a cluster closed half way was left to
        # distributed's hook at exit, which printed a traceback.)
        with interrupts_deferred():
            self._client.close()
            if cluster is not None:
                cluster.close()


@contextmanager
def older_objects_frozen() -> Iterator[None]:
    """Leave the objects alive when long work begins out of the garbage collector's full passes
    until it ends (:func:`gc.freeze`, then :func:`gc.unfreeze`).

    The messages of a long transcript or partition make the collector walk every object of the
    process now and then: the imports, Dask's client or worker, tens of thousands of objects that
    the work does not touch, walked again each time (a fifth of a microsecond a message of a check
    in the checking process, about 0.8 µs a message of a check's partition, measured). None of them
    is garbage the work makes, and freezing them changes no result: garbage made before is
    collected after. Nothing is frozen when something else of the process froze objects already
    (unfreezing would give back its objects too).

    Work within work (each transcript of a corpus, within the worker's batch) finds the objects
    frozen by this function already and does nothing: it must not ask :func:`gc.get_freeze_count`,
    which counts the frozen objects one by one (0.8 ms on a worker, for every file of a corpus of
    small files, which took 5 times as long on workers as in one process)."""
    global _freezes
    if _freezes or gc.get_freeze_count():
        yield
        return
    gc.freeze()
    _freezes += 1
    try:
        yield
    finally:
        _freezes -= 1
        gc.unfreeze()


_freezes = 0
"""How many :func:`older_objects_frozen` are under way in this process (0 or 1: an inner one
does nothing)."""


def _frozen_work(work: Callable[[T], R], partition: T) -> R:
    """``work(partition)`` on a worker, the worker's own objects out of the collector's passes."""
    with older_objects_frozen():
        return work(partition)


def engine(
    workers: int | None = 0,
    scheduler: str | None = None,
    *,
    timeout: float = START_TIMEOUT,
    preload: Iterable[str] = (),
) -> Engine:
    """Where to run bulk work: ``scheduler`` (a Dask scheduler's address) if given, else
    ``workers`` local worker processes (``None``: one per core), else this process (0).

    ``preload`` names the modules the work's functions live in: local workers start with
    them imported (see :func:`_start_forkserver`); elsewhere they are imported by the
    first piece of work that needs them.

    Raises :class:`EngineUnavailable` with a plain reason when the cluster cannot be
    reached or the workers cannot start.
    """
    if scheduler is None and workers == 0:
        return Engine()
    if scheduler is None:
        # Before this process imports distributed: the two imports then run at once.
        _start_forkserver(preload)
    try:
        from distributed import Client
    except ImportError as exc:  # pragma: no cover - dask[distributed] is a runtime dependency
        raise EngineUnavailable(f"work on several processes needs dask.distributed ({exc})") from None
    try:
        if scheduler is not None:
            _probe(scheduler, min(timeout, PROBE_TIMEOUT), min(timeout, HANDSHAKE_TIMEOUT))
            try:
                client = Client(scheduler, timeout=timeout)
            except MemoryError:
                # What answers is no Dask scheduler (a web server, a proxy): the client takes the
                # first bytes of its answer for the length of a message and tries to allocate it.
                raise OSError("what answers there is not a Dask scheduler") from None
            wait = min(timeout, WORKERS_TIMEOUT)
            try:
                # Work sent to a cluster with no worker would wait for one for ever, without a word.
                client.wait_for_workers(1, timeout=wait)
            except BaseException as exc:
                client.close()
                if isinstance(exc, TimeoutError):
                    raise OSError(
                        f"no worker has joined it within {wait:g} s "
                        "(are its workers started, and can they reach the scheduler?)"
                    ) from None
                raise
            return _DaskEngine(client, own_cluster=False)
        # Ctrl-C while the workers start waits until they have (a second or less, as a rule), and
        # stops them again: interrupted half way, the cluster was left to distributed's own hook
        # at exit, which failed on a worker still starting and printed its traceback, as did the
        # worker, forked for a process that had gone.
        with interrupts_deferred() as interrupted:
            cluster = _local_cluster(workers or cores(), timeout)
            try:
                # direct_to_workers: the client fetches a result from its worker itself. By default
                # it asks the scheduler, which (living in this process) takes the result in from the
                # worker and hands it on to the client over a connection of its own, in pickle's
                # protocol 4: 0.1 µs a message of a check more for this process's event loop, and the
                # chunks of packed facts copied into the pickle (see PackedFacts). (A cluster at
                # --scheduler may have workers this process cannot reach: there the scheduler stays
                # the go-between.)
                local = _DaskEngine(Client(cluster, timeout=timeout, direct_to_workers=True), own_cluster=True)
            except BaseException:
                cluster.close()
                raise
            if interrupted:
                local.close()  # (and leaving the block raises the KeyboardInterrupt held back)
        return local
    except (OSError, TimeoutError, RuntimeError) as exc:
        # (RuntimeError: distributed's "Nanny failed to start", as when a script without
        # `if __name__ == "__main__":` is imported again by the spawned workers.)
        where = f"the Dask scheduler at {scheduler}" if scheduler else f"{workers} local worker processes"
        raise EngineUnavailable(f"could not start work on {where}: {exc}") from None


HTTP_ROUTES = ("distributed.http.health",)
"""What the HTTP servers of a local cluster serve: whether they are alive, nothing more. The
default routes import prometheus_client (a tenth of a second a process) for metrics that
nobody scrapes from a cluster living as long as one command."""


def _start_forkserver(preload: Iterable[str]) -> None:
    """Start the process that local workers are forked from, importing ``distributed`` and
    ``preload`` once, while this process goes on with its own imports.

    With ``spawn``, distributed's default, every worker is a new interpreter that imports
    distributed (a second or more on a loaded machine) and the caller's main module again,
    each worker on its own; ``fork`` copies a process whose event-loop threads may hold
    locks. A forkserver is a single-threaded process that has imported all that once:
    each worker is a fork of it, started in a few milliseconds, and a second cluster in
    the same process (a notebook, tests) starts at once. It lives as long as this process,
    with the environment it was started with (which the work does not read).
    """
    import multiprocessing
    from multiprocessing import forkserver

    if "forkserver" not in multiprocessing.get_all_start_methods():  # (Windows: spawn it is)
        return
    # Only the first list counts: a running forkserver keeps what it imported.
    multiprocessing.get_context("forkserver").set_forkserver_preload(["distributed", *preload])
    # (An error here is left to starting the cluster, which tries again and says why it fails.)
    with _interrupts_ignored(), _environment(ONE_THREAD_NUMERICS), contextlib.suppress(OSError):
        forkserver.ensure_running()


ONE_THREAD_NUMERICS = {"OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1"}
"""What Dask sets before it spawns a worker process (``distributed.nanny.pre-spawn-environ``): one
thread for the numerical libraries, which the work never calls. The forkserver is where local
workers come from, so it starts with them. ``distributed`` imports numpy, whose OpenBLAS otherwise
starts a thread for each other core as it loads, and that thread spins for some 0.16 s of CPU
before it sleeps, in the forkserver and in the command's own process (:func:`pgm_explore.cli.main`):
a small check on two workers took 1.68 s of CPU with it, 1.32 s without, in its first second or so
(docs/performance.md, "A command's start and numpy's threads")."""


@contextmanager
def _environment(values: dict[str, str]) -> Iterator[None]:
    """``values`` in ``os.environ`` while the block runs (processes it starts inherit them), where
    the environment has no value of its own; then as it was. The caller's process keeps its
    own: a notebook that imports numpy later keeps its threads."""
    added = {name: value for name, value in values.items() if name not in os.environ}
    os.environ.update(added)
    try:
        yield
    finally:
        for name in added:
            os.environ.pop(name, None)


@contextmanager
def _interrupts_ignored() -> Iterator[None]:
    """SIGINT ignored by the processes this block starts (the forkserver, and multiprocessing's
    resource tracker), and by every worker forked from the forkserver: an ignored signal stays
    ignored across ``fork`` and ``exec``.

    Ctrl-C at a terminal signals every process of the command's process group. Otherwise the
    forkserver, interrupted while it imports what the workers run, and each worker, interrupted in
    its event loop, printed a traceback of their own, and a worker that died so had its nanny restart
    it while the cluster closed (4 s). The workers are this process's helpers: it is interrupted, and
    closes the cluster (:class:`_DaskEngine`), which ends them.

    This thread blocks the signal meanwhile, so that one sent to this process in the few
    milliseconds of the block waits for its end, and is raised then (Linux queues a blocked signal
    even when it is ignored); only the main thread may set a signal's handler, and elsewhere the
    block does nothing."""
    if threading.current_thread() is not threading.main_thread() or not hasattr(signal, "pthread_sigmask"):
        yield
        return
    handler = signal.getsignal(signal.SIGINT)
    if handler is None:  # (a handler not set from Python: it could not be put back)
        yield
        return
    mask = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, handler)  # (the handler first: a signal held back goes to it)
        signal.pthread_sigmask(signal.SIG_SETMASK, mask)


def _local_cluster(workers: int, timeout: float) -> LocalCluster:
    """``workers`` local worker processes, forked from the forkserver when there is one,
    with nothing running that the work does not need."""
    import multiprocessing

    import dask
    import distributed.utils
    from distributed import LocalCluster

    settings: dict[str, object] = {
        # (lists of their own: the scheduler may append to the one it is given)
        "distributed.scheduler.http.routes": list(HTTP_ROUTES),
        "distributed.worker.http.routes": list(HTTP_ROUTES),
        # Every 10 ms a worker's event loop would take the GIL from the work to sample its
        # stack for a dashboard profile that nobody sees.
        "distributed.worker.profile.enabled": False,
        # What a cluster does on a timer (health checks, dashboard figures), done less often:
        # an idle cluster of two took 2.4% of a core in this process and 1.5% in each worker,
        # and 0.6% and 0.25% with these; the workers' memory is still looked at every second
        # (by the workers and their nannies).
        "distributed.admin.tick.interval": "1s",
        "distributed.admin.system-monitor.interval": "5s",
        "distributed.worker.memory.monitor-interval": "1s",
        # Each worker runs dask_setup below as it starts.
        "distributed.worker.preload": [__name__],
    }
    if "forkserver" in multiprocessing.get_all_start_methods():
        settings["distributed.worker.multiprocessing-method"] = "forkserver"
        # distributed would otherwise set its own preload list, importing numpy and pandas
        # in this process first (a second or more) to have the forkserver import them:
        # ours runs already. A private flag, as distributed 2026.8 (and its main branch) has
        # no public way to say so: get_mp_context() reads no setting for it and LocalCluster
        # takes no multiprocessing context (dask/distributed#5475, which would make that
        # preload lazy, is still open). Were the flag dropped, the workers would only start
        # slower; tests/test_engine.py::test_local_workers_start_with_the_works_modules_imported
        # fails then (pandas imported here).
        distributed.utils._forkserver_preload_set = True
    with dask.config.set(settings):
        return LocalCluster(
            n_workers=workers,
            threads_per_worker=1,  # the work holds the GIL: one thread a process
            processes=True,
            dashboard_address=None,  # no dashboard nobody asked for ...
            # ... and the scheduler's HTTP server (health) on a free loopback port: its
            # default, 8787 on every interface, is taken by the first cluster of the
            # machine, and the next ones warn.
            scheduler_kwargs={"dashboard_address": "127.0.0.1:0", "dashboard": False},
            # (As the workers: what goes wrong comes back to the work's caller, who says it plainly
            # (WorkersLost); the scheduler's "Task ... marked as failed because 4 workers died"
            # printed before it.)
            silence_logs=logging.CRITICAL,
            timeout=timeout,
        )


def dask_setup(worker: object) -> None:
    """Run by each worker of a local cluster as it starts (Dask's ``distributed.worker.preload``):
    the worker logs nothing short of a crash. A worker whose heartbeat meets the scheduler closing
    with the cluster printed ``Failed to communicate with scheduler during heartbeat`` and a
    traceback to the command's standard error (about one run in 25, measured); what goes wrong with
    the work itself comes back to this process with its partition. (``silence_logs`` of the
    cluster quiets the loggers of this process and the nannies', not the workers'.)

    The worker also gives way to the process that started it (:data:`WORKER_NICENESS`)."""
    logging.getLogger("distributed").setLevel(logging.CRITICAL)
    if hasattr(os, "nice"):  # (not on Windows)
        # (Linux sets a thread's niceness: this is the worker's event-loop thread, which starts
        # the thread that runs the work, and a new thread takes its creator's niceness.)
        with contextlib.suppress(OSError):
            os.nice(WORKER_NICENESS)


WORKER_NICENESS = 10
"""How much lower the priority of local workers is than that of the process that uses them
(``os.nice``). Where that process has work of its own between the workers' (a check's
transcript rules, which run in order over what the workers send), the two cores are shared by
three busy processes: at equal priority the rules got two thirds of a core, fell behind the
workers by the partitions in flight, and went on with them alone, a core idle, once the
workers were done (0.7 s of a check of 1M messages, measured). Given way to, the rules keep up
with the workers, which take the time the rules leave (the cores idle 4-5% of a check instead of
5.5-7%; docs/performance.md). Work that is the workers' alone (validate, a corpus) is not
slowed: nothing of this process competes with it."""


def _probe(address: str, timeout: float, wait: float) -> None:
    """Raise :class:`OSError` with a plain reason when nothing accepts a TCP connection at the
    scheduler ``address`` (``tcp://`` or ``tls://``, or no protocol) within ``timeout``: one
    attempt, not the client's retries. Over plain TCP, a Dask scheduler speaks first (its
    handshake); a server that says nothing for ``wait`` seconds is no scheduler, and the client
    would wait for it for ever. Other protocols are left to the client."""
    from distributed.comm.addressing import parse_address, parse_host_port

    try:
        protocol, location = parse_address(address)
        host, port = parse_host_port(location)
    except ValueError as exc:
        raise OSError(f"not an address of the form tcp://HOST:PORT ({exc})") from None
    if protocol not in ("tcp", "tls"):
        return
    try:
        with socket.create_connection((host, port), timeout=timeout) as connection:
            if protocol == "tcp":  # (over TLS the client speaks first)
                connection.settimeout(wait)
                try:
                    said = connection.recv(1)
                except TimeoutError:
                    raise OSError(
                        f"what answers there says nothing for {wait:g} s: it is not a Dask scheduler"
                    ) from None
                if not said:
                    raise OSError("what answers there closes the connection: it is not a Dask scheduler")
    except ConnectionRefusedError:
        raise OSError("nothing accepts connections there (is the scheduler running?)") from None
    except TimeoutError:
        raise OSError(f"no answer within {timeout:g} s") from None
    except socket.gaierror as exc:
        raise OSError(f"the host name cannot be resolved ({exc.strerror})") from None


def engine_for(
    paths: Iterable[str],
    *,
    workers: int | None = None,
    scheduler: str | None = None,
    min_bytes: int,
    preload: Iterable[str] = (),
) -> Engine:
    """The engine for work on the files ``paths`` (what ``--workers`` and ``--scheduler`` say):
    ``scheduler`` if given; else ``workers`` local worker processes if given (0: this
    process); else, unless ``PGM_EXPLORE_PARALLEL=0`` is in the environment or there is one
    core only, one local worker per core when the regular files among ``paths`` hold
    ``min_bytes`` or more together (below that, starting workers costs more than it wins),
    and this process otherwise (standard input, pipes, small files) or when those workers
    cannot start. Workers or a scheduler asked for that cannot start raise
    :class:`EngineUnavailable`. ``preload``: as for :func:`engine`.
    """
    if scheduler is not None or workers is not None:
        return engine(workers, scheduler, preload=preload)
    if os.environ.get("PGM_EXPLORE_PARALLEL", "").strip() == "0" or cores() < 2:
        return Engine()
    total = 0
    for path in paths:
        try:
            info = os.stat(path)
        except OSError:
            continue
        if stat.S_ISREG(info.st_mode):
            total += info.st_size
    if total < min_bytes:
        return Engine()
    try:
        return engine(None, preload=preload)
    except EngineUnavailable:
        # Not asked for: the same work in this process, slower and otherwise the same.
        return Engine()
