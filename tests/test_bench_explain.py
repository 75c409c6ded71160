"""``benchmarks/bench_explain.py``: the messages it measures are of the kind it says, and it tells
when two checkouts say something different."""

from __future__ import annotations

from pathlib import Path

import pytest

from pgm_explore.validation import validate
from tests.test_typed import _bench

ROOT = Path(__file__).resolve().parents[1]


def test_each_kind_is_what_its_name_says(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.syspath_prepend(str(ROOT / "benchmarks"))
    kinds = _bench("bench_explain").kinds(12)
    assert [len(messages) for messages in kinds.values()] == [12, 12, 12]
    reports = {kind: [validate(message) for message in messages] for kind, messages in kinds.items()}
    assert all(r.conforms and not r.findings for r in reports["clean"])
    assert all(r.conforms and r.warnings and not r.errors for r in reports["warned"])
    assert not any(r.conforms for r in reports["not conforming"])
    # The four mistakes of bench_validate.py's _spoil, in turn.
    assert {r.best.rule for r in reports["not conforming"] if r.best} >= {
        "required",
        "unknown-property",
        "header-unknown",
    }


@pytest.mark.slow
def test_a_checkout_against_itself_says_the_same(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.syspath_prepend(str(ROOT / "benchmarks"))
    bench = _bench("bench_explain")
    assert bench.main_(["--messages", "6", "--repeat", "1", "--rounds", "1", "--source", str(ROOT)]) == 0
    out = capsys.readouterr().out
    assert out.count(" yes") == 3 and "the same" in out
