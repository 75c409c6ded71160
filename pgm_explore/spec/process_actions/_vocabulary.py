"""The MMM-TEC V2.2 Process Action vocabulary: prepositions, deontic verbs and the 31 actions.

Sources: the V2.2 lists ``Actions.json``, ``AnyAction.json``, ``ProcessActions.json`` and the
per-action schemas (NOTES 4.2-4.4); the older names come from MMM-ARC V1.x and MMM-TEC V2.0/V2.1,
so that a statement written in them is told where its words come from.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Literal

__all__ = [
    "ACTIONS",
    "ACTION_INFO",
    "ActionInfo",
    "DEONTIC_VERBS",
    "Deontic",
    "KEYWORDS",
    "LENIENT_PREPOSITIONS",
    "NON_V22_ACTIONS",
    "OLDER_PREPOSITIONS",
    "PREPOSITIONS",
    "Preposition",
    "SYNONYMS",
    "resolve_action",
]

Preposition = Literal["Nil", "At", "From", "To", "With", "Of"]
Deontic = Literal["May", "May Not", "Must"]

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
