"""The code stays as ruff (configured in pyproject.toml) wants it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
# Docs code blocks, notebooks and the README are code a reader copies: held to the same style.
TARGETS = ["pgm_explore", "tests", "benchmarks", "data", "docs", "notebooks", "README.md"]


@pytest.mark.parametrize("command", [["check"], ["format", "--check"]], ids=["check", "format"])
def test_ruff(command: list[str]) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "ruff", *command, *TARGETS], cwd=ROOT, capture_output=True, text=True
    )
    assert result.returncode == 0, result.stdout + result.stderr
