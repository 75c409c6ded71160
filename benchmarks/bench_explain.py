"""What ``validate`` spends on a message by its kind: clean, warned, not conforming.

``bench_validate.py``'s file holds one message in 200 that does not conform (``_spoil``: four
mistakes in turn) and one in 100 with a consistency warning (``_warn``); explaining the first
(python-jsonschema, in plain words) costs many times a clean message. This writes a file of each
kind of that file's messages into ``benchmarks/out/`` (git-ignored), then measures the command
``pgm-explore validate --format json --workers 0`` over each (what a worker does with them, and
its client's work, in one process): CPU time a message, the best of ``--repeat`` passes after a
warm-up pass (python-jsonschema imported, the validators compiled), each kind in a new
interpreter.

With ``--source DIR`` (another checkout, such as ``git worktree add DIR COMMIT``) the same is
measured with that checkout's ``pgm_explore`` too, the two taking turns in new interpreters
``--rounds`` times (the best of each kept), and the output of the two is compared byte for byte:
a change that makes a kind cheaper must say the same.

With ``--start``, what the first message that does not conform costs a ``validate`` on two local
workers instead: in new interpreters taking turns ``--rounds`` times, two workers started as the
command starts them (``pgm_explore._engine.engine``) with each of three preloads of the forkserver,
and each worker asked to explain a message that does not conform; printed, from before the engine
is imported, when the cluster was up and when both explanations were in. The preloads: the
command's own (``pgm_explore.cli._validate.PRELOAD``: python-jsonschema with ``rfc3987_syntax``
deferred), python-jsonschema imported plainly (the command's preload up to session 14), and none
(each worker imports python-jsonschema at its first such message). Then, taking turns as well, the
command in one process over one message that does not conform, as its process's own command line
(``python -m pgm_explore validate``: python-jsonschema imported as the forkserver imports it) and
called by a program (``main([...])`` in ``python -c``: imported plainly), wall seconds.

Run: ``.venv/bin/python benchmarks/bench_explain.py [--messages N] [--repeat R] [--rounds K]
[--source DIR] [--start]``.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from bench_validate import OUT, _spoil, _warn, message

ROOT = Path(__file__).resolve().parents[1]

_MEASURE = """\
import contextlib, gc, hashlib, io, json, sys, time
from pgm_explore.cli import main

path, repeat = sys.argv[1], int(sys.argv[2])
def once():
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        main(["validate", "--format", "json", "--workers", "0", path])
    return out.getvalue()
text = once()
best = float("inf")
for _ in range(repeat):
    gc.collect()
    start = time.process_time()
    once()
    best = min(best, time.process_time() - start)
print(json.dumps({"cpu": best, "digest": hashlib.sha256(text.encode()).hexdigest()}))
"""


_PRELOADS = {
    "the command's": None,  # (PRELOAD, read in the child)
    "python-jsonschema plainly": ["pgm_explore.cli._validate", "jsonschema"],
    "none": ["pgm_explore.cli._validate"],
}


def _explain_one() -> int:
    """Run on each worker: explain a message that does not conform."""
    from pgm_explore.validation import validate

    return len(validate({"Header": "PGM-KDA-V1.0", "Mode": "RQ"}).findings)


def start_child(name: str) -> None:
    """One run of ``--start`` (in a new interpreter): prints (cluster up, explained) in seconds."""
    began = time.perf_counter()
    from pgm_explore._engine import engine
    from pgm_explore.cli._validate import PRELOAD

    preload = _PRELOADS[name] or PRELOAD
    with engine(2, preload=preload) as workers:
        up = time.perf_counter() - began
        found = workers.client.run(_explain_one)  # type: ignore[attr-defined]  # (a Dask engine)
        explained = time.perf_counter() - began
    assert sorted(found.values()) == [9, 9], found
    print(json.dumps([up, explained]))


def compare_starts(rounds: int) -> None:
    times: dict[str, list[tuple[float, float]]] = {name: [] for name in _PRELOADS}
    for _ in range(rounds):
        for name in _PRELOADS:
            done = subprocess.run(
                [sys.executable, __file__, "--start-child", name],
                capture_output=True,
                text=True,
                check=True,
                cwd=OUT,
                env={key: value for key, value in os.environ.items() if key != "PYTHONPATH"},
            )
            up, explained = json.loads(done.stdout.strip().splitlines()[-1])
            times[name].append((up, explained))
    print(f"{'preload of the forkserver':28} {'cluster up (best, median)':>26} {'both explained (best, median)':>31}")
    for name, runs in times.items():
        ups = sorted(up for up, _ in runs)
        ends = sorted(end for _, end in runs)
        print(f"{name:28} {ups[0]:17.2f} s {ups[len(ups) // 2]:5.2f} s {ends[0]:22.2f} s {ends[len(ends) // 2]:5.2f} s")
    one = OUT / "explain-one.jsonl"
    one.write_text('{"Header": "PGM-KDA-V1.0", "Mode": "RQ"}\n', encoding="utf-8")
    argv = ["validate", "--format", "json", "--workers", "0", str(one)]
    ways = {
        "its own command line": ["-m", "pgm_explore", *argv],
        "called by a program": ["-c", f"import sys; from pgm_explore.cli import main; sys.exit(main({argv!r}))"],
    }
    walls: dict[str, list[float]] = {name: [] for name in ways}
    for _ in range(rounds):
        for name, args in ways.items():
            began = time.perf_counter()
            subprocess.run([sys.executable, *args], stdout=subprocess.DEVNULL, check=False, cwd=OUT)
            walls[name].append(time.perf_counter() - began)
    one.unlink()
    print(f"{'validate in one process':28} {'one message explained (best, median)':>58}")
    for name, seconds in walls.items():
        seconds.sort()
        print(f"{name:28} {seconds[0]:49.2f} s {seconds[len(seconds) // 2]:5.2f} s")


def kinds(count: int) -> dict[str, list[dict[str, Any]]]:
    """``count`` messages of each kind, as ``bench_validate.py`` makes them."""
    wrong = [_spoil(message(n), n) for n in range(199, 199 + 200 * count, 200)]
    warned: list[dict[str, Any]] = []
    n = 3
    while len(warned) < count:  # (only an answered BKN-DAC Response takes the warning)
        plain = message(n)
        if (changed := _warn(plain)) is not plain:
            warned.append(changed)
        n += 100
    clean = [message(n) for n in range(count * 2) if n % 200 != 199 and n % 100 != 3][:count]
    return {"clean": clean, "warned": warned, "not conforming": wrong}


def write(path: Path, messages: list[dict[str, Any]]) -> None:
    with path.open("w", encoding="utf-8") as out:
        for msg in messages:
            out.write(json.dumps(msg, ensure_ascii=False))
            out.write("\n")


def measure(path: Path, repeat: int, source: Path) -> tuple[float, str]:
    """(best CPU seconds of a pass, digest of the output) in a new interpreter with ``source``'s pgm_explore."""
    done = subprocess.run(
        [sys.executable, "-c", _MEASURE, str(path), str(repeat)],
        capture_output=True,
        text=True,
        check=True,
        cwd=path.parent,  # (not ROOT: python -c puts the working folder first on sys.path)
        env={**os.environ, "PYTHONPATH": str(source), "PGM_EXPLORE_PARALLEL": "0"},
    )
    got = json.loads(done.stdout.strip().splitlines()[-1])
    return got["cpu"], got["digest"]


def rounds(count: int, sources: list[Path], path: Path, repeat: int) -> Iterator[tuple[float, str]]:
    for _ in range(count):
        for source in sources:
            yield measure(path, repeat, source)


def main_(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--messages", type=int, default=2000, help="messages of each kind (default 2000)")
    parser.add_argument("--repeat", type=int, default=5, help="passes in each interpreter (default 5)")
    parser.add_argument("--rounds", type=int, default=3, help="interpreters for each checkout (default 3)")
    parser.add_argument("--source", type=Path, help="another checkout to compare with")
    parser.add_argument("--start", action="store_true", help="the workers' start and first explanation instead")
    parser.add_argument("--start-child", choices=tuple(_PRELOADS), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.start_child:
        start_child(args.start_child)
        return 0
    OUT.mkdir(parents=True, exist_ok=True)
    if args.start:
        compare_starts(args.rounds)
        return 0
    sources = [ROOT] + ([args.source.resolve()] if args.source else [])
    head = f"{'kind':15} {'µs a message':>13}"
    if args.source:
        head += f" {'of ' + args.source.name:>14} {'ratio':>6} {'same output':>11}"
    print(head)
    same_everywhere = True
    for kind, messages in kinds(args.messages).items():
        path = OUT / f"explain-{kind.replace(' ', '-')}.jsonl"
        write(path, messages)
        best = [float("inf")] * len(sources)
        digests: list[set[str]] = [set() for _ in sources]
        for turn, (cpu, digest) in enumerate(rounds(args.rounds, sources, path, args.repeat)):
            which = turn % len(sources)
            best[which] = min(best[which], cpu)
            digests[which].add(digest)
        line = f"{kind:15} {best[0] / len(messages) * 1e6:13.1f}"
        if args.source:
            same = digests[0] == digests[1] and len(digests[0]) == 1
            same_everywhere &= same
            line += f" {best[1] / len(messages) * 1e6:14.1f} {best[1] / best[0]:6.2f} {'yes' if same else 'NO':>11}"
        print(line)
        path.unlink()
    if args.source:
        print(
            f"(ratio: the other checkout's CPU a message over this one's; outputs compared by SHA-256: "
            f"{'the same' if same_everywhere else 'THEY DIFFER'})"
        )
    return 0 if same_everywhere else 1


if __name__ == "__main__":
    sys.exit(main_())
