"""The argparse declarations the commands share: a subcommand, PATHs, ``--color``, ``--partner``.

Each help text here is printed by ``--help`` and compared byte for byte by
tests/test_cli_help.py: a command passes its own words where they differ.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from pgm_explore.cli._output import PROG, Runner

__all__ = [
    "Command",
    "Version",
    "add_color_option",
    "add_corpus_options",
    "add_engine_options",
    "add_partner_option",
    "add_progress_option",
    "add_reading_options",
    "add_server_options",
]


class Version(argparse.Action):
    """``--version``, looked up only when asked for (importlib.metadata is slow to import)."""

    def __init__(self, option_strings: Sequence[str], dest: str, **kwargs: Any) -> None:
        super().__init__(option_strings, dest, nargs=0, help="show the version and exit")

    def __call__(self, parser: argparse.ArgumentParser, *args: Any, **kwargs: Any) -> None:
        from importlib.metadata import PackageNotFoundError, version

        try:
            number = version("pgm-explore")
        except PackageNotFoundError:
            number = "unknown"
        sys.stdout.write(f"{PROG} {number}\n")
        parser.exit()


@dataclass(frozen=True)
class Command:
    """One subcommand of ``pgm-explore``, declared by its own module of this package as ``COMMAND``.

    The package lists them once (``pgm_explore.cli.COMMANDS``): the parser, ``pgm-explore --help``
    and docs/cli.md follow that list, and tests/test_cli_help.py holds the help texts to it.
    """

    name: str
    help: str
    """Its line in ``pgm-explore --help`` and under its heading in docs/cli.md."""
    description: str
    """Printed as written (line breaks kept), unless ``wrapped``."""
    epilog: str | None
    arguments: Callable[[argparse.ArgumentParser], None]
    """Declares its options and arguments on its parser."""
    run: Runner
    """Its body: writes to the two streams it is given and returns the exit status."""
    wrapped: bool = False
    """argparse fills the description to the terminal's width (``lab`` and ``app`` always had it so)."""

    def add_to(self, commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> argparse.ArgumentParser:
        """Its parser, added to the subcommands ``commands``; parsing it sets ``run``."""
        formatter = argparse.HelpFormatter if self.wrapped else argparse.RawDescriptionHelpFormatter
        parser = commands.add_parser(
            self.name, help=self.help, description=self.description, epilog=self.epilog, formatter_class=formatter
        )
        self.arguments(parser)
        parser.set_defaults(run=self.run)
        return parser


def add_color_option(parser: argparse.ArgumentParser, what: str = "the text output") -> None:
    """``--color`` / ``--no-color``; unset (None) means: decide by the stream and NO_COLOR."""
    parser.add_argument(
        "--color",
        dest="color",
        action=argparse.BooleanOptionalAction,
        default=None,
        help=f"colour {what} (default: only on a terminal and when NO_COLOR is not set)",
    )


def add_reading_options(parser: argparse.ArgumentParser, paths_help: str, unit: str) -> None:
    """PATH..., --format and --color, which validate and check share."""
    parser.add_argument("paths", nargs="+", metavar="PATH", help=paths_help)
    parser.add_argument(
        "--format",
        choices=("text", "json"),
        default="text",
        help=f"text for people (default), json for programs: one object per {unit} and line",
    )
    add_color_option(parser)


def add_engine_options(
    parser: argparse.ArgumentParser,
    workers_help: str = "read, decode and validate big files on N local worker processes (0: in this "
    "process only; default: one per core for big regular files, see below)",
    scheduler_help: str = "do that work on the existing Dask cluster whose scheduler is at ADDRESS "
    "(e.g. tcp://10.0.0.5:8786); its workers must see the same files (relative paths are read from "
    "this folder)",
) -> None:
    """``--workers N`` and ``--scheduler ADDRESS``: where the work on big files runs (pgm_explore._engine)."""
    parser.add_argument("--workers", type=_count, default=None, metavar="N", help=workers_help)
    parser.add_argument("--scheduler", default=None, metavar="ADDRESS", help=scheduler_help)


def _count(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"not a number of workers: {text!r}")
    return value


def add_partner_option(parser: argparse.ArgumentParser, help: str, *, required: bool) -> None:
    """``--partner ROLE=URL|CMD``, repeated, and ``--token-file``; the values are read by ``_partners.partners``."""
    extra: dict[str, Any] = {"required": True} if required else {"default": []}
    parser.add_argument("--partner", action="append", metavar="ROLE=URL|CMD", help=help, **extra)
    parser.add_argument(
        "--token-file",
        metavar="FILE",
        help="the bearer token for URL partners, read from FILE (default: $PGM_EXPLORE_PARTNER_TOKEN); "
        "kept out of the command line, where others on the machine could read it",
    )


def add_corpus_options(parser: argparse.ArgumentParser) -> None:
    """``--corpus`` and ``--no-progress`` (check and table)."""
    parser.add_argument(
        "--corpus",
        action="store_true",
        help="each file is a transcript of its own; a directory stands for its *.jsonl and *.json "
        "files, recursively, sorted by path",
    )
    add_progress_option(parser)


def add_progress_option(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--no-progress",
        dest="progress",
        action="store_false",
        help="no progress bar (default: one on stderr when it is a terminal and the work takes more than two seconds)",
    )


def add_server_options(parser: argparse.ArgumentParser, port: int) -> None:
    """``--port``, ``--ip``, ``--token``, ``--allow-host`` and ``--no-browser`` (lab and app); the
    first port tried is ``port``."""
    parser.add_argument(
        "--port", type=int, default=None, help=f"the port to listen on (default: the first free one from {port})"
    )
    parser.add_argument(
        "--ip",
        default="127.0.0.1",
        help="the address to listen on (default 127.0.0.1: this machine only; 0.0.0.0: every address, for a "
        "container or a class on the network)",
    )
    parser.add_argument(
        "--token",
        default=None,
        help="the secret the address carries (default: $JUPYTER_TOKEN, else a new random one); never empty",
    )
    parser.add_argument(
        "--allow-host",
        action="append",
        default=[],
        metavar="NAME",
        help="also answer requests made to this name or address (a DNS alias, a proxy); the loopback names, "
        "--ip and, with 0.0.0.0, this machine's own names and addresses are known (repeatable)",
    )
    parser.add_argument("--no-browser", dest="browser", action="store_false", help="do not open a browser")
    parser.set_defaults(first_port=port)
