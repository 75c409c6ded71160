"""``pgm-explore probe``: PGM-AUA conformance checks of someone else's partner server (docs/probe.md).

The checks and their reports are :mod:`pgm_explore.mcp`'s (the ``mcp`` extra); this module
declares the command and picks the report's form.
"""

from __future__ import annotations

import argparse
from typing import IO

from pgm_explore.cli._options import add_color_option, add_command, add_partner_option
from pgm_explore.cli._output import EXIT_NONCONFORMING, EXIT_OK, EXIT_USAGE, PROG, clean, palette_for, write_text
from pgm_explore.cli._partners import partners

__all__ = ["add_probe"]

EPILOG = """\
partners:
  --partner ROLE=TARGET, ROLE one of prc (Prompt Creation), dac (Domain Access),
  pal (Personality Alignment); at least one, each role at most once. A TARGET
  starting with http:// or https:// is a streamable-HTTP URL; anything else is a
  command line, split as a shell would split it but not run through a shell, and
  started as a stdio server.

checks (docs/probe.md): the MCP handshake (current and older protocol), the tool and
  its schemas, the PC Prompt resource (prc), structured results, conforming
  Responses, echoed identities, Outcome, commitments and feasibility (dac), bad
  Requests, two interleaved dialogues, cancellation.

output (--format):
  text   per partner, one line per check; a failure with its spec clause and the
         messages exchanged
  json   one JSON object per line: {"partner", "check", "status", "message", "spec"},
         status pass, fail or skip
  junit  JUnit XML: a testsuite per partner, a testcase per check

exit status:
  0    no check failed
  1    at least one check failed
  2    usage error, a partner that cannot be reached (with the reason), or the mcp
       extra is not installed (pip install "pgm-explore[mcp]")

examples:
  pgm-explore probe --partner dac=http://127.0.0.1:8000/mcp
  pgm-explore probe --partner "dac=python -m my_domain_access" --format junit > probe.xml
"""


def add_probe(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = add_command(
        commands,
        "probe",
        help="check someone else's partner server against PGM-AUA over MCP (needs the mcp extra)",
        description="Drive a battery of PGM-AUA scenarios against each partner server given and report,\n"
        "per check, pass, fail or skip with the evidence (docs/probe.md).",
        epilog=EPILOG,
        run=run_probe,
    )
    add_partner_option(
        parser, "a partner to probe: prc, dac or pal, = a URL or a command (repeat for several)", required=True
    )
    parser.add_argument("--format", choices=("text", "json", "junit"), default="text", help="output (default: text)")
    add_color_option(parser)


def run_probe(args: argparse.Namespace, out: IO[str], err: IO[str]) -> int:
    command = "probe"
    endpoints = partners(command, args.partner, err)
    if endpoints is None:
        return EXIT_USAGE
    from pgm_explore.mcp.probe import Unreachable, probe_sync
    from pgm_explore.mcp.report import as_json_lines, as_junit, as_text

    try:
        checks = probe_sync(endpoints)
    except Unreachable as exc:
        err.write(f"{PROG} {command}: cannot reach the {clean(str(exc))}\n")
        return EXIT_USAGE
    if args.format == "json":
        write_text(out, as_json_lines(checks))
    elif args.format == "junit":
        write_text(out, as_junit(checks))
    else:
        palette = palette_for(args.color, out)
        colours = {"pass": palette.green, "fail": palette.red, "skip": palette.yellow}
        colours.update(bold=palette.bold, reset=palette.reset)
        write_text(out, as_text(checks, clean, colours))
    return EXIT_NONCONFORMING if any(c.status == "fail" for c in checks) else EXIT_OK
