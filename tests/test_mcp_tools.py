"""The partners' tools as an MCP host sees them, read with a JSON-RPC client written here (not the SDK's).

Each partner runs as ``python -m pgm_explore.mcp.serve`` over stdio; the test speaks newline-delimited
JSON-RPC 2.0 to it (initialize, tools/list, tools/call) and checks the declared schemas with jsonschema
and an empty registry: a host that fetches nothing can validate a real example with them.
"""

from __future__ import annotations

import http.client
import json
import subprocess
import sys
import urllib.parse
import uuid
from collections.abc import Iterator
from typing import Any

import pytest

pytest.importorskip("mcp")

from jsonschema import Draft202012Validator
from referencing import Registry

from tests import probing
from tests.conftest import EXAMPLES

PARTNERS = {"BKN-PRC": "prompt-creation", "BKN-DAC": "domain-access", "BKN-PAL": "personality-alignment"}
TOOLS = {"BKN-PRC": "bkn_prc", "BKN-DAC": "bkn_dac", "BKN-PAL": "bkn_pal"}
FOLDERS = {"BKN-PRC": "bkn-prc", "BKN-DAC": "bkn-dac", "BKN-PAL": "bkn-pal"}


class RawStdio:
    """A JSON-RPC 2.0 peer over a subprocess's stdin/stdout, one JSON object per line."""

    def __init__(self, partner: str) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-m", "pgm_explore.mcp.serve", partner],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
            encoding="utf-8",
        )
        self.next_id = 0

    def send(self, message: Any) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(json.dumps(message) + "\n")
        self.process.stdin.flush()

    def request(self, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        self.next_id += 1
        self.send({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params or {}})
        assert self.process.stdout is not None
        for line in self.process.stdout:  # notifications (logging) may come first
            reply = json.loads(line)
            if reply.get("id") == self.next_id:
                return reply
        raise AssertionError(f"the server closed stdout before answering {method}")

    def close(self) -> None:
        self.process.terminate()
        self.process.wait(10)
        for stream in (self.process.stdin, self.process.stdout):
            if stream is not None:
                stream.close()


@pytest.fixture(scope="module")
def peers() -> Iterator[dict[str, tuple[RawStdio, dict[str, Any]]]]:
    opened = {}
    try:
        for type_name, partner in PARTNERS.items():
            peer = RawStdio(partner)
            init = peer.request(
                "initialize",
                {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}},
            )
            peer.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
            opened[type_name] = (peer, init)
        yield opened
    finally:
        for peer, _ in opened.values():
            peer.close()


def _examples(type_name: str, mode: str) -> list[dict[str, Any]]:
    folder = EXAMPLES / FOLDERS[type_name] / "valid"
    found = [json.loads(p.read_text(encoding="utf-8")) for p in sorted(folder.glob(f"{mode.lower()}-*.json"))]
    assert found
    return found


def _tool(peer: RawStdio, type_name: str) -> dict[str, Any]:
    tools = peer.request("tools/list")["result"]["tools"]
    assert [t["name"] for t in tools] == [TOOLS[type_name]]
    return tools[0]


def _validator(schema: dict[str, Any]) -> Draft202012Validator:
    Draft202012Validator.check_schema(schema)
    return Draft202012Validator(schema, registry=Registry())  # nothing to fetch: every $ref is local


@pytest.mark.parametrize("type_name", PARTNERS)
def test_tools_list_declares_the_pgm_schemas(peers: dict, type_name: str) -> None:
    peer, init = peers[type_name]
    assert init["result"]["serverInfo"]["version"]  # a server version, not ""
    tool = _tool(peer, type_name)
    for schema in (tool["inputSchema"], tool["outputSchema"]):  # every $ref inside the document
        assert all(ref.startswith('"#') for ref in json.dumps(schema).split('"$ref": ')[1:])
    inputs, outputs = _validator(tool["inputSchema"]), _validator(tool["outputSchema"])
    for request in _examples(type_name, "RQ"):
        assert list(inputs.iter_errors({"message": request})) == []
        assert not inputs.is_valid({"message": request, "verbose": True})  # extra arguments refused
    for response in _examples(type_name, "RS"):
        assert list(outputs.iter_errors(response)) == []
        assert not inputs.is_valid({"message": response})  # a Response is no Request
    assert not inputs.is_valid({"message": {"hello": 1}})
    assert not outputs.is_valid(_examples(type_name, "RQ")[0])
    assert tool["title"] and type_name in tool["description"] and tool["annotations"]["openWorldHint"] is False
    assert tool["annotations"]["readOnlyHint"] is (type_name != "BKN-DAC")
    assert tool["annotations"]["idempotentHint"] is False


def test_action_context_is_typed_as_in_the_pc_prompt(peers: dict) -> None:
    peer, _ = peers["BKN-DAC"]
    inputs = _validator(_tool(peer, "BKN-DAC")["inputSchema"])
    request = _examples("BKN-DAC", "RQ")[0]
    good = {"MLocations": ["ML-Stall-07"], "WalletLimit": 150, "Affordances": [{"Action": "Transact"}]}
    assert inputs.is_valid({"message": request, "action_context": good})
    assert inputs.is_valid({"message": request, "action_context": None})
    assert not inputs.is_valid({"message": request, "action_context": {"MLocations": 5}})
    assert not inputs.is_valid({"message": request, "action_context": {"Budget": 5}})


def test_a_call_answers_with_structured_content_and_the_same_json_as_text(peers: dict) -> None:
    peer, _ = peers["BKN-PAL"]
    tool = _tool(peer, "BKN-PAL")
    request = _examples("BKN-PAL", "RQ")[0]
    reply = peer.request("tools/call", {"name": "bkn_pal", "arguments": {"message": request}})["result"]
    assert reply.get("isError", False) is False
    assert json.loads(reply["content"][0]["text"]) == reply["structuredContent"]
    assert _validator(tool["outputSchema"]).is_valid(reply["structuredContent"])
    assert reply["structuredContent"]["RequestID"] == request["QueryID"]


def test_extra_arguments_and_a_bad_action_context_are_refused_and_the_retry_is_served(peers: dict) -> None:
    peer, _ = peers["BKN-DAC"]
    request = next(r for r in _examples("BKN-DAC", "RQ") if r["Kind"] == "feasibility")
    request = {**request, "DialogID": "dlg-raw-retry"}
    extra = peer.request("tools/call", {"name": "bkn_dac", "arguments": {"message": request, "verbose": True}})
    assert [(f["rule"], f["path"]) for f in _rejection(extra)] == [("tool-arguments", "$.verbose")]
    bad = {"message": request, "action_context": {"MLocations": 5}}
    refused = peer.request("tools/call", {"name": "bkn_dac", "arguments": bad})["result"]
    assert refused["isError"] is True
    findings = json.loads(refused["content"][0]["text"][refused["content"][0]["text"].index("{") :])["findings"]
    assert findings[0]["rule"] == "action-context" and findings[0]["path"] == "$.action_context.MLocations"
    # The same QueryID and TurnIndex, corrected: served.
    fixed = {"message": request, "action_context": {"MLocations": ["ML-Stall-07"]}}
    served = peer.request("tools/call", {"name": "bkn_dac", "arguments": fixed})["result"]
    assert served.get("isError", False) is False
    assert served["structuredContent"]["RequestID"] == request["QueryID"]
    assert served["structuredContent"]["Outcome"] != "not_answered"


def _rejection(reply: dict[str, Any]) -> list[dict[str, Any]]:
    """The findings of a refusal, read as docs/mcp.md promises them: a tool error whose text ends
    with {"rejected": true, "findings": [...]}."""
    result = reply["result"]
    assert result["isError"] is True, result
    text = result["content"][0]["text"]
    assert "validation error" not in text and "pydantic" not in text, text
    document = json.loads(text[text.index("{") :])
    assert document["rejected"] is True
    for finding in document["findings"]:
        assert set(finding) == {"severity", "rule", "path", "message", "spec"}, finding
    return document["findings"]


def _call(peer: RawStdio, tool: str, arguments: Any) -> dict[str, Any]:
    return peer.request("tools/call", {"name": tool, "arguments": arguments})


@pytest.mark.parametrize(
    ("arguments", "found"),
    [
        (
            {"message": "REQUEST", "verbose": True},
            [
                (
                    "tool-arguments",
                    "$.verbose",
                    "bkn_dac takes no argument verbose: its arguments are message, the BKN-DAC Request, "
                    "and action_context.",
                )
            ],
        ),
        (
            {"action_context": None},
            [("tool-arguments", "$.message", "bkn_dac was called without its argument message, the BKN-DAC Request.")],
        ),
        (
            {"message": "a Request, please"},
            [
                (
                    "unusable-request",
                    "$",
                    'The message is the string "a Request, please", not a JSON object: a BKN-DAC Request is an object.',
                )
            ],
        ),
        (
            {"message": 7},
            [
                (
                    "unusable-request",
                    "$",
                    "The message is the number 7, not a JSON object: a BKN-DAC Request is an object.",
                )
            ],
        ),
    ],
)
def test_every_argument_error_is_the_documented_rejection_in_plain_words(
    peers: dict, arguments: dict[str, Any], found: list[tuple[str, str, str]]
) -> None:
    peer, _ = peers["BKN-DAC"]
    fresh = uuid.uuid4().hex[:8]
    request = {**_examples("BKN-DAC", "RQ")[0], "DialogID": f"dlg-raw-{fresh}", "QueryID": f"kda-raw-{fresh}"}
    sent = {key: request if value == "REQUEST" else value for key, value in arguments.items()}
    findings = _rejection(_call(peer, "bkn_dac", sent))
    assert [(f["rule"], f["path"], f["message"]) for f in findings] == found
    # Nothing was recorded: the same Request, sent right, is served.
    served = _call(peer, "bkn_dac", {"message": request})["result"]
    assert served.get("isError", False) is False and served["structuredContent"]["RequestID"] == request["QueryID"]
    again = _rejection(_call(peer, "bkn_dac", {"message": request}))
    assert [(f["rule"], f["path"]) for f in again] == [("query-reused", "$.QueryID")]


@pytest.mark.parametrize("type_name", PARTNERS)
def test_a_response_sent_as_a_request_is_refused_naming_its_mode_alone(peers: dict, type_name: str) -> None:
    peer, _ = peers[type_name]
    response = _examples(type_name, "RS")[0]
    findings = _rejection(_call(peer, TOOLS[type_name], {"message": response}))
    assert [(f["rule"], f["path"], f["message"]) for f in findings] == [
        ("unusable-request", "$.Mode", "Mode is RS: a Request must have Mode RQ.")
    ]


def test_another_types_request_is_refused_naming_the_header() -> None:
    peer = RawStdio("domain-access")
    try:
        peer.request(
            "initialize",
            {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}},
        )
        peer.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        pal = _examples("BKN-PAL", "RQ")[0]
        findings = _rejection(_call(peer, "bkn_dac", {"message": pal}))
        assert [(f["rule"], f["path"], f["message"]) for f in findings] == [
            (
                "unusable-request",
                "$.Header",
                "Header is PGM-KPA-V1.0, the Header of BKN-PAL: a BKN-DAC Request has Header PGM-KDA-V1.0.",
            )
        ]
        nameless = {key: value for key, value in _examples("BKN-DAC", "RQ")[0].items() if key != "QueryID"}
        findings = _rejection(_call(peer, "bkn_dac", {"message": nameless}))
        assert (findings[0]["rule"], findings[0]["path"]) == ("unusable-request", "$.QueryID")
        assert findings[0]["message"] == "QueryID is missing: no Response could name this Request."
        assert all(f["path"] != "$.QueryID" for f in findings[1:])  # not said twice
        anonymous = {**_examples("BKN-DAC", "RQ")[0], "DialogID": "dlg-raw-anonymous"}
        del anonymous["SessionID"]
        findings = _rejection(_call(peer, "bkn_dac", {"message": anonymous}))
        assert [(f["rule"], f["path"], f["message"]) for f in findings] == [
            (
                "unusable-request",
                "$.SessionID",
                "SessionID missing (or not a string), and no earlier turn of the dialogue gives it: "
                "a Response could not carry the session identities.",
            )
        ]
    finally:
        peer.close()


def test_pc_prompt_is_offered_as_a_resource_template(peers: dict) -> None:
    peer, _ = peers["BKN-PRC"]
    templates = peer.request("resources/templates/list")["result"]["resourceTemplates"]
    assert [(t["uriTemplate"], t["mimeType"]) for t in templates] == [("pc-prompt://{dialog_id}", "application/json")]
    read = peer.request("resources/read", {"uri": "pc-prompt://dlg-raw"})["result"]["contents"][0]
    prompt = json.loads(read["text"])
    assert prompt["DialogID"] == "dlg-raw" and prompt["Header"] == "PGM-PCP-V1.0"


# --- protocol errors at the door, as a client that is not the SDK sends them (docs/mcp.md) ---------

MODERN_META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientInfo": {"name": "raw", "version": "0"},
    "io.modelcontextprotocol/clientCapabilities": {},
}


def _lines_until(peer: RawStdio, ident: Any) -> list[dict[str, Any]]:
    """Every message the server writes until the answer to ``ident``, that answer last."""
    assert peer.process.stdout is not None
    seen = []
    for line in peer.process.stdout:
        seen.append(json.loads(line))
        if seen[-1].get("id") == ident:
            return seen
    raise AssertionError(f"the server closed stdout before answering {ident}: {seen}")


def test_over_stdio_a_batch_and_jsonrpc_1_0_get_invalid_request_and_are_not_served(peers: dict) -> None:
    peer, _ = peers["BKN-PAL"]
    peer.send([{"jsonrpc": "2.0", "id": "in-a-batch", "method": "ping"}])
    peer.send({"jsonrpc": "1.0", "id": "old", "method": "ping"})
    peer.send({"jsonrpc": "2.0", "id": "fence", "method": "ping"})
    seen = _lines_until(peer, "fence")
    errors = [(m.get("id"), m.get("error", {}).get("code")) for m in seen[:-1]]
    assert errors == [(None, -32600), ("old", -32600)], seen
    assert not [m for m in seen if m.get("id") == "in-a-batch"]  # the batch's request was not served


def test_initialize_and_server_discover_give_one_capability_answer() -> None:
    legacy, modern = RawStdio("prompt-creation"), RawStdio("prompt-creation")
    try:
        init = legacy.request(
            "initialize",
            {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}},
        )
        discover = modern.request("server/discover", {"_meta": MODERN_META})
        assert "result" in discover, discover
        assert init["result"]["capabilities"] == discover["result"]["capabilities"]
        capabilities = init["result"]["capabilities"]
        assert {"tools", "resources"} <= set(capabilities)
        # Nothing here ever changes or can be subscribed to: no era advertises it.
        assert not [(name, c) for name, c in capabilities.items() if c.get("listChanged") or c.get("subscribe")]
    finally:
        legacy.close()
        modern.close()


def test_over_http_a_batch_jsonrpc_1_0_and_last_event_id_get_a_clean_400() -> None:
    with probing.http_server(probing.reference_http("personality-alignment")) as url:
        parts = urllib.parse.urlsplit(url)
        accept = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}

        def exchange(method: str, body: Any = None, **headers: str) -> tuple[int, dict[str, Any]]:
            connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=60)
            try:
                payload = None if body is None else json.dumps(body)
                connection.request(method, parts.path, body=payload, headers={**accept, **headers})
                response = connection.getresponse()
                return response.status, json.loads(response.read() or b"{}")
            finally:
                connection.close()

        init = {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}}
        status, batch = exchange("POST", [{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": init}])
        assert (status, batch["error"]["code"]) == (400, -32600)
        status, old = exchange("POST", {"jsonrpc": "1.0", "id": 2, "method": "initialize", "params": init})
        assert (status, old["error"]["code"], old["id"]) == (400, -32600, 2)
        status, resume = exchange("GET", None, **{"Last-Event-ID": "probe-event-0", "Accept": "text/event-stream"})
        assert (status, resume["error"]["code"]) == (400, -32600)
