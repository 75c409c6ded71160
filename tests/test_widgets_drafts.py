"""When a composer's draft is written (issue 21): off the keystroke path, at most about once a
second while typing, at once on Save, on leaving a field, on close and at the end of the process
(a kernel shut down included); a kill -9 loses at most the last second.

The kill -9 and shutdown tests run real processes (a Python process typing into a composer, a
Jupyter kernel) and kill or shut them down as the system does; the draft on disk is read after.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Callable
from pathlib import Path

import pytest

pytest.importorskip("ipywidgets")

from pgm_explore.widgets import MessageComposer, _drafts

LONG = 600.0
"""An interval no test waits for: a draft written within a test was written by the event under test."""
SLACK = 1.0
"""What a loaded two-core machine may add to the second a kill -9 can lose (timer and write)."""


@pytest.fixture(autouse=True)
def _drafts_in_tmp(drafts_folder: Path) -> Path:
    """Drafts and saved files go to a temporary folder, never to the home directory."""
    return drafts_folder


def on_disk(path: Path) -> dict | None:
    """The document of the draft file at ``path`` as it is now (None when there is none)."""
    try:
        return _drafts.read_draft(path)["document"]
    except FileNotFoundError:
        return None


def until(condition: Callable[[], bool], seconds: float = 20.0) -> bool:
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)
    return True


def test_typing_in_one_field_is_written_later_leaving_it_at_once(_drafts_in_tmp: Path) -> None:
    c = MessageComposer("BKN-PAL", "RQ", draft_name="fields", draft_interval=LONG)
    path = _drafts_in_tmp / "fields.json"
    c.set(("Question",), "W")
    c.save()  # written at once; what follows waits for the timer (LONG) or an event
    assert on_disk(path)["Question"] == "W"
    for typed in ("Wh", "Whi", "Whic", "Which"):
        c.set(("Question",), typed)
    time.sleep(0.3)
    assert on_disk(path)["Question"] == "W"  # typing in the field: kept for the next write
    c.set(("DialogID",), "dlg-1")  # another field: the last one was left, its edit is written now
    assert until(lambda: (on_disk(path) or {}).get("Question") == "Which")
    assert c.errors == []


def test_save_and_close_write_the_draft_at_once(_drafts_in_tmp: Path) -> None:
    c = MessageComposer("BKN-PAL", "RQ", draft_name="saved", draft_interval=LONG)
    path = _drafts_in_tmp / "saved.json"
    c.set(("Question",), "first")
    c.save()
    c.set(("Question",), "saved with the file")
    assert on_disk(path)["Question"] == "first"
    c.save()
    assert on_disk(path)["Question"] == "saved with the file"
    c.set(("Question",), "closed")
    c.close()
    assert on_disk(path)["Question"] == "closed"


def test_the_draft_of_another_composer_of_the_process_is_read_as_last_edited() -> None:
    c = MessageComposer("BKN-PAL", "RQ", draft_name="shared", draft_interval=LONG)
    c.set(("Question",), "one")
    c.set(("Question",), "two")  # not yet on disk: reading drafts in this process writes it first
    assert MessageComposer.restore("shared").value["Question"] == "two"
    assert "shared" in MessageComposer.drafts()


_TYPIST = textwrap.dedent(
    """
    import sys, time
    from pgm_explore.widgets import MessageComposer
    c = MessageComposer("BKN-PAL", "RQ", draft_name="typing", draft_dir=sys.argv[1])
    print("ready", repr(c.value.get("Question", "")), flush=True)
    i = int(sys.argv[2])
    while True:
        i += 1
        c.set(("Question",), f"edit {i}")
        print(i, time.time(), flush=True)
        time.sleep(0.02)
    """
)


@pytest.mark.slow  # (a composer process killed for real, edit after edit)
def test_a_kill_9_loses_at_most_the_last_second(tmp_path: Path) -> None:
    """A person types without pause; the kernel is killed (SIGKILL) at a moment of no one's
    choosing, five times over. Each time the draft is whole, holds an edit made at most about a
    second before the kill, and the next run restores exactly it."""
    drafts = tmp_path / "kill"
    expected = ""
    start = 0
    for round_ in range(5):
        with subprocess.Popen(
            [sys.executable, "-c", _TYPIST, str(drafts), str(start)], stdout=subprocess.PIPE, text=True
        ) as process:
            assert process.stdout is not None
            assert process.stdout.readline().strip() == f"ready {expected!r}"
            time.sleep(1.3 + 0.37 * round_)  # several writes, and a kill at a different phase each time
            os.kill(process.pid, signal.SIGKILL)
            # Only whole lines: the kill may fall between a line's parts.
            lines = process.stdout.read().split("\n")[:-1]
        times = {int(n): float(t) for n, t in (line.split() for line in lines)}
        assert len(times) > 10
        draft = json.loads((drafts / "typing.json").read_text(encoding="utf-8"))
        assert draft["format"] == _drafts.DRAFT_FORMAT  # whole: never half a file
        kept = int(draft["document"]["Question"].split()[1])
        last = max(times)  # every edit printed was made before the kill
        # The draft may hold the edit made just before the kill, whose line was not printed yet.
        assert kept <= last + 1, f"round {round_}: the draft holds edit {kept}, never made before the kill"
        lost = times[last] - times[kept] if kept <= last else 0.0
        assert 0 <= lost <= _drafts.WRITE_INTERVAL + SLACK, f"round {round_}: lost {lost:.2f} s of typing"
        assert not list(drafts.glob("*.damaged-*"))
        expected, start = f"edit {kept}", max(times) + 1


@pytest.mark.slow  # (a composer process started for real)
def test_a_process_that_ends_writes_its_last_edit(tmp_path: Path) -> None:
    script = textwrap.dedent(
        """
        import sys
        from pgm_explore.widgets import MessageComposer
        c = MessageComposer("BKN-PAL", "RQ", draft_name="ending", draft_dir=sys.argv[1], draft_interval=600.0)
        c.set(("Question",), "first")
        c.set(("Question",), "the last words")
        """
    )
    subprocess.run([sys.executable, "-c", script, str(tmp_path)], check=True, timeout=120)
    assert on_disk(tmp_path / "ending.json")["Question"] == "the last words"


@pytest.mark.slow  # (a kernel started for real)
def test_a_kernel_shut_down_from_jupyter_writes_its_last_edit(tmp_path: Path) -> None:
    manager = pytest.importorskip("jupyter_client.manager")
    km, kc = manager.start_new_kernel(kernel_name="python3")
    try:
        code = textwrap.dedent(
            f"""
            from pgm_explore.widgets import MessageComposer
            c = MessageComposer("BKN-PAL", "RQ", draft_name="kernel", draft_dir={str(tmp_path)!r}, draft_interval=600.0)
            c.set(("Question",), "first")
            c.save({str(tmp_path / "first.json")!r})
            """
        )
        reply = kc.execute_interactive(code, timeout=120)
        assert reply["content"]["status"] == "ok", reply["content"]
        assert on_disk(tmp_path / "kernel.json")["Question"] == "first"
        reply = kc.execute_interactive('c.set(("Question",), "typed just before the shutdown")', timeout=120)
        assert reply["content"]["status"] == "ok", reply["content"]
        assert (on_disk(tmp_path / "kernel.json") or {}).get("Question") != "typed just before the shutdown"
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=False)  # a shutdown request, as Kernel > Shut Down and Restart send
    assert on_disk(tmp_path / "kernel.json")["Question"] == "typed just before the shutdown"
