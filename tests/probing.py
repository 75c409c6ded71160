"""The probe runs the tests judge, each made once per test session (a run takes seconds).

``raw(name)`` probes a variant of tests/raw_partner.py (a partner nobody here wrote against our
code), started as a command or as an HTTP server, with the faults of :data:`VARIANTS` switched on by
the environment. Some variants go through the command line (``pgm-explore probe``), with the faults
given by ``--env`` or inherited from this process's environment, and read its output back: what a
user gets. ``faulty(name)`` and ``reference()`` probe servers of this process.
"""

from __future__ import annotations

import functools
import io
import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager, redirect_stderr, redirect_stdout
from dataclasses import dataclass, field
from html.parser import HTMLParser
from pathlib import Path

from pgm_explore.cli import main
from pgm_explore.mcp import domain_access_server, personality_alignment_server, prompt_creation_server
from pgm_explore.mcp.connect import TOKEN_ENV, Endpoint
from pgm_explore.mcp.probe import Check, probe_sync
from tests.faulty_partners import FAULTY

HERE = Path(__file__).resolve().parent
RAW = f"{sys.executable} {HERE / 'raw_partner.py'}"
FAULTS_VARIABLE = "RAW_PARTNER_FAULTS"


@dataclass(frozen=True)
class Variant:
    """One way to start the raw partner, and how the probe is run against it."""

    role: str
    faults: tuple[str, ...] = ()
    transport: str = "stdio"
    timeout: float = 30.0
    via: str = "api"
    """``api`` (probe_sync), ``cli-env`` (the command, faults by --env), ``cli-inherit`` (the command,
    faults in this process's environment), ``cli-html`` (the command, --format html, read back)."""
    extra: tuple[str, ...] = ()
    """More arguments for the command."""
    token: str | None = None
    """A bearer token the partner asks for (over HTTP) and the probe is given: ``Endpoint(token=)``,
    or ``$PGM_EXPLORE_PARTNER_TOKEN`` for the command."""


VARIANTS: dict[str, Variant] = {
    "good-stdio": Variant("pal"),
    "good-http": Variant("pal", ("sse",), "http"),
    "proto-stdio": Variant(
        "pal",
        (
            "duplicate",
            "unsolicited",
            "garbage",
            "method-code",
            "tool-is-error",
            "resource-empty",
            "batch-accepted",
            "jsonrpc-lax",
            "version-echo",
            "capabilities-differ",
            "envelope-lax",
            "other-header",
        ),
        via="cli-env",
    ),
    "proto-http": Variant(
        "pal",
        (
            "origin-lax",
            "media-lax",
            "session-lax",
            "version-header-lax",
            "get-500",
            "schema-lax",
            "text-only",
            "wrong-echo",
            "no-outcome",
            "sse",
            "duplicate",
        ),
        "http",
        via="cli-html",
    ),
    "impossible-http": Variant("pal", ("legacy-only", "no-session", "no-resources"), "http"),
    "impossible-stdio": Variant("pal", ("refuse-all", "no-resources", "silent"), via="cli-inherit"),
    "modern-only": Variant("pal", ("modern-only", "no-cache-hints")),
    "discover-broken": Variant("prc", ("discover-broken", "no-tool")),
    "exit": Variant("pal", ("exit",), via="cli-inherit"),
    "exit-early": Variant("pal", ("exit-early",)),
    "slow": Variant("pal", ("slow",), timeout=1.0, via="cli-env"),
    "slow-http": Variant("pal", ("get-hangs",), "http", timeout=1.0),
    "token-http": Variant("pal", ("sse",), "http", via="cli-env", token="raw-partner-token"),
    "token-lax-http": Variant("pal", ("auth-lax",), "http", token="raw-partner-token"),
    "dac": Variant("dac"),
    "prc": Variant("prc"),
}


@dataclass
class Run:
    """A probe run: its results, and what the command printed when it was run by the command."""

    checks: dict[str, Check]
    status: int | None = None
    out: str = ""
    err: str = ""
    variant: Variant | None = None
    statuses: dict[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.statuses = {name: c.status for name, c in self.checks.items()}


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextmanager
def http_server(command: Callable[[int], list[str]], env: Mapping[str, str] | None = None) -> Iterator[str]:
    """``command(port)`` started as a Streamable HTTP server on a free loopback port; its URL.
    Stopped (by its process id) when the block ends."""
    port = _free_port()
    process = subprocess.Popen(command(port), env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60
        while True:  # a TCP connect, not an HTTP request: readiness without side effects
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                assert time.monotonic() < deadline and process.poll() is None, f"{command(port)} did not start"
                time.sleep(0.05)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        process.terminate()
        process.wait(10)


def reference_http(name: str, token: str | None = None) -> Callable[[int], list[str]]:
    """The command of the reference partner ``name`` (``domain-access``, ...) serving HTTP on a port,
    asking for the bearer ``token`` when given."""
    serve = [sys.executable, "-m", "pgm_explore.mcp.serve", name, "--http"]
    return lambda port: [*serve, "--port", str(port), *(["--token", token] if token else [])]


def guarded_reference_http(name: str, token: str) -> Callable[[int], list[str]]:
    """The reference partner ``name`` served beyond loopback (``--host 0.0.0.0``), as a person starts
    it in a container: it asks for the bearer ``token`` and keeps the Host/Origin checks for the
    name clients here use (127.0.0.1:PORT)."""
    beyond = ["--host", "0.0.0.0"]
    return lambda port: [*reference_http(name, token)(port), *beyond, "--allow-host", f"127.0.0.1:{port}"]


@contextmanager
def http_raw_partner(role: str, faults: tuple[str, ...], *options: str, token: str | None = None) -> Iterator[str]:
    """The raw partner serving Streamable HTTP (with ``options``, e.g. ``--log FILE``), asking for
    ``token`` when given; its URL."""
    env = {**os.environ, FAULTS_VARIABLE: ",".join(faults), **({"RAW_PARTNER_TOKEN": token} if token else {})}
    raw = [sys.executable, str(HERE / "raw_partner.py"), "--role", role]
    with http_server(lambda port: [*raw, "--http", str(port), *options], env) as url:
        yield url


@contextmanager
def _environment(values: Mapping[str, str]) -> Iterator[None]:
    saved = {key: os.environ.get(key) for key in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def command(*argv: str) -> tuple[int, str, str]:
    """``pgm-explore probe ARGV``: exit status, stdout, stderr."""
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        status = main(["probe", *argv])
    return status, out.getvalue(), err.getvalue()


class _Report(HTMLParser):
    """The checks of an HTML report: ``<details id="ROLE-CHECK">``, its status badge, its message and
    clause (the page's own words, unescaped by the parser)."""

    def __init__(self) -> None:
        super().__init__()
        self.checks: dict[str, dict[str, str]] = {}
        self.opened: set[str] = set()
        self._check: str | None = None
        self._field: str | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        named = {key: value or "" for key, value in attrs}
        if tag == "details" and named.get("id"):
            partner, self._check = named["id"].split("-", 1)
            self.checks[self._check] = {"partner": partner, "check": self._check, "message": "", "spec": ""}
            if "open" in named:
                self.opened.add(self._check)
        elif self._check and tag == "span" and named.get("class", "").startswith("st "):
            self.checks[self._check]["status"] = named["class"].split()[1]
        elif self._check and tag == "p" and named.get("class") in ("msg", "clause"):
            self._field = "message" if named["class"] == "msg" else "spec"

    def handle_endtag(self, tag: str) -> None:
        if tag == "p":
            self._field = None

    def handle_data(self, data: str) -> None:
        if self._check and self._field:
            self.checks[self._check][self._field] += data


def html_checks(page: str) -> tuple[dict[str, Check], set[str]]:
    """The checks an HTML report shows, and those it shows unfolded."""
    parser = _Report()
    parser.feed(page)
    checks = {}
    for name, fields in parser.checks.items():
        fields["spec"] = fields["spec"].removeprefix("Clause: ")
        checks[name] = Check(**fields)  # type: ignore[arg-type]
    return checks, parser.opened


def _checks(role: str, lines: str) -> dict[str, Check]:
    return {d["check"]: Check(**d) for d in map(json.loads, lines.splitlines()) if d["partner"] == role}


@functools.cache
def raw(name: str) -> Run:
    """The probe of the raw partner variant ``name``, run once."""
    variant = VARIANTS[name]
    faults = ",".join(variant.faults)
    if variant.transport == "http":
        with http_raw_partner(variant.role, variant.faults, token=variant.token) as url:
            return _run(variant, url, {})
    target = f"{RAW} --role {variant.role}"
    return _run(variant, target, {FAULTS_VARIABLE: faults})


def _run(variant: Variant, target: str, env: dict[str, str]) -> Run:
    if variant.via == "api":
        endpoint = Endpoint(target, env=env, token=variant.token)
        checks = probe_sync({variant.role: endpoint}, timeout=variant.timeout)
        return Run({c.check: c for c in checks}, variant=variant)
    argv = [f"--partner={variant.role}={target}", f"--timeout={variant.timeout:g}", *variant.extra]
    if variant.via == "cli-env":
        argv += [f"--env={key}={value}" for key, value in env.items()]
    fmt = "html" if variant.via == "cli-html" else "json"
    inherited = env if variant.via == "cli-inherit" else {}
    with _environment({**inherited, **({TOKEN_ENV: variant.token} if variant.token else {})}):
        status, out, err = command(*argv, f"--format={fmt}")
    checks = html_checks(out)[0] if fmt == "html" else _checks(variant.role, out)
    return Run(checks, status, out, err, variant)


@functools.cache
def faulty(name: str) -> Run:
    role, factory = FAULTY[name]
    checks = probe_sync({role: Endpoint(name, server=factory())})
    return Run({c.check: c for c in checks})


@functools.cache
def reference() -> dict[str, Run]:
    """The reference partners in this process, per role."""
    endpoints = {
        "prc": Endpoint("prc", server=prompt_creation_server()),
        "dac": Endpoint("dac", server=domain_access_server()),
        "pal": Endpoint("pal", server=personality_alignment_server()),
    }
    checks = probe_sync(endpoints)
    return {role: Run({c.check: c for c in checks if c.partner == role}) for role in endpoints}
