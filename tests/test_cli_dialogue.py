"""`pgm-explore dialogue`: the demo and scripts over every transport, recorded transcripts that
`pgm-explore check` passes, script validation naming the step, exit statuses, no leftover process."""

from __future__ import annotations

import importlib.util
import json
import os
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from conftest import ROOT

from pgm_explore.cli import load_script, main

SCRIPT = ROOT / "data" / "dialogue-scripts" / "market.json"
MARKET_STEPS: list[dict[str, Any]] = json.loads(SCRIPT.read_text(encoding="utf-8"))["steps"]

HAS_MCP = importlib.util.find_spec("mcp") is not None
needs_mcp = pytest.mark.skipif(not HAS_MCP, reason="the mcp extra is not installed")
if HAS_MCP:
    # The stdio transport's default errlog is the sys.stderr of when mcp was imported: import it now,
    # while that is the session's, not the capture of one test (closed after it).
    import mcp.client.stdio  # noqa: F401


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    status = main(list(argv))
    out, err = capsys.readouterr()
    return status, out, err


def records(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def partner_processes() -> list[int]:
    """Processes of this test run still serving a partner (children of this process)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            cmdline = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        parent = int(stat.rpartition(")")[2].split()[1])
        if parent == os.getpid() and b"pgm_explore.mcp.serve" in cmdline:
            found.append(int(entry.name))
    return found


def write_script(tmp_path: Path, document: Any) -> Path:
    path = tmp_path / "script.json"
    path.write_text(json.dumps(document), encoding="utf-8")
    return path


# --- recorded transcripts ------------------------------------------------------------------------


@needs_mcp
# Over stdio and HTTP the partners are processes of their own, started for real: seconds each.
@pytest.mark.parametrize(
    "transport",
    ["inprocess", pytest.param("stdio", marks=pytest.mark.slow), pytest.param("http", marks=pytest.mark.slow)],
)
def test_demo_over_each_transport_records_a_transcript_check_passes(
    transport: str, tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    # capfd, not capsys: the stdio transport hands its errlog (which needs a fileno) to its subprocesses.
    out = tmp_path / "demo.jsonl"
    status, text, err = run(capfd, "dialogue", "--demo", "--out", str(out), "--transport", transport)
    assert (status, err) == (0, "")
    messages = records(out)
    assert text == f"recorded {len(messages)} messages to {out}: 0 errors, 0 warnings\n"
    assert messages[0]["Header"] == "PGM-PCP-V1.0"
    assert {m["Header"] for m in messages} == {"PGM-PCP-V1.0", "PGM-KPR-V1.0", "PGM-KDA-V1.0", "PGM-KPA-V1.0"}
    overall = [m["Feasibility"]["Overall"] for m in messages if "Feasibility" in m]
    assert overall == ["partially_feasible", "feasible"]
    statuses = [s["Status"] for m in messages for s in m.get("CommitmentStatus", [])]
    assert statuses == ["retained", "released"]
    assert partner_processes() == []
    assert run(capfd, "check", str(out))[0] == 0


@needs_mcp
def test_check_json_on_the_demo_output_prints_nothing(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "demo.jsonl"
    assert run(capsys, "dialogue", "--demo", "--out", str(out))[0] == 0
    assert run(capsys, "check", "--format", "json", str(out)) == (0, "", "")


@needs_mcp
def test_the_example_script_runs_every_step(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "market.jsonl"
    status, text, err = run(capsys, "dialogue", "--script", str(SCRIPT), "--out", str(out))
    assert (status, err) == (0, "")
    messages = records(out)
    assert text.endswith(": 0 errors, 0 warnings\n") and f"recorded {len(messages)} messages" in text
    # The PC Prompt, then a Request and its Response per step, in the script's order.
    assert len(messages) == 1 + 2 * len(MARKET_STEPS)
    assert messages[0]["DialogID"] == "dlg-market-script"
    requests = messages[1::2]
    assert [r["Header"] for r in requests] == [
        {"prc": "PGM-KPR-V1.0", "dac": "PGM-KDA-V1.0", "pal": "PGM-KPA-V1.0"}[s["partner"]] for s in MARKET_STEPS
    ]
    assert [r.get("Kind") for r in requests] == [s.get("kind") for s in MARKET_STEPS]
    assert [r["RequestID"] for r in messages[2::2]] == [r["QueryID"] for r in requests]
    assert [m["Feasibility"]["Overall"] for m in messages if "Feasibility" in m] == ["partially_feasible", "feasible"]
    assert requests[2]["ProcessActions"][1] == {"Step": 1, "Statement": MARKET_STEPS[2]["statements"][1]}
    assert requests[-1]["ReleasedCommitmentIDs"] == ["cm-lantern"]
    assert requests[5]["Constraints"] == MARKET_STEPS[5]["constraints"]


@needs_mcp
def test_a_script_whose_requests_do_not_conform_exits_1(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # Space must be an object: the partner answers not_answered, and the transcript has an error.
    steps = [{"partner": "dac", "kind": "constraints", "fields": {"Space": "the plaza"}}]
    out = tmp_path / "bad.jsonl"
    status, text, err = run(capsys, "dialogue", "--script", str(write_script(tmp_path, steps)), "--out", str(out))
    assert status == 1 and err == ""
    assert records(out)[-1]["Outcome"] == "not_answered"
    assert "error" in text and text.splitlines()[-1].startswith(f"recorded 3 messages to {out}: ")
    assert run(capsys, "check", str(out))[0] == 1


@needs_mcp
def test_a_refused_request_exits_1_naming_the_step(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # Someone else's Domain Access partner, which refuses every tool call (a fault it is started with).
    monkeypatch.setenv("RAW_PARTNER_FAULTS", "refuse-all")
    partner = "dac=" + shlex.join([sys.executable, str(ROOT / "tests" / "raw_partner.py"), "--role", "dac"])
    out = tmp_path / "refused.jsonl"
    status, text, err = run(capsys, "dialogue", "--script", str(SCRIPT), "--out", str(out), "--partner", partner)
    assert status == 1
    assert err.endswith(
        "pgm-explore dialogue: step 1: the partner refused the Request: refused: this partner refuses every call\n"
    )
    # The PC Prompt, step 0's Request and Response, and step 1's Request, which has no Response.
    assert [m["Mode"] for m in records(out)[1:]] == ["RQ", "RS", "RQ"]
    assert text.splitlines()[-1] == f"recorded 4 messages to {out}: 0 errors, 1 warning"
    assert partner_processes() == []


# --- script validation ---------------------------------------------------------------------------

BAD_SCRIPTS: dict[str, tuple[Any, str]] = {
    "unknown partner": ([{"partner": "prc", "kind": "intent"}, {"partner": "xyz"}], "step 1: partner must be one of"),
    "step not an object": (["prc"], "step 0: a step is an object, not str"),
    "unknown key": ([{"partner": "pal", "question": "q?", "kind": "x"}], "step 0: unknown key(s) 'kind'"),
    "bad kind": ([{"partner": "dac", "kind": "purchase"}], "step 0: kind must be one of semantic_grounding"),
    "feasibility without statements": ([{"partner": "dac", "kind": "feasibility"}], "step 0: statements"),
    "statements on another kind": (
        [{"partner": "dac", "kind": "affordances", "statements": ["MM-Move Nil a From b To c"]}],
        "step 0: statements",
    ),
    "empty commitment": ([{"partner": "dac", "kind": "commitment"}], "step 0: a commitment step needs retain"),
    "release not a list": (
        [{"partner": "dac", "kind": "commitment", "release": "cm-1"}],
        "step 0: release must be a non-empty list",
    ),
    "pal without question": ([{"partner": "pal"}], "step 0: a pal step needs a question"),
    "fields with own keys": (
        [{"partner": "dac", "kind": "constraints", "fields": {"EntityIDs": ["x"]}}],
        "step 0: fields may hold Terms and Space only",
    ),
    "no steps": ({"steps": []}, "a non-empty list of steps"),
    "unknown top-level key": ({"steps": [{"partner": "pal", "question": "q?"}], "dialog": "d"}, "unknown key(s)"),
}


@pytest.mark.parametrize("name", BAD_SCRIPTS)
def test_a_bad_script_exits_2_naming_the_step(name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    document, message = BAD_SCRIPTS[name]
    out = tmp_path / "never.jsonl"
    status, text, err = run(capsys, "dialogue", "--script", str(write_script(tmp_path, document)), "--out", str(out))
    assert (status, text) == (2, "")
    assert err.startswith("pgm-explore dialogue: ") and message in err, err
    assert not out.exists()


def test_an_unreadable_script_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "broken.json").write_text("{not json", encoding="utf-8")
    for path, message in ((tmp_path / "broken.json", "is not JSON"), (tmp_path / "missing.json", "cannot read")):
        status, text, err = run(capsys, "dialogue", "--script", str(path), "--out", str(tmp_path / "o.jsonl"))
        assert (status, text) == (2, "") and message in err


def test_the_example_script_is_valid() -> None:
    script = load_script(str(SCRIPT))
    assert script.dialog_id == "dlg-market-script" and len(script.steps) == len(MARKET_STEPS)


@pytest.mark.parametrize("where", ["directory", "missing folder", "under a file"])
def test_an_unwritable_out_exits_2(where: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "file").write_text("x")
    out = {
        "directory": tmp_path,
        "missing folder": tmp_path / "no" / "t.jsonl",
        "under a file": tmp_path / "file" / "t",
    }
    status, text, err = run(capsys, "dialogue", "--demo", "--out", str(out[where]))
    assert (status, text) == (2, "")
    assert err.startswith(f"pgm-explore dialogue: cannot write --out {out[where]}: ")
    assert partner_processes() == []


@pytest.mark.parametrize(
    "argv",
    [
        ["dialogue", "--out", "x.jsonl"],
        ["dialogue", "--demo"],
        ["dialogue", "--demo", "--script", "s.json", "--out", "x.jsonl"],
        ["dialogue", "--demo", "--out", "x.jsonl", "--transport", "pigeon"],
    ],
)
def test_usage_errors_exit_2(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    assert run(capsys, *argv)[0] == 2


def test_without_the_mcp_extra_it_says_how_to_install_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "pgm_explore.mcp", None)  # import pgm_explore.mcp raises ImportError
    status, text, err = run(capsys, "dialogue", "--demo", "--out", str(tmp_path / "d.jsonl"))
    assert (status, text) == (2, "")
    assert 'pip install "pgm-explore[mcp]"' in err
    assert not (tmp_path / "d.jsonl").exists()


def test_help_documents_the_script_format(capsys: pytest.CaptureFixture[str]) -> None:
    status, text, _ = run(capsys, "dialogue", "--help")
    assert status == 0
    for key in ('"partner"', '"statements"', '"retain"', '"release"', '"constraints"', "market.json"):
        assert key in text


def test_importing_the_cli_does_not_import_mcp() -> None:
    code = "import sys, pgm_explore.cli; print(sorted(m for m in sys.modules if m.split('.')[0] == 'mcp'))"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60)
    assert result.stdout.strip() == "[]"


# --- partners anywhere ---------------------------------------------------------------------------

# A partner of someone else's: Personality Alignment that answers every Request with a JSON-RPC error.
BROKEN_PAL = """
from mcp.server import MCPServer
from mcp.shared.exceptions import MCPError
server = MCPServer("broken-pal")

@server.tool()
def bkn_pal(message: dict) -> dict:
    raise MCPError(-32603, "the stance engine is down")

server.run()
"""


@needs_mcp
def test_a_json_rpc_error_is_a_finding_and_the_transcript_is_kept(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    server = tmp_path / "broken_pal.py"
    server.write_text(BROKEN_PAL, encoding="utf-8")
    out = tmp_path / "demo.jsonl"
    status, text, err = run(
        capsys, "dialogue", "--demo", "--out", str(out), "--partner", f"pal={sys.executable} {server}"
    )
    assert status == 1 and "Traceback" not in err
    assert "[partner-error] $: JSON-RPC error -32603: the stance engine is down" in err
    kept = records(out)
    assert kept[0]["Header"] == "PGM-PCP-V1.0" and kept[-1]["Header"] == "PGM-KPA-V1.0"  # the PAL Request, unanswered
    assert len(kept) == 16 and f"recorded 16 messages to {out}" in text


@needs_mcp
def test_a_text_only_partner_is_read_from_its_text(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "demo.jsonl"
    faulty = f"prc={sys.executable} {ROOT / 'tests' / 'faulty_partners.py'} text-only"
    status, text, err = run(capsys, "dialogue", "--demo", "--out", str(out), "--partner", faulty)
    assert status == 0, err
    assert err.count("[partner-text-only]") == 2  # the two BKN-PRC Responses of the demo
    assert len(records(out)) == 19 and "0 errors" in text


@needs_mcp
@pytest.mark.parametrize(
    ("partner", "says"),
    [("dac", "expected ROLE=URL or ROLE=COMMAND"), ("dac=", "no URL or command"), ("any=x", "ROLE one of")],
)
def test_a_bad_partner_argument_exits_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], partner: str, says: str
) -> None:
    status, text, err = run(capsys, "dialogue", "--demo", "--out", str(tmp_path / "d.jsonl"), "--partner", partner)
    assert (status, text) == (2, "") and says in err


@needs_mcp
def test_an_unreachable_partner_exits_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "d.jsonl"
    status, text, err = run(capsys, "dialogue", "--demo", "--out", str(out), "--partner", "dac=http://127.0.0.1:9/mcp")
    assert (status, text) == (2, "") and "could not be reached" in err and "Traceback" not in err


@needs_mcp
@pytest.mark.slow  # (a partner process started for real)
def test_the_demo_with_a_partner_that_speaks_only_initialize(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "demo.jsonl"
    legacy = f"dac={sys.executable} {ROOT / 'tests' / 'legacy_partner.py'}"
    status, text, err = run(capsys, "dialogue", "--demo", "--out", str(out), "--partner", legacy)
    assert (status, err) == (0, "")
    assert f"recorded 19 messages to {out}: 0 errors, 0 warnings" in text


# --- writing --out (issue 11) ----------------------------------------------------------------------


def test_a_script_with_a_lone_surrogate_exits_2_and_leaves_out_alone(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # It ended in a UnicodeEncodeError traceback with a truncated --out: the Question "\ud800"
    # reached the recording, which UTF-8 cannot write. Now the script reader says where it is.
    script = tmp_path / "script.json"
    text = '{"steps": [{"partner": "pal", "question": "hi \\ud800"}]}'
    script.write_text(text, encoding="utf-8")
    out = tmp_path / "out.jsonl"
    out.write_text("old\n", encoding="utf-8")
    column = text.index("\\ud800") + 1
    status, shown, err = run(capsys, "dialogue", "--script", str(script), "--out", str(out))
    assert (status, shown) == (2, "")
    assert err.startswith(f"pgm-explore dialogue: the script {script} is not JSON (line 1, column {column}): ")
    assert "\\ud800" in err and "UTF-8" in err
    assert out.read_text(encoding="utf-8") == "old\n"


@needs_mcp
def test_out_replaces_a_planted_link_instead_of_following_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    victim = tmp_path / "victim.json"
    victim.write_text('{"precious": true}\n', encoding="utf-8")
    out = tmp_path / "out.jsonl"
    out.symlink_to(victim)
    status, _, err = run(capsys, "dialogue", "--script", str(SCRIPT), "--out", str(out))
    assert (status, err) == (0, "")
    assert victim.read_text(encoding="utf-8") == '{"precious": true}\n'
    assert not out.is_symlink() and len(records(out)) == 1 + 2 * len(MARKET_STEPS)


@needs_mcp
@pytest.mark.skipif(sys.platform == "win32", reason="file size limits (ulimit -f) are POSIX")
def test_out_is_written_whole_or_not_at_all(tmp_path: Path) -> None:
    def small_files_only() -> None:  # as `ulimit -f 4` would: a write beyond 4 KiB fails (EFBIG)
        import resource
        import signal

        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (4096, 4096))

    out = tmp_path / "out.jsonl"
    out.write_text("old\n", encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "-m", "pgm_explore", "dialogue", "--demo", "--out", str(out)],
        preexec_fn=small_files_only,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert (done.returncode, done.stdout) == (2, "")
    assert done.stderr == f"pgm-explore dialogue: cannot write --out {out}: File too large\n"
    assert out.read_text(encoding="utf-8") == "old\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["out.jsonl"]  # no temporary file left
