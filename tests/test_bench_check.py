"""``benchmarks/bench_check.py``'s lines: ``--memory``'s status line (issue 20: the memory of checking
1M messages below 300 MB), where the checking process is held to the goal and its largest worker, a
process of its own, is shown beside it, not added to it; and what each ratio is made of."""

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


def test_what_a_ratio_is_made_of_multiplies_back_to_it() -> None:
    bench = _bench("bench_check")
    # A check of 10 s whose processes spent 19 s of CPU (6 here, 13 in the workers), against a
    # json.loads that spent 9.5 s: two cores 95% busy, twice json.loads's CPU, 0.95 of its speed.
    said = bench.made_of("library", bench.Pass(10.0, 5.0, 6.0, 13.0), json_cpu=9.5, cores=2)
    assert said == "  library   busy 0.950, CPU 2.00 times json.loads -> 0.95"
    # The same CPU with the cores busier, or less CPU with them as busy, is a faster pass.
    busier = bench.made_of("x", bench.Pass(9.5, 0, 6.0, 13.0), 9.5, 2)
    assert busier == "  x         busy 1.000, CPU 2.00 times json.loads -> 1.00"
    spending_less = bench.made_of("x", bench.Pass(9.5, 0, 5.55, 12.5), 9.5, 2)
    assert spending_less == "  x         busy 0.950, CPU 1.90 times json.loads -> 1.00"
