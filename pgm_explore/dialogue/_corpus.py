"""Corpora: many transcripts, one file each, as simulations and evaluations write them.

``pgm-explore check --corpus`` and :class:`pgm_explore.analysis.Corpus` name their
transcripts here, so that the command, a notebook and a script agree on which files a
corpus holds, in which order, and what each is called.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence

from pgm_explore.io import UnreadablePath

__all__ = [
    "BATCH_BYTES",
    "BATCH_LARGEST",
    "FILE_BYTES",
    "CORPUS_SUFFIXES",
    "LOCAL_WORKERS_FROM",
    "batches",
    "corpus_files",
    "corpus_size",
]

LOCAL_WORKERS_FROM = 512 << 20
"""Bytes of a corpus from which it is checked on local worker processes when not told
otherwise: below, starting them (seconds on a busy machine) costs more than they save.
Measured with benchmarks/bench_threshold.py (session 12, 2 cores, a load average of 4.6 to
7.6): ``check --corpus --workers 2`` took longer than ``--workers 0`` on every corpus of
transcripts of 10 messages up to 512 MiB (0.41x on 64 MiB, 0.88x on 256, 0.94x on 512), as
``check`` and ``validate`` won from 512 MiB on; the 64 MiB before were not measured."""

CORPUS_SUFFIXES = (".jsonl", ".json")
"""The files a directory of a corpus stands for (as the shell's ``*.jsonl`` and ``*.json`` match)."""

BATCH_BYTES = 1 << 20
BATCH_LARGEST = 16 << 20
FILE_BYTES = 8 << 10
"""Files of a corpus go to the workers in batches, each transcript of a batch checked on its
own: a batch costs the client and the scheduler milliseconds of their own whatever it holds
(submitting it, waiting for it, taking its result in), which thousands of small transcripts
would otherwise pay one by one, and takes that CPU from the workers on a machine of few
cores. A batch holds about an eighth of a worker's share of the corpus (as the partitions of
one big file do), from :data:`BATCH_BYTES` to :data:`BATCH_LARGEST`, so that the workers stay
busy to the end; a file weighs its bytes and :data:`FILE_BYTES` more, about what its own
set-up (opening it, a checker of its own) costs next to its messages."""


def corpus_files(paths: Iterable[str | os.PathLike[str]]) -> list[str]:
    """The transcript files of a corpus, in order: each PATH in the order given, a directory
    standing for its ``*.jsonl`` and ``*.json`` files, recursively, sorted by path. A file
    inside a directory is named as the directory given joined with its path inside it
    (``logs/`` holding ``day1/a.jsonl`` gives ``logs/day1/a.jsonl``); a file given is
    named as given, whatever its extension.

    Raises :class:`~pgm_explore.io.UnreadablePath` for a PATH that does not exist, and for
    standard input (``-``), which cannot be one of many transcripts read on any worker.
    Links to directories are not followed (a link back up would never end); links to
    files are files of the corpus.

    >>> import os, pathlib, tempfile
    >>> root = pathlib.Path(tempfile.mkdtemp())
    >>> for name in ("logs/b.jsonl", "logs/day1/a.jsonl", "logs/a.json", "logs/notes.txt"):
    ...     (root / name).parent.mkdir(parents=True, exist_ok=True); _ = (root / name).write_text("")
    >>> [os.path.relpath(f, root) for f in corpus_files([root / "logs"])]
    ['logs/a.json', 'logs/b.jsonl', 'logs/day1/a.jsonl']
    """
    files: list[str] = []
    for given in paths:
        path = os.fspath(given)
        if path == "-":
            raise UnreadablePath(path, "standard input cannot be a transcript of a corpus: give files or directories")
        if not os.path.isdir(path):
            if not os.path.lexists(path):
                raise UnreadablePath(path, "no such file or directory")
            files.append(path)
            continue
        found: list[str] = []
        for folder, folders, names in os.walk(path, onerror=_raise):
            found += (os.path.join(folder, name) for name in names if name.endswith(CORPUS_SUFFIXES))
            folders.sort()  # (the order is decided below; sorted folders keep the walk repeatable)
        # Sorted by the path inside the directory, as strings: the same order on every machine.
        # (Every path the walk makes starts with the directory as given, then a separator:
        # os.path.relpath, which makes both absolute first, took 6 µs a file, this 0.1 µs.)
        inside = len(os.path.join(path, ""))
        found.sort(key=lambda name: name[inside:].replace(os.sep, "/"))
        files += found
    return files


def _raise(exc: OSError) -> None:
    raise UnreadablePath(exc.filename or "?", exc.strerror or str(exc)) from None


def corpus_size(files: Sequence[str]) -> int:
    """The bytes of the files (a file that cannot be looked at counts as empty: reading it
    will say why)."""
    return sum(map(_size, files))


def batches(files: Sequence[str], workers: int) -> list[tuple[str, ...]]:
    """``files`` in order, cut into runs of about an eighth of each of ``workers``' share of
    their weight (:data:`FILE_BYTES` and its size a file), from :data:`BATCH_BYTES` to
    :data:`BATCH_LARGEST` (a heavier file is a batch of its own).

    >>> import pathlib, tempfile
    >>> root = pathlib.Path(tempfile.mkdtemp())
    >>> names = [str(root / f"{n}.jsonl") for n in range(6)]
    >>> for name, size in zip(names, [0, 0, 900_000, 200_000, 4_000_000, 10]):
    ...     _ = pathlib.Path(name).write_bytes(b" " * size)
    >>> [len(batch) for batch in batches(names, workers=2)]
    [4, 1, 1]
    """
    weights = [FILE_BYTES + _size(name) for name in files]
    largest = max(BATCH_BYTES, min(BATCH_LARGEST, sum(weights) // (8 * max(workers, 1))))
    cut: list[tuple[str, ...]] = []
    start = weight = 0
    for end, size in enumerate(weights, 1):
        weight += size
        if weight >= largest:
            cut.append(tuple(files[start:end]))
            start, weight = end, 0
    if start < len(files):
        cut.append(tuple(files[start:]))
    return cut


def _size(name: str) -> int:
    """The bytes of a file (one that cannot be looked at weighs nothing: reading it will say why)."""
    try:
        return os.path.getsize(name)
    except OSError:
        return 0
