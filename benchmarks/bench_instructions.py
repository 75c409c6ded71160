"""The work of checking a message, counted in machine instructions: the same on every run.

``bench_check.py`` times ``check`` against ``json.loads``, and on a shared machine a busy
neighbour can move its ratios by 0.1 from one run to the next (it says when its yardstick's
own passes were that far apart). To compare two versions of the code, this counts what does not
move: the instructions the CPU executes, with valgrind's callgrind, for ``json.loads`` and for
the library's check on one core (``check_paths(..., parallel=False)``: reading, validation, the
facts and the transcript rules; the two-core path does the same work, split in two) over the
messages of each mix of ``bench_check.py``.

Each subject runs twice in a fresh interpreter under valgrind: over the first ``--warm-up``
messages, and over those and ``--messages`` more; the difference, divided by ``--messages``, is
the work of one message once the interpreter, the imports, the compiled schemas and the open
dialogues of the mix are in place. Instructions are not time: the check executes fewer
instructions per cycle than the JSON parser (about half: it chases more pointers), so the
ratio printed here is higher than the time ratio. It is for comparing commits, not for claims
about speed.

With ``--subject validate`` the library's ``validate`` is counted instead of the check
(``iter_reports(..., parallel=False)``: reading and validation only), over the same messages;
with ``--subject command``, the command ``pgm-explore validate --format json --workers 0`` (its
output thrown away): what the workers of a ``validate`` on workers do, and its client's work,
in one process; with ``--subject facts``, what a worker of a ``check`` does with a partition
(``work_on_partition`` with the check's packed batch over the whole file: reading, validation,
the facts of each message, packing them; code of session 12 on); with ``--subject checker``, what
the checking process of a ``check`` on workers does with their results (the facts of each message
packed as the workers send them, made once beforehand by each checkout's own code, as the form
of the facts may differ between two: unpacking them and the transcript rules, :meth:`~pgm_explore.dialogue.TranscriptChecker.feed_run`); with ``--subject
judged``, a check worker's partition read and judged with no facts read or packed (``facts`` less
``judged`` is what the facts and their packing cost a message); with ``--subject read``, the same
with nothing done with the Struct of a clean line (``judged`` less ``read`` is what the consistency
rules cost a message, ``clean_fields``); with ``--subject worker``, what a worker of ``validate``
does with a partition (``work_on_partition`` with the command's ``Writer`` over the whole file:
reading, validation, the output of each message; ``command`` less ``worker`` is the client's work
and the command's own).

With ``--file PATH`` the lines counted are the first of that JSON Lines file instead of a mix's
(``--warm-up`` and ``--messages`` of them): ``benchmarks/out/bench-100000.jsonl``, say, the spaced
messages ``bench_validate.py`` writes and times, whose typed read costs more than a compact line's.

With ``--source DIR`` (another checkout, such as a ``git worktree`` of an earlier commit) the
same counts are made with that checkout's ``pgm_explore`` too, and the last column is its check
against this one's (above 1: that checkout does more work a message).

Run: ``.venv/bin/python benchmarks/bench_instructions.py [--mix M | --file PATH] [--messages N] [--warm-up W]
[--subject check|validate|command|worker|facts|checker|judged|read] [--source DIR]``. Needs ``valgrind`` on the PATH; about 40 s a mix (twice that with ``--source``).
The messages counted are written in a folder of the run's own under ``benchmarks/out`` (two runs at
once from one checkout keep theirs apart), removed when the run ends.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
from itertools import islice
from pathlib import Path

from bench_check import MIXES, OUT, generate

ROOT = Path(__file__).resolve().parents[1]

_JSON = """\
import json, sys
with open(sys.argv[1], "rb") as lines:
    for line in lines:
        json.loads(line)
"""

_CHECK = """\
import sys
from pgm_explore.dialogue import check_paths
for finding in check_paths([sys.argv[1]], parallel=False):
    pass
"""

_VALIDATE = """\
import sys
from pgm_explore.io import iter_reports
for report in iter_reports(sys.argv[1], parallel=False):
    pass
"""

_COMMAND = """\
import contextlib, os, sys
from pgm_explore.cli import main
with open(os.devnull, "w") as sink, contextlib.redirect_stdout(sink):
    main(["validate", "--format", "json", "--workers", "0", sys.argv[1]])
"""

_WORKER = """\
import sys
from functools import partial
from pgm_explore.cli._validate import Writer
from pgm_explore.io import Pushed
from pgm_explore.io._partitions import Partition, work_on_partition
work_on_partition(Pushed(partial(Writer, "json", None, sys.argv[1])), Partition(sys.argv[1], 0, None))
"""

_FACTS = """\
import sys
from pgm_explore.dialogue._facts import _Packed
from pgm_explore.io import Pushed
from pgm_explore.io._partitions import Partition, work_on_partition
work_on_partition(Pushed(_Packed), Partition(sys.argv[1], 0, None))
"""

_CHECKER = """\
import pickle, sys
from pgm_explore.dialogue import TranscriptChecker
from pgm_explore.dialogue._facts import fact_chunks
with open(sys.argv[1], "rb") as f:
    batches = pickle.load(f)
checker = TranscriptChecker(contexts=False)
feed = getattr(checker, "feed_run", None)
for numbers, packed in batches:
    start = 0
    for facts in fact_chunks(packed):
        end = start + len(facts)
        if numbers[end - 1] - numbers[start] == end - 1 - start:  # (a range, as iter_facts gives consecutive lines)
            lines = range(numbers[start], numbers[end - 1] + 1)
        else:
            lines = numbers[start:end]
        if feed is not None:
            feed("t.jsonl:", lines, facts)
        else:  # (a checkout from before session 13: a message a call)
            for line, fact in zip(lines, facts):
                checker.feed_line("t.jsonl:", line, fact)
        start = end
checker.finish()
"""

# (The same partition judged as for a check, with no facts read or packed: what ``facts``
# counts beyond it is the facts and their packing.)
_JUDGED = """\
import sys
from pgm_explore.io import Pushed, report_fields
from pgm_explore.io._partitions import Partition, work_on_partition
from pgm_explore.validation import clean_fields

class Judged:
    def typed(self, line, way, value):
        clean_fields(way, value)

    def item(self, item):
        report_fields(item)

    def cut(self):
        return None

work_on_partition(Pushed(Judged), Partition(sys.argv[1], 0, None))
"""

# (The same, with nothing done with a clean line's Struct: what ``judged`` counts beyond it is
# what the consistency rules cost the clean lines, ``clean_fields``.)
_READ = _JUDGED.replace("        clean_fields(way, value)", "        pass")
assert _READ != _JUDGED, "the judged subject no longer calls clean_fields as read expects"

_CODES = {
    "check": _CHECK,
    "validate": _VALIDATE,
    "command": _COMMAND,
    "worker": _WORKER,
    "facts": _FACTS,
    "checker": _CHECKER,
    "judged": _JUDGED,
    "read": _READ,
}


_PACK = """\
import pickle, sys
from pgm_explore.dialogue._facts import packed_facts_batch
from pgm_explore.io import iter_documents
items = list(iter_documents(sys.argv[1]))
batches = [
    (list(range(start + 1, start + 1 + len(items[start : start + 1000]))), packed_facts_batch(iter(items[start : start + 1000])))
    for start in range(0, len(items), 1000)
]
with open(sys.argv[2], "wb") as out:
    pickle.dump(batches, out)
"""


def packed_facts(path: Path, source: Path, number: int) -> Path:
    """The facts of the messages of ``path`` as a check's workers send them back (packed, in
    batches of 1,000 messages) with ``source``'s code, pickled beside it (``number``: the
    source's place, in the name): what the checking process of that checkout is given. (Each
    checkout packs its own: the form of the facts may differ between two.)"""
    pickled = path.with_suffix(f".facts-{number}.pickle")
    subprocess.run(
        [sys.executable, "-c", _PACK, str(path), str(pickled)],
        check=True,
        cwd=path.parent,  # (not ROOT: python -c puts the working folder first on sys.path)
        env={**os.environ, "PYTHONPATH": str(source), "PGM_EXPLORE_PARALLEL": "0"},
    )
    return pickled


_COLLECTED = re.compile(r"Collected\s*:\s*(\d+)")


def instructions(code: str, path: Path, source: Path) -> int:
    """The instructions executed by ``python -c code path``, with ``source``'s pgm_explore."""
    with tempfile.TemporaryDirectory() as scratch:
        result = subprocess.run(
            [
                "valgrind",
                "--tool=callgrind",
                f"--callgrind-out-file={scratch}/out",
                sys.executable,
                "-c",
                code,
                str(path),
            ],
            capture_output=True,
            text=True,
            check=False,
            cwd=scratch,  # (not ROOT: python -c puts the working folder first on sys.path)
            # (one hash seed: string hashes decide where a dictionary probes, and so the count)
            env={**os.environ, "PYTHONPATH": str(source), "PGM_EXPLORE_PARALLEL": "0", "PYTHONHASHSEED": "0"},
        )
    found = _COLLECTED.findall(result.stderr)
    if result.returncode != 0 or not found:
        raise SystemExit(f"valgrind failed ({result.returncode}):\n{result.stderr[-2000:]}")
    return int(found[-1])


def per_message(code: str, short: Path, long: Path, count: int, source: Path) -> float:
    return (instructions(code, long, source) - instructions(code, short, source)) / count


def _first_lines(path: Path, count: int) -> bytes:
    """The first ``count`` lines of ``path``; the run stops with a word if it has fewer."""
    with path.open("rb") as lines:
        taken = list(islice(lines, count))
    if len(taken) < count:
        raise SystemExit(f"{path} has {len(taken):,} lines, fewer than the {count:,} to count")
    return b"".join(taken)


def main_(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mix", default="all", help=f"mixes, comma-separated, of {', '.join(MIXES)}; or all")
    parser.add_argument("--messages", type=int, default=3000, help="messages counted (default 3000)")
    parser.add_argument("--warm-up", type=int, default=2000, help="messages before them (default 2000)")
    parser.add_argument(
        "--file",
        type=Path,
        help="count the first lines of this JSON Lines file instead of the mixes "
        "(e.g. benchmarks/out/bench-100000.jsonl, which bench_validate.py writes)",
    )
    parser.add_argument("--source", type=Path, help="another checkout to count as well")
    parser.add_argument("--subject", choices=tuple(_CODES), default="check", help="what is counted (default check)")
    args = parser.parse_args(argv)
    if shutil.which("valgrind") is None:
        print("valgrind is not on the PATH: nothing counted")
        return 1
    mixes = list(MIXES) if args.mix == "all" else args.mix.split(",")
    if args.file is not None:
        mixes = [args.file.stem]
        taken = _first_lines(args.file, args.warm_up + args.messages)
    sources = [ROOT] + ([args.source.resolve()] if args.source else [])
    print(f"instructions a message, after {args.warm_up:,} messages, over {args.messages:,} more")
    subject, code = args.subject, _CODES[args.subject]
    head = f"{'mix':10} {'json.loads':>11} {subject:>9} {'ratio':>6}"
    if args.source:
        head += f" {subject + ' of ' + args.source.name:>23} {'vs this':>8}"
    print(head)
    OUT.mkdir(parents=True, exist_ok=True)
    # A folder of this run's own: two runs from one checkout (say, one with --source) do not write
    # over each other's files; removed at the end, on an error or Ctrl-C too.
    with tempfile.TemporaryDirectory(prefix="instructions-", dir=OUT) as folder:
        for mix in mixes:
            whole = Path(folder) / f"instructions-{mix}.jsonl"
            if args.file is not None:
                whole.write_bytes(taken)
            else:
                generate(whole, args.warm_up + args.messages, mix)
            lines = whole.read_bytes().splitlines(keepends=True)
            short, long = whole.with_name(f"instructions-{mix}-warm-up.jsonl"), whole
            short.write_bytes(b"".join(lines[: args.warm_up]))
            json_work = per_message(_JSON, short, long, args.messages, ROOT)
            if subject == "checker":  # (the facts made once for each checkout, by its own workers' code)
                checks = [
                    per_message(
                        code, packed_facts(short, source, n), packed_facts(long, source, n), args.messages, source
                    )
                    for n, source in enumerate(sources)
                ]
            else:
                checks = [per_message(code, short, long, args.messages, source) for source in sources]
            row = f"{mix:10} {json_work:11,.0f} {checks[0]:9,.0f} {json_work / checks[0]:6.2f}"
            if args.source:
                row += f" {checks[1]:23,.0f} {checks[1] / checks[0]:8.3f}"
            print(row, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main_())
