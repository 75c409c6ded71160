"""The ``pgm-explore`` command (also ``python -m pgm_explore``).

One module per subcommand declares it as ``COMMAND``, a :class:`~._options.Command`: its
name, help line and description, its options (``arguments(parser)``) and its body
(``run(args, out, err) -> int``, which writes to the two streams it is given and returns the
exit status). :data:`COMMANDS` lists them once; the parser, ``pgm-explore --help`` and
docs/cli.md follow it (docs/architecture.md, "A new command"). The help texts, outputs and
exit statuses are contracts that other tools parse (tests/test_cli_help.py holds ``--help``
as it is).

- ``validate`` (:mod:`._validate`): each message on its own (layer 3);
- ``check`` (:mod:`._check`): the messages as one transcript, streamed (layer 4);
- ``table`` (:mod:`._table`): a table of a transcript, made as it streams (layer 5, pandas);
- ``dialogue`` (:mod:`._dialogue`, the script format in :mod:`._script`): deliberate
  with the MCP reference partners and record the transcript (layer 6, the ``mcp`` extra);
- ``probe`` (:mod:`._probe`): PGM-AUA conformance checks of someone else's partner
  server (the ``mcp`` extra);
- ``lab`` (:mod:`._lab`) and ``app`` (:mod:`._app`): JupyterLab on the repository, and the
  Voilà app page, started by :mod:`pgm_explore._launch` (the ``notebook`` and ``app`` extras).

What they share: exit statuses, colour and escaping (:mod:`._output`), argparse
declarations (:mod:`._options`), the mcp extra and ``--partner`` (:mod:`._partners`).

Importing this package imports only argparse and the reading layer, so that the command
starts fast: the dialogue layer is imported by ``check``, ``table`` and ``dialogue`` when
they run, pandas only by ``table``, the MCP SDK only by ``dialogue`` and ``probe``; never
Jupyter.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
from collections.abc import Sequence
from typing import NoReturn

from pgm_explore._engine import ONE_THREAD_NUMERICS, WorkersLost
from pgm_explore.cli import _app, _check, _dialogue, _lab, _probe, _table, _validate
from pgm_explore.cli._options import Command, Version
from pgm_explore.cli._output import (
    EXIT_BROKEN_PIPE,
    EXIT_INTERRUPTED,
    EXIT_TERMINATED,
    EXIT_USAGE,
    PROG,
    Runner,
    silence,
    unwritable,
)
from pgm_explore.cli._process import Terminated, end, ends_itself
from pgm_explore.cli._script import ScriptError, load_script
from pgm_explore.validation._schema import own_process

COMMANDS: tuple[Command, ...] = tuple(
    module.COMMAND for module in (_validate, _check, _table, _dialogue, _probe, _lab, _app)
)
"""Every subcommand, in the order of ``pgm-explore --help`` and docs/cli.md: the one list of them."""

__all__ = ["COMMANDS", "Command", "ScriptError", "build_parser", "command", "load_script", "main"]

# Public names are documented where they are imported from, not in private modules.
for _public in (Command, ScriptError, load_script):
    _public.__module__ = __name__


def command() -> NoReturn:
    """The ``pgm-explore`` script and ``python -m pgm_explore``: :func:`main` on this process's
    command line, then the process ends with its status, without the interpreter freeing what
    the command made (:mod:`._process`)."""
    ends_itself()
    end(main())


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line ``argv`` (default ``sys.argv[1:]``) and return the exit status.

    Never raises ``SystemExit``: usage errors and ``--help`` come back as statuses 2
    and 0, so the function can be called from tests and notebooks.
    """
    if argv is None:
        # The process is the command's own (the pgm-explore script, python -m pgm_explore), not a
        # program's that calls main: python-jsonschema, imported to explain a message that does
        # not conform, need not build rfc3987_syntax's grammars as it is imported.
        own_process()
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:
        return exc.code if isinstance(exc.code, int) else EXIT_USAGE
    if argv is None and hasattr(args, "workers"):
        # A command that may start workers, in its own process, which calls no numerical
        # library: numpy (imported with distributed) starts no thread to spin (ONE_THREAD_NUMERICS).
        for name, value in ONE_THREAD_NUMERICS.items():
            os.environ.setdefault(name, value)
    out, err = sys.stdout, sys.stderr
    run: Runner = args.run
    try:
        status = run(args, out, err)
        out.flush()  # inside the try: a closed pipe often shows only here
    except BrokenPipeError:
        silence(out)
        return EXIT_BROKEN_PIPE
    except KeyboardInterrupt as exc:
        return EXIT_TERMINATED if isinstance(exc, Terminated) else EXIT_INTERRUPTED
    except WorkersLost as exc:
        # (The workers died under the work: what came before is written; the rest cannot be.)
        err.write(f"{PROG} {args.command}: {exc}\n")
        return EXIT_USAGE
    except OSError as exc:
        if not unwritable(exc):
            raise
        # (`> findings.jsonl` on a full disk: what was written stays; the rest, held in the
        # stream's buffer, would fail again at exit.)
        silence(out)
        with contextlib.suppress(OSError):  # (stderr on the same full disk)
            err.write(f"{PROG} {args.command}: cannot write the output: {exc.strerror or exc}\n")
            err.flush()
        return EXIT_USAGE
    return status


def build_parser() -> argparse.ArgumentParser:
    """The parser of the whole command, with every subcommand."""
    parser = argparse.ArgumentParser(
        prog=PROG,
        description="Explore and validate MPAI PGM-AUA V1.0 messages: PC Prompt, BKN-PRC, BKN-DAC and BKN-PAL.",
        epilog=f"Run '{PROG} COMMAND --help' for the options of a command.",
    )
    parser.add_argument("--version", action=Version)
    commands = parser.add_subparsers(title="commands", metavar="COMMAND", dest="command", required=True)
    for command in COMMANDS:
        command.add_to(commands)
    return parser
