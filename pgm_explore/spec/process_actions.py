"""MMM-TEC V2.2 Process Action statements: the vocabulary as data, and a parser.

BKN-DAC ``ProcessActions[].Statement`` is "A Process Action statement conforming with the grammar of
MMM-TEC V2.2". That grammar's text (the "Backus Naur Form" section of the V2.2 Process Actions page) is
not available, so the grammar below is the project's reconstruction from every published example
(NOTES 4.3); a statement it rejects is a warning, never an error (DECISIONS D17).

The grammar (the canonical form is what :meth:`Statement.__str__` writes)::

    statement   = [ deontic ] , action , { [ "," ] , complement } , [ [ "," ] , condition ] ;
    deontic     = "May Not" | "May" | "Must" ;
    action      = one of ACTIONS, or a synonym (SYNONYMS) ;
    complement  = preposition , operand ;
    preposition = "Nil" | "At" | "From" | "To" | "With" ;     (* "Of" only with lenient=True *)
    operand     = phrase , [ "=" , phrase ] , [ status ] ;
    status      = "(" , "Status" , ( "=" | "-" ) , ( "Model" | "Final" ) , ")" ;
    condition   = "If" , phrase ;                           (* must end the statement *)
    phrase      = quoted | word , { word } ;               (* words that are not keywords *)
    quoted      = '"' , { any character but '"' } , '"' ;
    word        = { any character but white space and , ( ) = " } ;
    keyword     = "Nil" | "At" | "From" | "To" | "With" | "Of" | "If" ;

Conventions of the project (not of the spec):

* **Multi-word terms.** A term (and a value, and the event of a condition) runs over words until the
  next keyword, comma, ``=``, parenthesis or the end: ``With Requested Rights (Status=Model)`` has the
  term ``Requested Rights``. Keywords are case-sensitive, so ``to`` inside a term is a plain word; a term
  that must contain a keyword or a special character is written in double quotes (``With "Point To
  Point"``). Words are joined by one space.
* **Separators** are white space, or a comma before a complement or the condition; a comma must be
  followed by one of them. Commas are not kept: the canonical form uses single spaces.
* **Nil** (the direct object) comes first and occurs at most once, except in MU-Actuate, whose V2.2
  signature has two (``Nil ItemID; Nil MLocation``, NOTES 4.6).
* **The condition** ``If <event>`` ends the statement: anything after its event is an error.
* **Strict mode** (the default) reads V2.2 only. ``lenient=True`` also reads ``Of`` (V2.0/V2.1 and the
  MMM-TEC "about" page) and verb inflections of prose ("Identifies", "MM-Sends"), which become the
  canonical action. Names of older actions (``Track``, ``MM-Embed``...) are rejected in both modes, with
  a message that says where they come from.

Why a hand-written tokenizer and recursive-descent parser: the grammar is a dozen productions, and what
matters is the error report (a 1-based column, plain words, what was expected, a close-match
suggestion for a misspelt action), which a parser generator would have to be taught anyway. ``lark``
and ``pyparsing`` are in the development environment but not runtime dependencies; adding one for
this grammar is not worth it.

>>> s = parse_statement("MM-Add Nil Avatar, With SpatialAttitude, With PerceptStatus=1 With Requested Rights (Status=Model)")
>>> s.action, [c.preposition for c in s.complements]
('MM-Add', ['Nil', 'With', 'With', 'With'])
>>> s.complements[2], s.complements[3].status
(Complement(preposition='With', term='PerceptStatus', value='1', status=None), 'Model')
>>> print(s)
MM-Add Nil Avatar With SpatialAttitude With PerceptStatus=1 With Requested Rights (Status=Model)
>>> parse_statement("Track Nil item-1")
Traceback (most recent call last):
...
pgm_explore.spec.process_actions.StatementError: Track is an MMM-ARC V1.x action, not V2.2 (column 1)
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Literal, cast, get_args

from pgm_explore.errors import PgmExploreError

__all__ = [
    "ACTIONS",
    "ACTION_INFO",
    "ActionInfo",
    "Complement",
    "DEONTIC_VERBS",
    "Deontic",
    "KEYWORDS",
    "LENIENT_PREPOSITIONS",
    "NON_V22_ACTIONS",
    "OLDER_PREPOSITIONS",
    "OPERAND_TYPES",
    "PAStatus",
    "PAStatusCode",
    "PA_STATUS",
    "PA_STATUS_CODES",
    "PREPOSITIONS",
    "Preposition",
    "Rule",
    "SIGNATURES",
    "STATUS_ALIASES",
    "SYNONYMS",
    "Signature",
    "Slot",
    "Statement",
    "StatementError",
    "covers",
    "normalize_status",
    "parse_rule",
    "parse_statement",
    "resolve_action",
    "signature_problems",
]

# ---------------------------------------------------------------------------------------------------
# Vocabulary
# ---------------------------------------------------------------------------------------------------

Preposition = Literal["Nil", "At", "From", "To", "With", "Of"]
Deontic = Literal["May", "May Not", "Must"]
PAStatusCode = Literal[
    "Ack", "Clash", "FaultyReq", "IncID", "IncDQ", "InsRights", "InsValue", "LocOOR", "PostRef", "QualNS"
]

PREPOSITIONS: tuple[Preposition, ...] = ("Nil", "At", "From", "To", "With")
"""The V2.2 prepositions (NOTES 4.2)."""
LENIENT_PREPOSITIONS: tuple[Preposition, ...] = (*PREPOSITIONS, "Of")
"""``Of`` occurs in V2.0/V2.1 and on the MMM-TEC "about" page, in no V2.2 action schema (NOTES 4.3)."""
DEONTIC_VERBS: tuple[Deontic, ...] = ("May", "May Not", "Must")
OLDER_PREPOSITIONS: Mapping[str, str] = {"Of": "MMM-TEC V2.0/V2.1", "By": "MMM-ARC V1.2", "Into": "MMM-ARC V1.2"}
"""Prepositions of earlier MMM versions (NOTES 4.3) → where they come from."""
KEYWORDS: frozenset[str] = frozenset({*PREPOSITIONS, *OLDER_PREPOSITIONS, "If"})
"""Words that end a term. The older prepositions end one too, even in strict mode: a stray ``Into`` is
reported, and lenient mode never reads a statement differently, only more of them."""

_SOURCES = ("Actions.json", "AnyAction.json", "ProcessActions.json", "actions/")


@dataclass(frozen=True)
class ActionInfo:
    """One V2.2 action: its canonical name, description, MMM service group and the V2.2 lists naming it."""

    name: str
    description: str | None
    """Verbatim from ``AnyAction.json`` (for Property Change and Rights Change: Property Manage and
    Rights Manage); UM-Actuate's is from its per-action schema; License has none."""
    service: str | None
    """The MMM service that performs it (NOTES 4.4, third-party grouping following the V2.2 pages)."""
    sources: tuple[str, ...]
    """Which of the V2.2 lists name it: ``Actions.json``, ``AnyAction.json``, ``ProcessActions.json``,
    ``actions/`` (the per-action schemas)."""


_DESCRIPTIONS: dict[str, str | None] = {
    "Authenticate": "The Action of a Process producing an Authentication Response Item to confirm or not that an Item or Process is what it claims to be.",
    "Author": "The Action of a Process producing an Item based on provided Items and their Data and Qualifiers.",
    "Convert": "The Action of a Process changing the Data of an Item according to a given Qualifier",
    "Discover": "The Action of a Process providing a Discovery Response Item relevant to the Items or Processes that are intended to be discovered.",
    "Execute": "The Action of a Process executing a Program and producing Items.",
    "Hide": "The Action of a Process making the ID of an Item unavailable to all other Processes.",
    "Identify": "The Action of a Process producing and labelling an Item from Data, its Qualifier, and Model Rights.",
    "Inform": "The Action of a Process providing an Information Response Item about an Item or Process.",
    "Interpret": "The Action of a Process providing an Interpretation Response Item about an Item or Process.",
    "License": None,
    "MM-Add": "The Action of a Process placing an Item at an M-Location with a Spatial Attitude with a specified perceptible or imperceptible state.",
    "MM-Animate": "The Action of a Process animating an MM-Added Item with a Stream or Command Item.",
    "MM-Capture": "The Action of a Process capturing a Location from a Point of View with an Angle of View.",
    "MM-Move": "The Action of a Process moving an MM-Added Item from an M-Location to another M-Location along a Trajectory, preserving any change that may have been effected on the Item since it was MM-Added.",
    "MM-Send": "The Action of a Process sending a Message to other Processes.",
    "Modify": "The Action of a Process producing a new Item starting from an existing Item using new Data and possibly with a new Qualifier.",
    "MU-Actuate": "The Action of a Process rendering an MM-Added Item as an R-Item at a U-Location with a Spatial Attitude.",
    "MU-Add": "The Action of a Process placing an R-Item at a U-Location with a Spatial Attitude.",
    "MU-Animate": "The Action of a Process animating an MU-Added R-Item with a stream Item or a specific command",
    "MU-Move": "The Action of a Process moving an MU-Added R-Item from a U-Location to another U-Location via a Trajectory giving it an assigned Spatial Attitude when the R-Item is at the new U-Location.",
    "MU-Send": "The Action of a Process in an M-Instance sending a Message to Processes in the Universe.",
    "Post": "The Action of a Process adding an Asset to its repository and making it perceptible.",
    "Property Change": "The Action of a Process modifying the perceptible characteristics of an Item:",
    "Register": "The Action of a human opening an Account based on the human’s Personal Data.",
    "Resolve": "The Action of a Process setting up a multi-M-Instance Session that involves two/more than two Processes in two/more than two M-Instances.",
    "Rights Change": "The Action of a Process modifying the Rights of a Process or an Item.",
    "Transact": 'The Action of a Process1 ("sender") granting Rights to a Receiver against a Transaction. Both could Transact a Service Provider1.',
    "UM-Actuate": "captures a scene from the Universe, identifies it, and places it in the M-Instance",
    "UM-Capture": "The Action of a Process capturing a scene at a U-Location as Data with a Qualifier.",
    "UM-Send": "The Action of a Process in the Universe sending a Message to Processes in an M-Instance.",
    "Validate": "The Action of a Process producing a Validation Response Item that confirms or not that an Item or Process has the Rights it claims to have.",
}
_SERVICES: dict[str, tuple[str, ...]] = {
    "Communicate": ("MM-Send", "Resolve"),
    "Economy": ("License", "Post", "Transact"),
    "Execute": ("Execute",),
    "Export": ("MU-Actuate", "MU-Add", "MU-Animate", "MU-Move", "MU-Send"),
    "Identity": ("Hide", "Identify", "Modify", "Register"),
    "Import": ("UM-Actuate", "UM-Capture", "UM-Send"),
    "Information": ("Authenticate", "Discover", "Interpret"),
    "Item": ("Author", "Convert"),
    "Locate": ("MM-Add", "MM-Animate", "MM-Capture", "MM-Move", "Property Change"),
    "Rights": ("Rights Change", "Validate"),
}
# The three V2.2 lists and the per-action schemas disagree on these only (NOTES 4.4).
_NOT_IN: dict[str, tuple[str, ...]] = {
    "MM-Capture": ("Actions.json",),
    "License": ("AnyAction.json", "actions/"),
    "UM-Actuate": ("AnyAction.json",),
    "Inform": ("ProcessActions.json", "actions/"),
}

ACTIONS: tuple[str, ...] = tuple(sorted(_DESCRIPTIONS, key=str.casefold))
"""The 31 V2.2 actions, canonical spellings: the union of the V2.2 lists (NOTES 4.4)."""

ACTION_INFO: Mapping[str, ActionInfo] = {
    name: ActionInfo(
        name=name,
        description=_DESCRIPTIONS[name],
        service=next((s for s, names in _SERVICES.items() if name in names), None),
        sources=tuple(src for src in _SOURCES if src not in _NOT_IN.get(name, ())),
    )
    for name in ACTIONS
}

SYNONYMS: Mapping[str, str] = {
    "PropertyChange": "Property Change",  # Actions.json
    "Property Manage": "Property Change",  # AnyAction.json
    "RightsChange": "Rights Change",
    "Rights Manage": "Rights Change",
}
"""Other V2.2 spellings of the same action (the V2.2 lists disagree, NOTES 4.4) → canonical name."""

NON_V22_ACTIONS: Mapping[str, str] = {
    "Track": "MMM-ARC V1.x",  # also in the MMM-TEC V2.0 profiles table
    "UM-Render": "MMM-ARC V1.x",  # the older functional-requirements page
    "MU-Render": "MMM-ARC V1.x",
    "MM-Disable": "MMM-ARC V1.x and MMM-TEC V2.0",
    "MM-Enable": "MMM-ARC V1.x and MMM-TEC V2.0",
    "MM-Embed": "MMM-ARC V1.x and MMM-TEC V2.0",
    "MU-Embed": "MMM-ARC V1.x",
    "UM-Embed": "MMM-ARC V1.x",
    "UM-Animate": "MMM-ARC V1.x",
    "Change": "MMM-ARC V1.x and MMM-TEC V2.0",
}
"""Action names of MMM-ARC V1.x / MMM-TEC V2.0 that V2.2 dropped → where they come from (NOTES 4.4)."""
_NON_V22_HINTS = {"Change": "; V2.2 has Property Change and Rights Change"}

_LOOKUP: dict[str, str] = {**{a: a for a in ACTIONS}, **SYNONYMS}


def _inflections(word: str) -> Iterator[str]:
    """Base forms a prose inflection may come from: Identifies → Identify, MM-Sends → MM-Send."""
    if word.endswith("ies"):
        yield word[:-3] + "y"
    if word.endswith("es"):
        yield word[:-1]  # Licenses, Hides, Validates
        yield word[:-2]
    elif word.endswith("s"):
        yield word[:-1]


def resolve_action(name: str, *, lenient: bool = False) -> str | None:
    """The canonical V2.2 action that ``name`` spells, or None.

    >>> resolve_action("PropertyChange"), resolve_action("Rights Manage"), resolve_action("Track")
    ('Property Change', 'Rights Change', None)
    >>> resolve_action("Identifies"), resolve_action("Identifies", lenient=True)
    (None, 'Identify')
    """
    if name in _LOOKUP:
        return _LOOKUP[name]
    if lenient:
        head, _, last = name.rpartition(" ")
        for base in _inflections(last):
            candidate = f"{head} {base}" if head else base
            if candidate in _LOOKUP:
                return _LOOKUP[candidate]
    return None


# ---------------------------------------------------------------------------------------------------
# PA Status
# ---------------------------------------------------------------------------------------------------


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


# ---------------------------------------------------------------------------------------------------
# Per-action signatures
# ---------------------------------------------------------------------------------------------------


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
    """False where NOTES recorded the request complements only in part (UM-Send, Register)."""
    response: tuple[Slot, ...] | None
    """None where NOTES did not record the response complements."""
    errors: tuple[str, ...]
    """The ``Err`` codes as the per-action schema writes them (FaultyPA, MLocOOR...)."""
    errors_complete: bool
    """False where NOTES recorded the ``Err`` list only in part (or not at all)."""

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


@lru_cache(maxsize=8192)
def signature_problems(statement: Statement) -> tuple[str, ...]:
    """Complements whose preposition the action's V2.2 request signature never uses.

    Nothing is reported for actions without a signature (License, Inform) or whose request
    complements NOTES recorded only in part (UM-Send, Register).

    Only prepositions are compared: operand names are free in statements (an ID, a type, a name),
    and the V2.2 schemas mark no complement required (NOTES 7.5 item 7).

    >>> signature_problems(parse_statement("MM-Send Nil Message To proc-1"))
    ()
    >>> signature_problems(parse_statement("MM-Send Nil Message From proc-1"))
    ('MM-Send takes no From complement in V2.2 (its request complements: Nil Message; To ProcessID; With Rights; With SPM)',)
    """
    sig = SIGNATURES.get(statement.action)
    if sig is None or not sig.request_complete:
        return ()
    listed = "; ".join(map(str, sig.request))
    seen: list[str] = []
    for c in statement.complements:
        if c.preposition not in sig.prepositions and c.preposition not in seen:
            seen.append(c.preposition)
    return tuple(
        f"{statement.action} takes no {p} complement in V2.2 (its request complements: {listed})" for p in seen
    )


# ---------------------------------------------------------------------------------------------------
# Statements
# ---------------------------------------------------------------------------------------------------


class StatementError(PgmExploreError, ValueError):
    """A statement the grammar does not accept: where (1-based ``column``), why, and what would fit.

    >>> try:
    ...     parse_statement("MM-Add Nil item-1, Onto ML-1")
    ... except StatementError as e:
    ...     print(e.column, e.message, e.expected)
    ...     print(e.pointer())
    20 unknown preposition 'Onto' ('Nil', 'At', 'From', 'To', 'With', 'If')
    MM-Add Nil item-1, Onto ML-1
                       ^
    """

    def __init__(self, message: str, column: int, expected: tuple[str, ...] = (), text: str = "") -> None:
        super().__init__(f"{message} (column {column})")
        self.message = message
        self.column = column
        self.expected = expected
        self.text = text

    def pointer(self) -> str:
        """The statement with a caret under the column (for notebooks and command-line output)."""
        return f"{self.text}\n{' ' * (self.column - 1)}^"


_SPECIAL = ',()="'
_KEYWORD_FOLDS = frozenset(k.casefold() for k in (*PREPOSITIONS, "If"))


def _render(phrase: str) -> str:
    """A term, value or event as the canonical form writes it: quoted only when it has to be."""
    words = phrase.split(" ")
    plain = (
        phrase != ""
        and all(words)
        and not any(ch in _SPECIAL or (ch.isspace() and ch != " ") for ch in phrase)
        # The parser rejects a keyword in another case inside an operand, so "if" must be quoted too.
        and not any(w in KEYWORDS or w.casefold() in _KEYWORD_FOLDS for w in words)
    )
    return phrase if plain else f'"{phrase}"'


@dataclass(frozen=True)
class Complement:
    """A preposition and its operand: ``With PerceptibilityState=1``, ``With Rights (Status=Model)``.

    >>> c = Complement("At", "MLocationID", "ML-1")
    >>> str(c), c.ref
    ('At MLocationID=ML-1', 'ML-1')
    """

    preposition: Preposition
    term: str
    value: str | None = None
    """What follows ``=``, if anything."""
    status: Literal["Model", "Final"] | None = None
    """From ``(Status=Model)`` or ``(Status-Model)``."""

    def __post_init__(self) -> None:
        if self.preposition not in LENIENT_PREPOSITIONS:
            raise ValueError(f"not a preposition: {self.preposition!r}")
        for name, text in (("term", self.term), ("value", self.value)):
            if text is not None and (text == "" or '"' in text):
                raise ValueError(f"a complement's {name} must be non-empty and contain no double quote: {text!r}")
        if self.status not in (None, "Model", "Final"):
            raise ValueError(f"status must be Model, Final or None: {self.status!r}")

    @property
    def ref(self) -> str:
        """What the operand names: its value when it has one (``MLocationID=ML-1``), else its term."""
        return self.value if self.value is not None else self.term

    def __str__(self) -> str:
        text = f"{self.preposition} {_render(self.term)}"
        if self.value is not None:
            text += f"={_render(self.value)}"
        if self.status is not None:
            text += f" (Status={self.status})"
        return text


@dataclass(frozen=True, kw_only=True)
class Statement:
    """A parsed Process Action statement (or, with a deontic verb, a Right).

    Equality ignores ``source``, so ``parse_statement(str(s)) == s``.

    >>> s = parse_statement("May MM-Send Nil Message, To proc-user-lucia If the User asks")
    >>> s.deontic, s.action, s.condition, s.nil
    ('May', 'MM-Send', 'the User asks', Complement(preposition='Nil', term='Message', value=None, status=None))
    >>> str(s)
    'May MM-Send Nil Message To proc-user-lucia If the User asks'
    """

    deontic: Deontic | None = None
    action: str
    complements: tuple[Complement, ...] = ()
    condition: str | None = None
    """The event after a final ``If``."""
    source: str | None = field(default=None, compare=False, repr=False)
    """The text the statement was parsed from (None when built in code)."""

    def __post_init__(self) -> None:
        if self.deontic not in (None, *DEONTIC_VERBS):
            raise ValueError(f"not a deontic verb: {self.deontic!r}")
        if self.action not in ACTION_INFO:
            raise ValueError(f"not a canonical V2.2 action: {self.action!r}")
        if not all(isinstance(c, Complement) for c in self.complements):
            raise ValueError("complements must be Complement objects")
        # The parser's Nil rule, so that every Statement round-trips through its canonical text.
        nils = [i for i, c in enumerate(self.complements) if c.preposition == "Nil"]
        sig = SIGNATURES.get(self.action)
        if nils != list(range(len(nils))) or len(nils) > (sig.max_nil if sig else 1):
            raise ValueError(f"Nil complements must come first, at most {sig.max_nil if sig else 1} of them")
        if self.condition is not None and (self.condition == "" or '"' in self.condition):
            raise ValueError(f"a condition must be non-empty and contain no double quote: {self.condition!r}")

    @property
    def nil(self) -> Complement | None:
        """The direct object (the first Nil complement), if any."""
        return next((c for c in self.complements if c.preposition == "Nil"), None)

    @property
    def signature(self) -> Signature | None:
        return SIGNATURES.get(self.action)

    def find(self, preposition: str | None = None, term: str | None = None) -> tuple[Complement, ...]:
        """The complements with this preposition and/or term.

        >>> parse_statement("Transact With Transaction=180 AGR With SPM").find(term="Transaction")[0].value
        '180 AGR'
        """
        return tuple(
            c
            for c in self.complements
            if (preposition is None or c.preposition == preposition) and (term is None or c.term == term)
        )

    def __str__(self) -> str:
        parts = [self.deontic] if self.deontic else []
        parts.append(self.action)
        parts.extend(map(str, self.complements))
        if self.condition is not None:
            parts.append(f"If {_render(self.condition)}")
        return " ".join(parts)


# --- tokenizer ----------------------------------------------------------------------------------------

_Kind = Literal["word", "quoted", "comma", "lparen", "rparen", "eq"]
_PUNCTUATION: dict[str, _Kind] = {",": "comma", "(": "lparen", ")": "rparen", "=": "eq"}


@dataclass(frozen=True)
class _Token:
    kind: _Kind
    text: str
    column: int


def _tokenize(text: str) -> list[_Token]:
    tokens: list[_Token] = []
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        if ch.isspace():
            i += 1
        elif ch in _PUNCTUATION:
            tokens.append(_Token(_PUNCTUATION[ch], ch, i + 1))
            i += 1
        elif ch == '"':
            end = text.find('"', i + 1)
            if end < 0:
                raise StatementError("unterminated quotation mark", i + 1, ('"',), text)
            tokens.append(_Token("quoted", text[i + 1 : end], i + 1))
            i = end + 1
        else:
            j = i
            while j < n and not text[j].isspace() and text[j] not in _SPECIAL:
                j += 1
            tokens.append(_Token("word", text[i:j], i + 1))
            i = j
    return tokens


# --- parser -------------------------------------------------------------------------------------------

_NEXT = (*PREPOSITIONS, "If")
_FOLDED_KEYWORDS = {k.casefold(): k for k in _NEXT}  # "of", "by", "into" stay ordinary words: "Point of View"


class _Parser:
    def __init__(self, text: str, lenient: bool) -> None:
        self.text = text
        self.lenient = lenient
        self.tokens = _tokenize(text)
        self.pos = 0

    # helpers

    def peek(self, offset: int = 0) -> _Token | None:
        i = self.pos + offset
        return self.tokens[i] if i < len(self.tokens) else None

    def advance(self) -> _Token:
        tok = self.tokens[self.pos]
        self.pos += 1
        return tok

    def column(self) -> int:
        """Column of the next token, or just past the end of the text."""
        tok = self.peek()
        return tok.column if tok else len(self.text.rstrip()) + 1

    def error(self, message: str, column: int | None = None, expected: tuple[str, ...] = ()) -> StatementError:
        return StatementError(message, self.column() if column is None else column, expected, self.text)

    def is_word(self, tok: _Token | None, *texts: str) -> bool:
        return tok is not None and tok.kind == "word" and (not texts or tok.text in texts)

    def describe(self, tok: _Token | None) -> str:
        if tok is None:
            return "the end of the statement"
        return "a quoted phrase" if tok.kind == "quoted" else repr(tok.text)

    # grammar

    def statement(self) -> Statement:
        if not self.tokens:
            raise self.error("empty statement: expected an action", 1, ACTIONS)
        deontic = self.deontic()
        action = self.action()
        complements: list[Complement] = []
        condition: str | None = None
        while (tok := self.peek()) is not None:
            if tok.kind == "comma":
                self.advance()
                if (tok := self.peek()) is None:
                    raise self.error("a comma must be followed by a complement or a condition", expected=_NEXT)
            if self.is_word(tok, "If"):
                condition = self.condition()
                break
            complements.append(self.complement(action, complements))
        if (rest := self.peek()) is not None:
            raise self.error(
                f"text after the condition: 'If {condition}' must end the statement, found {self.describe(rest)}"
            )
        return Statement(
            deontic=deontic, action=action, complements=tuple(complements), condition=condition, source=self.text
        )

    def deontic(self) -> Deontic | None:
        tok = self.peek()
        if self.is_word(tok, "Must"):
            self.advance()
            return "Must"
        if self.is_word(tok, "May"):
            self.advance()
            nxt = self.peek()
            if self.is_word(nxt, "Not"):
                self.advance()
                return "May Not"
            if nxt is not None and nxt.kind == "word" and nxt.text.casefold() == "not":
                raise self.error(f"write the deontic verb as 'May Not', not 'May {nxt.text}'", nxt.column, ("Not",))
            return "May"
        return None

    def action(self) -> str:
        tok = self.peek()
        if not self.is_word(tok):
            raise self.error(f"expected an action, found {self.describe(tok)}", expected=ACTIONS)
        assert tok is not None
        nxt = self.peek(1)
        # Two-word actions first: Property Change, Rights Manage.
        if (
            nxt is not None
            and nxt.kind == "word"
            and (found := resolve_action(f"{tok.text} {nxt.text}", lenient=self.lenient)) is not None
        ):
            self.pos += 2
            return found
        if (found := resolve_action(tok.text, lenient=self.lenient)) is not None:
            self.advance()
            return found
        if tok.text in KEYWORDS:
            raise self.error(f"expected an action before {tok.text!r}", expected=ACTIONS)
        bases = [tok.text, *(_inflections(tok.text) if self.lenient else ())]
        for base in bases:
            if base in NON_V22_ACTIONS:
                hint = _NON_V22_HINTS.get(base, "")
                raise self.error(f"{base} is an {NON_V22_ACTIONS[base]} action, not V2.2{hint}", expected=ACTIONS)
        if not self.lenient and (base := resolve_action(tok.text, lenient=True)) is not None:
            raise self.error(
                f"unknown action {tok.text!r}: write the V2.2 name {base!r} (or parse with lenient=True)",
                expected=(base,),
            )
        suggestions = self.suggest(tok.text)
        hint = f"; did you mean {' or '.join(map(repr, suggestions))}?" if suggestions else ""
        raise self.error(f"unknown action {tok.text!r}{hint}", expected=tuple(suggestions) or ACTIONS)

    @staticmethod
    def suggest(word: str) -> list[str]:
        return list(_suggestions(word))

    @staticmethod
    def _suggest(word: str) -> list[str]:
        names = [*ACTIONS, *SYNONYMS]
        folded = [n for n in names if n.casefold() == word.casefold()]
        if folded:
            return [_LOOKUP[folded[0]]]
        starts = [n for n in ACTIONS if n.startswith(word + " ")]  # "Property" → "Property Change"
        close = difflib.get_close_matches(word, names, n=3, cutoff=0.6)
        return list(dict.fromkeys([*starts, *(_LOOKUP[c] for c in close)]))

    def complement(self, action: str, before: list[Complement]) -> Complement:
        tok = self.peek()
        allowed = LENIENT_PREPOSITIONS if self.lenient else PREPOSITIONS
        if not self.is_word(tok):
            if tok is not None and tok.kind == "rparen":
                raise self.error("unbalanced parenthesis: ')' without a matching '('")
            if tok is not None and tok.kind == "lparen":
                raise self.error("a (Status=...) must follow an operand", expected=_NEXT)
            raise self.error(f"expected a preposition, found {self.describe(tok)}", expected=_NEXT)
        assert tok is not None
        if tok.text not in allowed and tok.text not in KEYWORDS and self.lenient and not before:
            # Prose writes the direct object without Nil: "Identifies Data With Qualifier".
            preposition: Preposition = "Nil"
        elif tok.text not in allowed:
            origin = OLDER_PREPOSITIONS.get(tok.text)
            hint = f": {tok.text} is an {origin} preposition, not V2.2" if origin else ""
            if tok.text == "Of":
                hint += " (parse with lenient=True to accept it)"
            raise self.error(f"unknown preposition {tok.text!r}{hint}", expected=_NEXT)
        else:
            preposition = cast(Preposition, self.advance().text)
        if preposition == "Nil":
            self.check_nil(action, before, tok.column)
        term = self.phrase("operand", f"empty operand: {preposition!r} needs a term", strict_case=True)
        value = None
        if (eq := self.peek()) is not None and eq.kind == "eq":
            self.advance()
            value = self.phrase("value", "empty value after '='", strict_case=True)
        status = self.status()
        tok = self.peek()
        if tok is not None and not (tok.kind == "comma" or self.is_word(tok)):
            if tok.kind == "rparen":
                raise self.error("unbalanced parenthesis: ')' without a matching '('")
            if tok.kind == "lparen":
                raise self.error("a complement takes at most one (Status=...)")
            if tok.kind == "eq":
                raise self.error("unexpected '=': a complement has at most one value")
            raise self.error("a quoted phrase must stand alone: put the whole term or value in the quotes")
        return Complement(preposition, term, value, status)

    def check_nil(self, action: str, before: list[Complement], column: int) -> None:
        if any(c.preposition != "Nil" for c in before):
            raise self.error("the Nil complement (the direct object) must come first", column, ())
        sig = SIGNATURES.get(action)
        most = sig.max_nil if sig else 1
        if len(before) >= most:
            count = "one Nil complement" if most == 1 else f"{most} Nil complements ({action})"
            raise self.error(f"a statement has at most {count}", column, ())

    def phrase(self, what: str, empty_message: str, *, strict_case: bool = False) -> str:
        tok = self.peek()
        if tok is not None and tok.kind == "quoted":
            if tok.text == "":
                raise self.error(empty_message)
            self.advance()
            nxt = self.peek()
            if nxt is not None and nxt.kind == "word" and nxt.text not in KEYWORDS:
                raise self.error("a quoted phrase must stand alone: put the whole term or value in the quotes")
            return tok.text
        words = []
        while self.is_word(tok) and tok is not None and tok.text not in KEYWORDS:
            if strict_case and tok.text.casefold() in _FOLDED_KEYWORDS:
                # "Nil item-1 with Rights" would otherwise read as the term "item-1 with Rights".
                proper = _FOLDED_KEYWORDS[tok.text.casefold()]
                raise self.error(
                    f"{tok.text!r} inside an operand: write the keyword as {proper!r}, or quote the operand if the word belongs to it",
                    expected=(proper,),
                )
            words.append(self.advance().text)
            tok = self.peek()
        if not words:
            raise self.error(empty_message, expected=(what,))
        return " ".join(words)

    def status(self) -> Literal["Model", "Final"] | None:
        lparen = self.peek()
        if lparen is None or lparen.kind != "lparen":
            return None
        self.advance()
        expected = ("Status=Model", "Status=Final")
        tok = self.peek()
        if self.is_word(tok, "Status"):
            self.advance()
            eq = self.peek()
            if eq is None or eq.kind != "eq":
                raise self.error("bad status: expected '=' or '-' after 'Status'", expected=expected)
            self.advance()
            val = self.peek()
            if not self.is_word(val):
                raise self.error("bad status: expected Model or Final", expected=("Model", "Final"))
            assert val is not None
            value, column = val.text, val.column
        elif self.is_word(tok) and tok is not None and tok.text.startswith("Status-"):
            value, column = tok.text[len("Status-") :], tok.column + len("Status-")
        elif tok is None:
            raise self.error(
                f"unbalanced parenthesis: the '(' at column {lparen.column} is not closed", lparen.column, (")",)
            )
        else:
            raise self.error(
                f"bad status {self.describe(tok)}: expected Status=Model or Status=Final", expected=expected
            )
        if value not in ("Model", "Final"):
            raise self.error(f"bad status {value!r}: expected Model or Final", column, ("Model", "Final"))
        self.advance()
        close = self.peek()
        if close is None or close.kind != "rparen":
            raise self.error(
                f"unbalanced parenthesis: the '(' at column {lparen.column} is not closed", lparen.column, (")",)
            )
        self.advance()
        return cast(Literal["Model", "Final"], value)

    def condition(self) -> str:
        self.advance()  # "If"
        return self.phrase("event", "empty condition: 'If' needs an event")


def parse_statement(text: str, *, lenient: bool = False) -> Statement:
    """Parse a Process Action statement (or a Right: a deontic verb and a statement).

    Raises :class:`StatementError` (a ``ValueError``) with the 1-based column, plain words and hints.

    >>> parse_statement("Identifies Data With Qualifier With Rights (Status-Model)", lenient=True).action
    'Identify'
    >>> parse_statement("MM-Add Nil Avatar With Rights (Status=Draft)")
    Traceback (most recent call last):
    ...
    pgm_explore.spec.process_actions.StatementError: bad status 'Draft': expected Model or Final (column 39)
    """
    if not isinstance(text, str):
        raise TypeError(f"a statement is a str, not {type(text).__name__}")
    return _parse_cached(text, lenient)


@lru_cache(maxsize=1024)
def _suggestions(word: str) -> tuple[str, ...]:
    # Remembered: difflib takes a quarter of a millisecond, and a plan that misspells an
    # action tends to misspell it in every statement (and every statement is parsed by the
    # message check and by the pre-check of its Request and of its Response).
    return tuple(_Parser._suggest(word))


@lru_cache(maxsize=8192)
def _parse_cached(text: str, lenient: bool) -> Statement:
    # Plans repeat their statements across a transcript (the Request, its message-level
    # check, the pre-check of the Request and of its Response): a Statement is immutable,
    # so parsing each text once is enough. Errors are not cached; they are rare.
    return _Parser(text, lenient).statement()


# ---------------------------------------------------------------------------------------------------
# Rights and Rules
# ---------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Rule:
    """A Rule: "a Process (identified by an ID or by Metadata) followed by a Right" (MMM-TEC about page).

    Also reads a bare Right (no Process): then ``process`` is None.

    >>> r = parse_rule("Any Process May Not MM-Add Nil Item At ML-Plaza-Fountain")
    >>> r.process, r.right.deontic, str(r.right)
    ('Any Process', 'May Not', 'May Not MM-Add Nil Item At ML-Plaza-Fountain')
    """

    process: str | None
    right: Statement


def parse_rule(text: str, *, lenient: bool = False) -> Rule:
    """Split a Rule at its deontic verb (the first word ``May`` or ``Must``) and parse the Right."""
    if not isinstance(text, str):
        raise TypeError(f"a rule is a str, not {type(text).__name__}")
    tokens = _tokenize(text)
    start = next((t.column for t in tokens if t.kind == "word" and t.text in ("May", "Must")), None)
    if start is None:
        raise StatementError("a Right starts with a deontic verb: May, May Not or Must", 1, DEONTIC_VERBS, text)
    try:
        right = parse_statement(text[start - 1 :], lenient=lenient)
    except StatementError as e:
        raise StatementError(e.message, e.column + start - 1, e.expected, text) from None
    return Rule(process=text[: start - 1].strip() or None, right=right)


def _operand_matches(want: Complement, have: Complement) -> bool:
    if want.preposition != have.preposition:
        return False
    if want.value is None:
        return want.term in (have.term, have.value)  # "At ML-1" matches "At MLocationID=ML-1"
    if have.value is None:
        return have.term == want.value
    return (want.term, want.value) == (have.term, have.value)


def covers(pattern: Statement, statement: Statement) -> bool:
    """Whether a Right's (or Rule's) Process Action pattern applies to a concrete statement.

    Same action, and every pattern complement that names something specific (an ID, or
    ``Type=value``) is matched by a complement of the statement with the same preposition. A pattern
    complement that is a bare type name (:data:`OPERAND_TYPES`: ``Nil Item``, ``With Rights``) stands for
    anything and constrains nothing. Deontic verbs, statuses and conditions are not compared.

    >>> rule = parse_statement("May Not MM-Add Nil Item At ML-Plaza-Fountain")
    >>> covers(rule, parse_statement("MM-Add Nil item-1 At ML-Plaza-Fountain With Rights (Status=Model)"))
    True
    >>> covers(rule, parse_statement("MM-Add Nil item-1 At MLocationID=ML-Stall-07"))
    False
    """
    if pattern.action != statement.action:
        return False
    for want in pattern.complements:
        if want.value is None and want.term in OPERAND_TYPES:
            continue
        if not any(_operand_matches(want, have) for have in statement.complements):
            return False
    return True
