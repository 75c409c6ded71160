"""``benchmarks/bench_table.py``: a table command timed in a process of its own, with that process's
own peak memory (not its parent's, which a child's ``ru_maxrss`` holds from the fork), and a
command that fails stops the benchmark with what it said."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.test_typed import _bench


def test_a_table_is_run_as_a_user_runs_it_and_tells_its_own_peak() -> None:
    bench = _bench("bench_table")
    ballast = b"\1" * (600 * bench.MB)  # (this process's peak, which a forked child's ru_maxrss would hold)
    got = bench.run_table("pastatus", bench.SMALL)
    del ballast
    assert got.seconds > 0 and got.cpu > 0
    assert 30 * bench.MB < got.peak < 500 * bench.MB  # the interpreter, pandas and the schemas


def test_a_table_that_fails_stops_the_benchmark_with_what_it_said(tmp_path: Path) -> None:
    bench = _bench("bench_table")
    with pytest.raises(SystemExit, match=r"status 2: pgm-explore table: cannot read .*missing\.jsonl: no such file"):
        bench.run_table("pastatus", tmp_path / "missing.jsonl")
