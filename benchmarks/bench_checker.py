"""The transcript checker alone, per message, on each mix of ``bench_check.py``.

``pgm-explore check`` splits its work in two: Dask workers read, validate and extract the facts
of each message (``pgm_explore.dialogue._facts.item_facts``) partition by partition, and the
checking process feeds
them, in order, to :meth:`TranscriptChecker.feed_facts <pgm_explore.dialogue.TranscriptChecker>`
(issue 14: "the two cores are unbalanced"). This measures the second part on its own, so that a
mix that makes the command slower can be put down to one side or the other.

For each mix (``--mix``, as in ``bench_check.py``), it generates the transcript, extracts the
facts of every message once, and keeps them packed as a worker sends them
(``pgm_explore.dialogue._facts.packed_facts_batch``) in batches of about a partition (1,000
messages). Each measurement is then a fresh interpreter that unpacks batch after batch (a chunk
at a time, as ``check`` does) and feeds each chunk's messages, with their lines, to one new checker
(:meth:`~pgm_explore.dialogue.TranscriptChecker.feed_run`; ``feed_line`` a message at a time in a
checkout from before session 13), as the command does (a first pass:
what a transcript the size of the file meets, with no memory left over from an earlier pass to
reuse), and reports its CPU time (user + system) per message. The mixes alternate round by
round (``--rounds``), so that a machine busy for a while slows each alike; the median of each
mix counts, and its ratio to the ``scenarios`` mix, measured in the same run.

With ``--client W``, it measures instead the whole checking process of ``check_paths([path],
workers=W)`` on each mix: receiving the facts of each partition from the Dask workers (the
client's event loop, the scheduler it hosts), unpacking them, the rules and the findings. That
is its CPU time (user + system, ``RUSAGE_SELF``: the workers are processes of their own) for a
transcript of ``--messages`` more messages than a first one of 10,000, divided by them: the
start-up (imports, the cluster, the first partitions) cancels out. The two runs of a round
are made one after the other, round by round.

Run: ``.venv/bin/python benchmarks/bench_checker.py [--messages N] [--rounds R] [--mix M] [--client W]``.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import pickle
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

from bench_check import MIXES, OUT, generate

BATCH = 1000  # messages a batch: a partition of about 1 MiB (pgm_explore.io._partitions.PARTITION_BYTES)

_CHILD = """\
import pickle, resource, sys
from pgm_explore.dialogue import TranscriptChecker
from pgm_explore.dialogue._facts import fact_chunks
with open(sys.argv[1], "rb") as f:
    batches = pickle.load(f)
checker = TranscriptChecker(contexts=False)  # (as check makes it: findings only)
feed = getattr(checker, "feed_run", None)  # (a run of messages a call since session 13)
before = resource.getrusage(resource.RUSAGE_SELF)
for base, packed in batches:  # (the loops of pgm_explore.dialogue._facts.iter_facts and check_facts)
    numbers, start = packed.numbers, 0
    for facts in fact_chunks(packed):
        end = start + len(facts)
        if numbers[end - 1] - numbers[start] == end - 1 - start:  # (a range, as iter_facts gives consecutive lines)
            lines = range(base + numbers[start], base + numbers[start] + end - start)
        else:
            lines = [base + number for number in numbers[start:end]]
        if feed is not None:
            feed("t.jsonl:", lines, facts)
        else:
            for line, fact in zip(lines, facts):
                checker.feed_line("t.jsonl:", line, fact)
        start = end
checker.finish()
after = resource.getrusage(resource.RUSAGE_SELF)
seconds = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
sys.stdout.write(str(seconds) + "\\n")
"""


def facts_file(mix: str, count: int) -> Path:
    """The facts of ``count`` messages of ``mix``, in packed batches, pickled (made once for
    each version of the code that makes them: their form changes with it).
    (Each item keeps its line in the whole file: the base of every batch is 0.)"""
    from pgm_explore.dialogue import _facts  # (here: --client runs other checkouts too)
    from pgm_explore.dialogue._facts import packed_facts_batch
    from pgm_explore.io import iter_documents

    version = hashlib.sha256(Path(_facts.__file__).read_bytes()).hexdigest()[:12]
    path = OUT / f"packed-facts-{mix}-{count}-{version}.pickle"
    if path.exists():
        return path
    transcript = OUT / f"checker-{mix}-{count}.jsonl"
    generate(transcript, count, mix)
    items = list(iter_documents(transcript))
    batches = [(0, packed_facts_batch(iter(items[start : start + BATCH]))) for start in range(0, len(items), BATCH)]
    with path.open("wb") as out:
        pickle.dump(batches, out)
    transcript.unlink()
    return path


def cold_pass(path: Path) -> float:
    """CPU seconds of one checker over the facts in ``path``, in a fresh interpreter."""
    result = subprocess.run([sys.executable, "-c", _CHILD, str(path)], capture_output=True, check=True, text=True)
    return float(result.stdout.strip().splitlines()[-1])


_CLIENT = """\
import resource, sys
from pgm_explore.dialogue import check_paths
if __name__ == "__main__":  # (the local workers import this module again)
    for finding in check_paths([sys.argv[1]], workers=int(sys.argv[2])):
        pass
    used = resource.getrusage(resource.RUSAGE_SELF)
    sys.stdout.write(str(used.ru_utime + used.ru_stime) + "\\n")
"""

FIRST = 10_000
"""Messages of the first transcript of ``--client``, whose cost the longer one's loses."""


def client_pass(path: Path, workers: int) -> float:
    """CPU seconds of the checking process of ``check_paths([path], workers=workers)``."""
    with tempfile.TemporaryDirectory() as scratch:
        script = Path(scratch) / "client.py"
        script.write_text(_CLIENT, encoding="utf-8")
        result = subprocess.run(
            [sys.executable, str(script), str(path), str(workers)], capture_output=True, check=True, text=True
        )
    return float(result.stdout.strip().splitlines()[-1])


def client(mixes: list[str], count: int, rounds: int, workers: int) -> None:
    files = {}
    for mix in mixes:
        files[mix] = (OUT / f"client-{mix}-{FIRST}.jsonl", OUT / f"client-{mix}-{FIRST + count}.jsonl")
        for path, lines in zip(files[mix], (FIRST, FIRST + count), strict=True):
            if not path.exists():
                generate(path, lines, mix)
    times: dict[str, list[float]] = {mix: [] for mix in mixes}
    for _ in range(rounds):
        for mix, (short, long) in files.items():
            first = client_pass(short, workers)
            times[mix].append((client_pass(long, workers) - first) / count * 1e6)
    print(f"the checking process of check_paths(..., workers={workers}), CPU time a message, median of {rounds}:")
    for mix, found in times.items():
        print(f"{mix:<10} {statistics.median(found):6.2f} us  (rounds: {json.dumps([round(t, 2) for t in found])})")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--messages", type=int, default=100_000, help="messages per mix (default 100000)")
    parser.add_argument("--rounds", type=int, default=5, help="passes per mix, alternating (default 5)")
    parser.add_argument("--mix", default="all", help=f"mixes, comma-separated, of {', '.join(MIXES)}; or all")
    parser.add_argument("--client", type=int, metavar="W", help="measure the checking process with W local workers")
    args = parser.parse_args(argv)
    mixes = list(MIXES) if args.mix == "all" else args.mix.split(",")
    if unknown := set(mixes) - set(MIXES):
        parser.error(f"no mix {', '.join(sorted(unknown))}: the mixes are {', '.join(MIXES)}")
    OUT.mkdir(parents=True, exist_ok=True)
    if args.client:
        client(mixes, args.messages, args.rounds, args.client)
        return 0
    paths = {mix: facts_file(mix, args.messages) for mix in mixes}
    times: dict[str, list[float]] = {mix: [] for mix in mixes}
    for _ in range(args.rounds):
        for mix, path in paths.items():
            times[mix].append(cold_pass(path) / args.messages * 1e6)
    medians = {mix: statistics.median(found) for mix, found in times.items()}
    print(f"the checker alone (feed_run), CPU time a message, median of {args.rounds} fresh passes:")
    for mix, median in medians.items():
        against = f"  {median / medians['scenarios']:.2f}x scenarios" if "scenarios" in medians else ""
        spread = json.dumps([round(t, 2) for t in times[mix]])
        print(f"{mix:<10} {median:6.2f} us{against}  (passes: {spread})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
