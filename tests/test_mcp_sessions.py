"""Dialogues bound to their session, bounded state, size limits, cancellation, and the --host warning."""

from __future__ import annotations

import io
import json
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest

pytest.importorskip("mcp")

import anyio
import httpx
from mcp import Client

from pgm_explore.mcp import DomainAccess, Limits, PromptCreation, _common, domain_access_server
from pgm_explore.mcp.serve import main as serve_main
from pgm_explore.models import data_exchange_metadata, simple_time_now


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def request(dialog: str, turn: int, session: str = "s-1", query: str | None = None, **fields: Any) -> dict[str, Any]:
    query = query or f"q-{dialog}-{turn}-{session}"
    message = {
        "Header": "PGM-KDA-V1.0",
        "Mode": "RQ",
        "MInstance": "mi-1",
        "UEnvironment": "ue-1",
        "SessionID": session,
        "QueryID": query,
        "QueryTime": simple_time_now(time_id=f"st-{query}"),
        "DialogID": dialog,
        "TurnIndex": turn,
        "Kind": "commitment",
        **fields,
    }
    message["DataXMData"] = data_exchange_metadata("BKN-DAC", "RQ", query)
    return message


def test_a_stranger_naming_a_dialogue_changes_nothing() -> None:
    partner = DomainAccess()
    partner.answer(request("d-1", 0, Commitments=[{"CommitmentID": "cm-a", "Statement": "Mine."}]))
    stranger = partner.answer(request("d-1", 1, session="s-2", ReleasedCommitmentIDs=["cm-a"]))
    assert stranger["Outcome"] == "not_answered" and "[dialog-foreign]" in stranger["DescrMetadata"]
    assert stranger["SessionID"] == "s-2" and stranger["TurnIndex"] == 1
    assert partner.retained("d-1") == {"cm-a": "Mine."}  # not released
    # ... and the owner's own turn 1 is still free.
    mine = partner.answer(request("d-1", 1, ReleasedCommitmentIDs=["cm-a"]))
    assert mine["Outcome"] == "answered" and partner.retained("d-1") == {}


def test_a_prompt_creation_dialogue_belongs_to_the_session_of_its_pc_prompt() -> None:
    partner = PromptCreation()
    prompt = partner.pc_prompt("d-pc")
    fields = {"Header": "PGM-KPR-V1.0", "Kind": "intent"}
    own = {**request("d-pc", 0, session=prompt["SessionID"], query="q-own"), **fields}
    own["DataXMData"] = data_exchange_metadata("BKN-PRC", "RQ", "q-own")
    stranger = {**own, "SessionID": "someone-else", "QueryID": "q-stranger", "TurnIndex": 1}
    stranger["DataXMData"] = data_exchange_metadata("BKN-PRC", "RQ", "q-stranger")
    assert partner.answer(own)["Outcome"] == "answered"
    assert "[dialog-foreign]" in partner.answer(stranger)["DescrMetadata"]


def test_state_is_bounded_and_the_oldest_idle_dialogue_goes_first() -> None:
    partner = DomainAccess()
    partner.limits = Limits(dialogues=3)
    for n in range(3):
        partner.answer(request(f"d-{n}", 0, Commitments=[{"CommitmentID": "cm", "Statement": f"{n}"}]))
    partner.answer(request("d-0", 1, Commitments=[{"CommitmentID": "cm2", "Statement": "again"}]))  # d-0 used now
    partner.answer(request("d-3", 0, Commitments=[{"CommitmentID": "cm", "Statement": "3"}]))
    assert list(partner.dialogues) == ["d-2", "d-0", "d-3"]  # d-1 was idle longest
    prompts = PromptCreation()
    prompts.limits = Limits(dialogues=3)
    for n in range(5):
        prompts.pc_prompt(f"p-{n}")
    assert list(prompts.prompts) == ["p-2", "p-3", "p-4"] and list(prompts.owners) == ["p-2", "p-3", "p-4"]


def test_a_dialogue_has_a_bounded_number_of_turns() -> None:
    partner = DomainAccess()
    partner.limits = Limits(turns=2)
    for turn in range(2):
        partner.answer(request("d-t", turn, Commitments=[{"CommitmentID": f"cm-{turn}", "Statement": "x"}]))
    third = partner.answer(request("d-t", 2, Commitments=[{"CommitmentID": "cm-2", "Statement": "x"}]))
    assert third["Outcome"] == "not_answered" and "2 turns" in third["DescrMetadata"]
    assert set(partner.retained("d-t")) == {"cm-0", "cm-1"}


@pytest.mark.anyio
async def test_a_request_over_the_size_limit_is_refused_and_the_retry_is_served() -> None:
    server = domain_access_server()
    big = request("d-big", 0, Commitments=[{"CommitmentID": "cm", "Statement": "x" * _common.MAX_REQUEST_BYTES}])
    async with Client(server) as client:
        refused = await client.call_tool("bkn_dac", {"message": big})
        small = {**big, "Commitments": [{"CommitmentID": "cm", "Statement": "x"}]}
        served = await client.call_tool("bkn_dac", {"message": small})
    assert refused.is_error
    findings = json.loads(refused.content[0].text.split(": ", 1)[1])["findings"]  # type: ignore[union-attr]
    assert findings[0]["rule"] == "request-too-large" and str(_common.MAX_REQUEST_BYTES) in findings[0]["message"]
    assert not served.is_error and served.structured_content["RequestID"] == big["QueryID"]  # type: ignore[index]


class SlowDomain(DomainAccess):
    """Domain Access whose feasibility check waits until the test lets it go."""

    def __init__(self) -> None:
        super().__init__()
        self.started, self.go = threading.Event(), threading.Event()

    def payload(self, message: dict[str, Any], dialogue: Any, **extra: Any) -> dict:
        self.started.set()
        self.go.wait(30)
        return super().payload(message, dialogue, **extra)


@pytest.mark.anyio
async def test_ping_is_served_during_a_long_check_and_a_cancelled_query_can_be_sent_again() -> None:
    partner = SlowDomain()
    server = domain_access_server(partner)
    message = request("d-slow", 0, Commitments=[{"CommitmentID": "cm", "Statement": "x"}])
    async with Client(server, mode="legacy") as client:
        async with anyio.create_task_group() as group:
            scope = anyio.CancelScope()

            async def call() -> None:
                with scope:
                    await client.call_tool("bkn_dac", {"message": message})

            group.start_soon(call)
            await anyio.to_thread.run_sync(partner.started.wait, 10)
            with anyio.fail_after(5):
                await client.session.send_ping()  # the event loop is free while the check runs
            scope.cancel()  # the client sends notifications/cancelled
            await anyio.sleep(0.2)
            partner.go.set()
        await anyio.sleep(0.2)
        assert partner.dialogues == {}  # the cancelled Request left nothing behind
        again = await client.call_tool("bkn_dac", {"message": message})
    assert not again.is_error and again.structured_content["RequestID"] == message["QueryID"]  # type: ignore[index]


def test_serving_beyond_loopback_needs_a_token_and_says_so(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture
) -> None:
    ran: list[dict[str, Any]] = []

    async def serve_http(server: Any, host: str, port: int, security: Any, token: Any, idle: float) -> None:
        ran.append({"transport_security": security, "token": token, "idle": idle, "limits": server.partner.limits})

    # serve.py runs HTTP itself (its guard sits in front of the SDK's app): stand in for the socket only.
    monkeypatch.delenv("PGM_EXPLORE_PARTNER_TOKEN", raising=False)
    serve_main(["domain-access", "--http", "--host", "0.0.0.0"], serve_http=serve_http)
    warning = capsys.readouterr().err
    assert "Host and Origin header checks (DNS-rebinding protection) are OFF" in warning
    made = ran[-1]["token"]
    assert len(made) >= 32 and f"Authorization: Bearer TOKEN'): {made}" in warning and "401" in warning
    assert ran[-1]["transport_security"] is None
    serve_main(
        ["domain-access", "--http", "--host", "0.0.0.0", "--allow-host", "partner.example:8000"], serve_http=serve_http
    )
    assert "OFF" not in capsys.readouterr().err and ran[-1]["token"] != made  # a new one each start
    security = ran[-1]["transport_security"]
    assert security.enable_dns_rebinding_protection and security.allowed_hosts == ["partner.example:8000"]
    serve_main(
        ["domain-access", "--http", "--host", "192.0.2.7", "--token", "s3cret", "--idle-timeout", "5"],
        serve_http=serve_http,
    )
    assert "Bearer token for this server" not in capsys.readouterr().err  # given, so not printed
    assert ran[-1]["token"] == "s3cret" and ran[-1]["idle"] == 5.0
    assert ran[-1]["transport_security"].allowed_hosts == ["192.0.2.7:8000"]  # the address given is a name
    serve_main(
        ["domain-access", "--http", "--max-state-bytes", "1000000"], serve_http=serve_http
    )  # loopback: the SDK's own checks
    assert capsys.readouterr().err == "" and ran[-1]["transport_security"] is None and ran[-1]["token"] is None
    assert ran[-1]["limits"].state_bytes == 1_000_000 and ran[-1]["idle"] == 600.0


# --- over streamable HTTP, with a raw client: the MCP session owns the dialogue ---------------------


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _wait_for_port(port: int, process: subprocess.Popen[bytes] | None = None) -> None:
    deadline = time.monotonic() + 60
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            assert process is None or process.poll() is None, "the server exited"
            assert time.monotonic() < deadline, "the server did not start"
            time.sleep(0.1)


@pytest.fixture
def dac_url() -> Iterator[str]:
    port = _free_port()
    command = [sys.executable, "-m", "pgm_explore.mcp.serve", "domain-access", "--http", "--port", str(port)]
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        _wait_for_port(port, process)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        process.terminate()
        process.wait(10)


class RawSession:
    """An MCP session over streamable HTTP with the initialize handshake, in plain httpx."""

    def __init__(self, url: str) -> None:
        self.url, self.http, self.next_id = url, httpx.Client(timeout=30), 0
        headers = {"Accept": "application/json, text/event-stream"}
        self.headers = headers
        reply = self.post(
            "initialize",
            {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}},
        )
        assert "result" in reply
        self.http.post(url, json={"jsonrpc": "2.0", "method": "notifications/initialized"}, headers=self.headers)

    def post(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        self.next_id += 1
        body = {"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params}
        response = self.http.post(self.url, json=body, headers=self.headers)
        if "mcp-session-id" in response.headers:
            self.headers = {**self.headers, "mcp-session-id": response.headers["mcp-session-id"]}
        if response.headers.get("content-type", "").startswith("text/event-stream"):
            data = [line[5:].strip() for line in response.text.splitlines() if line.startswith("data:")]
            return next(json.loads(d) for d in data if d and json.loads(d).get("id") == self.next_id)
        return response.json()

    def call(self, message: dict[str, Any]) -> dict[str, Any]:
        return self.post("tools/call", {"name": "bkn_dac", "arguments": {"message": message}})["result"]

    def close(self) -> None:
        self.http.delete(self.url, headers=self.headers)
        self.http.close()


def test_over_http_a_dialogue_belongs_to_its_mcp_session_and_ends_with_it(dac_url: str) -> None:
    owner, other = RawSession(dac_url), RawSession(dac_url)
    try:
        opened = owner.call(request("d-http", 0, Commitments=[{"CommitmentID": "cm", "Statement": "Mine."}]))
        assert opened["structuredContent"]["Outcome"] == "answered"
        # The same SessionID, from another MCP session: a stranger all the same.
        stranger = other.call(request("d-http", 1, query="q-other", ReleasedCommitmentIDs=["cm"]))
        assert "[dialog-foreign]" in stranger["structuredContent"]["DescrMetadata"]
        owner.close()  # DELETE: the session, and its dialogues, end
        time.sleep(0.5)
        after = other.call(request("d-http", 0, query="q-other-2", ReleasedCommitmentIDs=["cm"]))
        text = after["structuredContent"].get("DescrMetadata", "")
        assert "[dialog-foreign]" not in text and "cm is not retained" in text
    finally:
        other.close()


def test_serve_help_and_docs_name_the_same_options_and_defaults() -> None:
    import contextlib
    import re
    from pathlib import Path

    out = io.StringIO()
    with pytest.raises(SystemExit), contextlib.redirect_stdout(out):
        serve_main(["--help"])
    helped = set(re.findall(r"(--[a-z-]+)", out.getvalue())) - {"--help"}
    docs = (Path(__file__).resolve().parents[1] / "docs" / "mcp.md").read_text(encoding="utf-8")
    usage = docs[docs.index("`python -m pgm_explore.mcp.serve {prompt-creation") :].split("`", 2)[1]
    assert set(re.findall(r"(--[a-z-]+)", usage)) == helped
    assert {"--allow-host", "--token", "--idle-timeout", "--max-state-bytes"} <= helped
    # The defaults the help gives are the ones docs/mcp.md states.
    flat = " ".join(out.getvalue().split())
    assert "(default 600)" in flat and "`--idle-timeout SECONDS`, default 600" in docs
    assert f"(default {_common.MAX_STATE_BYTES})" in flat and "| 64 MiB held by the whole partner" in docs
    assert _common.MAX_STATE_BYTES == 64 * 2**20 and _common.MAX_DIALOGUE_BYTES == 512 * 2**10
    assert "| 512 KiB held by one dialogue" in docs and "| 2 MiB held by the dialogues of one session" in docs
    assert _common.MAX_SESSION_BYTES == 2 * 2**20 and _common.MAX_RESPONSE_BYTES == 256 * 2**10
    assert "| 256 KiB of UTF-8 JSON in one Response" in docs


class FlakyDomain(DomainAccess):
    """Domain Access whose first answer fails inside the partner (a bug, a lost database...)."""

    failed = False

    def payload(self, message: dict[str, Any], dialogue: Any, **extra: Any) -> dict:
        if not self.failed:
            self.failed = True
            raise OSError("the domain store is unreachable")
        return super().payload(message, dialogue, **extra)


@pytest.mark.anyio
async def test_a_request_that_failed_inside_the_partner_does_not_burn_its_query_id_or_turn() -> None:
    server = domain_access_server(FlakyDomain())
    message = request("d-flaky", 0, Commitments=[{"CommitmentID": "cm", "Statement": "x"}])
    async with Client(server) as client:
        failed = await client.call_tool("bkn_dac", {"message": message})
        again = await client.call_tool("bkn_dac", {"message": message})
    assert failed.is_error and "unreachable" not in failed.content[0].text  # type: ignore[union-attr]
    assert not again.is_error and again.structured_content["RequestID"] == message["QueryID"]  # type: ignore[index]
    assert again.structured_content["CommitmentStatus"] == [{"CommitmentID": "cm", "Status": "retained"}]  # type: ignore[index]
