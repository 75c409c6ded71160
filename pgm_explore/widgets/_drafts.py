"""Drafts and the work folder: where a composer keeps its state, and where Save writes.

A draft is what a composer needs to come back after a kernel restart or a closed tab: the
document, the other mode's values kept aside, which parts are filled automatically, and any
text typed but not yet valid JSON. It is a small JSON file (``format: pgm-explore-draft/1``)
in the drafts folder: ``$PGM_EXPLORE_DRAFTS``, else ``~/.pgm-explore/drafts``. Save without
a file name writes to the work folder: ``$PGM_EXPLORE_WORK``, else ``~/.pgm-explore/work``.

Draft names are free text. A name of lowercase letters, digits, ``.``, ``_`` and ``-`` is
its own file name (``02-pc-prompt`` is ``02-pc-prompt.json``); any other name gets a file
name of its own that no other name can have: a readable part, ``+`` and a hash of the name
(``my draft`` is ``my_draft+<16 hex>.json``). The name itself is kept in the draft.

A draft that cannot be read is renamed ``<file>.damaged-<time>`` (kept, never deleted) and
the composer starts without it; temporary files of interrupted writes are cleaned up.

A composer writes its draft off the keystroke path (:class:`DraftSchedule`): an edit keeps the
draft's content in memory, and a background thread writes the latest content at most about once a
second; Save, leaving a field, closing the composer and the end of the process write at once. A
kill -9 therefore loses at most the last second of typing.
"""

from __future__ import annotations

import atexit
import datetime as dt
import hashlib
import json
import os
import re
import threading
import time
import weakref
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pgm_explore._files import atomic_write, remove_leftovers, safe_filename
from pgm_explore.spec import MODE_WORDS

__all__ = [
    "DRAFT_FORMAT",
    "WRITE_INTERVAL",
    "DraftInfo",
    "DraftSchedule",
    "aside_name",
    "atomic_write",
    "claim_draft",
    "default_draft_dir",
    "default_work_dir",
    "delete_draft",
    "draft_entries",
    "draft_path",
    "dump_json",
    "flush_drafts",
    "list_drafts",
    "local_time",
    "open_draft",
    "read_draft",
    "write_draft",
]

DRAFT_FORMAT = "pgm-explore-draft/1"
ENV_VAR = "PGM_EXPLORE_DRAFTS"
WORK_ENV_VAR = "PGM_EXPLORE_WORK"
_PLAIN = re.compile(r"[a-z0-9][a-z0-9._-]{0,119}")
_LEGACY_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


WRITE_INTERVAL = 1.0
"""Seconds between two writes of one draft while edits come (what a kill -9 can lose)."""


def default_draft_dir() -> Path:
    """``$PGM_EXPLORE_DRAFTS`` if set, else ``~/.pgm-explore/drafts`` (read at each call, so
    that a test or a notebook can point it elsewhere at any time)."""
    configured = os.environ.get(ENV_VAR)
    return Path(configured).expanduser() if configured else Path.home() / ".pgm-explore" / "drafts"


def default_work_dir() -> Path:
    """Where Save writes when no file name is given: ``$PGM_EXPLORE_WORK`` if set, else
    ``~/.pgm-explore/work`` (read at each call)."""
    configured = os.environ.get(WORK_ENV_VAR)
    return Path(configured).expanduser() if configured else Path.home() / ".pgm-explore" / "work"


def _folder(draft_dir: str | Path | None) -> Path:
    return Path(draft_dir).expanduser() if draft_dir is not None else default_draft_dir()


def draft_path(name: str, draft_dir: str | Path | None = None) -> Path:
    """Where the draft ``name`` lives. Distinct names never share a file.

    >>> draft_path("02-pc-prompt", "/tmp/d").as_posix()
    '/tmp/d/02-pc-prompt.json'
    >>> draft_path("my draft", "/tmp/d").name
    'my_draft+ae754d1d7e8e358b.json'
    >>> draft_path("my_draft", "/tmp/d").name, draft_path("草稿1", "/tmp/d").name[:2]
    ('my_draft.json', '1+')
    """
    if _PLAIN.fullmatch(name):
        stem = name
    else:
        digest = hashlib.sha256(name.encode("utf-8", "surrogatepass")).hexdigest()[:16]
        stem = f"{safe_filename(name.lower(), default='draft')[:80]}+{digest}"
    return _folder(draft_dir) / f"{stem}.json"


def _legacy_path(name: str, draft_dir: str | Path | None) -> Path:
    """The file name versions before 0.2 gave a draft (several names could share it)."""
    return _folder(draft_dir) / f"{_LEGACY_UNSAFE.sub('_', name).strip('._') or 'draft'}.json"


def find_draft(name: str, draft_dir: str | Path | None = None) -> Path | None:
    """The file of draft ``name`` if there is one (also one written under the old file name
    by an earlier version, when it says it is that draft)."""
    flush_drafts()
    path = draft_path(name, draft_dir)
    if path.exists():
        return path
    legacy = _legacy_path(name, draft_dir)
    try:
        old = legacy != path and legacy.exists()
    except OSError:  # a name too long for a file name: an earlier version never wrote it
        old = False
    if old:
        try:
            stored = json.loads(legacy.read_text(encoding="utf-8")).get("name")
        except (OSError, ValueError, AttributeError):
            return None
        return legacy if stored == name else None
    return None


def dump_json(value: Any) -> str:
    r"""The text of a saved message: 2-space indent, UTF-8 kept as is, final newline. A lone
    surrogate (typed or pasted; validate() reports it as ``encoding``) has no UTF-8: then the
    text is written with ``\u`` escapes, so that Save and Download keep it rather than fail.

    >>> dump_json({"Q": "Où"}), dump_json({"Q": chr(0xD800)})
    ('{\n  "Q": "Où"\n}\n', '{\n  "Q": "\\ud800"\n}\n')
    """
    text = json.dumps(value, indent=2, ensure_ascii=False) + "\n"
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        text = json.dumps(value, indent=2) + "\n"
    return text


def write_draft(path: Path, content: dict[str, Any]) -> Path:
    """Write a draft atomically (private file, no ``fsync``: drafts are written at every edit)."""
    data = {"format": DRAFT_FORMAT, **content, "saved": time.time()}
    text = json.dumps(data, ensure_ascii=False)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate typed or pasted: \\u escapes keep it
        text = json.dumps(data, ensure_ascii=True)
    return atomic_write(path, text)


def read_draft(path: str | Path) -> dict[str, Any]:
    """A draft's content; ``FileNotFoundError`` if there is none, ``ValueError`` if the file
    is not a pgm-explore draft (also: empty, not JSON, not UTF-8)."""
    raw = Path(path).read_bytes()
    try:
        data = json.loads(raw.decode("utf-8")) if raw.strip() else None
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ValueError(f"{path} is not a pgm-explore draft: {exc}") from None
    if not isinstance(data, dict) or data.get("format") != DRAFT_FORMAT:
        raise ValueError(f"{path} is not a pgm-explore draft (format {DRAFT_FORMAT})")
    return data


def local_time(seconds: float) -> str:
    """An instant as the kernel's local time, with its zone: ``2026-12-01 16:03:12 UTC``."""
    try:
        return dt.datetime.fromtimestamp(seconds).astimezone().strftime("%Y-%m-%d %H:%M:%S %Z")
    except (OverflowError, OSError, ValueError):
        return "an unknown time"


def _saved(data: dict[str, Any], path: Path) -> float:
    saved = data.get("saved")
    if isinstance(saved, int | float) and not isinstance(saved, bool):
        return float(saved)
    return path.stat().st_mtime


@dataclass(frozen=True)
class DraftInfo:
    """One draft in the drafts folder: its name, ``"message"`` or ``"dialogue"``, the data type
    of a message draft, its file, and when it was last written (seconds since 1970)."""

    name: str
    kind: str
    type: str | None
    path: Path
    saved: float
    mode: str | None = None

    @property
    def label(self) -> str:
        """What a drafts list shows, in words: the name, what it holds, whose step it keeps, when.

        >>> DraftInfo("03-dac-request-reply", "message", "BKN-DAC", Path("x"), 0, "RS").label[:62]
        '03-dac-request-reply: a BKN-DAC Response (the reply of “03-dac'
        >>> DraftInfo("02-pc-prompt", "message", "PC Prompt", Path("x"), 0).label[:29]
        '02-pc-prompt: a PC Prompt, la'
        """
        if self.kind == "message" and self.type:
            word = MODE_WORDS.get(self.mode or "", "")
            what = f"a {self.type}" + (f" {word}" if word else "")
        else:
            what = f"a {self.kind}"
        for suffix, role in (("-reply", "the reply of"), ("-previous", "what was shown before an Open in")):
            if self.name.endswith(suffix) and len(self.name) > len(suffix):
                what += f" ({role} “{self.name[: -len(suffix)]}”)"
        return f"{self.name}: {what}, last written {local_time(self.saved)}"


@dataclass(frozen=True)
class OpenedDraft:
    """What :func:`open_draft` found: the content (None when there is none to restore), when
    it was written, and a sentence for the person when something needs saying."""

    content: dict[str, Any] | None
    saved: float | None = None
    notice: str | None = None


def set_aside(path: Path, why: str) -> Path:
    """Rename a draft that cannot be read to ``<file>.<why>-<time>``; never deletes it."""
    stamp = dt.datetime.now().strftime("%Y%m%d-%H%M%S")
    target = path.with_name(f"{path.name}.{why}-{stamp}")
    counter = 1
    while target.exists():
        counter += 1
        target = path.with_name(f"{path.name}.{why}-{stamp}-{counter}")
    path.rename(target)
    return target


def aside_name(name: str, draft_dir: str | Path | None = None) -> str:
    """A free draft name to keep the draft ``name`` aside under: ``<name> (set aside <time>)``."""
    base = f"{name} (set aside {dt.datetime.now().strftime('%Y-%m-%d %H:%M:%S')})"
    candidate, counter = base, 1
    while find_draft(candidate, draft_dir) is not None:
        counter += 1
        candidate = f"{base[:-1]} #{counter})"
    return candidate


def open_draft(name: str, draft_dir: str | Path | None = None) -> OpenedDraft:
    """The draft ``name`` to restore. Leftover temporary files in the folder are removed; a
    draft that cannot be read is renamed aside (``.damaged-<time>``) and reported, never raised."""
    flush_drafts()
    folder = _folder(draft_dir)
    remove_leftovers(folder)
    path = find_draft(name, draft_dir)
    if path is None:
        return OpenedDraft(None)
    try:
        data = read_draft(path)
    except (OSError, ValueError) as exc:
        kept = set_aside(path, "damaged")
        reason = str(exc).replace(str(path), "the file")
        return OpenedDraft(None, None, f"The draft “{name}” could not be read ({reason}); it is kept as {kept.name}.")
    return OpenedDraft(data, _saved(data, path))


def draft_entries(draft_dir: str | Path | None = None, kind: str | None = None) -> list[DraftInfo]:
    """The drafts in a folder (of one ``kind`` if given), the most recently written first.
    Files that are not drafts are left out."""
    flush_drafts()
    folder = _folder(draft_dir)
    if not folder.is_dir():
        return []
    found = []
    for path in folder.glob("*.json"):
        if path.name.startswith("."):
            continue
        try:
            data = read_draft(path)
        except (OSError, ValueError):
            continue
        stored = data.get("name")
        name = stored if isinstance(stored, str) else path.stem
        document = data.get("document")
        mode = document.get("Mode") if isinstance(document, dict) else None
        entry = DraftInfo(
            name,
            str(data.get("kind", "message")),
            data.get("type"),
            path,
            _saved(data, path),
            mode if isinstance(mode, str) else None,
        )
        if kind is None or entry.kind == kind:
            found.append(entry)
    # One entry per name: a file that says it is the draft of a name another file already is (a
    # copy, one written under an earlier version's file name) is the same draft, listed once.
    by_name: dict[str, DraftInfo] = {}
    for entry in sorted(found, key=lambda e: e.saved, reverse=True):
        if entry.name not in by_name or entry.path == find_draft(entry.name, draft_dir):
            by_name[entry.name] = entry
    return sorted(by_name.values(), key=lambda e: e.saved, reverse=True)


def list_drafts(draft_dir: str | Path | None = None) -> list[str]:
    """Names of the drafts in a folder, the most recently written first."""
    return [entry.name for entry in draft_entries(draft_dir)]


def delete_draft(name: str, draft_dir: str | Path | None = None) -> Path:
    """Delete the draft ``name`` (``FileNotFoundError`` if there is none); returns its file."""
    path = find_draft(name, draft_dir)
    if path is None:
        raise FileNotFoundError(f"there is no draft {name!r} in {_folder(draft_dir)}")
    path.unlink()
    return path


# Which live widget of this kernel writes which draft file: two composers given the same
# draft name would each replace the other's draft at every edit.
_HOLDERS: dict[Path, weakref.ref[Any]] = {}


def claim_draft(path: Path, holder: Any) -> Any | None:
    """Record that ``holder`` writes the draft at ``path``; returns another live holder of the
    same file if there is one (closed widgets do not count)."""
    key = Path(os.path.abspath(path))
    previous = _HOLDERS.get(key)
    other = previous() if previous is not None else None
    _HOLDERS[key] = weakref.ref(holder)
    if other is None or other is holder or getattr(other, "_closed", False):
        return None
    return other


class _Writer:
    """The one background thread that writes the drafts of this process, each when it is due.

    A keystroke only records a due time and wakes the thread (a condition's notify): starting a
    thread per write cost the keystroke more than the write saved."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._due: dict[DraftSchedule, float] = {}
        self._thread: threading.Thread | None = None

    def plan(self, schedule: DraftSchedule, at: float) -> None:
        """Write ``schedule`` at ``at`` (``time.monotonic()``), or earlier if it is planned so."""
        with self._cond:
            planned = self._due.get(schedule)
            if planned is None or at < planned:
                self._due[schedule] = at
                self._cond.notify()
            if self._thread is None or not self._thread.is_alive():  # first use, or after a fork
                self._thread = threading.Thread(target=self._run, name="pgm-explore drafts", daemon=True)
                self._thread.start()

    def cancel(self, schedule: DraftSchedule) -> None:
        with self._cond:
            self._due.pop(schedule, None)

    def _run(self) -> None:
        while True:
            with self._cond:
                while True:
                    now = time.monotonic()
                    ready = [schedule for schedule, at in self._due.items() if at <= now]
                    if ready:
                        for schedule in ready:
                            del self._due[schedule]
                        break
                    self._cond.wait(min(self._due.values()) - now if self._due else None)
            for schedule in ready:
                schedule._timed()


_WRITER = _Writer()


class DraftSchedule:
    """When one draft is written: off the keystroke path, at most about once a second.

    :meth:`keep` takes the draft's content (a snapshot: its parts are not changed afterwards)
    and returns at once; a background thread writes the latest content kept, ``WRITE_INTERVAL``
    seconds after the previous write at the latest (at once after a pause). :meth:`flush`
    writes what is kept now (Save, closing); :meth:`soon` has the thread write it now (leaving a
    field); at the end of the process every schedule is flushed (``atexit``: a kernel shut down
    or restarted from Jupyter exits so). A write that fails goes to ``on_error`` (the composer
    shows it), never to the writer's thread.
    """

    def __init__(self, on_error: Callable[[BaseException], None], interval: float | None = None) -> None:
        self._on_error = on_error
        self._interval = WRITE_INTERVAL if interval is None else interval
        self._lock = threading.Lock()  # held for moments only: a keystroke never waits for the disk
        self._writing = threading.Lock()  # one write at a time, so an older content never lands last
        self._kept: tuple[Path, dict[str, Any]] | None = None
        self._last = -self._interval

    def keep(self, path: Path, content: dict[str, Any], *, now: bool = False) -> None:
        """Keep ``content`` as the draft at ``path``; written in the background (at once if ``now``)."""
        with self._lock:
            self._kept = (path, content)
        _SCHEDULES.add(self)
        clock = time.monotonic()
        _WRITER.plan(self, clock if now else max(clock, self._last + self._interval))

    def soon(self) -> None:
        """Write the content kept (if any) now, in the background."""
        if self._kept is not None:
            _WRITER.plan(self, time.monotonic())

    def _timed(self) -> None:
        try:
            self.flush()
        except Exception as exc:  # shown by the composer; the writer's thread has nobody to tell
            self._on_error(exc)

    def flush(self) -> Path | None:
        """Write the content kept, if any, now; returns the file written."""
        with self._writing:
            _WRITER.cancel(self)
            with self._lock:
                kept, self._kept = self._kept, None
                if kept is None:
                    return None
                self._last = time.monotonic()
            return write_draft(*kept)


_SCHEDULES: weakref.WeakSet[DraftSchedule] = weakref.WeakSet()


def flush_drafts() -> None:
    """Write every draft of this process that is kept but not written yet (reading drafts in the
    same process, and the end of the process, see the last edit)."""
    for schedule in list(_SCHEDULES):
        try:
            schedule.flush()  # also waits for a write in progress: a reader then sees it whole
        except OSError as exc:
            schedule._on_error(exc)


atexit.register(flush_drafts)
