"""Writing files safely, shared by every layer (the widgets' Save, drafts and Export; the CLI).

Below every layer and free of ipywidgets, so that the command line can write its ``--out``
files the way the widgets do.

- :func:`atomic_write` goes through a temporary file in the target's folder and a rename:
  a reader sees the old file or the new one, never half of one; a symbolic link planted at
  the target is replaced, never followed; ``overwrite=False`` refuses an existing file
  without a window between the check and the write.
- :func:`safe_filename` turns text that came from a document (a QueryID) into one plain
  file name, so that a document never decides which folder a file goes to.
- :func:`remove_leftovers` deletes the temporary files of writes that were interrupted
  (a killed kernel), once their writer is gone. :func:`atomic_write` calls it for every folder
  it writes to: at every durable write (Save, Export: a click), at most once a minute for the
  others (drafts, written at every edit), so that no folder keeps what a kill -9 left.
"""

from __future__ import annotations

import hashlib
import os
import re
import tempfile
import time
from functools import cache
from pathlib import Path

__all__ = ["atomic_write", "digest", "holds", "remove_leftovers", "safe_filename"]

_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")
_MAX_STEM = 120
# ".<name>.<pid>-<random>.tmp": the writer's pid tells whether the write may still be going on.
_TEMPORARY = re.compile(r"^\..+\.(?:(?P<pid>\d+)-)?[A-Za-z0-9_]+\.tmp$")
STALE_SECONDS = 600.0
"""A temporary file this old is a leftover whatever its writer (a pid may have been reused)."""
SWEEP_SECONDS = 60.0
"""How often a folder written to without ``durable`` (drafts) is looked through for leftovers."""
_swept: dict[str, float] = {}


@cache
def _umask() -> int:
    # Reading the umask means setting it; done once, before any thread of ours writes.
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def safe_filename(text: str, suffix: str = "", default: str = "message") -> str:
    """``text`` as one plain file name: letters, digits, ``.``, ``_``, ``-`` only, no leading
    dot, at most 120 characters before ``suffix``; ``default`` when nothing is left.

    >>> safe_filename("../../.jupyter/jupyter_server_config", ".json")
    'jupyter_jupyter_server_config.json'
    >>> safe_filename("~", ".json"), safe_filename("kda-1", ".json")
    ('message.json', 'kda-1.json')
    """
    stem = _UNSAFE.sub("_", text).lstrip("._")[:_MAX_STEM].rstrip("_") or default
    return f"{stem}{suffix}"


def digest(data: bytes) -> str:
    """The SHA-256 of ``data`` (what a writer remembers of what it wrote, to know it again)."""
    return hashlib.sha256(data).hexdigest()


def holds(path: Path, written: str | None) -> bool:
    """Whether the file at ``path`` (not a link) holds exactly the bytes whose :func:`digest` is
    ``written``: it is still what its writer wrote, so that Save again may replace it unasked."""
    if written is None or path.is_symlink():
        return False
    try:
        return digest(path.read_bytes()) == written
    except OSError:
        return False


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's process: alive
        return True
    return True


def remove_leftovers(folder: str | Path, *, now: float | None = None) -> list[Path]:
    """Delete the temporary files (``.<name>.<pid>-<random>.tmp``) that interrupted writes left
    in ``folder``: those whose writing process is gone, and any older than ten minutes.
    Returns what was deleted."""
    root = Path(folder)
    if not root.is_dir():
        return []
    now = time.time() if now is None else now
    removed = []
    for path in root.iterdir():
        match = _TEMPORARY.match(path.name)
        if match is None or not path.is_file():
            continue
        try:
            age = now - path.stat().st_mtime
        except OSError:
            continue
        pid = match.group("pid")
        gone = pid is not None and int(pid) != os.getpid() and not _alive(int(pid))
        if gone or age > STALE_SECONDS:
            try:
                path.unlink()
            except OSError:
                continue
            removed.append(path)
    return removed


def _sweep(folder: Path, *, always: bool) -> None:
    """Remove the leftovers of interrupted writes in ``folder`` (see the module)."""
    key, now = os.path.abspath(folder), time.monotonic()
    last = _swept.get(key)
    if always or last is None or now - last >= SWEEP_SECONDS:
        _swept[key] = now
        remove_leftovers(folder)


def _link_new(temporary: str, target: Path) -> None:
    """Put ``temporary`` at ``target`` only if nothing is there: a hard link fails rather
    than replaces. A file system without hard links gets a check and a rename instead."""
    try:
        os.link(temporary, target)
    except FileExistsError:
        raise FileExistsError(f"{target} exists") from None
    except OSError:
        if os.path.lexists(target):
            raise FileExistsError(f"{target} exists") from None
        os.replace(temporary, target)
        return
    os.unlink(temporary)


def atomic_write(
    path: str | Path,
    text: str,
    *,
    durable: bool = False,
    overwrite: bool = True,
    make_parents: bool = True,
) -> Path:
    """Write ``text`` (UTF-8) to ``path`` through a temporary file in the same folder and a
    rename: a reader sees the old file or the new one, never half of one.

    A symbolic link at ``path`` is replaced by the file, not followed. ``overwrite=False``
    raises ``FileExistsError`` when ``path`` exists (the file is linked into place, which
    fails rather than replaces). ``make_parents=False`` raises ``FileNotFoundError`` when
    the folder is missing instead of creating it.

    ``durable`` is for files written for others (save, export): the data is flushed to disk
    before the rename (``fsync``), and the file gets the permissions an ordinary write would
    give it (the temporary file is private). Drafts, written at every keystroke, stay private
    and skip the ``fsync``. Returns the absolute path written.
    """
    target = Path(path).expanduser()
    folder = target.parent
    if make_parents:
        folder.mkdir(parents=True, exist_ok=True)
    elif not folder.is_dir():
        raise FileNotFoundError(f"the folder {folder} does not exist")
    if target.is_dir() and not target.is_symlink():
        raise IsADirectoryError(f"{target} is a folder")
    _sweep(folder, always=durable)
    if not overwrite and os.path.lexists(target):
        raise FileExistsError(f"{target} exists")
    data = text.encode("utf-8")
    handle, temporary = tempfile.mkstemp(prefix=f".{target.name}.{os.getpid()}-", suffix=".tmp", dir=folder)
    try:
        with os.fdopen(handle, "wb") as stream:
            stream.write(data)
            if durable:
                stream.flush()
                os.fsync(stream.fileno())
        if durable:
            try:
                # The old file's own permissions (lstat: a planted link's target is not asked).
                old = os.lstat(target)
                mode = old.st_mode & 0o777 if not os.path.islink(target) else 0o666 & ~_umask()
            except FileNotFoundError:
                mode = 0o666 & ~_umask()
            os.chmod(temporary, mode)
        if overwrite:
            os.replace(temporary, target)
        else:
            _link_new(temporary, target)
    except BaseException:
        # The half-written temporary file is ours to remove; the target was never touched.
        Path(temporary).unlink(missing_ok=True)
        raise
    return Path(os.path.abspath(target))
