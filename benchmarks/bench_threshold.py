"""Where local workers start to win: the commands on inputs of growing size, in one process and on 2 workers.

``check`` and ``validate`` start one local worker per core by themselves from a size of input on
(``CHECK_BYTES``, ``_VALIDATE_BYTES``, and ``LOCAL_WORKERS_FROM`` for ``check --corpus`` and
``table --corpus``): below it, starting the workers costs more than they win. This measures where
that size lies on this machine. For each size it runs, as a new process each time (as a person or
a script runs the command: the interpreter, the imports and the workers' start all counted):

- ``pgm-explore check --format json --no-progress --workers W FILE`` on a transcript of the
  scenarios (``bench_check.py``'s, the episodes interleaved),
- ``pgm-explore validate --format json --no-progress --workers W FILE`` on ``bench_validate.py``'s
  messages (all four data types, one in 200 not conforming),
- ``pgm-explore check --corpus --format json --no-progress --workers W DIR`` on a corpus of
  transcripts of 10 messages each (``bench_corpus.py``'s small files),

with ``W`` 0 (this process) and 2, the runs alternating size by size and round by round, so that
the machine's other load falls on both alike. It prints the best time of each, their ratio, and
for each command the smallest size from which 2 workers were faster at that size and every larger
one: the size to start them from. The files go to a temporary folder, deleted afterwards.

Run: ``.venv/bin/python benchmarks/bench_threshold.py [--sizes 4,8,16,...] [--repeat R]``
(sizes in MiB; default 4 to 256, R 3).
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench_check import interleaved, templates
from bench_corpus import write_corpus
from bench_validate import generate as generate_messages

ROOT = Path(__file__).resolve().parents[1]
MIB = 1 << 20
SIZES = (4, 8, 16, 32, 64, 128, 256)
CORPUS_MESSAGES = 10  # messages a transcript of the corpus


def first_lines(source: Path, target: Path, size: int) -> None:
    """The first whole lines of ``source`` that hold ``size`` bytes or just more, as ``target``."""
    with source.open("rb") as given, target.open("wb") as out:
        written = 0
        for line in given:
            if written >= size:
                break
            out.write(line)
            written += len(line)
    if written < size:
        raise SystemExit(f"{source} holds {written:,} bytes, less than {size:,}")


def corpus(folder: Path, size: int) -> None:
    """Transcripts of :data:`CORPUS_MESSAGES` messages, as many as hold ``size`` bytes."""
    one = sum(len(line) for line in interleaved(templates(), CORPUS_MESSAGES, at_once=min(8, CORPUS_MESSAGES)))
    write_corpus(folder, max(1, -(-size // one)), CORPUS_MESSAGES)


def seconds(*argv: str) -> float:
    """``pgm-explore ARGV`` as a new process, to its end."""
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "pgm_explore", *argv], stdout=subprocess.DEVNULL, check=False, timeout=1800
    )
    took = time.perf_counter() - started
    if done.returncode not in (0, 1):
        raise SystemExit(f"pgm-explore {' '.join(argv)} ended with status {done.returncode}")
    return took


def load() -> str:
    return ", ".join(f"{x:.1f}" for x in os.getloadavg())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.partition("\n")[0])
    parser.add_argument("--sizes", default=",".join(map(str, SIZES)), help="sizes of input in MiB, comma-separated")
    parser.add_argument("--repeat", type=int, default=3, help="runs of each measurement, round by round (default 3)")
    parser.add_argument("--only", choices=("check", "validate", "corpus"), action="append", help="these commands only")
    args = parser.parse_args(argv)
    sizes = sorted(int(s) for s in args.sizes.split(","))
    commands = args.only or ["check", "validate", "corpus"]
    root = Path(tempfile.mkdtemp(prefix="bench-threshold-"))
    try:
        started = time.perf_counter()
        largest = sizes[-1] * MIB
        inputs: dict[str, dict[int, Path]] = {command: {} for command in commands}
        if "check" in commands:
            whole = root / "transcript.jsonl"
            with whole.open("wb") as out:
                written = 0
                for line in interleaved(templates(), 1 << 40):
                    out.write(line)
                    written += len(line)
                    if written >= largest:
                        break
            for size in sizes:
                first_lines(whole, inputs["check"].setdefault(size, root / f"check-{size}.jsonl"), size * MIB)
            whole.unlink()
        if "validate" in commands:
            whole = root / "messages.jsonl"
            generate_messages(whole, largest // 800)  # (about 1 KB a message: enough)
            for size in sizes:
                first_lines(whole, inputs["validate"].setdefault(size, root / f"validate-{size}.jsonl"), size * MIB)
            whole.unlink()
        if "corpus" in commands:
            for size in sizes:
                corpus(inputs["corpus"].setdefault(size, root / f"corpus-{size}"), size * MIB)
        print(f"generated in {time.perf_counter() - started:.0f} s; sizes {', '.join(map(str, sizes))} MiB")
        print(f"cores: {os.cpu_count()}, load average before: {load()}")
        runs: dict[tuple[str, int, int], list[float]] = {}
        for _ in range(args.repeat):
            for size in sizes:
                for command in commands:
                    path = str(inputs[command][size])
                    for workers in (0, 2):
                        argv = ["check", "--corpus"] if command == "corpus" else [command]
                        took = seconds(*argv, "--format", "json", "--no-progress", "--workers", str(workers), path)
                        runs.setdefault((command, size, workers), []).append(took)
        print(f"load average after: {load()}\n")
        print(f"{'':<10} {'MiB':>5}  {'1 process':>9}  {'2 workers':>9}  {'ratio':>6}  runs (1 process; 2 workers)")
        for command in commands:
            wins = []
            for size in sizes:
                here, there = min(runs[command, size, 0]), min(runs[command, size, 2])
                wins.append(there < here)
                spread = "; ".join(", ".join(f"{s:.2f}" for s in runs[command, size, w]) for w in (0, 2))
                print(f"{command:<10} {size:>5}  {here:8.2f}s  {there:8.2f}s  {here / there:5.2f}x  ({spread})")
            from_ = next((size for k, size in enumerate(sizes) if all(wins[k:])), None)
            said = f"from {from_} MiB on" if from_ is not None else "at none of these sizes"
            print(f"{command:<10} 2 workers faster {said}\n")
    finally:
        shutil.rmtree(root, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
