"""``pgm-explore probe`` against a partner nobody here wrote against our code: tests/raw_partner.py,
plain Python that reads and writes the JSON-RPC bytes itself, started as a command (stdio) or as an
HTTP server, its faults switched on by the environment (``RAW_PARTNER_FAULTS``).

Every check is tried against a partner that makes it pass, one that makes it fail and one with which
it cannot be judged, which must give skip or fail, never pass (:data:`WITNESSES`). The probe runs
are made once each (tests/probing.py): a test reads one.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from xml.etree import ElementTree

import pytest

pytest.importorskip("mcp")

from pgm_explore.mcp.baseline import Baseline
from pgm_explore.mcp.probe import CHECKS, Check
from pgm_explore.mcp.report import as_html, as_text
from tests import probing
from tests.probing import RAW, VARIANTS, Run, command

BY_ID = {c.id: c for c in CHECKS}
_TOOL_CHECKS = ("tool-schemas", "structured-result", "response-conforms", "echo", "outcome")

# Per variant, every check that does not pass (the HTTP checks of a stdio partner are skipped, not listed).
EXPECTED: dict[str, dict[str, str]] = {
    "good-stdio": {},
    "good-http": {},
    "proto-stdio": {
        **dict.fromkeys(
            (
                "jsonrpc-responses",
                "unknown-method",
                "unknown-tool",
                "unknown-resource",
                "batch-rejected",
                "jsonrpc-version",
                "version-negotiation",
                "capabilities",
                "envelope",
                "response-conforms",  # a conforming Response, of another type
            ),
            "fail",
        ),
        "tool-schemas": "skip",  # no Response of its own type to try the outputSchema on
    },
    "proto-http": dict.fromkeys(
        (
            "jsonrpc-responses",  # each SSE event twice
            "http-media-types",
            "http-session",
            "http-protocol-version",
            "http-get",
            "dns-rebinding",
            "tool-schemas",
            "structured-result",
            "echo",
            "response-conforms",
            "outcome",
        ),
        "fail",
    ),
    "impossible-http": dict.fromkeys(
        ("handshake-current", "unknown-resource", "capabilities", "envelope", "http-session"), "skip"
    ),
    "impossible-stdio": {
        **dict.fromkeys(("unknown-resource", *_TOOL_CHECKS), "skip"),
        **dict.fromkeys(("batch-rejected", "jsonrpc-version", "bad-request", "interleaved", "cancellation"), "fail"),
    },
    "modern-only": {
        "handshake-legacy": "fail",
        "tool-listed": "fail",  # its tools/list lacks the 2026-07-28 caching hints
        **dict.fromkeys(("capabilities", *_TOOL_CHECKS, "bad-request", "interleaved", "cancellation"), "skip"),
    },
    "discover-broken": {
        "handshake-current": "fail",
        "tool-listed": "fail",
        **dict.fromkeys(
            ("capabilities", "envelope", *_TOOL_CHECKS, "pc-prompt", "bad-request", "interleaved", "cancellation"),
            "skip",
        ),
    },
    "exit": {
        **dict.fromkeys(
            (
                "unknown-tool",
                "unknown-resource",
                "batch-rejected",
                "jsonrpc-version",
                "version-negotiation",
                "envelope",
                "bad-request",
                "interleaved",
                "cancellation",
            ),
            "fail",
        ),
        **dict.fromkeys(_TOOL_CHECKS, "skip"),
    },
    "exit-early": {
        **dict.fromkeys(
            (
                "unknown-method",
                "unknown-tool",
                "unknown-resource",
                "batch-rejected",
                "jsonrpc-version",
                "version-negotiation",
                "envelope",
                "tool-listed",
            ),
            "fail",
        ),
        **dict.fromkeys((*_TOOL_CHECKS, "bad-request", "interleaved", "cancellation"), "skip"),
    },
    "slow": {"interleaved": "fail", "cancellation": "fail"},  # a single-threaded partner: ping waits too
    "slow-http": {"http-get": "fail"},
    "token-http": {},
    "token-lax-http": {"http-auth": "fail"},  # asks for the token, serves without it all the same
    "dac": {"commitments": "fail", "interleaved": "fail", "feasibility": "skip"},
    "prc": {"pc-prompt": "fail"},
}

# Per check: a partner that makes it pass, one that makes it fail, one with which it cannot be judged.
# "raw:NAME" is a variant of the raw partner, "faulty:NAME" one of tests/faulty_partners.py,
# "reference:ROLE" our own server in this process.
WITNESSES: dict[str, tuple[str, str, str]] = {
    "handshake-legacy": ("raw:good-stdio", "raw:modern-only", "raw:modern-only"),
    "handshake-current": ("raw:good-stdio", "raw:discover-broken", "raw:impossible-http"),
    "jsonrpc-responses": ("raw:good-stdio", "raw:proto-stdio", "reference:pal"),
    "unknown-method": ("raw:good-http", "raw:proto-stdio", "raw:exit-early"),
    "unknown-tool": ("raw:good-stdio", "raw:proto-stdio", "raw:exit"),
    "unknown-resource": ("raw:good-stdio", "raw:proto-stdio", "raw:impossible-stdio"),
    "batch-rejected": ("raw:good-http", "raw:proto-stdio", "reference:pal"),
    "jsonrpc-version": ("raw:good-stdio", "raw:proto-stdio", "reference:pal"),
    "version-negotiation": ("raw:good-http", "raw:proto-stdio", "reference:pal"),
    "capabilities": ("raw:good-stdio", "raw:proto-stdio", "raw:impossible-http"),
    "envelope": ("raw:good-http", "raw:proto-stdio", "raw:impossible-http"),
    "http-media-types": ("raw:good-http", "raw:proto-http", "raw:good-stdio"),
    "http-session": ("raw:good-http", "raw:proto-http", "raw:impossible-http"),
    "http-protocol-version": ("raw:good-http", "raw:proto-http", "raw:good-stdio"),
    "http-get": ("raw:good-http", "raw:proto-http", "raw:good-stdio"),
    "dns-rebinding": ("raw:good-http", "raw:proto-http", "raw:good-stdio"),
    "http-auth": ("raw:token-http", "raw:token-lax-http", "raw:good-http"),
    "tool-listed": ("raw:good-stdio", "raw:discover-broken", "raw:exit-early"),
    "tool-schemas": ("raw:good-stdio", "raw:proto-http", "raw:proto-stdio"),
    "pc-prompt": ("reference:prc", "raw:prc", "raw:discover-broken"),
    "structured-result": ("raw:good-stdio", "raw:proto-http", "raw:impossible-stdio"),
    "response-conforms": ("raw:good-stdio", "raw:proto-stdio", "raw:impossible-stdio"),
    "echo": ("raw:good-stdio", "raw:proto-http", "raw:impossible-stdio"),
    "outcome": ("raw:good-stdio", "raw:proto-http", "raw:impossible-stdio"),
    "commitments": ("reference:dac", "faulty:forgets-commitments", "raw:dac"),
    "feasibility": ("reference:dac", "faulty:wrong-feasibility", "raw:dac"),
    "bad-request": ("raw:good-stdio", "raw:impossible-stdio", "raw:exit"),
    "interleaved": ("raw:good-http", "raw:dac", "raw:exit"),
    "cancellation": ("raw:good-stdio", "raw:impossible-stdio", "raw:exit"),
}


def _run(name: str) -> Run:
    kind, _, which = name.partition(":")
    if kind == "raw":
        return probing.raw(which)
    if kind == "faulty":
        return probing.faulty(which)
    return probing.reference()[which]


def _expected(name: str, check: str) -> str:
    variant = VARIANTS[name]
    if variant.transport not in BY_ID[check].transports:
        return "skip"
    if check == "http-auth" and variant.token is None:
        return "skip"  # no token given: none to withhold
    return EXPECTED[name].get(check, "pass")


# Each variant is a partner process probed for real (seconds): one stays in the fast lane.
@pytest.mark.parametrize(
    "name", [name if name == "good-stdio" else pytest.param(name, marks=pytest.mark.slow) for name in sorted(VARIANTS)]
)
def test_the_raw_partner(name: str) -> None:
    run = probing.raw(name)
    applicable = [c.id for c in CHECKS if VARIANTS[name].role in c.roles]
    assert list(run.checks) == applicable
    wrong = {check: (c.status, c.message) for check, c in run.checks.items() if c.status != _expected(name, check)}
    assert not wrong, wrong
    for c in run.checks.values():
        assert c.message and c.spec
    if run.status is not None:  # made by the command: its exit status says whether a check failed
        assert run.status == (1 if "fail" in run.statuses.values() else 0), run.err


@pytest.mark.parametrize("check", [c.id for c in CHECKS])
def test_every_check_passes_fails_and_cannot_pass_where_it_cannot_be_judged(check: str) -> None:
    passing, failing, impossible = WITNESSES[check]
    assert _run(passing).statuses[check] == "pass", _run(passing).checks[check]
    assert _run(failing).statuses[check] == "fail", _run(failing).checks[check]
    assert _run(impossible).statuses[check] in ("skip", "fail"), _run(impossible).checks[check]


def test_the_witnesses_cover_every_check() -> None:
    assert sorted(WITNESSES) == sorted(c.id for c in CHECKS)


# -- the cases of issue 23, each against the raw partner ------------------------------------------


def test_duplicate_and_unsolicited_responses_and_stray_lines_fail_jsonrpc_responses() -> None:
    message = probing.raw("proto-stdio").checks["jsonrpc-responses"].message
    assert "a second response to id 1 (initialize)" in message
    assert "a response to id 'probe-never-sent', which was never sent" in message
    assert "a line that is not JSON" in message


def test_a_fault_given_with_env_reaches_the_partner_command() -> None:
    run = probing.raw("proto-stdio")  # pgm-explore probe --env RAW_PARTNER_FAULTS=...
    assert run.variant is not None and run.variant.via == "cli-env"
    assert run.statuses["unknown-tool"] == "fail"


def test_a_partner_command_runs_with_the_callers_environment() -> None:
    # RAW_PARTNER_FAULTS=refuse-all,... pgm-explore probe --partner "pal=python raw_partner.py"
    run = probing.raw("impossible-stdio")
    assert run.variant is not None and run.variant.via == "cli-inherit"
    assert "refused: this partner refuses every call" in run.checks["cancellation"].message


def test_an_exit_is_reported_with_its_status_and_the_last_lines_of_stderr_as_text() -> None:
    run = probing.raw("exit")
    message = run.checks["interleaved"].message
    assert message.startswith("not judged: the partner exited with status 3;")
    assert message.splitlines()[1:] == [
        "  raw partner: a tool call, and the fault 'exit' is on.",
        "  raw partner: exiting with 3.",
    ]
    assert "Connection closed" not in json.dumps([c.message for c in run.checks.values()])
    text = as_text(list(run.checks.values()))
    assert "        raw partner: exiting with 3.\n" in text and "\\n" not in text


def test_a_partner_that_exits_at_once_is_unreachable_with_its_status_and_stderr_lines() -> None:
    script = "import sys; [print(m, file=sys.stderr) for m in ('raw: no profile given', 'raw: giving up')]; sys.exit(5)"
    status, out, err = command(f'--partner=pal={sys.executable} -c "{script}"')
    assert (status, out) == (2, "")
    assert "cannot reach the pal partner" in err and "the partner exited with status 5" in err
    assert err.splitlines()[-2:] == ["  raw: no profile given", "  raw: giving up"]
    assert "\\n" not in err


@pytest.mark.slow  # two partners that answer only after the 1 s limit, probed in full
def test_a_timeout_names_its_limit() -> None:
    run = probing.raw("slow")  # --timeout 1
    assert "no answer within 1 s (--timeout)" in run.checks["interleaved"].message
    assert "no answer within 1 s (--timeout)" in run.checks["cancellation"].message
    # The probe's own HTTP requests too (a GET held past the limit).
    assert "could not ask: no answer within 1 s (--timeout)" in probing.raw("slow-http").checks["http-get"].message


def test_cancellation_passes_only_on_evidence() -> None:
    good = probing.raw("good-stdio").checks["cancellation"]
    assert good.status == "pass" and "query-reused" in good.message
    refused = probing.raw("impossible-stdio").checks["cancellation"]  # every call refused: no evidence
    assert refused.status == "fail" and "not as query-reused" in refused.message


def test_tool_schemas_tries_the_output_schema_only_on_responses_of_the_partners_own_type() -> None:
    check = probing.raw("proto-stdio").checks["tool-schemas"]  # answers with BKN-DAC's Header
    assert check.status == "skip" and "no conforming BKN-PAL Response" in check.message
    assert "outputSchema refuses" not in check.message


def test_the_html_report_shows_every_verdict_folded_with_failures_open() -> None:
    run = probing.raw("proto-http")  # read back from pgm-explore probe --format html
    shown, opened = probing.html_checks(run.out)
    assert {name: c.status for name, c in shown.items()} == run.statuses
    assert opened == {name for name, status in run.statuses.items() if status == "fail"}
    assert "Messages exchanged" in run.out and "<script" not in run.out and "http://" not in run.out.split("<body>")[0]


def test_the_html_report_escapes_every_string() -> None:
    hostile = "<script>alert(1)</script>&\"'"
    check = Check("dac", hostile, "fail", hostile, hostile, ({"text": hostile},))
    page = as_html([check], known=[check], title=hostile)
    assert "<script>" not in page and "&lt;script&gt;" in page
    shown, opened = probing.html_checks(page)
    assert list(shown) == [hostile] and opened == {hostile}
    assert (shown[hostile].status, shown[hostile].message, shown[hostile].spec) == ("fail", hostile, hostile)


@pytest.mark.slow
def test_a_faulty_partner_fails_with_evidence_in_every_format(tmp_path: Path) -> None:
    partner = (f"--partner=pal={RAW}", "--env=RAW_PARTNER_FAULTS=wrong-echo")
    status, out, _ = command(*partner, "--format=json")
    lines = [json.loads(line) for line in out.splitlines()]
    assert status == 1 and [d["check"] for d in lines if d["status"] == "fail"] == ["echo"]
    known = tmp_path / "known.yml"
    known.write_text("pal: [echo]\n", encoding="utf-8")
    status, text, err = command(*partner, "--format=text", "--no-color", f"--baseline={known}")
    assert status == 0 and "1 known failures, 0 new, 0 stale" in err
    assert "FAIL  echo: Response to probe-" in text and "raw-session" in text and "(known: in the baseline)" in text
    assert '        spec: BKN-PAL FR "Correlation"' in text and "        > {" in text  # its clause and messages
    assert text.splitlines()[-1] == f"{len(lines)} checks: {len(lines) - 7} pass, 1 fail, 6 skip"
    status, xml, _ = command(*partner, "--format=junit")
    suite = ElementTree.fromstring(xml.split("\n", 1)[1]).find("testsuite")
    assert status == 1 and suite is not None and (suite.get("failures"), suite.get("skipped")) == ("1", "6")
    failed = [case.get("name") for case in suite.iter("testcase") if case.find("failure") is not None]
    assert failed == ["echo"]


# -- the baseline ------------------------------------------------------------------------------------


def test_a_baseline_fails_only_on_new_failures_and_on_stale_entries(tmp_path: Path) -> None:
    run = probing.raw("proto-stdio")
    failed = sorted(name for name, status in run.statuses.items() if status == "fail")
    assert Baseline.parse({"pal": failed}, "exact").judge(list(run.checks.values())).ok
    baseline = tmp_path / "probe-baseline.yml"
    baseline.write_text(f"# known\npal:\n  - {failed[0]}\n  - echo  # passes: stale\n", encoding="utf-8")
    variant = VARIANTS["proto-stdio"]
    status, _, err = command(
        f"--partner=pal={RAW}",
        f"--env=RAW_PARTNER_FAULTS={','.join(variant.faults)}",
        f"--baseline={baseline}",
        "--format=json",
    )
    assert status == 1
    assert f"baseline {baseline}: 1 known failures, {len(failed) - 1} new, 1 stale" in err
    assert f"new failure: pal {failed[1]}:" in err
    assert f"stale: pal echo passes now: remove it from {baseline}" in err


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("pal: [no-such-check]\n", "pal: no check 'no-such-check' for this partner"),
        ("xyz: [echo]\n", "'xyz' is not a partner role"),
        ("pal: echo\n", "pal: expected a list of check ids"),
        ("pal: [echo\n", "not YAML"),
        ("- echo\n", "expected a mapping of partner roles"),
    ],
)
def test_a_baseline_that_cannot_be_used_is_a_usage_error(tmp_path: Path, text: str, says: str) -> None:
    baseline = tmp_path / "baseline.yml"
    baseline.write_text(text, encoding="utf-8")
    status, out, err = command(f"--partner=pal={RAW}", f"--baseline={baseline}")
    assert (status, out) == (2, "") and says in err and "Traceback" not in err


def test_a_json_baseline_and_a_role_given_as_star(tmp_path: Path) -> None:
    baseline = tmp_path / "baseline.json"
    baseline.write_text('{"pal": "*", "dac": ["echo"]}', encoding="utf-8")
    loaded = Baseline.load(baseline)
    run = probing.raw("proto-http")
    verdict = loaded.judge(list(run.checks.values()))
    assert verdict.ok and len(verdict.known) == list(run.statuses.values()).count("fail")


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        (["--env=noequals"], "--env noequals: expected KEY=VALUE"),
        (["--timeout=0"], "not a positive number of seconds"),
        (["--timeout=soon"], "not a number of seconds"),
    ],
)
def test_env_and_timeout_values_that_cannot_be_used(argv: list[str], says: str) -> None:
    status, out, err = command(f"--partner=pal={RAW}", *argv)
    assert (status, out) == (2, "") and says in err and "Traceback" not in err
