"""``pgm-explore probe``: the reference partners pass every check but the known faults of our servers
(tests/data/probe/reference-baseline.yml); each faulty partner fails exactly its own checks.

The partners nobody here wrote against our code (the raw JSON-RPC server of tests/raw_partner.py)
are in tests/test_probe_raw.py.
"""

from __future__ import annotations

import io
import json
import logging
import re
import sys
from collections.abc import Iterator
from contextlib import ExitStack, redirect_stderr, redirect_stdout
from pathlib import Path

import pytest

pytest.importorskip("mcp")

from pgm_explore.cli import main
from pgm_explore.mcp import domain_access_server, personality_alignment_server, prompt_creation_server
from pgm_explore.mcp.baseline import Baseline
from pgm_explore.mcp.connect import TOKEN_ENV, Endpoint
from pgm_explore.mcp.probe import CHECKS, SERVER_LOG, Check, probe, probe_sync
from tests import probing
from tests.faulty_partners import EXPECTED_FAILURES, FAULTY

HERE = Path(__file__).resolve().parent
SERVE = f"{sys.executable} -m pgm_explore.mcp.serve"
ROLES = {"prc": "prompt-creation", "dac": "domain-access", "pal": "personality-alignment"}
BASELINE_FILE = HERE / "data" / "probe" / "reference-baseline.yml"
BASELINE = Baseline.load(BASELINE_FILE)
BY_ID = {c.id: c for c in CHECKS}


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


def _run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        status = main(["probe", *argv])
    return status, out.getvalue(), err.getvalue()


def _lines(text: str) -> list[dict]:
    return [json.loads(line) for line in text.splitlines()]


def _as_the_reference(lines: list[dict], roles: list[str], transport: str) -> None:
    """Every check that applies to ``transport`` passes, but the baseline's (which may fail or, where
    they cannot be judged, be skipped); the others are skipped, saying why."""
    assert [(d["partner"], d["check"]) for d in lines] == [
        (role, c.id) for role in ("prc", "dac", "pal") if role in roles for c in CHECKS if role in c.roles
    ]
    checks = [Check(**line) for line in lines]
    verdict = BASELINE.judge(checks)
    assert verdict.ok, verdict.lines(BASELINE.source)
    for line, check in zip(lines, checks, strict=True):
        assert set(line) == {"partner", "check", "status", "message", "spec"} and line["spec"]
        if transport not in BY_ID[check.check].transports:
            assert check.status == "skip" and check.message.startswith(("over HTTP only", "in process")), line
        elif not BASELINE.expects(check):
            assert check.status == "pass", line


@pytest.mark.anyio
async def test_reference_partners_in_process_pass_every_check() -> None:
    # probe() from a running event loop, as in Jupyter; the same run, made once, is a witness of
    # tests/test_probe_raw.py (probing.reference()).
    endpoints = {
        "prc": Endpoint("prc", server=prompt_creation_server()),
        "dac": Endpoint("dac", server=domain_access_server()),
        "pal": Endpoint("pal", server=personality_alignment_server()),
    }
    checks = await probe(endpoints)
    _as_the_reference([c.to_dict() for c in checks], ["prc", "dac", "pal"], "inprocess")


@pytest.mark.parametrize("name", sorted(FAULTY))
def test_each_faulty_partner_fails_exactly_its_checks(name: str) -> None:
    checks = list(probing.faulty(name).checks.values())
    failed = {c.check for c in checks if c.status == "fail" and not BASELINE.expects(c)}
    assert failed == EXPECTED_FAILURES[name]
    for check in checks:
        if check.status == "fail":
            assert check.message and check.spec


@pytest.mark.slow
def test_reference_partners_over_stdio_pass_every_check() -> None:
    partners = (f"--partner={role}={SERVE} {name}" for role, name in ROLES.items())
    status, out, err = _run(*partners, "--format=json", f"--baseline={BASELINE_FILE}")
    assert status == 0, err
    _as_the_reference(_lines(out), list(ROLES), "stdio")


@pytest.fixture
def http_partners(monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, str]]:
    """The reference partners over HTTP, each asking for a bearer token (``--token``), which the
    probe is given as a person gives it (``$PGM_EXPLORE_PARTNER_TOKEN``): http-auth is judged too."""
    monkeypatch.setenv(TOKEN_ENV, "reference-partner-token")
    with ExitStack() as stack:
        yield {
            role: stack.enter_context(probing.http_server(probing.reference_http(name, "reference-partner-token")))
            for role, name in ROLES.items()
        }


@pytest.mark.slow
def test_reference_partners_over_http_pass_every_check(http_partners: dict[str, str]) -> None:
    partners = (f"--partner={role}={url}" for role, url in http_partners.items())
    status, out, err = _run(*partners, "--format=json", f"--baseline={BASELINE_FILE}")
    assert status == 0, err
    _as_the_reference(_lines(out), list(ROLES), "http")


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        (["--partner=dac"], "expected ROLE=URL or ROLE=COMMAND"),
        (["--partner=xyz=http://127.0.0.1:1/mcp"], "ROLE one of prc, dac, pal"),
        (["--partner=dac='unclosed"], "cannot be split"),
        (["--partner=dac=http://127.0.0.1:9/mcp", "--partner=dac=cmd"], "given twice"),
        (["--partner=dac=/nonexistent/partner --flag"], "cannot reach the dac partner '/nonexistent/partner --flag'"),
        (["--partner=pal=http://127.0.0.1:9/mcp"], "cannot reach the pal partner 'http://127.0.0.1:9/mcp'"),
    ],
)
def test_usage_errors_and_unreachable_partners_exit_2(argv: list[str], says: str) -> None:
    status, out, err = _run(*argv)
    assert (status, out) == (2, "") and says in err and "Traceback" not in err


def test_a_command_is_not_run_through_a_shell(tmp_path: Path) -> None:
    marker = tmp_path / "made-by-a-shell"
    status, _, err = _run(f"--partner=dac=/nonexistent/partner; touch {marker}")
    assert status == 2 and not marker.exists() and "/nonexistent/partner;" in err


@pytest.mark.slow
def test_a_server_that_speaks_only_initialize_passes_pgm_aua_and_fails_the_mcp_faults_it_has() -> None:
    # Written without the MCP SDK, from docs/mcp.md: newline-delimited JSON-RPC, no server/discover.
    # Its PGM-AUA answers are right; its JSON-RPC is lax: an unknown tool is a tool error, a batch
    # gets no answer and "jsonrpc": "1.0" is served.
    status, out, err = _run(f"--partner=dac={sys.executable} {HERE / 'legacy_partner.py'}", "--format=json")
    verdicts = {d["check"]: d["status"] for d in _lines(out)}
    assert (status, err) == (1, "")
    assert {check for check, status in verdicts.items() if status == "fail"} == {
        "unknown-tool",
        "batch-rejected",
        "jsonrpc-version",
    }
    skipped = {check for check, status in verdicts.items() if status == "skip"}
    http_only = {c.id for c in CHECKS if c.transports == ("http",)}
    # No server/discover: the current handshake, the envelope and the capabilities to compare; no
    # resources capability: no unknown resource to ask for.
    assert skipped == {"handshake-current", "capabilities", "envelope", "unknown-resource", *http_only}


def _server_logs(checks: list[Check]) -> dict[str, list[str]]:
    """Per check, the lines the server logged that its evidence holds."""
    found: dict[str, list[str]] = {}
    for check in checks:
        for item in check.evidence:
            if isinstance(item, dict) and SERVER_LOG in item:
                found.setdefault(check.check, []).extend(item[SERVER_LOG])
    return found


def test_what_a_server_of_this_process_logs_is_evidence_not_stderr(caplog: pytest.LogCaptureFixture) -> None:
    # The SDK logs "Tool 'bkn_dac' failed: ..." at INFO for every bad Request the probe sends on
    # purpose; through the root logger (configure_logging's stderr handler) it reached the cell output.
    caplog.set_level(logging.INFO)
    checks = probe_sync({"dac": Endpoint("dac", server=domain_access_server())})
    assert [r.getMessage() for r in caplog.records if r.name.startswith("mcp")] == []
    logs = _server_logs(checks)
    assert any("Tool 'bkn_dac' failed" in line and "unusable-request" in line for line in logs["bad-request"])
    assert any("query-reused" in line for line in logs["cancellation"])
    assert any("Resource 'probe-none://missing' failed" in line for line in logs["unknown-resource"])
    bad = next(c for c in checks if c.check == "bad-request")
    # Beside the exchange it belongs to: the nameless document, the tool error, what the server logged.
    assert bad.status == "pass" and bad.evidence[2] == {"hello": 1} and "error" in bad.evidence[3]
    assert bad.evidence[4] == {SERVER_LOG: logs["bad-request"]}
    # Afterwards the SDK logs as before: the probe gave the logger back as it was.
    mcp_logger = logging.getLogger("mcp")
    assert mcp_logger.propagate and not [h for h in mcp_logger.handlers if type(h).__name__ == "_LogLines"]


@pytest.mark.slow
def test_notebook_08_shows_no_stderr_and_keeps_the_servers_lines_in_the_evidence(tmp_path: Path) -> None:
    import nbformat
    from nbclient import NotebookClient

    path = HERE.parent / "notebooks" / "08_probe_a_partner.ipynb"
    notebook = nbformat.read(path, as_version=4)
    NotebookClient(
        notebook, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(tmp_path)}}
    ).execute()
    outputs = [(cell.source, o) for cell in notebook.cells if cell.cell_type == "code" for o in cell.outputs]
    stderr = [(source[:60], o.get("text", "")[:200]) for source, o in outputs if o.get("name") == "stderr"]
    assert stderr == []
    assert not [o for _, o in outputs if o.get("output_type") == "error"]
    shown = "".join(o.get("text", "") for source, o in outputs if source.startswith("bad_request ="))
    assert "bad-request - pass" in shown and "the server logged:" in shown and "Tool 'bkn_dac' failed" in shown


def test_the_docs_list_every_check_with_its_clause() -> None:
    text = (HERE.parent / "docs" / "probe.md").read_text(encoding="utf-8")
    ids = {c.id for c in CHECKS}
    rows = re.findall(r"^\| `([a-z-]+)` \|.*\| ([^|]+?) \|$", text, re.MULTILINE)
    documented = {check: clause for check, clause in rows if check in ids}
    assert documented == {c.id: c.spec for c in CHECKS}
