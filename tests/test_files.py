"""pgm_explore._files: atomic writes that no planted link or half-written file can subvert."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from pgm_explore._files import atomic_write, remove_leftovers, safe_filename


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def test_a_symlink_planted_at_the_target_is_replaced_not_followed(tmp_path: Path) -> None:
    victim = tmp_path / "victim.txt"
    victim.write_text("precious", encoding="utf-8")
    victim.chmod(0o640)
    target = tmp_path / "out.jsonl"
    target.symlink_to(victim)
    written = atomic_write(target, "new\n", durable=True)
    assert written == target and not target.is_symlink() and target.read_text(encoding="utf-8") == "new\n"
    assert victim.read_text(encoding="utf-8") == "precious"
    assert target.stat().st_mode & 0o777 == 0o666 & ~_umask()  # not the link target's permissions


def test_overwrite_false_refuses_a_file_or_a_link(tmp_path: Path) -> None:
    existing = tmp_path / "a.json"
    existing.write_text("old", encoding="utf-8")
    link = tmp_path / "b.json"
    link.symlink_to(tmp_path / "nowhere")
    for target in (existing, link):
        with pytest.raises(FileExistsError):
            atomic_write(target, "new", overwrite=False)
    assert existing.read_text(encoding="utf-8") == "old" and link.is_symlink()
    assert atomic_write(tmp_path / "c.json", "x", overwrite=False).read_text(encoding="utf-8") == "x"
    assert [p.name for p in tmp_path.iterdir() if p.suffix == ".tmp"] == []


def test_make_parents_false_creates_no_folder(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        atomic_write(tmp_path / "missing" / "x.json", "x", make_parents=False)
    assert not (tmp_path / "missing").exists()


@pytest.mark.parametrize("text", ["../../etc/passwd", "/abs", "~", "..", ".", "a\\b", "é" * 300, "x" * 400])
def test_safe_filename_is_one_plain_name(text: str) -> None:
    name = safe_filename(text, ".json")
    assert "/" not in name and "\\" not in name and not name.startswith(".") and len(name) <= 125
    assert name.endswith(".json") and name not in (".json", "..json")


def test_leftovers_of_dead_writers_go(tmp_path: Path) -> None:
    dead = tmp_path / ".a.json.999999999-abcdefgh.tmp"
    mine = tmp_path / f".a.json.{os.getpid()}-abcdefgh.tmp"
    other = tmp_path / "a.json"
    for path in (dead, mine, other):
        path.write_text("x", encoding="utf-8")
    assert remove_leftovers(tmp_path) == [dead]
    assert remove_leftovers(tmp_path, now=os.path.getmtime(mine) + 3600) == [mine] and other.exists()


# A child that saves as Save does (durable), stopped once its temporary file is written and before
# it is renamed into place: there it says so and waits to be killed.
_SAVER = """
import os, sys, time
from pgm_explore import _files
def stall(fd):
    print("written", flush=True)
    time.sleep(600)
_files.os.fsync = stall
_files.atomic_write(sys.argv[1], "x" * 100_000, durable=True)
"""


@pytest.mark.parametrize("durable", [True, False], ids=["save", "draft"])
def test_a_save_killed_midway_leaves_nothing_in_its_folder_once_that_folder_is_written_again(
    tmp_path: Path, durable: bool
) -> None:
    import subprocess
    import sys

    folder = tmp_path / "work"  # any folder Save writes to, not only the drafts folder
    folder.mkdir()
    child = subprocess.Popen(
        [sys.executable, "-c", _SAVER, str(folder / "message.json")], stdout=subprocess.PIPE, text=True
    )
    try:
        assert child.stdout is not None and child.stdout.readline() == "written\n"
        left = [p.name for p in folder.iterdir()]
        assert len(left) == 1 and left[0].startswith(f".message.json.{child.pid}-") and left[0].endswith(".tmp")
    finally:
        child.kill()  # SIGKILL: no cleanup of its own runs
        child.wait()
        child.stdout.close()
    assert child.returncode == -9
    atomic_write(folder / "other.json", "{}\n", durable=durable)
    assert sorted(p.name for p in folder.iterdir()) == ["other.json"]
