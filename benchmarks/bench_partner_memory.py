"""Memory the reference partners keep: bounded (their limits) against unbounded, in one run.

1. **Many dialogues.** Issue 13 measured 20,000 PC Prompt reads taking a Prompt Creation server from 76
   to 110 MiB: every dialogue was kept for ever. Now a partner keeps at most ``MAX_DIALOGUES`` (1000),
   forgetting the one idle longest. This opens N dialogues (default 20,000) on Prompt Creation (a PC
   Prompt read each) and on Domain Access (a commitment Request each), once with the limits and once
   with them lifted, and prints the memory each run holds at the end (tracemalloc, Python objects).
2. **A commitment flood over HTTP.** Issue 19: one session sending 100 turns of 100 commitments of
   2.4 KB each took a server from 336 to 460 MB, its Responses grew to 1 MB (CommitmentStatus lists
   every commitment of the dialogue) and turns slowed. This starts a Domain Access server
   (streamable HTTP, a subprocess), sends T turns (default 50) of such Requests in one dialogue from a
   raw ``http.client`` session, and prints the server's resident memory before and after (psutil),
   the largest Response and the time of the last 10 turns; once with the byte limits, once without.

Each prints the ratio unbounded / bounded, measured in this one run.

Run: ``.venv/bin/python benchmarks/bench_partner_memory.py [--dialogues N] [--turns T]``.
"""

from __future__ import annotations

import argparse
import gc
import http.client
import json
import socket
import subprocess
import sys
import time
import tracemalloc
from collections.abc import Callable
from typing import Any

import psutil  # type: ignore[import-untyped]  # (the app extra installs it, without type information)

from pgm_explore.mcp import DomainAccess, PromptCreation, _common
from pgm_explore.mcp._common import Limits
from pgm_explore.models import data_exchange_metadata, simple_time_now

_NO_LIMIT = 10**15


def _dac_request(n: int, dialog: str | None = None, commitments: list[dict[str, str]] | None = None) -> dict:
    query = f"q-{n}"
    return {
        "Header": "PGM-KDA-V1.0",
        "Mode": "RQ",
        "MInstance": "mi",
        "UEnvironment": "ue",
        "SessionID": "s",
        "QueryID": query,
        "QueryTime": simple_time_now(time_id=f"st-{query}"),
        "DialogID": dialog or f"d-{n}",
        "TurnIndex": 0 if dialog is None else n,
        "Kind": "commitment",
        "Commitments": commitments
        or [{"CommitmentID": "cm", "Statement": "The lantern to buy is item-lantern-blue-115."}],
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


def _lifted(partner: Any) -> Any:
    partner.limits = Limits(_NO_LIMIT, _NO_LIMIT, _NO_LIMIT, _NO_LIMIT)
    return partner


def many_dialogues(n: int) -> None:
    def prompts() -> object:
        partner = PromptCreation() if _common.MAX_DIALOGUES < _NO_LIMIT else _lifted(PromptCreation())
        for i in range(n):
            partner.pc_prompt(f"d-{i}")
        return partner

    def commitments() -> object:
        partner = DomainAccess() if _common.MAX_DIALOGUES < _NO_LIMIT else _lifted(DomainAccess())
        for i in range(n):
            partner.answer(_dac_request(i))
        return partner

    limit = _common.MAX_DIALOGUES
    for label, fill in (("PC Prompt reads (Prompt Creation)", prompts), ("commitments (Domain Access)", commitments)):
        _common.MAX_DIALOGUES = limit
        bounded = _held(fill)
        _common.MAX_DIALOGUES = _NO_LIMIT  # the limits lifted: what the partners did before
        unbounded = _held(fill)
        _common.MAX_DIALOGUES = limit
        print(
            f"{n} dialogues, {label}: bounded ({limit}) {bounded:.1f} MiB, unbounded {unbounded:.1f} MiB, "
            f"ratio unbounded/bounded {unbounded / bounded:.1f}"
        )


def _serve(port: int, unbounded: bool) -> None:
    """The server of the flood (run in a subprocess): Domain Access over streamable HTTP."""
    import uvicorn

    from pgm_explore.mcp import domain_access_server
    from pgm_explore.mcp.serve import http_app

    partner = DomainAccess()
    if unbounded:
        _lifted(partner)
    uvicorn.run(http_app(domain_access_server(partner)), host="127.0.0.1", port=port, log_level="warning")


def _post(port: int, headers: dict[str, str], body: dict[str, Any]) -> tuple[dict[str, str], bytes]:
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=600)
    try:
        connection.request("POST", "/mcp", body=json.dumps(body).encode(), headers=headers)
        response = connection.getresponse()
        return {k.lower(): v for k, v in response.getheaders()}, response.read()
    finally:
        connection.close()


def _flood(turns: int, unbounded: bool) -> dict[str, float]:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    command = [sys.executable, __file__, "--serve", str(port)] + (["--unbounded"] if unbounded else [])
    process = subprocess.Popen(command)
    try:
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                time.sleep(0.1)
        headers = {
            "Host": f"127.0.0.1:{port}",
            "Content-Type": "application/json",
            "Accept": "application/json, text/event-stream",
        }
        hello = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "bench", "version": "0"}}
        answer, _ = _post(port, headers, {"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": hello})
        headers["Mcp-Session-Id"] = answer["mcp-session-id"]
        _post(port, headers, {"jsonrpc": "2.0", "method": "notifications/initialized"})
        rss = psutil.Process(process.pid)
        before = rss.memory_info().rss
        largest, times, refused = 0, [], 0
        for turn in range(turns):
            commitments = [{"CommitmentID": f"cm-{turn}-{i}", "Statement": "x" * 2400} for i in range(100)]
            message = _dac_request(turn, "d-flood", commitments)
            call = {"name": "bkn_dac", "arguments": {"message": message}}
            start = time.perf_counter()
            _, body = _post(port, headers, {"jsonrpc": "2.0", "id": turn + 1, "method": "tools/call", "params": call})
            times.append(time.perf_counter() - start)
            largest = max(largest, len(body))
            refused += b"not_answered" in body
        return {
            "rss_before": before / 2**20,
            "rss_after": rss.memory_info().rss / 2**20,
            "largest": largest / 1024,
            "last10": sum(times[-10:]),
            "refused": refused,
        }
    finally:
        process.terminate()
        process.wait(30)


def commitment_flood(turns: int) -> None:
    bounded, unbounded = _flood(turns, False), _flood(turns, True)
    for label, run in (("bounded", bounded), ("unbounded", unbounded)):
        print(
            f"flood of {turns} turns x 100 commitments x 2.4 KB over HTTP, {label}: server RSS "
            f"{run['rss_before']:.0f} -> {run['rss_after']:.0f} MiB, largest Response {run['largest']:.0f} KiB, "
            f"last 10 turns {run['last10']:.1f} s, {run['refused']:.0f} turns not_answered (a limit)"
        )
    grown = (unbounded["rss_after"] - unbounded["rss_before"]) / max(bounded["rss_after"] - bounded["rss_before"], 1)
    print(
        f"ratio unbounded/bounded: RSS growth {grown:.1f}, largest Response "
        f"{unbounded['largest'] / bounded['largest']:.1f}, last 10 turns {unbounded['last10'] / bounded['last10']:.1f}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--dialogues", type=int, default=20_000)
    parser.add_argument("--turns", type=int, default=50)
    parser.add_argument("--serve", type=int, help=argparse.SUPPRESS)  # the flood's server, in a subprocess
    parser.add_argument("--unbounded", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        _serve(args.serve, args.unbounded)
        return
    many_dialogues(args.dialogues)
    commitment_flood(args.turns)


if __name__ == "__main__":
    main()
