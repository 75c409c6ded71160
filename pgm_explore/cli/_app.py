"""``pgm-explore app``: the composer-and-check app page in Voilà, started by :mod:`pgm_explore._launch`."""

from __future__ import annotations

import argparse
from pathlib import Path

from pgm_explore import _launch
from pgm_explore.cli._options import Command, add_server_options

__all__ = ["COMMAND"]


def arguments(parser: argparse.ArgumentParser) -> None:
    """The options of ``pgm-explore app``."""
    add_server_options(parser, 8866)
    parser.add_argument(
        "--work-folder",
        type=Path,
        default=None,
        metavar="DIR",
        help="the folder the page saves to and opens from, by name (default: this folder)",
    )


COMMAND = Command(
    "app",
    help="serve the composer-and-check app page (Voilà: widgets, no code)",
    description="Serve the explorer as an app page with Voilà: compose a message of any type and mode, "
    "upload files to validate, load a transcript and see its tables and plots. No code is shown. "
    "Save and Open act inside the work folder only. Ctrl-C stops it.",
    epilog=None,
    arguments=arguments,
    run=_launch.run_app,
    wrapped=True,
)
