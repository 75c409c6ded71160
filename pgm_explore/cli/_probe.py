"""``pgm-explore probe``: PGM-AUA conformance checks of someone else's partner server (docs/probe.md).

The checks and their reports are :mod:`pgm_explore.mcp`'s (the ``mcp`` extra); this module
declares the command, picks the report's form and judges the run against a baseline.
"""

from __future__ import annotations

import argparse
import dataclasses
from typing import IO

from pgm_explore.cli._options import Command, add_color_option, add_partner_option
from pgm_explore.cli._output import EXIT_NONCONFORMING, EXIT_OK, EXIT_USAGE, PROG, clean, palette_for, write_text
from pgm_explore.cli._partners import partners

__all__ = ["COMMAND"]

EPILOG = """\
partners:
  --partner ROLE=TARGET, ROLE one of prc (Prompt Creation), dac (Domain Access),
  pal (Personality Alignment); at least one, each role at most once. A TARGET
  starting with http:// or https:// is a streamable-HTTP URL; anything else is a
  command line, split as a shell would split it but not run through a shell, and
  started as a stdio server with this environment (as a shell would), plus each
  --env KEY=VALUE. A URL partner is sent the bearer token in --token-file FILE,
  else in $PGM_EXPLORE_PARTNER_TOKEN (a partner served beyond loopback asks for
  it); one that answers 401 stops the probe with one line saying so (exit 2).

checks (docs/probe.md): both MCP handshakes and the MCP layer (JSON-RPC
  responses, unknown method, tool and resource, batch and version rejection,
  version negotiation, capabilities, the 2026-07-28 envelope; over HTTP: media
  types, sessions, the MCP-Protocol-Version header, GET, Host and Origin, and,
  given a token, that nothing is served without it), then
  PGM-AUA: the tool and its schemas, the PC Prompt resource (prc), structured
  results, conforming Responses, echoed identities, Outcome, commitments and
  feasibility (dac), bad Requests, two interleaved dialogues, cancellation.

output (--format):
  text   per partner, one line per check; a failure with its spec clause and the
         messages exchanged
  json   one JSON object per line: {"partner", "check", "status", "message", "spec"},
         status pass, fail or skip
  junit  JUnit XML: a testsuite per partner, a testcase per check
  html   one page: per check its verdict, clause and the messages exchanged

baseline (--baseline FILE, YAML or JSON): the failures known per partner, e.g.
  dac: [unknown-tool, http-get]. A known failure does not fail the run; a new
  failure does, and so does a listed check that passes now (remove it). What the
  run makes of the baseline is written to stderr.

exit status:
  0    no check failed (with --baseline: no new failure, no stale entry)
  1    at least one check failed (with --baseline: a new failure or a stale entry)
  2    usage error, a partner that cannot be reached (with the reason), a baseline
       that cannot be read, the mcp extra is not installed
       (pip install "pgm-explore[mcp]"), or the output could not be written

examples:
  pgm-explore probe --partner dac=http://127.0.0.1:8000/mcp
  pgm-explore probe --partner "dac=python -m my_domain_access" --format junit > probe.xml
  pgm-explore probe --partner "pal=my-pal --stdio" --env PAL_PROFILE=tutor --timeout 5
  pgm-explore probe --partner dac=http://127.0.0.1:8000/mcp --baseline probe-baseline.yml
  PGM_EXPLORE_PARTNER_TOKEN=... pgm-explore probe --partner dac=http://partners.example:8000/mcp
"""


def _positive(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of seconds: {text!r}") from None
    if not value > 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"not a positive number of seconds: {text!r}")
    return value


def arguments(parser: argparse.ArgumentParser) -> None:
    """The options and arguments of ``pgm-explore probe``."""
    add_partner_option(
        parser, "a partner to probe: prc, dac or pal, = a URL or a command (repeat for several)", required=True
    )
    parser.add_argument(
        "--env",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="an environment variable added for partner commands (repeatable)",
    )
    parser.add_argument(
        "--timeout",
        type=_positive,
        default=30.0,
        metavar="SECONDS",
        help="how long each call waits for its answer (default: 30)",
    )
    parser.add_argument("--baseline", metavar="FILE", help="known failures (YAML or JSON): fail only on new ones")
    parser.add_argument(
        "--format", choices=("text", "json", "junit", "html"), default="text", help="output (default: text)"
    )
    add_color_option(parser)


def run(args: argparse.Namespace, out: IO[str], err: IO[str]) -> int:
    command = "probe"
    endpoints = partners(command, args.partner, err, args.token_file)
    if endpoints is None:
        return EXIT_USAGE
    from pgm_explore.mcp.baseline import Baseline, BaselineError
    from pgm_explore.mcp.connect import PartnerArgumentError, parse_env
    from pgm_explore.mcp.probe import Unreachable, probe_sync
    from pgm_explore.mcp.report import as_html, as_json_lines, as_junit, as_text

    try:
        env = parse_env(args.env)
        baseline = Baseline.load(args.baseline) if args.baseline else None
    except (PartnerArgumentError, BaselineError) as exc:
        err.write(f"{PROG} {command}: {clean(str(exc))}\n")
        return EXIT_USAGE
    endpoints = {role: dataclasses.replace(endpoint, env=env) for role, endpoint in endpoints.items()}
    try:
        checks = probe_sync(endpoints, timeout=args.timeout)
    except Unreachable as exc:
        first, *more = str(exc).splitlines()
        err.write(f"{PROG} {command}: cannot reach the {clean(first)}\n")
        err.writelines(f"{clean(line)}\n" for line in more)
        return EXIT_USAGE
    verdict = baseline.judge(checks) if baseline is not None else None
    known = verdict.known if verdict is not None else ()
    if args.format == "json":
        write_text(out, as_json_lines(checks))
    elif args.format == "junit":
        write_text(out, as_junit(checks))
    elif args.format == "html":
        write_text(out, as_html(checks, known))
    else:
        palette = palette_for(args.color, out)
        colours = {"pass": palette.green, "fail": palette.red, "skip": palette.yellow}
        colours.update(bold=palette.bold, reset=palette.reset)
        write_text(out, as_text(checks, clean, colours, known))
    if verdict is not None:
        assert baseline is not None
        err.writelines(f"{PROG} {command}: {clean(line)}\n" for line in verdict.lines(baseline.source))
        return EXIT_OK if verdict.ok else EXIT_NONCONFORMING
    return EXIT_NONCONFORMING if any(c.status == "fail" for c in checks) else EXIT_OK


COMMAND = Command(
    "probe",
    help="check someone else's partner server against PGM-AUA over MCP (needs the mcp extra)",
    description="Drive a battery of MCP and PGM-AUA checks against each partner server given and\n"
    "report, per check, pass, fail or skip with the evidence (docs/probe.md).",
    epilog=EPILOG,
    arguments=arguments,
    run=run,
)
