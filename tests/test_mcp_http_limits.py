"""The partners over HTTP, tried by a client that is not ours (``http.client``, JSON-RPC by hand):
memory and Response size stay bounded under a flood of commitments, sessions that stop talking are
released, and beyond loopback nothing is served without the bearer token or to a foreign Host."""

from __future__ import annotations

import http.client
import json
import os
import subprocess
import sys
import threading
import time
from collections import deque
from collections.abc import Iterator
from dataclasses import dataclass, replace
from typing import Any

import pytest

pytest.importorskip("mcp")

import uvicorn

from pgm_explore.mcp import _common, domain_access_server, prompt_creation_server
from pgm_explore.mcp._partners import _prompt_bytes
from pgm_explore.mcp.serve import MAX_SESSIONS, http_app
from tests.test_mcp_sessions import _free_port, _wait_for_port
from tests.test_mcp_sessions import request as dac_request

ACCEPT = "application/json, text/event-stream"


@dataclass
class Reply:
    status: int
    headers: dict[str, str]
    body: bytes

    def message(self, ident: int) -> dict[str, Any]:
        """The JSON-RPC answer with this id, from a JSON body or a text/event-stream one."""
        if self.headers.get("content-type", "").startswith("text/event-stream"):
            for line in self.body.decode().splitlines():
                if line.startswith("data:") and line[5:].strip():
                    data = json.loads(line[5:])
                    if data.get("id") == ident:
                        return data
            raise AssertionError(f"no answer {ident} in the stream")
        return json.loads(self.body)


def exchange(port: int, method: str, body: bytes | None = None, **headers: str) -> Reply:
    """One request on 127.0.0.1:``port``, with exactly these headers (Host included)."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
    try:
        connection.request(method, "/mcp", body=body, headers={"Host": f"127.0.0.1:{port}", **headers})
        response = connection.getresponse()
        return Reply(response.status, {k.lower(): v for k, v in response.getheaders()}, response.read())
    finally:
        connection.close()


class RawSession:
    """An MCP session (initialize handshake) spoken in JSON-RPC over ``http.client``."""

    def __init__(self, port: int, **headers: str) -> None:
        self.port, self.headers, self.next_id = port, {"Accept": ACCEPT, **headers}, 0
        params = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}}
        reply = self.send("initialize", params)
        assert reply.status == 200, reply
        self.headers["Mcp-Session-Id"] = reply.headers["mcp-session-id"]
        note = json.dumps({"jsonrpc": "2.0", "method": "notifications/initialized"}).encode()
        assert self.post(note).status == 202

    def post(self, body: bytes) -> Reply:
        return exchange(self.port, "POST", body, **{"Content-Type": "application/json", **self.headers})

    def send(self, method: str, params: dict[str, Any]) -> Reply:
        self.next_id += 1
        return self.post(
            json.dumps({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params}).encode()
        )

    def call(self, message: dict[str, Any]) -> tuple[dict[str, Any], int]:
        """The Response document of ``bkn_dac`` and the size of the HTTP body it came in."""
        reply = self.send("tools/call", {"name": "bkn_dac", "arguments": {"message": message}})
        assert reply.status == 200, reply
        result = reply.message(self.next_id)["result"]
        assert not result.get("isError"), result
        return result["structuredContent"], len(reply.body)


def request(dialog: str, turn: int, session: str, commitments: int = 0, size: int = 0) -> dict[str, Any]:
    """A BKN-DAC commitment Request of ``commitments`` commitments whose Statements are ``size`` bytes."""
    held = [
        {"CommitmentID": f"cm-{dialog}-{turn}-{n}", "Statement": f"{n:06d} " + "x" * (size - 7)}
        for n in range(commitments)
    ]
    return dac_request(dialog, turn, session, Commitments=held)


def deep_size(root: Any) -> int:
    """Bytes CPython spends on ``root`` and everything it reaches (each object once): a measure of
    the partner's memory that does not trust the partner's own accounting. Containers, msgspec
    Structs (the commitment ledger; not tracked by the garbage collector, so gc.get_referents does
    not see into it) and plain objects are followed."""
    seen: set[int] = set()
    total, todo = 0, [root]
    while todo:
        obj = todo.pop()
        if id(obj) in seen or isinstance(obj, type):
            continue
        seen.add(id(obj))
        total += sys.getsizeof(obj)
        if isinstance(obj, dict):
            todo.extend(obj.keys())
            todo.extend(obj.values())
        elif isinstance(obj, (list, tuple, set, frozenset, deque)):
            todo.extend(obj)
        elif hasattr(obj, "__struct_fields__"):
            todo.extend(getattr(obj, name) for name in obj.__struct_fields__)
        elif hasattr(obj, "__dict__"):
            todo.append(vars(obj))
    return total


@pytest.fixture
def served() -> Iterator[Any]:
    """Start a Domain Access server in this process (its state can be measured) on a free port; the
    test calls ``start(idle_timeout=..., state_bytes=...)`` and talks to it over a socket."""
    running: list[tuple[uvicorn.Server, threading.Thread]] = []

    def start(
        idle_timeout: float = 600.0, state_bytes: int = _common.MAX_STATE_BYTES, max_sessions: int = MAX_SESSIONS
    ) -> tuple[Any, int]:
        server = domain_access_server()
        server.partner.limits = replace(server.partner.limits, state_bytes=state_bytes)
        port = _free_port()
        config = uvicorn.Config(
            http_app(server, idle_timeout=idle_timeout, max_sessions=max_sessions),
            host="127.0.0.1",
            port=port,
            log_level="warning",
        )
        web = uvicorn.Server(config)
        thread = threading.Thread(target=web.run, daemon=True)
        thread.start()
        running.append((web, thread))
        _wait_for_port(port)
        return server.partner, port

    yield start
    for web, thread in running:
        web.should_exit = True
        thread.join(30)


def test_a_commitment_flood_is_bounded_in_memory_and_response_size(served: Any) -> None:
    # The flood of issue 19, scaled: 40 Requests of 100 commitments of 2.4 KB each (9.8 MB in all),
    # from two sessions, on a partner allowed 3 MiB in all (--max-state-bytes).
    partner, port = served(state_bytes=3 * 1024 * 1024)
    flooder, other = RawSession(port), RawSession(port)
    refusals: dict[str, int] = {}
    largest = sent = 0
    for n in range(40):
        session, who = (flooder, "s-flood") if n < 20 else (other, "s-other")
        message = request(f"d-{who}-{n // 2}", n % 2, who, commitments=100, size=2400)  # two turns a dialogue
        sent += len(json.dumps(message))
        response, body = session.call(message)
        largest = max(largest, body)
        if response["Outcome"] == "not_answered":
            text = response["DescrMetadata"]
            limits = ("MAX_DIALOGUE_BYTES", "MAX_SESSION_BYTES", "MAX_STATE_BYTES")
            limit = next(name for name in limits if name in text)
            refusals[limit] = refusals.get(limit, 0) + 1
            assert text.startswith("Not answered: ") and "nothing of this Request was kept" in text
            assert "CommitmentStatus" not in response
        else:
            assert len(response["CommitmentStatus"]) == 100  # this Request's own, nothing more held
    assert set(refusals) == {"MAX_DIALOGUE_BYTES", "MAX_SESSION_BYTES", "MAX_STATE_BYTES"}, refusals
    _, session, state = partner.held("mcp:" + flooder.headers["Mcp-Session-Id"])
    assert session <= _common.MAX_SESSION_BYTES and state <= 3 * 1024 * 1024 and sent > 9_000_000
    # What CPython really spends on it, measured without the partner's own accounting.
    assert deep_size(partner.dialogues) < 3 * 1024 * 1024
    assert largest < 32 * 1024  # a Response lists IDs and statuses of one dialogue, not the Statements
    # The Request over the dialogue's limit kept nothing: only turn 0's commitments are retained.
    retained = partner.retained("d-s-flood-0")
    assert len(retained) == 100 and all(cid.startswith("cm-d-s-flood-0-0-") for cid in retained)


def test_a_response_over_the_limit_is_not_sent_and_says_so() -> None:
    partner = domain_access_server().partner
    partner.limits = replace(partner.limits, response_bytes=4096)
    first = partner.answer(request("d-r", 0, "s-1", commitments=60, size=10))
    assert first["Outcome"] == "answered"
    second = partner.answer(request("d-r", 1, "s-1", commitments=60, size=10))
    assert second["Outcome"] == "not_answered" and "MAX_RESPONSE_BYTES" in second["DescrMetadata"]
    assert len(json.dumps(second)) < 4096 and len(partner.retained("d-r")) == 60  # the second kept nothing


def test_sessions_that_stop_talking_are_released_after_the_idle_time(served: Any) -> None:
    partner, port = served(idle_timeout=1.5)
    abandoned = []
    for n in range(20):
        session = RawSession(port)
        response, _ = session.call(request(f"d-{n}", 0, f"s-{n}", commitments=5, size=1000))
        assert response["Outcome"] == "answered"
        abandoned.append(session)  # never closed (no DELETE): the client went away
    assert len(partner.dialogues) == 20 and partner.held()[2] > 100_000
    deadline = time.monotonic() + 60
    while partner.dialogues and time.monotonic() < deadline:
        time.sleep(0.5)
    assert partner.dialogues == {} and partner.held() == (0, 0, 0)
    gone = abandoned[0].send("ping", {})
    assert gone.status == 404  # the SDK ended the session itself


def test_sessions_open_at_once_are_bounded(served: Any) -> None:
    _, port = served(max_sessions=2)
    first, _second = RawSession(port), RawSession(port)
    hello = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "x", "version": "0"}}
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": hello}).encode()
    third = exchange(port, "POST", body, **{"Content-Type": "application/json", "Accept": ACCEPT})
    assert third.status == 503
    assert exchange(port, "DELETE", **first.headers).status == 200  # one ends: there is room again
    assert RawSession(port).headers["Mcp-Session-Id"]


@pytest.mark.slow  # it lets 5 s pass, for sessions to fall idle
def test_without_an_mcp_session_a_session_idle_too_long_is_forgotten_at_the_next_request() -> None:
    # Stdio, in-process and the stateless protocol have no MCP session: the PGM SessionID is the session.
    partner = domain_access_server().partner
    partner.idle_timeout = 3.0
    partner.answer(request("d-a", 0, "s-a", commitments=2, size=10))
    partner.answer(request("d-b", 0, "s-b", commitments=2, size=10))
    time.sleep(2)
    partner.answer(request("d-b", 1, "s-b", commitments=2, size=10))  # s-b keeps talking
    time.sleep(2)
    partner.answer(request("d-c", 0, "s-c", commitments=2, size=10))
    assert set(partner.dialogues) == {"d-b", "d-c"} and len(partner.retained("d-b")) == 4
    prompts = prompt_creation_server().partner
    prompts.idle_timeout = 0.5
    prompts.pc_prompt("p-1")
    time.sleep(1)
    prompts.pc_prompt("p-2")
    assert list(prompts.prompts) == ["p-2"]


@pytest.fixture
def beyond_loopback() -> Iterator[tuple[int, str]]:
    """``serve domain-access --http --host 0.0.0.0 --allow-host partner.example:PORT``, as a person
    starts it in a container; the token is the one it prints."""
    port = _free_port()
    command = [sys.executable, "-m", "pgm_explore.mcp.serve", "domain-access", "--http", "--host", "0.0.0.0"]
    command += ["--port", str(port), "--allow-host", f"partner.example:{port}"]
    env = {k: v for k, v in os.environ.items() if k != "PGM_EXPLORE_PARTNER_TOKEN"}
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    try:
        assert process.stderr is not None
        line = process.stderr.readline().decode()
        assert "Bearer token for this server" in line, line
        token = line.rsplit(": ", 1)[1].strip()
        _wait_for_port(port, process)
        yield port, token
    finally:
        process.terminate()
        process.wait(10)
        if process.stderr is not None:
            process.stderr.close()


def test_beyond_loopback_nothing_is_served_without_the_token_or_to_a_foreign_host(
    beyond_loopback: tuple[int, str],
) -> None:
    port, token = beyond_loopback
    ours = f"partner.example:{port}"
    hello = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "x", "version": "0"}}
    body = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": hello}).encode()
    post = {"Content-Type": "application/json", "Accept": ACCEPT, "Host": ours}
    for attempt in (
        {},
        {"Authorization": "Bearer wrong"},
        {"Authorization": f"Basic {token}"},
        {"Authorization": token},
    ):
        refused = exchange(port, "POST", body, **post, **attempt)
        assert refused.status == 401 and refused.headers["www-authenticate"].startswith("Bearer"), attempt
        assert b"invalid_token" in refused.body and b"protocolVersion" not in refused.body
    for method in ("GET", "DELETE"):
        assert exchange(port, method, Accept=ACCEPT, Host=ours).status == 401
    # No token: refused before the body is read, however large it says it is.
    assert exchange(port, "POST", b"[" * 8_000_000, **post).status == 401
    bearer = {"Authorization": f"Bearer {token}"}
    assert exchange(port, "POST", body, **{**post, "Host": f"attacker.example:{port}"}, **bearer).status == 421
    evil = exchange(port, "POST", body, **post, **bearer, Origin="http://attacker.example")
    assert evil.status == 403
    assert exchange(port, "POST", b"[" * 8_000_000, **post, **bearer).status == 413  # read no further
    served = exchange(port, "POST", body, **post, **bearer, Origin=f"http://{ours}")
    assert served.status == 200 and served.message(1)["result"]["serverInfo"]["name"] == "pgm-domain-access"


@pytest.mark.anyio
async def test_a_pc_prompt_over_a_limit_is_refused_and_says_which() -> None:
    from mcp import Client
    from mcp.shared.exceptions import MCPError

    server = prompt_creation_server()
    server.partner.limits = replace(server.partner.limits, session_bytes=4 * _prompt_bytes("d-00", "pgm:s"))
    async with Client(server) as client:
        for n in range(3):
            await client.read_resource(f"pc-prompt://d-{n:02d}")
        with pytest.raises(MCPError) as refused:
            await client.read_resource("pc-prompt://d-99" + "9" * 1000)  # its ID alone is over the session's room
    assert "MAX_SESSION_BYTES" in str(refused.value) and "No PC Prompt" in str(refused.value)
    assert "9" * 100 not in str(refused.value)  # a long ID is not echoed whole
    assert list(server.partner.prompts) == ["d-00", "d-01", "d-02"]
