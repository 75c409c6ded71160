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
