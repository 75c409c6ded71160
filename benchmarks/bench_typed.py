"""The typed reading path, part by part, counted in machine instructions (callgrind).

Issue 20 asked for the verdict of a message to come from msgspec types compiled from the schemas
(``pgm_explore.validation._typed``) and left three ways to feed the consistency rules and the
transcript facts, which read dicts: (a) the typed decode, then ``msgspec.to_builtins`` for them;
(b) teaching them to read the Structs; (c) the plain decode, then the typed types as the verdict
only (``msgspec.convert``). This counts, per message of a ``bench_check.py`` mix, the instructions
of the reading and the verdict each way, beside ``json.loads``:

- ``old``: the plain decode, the duplicate-name check (``_noted``) and jsonschema-rs (``is_clean``),
  as the reading path was before the typed types;
- ``(c)``: the plain decode, ``_noted`` and ``msgspec.convert`` against the typed types;
- ``(a)``: ``read_clean``, which the reading path uses: the typed decode, the text written back and
  compared (no name twice, nothing read otherwise), ``to_builtins``;
- ``typed decode`` and ``to_builtins`` alone: the parts of (a); (b) would save at most the second;
- ``read_clean_typed``: what the bulk paths call, (a) without ``to_builtins``: the typed decode, the
  text written back and compared.

With ``--spaced`` the mix's lines are written as Python's json module writes them (``", "`` and
``": "``, as ``bench_validate.py``'s file is), so that the typed read compares them spaced. With
``--source DIR`` only ``json.loads`` and the typed read (``read_clean_typed``) are counted, the
latter of this checkout and of another one.

Each is counted as ``bench_instructions.py`` counts (the difference of two runs, over the warm-up
and over the warm-up and the messages, divided by the messages), less the same count for the
setup alone (reading the lines, telling their data types), the same on every run.

Run: ``.venv/bin/python benchmarks/bench_typed.py [--mix M] [--messages N] [--warm-up W] [--spaced]
[--source DIR]``. Needs
``valgrind``; about a minute.

With ``--typed-share`` it counts nothing but prints, for every mix of ``bench_check.py``, the file of
``bench_validate.py`` and a corpus of small files (``bench_corpus.py``'s 10 messages a file, one
producer), the share of lines the bulk paths' reader (``iter_documents(..., typed=True)``) reads on
the typed path, and of the others, by data type and Mode, how many are clean (refused for the way they
are written: an order of names not taught, say) and how many are not (the typed types refuse them
rightly). No valgrind needed; seconds.
"""

from __future__ import annotations

import argparse
import collections
import json
import shutil
import sys
import tempfile
from pathlib import Path

from bench_check import OUT, generate, interleaved, templates
from bench_instructions import ROOT, per_message

_SETUP = """\
import sys, json, msgspec
from pgm_explore.io._read import _decode_fast, _noted
from pgm_explore.spec import HEADERS
from pgm_explore.validation import _advisory, _typed
lines = open(sys.argv[1], "rb").read().splitlines(keepends=True)
kinds = []
for line in lines:
    document = json.loads(line)
    dt = HEADERS[document["Header"]]
    kinds.append((dt, document.get("Mode") if dt.modes else None))
made = {kind: _typed._schema_decoder(*kind, True) for kind in set(kinds)}  # (the fast twin, as the reader decodes)
decoders = [made[kind] for kind in kinds]
for dt, _ in kinds:
    _advisory.is_clean(dt, {})  # (the validators compiled before counting)
"""

SUBJECTS = {
    "setup": "pass",
    "json.loads": "for line in lines: json.loads(line)",
    "old": "for line, (dt, mode) in zip(lines, kinds):\n"
    "    document = _decode_fast(line); _noted(line, document); _advisory.is_clean(dt, document)",
    "(c)": "for line, (dt, mode) in zip(lines, kinds):\n"
    "    document = _decode_fast(line); _noted(line, document); _typed.is_clean_typed(dt, mode, document)",
    "(a) read_clean": "for line in lines: _typed.read_clean(line)",
    "read_clean_typed": "for line in lines: _typed.read_clean_typed(line)",
    "typed decode": "for decode, line in zip(decoders, lines): decode(line)",
    "to_builtins": "for decode, line in zip(decoders, lines): msgspec.to_builtins(decode(line))",
}


def typed_share(messages: int) -> None:
    """The share of lines the typed reader takes on each file (see the module's text)."""
    import bench_validate

    from pgm_explore.io._read import CLEAN, iter_documents, one_producer
    from pgm_explore.spec import HEADERS
    from pgm_explore.validation._advisory import is_clean

    def report(name: str, paths: list[Path]) -> None:
        taken = 0
        refused: collections.Counter[tuple[str, str, object]] = collections.Counter()
        with one_producer():  # (a corpus's files are one producer's, as `check --corpus` reads them)
            items = [item for path in paths for item in iter_documents(path, typed=True)]
        for item in items:
            if item.notes is CLEAN:
                taken += 1
                continue
            document = item.document
            header = document.get("Header") if isinstance(document, dict) else None
            dt = HEADERS.get(header) if isinstance(header, str) else None  # (a list Header cannot be looked up)
            mode = document.get("Mode") if dt is not None and dt.modes else None
            clean = dt is not None and not item.problem and not item.notes and is_clean(dt, document)
            refused["clean" if clean else "not clean", dt.acronym if dt else "?", mode] += 1
        print(f"{name:24} {len(items):8,} lines  typed {taken / len(items):6.1%}", end="")
        print("".join(f"  {k[0]} {k[1]}{' ' + str(k[2]) if k[2] else ''}: {n:,}" for k, n in sorted(refused.items())))

    with tempfile.TemporaryDirectory(dir=OUT) as folder:
        for mix in ("short", "scenarios", "long", "open"):
            path = Path(folder) / f"{mix}.jsonl"
            generate(path, messages, mix)
            report(f"bench_check {mix}", [path])
        path = Path(folder) / "validate.jsonl"
        bench_validate.generate(path, messages)
        report("bench_validate", [path])
        scenarios = templates("scenarios")
        paths = []
        for number in range(messages // 10):
            path = Path(folder) / f"corpus-{number:06d}.jsonl"
            path.write_bytes(
                b"".join(interleaved(scenarios, 10, at_once=8, first=number * 10))
            )  # (as bench_corpus.py numbers them)
            paths.append(path)
        report("corpus, 10 a file", paths)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mix", default="short", help="the bench_check.py mix (default short)")
    parser.add_argument("--messages", type=int, default=3000, help="messages counted (default 3000)")
    parser.add_argument("--warm-up", type=int, default=1000, help="messages before them (default 1000)")
    parser.add_argument("--typed-share", action="store_true", help="print the share of lines read typed, no counts")
    parser.add_argument("--spaced", action="store_true", help="the lines spaced as Python's json module writes them")
    parser.add_argument("--source", type=Path, help="another checkout whose read_clean_typed is counted as well")
    args = parser.parse_args(argv)
    if args.typed_share:
        typed_share(args.messages if args.messages != parser.get_default("messages") else 20_000)
        return 0
    if shutil.which("valgrind") is None:
        print("valgrind is not on the PATH: nothing counted")
        return 1
    whole = OUT / f"typed-{args.mix}.jsonl"
    generate(whole, args.warm_up + args.messages, args.mix)
    lines = whole.read_bytes().splitlines(keepends=True)
    if args.spaced:
        lines = [json.dumps(json.loads(line), ensure_ascii=False).encode() + b"\n" for line in lines]
        whole.write_bytes(b"".join(lines))
    short = OUT / f"typed-{args.mix}-warm-up.jsonl"
    short.write_bytes(b"".join(lines[: args.warm_up]))
    written = "spaced" if args.spaced else "compact"
    print(f"instructions a message of the {args.mix} mix ({written}), over {args.messages:,} messages")
    subjects = (
        {name: SUBJECTS[name] for name in ("setup", "json.loads", "read_clean_typed")} if args.source else SUBJECTS
    )
    counts = {name: per_message(_SETUP + code, short, whole, args.messages, ROOT) for name, code in subjects.items()}
    setup = counts.pop("setup")  # (reading the lines and telling their kinds: not what is counted)
    counts = {name: count - setup for name, count in counts.items()}
    if "to_builtins" in counts:
        counts["to_builtins"] -= counts["typed decode"]  # (counted with the decode that makes its Structs)
    base = counts["json.loads"]
    for name, count in counts.items():
        print(f"{name:16} {count:9,.0f}  {count / base:5.2f} of json.loads")
    if args.source:
        source = args.source.resolve()
        other = per_message(_SETUP + SUBJECTS["read_clean_typed"], short, whole, args.messages, source)
        other -= per_message(_SETUP + SUBJECTS["setup"], short, whole, args.messages, source)
        ours = counts["read_clean_typed"]
        print(f"read_clean_typed of {source.name}: {other:,.0f}; this one {ours:,.0f} ({ours / other:.3f} of it)")
    short.unlink()
    whole.unlink()
    return 0


if __name__ == "__main__":
    sys.exit(main())
