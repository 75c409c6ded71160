"""Ctrl-C held back while work that must not be cut in two runs (pgm_explore/_signals.py): the
cluster starting or closing (tests/test_interrupt.py tries them for real), msgspec building a typed
decoder."""

from __future__ import annotations

import signal
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from pgm_explore._signals import interrupts_deferred

ROOT = Path(__file__).resolve().parents[1]


def test_an_interrupt_in_a_deferred_block_is_raised_as_it_ends() -> None:
    handler = signal.getsignal(signal.SIGINT)
    done = []
    with pytest.raises(KeyboardInterrupt), interrupts_deferred() as interrupted:
        signal.raise_signal(signal.SIGINT)
        done.append(list(interrupted))  # (still running: the block can undo what it did)
    assert done == [[signal.SIGINT]]
    assert signal.getsignal(signal.SIGINT) is handler
    with interrupts_deferred() as interrupted:
        pass
    assert interrupted == []


def test_a_sigterm_is_held_back_only_where_the_program_handles_it() -> None:
    # (SIGTERM's default ends the process: a block must not turn it into something else. The
    # command sets a handler, and then its SIGTERM waits for the block as Ctrl-C does.)
    class Stop(Exception):
        pass

    def stop(number: int, frame: object) -> None:
        raise Stop

    previous = signal.signal(signal.SIGTERM, signal.SIG_DFL)
    try:
        with interrupts_deferred():
            assert signal.getsignal(signal.SIGTERM) == signal.SIG_DFL
        signal.signal(signal.SIGTERM, stop)
        done = []
        with pytest.raises(Stop), interrupts_deferred() as interrupted:
            signal.raise_signal(signal.SIGTERM)
            done.append(list(interrupted))
        assert done == [[signal.SIGTERM]]
        assert signal.getsignal(signal.SIGTERM) is stop
    finally:
        signal.signal(signal.SIGTERM, previous)


def test_a_deferred_block_off_the_main_thread_runs_as_it_is() -> None:
    # (Only the main thread is interrupted, and only it may set a handler.)
    seen: list[object] = []

    def block() -> None:
        with interrupts_deferred() as interrupted:
            seen.append((interrupted, signal.getsignal(signal.SIGINT)))

    thread = threading.Thread(target=block)
    thread.start()
    thread.join()
    assert seen == [([], signal.getsignal(signal.SIGINT))]


_BUILT_INTERRUPTED = """
import signal, sys
from pgm_explore.spec import DATA_TYPES
from pgm_explore.validation import _typed

def ctrl_c_as_typing_hashes(frame, event, arg):
    # (msgspec asks a Literal's hash as it builds a decoder: Ctrl-C then, in the hash's first line)
    if event == "call" and frame.f_code.co_name == "__hash__" and frame.f_code.co_filename.endswith("typing.py"):
        sys.settrace(None)
        signal.raise_signal(signal.SIGINT)

for dt in DATA_TYPES:
    for mode in dt.modes or (None,):
        for fast in (False, True):
            typed = _typed._clean_type(dt, mode, fast)  # (the type first: its decoder alone is tried)
            sys.settrace(ctrl_c_as_typing_hashes)
            try:
                _typed._schema_decoder(dt, mode, fast)
                print(dt.name, mode, fast, "lost" if sys.gettrace() is None else "not hashed")
            except KeyboardInterrupt:
                print(dt.name, mode, fast, "interrupted")
            sys.settrace(None)
"""


def test_ctrl_c_while_a_typed_decoder_is_built_interrupts_once_it_is_built() -> None:
    # (A new interpreter: msgspec keeps what it worked out of a type, and asks no hash again.)
    done = subprocess.run(
        [sys.executable, "-c", _BUILT_INTERRUPTED], capture_output=True, text=True, timeout=300, check=True, cwd=ROOT
    )
    lines = done.stdout.splitlines()
    assert len(lines) == 14  # (PC Prompt; the three others' RQ and RS; the type and its fast twin each)
    assert all(line.endswith(" interrupted") for line in lines), done.stdout
