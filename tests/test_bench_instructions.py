"""Two ``benchmarks/bench_instructions.py`` runs at once from one checkout (say, one against another
checkout with ``--source`` while another counts ``--subject validate``) each count their own messages:
neither writes over nor removes the other's files, and neither leaves any behind."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "benchmarks" / "bench_instructions.py"
OUT = ROOT / "benchmarks" / "out"

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(shutil.which("valgrind") is None, reason="valgrind is not on the PATH"),
]


def _leftovers() -> set[str]:
    return {p.name for p in OUT.glob("instructions-*")} if OUT.is_dir() else set()


def test_two_runs_at_once_keep_their_files_apart_and_remove_them() -> None:
    before = _leftovers()
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}  # no __pycache__ inside benchmarks/
    runs = [
        subprocess.Popen(
            [sys.executable, str(SCRIPT), "--mix", mix, "--messages", "20", "--warm-up", "20"],
            cwd=ROOT,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for mix in ("short", "short")
    ]
    outputs = [run.communicate(timeout=1800) for run in runs]
    for run, (out, err) in zip(runs, outputs, strict=True):
        assert run.returncode == 0, err[-3000:]
        rows = [line.split() for line in out.splitlines() if line.startswith("short ")]
        assert len(rows) == 1 and float(rows[0][3]) > 0, out  # json.loads, check, their ratio
    assert _leftovers() == before


def test_a_file_given_is_counted_instead_of_the_mixes(tmp_path: Path) -> None:
    # --file counts the first lines of a file (bench_validate.py's spaced messages, say), here as a
    # worker of validate reads and writes them; a file with too few lines is said so, not counted short.
    messages = (ROOT / "data" / "transcripts" / "full-session.jsonl").read_bytes().splitlines(keepends=True)
    path = tmp_path / "spaced.jsonl"
    path.write_bytes(b"".join(messages * 4))
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    argv = [sys.executable, str(SCRIPT), "--subject", "worker", "--file", str(path), "--warm-up", "10"]
    done = subprocess.run([*argv, "--messages", "10"], cwd=ROOT, env=env, capture_output=True, text=True, timeout=1800)
    assert done.returncode == 0, done.stderr[-3000:]
    rows = [line.split() for line in done.stdout.splitlines() if line.startswith("spaced ")]
    assert len(rows) == 1 and float(rows[0][1].replace(",", "")) > 0 and float(rows[0][3]) > 0, done.stdout
    short = subprocess.run(
        [*argv, "--messages", str(len(messages) * 4)], cwd=ROOT, env=env, capture_output=True, text=True
    )
    assert short.returncode != 0 and "fewer than" in short.stderr and "spaced " not in short.stdout
