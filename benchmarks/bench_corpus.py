"""Corpus checking speed: ``pgm-explore check --corpus`` on 1 and 2 workers, on small files and joined ones.

Generates two corpora under a temporary directory (deleted afterwards) from the valid scenarios of
``data/transcripts/``, as ``bench_check.py`` does (episodes with their ids made unique, several at once,
their messages interleaved; every file's episodes numbered apart, so no two transcripts share ids):

- **big**: 200 files of 5,000 messages (about 1 GB);
- **small**: 10,000 files of 10 messages, and the same bytes put together in 10 files of 1,000
  small files each (**joined**).

Then it measures, in one run, the command in this process (``main(["check", "--corpus", "--format",
"json", ...])``, standard output to ``os.devnull``). The workers are local clusters started by this
script before the clock runs (a ``distributed.LocalCluster`` of 1 or 2 processes, as ``--workers``
starts one) and given to the command as ``--scheduler ADDRESS``: the ``--scheduler`` run on an existing
cluster, timing the work alone. Starting two workers takes seconds on a busy machine: ``--workers 2``
end to end, start-up included, is shown beside.

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

from bench_check import interleaved, templates

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


def check(*argv: str) -> float:
    """Seconds for ``pgm-explore check --corpus --format json ARGV`` in this process."""
    with open(os.devnull, "w") as devnull, contextlib.redirect_stdout(devnull):
        started = time.perf_counter()
        status = main(["check", "--corpus", "--format", "json", "--no-progress", *argv])
        seconds = time.perf_counter() - started
    if status not in (0, 1):
        raise SystemExit(f"check {' '.join(argv)} ended with status {status}")
    return seconds


@contextlib.contextmanager
def local(workers: int) -> Iterator[str]:
    """A LocalCluster of ``workers`` processes as ``--workers`` starts one, started before the
    clock runs: its address, for ``--scheduler`` (the work alone is timed)."""
    from distributed import LocalCluster

    with LocalCluster(
        n_workers=workers,
        threads_per_worker=1,
        processes=True,
        dashboard_address=None,
        scheduler_kwargs={"dashboard_address": "127.0.0.1:0"},  # (as pgm_explore._engine starts its own)
        silence_logs=50,
    ) as running:
        yield running.scheduler_address


def best(runs: dict[str, list[float]], name: str, run: Callable[[], float]) -> None:
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
        runs: dict[str, list[float]] = {}
        with local(1) as one, local(2) as two:
            for _ in range(args.repeat):
                best(runs, "big, 1 worker (--scheduler)", lambda: check("--scheduler", one, "big"))
                best(runs, "big, 2 workers (--scheduler)", lambda: check("--scheduler", two, "big"))
                best(runs, "small files, 2 workers", lambda: check("--scheduler", two, "small"))
                best(runs, "joined files, 2 workers", lambda: check("--scheduler", two, "joined"))
                best(runs, "small files, this process", lambda: check("--workers", "0", "small"))
                best(runs, "joined files, this process", lambda: check("--workers", "0", "joined"))
                best(runs, "big, --workers 2 (start-up included)", lambda: check("--workers", "2", "big"))
        print(f"load average after: {', '.join(f'{x:.1f}' for x in os.getloadavg())}\n")
        width = max(map(len, runs))
        for name, seconds in runs.items():
            spread = f"  (runs: {', '.join(f'{s:.1f}' for s in seconds)})" if len(seconds) > 1 else ""
            messages = (big_files * BIG_MESSAGES) if name.startswith("big") else (small_files * SMALL_MESSAGES)
            print(f"{name:<{width}}  {min(seconds):7.1f} s  {messages / min(seconds):9,.0f} messages/s{spread}")
        t = {name: min(seconds) for name, seconds in runs.items()}
        workers = t["big, 1 worker (--scheduler)"] / t["big, 2 workers (--scheduler)"]
        small = t["small files, 2 workers"] / t["joined files, 2 workers"]
        small_here = t["small files, this process"] / t["joined files, this process"]
        started = t["big, 1 worker (--scheduler)"] / t["big, --workers 2 (start-up included)"]
        print()
        print(f"2 local workers vs 1:                         {workers:.2f}x  (goal >= {GOAL_WORKERS}x)")
        print(f"small files vs joined, 2 local workers:       {small:.2f}x  (goal <= {GOAL_SMALL}x)")
        print(f"small files vs joined, this process:          {small_here:.2f}x")
        print(f"--workers 2 with its start-up vs 1 worker:    {started:.2f}x")
    finally:
        os.chdir(Path(__file__).resolve().parent)
        shutil.rmtree(root, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main_())
