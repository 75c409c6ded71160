"""Corpus checking speed: ``pgm-explore check --corpus`` on 1 and 2 workers, on small files and joined ones.

Generates two corpora under a temporary directory (deleted afterwards) from the valid scenarios of
``data/transcripts/``, as ``bench_check.py`` does (episodes with their ids made unique, several at once,
their messages interleaved; every file's episodes numbered apart, so no two transcripts share ids):

- **big**: 200 files of 5,000 messages (about 1 GB);
- **small**: 10,000 files of 10 messages, and the same bytes put together in 10 files of 1,000
  small files each (**joined**).

Then it measures, in one run, the command in this process (``main(["check", "--corpus", "--format",
"json", ...])``, standard output to ``os.devnull``). The workers are local clusters started by this
script before the clock runs (``pgm_explore._engine.engine(1)`` and ``engine(2)``, as ``--workers``
starts them) and given to the command as ``--scheduler ADDRESS``: the ``--scheduler`` run on an
existing cluster, timing the work alone. ``--workers 2`` end to end, start-up included, is shown
beside.

Beside each time, the CPU seconds that this process (the command, and the clusters' schedulers)
and the cluster's workers spent on it, in all and in the busiest of them. On a machine that other
work keeps busy the times say little (what share of the cores the run got), the CPU seconds
change much less: the busiest process's CPU seconds are the least time the run can take on a
quiet machine, so their ratio for 1 and 2 workers is the most 2 workers can gain there.

1. big on 1 worker process and on 2: goal **>= 1.8x**;
2. small against joined, both on 2 workers: goal **<= 2x** (the cost of a file: opening it, a
   checker of its own, its share of a round trip to a worker); and both in this process.

Each figure is the best of ``--repeat`` runs (default 1: the big corpus takes long), taken round by
round. ``--scale 0.1`` makes the corpora smaller (20 big files, 1,000 small ones). The machine's other
load shows in the spread of the repeated runs (``--repeat 2`` or more), which is printed.

Run: ``.venv/bin/python benchmarks/bench_corpus.py [--scale S] [--repeat R]``.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import shutil
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import NamedTuple

import psutil  # type: ignore[import-untyped]  # (distributed depends on it; no stubs)
from bench_check import interleaved, templates

from pgm_explore._engine import engine
from pgm_explore.cli import main

BIG_FILES, BIG_MESSAGES = 200, 5_000
SMALL_FILES, SMALL_MESSAGES = 10_000, 10
JOINED_FILES = 10
GOAL_WORKERS = 1.8
GOAL_SMALL = 2.0


def write_corpus(folder: Path, files: int, messages: int) -> int:
    """``files`` transcripts of ``messages`` messages each; their bytes."""
    folder.mkdir(parents=True)
    scenarios = templates()
    episodes_a_file = messages // 4 + 8  # more than a file can start: numbers never repeat
    total = 0
    for n in range(files):
        data = b"".join(interleaved(scenarios, messages, at_once=min(8, messages), first=n * episodes_a_file))
        (folder / f"session-{n:05d}.jsonl").write_bytes(data)
        total += len(data)
    return total


def join(small: Path, joined: Path, parts: int) -> None:
    """The files of ``small`` put together, in order, into ``parts`` files."""
    joined.mkdir(parents=True)
    names = sorted(small.iterdir())
    per = -(-len(names) // parts)
    for k in range(parts):
        with (joined / f"part-{k:02d}.jsonl").open("wb") as out:
            for name in names[k * per : (k + 1) * per]:
                out.write(name.read_bytes())


class Measured(NamedTuple):
    seconds: float
    cpu: float  # CPU seconds of this process and the workers
    busiest: float  # CPU seconds of the busiest of them


def check(workers: list[psutil.Process], *argv: str) -> Measured:
    """``pgm-explore check --corpus --format json ARGV`` in this process, with ``workers`` doing
    its work (none: this process)."""

    def cpu() -> list[float]:
        return [time.process_time(), *(sum(w.cpu_times()[:2]) for w in workers)]

    with open(os.devnull, "w") as devnull, contextlib.redirect_stdout(devnull):
        before = cpu()
        started = time.perf_counter()
        status = main(["check", "--corpus", "--format", "json", "--no-progress", *argv])
        seconds = time.perf_counter() - started
        spent = [after - then for after, then in zip(cpu(), before, strict=True)]
    if status not in (0, 1):
        raise SystemExit(f"check {' '.join(argv)} ended with status {status}")
    return Measured(seconds, sum(spent), max(spent))


@contextlib.contextmanager
def local(workers: int) -> Iterator[tuple[str, list[psutil.Process]]]:
    """Local workers as ``--workers`` starts them, started before the clock runs: their
    scheduler's address, for ``--scheduler`` (the work alone is timed), and their processes."""
    with engine(workers, preload=["pgm_explore.cli._check"]) as running:
        client = running.client  # type: ignore[attr-defined]  # (a Dask engine)
        pids = client.run(os.getpid)
        yield client.scheduler.address, [psutil.Process(pid) for pid in pids.values()]


def best(runs: dict[str, list[Measured]], name: str, run: Callable[[], Measured]) -> None:
    runs.setdefault(name, []).append(run())


def main_(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.partition("\n")[0])
    parser.add_argument("--scale", type=float, default=1.0, help="fraction of the files of each corpus (default 1)")
    parser.add_argument("--repeat", type=int, default=1, help="runs of each measurement, round by round (default 1)")
    args = parser.parse_args(argv)
    big_files = max(2, round(BIG_FILES * args.scale))
    small_files = max(JOINED_FILES, round(SMALL_FILES * args.scale))
    root = Path(tempfile.mkdtemp(prefix="bench-corpus-"))
    try:
        started = time.perf_counter()
        big_bytes = write_corpus(root / "big", big_files, BIG_MESSAGES)
        small_bytes = write_corpus(root / "small", small_files, SMALL_MESSAGES)
        join(root / "small", root / "joined", JOINED_FILES)
        print(
            f"generated in {time.perf_counter() - started:.0f} s: big {big_files} files x {BIG_MESSAGES:,} messages "
            f"({big_bytes / 2**20:,.0f} MiB), small {small_files:,} files x {SMALL_MESSAGES} messages "
            f"({small_bytes / 2**20:,.1f} MiB), joined {JOINED_FILES} files"
        )
        print(f"cores: {os.cpu_count()}, load average before: {', '.join(f'{x:.1f}' for x in os.getloadavg())}")
        os.chdir(root)  # (the workers read the same relative paths)
        runs: dict[str, list[Measured]] = {}
        with local(1) as (one, one_worker), local(2) as (two, two_workers):
            for _ in range(args.repeat):
                best(runs, "big, 1 worker (--scheduler)", lambda: check(one_worker, "--scheduler", one, "big"))
                best(runs, "big, 2 workers (--scheduler)", lambda: check(two_workers, "--scheduler", two, "big"))
                best(runs, "small files, 2 workers", lambda: check(two_workers, "--scheduler", two, "small"))
                best(runs, "joined files, 2 workers", lambda: check(two_workers, "--scheduler", two, "joined"))
                best(runs, "small files, this process", lambda: check([], "--workers", "0", "small"))
                best(runs, "joined files, this process", lambda: check([], "--workers", "0", "joined"))
                # (its workers come and go within the run: the time alone)
                best(runs, "big, --workers 2 (start-up included)", lambda: check([], "--workers", "2", "big"))
        print(f"load average after: {', '.join(f'{x:.1f}' for x in os.getloadavg())}\n")
        width = max(map(len, runs))
        print(f"{'':<{width}}  {'time':>9}  {'messages/s':>10}  {'CPU, all':>10}  {'busiest':>9}")
        for name, measured in runs.items():
            spread = f"  (runs: {', '.join(f'{m.seconds:.1f}' for m in measured)})" if len(measured) > 1 else ""
            messages = (big_files * BIG_MESSAGES) if name.startswith("big") else (small_files * SMALL_MESSAGES)
            fastest = min(measured)
            spent = f"{min(m.cpu for m in measured):8.1f} s  {min(m.busiest for m in measured):7.1f} s"
            if "start-up" in name:
                spent = ""
            print(f"{name:<{width}}  {fastest.seconds:7.1f} s  {messages / fastest.seconds:10,.0f}  {spent}{spread}")
        t = {name: min(m.seconds for m in measured) for name, measured in runs.items()}
        cpu = {name: min(m.cpu for m in measured) for name, measured in runs.items()}
        busiest = {name: min(m.busiest for m in measured) for name, measured in runs.items()}
        one_, two_ = "big, 1 worker (--scheduler)", "big, 2 workers (--scheduler)"
        small, joined = "small files, 2 workers", "joined files, 2 workers"
        small_here, joined_here = "small files, this process", "joined files, this process"
        print()
        print(f"2 local workers vs 1:                            {t[one_] / t[two_]:.2f}x  (goal >= {GOAL_WORKERS}x)")
        print(f"  the same, busiest process's CPU seconds:       {busiest[one_] / busiest[two_]:.2f}x")
        print(f"  CPU seconds in all, 2 workers vs 1:            {cpu[two_] / cpu[one_]:.2f}x")
        print(f"small files vs joined, 2 local workers:          {t[small] / t[joined]:.2f}x  (goal <= {GOAL_SMALL}x)")
        print(f"  the same, CPU seconds in all:                  {cpu[small] / cpu[joined]:.2f}x")
        print(f"small files vs joined, this process:             {t[small_here] / t[joined_here]:.2f}x")
        print(f"  the same, CPU seconds:                         {cpu[small_here] / cpu[joined_here]:.2f}x")
        print(
            f"--workers 2 with its start-up vs 1 worker:       {t[one_] / t['big, --workers 2 (start-up included)']:.2f}x"
        )
    finally:
        os.chdir(Path(__file__).resolve().parent)
        shutil.rmtree(root, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main_())
