"""How many findings one message gets: every cost of a report stays bounded.

A line of 2 MB can hold a million wrong items, and a finding for each would cost minutes,
gigabytes and a flood of output that nobody reads. A report keeps at most
:data:`MAX_FINDINGS` findings per message -- errors first, so that the verdict and the exit
status of ``check`` never change -- and ends with one ``too-many-findings`` finding that
says how many of each rule were left out. Past the cap, findings are only counted, and only
up to :data:`MAX_COUNTED`: the explanation of the rest is not even worked out.

>>> from pgm_explore.validation.findings import Finding
>>> tally = Tally(limit=2)
>>> for n in range(5):
...     _ = tally.add(Finding.of("type", ("Items", n), "wrong", "spec"))
>>> [(f.rule, f.json_path) for f in tally.findings()]
[('type', '$.Items[0]'), ('type', '$.Items[1]'), ('too-many-findings', '$')]
>>> print(tally.findings()[-1].message)
3 more findings were left out (a report keeps at most 2 per message): 3 of rule type.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

from pgm_explore.validation.findings import Finding

__all__ = ["MAX_COUNTED", "MAX_FINDINGS", "Tally"]

MAX_FINDINGS = 100
"""Findings a report keeps per message (documented in ``docs/rules.md``, ``too-many-findings``)."""
MAX_COUNTED = 1_000
"""Findings counted past :data:`MAX_FINDINGS` before counting stops ("at least ...")."""


class Tally:
    """The findings of one message as they come, kept up to a limit and counted beyond it.

    Errors have the first claim on the places: a warning is kept only while no error would
    need its place. :meth:`add` returns False once counting has stopped, when the caller
    should stop producing findings.
    """

    __slots__ = ("_errors", "_left_out", "_limit", "_seen", "_stopped", "_warnings", "paths")

    def __init__(self, limit: int = MAX_FINDINGS, counted: int = MAX_COUNTED) -> None:
        self._limit = limit
        self._errors: list[tuple[int, Finding]] = []
        self._warnings: list[tuple[int, Finding]] = []
        self._left_out: Counter[str] = Counter()
        self._stopped = counted
        self._seen = 0
        self.paths: set[tuple[str | int, ...]] = set()
        """The path of every finding added, kept or not."""

    @property
    def full(self) -> bool:
        """True once counting has stopped: nothing more is looked at."""
        return sum(self._left_out.values()) >= self._stopped

    def add(self, finding: Finding) -> bool:
        if self.full:
            return False
        self.paths.add(finding.path)
        place = (self._seen, finding)
        self._seen += 1
        if finding.severity == "error":
            if len(self._errors) < self._limit:
                self._errors.append(place)
                if len(self._errors) + len(self._warnings) > self._limit:
                    _, dropped = self._warnings.pop()  # the latest warning gives way
                    self._left_out[dropped.rule] += 1
                return True
        elif len(self._errors) + len(self._warnings) < self._limit:
            self._warnings.append(place)
            return True
        self._left_out[finding.rule] += 1
        return not self.full

    def extend(self, findings: Iterable[Finding]) -> bool:
        """:meth:`add` each of ``findings`` until counting stops."""
        return all(self.add(finding) for finding in findings)

    def findings(self) -> list[Finding]:
        """The kept findings in the order they came, and the summary if any were left out."""
        kept = [finding for _, finding in sorted(self._errors + self._warnings, key=lambda place: place[0])]
        if self._left_out:
            kept.append(self._summary())
        return kept

    def _summary(self) -> Finding:
        total = sum(self._left_out.values())
        rules = sorted(self._left_out.items(), key=lambda item: (-item[1], item[0]))
        each = ", ".join(f"{count:,} of rule {rule}" for rule, count in rules)
        if self.full:
            head = f"At least {total:,} more findings were left out (a report keeps at most {self._limit:,} per message"
            head += f", and counting stopped at {total:,}): at least {each}."
        else:
            head = (
                f"{total:,} more findings were left out (a report keeps at most {self._limit:,} per message): {each}."
            )
        return Finding.of("too-many-findings", (), head)
