"""Ctrl-C (and a handled SIGTERM) held back while work that must not be cut in two runs.

Two kinds of work: a local cluster starting or closing (:mod:`pgm_explore._engine`: cut half way,
it was left to distributed's hook at exit, which printed tracebacks), and msgspec building a typed
decoder (:mod:`pgm_explore.validation._typed`: msgspec looks the types' parts up in dictionaries
with ``PyDict_GetItem``, which drops an exception raised while a key is hashed, so that Ctrl-C
arriving as ``typing`` hashed a ``Literal`` was lost, and the command ran on to its end).
"""

from __future__ import annotations

import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["interrupts_deferred"]

_DEFERRED = tuple(getattr(signal, name) for name in ("SIGINT", "SIGTERM") if hasattr(signal, name))


@contextmanager
def interrupts_deferred() -> Iterator[list[int]]:
    """Hold back SIGINT (Ctrl-C) and SIGTERM until the block ends, then raise the first that came:
    the block gets the list of the signals held back (empty unless one came), to undo what it did
    before the exception is raised on leaving it. Only a signal whose handler is Python's or the
    program's is held back (SIGINT's by default; SIGTERM's where the command set one: by default it
    ends the process, and that is left as it is). Only the main thread gets a signal's exception
    (and may set a handler); elsewhere the block runs as it is. Also a decorator (each call a block).
    """
    caught: list[int] = []
    if threading.current_thread() is not threading.main_thread():
        yield caught
        return
    handlers = {}
    for number in _DEFERRED:
        handler = signal.getsignal(number)
        if callable(handler):
            handlers[number] = handler
            signal.signal(number, lambda number, frame: caught.append(number))
    try:
        yield caught
    finally:
        for number, handler in handlers.items():
            signal.signal(number, handler)
        if caught:
            signal.raise_signal(caught[0])
