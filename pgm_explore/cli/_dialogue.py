"""``pgm-explore dialogue``: deliberate with the MCP reference partners and record the transcript.

Layer 6 (:mod:`pgm_explore.mcp`, the ``mcp`` extra, imported when the command runs). The
script format is :mod:`pgm_explore.cli._script`'s; the recorded transcript is then checked as
``pgm-explore check`` checks it.
"""

from __future__ import annotations

import argparse
import json
import os
from itertools import groupby
from typing import IO, Any

from pgm_explore._files import atomic_write
from pgm_explore.cli._check import check_block
from pgm_explore.cli._options import Command, add_color_option, add_partner_option
from pgm_explore.cli._output import (
    EXIT_NONCONFORMING,
    EXIT_OK,
    EXIT_USAGE,
    PROG,
    Severities,
    clean,
    count,
    palette_for,
    write_text,
)
from pgm_explore.cli._partners import partners
from pgm_explore.cli._script import ScriptError, Step, load_script

__all__ = ["COMMAND", "recorded_line", "send_step"]

EPILOG = """\
what it does:
  Starts the three reference partners (Prompt Creation, Domain Access, Personality
  Alignment), opens a dialogue (Basic Knowledge reads the PC Prompt), sends the
  Requests of the demo or of a script, records every message as JSON Lines in PATH,
  then checks the recorded transcript as 'pgm-explore check' would (the findings and a
  summary line: "recorded 18 messages to PATH: 0 errors, 0 warnings").

transports (of the reference partners):
  inprocess (default)  the servers run in this process (no subprocess, no socket)
  stdio                one 'python -m pgm_explore.mcp.serve' subprocess per partner
  http                 the same subprocesses with streamable HTTP on 127.0.0.1

partners (--partner ROLE=URL|CMD, ROLE one of prc, dac, pal): someone else's server
  instead of the reference one, by streamable-HTTP URL (http:// or https://) or by a
  command line (split as a shell would split it, not run through a shell) started as
  a stdio server. Every Response is validated as it arrives; a tool error, a JSON-RPC
  error or a result that is not a Response is reported on stderr as a finding of its
  message ("message 7: [partner-refused] ...") and the transcript up to there is kept.
  A URL partner is sent the bearer token in --token-file FILE, else in
  $PGM_EXPLORE_PARTNER_TOKEN (a partner served beyond loopback asks for it; a token
  on the command line would show in 'ps'); one that answers 401 is a partner that
  cannot be reached, said in one line (exit 2).

script (--script FILE): a JSON object {"steps": [STEP, ...]} with an optional
  "dialog_id" (the DialogID of the PC Prompt; default a fresh one) and "description";
  or just the list of steps. Each STEP is an object with a "partner" and the keys of
  that partner (anything else is an error, reported with the step's index):
    {"partner": "prc", "kind": KIND, "question": TEXT, "entity_ids": [ID, ...]}
        a BKN-PRC Request; KIND one of referents, intent, goal_constraints, ...
    {"partner": "dac", "kind": KIND, "question": TEXT, "entity_ids": [ID, ...],
     "fields": {"Terms": [...], "Space": {...}}}
        a BKN-DAC Knowledge Request (affordances, constraints, ...)
    {"partner": "dac", "kind": "feasibility", "question": TEXT,
     "statements": ["MM-Move ...", "Transact ...", ...]}
        a feasibility check: the statements become the ProcessActions, in order
    {"partner": "dac", "kind": "commitment", "question": TEXT,
     "retain": {"cm-id": STATEMENT, ...}, "release": ["cm-id", ...]}
        commitments retained and/or released (at least one of the two)
    {"partner": "pal", "question": TEXT, "constraints": {"Role": ..., "Locale": ...}}
        a BKN-PAL Request
  "question" is optional except for pal. The dialogue is opened before the first step.
  Example: data/dialogue-scripts/market.json.

exit status:
  0    the transcript was recorded and has no error-level finding (warnings allowed)
  1    the transcript was recorded and has at least one error-level finding, or a
       partner gave no Response to a Request (a tool error, a JSON-RPC error, an
       unreadable result: the transcript up to there is recorded)
  2    usage error, a script that cannot be read or is not valid, an --out PATH that
       cannot be written, partners that could not be started or reached, or the mcp
       extra is not installed (pip install "pgm-explore[mcp]")

examples:
  pgm-explore dialogue --demo --out demo.jsonl
  pgm-explore dialogue --script data/dialogue-scripts/market.json --out market.jsonl --transport http
  pgm-explore dialogue --demo --out demo.jsonl --partner dac=http://127.0.0.1:8000/mcp
  pgm-explore table feasibility demo.jsonl
"""


def arguments(parser: argparse.ArgumentParser) -> None:
    """The options and arguments of ``pgm-explore dialogue``."""
    what = parser.add_mutually_exclusive_group(required=True)
    what.add_argument(
        "--demo",
        action="store_true",
        help="the built-in deliberation: all three partners, two feasibility checks, a commitment",
    )
    what.add_argument("--script", metavar="FILE", help="a JSON script of Requests (format below)")
    parser.add_argument(
        "--out",
        metavar="PATH",
        required=True,
        help="where to write the transcript (JSON Lines): whole or not at all (a temporary file in "
        "the same folder, renamed into place); a link at PATH is replaced, not followed",
    )
    parser.add_argument(
        "--transport",
        choices=("inprocess", "stdio", "http"),
        default="inprocess",
        help="how to reach the reference partners (default: inprocess)",
    )
    add_partner_option(
        parser,
        "someone else's server for prc, dac or pal instead of the reference partner: a streamable-HTTP "
        "URL, or a command line started as a stdio server (repeat for several)",
        required=False,
    )
    add_color_option(parser, "the findings")


def unwritable(path: str) -> str | None:
    """Why ``path`` cannot be written, or None; nothing is created."""
    if os.path.isdir(path):
        return "is a directory"
    parent = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(parent):
        return "its folder does not exist"
    if os.path.exists(path):
        return None if os.access(path, os.W_OK) else "is not writable"
    return None if os.access(parent, os.W_OK) else "its folder is not writable"


def run(args: argparse.Namespace, out: IO[str], err: IO[str]) -> int:
    command = f"{PROG} dialogue"
    script = None
    if args.script is not None:
        try:
            script = load_script(args.script)
        except ScriptError as exc:
            err.write(f"{command}: {clean(str(exc))}\n")
            return EXIT_USAGE
    why = unwritable(args.out)
    if why is not None:
        err.write(f"{command}: cannot write --out {clean(args.out)}: {why}\n")
        return EXIT_USAGE
    endpoints = partners("dialogue", args.partner, err, args.token_file)
    if endpoints is None:
        return EXIT_USAGE
    from pgm_explore.mcp.deliberate import deliberate

    steps = None if script is None else [(s.index, lambda bk, s=s: send_step(bk, s)) for s in script.steps]
    outcome = deliberate(
        transport=args.transport, partners=endpoints, steps=steps, dialog_id=script.dialog_id if script else None
    )
    if outcome.unreachable is not None:
        err.write(f"{command}: the partners could not be reached: {clean(outcome.unreachable)}\n")
        return EXIT_USAGE
    try:
        # Whole or not at all, and into a file of its own: a link planted at --out is replaced,
        # never followed (pgm_explore._files).
        atomic_write(args.out, "".join(map(recorded_line, outcome.transcript)), durable=True, make_parents=False)
    except OSError as exc:
        err.write(f"{command}: cannot write --out {clean(args.out)}: {exc.strerror or exc}\n")
        return EXIT_USAGE
    for problem in outcome.problems:
        err.write(f"{command}: {clean(problem)}\n")
    status = _report_recorded(args, len(outcome.transcript), out)
    return EXIT_NONCONFORMING if outcome.failed else status


def recorded_line(message: Any) -> str:
    r"""One message of a recorded transcript as a line of JSON: UTF-8 as it is, or, should a
    partner ever send a string UTF-8 cannot encode (a lone surrogate), with ``\u`` escapes:
    the message is kept, and the check of the recording reports it.

    >>> recorded_line({"Question": "Où?"}), recorded_line({"Question": chr(0xD800)})
    ('{"Question": "Où?"}\n', '{"Question": "\\ud800"}\n')
    """
    line = json.dumps(message, ensure_ascii=False)
    try:
        line.encode("utf-8")
    except UnicodeEncodeError:
        line = json.dumps(message)
    return line + "\n"


async def send_step(bk: Any, step: Step) -> None:
    """One script step as a Request, through the client's helpers."""
    fields = {key: value for key, value in step.fields.items() if value is not None}
    if step.partner == "prc":
        await bk.ask_prc(step.kind, step.question, fields.get("EntityIDs"))
    elif step.partner == "dac":
        await bk.ask_dac(step.kind, step.question, **fields)
    else:
        await bk.ask_pal(step.question, fields.get("Constraints"))


def _report_recorded(args: argparse.Namespace, messages: int, out: IO[str]) -> int:
    """Check the recorded transcript; print its findings and the summary; EXIT_NONCONFORMING on an error."""
    from pgm_explore.dialogue import check_paths

    palette = palette_for(args.color, out)
    findings = list(check_paths([args.out]))
    for _key, block in groupby(findings, key=lambda f: (f.source, f.dialog, f.type)):
        write_text(out, check_block(list(block), palette) + "\n")
    tally = Severities()
    tally.add_findings(findings)
    colour = palette.red if tally.errors else palette.yellow if tally.warnings else palette.green
    summary = f"recorded {count(messages, 'message')} to {args.out}: {tally.summary()}"
    write_text(out, f"{colour}{clean(summary)}{palette.reset}\n")
    return EXIT_NONCONFORMING if tally.errors else EXIT_OK


COMMAND = Command(
    "dialogue",
    help="deliberate with the MCP reference partners and record the transcript (needs the mcp extra)",
    description="Run a deliberation of Basic Knowledge with the three MCP reference partners\n"
    "(docs/mcp.md): the built-in demo or a script of your own. Every message is recorded as a\n"
    "transcript in PATH, which is then checked as 'pgm-explore check' checks it.",
    epilog=EPILOG,
    arguments=arguments,
    run=run,
)
