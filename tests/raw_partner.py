"""A partner server written without the MCP SDK and without pgm_explore: plain Python that reads and
writes the JSON-RPC bytes itself, from the MCP specification (2025-11-25 and 2026-07-28) and
docs/mcp.md, as a third party would write one.

    python tests/raw_partner.py [--role pal|dac|prc] [--http PORT] [--log FILE]

Over stdio by default (newline-delimited JSON-RPC), or Streamable HTTP on 127.0.0.1:PORT/mcp. It
speaks both protocol eras: the initialize handshake (with sessions over HTTP) and the per-request
envelope of 2026-07-28 (``server/discover``). As Personality Alignment it answers with a stance; as
Domain Access or Prompt Creation it knows nothing and answers ``not_answered``.

``--log FILE`` appends every JSON-RPC message it read and wrote to FILE as JSON Lines
(``{"direction": "received" | "sent", "message": ...}``), to hold a client's own record of the
conversation to what the partner saw.

Faults are switched on by the environment, as a user switches on their own partner's options:
``RAW_PARTNER_FAULTS=duplicate,slow``. Each is one way to be wrong (see FAULTS); ``sse`` is not a
fault: it answers HTTP requests as event streams.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, ClassVar

FAULTS = {
    # the handshakes
    "legacy-only": "speaks only the initialize handshake: no server/discover",
    "modern-only": "speaks only 2026-07-28: initialize is an unknown method",
    "discover-broken": "server/discover names only a version nobody speaks",
    # JSON-RPC on the wire (stdio)
    "duplicate": "writes every response twice (over HTTP: with sse, each event twice)",
    "unsolicited": "after the handshake, writes a response to an id never sent",
    "garbage": "writes a line that is not JSON after its first response",
    "silent": "does not answer what it cannot parse or take (a batch, jsonrpc 1.0)",
    "batch-accepted": "answers a batch with a batch",
    "jsonrpc-lax": 'serves "jsonrpc": "1.0"',
    "method-code": "answers an unknown method with -32600, not -32601",
    "tool-is-error": "answers an unknown tool with a tool error, not -32602",
    "resource-empty": "answers an unknown resource with empty contents",
    "no-resources": "declares no resources capability",
    "no-tools-capability": "lists its tool but declares no tools capability",
    "version-echo": "answers initialize with the version it was offered, whatever it is",
    "capabilities-differ": "server/discover declares capabilities initialize does not",
    "envelope-lax": "serves a 2026-07-28 request without its _meta envelope",
    # the process
    "exit": "exits with status 3 at its first tools/call, saying why on stderr",
    "exit-early": "exits with status 4 at its first request after the handshake",
    "slow": "takes 1.5 s over its first tool call",
    # PGM-AUA
    "refuse-all": "answers every tool call with a tool error",
    "other-header": "answers with a conforming Response of another type (its Header)",
    "no-outcome": "leaves Outcome out of its answered Responses",
    "no-tool": "lists a tool of another name",
    "no-cache-hints": "leaves ttlMs and cacheScope out of its 2026-07-28 tools/list result",
    "schema-lax": "declares message as any object and no outputSchema",
    "text-only": "returns the Response as text only, without structuredContent",
    "wrong-echo": "answers with a SessionID of its own",
    # HTTP
    "origin-lax": "checks neither Host nor Origin",
    "media-lax": "checks neither Accept nor Content-Type",
    "session-lax": "serves a request with no session id or an unknown one",
    "version-header-lax": "checks neither MCP-Protocol-Version nor Mcp-Method",
    "get-500": "answers GET with 500",
    "get-hangs": "holds a GET 5 s before it answers",
    "no-session": "assigns no session id",
    "auth-lax": "given a token to ask for ($RAW_PARTNER_TOKEN), serves requests without it all the same",
}
_OPTIONS = {"sse"}
ACTIVE = {f for f in os.environ.get("RAW_PARTNER_FAULTS", "").split(",") if f}
unknown = ACTIVE - set(FAULTS) - _OPTIONS
if unknown:
    sys.exit(f"raw partner: unknown fault(s) {sorted(unknown)}")

HANDSHAKE_VERSIONS = ["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"]
MODERN = "2026-07-28"
CACHE = {"ttlMs": 0, "cacheScope": "private"}
META_VERSION = "io.modelcontextprotocol/protocolVersion"
META_CAPABILITIES = "io.modelcontextprotocol/clientCapabilities"
TYPES = {
    "pal": ("BKN-PAL", "PGM-KPA-V1.0", "PGM-PAL", "bkn_pal"),
    "dac": ("BKN-DAC", "PGM-KDA-V1.0", "PGM-DAC", "bkn_dac"),
    "prc": ("BKN-PRC", "PGM-KPR-V1.0", "PGM-PRC", "bkn_prc"),
}
COMMON = {
    "Header",
    "Mode",
    "MInstance",
    "UEnvironment",
    "SessionID",
    "QueryID",
    "QueryTime",
    "DialogID",
    "TurnIndex",
    "DataXMData",
    "DescrMetadata",
}
REQUEST_FIELDS = {
    "pal": COMMON | {"Question", "Constraints"},
    "dac": COMMON
    | {"Kind", "Question", "Terms", "EntityIDs", "Space", "ProcessActions", "Commitments", "ReleasedCommitmentIDs"},
    "prc": COMMON | {"Kind", "Question", "EntityIDs"},
}


class Partner:
    """The PGM-AUA side: one Response per QueryID, one per (DialogID, TurnIndex)."""

    def __init__(self, role: str) -> None:
        self.role = role
        self.type_name, self.header, self.aim, self.tool_name = TYPES[role]
        self.answered: set[str] = set()
        self.turns: set[tuple[str, int]] = set()
        self.calls = 0
        self.lock = threading.Lock()

    def capabilities(self, discover: bool = False) -> dict[str, Any]:
        found: dict[str, Any] = {} if "no-tools-capability" in ACTIVE else {"tools": {}}
        if "no-resources" not in ACTIVE:
            found["resources"] = {}
        if discover and "capabilities-differ" in ACTIVE:
            found["tools"] = {"listChanged": True}
        return found

    def tool(self) -> dict[str, Any]:
        message = {
            "type": "object",
            "required": ["Header", "Mode", "QueryID", "DialogID", "TurnIndex"],
            "properties": {
                "Header": {"const": self.header},
                "Mode": {"const": "RQ"},
                "QueryID": {"type": "string"},
                "DialogID": {"type": "string"},
                "TurnIndex": {"type": "integer", "minimum": 0},
            },
        }
        properties: dict[str, Any] = {"message": message}
        if self.role == "dac":
            properties["action_context"] = {"type": ["object", "null"]}
        output: dict[str, Any] | None = {
            "type": "object",
            "required": ["Header", "Mode", "RequestID", "Outcome"],
            "properties": {"Header": {"const": self.header}, "Mode": {"const": "RS"}, "Outcome": {"type": "string"}},
        }
        if "schema-lax" in ACTIVE:
            properties["message"], output = {"type": "object"}, None
        return {
            "name": "bkn_nothing" if "no-tool" in ACTIVE else self.tool_name,
            "description": f"Answer a {self.type_name} Request with its Response (PGM-AUA MCP binding 1).",
            "inputSchema": {
                "type": "object",
                "properties": properties,
                "required": ["message"],
                "additionalProperties": False,
            },
            **({"outputSchema": output} if output is not None else {}),
        }

    def call(self, params: dict[str, Any]) -> dict[str, Any]:
        self.calls += 1
        if "slow" in ACTIVE and self.calls == 1:
            time.sleep(1.5)
        if "refuse-all" in ACTIVE:
            return _tool_error("refused: this partner refuses every call")
        arguments = params.get("arguments") or {}
        allowed = {"message", "action_context"} if self.role == "dac" else {"message"}
        if not isinstance(arguments, dict) or set(arguments) - allowed:
            return _rejected("tool-arguments", f"arguments other than {sorted(allowed)}")
        message = arguments.get("message")
        named = (
            isinstance(message, dict)
            and message.get("Header") == self.header
            and message.get("Mode") == "RQ"
            and all(
                isinstance(message.get(k), str)
                for k in ("QueryID", "DialogID", "MInstance", "UEnvironment", "SessionID")
            )
            and isinstance(message.get("TurnIndex"), int)
            and not isinstance(message.get("TurnIndex"), bool)
            and message["TurnIndex"] >= 0
        )
        if not named:
            return _rejected("unusable-request", f"not a {self.type_name} Request with a QueryID, DialogID, TurnIndex")
        assert isinstance(message, dict)
        with self.lock:
            if message["QueryID"] in self.answered:
                return _rejected("query-reused", f"QueryID {message['QueryID']} was already answered")
            self.answered.add(message["QueryID"])
            extra = sorted(set(message) - REQUEST_FIELDS[self.role])
            turn = (message["DialogID"], message["TurnIndex"])
            if extra:
                response = self.respond(message, "not_answered", {"DescrMetadata": f"Unknown properties: {extra}."})
            elif turn in self.turns:
                response = self.respond(message, "not_answered", {"DescrMetadata": "That TurnIndex is taken."})
            elif self.role == "pal":
                self.turns.add(turn)
                stance = {"Label": "plain", "Rationale": "The raw partner has one stance for everyone."}
                response = self.respond(message, "answered", {"Stance": stance})
            else:
                self.turns.add(turn)
                response = self.respond(message, "not_answered", {"DescrMetadata": "The raw partner knows nothing."})
        text = json.dumps(response)
        if "text-only" in ACTIVE:
            return {"content": [{"type": "text", "text": text}], "isError": False}
        return {"content": [{"type": "text", "text": text}], "structuredContent": response, "isError": False}

    def respond(self, request: dict[str, Any], outcome: str, payload: dict[str, Any]) -> dict[str, Any]:
        query = f"raw-{uuid.uuid4().hex[:12]}"
        now = int(time.time() * 1000)
        header = self.header
        if "other-header" in ACTIVE:
            header = "PGM-KPR-V1.0" if self.role == "dac" else "PGM-KDA-V1.0"
            outcome, payload = "not_answered", {"DescrMetadata": "Answered as another type."}
        response = {
            "Header": header,
            "Mode": "RS",
            "MInstance": request["MInstance"],
            "UEnvironment": request["UEnvironment"],
            "SessionID": "raw-session" if "wrong-echo" in ACTIVE else request["SessionID"],
            "QueryID": query,
            "QueryTime": {
                "Header": "OSD-STM-V1.5",
                "SimpleTimeID": f"st-{query}",
                "SimpleTimeData": [
                    {
                        "FlagsByte": 3,
                        "StartTime": now,
                        "EndTime": now,
                        "AccuracyMode": "single",
                        "AccuracyPlusMinus": 5,
                        "TimeType": True,
                        "TimeUnit": "01",
                    }
                ],
            },
            "DialogID": request["DialogID"],
            "TurnIndex": request["TurnIndex"],
            "RequestID": request["QueryID"],
            "Outcome": outcome,
            **payload,
            "DataXMData": {
                "Header": "PTF-DEM-V1.0",
                "DataID": query,
                "DataType": header,
                "Source": [{"AIMID": self.aim}],
            },
        }
        if "no-outcome" in ACTIVE and outcome != "not_answered":
            del response["Outcome"]
        return response


def _tool_error(text: str) -> dict[str, Any]:
    return {"content": [{"type": "text", "text": text}], "isError": True}


def _rejected(rule: str, message: str) -> dict[str, Any]:
    return _tool_error("refused: " + json.dumps({"rejected": True, "findings": [{"rule": rule, "message": message}]}))


def _error(ident: Any, code: int, message: str, data: Any = None) -> dict[str, Any]:
    error: dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        error["data"] = data
    return {"jsonrpc": "2.0", "id": ident, "error": error}


def _result(ident: Any, result: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": ident, "result": result}


class Protocol:
    """The MCP side, for one connection (stdio) or one server (HTTP)."""

    def __init__(self, partner: Partner) -> None:
        self.partner = partner
        self.modern_connection = False  # stdio: the first request decided

    def invalid(self, message: Any) -> dict[str, Any] | list[Any] | None:
        """The answer to a body that is not one JSON-RPC 2.0 message, or None when it is one."""
        if isinstance(message, list):
            if "batch-accepted" in ACTIVE:
                return [a for a in (self.handle(m) for m in message) if a is not None]
            return None if "silent" in ACTIVE else _error(None, -32600, "a batch is not an MCP message")
        if not isinstance(message, dict) or (message.get("jsonrpc") != "2.0" and "jsonrpc-lax" not in ACTIVE):
            ident = message.get("id") if isinstance(message, dict) else None
            return None if "silent" in ACTIVE else _error(ident, -32600, "not a JSON-RPC 2.0 message")
        return None

    def handle(self, message: dict[str, Any], modern: bool | None = None) -> dict[str, Any] | None:
        """One request's answer (None for a notification or a response)."""
        if "method" not in message or "id" not in message:
            return None
        ident, method, params = message["id"], message["method"], message.get("params") or {}
        meta = params.get("_meta") if isinstance(params, dict) else None
        carries = isinstance(meta, dict) and META_VERSION in meta
        if modern is None:
            if method == "initialize":
                self.modern_connection = False
            elif carries and "legacy-only" not in ACTIVE:
                self.modern_connection = True
            modern = self.modern_connection
        if modern:
            if not carries or not isinstance(meta, dict) or META_CAPABILITIES not in meta:
                if "envelope-lax" not in ACTIVE:
                    return _error(ident, -32602, "the request lacks its per-request _meta envelope")
            elif meta[META_VERSION] != MODERN and "version-echo" not in ACTIVE:
                return _error(
                    ident,
                    -32022,
                    "Unsupported protocol version",
                    {"supported": [MODERN], "requested": meta[META_VERSION]},
                )
        return self.dispatch(ident, method, params if isinstance(params, dict) else {}, modern)

    def dispatch(self, ident: Any, method: str, params: dict[str, Any], modern: bool) -> dict[str, Any]:
        partner = self.partner
        if "exit-early" in ACTIVE and method not in ("initialize", "server/discover"):
            sys.stderr.write(f"raw partner: {method} after the handshake, and the fault 'exit-early' is on.\n")
            sys.stderr.flush()
            os._exit(4)
        info = {"name": f"raw-{partner.role}", "version": "0.0.1"}
        if method == "initialize" and "modern-only" not in ACTIVE:
            offered = params.get("protocolVersion")
            version = offered if offered in HANDSHAKE_VERSIONS or "version-echo" in ACTIVE else HANDSHAKE_VERSIONS[0]
            return _result(
                ident, {"protocolVersion": version, "capabilities": partner.capabilities(), "serverInfo": info}
            )
        if method == "server/discover" and "legacy-only" not in ACTIVE:
            if "discover-broken" in ACTIVE:
                return _error(
                    ident, -32022, "Unsupported protocol version", {"supported": ["2099-01-01"], "requested": MODERN}
                )
            return _result(
                ident,
                {
                    "resultType": "complete",
                    "supportedVersions": [MODERN],
                    "capabilities": partner.capabilities(discover=True),
                    **CACHE,
                    "_meta": {"io.modelcontextprotocol/serverInfo": info},
                },
            )
        done = {"resultType": "complete"} if modern else {}
        # 2026-07-28 server/utilities/caching: the listing and reading results carry caching hints.
        cached = {**done, **CACHE} if modern else {}
        if method == "ping":
            return _result(ident, {})
        if method == "tools/list":
            hints = {} if "no-cache-hints" in ACTIVE else cached
            return _result(ident, {"tools": [partner.tool()], **done, **hints})
        if method == "tools/call":
            if "exit" in ACTIVE:
                sys.stderr.write(
                    "raw partner: a tool call, and the fault 'exit' is on.\nraw partner: exiting with 3.\n"
                )
                sys.stderr.flush()
                os._exit(3)
            if params.get("name") != partner.tool()["name"]:
                if "tool-is-error" in ACTIVE:
                    return _result(ident, {**_tool_error(f"Unknown tool: {params.get('name')}"), **done})
                return _error(ident, -32602, f"Unknown tool: {params.get('name')}")
            return _result(ident, {**partner.call(params), **done})
        if method.startswith("resources/") and "no-resources" not in ACTIVE:
            if method == "resources/list":
                return _result(ident, {"resources": [], **cached})
            if method == "resources/templates/list":
                return _result(ident, {"resourceTemplates": [], **cached})
            if method == "resources/read":
                if "resource-empty" in ACTIVE:
                    return _result(ident, {"contents": [], **cached})
                return _error(ident, -32602 if modern else -32002, f"Resource not found: {params.get('uri')}")
        return _error(ident, -32600 if "method-code" in ACTIVE else -32601, f"Method not found: {method}")


# -- what was read and written (--log) --------------------------------------------------------------

LOG: list[Any] = []  # the open log file, when --log names one
_LOG_LOCK = threading.Lock()


def note(direction: str, message: Any) -> None:
    if LOG:
        with _LOG_LOCK:
            LOG[0].write(json.dumps({"direction": direction, "message": message}) + "\n")
            LOG[0].flush()


# -- stdio ------------------------------------------------------------------------------------------


def serve_stdio(partner: Partner) -> None:
    protocol = Protocol(partner)
    out = sys.stdout.buffer
    first = True

    def write(message: Any) -> None:
        nonlocal first
        line = json.dumps(message).encode("utf-8") + b"\n"
        note("sent", message)
        out.write(line * (2 if "duplicate" in ACTIVE else 1))
        if first and "garbage" in ACTIVE:
            out.write(b"hello from the raw partner\n")
        first = False
        out.flush()

    for line in sys.stdin.buffer:
        if not line.strip():
            continue
        try:
            message = json.loads(line)
        except ValueError:
            note("received", line.decode("utf-8", "replace"))
            if "silent" not in ACTIVE:
                write(_error(None, -32700, "Parse error"))
            continue
        note("received", message)
        answer = protocol.invalid(message)
        if answer is not None or isinstance(message, list) or not isinstance(message, dict):
            if answer is not None and answer != []:
                write(answer)
            continue
        if message.get("jsonrpc") != "2.0" and "jsonrpc-lax" not in ACTIVE:
            continue  # "silent": not answered
        reply = protocol.handle(message)
        if reply is not None:
            write(reply)
            if "unsolicited" in ACTIVE and message.get("method") in ("initialize", "server/discover"):
                write(_result("probe-never-sent", {}))


# -- Streamable HTTP --------------------------------------------------------------------------------


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    partner: Partner
    port: int
    sessions: ClassVar[set[str]] = set()

    def log_message(self, format: str, *args: Any) -> None:  # quiet: the probe reads stderr
        pass

    def _send(self, status: int, body: Any = None, headers: dict[str, str] | None = None) -> None:
        data = b""
        kind = "application/json"
        if body is not None:
            note("sent", body)
            text = json.dumps(body)
            if "sse" in ACTIVE and status == 200:
                event = f"event: message\ndata: {text}\n\n"
                kind, text = "text/event-stream", event * (2 if "duplicate" in ACTIVE else 1)
            data = text.encode("utf-8")
        self.send_response(status)
        if body is not None:
            self.send_header("Content-Type", kind)
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _unauthorized(self) -> bool:
        """Beyond loopback a partner asks for a bearer token ($RAW_PARTNER_TOKEN): 401 without it."""
        token = os.environ.get("RAW_PARTNER_TOKEN")
        if not token or "auth-lax" in ACTIVE or self.headers.get("Authorization") == f"Bearer {token}":
            return False
        self._send(401, {"error": "invalid_token"}, {"WWW-Authenticate": 'Bearer error="invalid_token"'})
        return True

    def _foreign(self) -> bool:
        if self._unauthorized():
            return True
        if "origin-lax" in ACTIVE:
            return False
        own = {f"127.0.0.1:{self.port}", f"localhost:{self.port}"}
        if self.headers.get("Host") not in own:
            self._send(421, _error(None, -32600, "Host not allowed"))
            return True
        origin = self.headers.get("Origin")
        if origin is not None and origin not in {f"http://{h}" for h in own}:
            self._send(403, _error(None, -32600, "Origin not allowed"))
            return True
        return False

    def _session(self) -> str | None:
        return self.headers.get("Mcp-Session-Id")

    def do_GET(self) -> None:
        if self._foreign():
            return
        if "get-hangs" in ACTIVE:
            time.sleep(5)
        if "get-500" in ACTIVE:
            self._send(500, {"error": "broken"})
        else:
            self._send(405, None, {"Allow": "POST, DELETE"})

    def do_DELETE(self) -> None:
        if self._foreign():
            return
        session = self._session()
        if session in self.sessions:
            self.sessions.discard(session)
            self._send(200)
        else:
            self._send(404 if session else 400, _error(None, -32600, "no such session"))

    def do_PUT(self) -> None:
        self._send(405, None, {"Allow": "GET, POST, DELETE"})

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        if self._foreign():
            return
        if "media-lax" not in ACTIVE:
            if not (self.headers.get("Content-Type") or "").startswith("application/json"):
                self._send(415, _error(None, -32600, "Content-Type must be application/json"))
                return
            accept = self.headers.get("Accept") or ""
            if "application/json" not in accept or "text/event-stream" not in accept:
                self._send(406, _error(None, -32600, "Accept must list application/json and text/event-stream"))
                return
        try:
            message = json.loads(body)
        except ValueError:
            self._send(400, _error(None, -32700, "Parse error"))
            return
        note("received", message)
        protocol = Protocol(self.partner)
        invalid = protocol.invalid(message)
        if invalid is not None:
            self._send(200 if isinstance(invalid, list) else 400, invalid)
            return
        if not isinstance(message, dict):
            self._send(400)
            return
        version_header = self.headers.get("MCP-Protocol-Version")
        params = message.get("params") if isinstance(message.get("params"), dict) else {}
        meta = params.get("_meta") if isinstance(params, dict) else None
        modern = (
            "legacy-only" not in ACTIVE
            and message.get("method") != "initialize"
            and (version_header == MODERN or (isinstance(meta, dict) and META_VERSION in meta))
        )
        if modern:
            self._modern(message, protocol, meta)
        else:
            self._legacy(message, protocol, version_header)

    def _modern(self, message: dict[str, Any], protocol: Protocol, meta: Any) -> None:
        if "version-header-lax" not in ACTIVE and "id" in message:
            wanted = meta.get(META_VERSION) if isinstance(meta, dict) else None
            if wanted is not None and self.headers.get("MCP-Protocol-Version") != wanted:
                self._send(400, _error(message["id"], -32020, "MCP-Protocol-Version does not match _meta"))
                return
            if self.headers.get("Mcp-Method") != message.get("method"):
                self._send(400, _error(message["id"], -32020, "Mcp-Method does not match the method"))
                return
        answer = protocol.handle(message, modern=True)
        if answer is None:
            self._send(202)
            return
        code = (answer.get("error") or {}).get("code")
        status = 404 if code == -32601 else 400 if code in (-32600, -32602, -32020, -32022) else 200
        self._send(status, answer)

    def _legacy(self, message: dict[str, Any], protocol: Protocol, version_header: str | None) -> None:
        headers: dict[str, str] = {}
        if message.get("method") == "initialize":
            if "no-session" not in ACTIVE and "modern-only" not in ACTIVE:
                session = uuid.uuid4().hex
                self.sessions.add(session)
                headers["Mcp-Session-Id"] = session
        elif "session-lax" not in ACTIVE and "no-session" not in ACTIVE:
            session = self._session()
            if session is None:
                self._send(400, _error(None, -32600, "Mcp-Session-Id missing"))
                return
            if session not in self.sessions:
                self._send(404, _error(None, -32600, "Session not found"))
                return
        if (
            version_header is not None
            and version_header not in HANDSHAKE_VERSIONS
            and "version-header-lax" not in ACTIVE
            and message.get("method") != "initialize"
        ):
            self._send(400, _error(message.get("id"), -32600, f"unsupported MCP-Protocol-Version {version_header}"))
            return
        answer = protocol.handle(message, modern=False)
        if answer is None:
            self._send(202, None, headers)
        else:
            self._send(200, answer, headers)


def serve_http(partner: Partner, port: int) -> None:
    Handler.partner, Handler.port = partner, port
    server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
    server.daemon_threads = True
    server.serve_forever()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--role", choices=sorted(TYPES), default="pal")
    parser.add_argument("--http", type=int, metavar="PORT")
    parser.add_argument("--log", metavar="FILE", help="append every JSON-RPC message read and written, as JSON Lines")
    args = parser.parse_args()
    if args.log:
        LOG.append(open(args.log, "a", encoding="utf-8"))  # noqa: SIM115 - open for the process's life
    partner = Partner(args.role)
    if args.http is not None:
        serve_http(partner, args.http)
    else:
        serve_stdio(partner)


if __name__ == "__main__":
    main()
