"""What noticing names written twice costs the bulk reader, measured in one run.

RFC 8259 lets a name appear twice in one object, and msgspec and the json module keep the
last value without a word; ``pgm_explore.validation._parse.duplicate_keys`` says so, by
comparing the colons of the text with those of the value written out again (reading the
text a second time only when they differ), and the reader (``pgm_explore.io._read._noted``)
first sees whether the value written out again is the very text. This script measures, on
the messages of ``bench_validate.py`` (about 1 KB each, as JSON Lines), per message:

1. msgspec's decode alone (what the reader did before it noticed names written twice),
2. decode and ``duplicate_keys`` (the colons counted),
3. decode and the reader's check (the text compared first),
4. the whole reader, ``iter_documents`` over the file,

the passes taking turns so that load from other work slows them alike, and prints the
cost of the check as a share of the decode and of the reader.

Run: ``.venv/bin/python benchmarks/bench_reading.py [--messages N] [--repeat R]``.
"""

from __future__ import annotations

import argparse
import json
import sys

import msgspec
from bench_validate import OUT, best_in_turn, messages

from pgm_explore.io._read import _noted, iter_documents
from pgm_explore.validation._parse import duplicate_keys


def main_(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=50_000, help="messages (default 50000)")
    parser.add_argument("--repeat", type=int, default=7, help="passes per measurement; the best counts (default 7)")
    args = parser.parse_args(argv)
    path = OUT / f"reading-{args.messages}.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(m, ensure_ascii=False) + "\n" for m in messages(args.messages)))
    lines = path.read_bytes().splitlines(keepends=True)
    decode = msgspec.json.Decoder().decode
    values = [decode(line) for line in lines]
    assert not any(duplicate_keys(line, value) for line, value in zip(lines, values, strict=True))

    def decoding() -> None:
        for line in lines:
            decode(line)

    def checking() -> None:
        for line in lines:
            duplicate_keys(line, decode(line))

    def noting() -> None:
        for line in lines:
            _noted(line, decode(line))

    def reading() -> None:
        for _ in iter_documents(path):
            pass

    plain, checked, noted, reader = best_in_turn(args.repeat, decoding, checking, noting, reading)
    per = 1e6 / len(lines)
    cost = noted - plain
    print(f"file: {path} ({len(lines):,} messages, {len(path.read_bytes()) / len(lines):,.0f} bytes each)")
    print(f"decode                        {plain * per:6.2f} µs a message")
    print(f"decode + duplicate_keys       {checked * per:6.2f} µs a message")
    print(f"decode + the reader's check   {noted * per:6.2f} µs a message")
    print(f"iter_documents (the reader)   {reader * per:6.2f} µs a message")
    print(f"duplicate_keys / decode = {(checked - plain) / plain:.2f}")
    print(f"the check / decode  = {cost / plain:.2f}")
    print(f"the check / reader  = {cost / reader:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main_())
