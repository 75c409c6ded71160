"""Local Dask workers' start-up: how long until two workers have each done a first piece of work.

Each run is a new Python process (nothing imported yet, as for a command) that starts two local
workers, gives each worker the work of ``check --corpus`` on one small transcript and waits for
both results; the run prints when the cluster was up and when both results were in, in seconds
from before ``distributed`` was imported, and the CPU seconds that this process and all it
started (forkserver, workers) had spent by then: the figure that the machine's other load moves
least. Three ways to start the workers are compared, the runs alternating round by round so that
the machine's other load falls on all of them alike:

- **spawn**: ``distributed.LocalCluster`` as ``pgm_explore._engine`` started it up to session 10
  (distributed's defaults: each worker a new interpreter importing distributed and the main
  module again; prometheus metrics and every HTTP route, a profiler sampling the work every
  10 ms, health checks every 20 ms);
- **forkserver, late**: the same with workers forked from a forkserver that imports distributed
  and the work's module, started by distributed after this process has imported it (the
  timers and routes as before);
- **engine**: ``pgm_explore._engine.engine(2, preload=...)`` as the commands start workers now
  (the forkserver started first, importing while this process imports distributed).

Then, in one process, a second cluster after the first (a notebook, tests): spawn against engine.
Then, once, the CPU seconds that an idle cluster of two spends in 10 s (what it takes from the
work on every second of it): spawn against engine.
Then ``pgm-explore check --corpus data/corpus`` end to end (16 transcripts, 478 messages) with
``--workers 2`` and ``--workers 0``.

Each figure is the best of ``--repeat`` runs (default 5); the spread is printed. Ratios compare
figures of the same run. The load average is printed before and after.

Run: ``.venv/bin/python benchmarks/bench_startup.py [--repeat R]``.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
TRANSCRIPT = ROOT / "data" / "transcripts" / "market-wallet-limit.jsonl"
CORPUS = ROOT / "data" / "corpus"


def cpu_seconds() -> float:
    """The CPU seconds spent so far by this process and every process it started (the
    forkserver, the workers)."""
    import psutil  # type: ignore[import-untyped]  # (distributed depends on it; no stubs)

    me = psutil.Process()
    cpu = 0.0
    for process in [me, *me.children(recursive=True)]:
        times = process.cpu_times()
        cpu += times.user + times.system
    return cpu


def first_results(client: Any, job: Any, idle: float) -> tuple[float, float]:
    """Both workers' first results: the CPU seconds spent by then, and in the ``idle``
    seconds that follow."""
    from pgm_explore.cli._check import check_files

    workers = list(client.scheduler_info(n_workers=-1)["workers"])
    futures = [client.submit(check_files, job, workers=[w], pure=False) for w in workers]
    assert len(workers) == 2 and all(f.result().status == 0 for f in futures)
    cpu = cpu_seconds()
    if not idle:
        return cpu, 0.0
    time.sleep(1)  # (the end of the start-up: workers reporting, connections settling)
    before = cpu_seconds()
    time.sleep(idle)
    return cpu, cpu_seconds() - before


def old_cluster(method: str) -> Any:
    """Two local workers as ``pgm_explore._engine`` started them up to session 10, by ``method``."""
    import logging

    import dask
    from distributed import LocalCluster

    if method == "forkserver":
        import multiprocessing

        import distributed.utils

        multiprocessing.get_context("forkserver").set_forkserver_preload(["distributed", "pgm_explore.cli._check"])
        distributed.utils._forkserver_preload_set = True  # (as _engine does: see there)
    with dask.config.set({"distributed.worker.multiprocessing-method": method}):
        return LocalCluster(
            n_workers=2,
            threads_per_worker=1,
            processes=True,
            dashboard_address=None,
            scheduler_kwargs={"dashboard_address": "127.0.0.1:0"},
            silence_logs=logging.ERROR,
        )


def child(way: str, clusters: int, idle: float) -> None:
    """One run, in a new interpreter: prints (cluster up, both first results, CPU seconds,
    CPU seconds over ``idle`` seconds after) of each of ``clusters`` clusters started one
    after the other."""
    from pgm_explore._engine import engine
    from pgm_explore.cli._check import FileCheck
    from pgm_explore.cli._output import PLAIN

    job = FileCheck((str(TRANSCRIPT),), "json", PLAIN)
    for _ in range(clusters):
        started = time.perf_counter()
        if way == "engine":
            work = engine(2, preload=["pgm_explore.cli._check"])
            up = time.perf_counter()
            cpu, resting = first_results(work.client, job, idle)  # type: ignore[attr-defined]  # (a Dask engine)
            done = time.perf_counter()
            work.close()
        else:
            from distributed import Client

            cluster = old_cluster("spawn" if way == "spawn" else "forkserver")
            up = time.perf_counter()
            with Client(cluster) as client:
                cpu, resting = first_results(client, job, idle)
            done = time.perf_counter()
            cluster.close()
        print(up - started, done - started, cpu, resting)


WAYS = ("spawn", "forkserver, late", "engine")
IDLE = 10.0  # seconds an idle cluster's CPU is measured over


def run(way: str, clusters: int, idle: float = 0) -> list[tuple[float, float, float, float]]:
    """(cluster up, both first results, CPU seconds so far, CPU seconds over ``idle`` seconds
    after) for each of ``clusters`` clusters started one after the other in a new process."""
    done = subprocess.run(
        [sys.executable, __file__, "--child", way.partition(",")[0], str(clusters), str(idle)],
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
        timeout=600,
    )
    numbers = [float(x) for x in done.stdout.split()]
    return list(zip(numbers[0::4], numbers[1::4], numbers[2::4], numbers[3::4], strict=True))


def command(*argv: str) -> float:
    """Seconds for ``pgm-explore ARGV`` as a new process, to its end."""
    started = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "pgm_explore", *argv],
        stdout=subprocess.DEVNULL,
        check=False,
        cwd=ROOT,
        timeout=600,
    )
    return time.perf_counter() - started


def load() -> str:
    return ", ".join(f"{x:.1f}" for x in os.getloadavg())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.partition("\n")[0])
    parser.add_argument("--repeat", type=int, default=5, help="runs of each measurement, round by round (default 5)")
    parser.add_argument("--child", nargs=3, metavar=("WAY", "CLUSTERS", "IDLE"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        child(args.child[0], int(args.child[1]), float(args.child[2]))
        return 0
    print(f"cores: {os.cpu_count()}, load average before: {load()}")
    first: dict[str, list[tuple[float, float, float, float]]] = {way: [] for way in WAYS}
    second: dict[str, list[float]] = {"spawn": [], "engine": []}
    commands: dict[str, list[float]] = {"--workers 2": [], "--workers 0": []}
    for _ in range(args.repeat):
        for way in WAYS:
            first[way] += run(way, 1)
        for way in second:
            second[way].append(run(way, 2)[1][1])
        for workers in commands:
            commands[workers].append(
                command("check", "--corpus", "--no-progress", *workers.split(), str(CORPUS.relative_to(ROOT)))
            )
    resting = {way: run(way, 1, IDLE)[0][3] for way in ("spawn", "engine")}
    print(f"load average after: {load()}\n")

    def spread(seconds: list[float]) -> str:
        return f"(runs: {', '.join(f'{s:.2f}' for s in seconds)})"

    print("two local workers, from before importing distributed to the first work done on both (best of the runs):")
    wall, cpu = {}, {}
    for way, times in first.items():
        wall[way] = min(t[1] for t in times)
        cpu[way] = min(t[2] for t in times)
        print(f"  {way:<17} {wall[way]:5.2f} s  {spread([t[1] for t in times])}")
        print(f"  {'':<17} {cpu[way]:5.2f} CPU seconds in all processes  {spread([t[2] for t in times])}")
    print("a second cluster in the same process, first work done on both:")
    for way, seconds in second.items():
        print(f"  {way:<17} {min(seconds):5.2f} s  {spread(seconds)}")
    print(f"an idle cluster of two, CPU seconds over {IDLE:g} s in all its processes:")
    for way, spent in resting.items():
        print(f"  {way:<17} {spent:5.2f} s")
    print("pgm-explore check --corpus data/corpus, end to end:")
    for workers, seconds in commands.items():
        print(f"  {workers:<17} {min(seconds):5.2f} s  {spread(seconds)}")
    print()
    print(f"start-up, spawn vs engine:                {wall['spawn'] / wall['engine']:.2f}x")
    print(f"start-up, forkserver late vs engine:      {wall['forkserver, late'] / wall['engine']:.2f}x")
    print(f"CPU of start-up, spawn vs engine:         {cpu['spawn'] / cpu['engine']:.2f}x")
    print(f"CPU of start-up, forkserver late vs engine: {cpu['forkserver, late'] / cpu['engine']:.2f}x")
    print(f"idle cluster's CPU, spawn vs engine:      {resting['spawn'] / max(resting['engine'], 0.01):.2f}x")
    print(f"second cluster, spawn vs engine:          {min(second['spawn']) / min(second['engine']):.2f}x")
    print(
        f"check --corpus, --workers 2 vs 0:         {min(commands['--workers 2']) / min(commands['--workers 0']):.2f}x"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
