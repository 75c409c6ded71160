"""Memory the reference partners keep per dialogue: bounded (MAX_DIALOGUES) against unbounded.

Issue 13 measured 20,000 PC Prompt reads taking a Prompt Creation server from 76 to 110 MiB: every
dialogue was kept for ever. Now a partner keeps at most ``MAX_DIALOGUES`` (1000), forgetting the one
idle longest. This opens N dialogues (default 20,000) on Prompt Creation (a PC Prompt read each) and on
Domain Access (a commitment Request each), once with the limit and once with it lifted, and prints the
memory each run holds at the end (tracemalloc, Python objects) and the ratio unbounded / bounded,
measured in this one run.

Run: ``.venv/bin/python benchmarks/bench_partner_memory.py [--dialogues N]``.
"""

from __future__ import annotations

import argparse
import gc
import tracemalloc
from collections.abc import Callable

from pgm_explore.mcp import DomainAccess, PromptCreation, _common
from pgm_explore.models import data_exchange_metadata, simple_time_now


def _dac_request(n: int) -> dict:
    query = f"q-{n}"
    return {
        "Header": "PGM-KDA-V1.0",
        "Mode": "RQ",
        "MInstance": "mi",
        "UEnvironment": "ue",
        "SessionID": "s",
        "QueryID": query,
        "QueryTime": simple_time_now(time_id=f"st-{query}"),
        "DialogID": f"d-{n}",
        "TurnIndex": 0,
        "Kind": "commitment",
        "Commitments": [{"CommitmentID": "cm", "Statement": "The lantern to buy is item-lantern-blue-115."}],
        "DataXMData": data_exchange_metadata("BKN-DAC", "RQ", query),
    }


def _held(fill: Callable[[], object]) -> float:
    """MiB of Python objects still held after ``fill`` built its partner (the partner kept alive)."""
    gc.collect()
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    keep = fill()
    gc.collect()
    after = tracemalloc.get_traced_memory()[0]
    tracemalloc.stop()
    del keep
    return (after - before) / 2**20


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--dialogues", type=int, default=20_000)
    n = parser.parse_args().dialogues

    def prompts() -> object:
        partner = PromptCreation()
        for i in range(n):
            partner.pc_prompt(f"d-{i}")
        return partner

    def commitments() -> object:
        partner = DomainAccess()
        for i in range(n):
            partner.answer(_dac_request(i))
        return partner

    limit = _common.MAX_DIALOGUES
    for label, fill in (("PC Prompt reads (Prompt Creation)", prompts), ("commitments (Domain Access)", commitments)):
        _common.MAX_DIALOGUES = limit
        bounded = _held(fill)
        _common.MAX_DIALOGUES = 10**12  # the limit lifted: what the partners did before
        unbounded = _held(fill)
        _common.MAX_DIALOGUES = limit
        print(
            f"{n} dialogues, {label}: bounded ({limit}) {bounded:.1f} MiB, unbounded {unbounded:.1f} MiB, "
            f"ratio unbounded/bounded {unbounded / bounded:.1f}"
        )


if __name__ == "__main__":
    main()
