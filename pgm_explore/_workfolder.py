"""A work folder that a page without code saves to and opens from, by names that cannot lead out of it.

The app page (``pgm-explore app``) is served to people who run no code; whatever they type into it
must not name a file elsewhere on the machine (issue 19: a kernelspec saved over the environment's
``kernel.json`` ran a command of the visitor's choice). So the page names files by a **name** in
one folder, never by a path, and :func:`file_name` is the one rule for what a name is:

- one name, not a path: no ``/`` or ``\\``, not ``.`` or ``..``, no leading ``.`` (hidden files,
  and every way of writing the parent folder), no leading ``~`` (a home folder);
- what no file system confuses with another name: no NUL, control, format (bidirectional
  overrides, zero-width characters), surrogate, unassigned or line-separator characters; none of
  ``< > : " | ? *`` (Windows' reserved characters, and ``:`` its alternate data streams); no
  trailing dot or space (which Windows drops); no reserved device name (``CON``, ``NUL``,
  ``COM1``…, with any extension, which Windows opens as a device); and the same once the name is
  put in Unicode compatibility form (NFKC: a fullwidth ``／`` or ``．`` becomes ``/`` or ``.`` for a
  system that folds it);
- at most 255 bytes of UTF-8 (one name of the usual file systems), ending in ``.json`` (added
  when it is missing: the page writes JSON, never a ``.py`` a kernel might import).

The name is taken in NFC form, and the entry it names is the folder's entry that equals it, or else
one that equals it once case and Unicode form are folded (``Report.json`` for ``report.json``), as
a case-insensitive or normalising file system would take it: the page never keeps two files that
such a system would make one. An entry that is a link is opened only when it leads to a file in the
folder, and never written through; what is not a regular file (a folder, a pipe, a device) is neither.

:class:`WorkFolder` applies the rule to one folder: the names Open lists, the file Open reads, the
file Save writes (atomically, through :func:`pgm_explore._files.atomic_write`).
"""

from __future__ import annotations

import os
import stat
import unicodedata
from pathlib import Path

from pgm_explore._files import atomic_write
from pgm_explore.errors import PgmExploreError

__all__ = ["MAX_OPEN_BYTES", "NameRefused", "WorkFolder", "file_name", "fold"]

SUFFIX = ".json"
MAX_NAME_BYTES = 255
MAX_OPEN_BYTES = 64 * 2**20
"""The largest file Open reads (a message; ``pgm-explore check`` takes larger transcripts)."""
_RESERVED_CHARACTERS = frozenset('<>:"|?*/\\')
# Unicode categories of characters that are not plain text: controls, format characters,
# surrogates, unassigned code points, and line and paragraph separators.
_REFUSED_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Cn", "Zl", "Zp"})
_DEVICES = frozenset(
    {"CON", "PRN", "AUX", "NUL", "CONIN$", "CONOUT$", "CLOCK$"}
    | {f"{port}{n}" for port in ("COM", "LPT") for n in "0123456789"}
)


class NameRefused(PgmExploreError, ValueError):
    """What was typed is not a name of a file in the work folder; the message says why."""


def _check(name: str, typed: str) -> None:
    """Raise :class:`NameRefused` if ``name`` (one form of what was ``typed``) is no plain name."""
    shown = ascii(typed)
    if "/" in name or "\\" in name:
        raise NameRefused(f"{shown} is a path; type a name only: files are saved and opened in the work folder")
    if name.startswith("."):
        raise NameRefused(f"{shown} starts with a dot (hidden files, the folder above); type a plain name")
    if name.startswith("~"):
        raise NameRefused(f"{shown} starts with ~ (a home folder); type a plain name")
    for char in name:
        if unicodedata.category(char) in _REFUSED_CATEGORIES:
            raise NameRefused(f"{shown} holds the character U+{ord(char):04X}, which a file name may not hold")
        if char in _RESERVED_CHARACTERS:
            raise NameRefused(f'{shown} holds {char!r}, which a file name may not hold (< > : " | ? * / \\)')
    if name.endswith((".", " ")):
        raise NameRefused(f"{shown} ends with a dot or a space, which some systems drop; type the name without it")
    if name.split(".", 1)[0].rstrip(" ").upper() in _DEVICES:
        raise NameRefused(f"{shown} is the name of a device on Windows ({name.split('.', 1)[0]}); choose another")


def file_name(typed: str) -> str:
    """The file name that ``typed`` stands for in a work folder (see the module), or
    :class:`NameRefused` saying why there is none.

    >>> file_name("  my message "), file_name("kda-1.json"), file_name("Résumé.JSON")
    ('my message.json', 'kda-1.json', 'Résumé.JSON')
    >>> file_name("../kernel.json")
    Traceback (most recent call last):
    pgm_explore._workfolder.NameRefused: '../kernel.json' is a path; type a name only: files are saved and opened in the work folder
    """
    name = unicodedata.normalize("NFC", typed.strip())
    if not name:
        raise NameRefused("type a name")
    _check(name, typed)
    if not name.lower().endswith(SUFFIX):
        name += SUFFIX
    # What a system that folds compatibility forms would make of it, checked the same way.
    _check(unicodedata.normalize("NFKC", name), typed)
    if len(name.encode("utf-8")) > MAX_NAME_BYTES:
        raise NameRefused(f"the name is too long: at most {MAX_NAME_BYTES} bytes in UTF-8")
    return name


def fold(name: str) -> str:
    """A name as a case-insensitive, normalising file system compares it.

    >>> fold("Report.JSON") == fold("report.json"), fold("e\\u0301.json") == fold("\\u00e9.json")
    (True, True)
    """
    return unicodedata.normalize("NFKC", name).casefold()


class WorkFolder:
    """One folder, read and written by the names of :func:`file_name` only (see the module).

    >>> import tempfile
    >>> folder = WorkFolder(tempfile.mkdtemp())
    >>> folder.write("first message", "{}\\n").name, folder.names(), folder.read("First Message.json")
    ('first message.json', ['first message.json'], ('first message.json', b'{}\\n'))
    """

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path).expanduser().resolve()
        if not self.path.is_dir():
            raise NotADirectoryError(f"the work folder {self.path} is not a folder")

    def __repr__(self) -> str:
        return f"WorkFolder({str(self.path)!r})"

    def _entries(self) -> list[str]:
        try:
            return sorted(os.listdir(self.path))
        except OSError:
            return []

    def _inside(self, entry: Path) -> bool:
        """Whether ``entry`` is a regular file of this folder, or a link to one inside it."""
        try:
            target = entry.resolve(strict=True)
            return target.is_relative_to(self.path) and stat.S_ISREG(target.stat().st_mode)
        except (OSError, RuntimeError):  # (a broken link, a loop of links)
            return False

    def names(self) -> list[str]:
        """The names Open offers: the folder's JSON files (links only to files inside it)."""
        found = []
        for entry in self._entries():
            try:
                if file_name(entry) != unicodedata.normalize("NFC", entry):
                    continue
            except NameRefused:
                continue
            if self._inside(self.path / entry):
                found.append(entry)
        return found

    def entry(self, typed: str) -> str:
        """The name in the folder that ``typed`` names: the entry equal to :func:`file_name` of
        it, else one equal once folded, else that name (a new file)."""
        name = file_name(typed)
        entries = self._entries()
        if name in entries:
            return name
        folded = fold(name)
        return next((e for e in entries if fold(e) == folded), name)

    def read(self, typed: str) -> tuple[str, bytes]:
        """The name and the bytes of the file ``typed`` names (``NameRefused`` when it is none of
        the folder's files, ``FileNotFoundError`` when there is none)."""
        name = self.entry(typed)
        path = self.path / name
        if not os.path.lexists(path):
            raise FileNotFoundError(f"there is no {name} in the work folder")
        if not self._inside(path):
            raise NameRefused(f"{name} is not a file of the work folder (a link leading out of it, or not a file)")
        # The file the checks saw, opened without following a link planted since, nor blocking.
        handle = os.open(path.resolve(), os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
        with os.fdopen(handle, "rb") as stream:
            info = os.fstat(stream.fileno())
            if not stat.S_ISREG(info.st_mode):
                raise NameRefused(f"{name} is not a file")
            if info.st_size > MAX_OPEN_BYTES:
                raise NameRefused(f"{name} is larger than {MAX_OPEN_BYTES // 2**20} MiB: too large to open here")
            return name, stream.read(MAX_OPEN_BYTES + 1)

    def target(self, typed: str) -> Path:
        """The file Save writes for ``typed``: a name of this folder, never a link nor a folder."""
        name = self.entry(typed)
        path = self.path / name
        if os.path.islink(path):
            raise NameRefused(
                f"{name} is a link in the work folder; Save does not write through links: choose another name"
            )
        if os.path.lexists(path) and not stat.S_ISREG(os.lstat(path).st_mode):
            raise NameRefused(f"{name} is not a file (a folder?); choose another name")
        return path

    def write(self, typed: str, text: str, *, overwrite: bool = False) -> Path:
        """Write ``text`` to the file ``typed`` names, atomically and durably; an existing file
        is replaced only with ``overwrite`` (``FileExistsError`` otherwise)."""
        return atomic_write(self.target(typed), text, durable=True, overwrite=overwrite, make_parents=False)
