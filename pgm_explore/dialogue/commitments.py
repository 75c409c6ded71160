"""The commitments of one BKN-DAC dialogue: what Basic Knowledge submitted, and which are released.

BKN-DAC Table 2 (``Commitments``, ``ReleasedCommitmentIDs``) and Table 3 (``CommitmentStatus``),
with NOTES 6.3 C1-C4: a Request retains a commitment under its CommitmentID; a CommitmentID
retained with another Statement conflicts (release it first); a Request releases what the
dialogue retains. Both sides of the exchange keep such a ledger, and they keep this one: the
transcript checker (:mod:`pgm_explore.dialogue`), to see whether a Response reports what the
Requests asked, and the reference Domain Access partner (:mod:`pgm_explore.mcp`), to answer
them; so the two cannot disagree on what "retained" and "released" mean.

>>> ledger = CommitmentLedger()
>>> ledger.retain("cm-1", "Budget 150 AGR.")
>>> ledger.conflicting("cm-1", "Budget 200 AGR.")
Commitment(statement='Budget 150 AGR.', status='retained')
>>> ledger.release("cm-1"), ledger.release("cm-1"), ledger.release("cm-2")
('released', 'already released', 'unknown')
>>> list(ledger.statuses())
[('cm-1', 'released')]
"""

from __future__ import annotations

from collections.abc import Iterator
from functools import lru_cache
from typing import Any, Literal, NamedTuple

import msgspec

__all__ = ["Commitment", "CommitmentLedger", "Release"]

Release = Literal["released", "unknown", "already released"]
"""What :meth:`CommitmentLedger.release` did: released it, or found it never retained, or released before."""


class Commitment(NamedTuple):
    """One commitment as the dialogue holds it."""

    statement: str
    status: Literal["retained", "released"]


# (typed: equal values of other types, 1 and True, kept apart)
_shared = lru_cache(maxsize=4096, typed=True)(Commitment)


def _commitment(statement: str, status: Literal["retained", "released"]) -> Commitment:
    """One :class:`Commitment` (and one copy of its Statement) for every ledger that holds the
    same, among the latest 4,096 distinct ones: an A-User submits the same commitments dialogue
    after dialogue, and the transcript checker keeps the ledger of each BKN-DAC dialogue to the end.

    >>> _commitment("Budget 150 AGR.", "retained") is _commitment("Budget 150 AGR.", "retained")
    True
    """
    try:
        return _shared(statement, status)
    except TypeError:  # (a Statement no schema let through, which cannot be hashed: kept as it is)
        return Commitment(statement, status)


class CommitmentLedger(msgspec.Struct, gc=False):
    """The commitments of one dialogue, by CommitmentID, in the order they were first submitted.

    (A msgspec Struct that the garbage collector does not track: the transcript checker keeps one
    for each BKN-DAC dialogue that has commitments, for as long as the transcript runs.)
    """

    held: dict[str, Commitment] = {}

    def __contains__(self, commitment_id: object) -> bool:
        return commitment_id in self.held

    def get(self, commitment_id: str) -> Commitment | None:
        return self.held.get(commitment_id)

    def conflicting(self, commitment_id: str, statement: Any) -> Commitment | None:
        """The retained commitment that submitting ``statement`` under ``commitment_id`` would
        conflict with (C1: it keeps its Statement until it is released), else None."""
        held = self.held.get(commitment_id)
        if held is not None and held.status == "retained" and held.statement != statement:
            return held
        return None

    def retain(self, commitment_id: str, statement: str) -> None:
        """Hold ``statement`` under ``commitment_id`` (a released one is retained anew)."""
        self.held[commitment_id] = _commitment(statement, "retained")

    def release(self, commitment_id: str) -> Release:
        """Release a retained commitment (C2); say so when there was none to release."""
        held = self.held.get(commitment_id)
        if held is None:
            return "unknown"
        if held.status == "released":
            return "already released"
        self.held[commitment_id] = _commitment(held.statement, "released")
        return "released"

    def withdraw(self, commitment_id: str) -> None:
        """Forget a commitment Domain Access refused to retain: the dialogue does not hold it."""
        self.held.pop(commitment_id, None)

    def statuses(self) -> Iterator[tuple[str, str]]:
        """(CommitmentID, "retained" or "released") of every commitment, in submission order."""
        for commitment_id, held in self.held.items():
            yield commitment_id, held.status

    def retained(self) -> dict[str, str]:
        """CommitmentID -> Statement of the commitments retained now."""
        return {cid: held.statement for cid, held in self.held.items() if held.status == "retained"}
