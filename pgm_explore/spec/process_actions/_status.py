"""PA Status: the ten codes of BKN-DAC ``Feasibility.Steps[].PAStatus``, with their meanings.

Source: the BKN-DAC spec text (Table 3, Feasibility – Steps – PAStatus) for the codes and their
order; MMM-TEC V2.2/V2.1/V2.0 and MMM-ARC V1.2 for what each means, or NOTES 4.5 where the meaning is
inferred; the per-action V2.2 schemas for the finer codes (``STATUS_ALIASES``). The models
(:mod:`pgm_explore.models.bkn_dac`) and every rule take the codes from here.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal, get_args

__all__ = ["PAStatus", "PAStatusCode", "PA_STATUS", "PA_STATUS_CODES", "STATUS_ALIASES", "normalize_status"]

PAStatusCode = Literal[
    "Ack", "Clash", "FaultyReq", "IncID", "IncDQ", "InsRights", "InsValue", "LocOOR", "PostRef", "QualNS"
]
"""PA Status of MMM-TEC V2.2: the ten codes of BKN-DAC ``Feasibility.Steps[].PAStatus``."""


@dataclass(frozen=True)
class PAStatus:
    """A PA Status code with its meaning, and whether that meaning is stated (FACT) or inferred."""

    code: PAStatusCode
    meaning: str
    basis: Literal["FACT", "INFERENCE"]
    source: str


PA_STATUS_CODES: tuple[PAStatusCode, ...] = get_args(PAStatusCode)
"""The ten codes of BKN-DAC ``Feasibility.Steps[].PAStatus``, in the spec text's order."""

PA_STATUS: Mapping[str, PAStatus] = {
    s.code: s
    for s in (
        PAStatus(
            "Ack",
            "The Process Action could be (was successfully) performed.",
            "FACT",
            "MMM-TEC V2.2 Process Actions page; TEC V2.1 Post",
        ),
        PAStatus(
            "Clash",
            "The request conflicts with the current state of the target (the Item is already there, is elsewhere, or is not the requester's).",
            "INFERENCE",
            "name and usage: only placement and animation actions list it (NOTES 4.5)",
        ),
        PAStatus(
            "FaultyReq",
            "The Request is faulty (per-action schemas: FaultyPA, Faulty PA Request).",
            "FACT",
            "MMM-ARC V1.2 actions; TEC V2.1 Post",
        ),
        PAStatus("IncID", "An ID is incorrect.", "FACT", "TEC V2.1 Post; MMM-ARC V1.2 actions"),
        PAStatus(
            "IncDQ",
            "The Data and their Qualifier are incorrect or incompatible.",
            "INFERENCE",
            "name and usage: exactly the actions taking Data and Qualifier list it (NOTES 4.5)",
        ),
        PAStatus("InsRights", "Insufficient Rights.", "FACT", "TEC V2.1 Post; MMM-ARC V1.2 actions"),
        PAStatus(
            "InsValue",
            "Insufficient Value: the Wallet cannot pay for the Action.",
            "FACT",
            "TEC V2.0 Process Actions page; MMM-ARC Register",
        ),
        PAStatus(
            "LocOOR",
            "Location out of range: an M-Location (per-action schemas: MLocOOR) or U-Location (ULocOOR) the Process cannot act in.",
            "INFERENCE",
            "name and usage (NOTES 4.5)",
        ),
        PAStatus(
            "PostRef",
            "Post refused: the Service declines to post the Asset.",
            "INFERENCE",
            "name and usage: only Post lists it (NOTES 4.5)",
        ),
        PAStatus(
            "QualNS",
            "Qualifier not supported.",
            "INFERENCE",
            "name; TEC V2.1 Processes page on Qualifiers not supported by P-Capabilities (NOTES 4.5)",
        ),
    )
}

STATUS_ALIASES: Mapping[str, PAStatusCode] = {"FaultyPA": "FaultyReq", "MLocOOR": "LocOOR", "ULocOOR": "LocOOR"}
"""The finer codes of the per-action V2.2 schemas → the ten codes of the spec texts (NOTES 4.5)."""


def normalize_status(code: str) -> str:
    """Map a per-action schema code to the spec texts' code; other codes pass unchanged.

    >>> normalize_status("MLocOOR"), normalize_status("FaultyPA"), normalize_status("Ack")
    ('LocOOR', 'FaultyReq', 'Ack')
    """
    return STATUS_ALIASES.get(code, code)
