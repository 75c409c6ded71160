"""How the command's own process ends: as the interpreter ends a process, less what nobody sees.

At exit the interpreter joins the threads that are not daemons, runs the :mod:`atexit` hooks
(``weakref.finalize``'s, multiprocessing's, Dask's, logging's) and flushes the standard streams;
then it tears every module down and frees its objects one by one, memory that the operating
system takes back at once when the process ends. After a check of a million messages on local
workers that second part took 0.15-0.23 s, after a small command about 0.03 s
(docs/performance.md, "The end of a check"). :func:`end` does the first part and ends the
process there, as mypy ends its own (``mypy.util.hard_exit``), and :func:`keep_to_the_end` lets
the command leave unfreed what it kept of a long transcript (a check's checker, a table's rows)
too.

Only the command's own process ends this way (the ``pgm-explore`` script and ``python -m
pgm_explore``, through :func:`pgm_explore.cli.command`): :func:`pgm_explore.cli.main` called by
a program, a notebook or a test returns its status as always, and keeps nothing.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import signal
import sys
import threading
from types import FrameType
from typing import NoReturn

_kept: list[object] = []
_ending = False


class Terminated(KeyboardInterrupt):
    """SIGTERM (``kill``, ``timeout``) reached the command's own process: the command stops as it
    does for Ctrl-C (what it started is stopped: local workers, a server), and its process ends
    with status 143 (:data:`~._output.EXIT_TERMINATED`)."""


def _terminated(number: int, frame: FrameType | None) -> None:
    raise Terminated


def ends_itself() -> None:
    """Say that this process will end by :func:`end` once the command is done; SIGTERM stops the
    command as Ctrl-C does (:class:`Terminated`).

    By default SIGTERM ends a process at once: a check's local workers and their forkserver then
    went on their own, and multiprocessing's resource tracker warned on stderr of the semaphores
    left behind. (A SIGTERM that whoever started the command ignores stays ignored.)"""
    global _ending
    _ending = True
    if threading.current_thread() is threading.main_thread() and signal.getsignal(signal.SIGTERM) == signal.SIG_DFL:
        signal.signal(signal.SIGTERM, _terminated)


def keep_to_the_end(value: object) -> None:
    """Keep ``value`` (what a check kept of its transcript: hundreds of thousands of objects after
    a million messages, 0.14 s to free; a table's rows, one a message for some tables) until the
    process ends, when it ends by :func:`end`; elsewhere nothing is kept, and ``value`` is freed when
    its last user lets it go."""
    if _ending:
        _kept.append(value)


def end(status: int) -> NoReturn:
    """End this process with ``status``, after what the interpreter does at exit that can be seen."""
    run_hooks = getattr(atexit, "_run_exitfuncs", None)
    if run_hooks is None:  # (not CPython: the interpreter's own way)
        sys.exit(status)
    current = threading.current_thread()
    for thread in threading.enumerate():
        if thread is not current and not thread.daemon:
            thread.join()
    run_hooks()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):  # (its reader gone, or closed: nothing more reaches it)
            stream.flush()
    os._exit(status)
