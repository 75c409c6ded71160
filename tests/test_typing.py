"""The package and benchmarks/ type-check: mypy, configured in pyproject.toml, finds no error."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.slow  # (mypy over the whole package and the benchmarks: tens of seconds without its cache)
def test_mypy_finds_no_error() -> None:
    # A subprocess, not mypy.api: mypy's own state must not leak into the test session.
    result = subprocess.run(
        [sys.executable, "-m", "mypy", "--no-error-summary"], cwd=ROOT, capture_output=True, text=True
    )
    assert result.returncode == 0, result.stdout + result.stderr
