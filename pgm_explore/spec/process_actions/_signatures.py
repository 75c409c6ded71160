"""Per-action V2.2 signatures as data: the complements and error codes of each action's schema.

Source: the MMM-TEC V2.2 per-action schemas as NOTES 4.6 records them (one line an action in
``_SIGNATURE_TABLE``), with what NOTES 4.6 could not record marked as such.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import cast

from pgm_explore.spec.process_actions._status import normalize_status
from pgm_explore.spec.process_actions._vocabulary import Preposition

__all__ = ["OPERAND_TYPES", "SIGNATURES", "Signature", "Slot"]


@dataclass(frozen=True)
class Slot:
    """One complement of a signature: a preposition and the name of its operand (``At MLocationID``)."""

    preposition: Preposition
    operand: str
    """Operand name as the schema writes it; alternatives are joined with ``|`` (``ProcessID|ItemID``)."""

    def __str__(self) -> str:
        return f"{self.preposition} {self.operand}"


@dataclass(frozen=True)
class Signature:
    """The complements and error codes of one action in its V2.2 per-action schema (NOTES 4.6)."""

    action: str
    header: str | None
    request: tuple[Slot, ...]
    request_complete: bool
    """False where NOTES 4.6 recorded the request complements only in part (UM-Send, Register)."""
    response: tuple[Slot, ...] | None
    """None where NOTES 4.6 did not record the response complements."""
    errors: tuple[str, ...]
    """The ``Err`` codes as the per-action schema writes them (FaultyPA, MLocOOR...)."""
    errors_complete: bool
    """False where NOTES 4.6 recorded the ``Err`` list only in part (or not at all)."""

    @property
    def statuses(self) -> frozenset[str]:
        """Ack and the errors, in the spec texts' ten codes.

        >>> sorted(SIGNATURES["MM-Add"].statuses)
        ['Ack', 'Clash', 'FaultyReq', 'IncID', 'InsRights', 'InsValue', 'LocOOR']
        """
        return frozenset({"Ack", *(normalize_status(e) for e in self.errors)})

    @property
    def prepositions(self) -> frozenset[str]:
        return frozenset(slot.preposition for slot in self.request)

    @property
    def max_nil(self) -> int:
        """How many Nil complements a statement of this action may have (at least one)."""
        return max(1, sum(slot.preposition == "Nil" for slot in self.request))

    def allows(self, code: str) -> bool | None:
        """Whether the action's schema lists the status (None when its list was not fully recorded).

        >>> SIGNATURES["MM-Send"].allows("Clash"), SIGNATURES["Register"].allows("Clash")
        (False, None)
        """
        if normalize_status(code) in self.statuses:
            return True
        return False if self.errors_complete else None


def _slots(spec: str) -> tuple[Slot, ...]:
    # "+R +SPM" is NOTES 4.6's shorthand for the two complements nearly every action ends with.
    spec = spec.replace("+R +SPM", "With Rights; With SPM").replace("+R", "With Rights")
    out = []
    for part in filter(None, (p.strip() for p in spec.split(";"))):
        prep, _, operand = part.partition(" ")
        out.append(Slot(cast(Preposition, prep), operand.replace(" ", "")))
    return tuple(out)


# NOTES 4.6, one action a line: action | Header | request complements | response complements | Err codes.
# "+R +SPM" stands for "With Rights; With SPM"; "?" = not recorded; a trailing "…" = recorded only in part.
# Slot order is the schema's (RQ1, RQ2, ...).
_SIGNATURE_TABLE = """
MM-Add          | MMM-2DP-V2.2 | Nil Item; At MLocationID; With SpatialAttitude; With PerceptibilityState; +R +SPM | With Rights; With SPM; With PAStatus | Clash FaultyPA IncID MLocOOR InsRights InsValue
MM-Move         | ?            | Nil ItemID; From PointOfView1; To PointOfView2; With SpatialAttitude; +R +SPM | With Rights; With SPM; With PAStatus | Clash FaultyPA IncID MLocOOR InsRights InsValue
MM-Animate      | ?            | Nil ItemID; At PointOfView; At MLocationID; With Stream; +R +SPM | With Rights; With SPM; With PAStatus | Clash FaultyPA IncID InsRights InsValue LocOOR
MM-Capture      | MMM-2CP-V2.2 | Nil LocationID; With PointOfView; With Aperture; +R +SPM | Nil Item; With Rights; With PAStatus | FaultyPA IncID MLocOOR InsRights InsValue
MM-Send         | MMM-MSP-V2.2 | Nil Message; To ProcessID; +R +SPM | With Rights; With SPM; With PAStatus | FaultyPA IncID InsRights InsValue
MU-Actuate      | ?            | Nil ItemID; Nil MLocation; At ULocation; With RItemType; With SpatialAttitude; +R +SPM | With Rights; With SPM; With PAStatus | Clash FaultyPA IncID MLocOOR ULocOOR InsRights InsValue
MU-Add          | MMM-3DP-V2.2 | Nil RItemID; At ULocationID; With SpatialAttitude; +R +SPM | With Rights; With SPM; With PAStatus | Clash FaultyPA IncID ULocOOR InsRights InsValue
MU-Move         | MMM-3MP-V2.2 | Nil RItemID; From PointOfView1; To PointOfView2; With ULocation; With Trajectory; +R +SPM | With Rights; With SPM; With PAStatus | Clash FaultyPA IncID ULocOOR InsRights InsValue
MU-Animate      | MMM-3AP-V2.2 | Nil RItem; At ULocationID; With PointOfView; With Stream; +R +SPM | With Rights; With SPM; With PAStatus | Clash FaultyPA IncID ULocOOR InsRights InsValue
MU-Send         | MMM-3SP-V2.2 | Nil Message; To ProcessID; +R +SPM | With Rights; With SPM; With PAStatus | FaultyPA IncID InsRights InsValue
UM-Capture      | ?            | Nil ULocation; With Qualifiers; +R +SPM | ? | ULocOOR …
UM-Actuate      | MMM-1AP-V2.2 | Nil ULocation; With Qualifiers; At MLocation; With SpatialAttitude; +R +SPM | Nil ItemID; With Rights; With SPM; With PAStatus | FaultyPA IncID IncDQ InsRights InsValue ULocOOR MLocOOR QualNS
UM-Send         | ?            | Nil Message; To ProcessID … | ? | ?
Identify        | ?            | Nil Data; With Qualifier; +R; At ProcessID; With SPM | Nil ItemID; With Rights; With PAStatus | FaultyPA IncDQ InsRights InsValue
Interpret       | MMM-ITP-V2.2 | With Interpretation; +R; At User; With SPM | With Interpretation; With Rights; With PAStatus | FaultyPA IncDQ InsRights InsValue
Modify          | MMM-MOP-V2.2 | Nil ItemID; With Data; With Qualifier; +R +SPM | Nil ItemID; With Rights; With PAStatus | FaultyPA IncID IncDQ InsRights InsValue
Convert         | ?            | Nil ItemID; At DProcessID; At MLocation; With ModelQualifier; At RProcessID; +R +SPM | ? | FaultyPA IncID MLocOOR InsRights InsValue QualNS
Author          | MMM-ATP-V2.2 | With ItemIDs; +R; At Process; With SPM | Nil ItemID; With Rights; With SPM; With PAStatus | FaultyPA IncID InsRights InsValue
Execute         | MMM-EXP-V2.2 | Nil ProgramID; With ItemIDs; +R; At ProcessID; With SPM | Nil ItemIDs; With Rights; With PAStatus | FaultyPA IncID InsRights InsValue
Hide            | MMM-HDP-V2.2 | Nil HideID; +R +SPM | Nil Rights; With SPM; With PAStatus | FaultyPA IncID InsRights InsValue
Discover        | MMM-DSP-V2.2 | With Discovery; +R +SPM | With Discovery; With Rights; With PAStatus | FaultyPA IncID MLocOOR InsRights InsValue
Authenticate    | MMM-AUP-V2.2 | With Authentication; +R +SPM | With Authentication; With Rights; With SPM; With PAStatus | FaultyPA IncID MLocOOR InsRights InsValue
Validate        | MMM-VLP-V2.2 | With Authentication; +R +SPM | With Authentication; With Rights; With SPM; With PAStatus | FaultyPA IncID LocOOR InsRights InsValue
Resolve         | ?            | Nil Resolution; To ServiceID; With SPM | Nil Resolution; With SPM; With PAStatus | FaultyPA IncID InsRights InsValue
Post            | ?            | Nil AssetID; To ServiceID; With P-Rights; With R-Rights; With SPM | ? | FaultyPA IncID InsRights InsValue PostRef
Transact        | MMM-TRP-V2.2 | With Transaction; With SPM | ? | FaultyPA IncID InsRights InsValue
Register        | ?            | With SPM … | ? | ?
Property Change | MMM-PCP-V2.2 | Nil ItemID; With PerceptibilityStatus; With Resize; With ThreeDModelObject; With VisualObject; With AcousticProfile; With LightSource; With AudioSource; With PersonalStatus; +R +SPM | With Rights; With SPM; With PAStatus | FaultyPA IncID MLocOOR InsRights InsValue
Rights Change   | ?            | Nil ProcessID|ItemID|MLocationID; With NewRights; With FutureRights; With SPM | ? | MLocOOR …
"""


def _signature(line: str) -> Signature:
    # Split on " | " (with spaces): "ProcessID|ItemID" alternatives inside a cell keep their bars.
    action, header, rq, rs, errors = (cell.strip() for cell in re.split(r"\s\|\s", line))
    return Signature(
        action=action,
        header=None if header == "?" else header,
        request=_slots(rq.rstrip("… ")),
        request_complete=not rq.endswith("…"),
        response=None if rs == "?" else _slots(rs),
        errors=tuple(e for e in errors.split() if e not in ("?", "…")),
        errors_complete=not (errors == "?" or errors.endswith("…")),
    )


SIGNATURES: Mapping[str, Signature] = {
    sig.action: sig for sig in map(_signature, filter(None, _SIGNATURE_TABLE.splitlines()))
}
"""Per-action V2.2 signatures (NOTES 4.6) for the 29 actions with a per-action schema (not License, Inform)."""

OPERAND_TYPES: frozenset[str] = frozenset(
    {
        *(
            name
            for sig in SIGNATURES.values()
            for slot in (*sig.request, *(sig.response or ()))
            for name in slot.operand.split("|")
        ),
        *("Item", "Items", "Process", "Processes", "MLocation", "ULocation", "Location", "Message", "Data"),
        *("Asset", "Service", "Program", "RItem", "Avatar", "User", "Any"),
    }
)
"""Type names that stand for "any operand of this kind" in a Right or Rule pattern (see :func:`covers`):
the operand names of the signatures plus a few generic words (Item, Process, MLocation, Avatar...)."""
