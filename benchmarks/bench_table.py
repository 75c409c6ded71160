"""``pgm-explore table`` of one big transcript: its speed against ``json.loads``, and its peak memory.

Each table is made as the transcript's messages are read, keeping its rows and no message
(``pgm_explore.analysis._tabulation``), from the bulk reading path (``path_table``): so its memory
follows its rows (``pastatus`` and ``outcomes``: a few counts; ``messages``: a row a message), not
the messages. This prints, for each table asked (``--tables``), the command run as a user runs it,
``python -m pgm_explore table WHAT FILE`` in a new process with its output sent to ``os.devnull``:
its seconds and CPU seconds, its messages a second and their ratio to ``json.loads`` over the same
file (in a new interpreter of its own, ``bench_check.fresh_json``), and its peak resident set size
(``VmHWM``, told by the process itself at its end), beside the peak of the same table of a
13-message transcript (the interpreter, pandas and the compiled schemas): what the rows add.

With ``--compare DIR`` (another checkout, e.g. ``git worktree add /tmp/old v0.1.0``), each table is
also run from that checkout's code (``python -m pgm_explore`` with DIR as the working directory, so its
package is the one imported), the two taking turns round by round, and the ratios of the two are
printed: the same file, the same machine, one run. The transcript is the ``short`` mix of
``bench_check.py`` (every scenario but long-deliberation, about 1 KB a message).

Run: ``.venv/bin/python benchmarks/bench_table.py [--messages N] [--tables T,T] [--repeat R] [--compare DIR]``.
Each figure is the best of R rounds (default 2).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

from bench_check import MB, fresh_json, generated

ROOT = Path(__file__).resolve().parents[1]
SMALL = ROOT / "data" / "transcripts" / "commitments.jsonl"


class Run:
    """One ``table`` command's seconds, CPU seconds and peak memory (bytes)."""

    def __init__(self, seconds: float, cpu: float, peak: int) -> None:
        self.seconds, self.cpu, self.peak = seconds, cpu, peak


_COMMAND = """\
import atexit, runpy, sys

def peak():  # (the process's own peak: ru_maxrss of a child holds its parent's from the fork)
    with open("/proc/self/status") as status:
        line = next(line for line in status if line.startswith("VmHWM:"))
    sys.stderr.write(f"peak-kB {line.split()[1]}\\n")

atexit.register(peak)
sys.argv = ["pgm-explore", *sys.argv[1:]]
runpy.run_module("pgm_explore", run_name="__main__", alter_sys=True)
"""
"""``python -m pgm_explore ARGS`` (the package found from the working directory), telling its peak
resident set size (``VmHWM``) from an ``atexit`` hook, which the command runs before it ends."""


def run_table(what: str, path: Path, cwd: Path = ROOT) -> Run:
    """``python -m pgm_explore table WHAT PATH`` in a new process (from the checkout ``cwd``)."""
    with open(os.devnull, "wb") as sink:
        started = time.perf_counter()
        child = subprocess.Popen(
            [sys.executable, "-c", _COMMAND, "table", what, str(path)], stdout=sink, stderr=subprocess.PIPE, cwd=cwd
        )
        assert child.stderr is not None
        with child.stderr:
            said = child.stderr.read().decode(errors="replace")
        _, status, usage = os.wait4(child.pid, 0)  # (its own CPU time: Popen.wait gives none)
        seconds = time.perf_counter() - started
    code = child.returncode = os.waitstatus_to_exitcode(status)
    peaks = [line.split()[1] for line in said.splitlines() if line.startswith("peak-kB ")]
    if code != 0 or not peaks:
        raise SystemExit(f"table {what} {path} (from {cwd}) ended with status {code}: {said}")
    return Run(seconds, usage.ru_utime + usage.ru_stime, int(peaks[-1]) * 1024)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--messages", type=int, default=200_000)
    parser.add_argument("--tables", default="pastatus,messages")
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--compare", type=Path, help="another checkout, run from its own code beside this one")
    args = parser.parse_args(argv)
    tables = args.tables.split(",")
    path = generated(args.messages, "short")
    count = args.messages
    print(f"load average before: {os.getloadavg()[0]:.2f}")
    runners: dict[str, Path] = {"this": ROOT}
    if args.compare is not None:
        runners["compared"] = args.compare.resolve()
    best: dict[tuple[str, str], Run] = {}
    loads = float("inf")
    for _ in range(args.repeat):
        loads = min(loads, fresh_json(path)[0])
        for what in tables:
            for who, cwd in runners.items():
                got = run_table(what, path, cwd)
                kept = best.get((what, who))
                if kept is None or got.seconds < kept.seconds:
                    best[what, who] = got if kept is None else Run(got.seconds, got.cpu, max(got.peak, kept.peak))
                elif got.peak > kept.peak:
                    kept.peak = got.peak
    print(f"json.loads over {count:,} messages: {loads:.2f} s ({count / loads:,.0f} msg/s)")
    for what in tables:
        small = run_table(what, SMALL)
        for who in runners:
            got = best[what, who]
            print(
                f"table {what:<12} {who:<8} {got.seconds:7.2f} s  CPU {got.cpu:7.2f} s  "
                f"{count / got.seconds:9,.0f} msg/s  {loads / got.seconds:.2f} of json.loads  "
                f"peak {got.peak / MB:7.1f} MB ({small.peak / MB:.1f} MB for 13 messages)"
            )
        if "compared" in runners:
            this, other = best[what, "this"], best[what, "compared"]
            print(
                f"table {what:<12} this / compared: speed {other.seconds / this.seconds:.2f}, "
                f"peak memory {this.peak / other.peak:.2f}"
            )
    print(f"load average after: {os.getloadavg()[0]:.2f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
