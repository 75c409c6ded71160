"""``python -m pgm_explore`` and the ``pgm-explore`` script: the command, Ctrl-C held from its first step.

The command's modules take a good part of a second to import (the schemas, their validators,
argparse). Ctrl-C pressed then, as someone who has just seen a wrong file name in the command
line does, ended the process with the traceback of whatever import it stopped. So the script
enters here (``import pgm_explore`` imports nothing heavy), and the command is imported and run
inside one ``try``: an interrupt before the command's own handling
(:func:`pgm_explore.cli.main`) ends it as Ctrl-C ends it later, quietly with status 130 (143 for
SIGTERM once the command has set its handler). Only what runs before this module is left to
Python: the interpreter's start and pip's script (its ``import re`` and ``re.sub``).
"""

from __future__ import annotations

import contextlib
import os
import sys

TYPE_CHECKING = False  # (typing would be imported before Ctrl-C is held; type checkers read this as typing's)
if TYPE_CHECKING:
    from typing import NoReturn

EXIT_INTERRUPTED = 130
"""As :data:`pgm_explore.cli._output.EXIT_INTERRUPTED`, which this module cannot import before
it holds Ctrl-C (tests/test_process.py holds the two equal)."""
EXIT_TERMINATED = 143
"""As :data:`pgm_explore.cli._output.EXIT_TERMINATED`."""


def command() -> NoReturn:
    """Run the ``pgm-explore`` command line of this process; the process ends with its status."""
    try:
        from pgm_explore.cli import command as run

        run()
    except (KeyboardInterrupt, RuntimeError) as exc:
        interrupt = _interrupt(exc)
        if interrupt is None:
            raise
        # (Only SIGTERM's handler raises Terminated, and its module is imported before it is set.)
        process = sys.modules.get("pgm_explore.cli._process")
        terminated = process is not None and isinstance(interrupt, process.Terminated)
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(OSError, ValueError):
                stream.flush()
        # (As the command ends: without the interpreter's teardown. What it had started it
        # stops itself, and nothing had started before its own handling of Ctrl-C.)
        os._exit(EXIT_TERMINATED if terminated else EXIT_INTERRUPTED)


def _interrupt(exc: BaseException | None) -> KeyboardInterrupt | None:
    """The interrupt ``exc`` is, or stands for: Python 3.11 raises a RuntimeError from an exception
    raised as a class is made (``__set_name__``, which every dataclass field has), so Ctrl-C while a
    module of dataclasses was imported (distributed's, as a check starts its workers) came out as
    "RuntimeError: Error calling __set_name__ ..." and its traceback."""
    while isinstance(exc, RuntimeError):
        exc = exc.__cause__
    return exc if isinstance(exc, KeyboardInterrupt) else None


# Guarded: pytest's --doctest-modules imports every module of the package.
if __name__ == "__main__":
    command()
