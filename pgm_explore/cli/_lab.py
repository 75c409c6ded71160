"""``pgm-explore lab``: JupyterLab on the repository, started by :mod:`pgm_explore._launch`."""

from __future__ import annotations

import argparse
from pathlib import Path

from pgm_explore import _launch
from pgm_explore.cli._options import Command, add_server_options

__all__ = ["COMMAND"]


def arguments(parser: argparse.ArgumentParser) -> None:
    """The options of ``pgm-explore lab``."""
    add_server_options(parser, 8888)
    parser.add_argument("--root", type=Path, default=None, help="serve this folder instead of the checkout")


COMMAND = Command(
    "lab",
    help="start JupyterLab on the repository and open the first notebook",
    description="Start JupyterLab with the repository (the checkout this folder is in, else this "
    "folder) as its root, so that the notebooks' links to docs/ and data/ work, and open notebook 01. "
    "Works as root (as in a container) and as a user. Ctrl-C stops it.",
    epilog=None,
    arguments=arguments,
    run=_launch.run_lab,
    wrapped=True,
)
