"""Progress bars on long work, drawn by tqdm: on a terminal's stderr, or in a notebook.

A bar shows only where a person watches: on standard error when it is a terminal (never
on standard output, which programs read), or as a notebook widget. It appears once the
work has run for :data:`DELAY` seconds, so that quick commands print exactly what they
printed before. This module sits below every layer: it knows nothing of messages.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from typing import IO, TYPE_CHECKING, Any

if TYPE_CHECKING:
    from types import TracebackType

__all__ = ["DELAY", "Progress", "input_size", "progress"]

DELAY = 2.0
"""Seconds of work before a bar appears (quick work shows none)."""


class Progress(AbstractContextManager["Progress"]):
    """Work done so far, in files or bytes; with no bar to draw, it only counts."""

    def __init__(self, bar: Any = None) -> None:
        self._bar = bar
        self.done = 0

    @property
    def shown(self) -> bool:
        """Whether a bar is drawn at all (a terminal or a notebook)."""
        return self._bar is not None

    def update(self, amount: int) -> None:
        self.done += amount
        if self._bar is not None:
            self._bar.update(amount)

    def counter(self) -> Callable[[int], None] | None:
        """What a reader calls with the bytes it has done: None when no bar is drawn, so that
        the reader does not count (and works as it would without one)."""
        return self.update if self._bar is not None else None

    def top_up(self, before: int, total: int | None) -> None:
        """Count what is left of ``total`` units since ``done`` was ``before`` (a file read
        whose reader counted only some of its bytes, or none)."""
        if total is not None and total > self.done - before:
            self.update(total - (self.done - before))

    def write(self, out: IO[str], text: str) -> None:
        """Write ``text`` to a stream that shares the terminal with the bar: the bar is
        cleared first and drawn again after, so lines and bar do not mix."""
        if self._bar is None or not _same_terminal(out, self._bar.fp):
            out.write(text)
            return
        self._bar.clear()
        out.write(text)
        out.flush()
        self._bar.refresh()

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()

    def __exit__(
        self, kind: type[BaseException] | None, value: BaseException | None, traceback: TracebackType | None
    ) -> None:
        self.close()


def _is_terminal(stream: IO[str] | None) -> bool:
    try:
        return bool(stream and stream.isatty())
    except (AttributeError, OSError, ValueError):
        return False


def _same_terminal(a: IO[str], b: IO[str]) -> bool:
    return _is_terminal(a) and _is_terminal(b)


def progress(total: int | None, unit: str, *, stream: IO[str] | None, show: bool = True, what: str = "") -> Progress:
    """A progress bar on ``stream`` (stderr) counting ``unit`` ("files" or "B") up to ``total``.

    Nothing is drawn unless ``show`` and ``stream`` is a terminal; ``stream=None`` means a
    notebook's widget when running in a kernel (tqdm.auto), stderr on a terminal otherwise.
    """
    if not show:
        return Progress()
    options: dict[str, Any] = {"total": total, "desc": what or None, "delay": DELAY, "leave": False}
    if unit == "B":
        options.update(unit="B", unit_scale=True, unit_divisor=1024)
    else:
        options.update(unit=f" {unit}")
    if stream is None:
        if _in_kernel():
            from tqdm.notebook import tqdm as notebook_tqdm

            return Progress(notebook_tqdm(**options))
        stream = _stderr()
    if not _is_terminal(stream) or os.environ.get("TERM") == "dumb":
        return Progress()
    from tqdm import tqdm

    if 0 in _size(stream):
        # A terminal that says it is 0 wide or 0 high (a pseudo-terminal nobody sized: `script`,
        # `docker exec -t` before its resize): tqdm draws nothing on it, a bar "below the screen".
        # The size the environment gives instead (COLUMNS and LINES, else 80 x 24), and kept.
        columns, lines = shutil.get_terminal_size()
        options.update(ncols=columns, nrows=lines)
    else:
        options.update(dynamic_ncols=True)
    return Progress(tqdm(file=stream, **options))


def _size(stream: IO[str]) -> tuple[int, int]:
    try:
        size = os.get_terminal_size(stream.fileno())
    except (AttributeError, OSError, ValueError):
        return (0, 0)
    return size.columns, size.lines


def _stderr() -> IO[str]:
    import sys

    return sys.stderr


def _in_kernel() -> bool:
    """Whether this runs in a Jupyter kernel whose front end can draw a widget."""
    import sys

    if "ipykernel" not in sys.modules or not _can_import("ipywidgets"):
        return False
    try:
        from IPython import get_ipython
    except ImportError:
        return False
    shell = get_ipython()
    return shell is not None and "IPKernelApp" in getattr(shell, "config", {})


def _can_import(name: str) -> bool:
    from importlib.util import find_spec

    return find_spec(name) is not None


def input_size(paths: Sequence[str]) -> int | None:
    """The bytes of the files to read, for a progress bar (None when unknown: standard input)."""
    total = 0
    for path in paths:
        try:
            total += os.path.getsize(path) if path != "-" else 0
        except OSError:
            return None
        if path == "-" or not os.path.isfile(path):
            return None  # a pipe's size says nothing
    return total
