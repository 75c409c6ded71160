"""pgm-explore's own clients and a partner served beyond loopback, which asks for a bearer token
(issue 19): ``Endpoint``, ``pgm-explore dialogue`` and ``pgm-explore probe`` send the token they are
given (``$PGM_EXPLORE_PARTNER_TOKEN`` or ``--token-file``) and are served; without it, or with a
wrong one, they stop with one plain line naming the fix and exit 2, and the token never shows in
what they write."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("mcp")

import anyio

from pgm_explore.mcp import BasicKnowledge
from pgm_explore.mcp.connect import TOKEN_ENV, Endpoint, TokenRequired
from tests import probing

TOKEN = "tok-9f2c1e7a5b-partner"


@pytest.fixture(scope="module")
def partner() -> Iterator[str]:
    """``serve domain-access --http --host 0.0.0.0 --token TOKEN``; its URL."""
    with probing.http_server(probing.guarded_reference_http("domain-access", TOKEN)) as url:
        yield url


def cli(*argv: str, token: str | None = None, cwd: Path) -> subprocess.CompletedProcess[str]:
    """``pgm-explore ARGV`` in a process of its own, with ``$PGM_EXPLORE_PARTNER_TOKEN`` = ``token``."""
    env = {k: v for k, v in os.environ.items() if k != TOKEN_ENV}
    if token is not None:
        env[TOKEN_ENV] = token
    command = [sys.executable, "-m", "pgm_explore", *argv]
    return subprocess.run(command, env=env, cwd=cwd, capture_output=True, text=True, timeout=600)


async def tool_names(endpoint: Endpoint) -> list[str]:
    async with endpoint.client(timeout=60) as client:
        return [tool.name for tool in (await client.list_tools()).tools]


def test_an_endpoint_with_the_token_is_served_and_without_it_says_what_to_do(partner: str) -> None:
    assert anyio.run(tool_names, Endpoint(partner, token=TOKEN)) == ["bkn_dac"]
    with pytest.raises(TokenRequired) as missing:
        anyio.run(tool_names, Endpoint(partner))
    assert missing.value.sent is False
    assert str(missing.value).startswith(f"the partner at {partner} asks for a bearer token: set {TOKEN_ENV}")
    with pytest.raises(TokenRequired) as wrong:
        anyio.run(tool_names, Endpoint(partner, token=TOKEN + "x"))
    assert wrong.value.sent is True and "refused the bearer token sent (401)" in str(wrong.value)
    assert TOKEN not in str(wrong.value) and TOKEN not in repr(Endpoint(partner, token=TOKEN))


def test_the_environment_is_not_read_by_the_library(partner: str, monkeypatch: pytest.MonkeyPatch) -> None:
    # A page where a visitor types a URL must not send the server's secret to it: only the command
    # line, whose user named the partners, reads the variable.
    monkeypatch.setenv(TOKEN_ENV, TOKEN)
    with pytest.raises(TokenRequired):
        anyio.run(tool_names, Endpoint(partner))


def test_basic_knowledge_deliberates_with_a_token_protected_partner(partner: str) -> None:
    async def main() -> list[dict]:
        async with BasicKnowledge(partners={"dac": Endpoint(partner, token=TOKEN)}) as bk:
            await bk.open_dialogue()
            await bk.ask_dac("affordances", "What can be done here?")
            return list(bk.transcript)

    transcript = anyio.run(main)
    assert any(m.get("Outcome") == "answered" for m in transcript)


@pytest.mark.slow  # two dialogues, each a pgm-explore process
def test_dialogue_sends_the_token_from_the_environment_or_a_file(partner: str, tmp_path: Path) -> None:
    done = cli("dialogue", "--demo", "--out", "t.jsonl", "--partner", f"dac={partner}", token=TOKEN, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert "0 errors" in done.stdout and done.stderr == ""
    assert TOKEN not in (tmp_path / "t.jsonl").read_text(encoding="utf-8")
    (tmp_path / "token").write_text(TOKEN + "\n", encoding="utf-8")  # as an editor saves it
    argv = ["dialogue", "--demo", "--out", "f.jsonl", "--partner", f"dac={partner}", "--token-file", "token"]
    done = cli(*argv, token="not-this-one", cwd=tmp_path)  # the file wins over the variable
    assert done.returncode == 0, done.stderr
    assert len((tmp_path / "f.jsonl").read_text(encoding="utf-8").splitlines()) > 10


@pytest.mark.slow  # three pgm-explore processes
def test_dialogue_without_the_token_stops_with_one_plain_line(partner: str, tmp_path: Path) -> None:
    for token in (None, "", "wrong"):
        done = cli("dialogue", "--demo", "--out", "t.jsonl", "--partner", f"dac={partner}", token=token, cwd=tmp_path)
        assert done.returncode == 2 and done.stdout == ""
        said = "refused the bearer token sent (401): check" if token else "asks for a bearer token: set"
        assert done.stderr == (
            f"pgm-explore dialogue: the partners could not be reached: the partner at {partner} {said} "
            f"{TOKEN_ENV} or give --token-file FILE (in Python: Endpoint(URL, token=TOKEN))\n"
        ), token
        assert not (tmp_path / "t.jsonl").exists()


@pytest.mark.slow  # three pgm-explore processes
def test_a_token_file_that_cannot_be_used_is_a_usage_error(partner: str, tmp_path: Path) -> None:
    (tmp_path / "two").write_text("one two\n", encoding="utf-8")
    (tmp_path / "blank").write_text("\n", encoding="utf-8")
    for name, said in (("missing", "cannot be read"), ("two", "several words"), ("blank", "found none")):
        argv = ["probe", "--partner", f"dac={partner}", "--token-file", name]
        done = cli(*argv, cwd=tmp_path)
        assert done.returncode == 2 and done.stderr.startswith(f"pgm-explore probe: --token-file {name}: ")
        assert said in done.stderr and len(done.stderr.splitlines()) == 1


@pytest.mark.slow  # two probes in full, each a pgm-explore process
def test_probe_with_the_token_passes_and_never_quotes_it(partner: str, tmp_path: Path) -> None:
    done = cli("probe", "--partner", f"dac={partner}", "--format", "json", token=TOKEN, cwd=tmp_path)
    checks = [json.loads(line) for line in done.stdout.splitlines()]
    failed = [c for c in checks if c["status"] == "fail"]
    assert done.returncode == 0 and not failed, failed
    auth = next(c for c in checks if c["check"] == "http-auth")  # it refuses what comes without the token
    assert auth["status"] == "pass" and "without the token: 401" in auth["message"], auth
    assert {"http-media-types", "http-session", "dns-rebinding"} <= {
        c["check"] for c in checks if c["status"] == "pass"
    }
    html = cli("probe", "--partner", f"dac={partner}", "--format", "html", token=TOKEN, cwd=tmp_path)
    assert html.returncode == 0 and "Bearer probe-not-the-token" in html.stdout  # the evidence: another token
    assert TOKEN not in done.stdout + done.stderr + html.stdout + html.stderr


def test_probe_without_the_token_stops_with_one_plain_line(partner: str, tmp_path: Path) -> None:
    done = cli("probe", "--partner", f"dac={partner}", cwd=tmp_path)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr == (
        f"pgm-explore probe: cannot reach the dac partner {partner!r}: the partner at {partner} asks for a "
        f"bearer token: set {TOKEN_ENV} or give --token-file FILE (in Python: Endpoint(URL, token=TOKEN))\n"
    )
