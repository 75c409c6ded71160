"""Drafts and saved files: written atomically, so that a crash mid-write leaves the old file.

A draft is what a composer needs to come back after a kernel restart or a closed tab: the
document, the other mode's values kept aside, which parts are filled automatically, and any
text typed but not yet valid JSON. It is a small JSON file in the drafts folder
(``$PGM_EXPLORE_DRAFTS``, else ``~/.pgm-explore/drafts``).
"""

from __future__ import annotations

import json
import os
import re
import tempfile
from functools import cache
from pathlib import Path
from typing import Any

__all__ = [
    "DRAFT_FORMAT",
    "atomic_write",
    "default_draft_dir",
    "draft_path",
    "dump_json",
    "list_drafts",
    "read_draft",
    "write_draft",
]

DRAFT_FORMAT = "pgm-explore-draft/1"
ENV_VAR = "PGM_EXPLORE_DRAFTS"
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def default_draft_dir() -> Path:
    """``$PGM_EXPLORE_DRAFTS`` if set, else ``~/.pgm-explore/drafts`` (read at each call, so
    that a test or a notebook can point it elsewhere at any time)."""
    configured = os.environ.get(ENV_VAR)
    return Path(configured).expanduser() if configured else Path.home() / ".pgm-explore" / "drafts"


def draft_path(name: str, draft_dir: str | Path | None = None) -> Path:
    """Where the draft ``name`` lives; the name is made safe as a file name.

    >>> draft_path("BKN-DAC kda/1", "/tmp/d").as_posix()
    '/tmp/d/BKN-DAC_kda_1.json'
    """
    safe = _UNSAFE.sub("_", name).strip("._") or "draft"
    folder = Path(draft_dir).expanduser() if draft_dir is not None else default_draft_dir()
    return folder / f"{safe}.json"


@cache
def _umask() -> int:
    # Reading the umask means setting it; done once, before any thread of ours writes.
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def atomic_write(path: str | Path, text: str, *, durable: bool = False) -> Path:
    """Write ``text`` (UTF-8) to ``path`` through a temporary file in the same folder and
    ``os.replace``: a reader sees the old file or the new one, never half of one.

    ``durable`` is for files written for others (save, export): the data is flushed to disk
    before the rename (``fsync``), and the file gets the permissions an ordinary write would
    give it (the temporary file is private). Drafts, written at every keystroke, stay private
    and skip the ``fsync``.
    """
    target = Path(path).expanduser()
    target.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        with os.fdopen(handle, "w", encoding="utf-8", newline="\n") as stream:
            stream.write(text)
            if durable:
                stream.flush()
                os.fsync(stream.fileno())
        if durable:
            mode = target.stat().st_mode & 0o777 if target.exists() else 0o666 & ~_umask()
            os.chmod(temporary, mode)
        os.replace(temporary, target)
    except BaseException:
        # The half-written temporary file is ours to remove; the target was never touched.
        Path(temporary).unlink(missing_ok=True)
        raise
    return target.resolve()


def dump_json(value: Any) -> str:
    """The text of a saved message: 2-space indent, UTF-8 kept as is, final newline."""
    return json.dumps(value, indent=2, ensure_ascii=False) + "\n"


def write_draft(path: Path, content: dict[str, Any]) -> Path:
    return atomic_write(path, json.dumps({"format": DRAFT_FORMAT, **content}, ensure_ascii=False))


def read_draft(path: str | Path) -> dict[str, Any]:
    """A draft's content; ``FileNotFoundError`` if there is none, ``ValueError`` if the file
    is not a pgm-explore draft."""
    data = json.loads(Path(path).read_text(encoding="utf-8"))
    if not isinstance(data, dict) or data.get("format") != DRAFT_FORMAT:
        raise ValueError(f"{path} is not a pgm-explore draft (format {DRAFT_FORMAT})")
    return data


def list_drafts(draft_dir: str | Path | None = None) -> list[str]:
    """Names of the drafts in a folder, the most recently written first."""
    folder = Path(draft_dir).expanduser() if draft_dir is not None else default_draft_dir()
    if not folder.is_dir():
        return []
    files = [p for p in folder.glob("*.json") if not p.name.startswith(".")]
    return [p.stem for p in sorted(files, key=lambda p: p.stat().st_mtime_ns, reverse=True)]
