"""``benchmarks/bench_check.py --memory``'s status line (issue 20: the memory of checking 1M messages
below 300 MB): the checking process is held to the goal, and its largest worker, a process of its
own, is shown beside it, not added to it."""

from __future__ import annotations

from tests.test_typed import _bench


def test_the_goal_is_the_checking_process_s_and_the_worker_is_shown_beside() -> None:
    line = _bench("bench_check").memory_line
    # Session 14's figures: 254.4 MB and 81.6 MB add up to more than 300 MB, yet each process is below.
    said = line(1_000_000, 254.4, 81.6, 50.0)
    assert "254.4 MB the checking process, target <= 300 MB: ok" in said
    assert "largest worker 81.6 MB, a process of its own" in said and "20,000 msg/s" in said
    assert "336.0" not in said  # no sum
    assert "ABOVE TARGET" in line(1_000_000, 300.5, 10.0, 50.0)
