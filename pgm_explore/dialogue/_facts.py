"""What the transcript rules read of one message, read once.

:func:`facts_of` takes a message and its validation report and returns :class:`Facts`: the
values that the rules of :mod:`pgm_explore.dialogue._rules` look at, each already checked
for its type (a value of the wrong type is the schema's business: a rule sees nothing
there) and worked out (a QueryTime in seconds, the ``(Step, Statement)`` pairs, the Entity
ids a PC Prompt mentions). Facts depend on the message alone, so they are made where the
message is read -- in this process, or on a worker for a partition of a big file
(:func:`iter_facts`; :func:`packed_facts_batch` packs a partition's for the trip back) --
while the rules, which depend on every message before, run in order in one place. They
are small msgspec Structs: cheap to keep, to send and to read.
"""

from __future__ import annotations

import types
from collections.abc import Callable, Iterator, Sequence
from functools import partial
from pickle import PickleBuffer
from typing import Annotated, Any, Literal, NamedTuple, SupportsIndex, Union, cast, get_args, get_origin

import msgspec

from pgm_explore._engine import Engine
from pgm_explore._signals import interrupts_deferred
from pgm_explore.io import Batch, Item, Pushed, iter_batched, report_fields
from pgm_explore.spec import PAYLOAD_FOR_KIND, simple_time_seconds
from pgm_explore.spec._simple_time import _DIVISOR, segment_seconds
from pgm_explore.validation import Finding, Report, Way, clean_fields

__all__ = [
    "Facts",
    "PackedFacts",
    "entities",
    "facts_of",
    "struct_facts",
    "CHUNK",
    "FILLED",
    "fact_chunks",
    "ids_of",
    "joined_ids",
    "session_of",
    "time_pair",
    "wire_time",
    "facts_batch",
    "item_facts",
    "iter_facts",
    "packed_context",
    "packed_facts_batch",
    "simple_time_seconds",
    "unpacked_facts",
]

_ID_SUFFIXES = ("ID", "IDs")

_ID_NAMES: dict[Any, bool] = {}
"""Whether a name ends in ID or IDs, for the names met so far: looking a name up (its hash is
kept in the string) costs about a third of ``endswith``, and a log uses few names, over and over."""
_ID_NAMES_KEPT = 4096  # (at most, each of at most 64 characters: a log of made-up names keeps no more)


def _id_name(key: Any) -> bool:
    """Whether ``key`` ends in ID or IDs (and remember it in :data:`_ID_NAMES`)."""
    named: bool = key.endswith(_ID_SUFFIXES)
    if len(_ID_NAMES) < _ID_NAMES_KEPT and len(key) <= 64:
        _ID_NAMES[key] = named
    return named


def entities(value: Any, into: set[str], key: str = "") -> None:
    """Add to ``into`` the Entity ids in ``value``: every string under a key ending in ID or IDs.

    >>> found = set()
    >>> entities({"EntityID": "e1", "Objects": [{"ObjectIDs": ["o1", ["o2"]], "Name": "n"}], "IDs": 3}, found)
    >>> sorted(found)
    ['e1', 'o1', 'o2']
    """
    # Strings are handled where they are met, not in a call of their own: most of what a
    # PC Prompt holds is strings, and this runs over every PC Prompt of a transcript.
    if isinstance(value, dict):
        known = _ID_NAMES
        for k, v in value.items():
            if isinstance(v, str):
                named = known.get(k)
                if named is None:
                    named = _id_name(k)
                if named:
                    into.add(v)
            elif isinstance(v, (dict, list)):
                entities(v, into, k)
    elif isinstance(value, list):
        named = _ID_NAMES.get(key)
        if named is None:
            named = _id_name(key)
        for v in value:
            if isinstance(v, str):
                if named:
                    into.add(v)
            elif isinstance(v, (dict, list)):
                entities(v, into, key)
    elif isinstance(value, str) and key.endswith(_ID_SUFFIXES):
        into.add(value)


TypeName = Literal["PC Prompt", "BKN-PRC", "BKN-DAC", "BKN-PAL"]
"""The data types, as a validation report names them."""

FILLED: dict[str, int] = {
    name: 1 << bit
    for bit, name in enumerate(
        dict.fromkeys(
            [
                "Feasibility",
                "CommitmentStatus",
                # (a BKN-DAC Response's members first: its masks stay below 256, Python's own small integers)
                *sorted(f"{holder}.{key}" for holder, keys in PAYLOAD_FOR_KIND.values() for key in keys),
            ]
        )
    )
}
"""The members of a Response's payload that the transcript rules ask about (those a Kind of the
spec asks for, and Feasibility and CommitmentStatus), named as "Representation.Intent", each a bit
of :attr:`Facts.filled`. The checking process decodes a number, where a tuple of names cost it
the tuple and a string for each (about 300 instructions a message of the open mix), and asks
with a mask rather than a set."""


def joined_ids(instance: Any, environment: Any, session: Any) -> str | tuple[Any, Any, Any]:
    r"""MInstance, UEnvironment and SessionID as :attr:`Facts.ids` has them: one string, the three
    joined by NUL, when all three are strings without one (as good as every message: the
    checking process decodes one string, where a tuple and its three strings cost it about 1,100
    instructions a message, and compares one); else the tuple of them.

    >>> joined_ids("mi", "ue", "s-1"), joined_ids("mi", None, "s-1"), joined_ids("m\0i", "ue", "s")
    ('mi\x00ue\x00s-1', ('mi', None, 's-1'), ('m\x00i', 'ue', 's'))
    """
    if (
        type(instance) is str
        and type(environment) is str
        and type(session) is str
        and not ("\0" in instance or "\0" in environment or "\0" in session)
    ):
        return f"{instance}\0{environment}\0{session}"
    return instance, environment, session


def ids_of(ids: str | tuple[Any, Any, Any]) -> tuple[Any, Any, Any]:
    r"""The (MInstance, UEnvironment, SessionID) of :attr:`Facts.ids` (see :func:`joined_ids`).

    >>> ids_of("mi\0ue\0s-1"), ids_of((1, None, "s"))
    (('mi', 'ue', 's-1'), (1, None, 's'))
    """
    if isinstance(ids, str):
        instance, environment, session = ids.split("\0")
        return instance, environment, session
    return ids


def session_of(ids: str | tuple[Any, Any, Any]) -> Any:
    r"""The SessionID of :attr:`Facts.ids`, as the message gives it (see :func:`joined_ids`).

    >>> session_of("mi\0ue\0s-1"), session_of((1, None, 7))
    ('s-1', 7)
    """
    return ids[ids.rindex("\0") + 1 :] if type(ids) is str else ids[2]


def wire_time(time: tuple[bool, float] | None) -> float | tuple[bool, float] | None:
    """A time as :attr:`Facts.time` has it (``time`` as :func:`simple_time_seconds` gives it): an
    absolute time, as good as every message's, as its seconds alone (the checking process decodes
    a float, where a tuple and a float cost it about 440 instructions a message more), a relative
    one as the pair.

    >>> wire_time((True, 1.5)), wire_time((False, 1.5)), wire_time(None)
    (1.5, (False, 1.5), None)
    """
    if time is not None and time[0] is True and type(time[1]) is float:
        return time[1]
    return time


def time_pair(time: float | tuple[bool, float] | None) -> tuple[bool, float] | None:
    """:attr:`Facts.time` as :func:`simple_time_seconds` gives it: (whether absolute, seconds).

    >>> time_pair(1.5), time_pair((False, 1.5)), time_pair(None)
    ((True, 1.5), (False, 1.5), None)
    """
    return (True, time) if type(time) is float else time  # type: ignore[return-value]


class Facts(msgspec.Struct, frozen=True, array_like=True, gc=False, omit_defaults=True):
    """What the transcript rules read of one message (see the module). Fields a message of
    its type and mode has no use for keep their defaults.

    A msgspec Struct: made, read and sent between processes (as MessagePack) several times
    faster than a NamedTuple or a dataclass. Not tracked by the garbage collector: nothing
    in it can refer back to it. What the client decodes of each message is kept to few
    objects: the type and mode are the Literal's own strings (no copy made, and compared by
    identity), the names of the payload's members a tuple (no hash table). Every field is
    written, defaults too: msgspec 0.23 leaves no field of an ``array_like`` Struct out
    (``omit_defaults`` asks it to, should a later version do so).
    """

    type: TypeName | None
    mode: Literal["RQ", "RS"] | None
    findings: tuple[Finding, ...]
    """The validation report's findings."""
    dialog: str | None
    ids: str | tuple[Any, Any, Any] = (None, None, None)
    """MInstance, UEnvironment and SessionID, as the message gives them: joined in one string
    (:func:`joined_ids`) when all three are strings; :func:`ids_of` and :func:`session_of` read it."""
    time: float | tuple[bool, float] | None = None
    """QueryTime (a PC Prompt's PCPromptTime) as :func:`simple_time_seconds` reads it, an
    absolute time as its seconds alone (:func:`wire_time`; :func:`time_pair` gives the pair)."""
    query_id: str | None = None
    turn: Any = None
    """TurnIndex, as the message gives it."""
    # --- PC Prompts, and what a BKN-PRC Response's Representation adds to their context
    prompt_id: str | None = None
    action_context: bytes | dict[str, Any] | None = None
    """The ActionContext (a PC Prompt's, or the one a BKN-PRC Response's Representation returns) as
    MessagePack (:func:`packed_context`): the checker keeps one copy of each distinct ActionContext,
    by these bytes, and decodes only a new one (an A-User sends the same one again and again; its
    dict cost the checking process a few dozen objects to decode and its encoding to look it up);
    the dict itself when it holds an integer MessagePack cannot write."""
    entities: frozenset[str] | None = None
    """Entity ids a PC Prompt mentions (ResolvedReferents, SceneContext, ActionContext), or
    those a BKN-PRC Response's Representation adds; None when it has no Representation."""
    # --- Requests
    kind: Any = None
    steps: tuple[tuple[int, str], ...] = ()
    """(Step, Statement) of each ProcessActions item that has both."""
    commitments: tuple[tuple[int, str, Any], ...] = ()
    """(index, CommitmentID, Statement) of each Commitments item with a CommitmentID."""
    released: tuple[tuple[int, str], ...] = ()
    """(index, id) of each ReleasedCommitmentIDs string."""
    constraints: tuple[Any, Any] | None = None
    """The Constraints' Role and Locale (all that a rule reads of them); None when there is no
    Constraints object."""
    entity_ids: tuple[str, ...] = ()
    # --- Responses
    request_id: str | None = None
    outcome: Any = None
    filled: int = 0
    """The members of the payload with content that the rules ask about, as the sum of their bits
    (:data:`FILLED`): "Feasibility", "CommitmentStatus", "Representation.Intent", "Answer.Text", ..."""
    feasibility: tuple[tuple[int, Any], ...] | None = None
    """(Step, PAStatus) of each Feasibility.Steps item with a Step; None when Feasibility is not an object."""
    statuses: tuple[tuple[int, str, Any], ...] = ()
    """(index, CommitmentID, Status) of each CommitmentStatus item with a CommitmentID."""
    stance: tuple[Any, Any] | None = None
    """The Stance's Role and Locale; None when there is no Stance object."""

    @property
    def session(self) -> str | None:
        session = session_of(self.ids)
        return session if type(session) is str else None


def _objects(value: Any) -> list[tuple[int, dict[str, Any]]]:
    return [(i, v) for i, v in enumerate(value) if isinstance(v, dict)] if isinstance(value, list) else []


# An int longer than Python writes (only a dict built in Python can hold one: the readers
# refuse them) passes the schema, yet no rule could quote it; such a turn or step is taken as
# not given, so its message gets the schema's verdict and no rule crashes on it.
_LONG_BITS = 14_000  # (below the bits of sys.get_int_max_str_digits() digits: a cheap first look)


def _unwritable(value: int) -> bool:
    if value.bit_length() < _LONG_BITS:
        return False
    try:
        repr(value)
    except ValueError:
        return True
    return False


def _is_step(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and not _unwritable(value)


def _turn(doc: dict[str, Any]) -> Any:
    turn = doc.get("TurnIndex")
    # (The rules quote the turn after it too: 10**4300 - 1 is written, 10**4300 is not.)
    return None if type(turn) is int and _unwritable(abs(turn) + 1) else turn


_encode_context = msgspec.msgpack.Encoder().encode


def packed_context(action_context: dict[str, Any]) -> bytes | dict[str, Any]:
    """``action_context`` as :attr:`Facts.action_context` has it: as MessagePack, or itself when it
    holds an integer beyond 64 bits (which only a dict built in Python can hold).

    >>> packed_context({"MaxSteps": 4}), packed_context({"MaxSteps": 2**64})
    (b'\\x81\\xa8MaxSteps\\x04', {'MaxSteps': 18446744073709551616})
    """
    try:
        return _encode_context(action_context)
    except (TypeError, ValueError, OverflowError):
        return action_context


def _packed_struct_context(action_context: Any) -> bytes | dict[str, Any]:
    """:func:`packed_context` of an ActionContext decoded as a typed Struct: the same bytes as
    its dict's, its members in the same order, written straight from the Struct."""
    try:
        return _encode_context(action_context)
    except (TypeError, ValueError, OverflowError):
        return cast(dict[str, Any], _to_builtins(action_context))


def facts_of(document: Any, report: Report) -> Facts:
    """The :class:`Facts` of ``document``, whose validation report is ``report``."""
    return _facts_of(document, report.type, report.mode, report.findings)


def _facts_of(document: Any, type_name: Any, mode: Any, findings: tuple[Finding, ...]) -> Facts:
    dialog = document.get("DialogID") if isinstance(document, dict) else None
    if type(dialog) is not str:
        dialog = None
    if type_name is None:
        return Facts(None, None, findings, dialog)
    doc = document  # a message with a type is an object
    ids = joined_ids(doc.get("MInstance"), doc.get("UEnvironment"), doc.get("SessionID"))
    if type_name == "PC Prompt":
        found: set[str] = set()
        for key in ("ResolvedReferents", "SceneContext", "ActionContext"):
            entities(doc.get(key), found)
        prompt_id = doc.get("PCPromptID")
        action_context = doc.get("ActionContext")
        return Facts(
            type_name,
            mode,
            findings,
            dialog,
            ids,
            wire_time(simple_time_seconds(doc.get("PCPromptTime"))),
            prompt_id=prompt_id if type(prompt_id) is str else None,
            action_context=packed_context(action_context) if isinstance(action_context, dict) else None,
            entities=frozenset(found),
        )
    query_id = doc.get("QueryID")
    query_id = query_id if type(query_id) is str else None
    time = wire_time(simple_time_seconds(doc.get("QueryTime")))
    # What every Request and Response has: the first fields of their Facts, in their order.
    head: _Head = (type_name, mode, findings, dialog, ids, time, query_id)
    if mode == "RQ":
        return _request_facts(doc, head)
    if mode == "RS":
        return _response_facts(doc, head)
    return Facts(*head)


_Head = tuple[
    TypeName,
    Literal["RQ", "RS"] | None,
    tuple[Finding, ...],
    str | None,
    str | tuple[Any, Any, Any],
    float | tuple[bool, float] | None,
    str | None,
]
"""The first fields of :class:`Facts`, which every Request and Response has: type, mode, findings,
dialog, ids, time and query_id (a tuple spread into the Struct: made once, no field named twice)."""


def _request_facts(doc: dict[str, Any], head: _Head) -> Facts:
    # (Most Requests carry none of these lists: none is built for what is not there.)
    actions, submitted, released = doc.get("ProcessActions"), doc.get("Commitments"), doc.get("ReleasedCommitmentIDs")
    constraints, entity_ids = doc.get("Constraints"), doc.get("EntityIDs")
    return Facts(
        *head,
        _turn(doc),
        kind=doc.get("Kind"),
        steps=tuple(
            [
                (item["Step"], item["Statement"])
                for _, item in _objects(actions)
                if _is_step(item.get("Step")) and isinstance(item.get("Statement"), str)
            ]
        )
        if actions
        else (),
        commitments=tuple(
            [
                (index, item["CommitmentID"], item.get("Statement"))
                for index, item in _objects(submitted)
                if isinstance(item.get("CommitmentID"), str)
            ]
        )
        if submitted
        else (),
        released=tuple([(index, cid) for index, cid in enumerate(released) if isinstance(cid, str)])
        if isinstance(released, list)
        else (),
        constraints=(constraints.get("Role"), constraints.get("Locale")) if isinstance(constraints, dict) else None,
        entity_ids=tuple([e for e in entity_ids if isinstance(e, str)]) if isinstance(entity_ids, list) else (),
    )


def _response_facts(doc: dict[str, Any], head: _Head) -> Facts:
    request_id = doc.get("RequestID")
    representation, feasibility, stance = doc.get("Representation"), doc.get("Feasibility"), doc.get("Stance")
    answer, statuses = doc.get("Answer"), doc.get("CommitmentStatus")
    filled = (_FEASIBILITY if feasibility else 0) | (_COMMITMENT_STATUS if statuses else 0)
    for holder, bits in ((representation, _REPRESENTATION_BITS), (answer, _ANSWER_BITS)):
        if isinstance(holder, dict):
            for member, value in holder.items():
                if value:
                    filled |= bits.get(member, 0)
    action_context, added = None, None
    if isinstance(representation, dict):
        found: set[str] = set()
        for key in ("ResolvedReferents", "ActionContext"):
            entities(representation.get(key), found)
        added = frozenset(found)
        action_context = representation.get("ActionContext")
        action_context = packed_context(action_context) if isinstance(action_context, dict) else None
    return Facts(
        *head,
        _turn(doc),
        action_context=action_context,
        entities=added,
        request_id=request_id if type(request_id) is str else None,
        outcome=doc.get("Outcome"),
        filled=filled,
        feasibility=tuple(
            [
                (item["Step"], item.get("PAStatus"))
                for _, item in _objects(feasibility.get("Steps"))
                if _is_step(item.get("Step"))
            ]
        )
        if isinstance(feasibility, dict)
        else None,
        statuses=tuple(
            [
                (index, item["CommitmentID"], item.get("Status"))
                for index, item in _objects(statuses)
                if isinstance(item.get("CommitmentID"), str)
            ]
        )
        if statuses
        else (),
        stance=(stance.get("Role"), stance.get("Locale")) if isinstance(stance, dict) else None,
    )


# --- the same facts, read from the typed Structs of a clean message ------------------------------
#
# A clean line (``read_clean``) is decoded into msgspec Structs compiled from the schemas: its
# values are of the schema's types, so the facts are read by attribute, with none of the looks
# the dict reading needs at a value of the wrong type, and with no dict built. A field left out
# is UNSET on the Struct where the dict has no key. tests/test_facts.py holds the two readings
# equal over every message of the repository, the benchmarks' and mutations of them.

_UNSET: Any = msgspec.UNSET
_to_builtins = msgspec.to_builtins
_Walker = Callable[[Any, set[str]], None]


def _is_struct(kind: Any) -> bool:
    return isinstance(kind, type) and issubclass(kind, msgspec.Struct)


def _walker(kind: Any, key: str) -> _Walker | None:
    """How :func:`entities` finds the Entity ids of a value of the msgspec type ``kind`` found
    under the name ``key``, as a function of the Struct (or what a field holds) and the set; None
    when no value of that type can hold one. Worked out once a type: where ids can be is known
    from the type (a string under a name ending in ID or IDs, at any depth), so that a message is
    not walked value by value; what the type leaves open (a dict, Any) is walked as :func:`entities`
    walks it (:func:`_plain`)."""
    origin = get_origin(kind)
    if origin is Annotated:
        return _walker(get_args(kind)[0], key)
    if origin is Union or isinstance(kind, types.UnionType):
        members = [member for member in get_args(kind) if member is not msgspec.UnsetType]
        if len(members) == 1:
            return _walker(members[0], key)
        # (msgspec tells the members of a union apart by the kind of value: so can this.)
        table = {_runtime(member): _walker(member, key) for member in members}
        if all(walker is None for walker in table.values()):
            return None
        return partial(_either, table)
    if _is_struct(kind):
        return _fields_walker(kind, None, key)
    if origin is list:
        inner = _walker(get_args(kind)[0], key)
        if inner is None:
            return None
        if inner is _add:  # (a list of ids: added at once)
            return _add_all
        if isinstance(inner, partial) and inner.func is _struct_ids:  # (objects with ids of their own)
            return partial(_items_ids, *inner.args)
        return partial(_each_item, inner)
    if kind is str or origin is Literal:
        return _add if key.endswith(_ID_SUFFIXES) else None
    if kind in (int, float, bool):
        return None
    if origin is dict:  # (an open object: a PC Prompt's SceneContext)
        return _plain_object
    return partial(_plain, key=key)  # (anything)


def _fields_walker(kind: Any, names: tuple[str, ...] | None, key: str) -> _Walker | None:
    """The walker of a Struct type, over its fields named ``names`` (None: all of them), each
    looked at under its own name, or under ``key`` when ``names`` are given (as :func:`_facts_of`
    asks :func:`entities` about a message's members one by one)."""
    parts = []
    for field in msgspec.structs.fields(kind):
        if names is None or field.encode_name in names:
            walker = _walker(field.type, field.encode_name if names is None else key)
            if walker is not None:
                parts.append((field.name, walker))
    if not parts:
        return None
    if all(walker is _add for _, walker in parts):  # (an object whose ids are strings of its own)
        return partial(_struct_ids, tuple([name for name, _ in parts]))
    return partial(_struct_walked, tuple(parts))


def _runtime(kind: Any) -> type:
    """The Python type of the values of the msgspec type ``kind`` (a member of a union)."""
    origin = get_origin(kind)
    if origin is Annotated:
        return _runtime(get_args(kind)[0])
    if origin is Literal:
        return str  # (the compiler makes Literals of strings only)
    if origin is not None:
        return cast(type, origin)  # list, dict
    if isinstance(kind, type):
        return kind
    raise TypeError(f"no walker for a union holding {kind!r}")  # (Any in a union: the types have none)


def _add(value: str, into: set[str]) -> None:
    into.add(value)


def _add_all(value: list[str], into: set[str]) -> None:
    into.update(value)


def _struct_ids(names: tuple[str, ...], value: Any, into: set[str]) -> None:
    for name in names:
        if (member := getattr(value, name)) is not _UNSET:
            into.add(member)


def _items_ids(names: tuple[str, ...], value: list[Any], into: set[str]) -> None:
    # (_each_item of _struct_ids, with no call an item: a list of ResolvedReferents, of Affordances)
    for item in value:
        for name in names:
            if (member := getattr(item, name)) is not _UNSET:
                into.add(member)


def _each_item(inner: _Walker, value: list[Any], into: set[str]) -> None:
    for item in value:
        inner(item, into)


def _either(table: dict[type, _Walker | None], value: Any, into: set[str]) -> None:
    walker = table[type(value)]
    if walker is not None:
        walker(value, into)


def _struct_walked(parts: tuple[tuple[str, _Walker], ...], value: Any, into: set[str]) -> None:
    for name, walker in parts:
        if (member := getattr(value, name)) is not _UNSET:
            walker(member, into)


# The open values of a Struct (an open object, Any) walked as :func:`entities` walks them, for
# values the JSON decoder made: of JSON's types exactly (never a subclass), so that a type is
# told by ``type(value) is``, and an empty container is passed by. The walk of a PC Prompt's
# SceneContext, some 20 values, was three fifths of its facts (callgrind: 30,000 of 51,000
# instructions; 24,700 this way).


def _plain(value: Any, into: set[str], key: str) -> None:
    kind = type(value)
    if kind is dict:
        _plain_object(value, into)
    elif kind is list:
        _plain_array(value, into, key)
    elif kind is str and key.endswith(_ID_SUFFIXES):
        into.add(value)


def _plain_object(value: dict[str, Any], into: set[str]) -> None:
    known = _ID_NAMES
    for key, member in value.items():
        kind = type(member)
        if kind is str:
            named = known.get(key)
            if named is None:
                named = _id_name(key)
            if named:
                into.add(member)
        elif kind is list and member:
            _plain_array(member, into, key)
        elif kind is dict and member:
            _plain_object(member, into)


def _plain_array(value: list[Any], into: set[str], key: str) -> None:
    named = _ID_NAMES.get(key)
    if named is None:
        named = _id_name(key)
    for item in value:
        kind = type(item)
        if kind is dict:
            _plain_object(item, into)
        elif kind is str:
            if named:
                into.add(item)
        elif kind is list:
            _plain_array(item, into, key)


class _Entities(dict[type, _Walker | None]):
    """The walkers (:func:`_fields_walker`) of the members ``names`` of Struct types, by type
    (worked out at its first Struct): a look-up a message, with no key to build or hash."""

    def __init__(self, names: tuple[str, ...]) -> None:
        super().__init__()
        self.names = names

    def __missing__(self, kind: type) -> _Walker | None:
        walker = self[kind] = _fields_walker(kind, self.names, "")
        return walker


def _struct_entities(value: Any, walkers: _Entities) -> frozenset[str]:
    """The Entity ids in the members ``walkers.names`` of the Struct ``value``: what
    :func:`_facts_of` gathers from the same members of the dict with :func:`entities`."""
    walker = walkers[type(value)]
    if walker is None:
        return _NO_IDS
    found: set[str] = set()
    walker(value, found)
    return frozenset(found) if found else _NO_IDS


_NO_IDS: frozenset[str] = frozenset()


def _has_content(value: Any) -> bool:
    """Whether a member's value counts as given (``filled``): truthy, as its dict reading is; a
    Struct is empty when every field of it is left out (its dict has no key)."""
    if isinstance(value, msgspec.Struct):
        return any(getattr(value, name) is not _UNSET for name in value.__struct_fields__)
    return bool(value)


def _never_empty(kind: Any) -> bool:
    """Whether every value of the msgspec type ``kind`` has content (:func:`_has_content`): a
    string or list the type gives a least length, a number it keeps above 0, a Literal of
    non-empty strings, a Struct with a field that must be given. Then a member of that type that
    is there is filled, and its value need not be looked at."""
    origin = get_origin(kind)
    if origin is Annotated:
        inner, *metas = get_args(kind)
        for meta in metas:
            if isinstance(meta, msgspec.Meta) and (
                (meta.min_length or 0) > 0 or (meta.gt is not None and meta.gt >= 0) or (meta.ge or 0) > 0
            ):
                return True
        return _never_empty(inner)
    if origin is Union or isinstance(kind, types.UnionType):
        return all(_never_empty(member) for member in get_args(kind) if member is not msgspec.UnsetType)
    if origin is Literal:
        return all(get_args(kind))
    if _is_struct(kind):
        return any(field.required for field in msgspec.structs.fields(kind))
    return False


class _Filled(dict[type, tuple[tuple[str, int, Any], ...]]):
    """The members of a Struct type that ``filled`` has a bit for (:data:`FILLED`), by type (worked
    out at its first Struct): for each, its attribute, its bit (of ``prefix`` + its name) and how
    to tell that it has content (:func:`_has_content`) when it is there: True when its type says
    that it always has (:func:`_never_empty`); its type's empty Struct when it is a Struct all of
    whose fields may be left out (it has content unless it equals that one, compared in C, where
    asking whether a value is a Struct at all costs more); else False. ``names``: only those
    members (None: all of them)."""

    def __init__(self, prefix: str, names: tuple[str, ...] | None = None) -> None:
        super().__init__()
        self.prefix, self.names = prefix, names

    def __missing__(self, kind: type) -> tuple[tuple[str, int, Any], ...]:
        fields = {field.encode_name: field for field in msgspec.structs.fields(kind)}
        members = self[kind] = tuple(
            (fields[name].name, FILLED[self.prefix + name], _content_test(fields[name].type))
            for name in (fields if self.names is None else self.names)
            if self.prefix + name in FILLED  # (a member no rule asks about is not looked at)
        )
        return members


def _content_test(kind: Any) -> Any:
    """How :class:`_Filled` tells that a member of the msgspec type ``kind`` has content."""
    if _never_empty(kind):
        return True
    if get_origin(kind) is Union or isinstance(kind, types.UnionType):
        members = [member for member in get_args(kind) if member is not msgspec.UnsetType]
        kind = members[0] if len(members) == 1 else None
    # (A Struct all of whose fields may be left out, else _never_empty said True: its empty one.)
    return kind() if _is_struct(kind) else False


def _filled_members(members: _Filled, value: Any) -> int:
    """The bits (:data:`FILLED`, see ``members``) of each member of the Struct ``value`` with content."""
    filled = 0
    for name, bit, test in members[type(value)]:
        if (member := getattr(value, name)) is not _UNSET and (
            test is True or (member != test if test is not False else _has_content(member))
        ):
            filled |= bit
    return filled


_ANSWER = _Filled("Answer.")
_REPRESENTATION = _Filled("Representation.")
_DAC_RESPONSE = _Filled("", ("Feasibility", "CommitmentStatus"))
_FEASIBILITY, _COMMITMENT_STATUS = FILLED["Feasibility"], FILLED["CommitmentStatus"]
_REPRESENTATION_BITS = {
    name.partition(".")[2]: bit for name, bit in FILLED.items() if name.startswith("Representation.")
}
_ANSWER_BITS = {name.partition(".")[2]: bit for name, bit in FILLED.items() if name.startswith("Answer.")}


def _struct_time(value: Any) -> float | tuple[bool, float] | None:
    """:func:`simple_time_seconds` of a Simple Time Struct, as :attr:`Facts.time` has it (:func:`wire_time`)."""
    try:
        segment = value.SimpleTimeData[0]
    except IndexError:
        return None
    absolute, unit = segment.TimeType, segment.TimeUnit
    if absolute is not _UNSET and unit is not _UNSET:
        # (Both spelt out, as messages mostly have them: of segment_seconds only the division,
        # by the spec's own table. The types made sure of the rest: a bool, one of the units, a
        # StartTime that is an int or a float. Two calls fewer, on every message.)
        seconds: float = segment.StartTime / _DIVISOR[unit]
        return seconds if absolute is True else (absolute, seconds)
    return wire_time(
        segment_seconds(
            segment.StartTime,
            None if absolute is _UNSET else absolute,
            None if unit is _UNSET else unit,
            segment.FlagsByte,
        )
    )


_PROMPT_ENTITIES = _Entities(("ResolvedReferents", "SceneContext", "ActionContext"))
_REPRESENTATION_ENTITIES = _Entities(("ResolvedReferents", "ActionContext"))


def struct_facts(value: Any, type_name: Any, mode: Any, findings: tuple[Finding, ...]) -> Facts:
    """:func:`facts_of` a clean message decoded as the typed Struct ``value`` (see
    ``pgm_explore.validation._typed``) of the data type ``type_name`` in ``mode``, whose
    findings (the consistency rules') are ``findings``: the same Facts as from its dict.

    Each data type and Mode has its reader, which reads the members its schema has (asking a
    Struct for a member its type has not costs an exception): what the dict reading asks of
    every message, ``doc.get`` of a name the message cannot hold, is None there.

    Facts is given its fields by position, written out: a Struct takes its fields by position
    in half the time it matches names, and spreading a tuple of them into the call costs as
    much again as the call (this runs for every message). tests/test_facts.py holds every
    reader's Facts to the dict reading's."""
    # (The schemas make the three strings: only a NUL among them keeps them apart. Looked for with
    # `in`: str.count parses its arguments, some 1,000 instructions a message on a worker.)
    instance, environment, session = value.MInstance, value.UEnvironment, value.SessionID
    ids: str | tuple[Any, Any, Any] = (
        (instance, environment, session)
        if "\0" in instance or "\0" in environment or "\0" in session
        else f"{instance}\0{environment}\0{session}"
    )
    if type_name == "PC Prompt":
        action_context = value.ActionContext
        return Facts(
            type_name,
            mode,
            findings,
            value.DialogID,
            ids,
            _struct_time(value.PCPromptTime),
            None,
            None,
            value.PCPromptID,
            None if action_context is _UNSET else _packed_struct_context(action_context),
            _struct_entities(value, _PROMPT_ENTITIES),
        )
    dialog, time, query = value.DialogID, _struct_time(value.QueryTime), value.QueryID
    if mode == "RQ":
        kind, steps, commitments, released, constraints, entity_ids = _REQUEST_READERS[type_name](value)
        return Facts(
            type_name,
            mode,
            findings,
            dialog,
            ids,
            time,
            query,
            value.TurnIndex,
            None,
            None,
            None,
            kind,
            steps,
            commitments,
            released,
            constraints,
            entity_ids,
        )
    action_context, added, filled, feasibility, statuses, stance = _RESPONSE_READERS[type_name](value)
    return Facts(
        type_name,
        mode,
        findings,
        dialog,
        ids,
        time,
        query,
        value.TurnIndex,
        None,
        action_context,
        added,
        None,
        (),
        (),
        (),
        None,
        (),
        value.RequestID,
        value.Outcome,
        filled,
        feasibility,
        statuses,
        stance,
    )


def _listed(value: Any) -> tuple[Any, ...]:
    return () if value is _UNSET else tuple(value)


# What a Request's reader gives: kind, steps, commitments, released, constraints, entity_ids;
# a Response's: action_context, entities, filled, feasibility, statuses, stance (the fields of
# Facts that its data type has, the others at their defaults).
_RequestFields = tuple[Any, tuple[Any, ...], tuple[Any, ...], tuple[Any, ...], Any, tuple[Any, ...]]
_ResponseFields = tuple[Any, Any, int, Any, tuple[Any, ...], Any]


def _prc_request(value: Any) -> _RequestFields:
    return value.Kind, (), (), (), None, _listed(value.EntityIDs)


# (The lists a message holds are short: a loop costs less than a comprehension, which is a
# function made and called each time, some 1,900 instructions for two items.)


def _dac_request(value: Any) -> _RequestFields:
    actions, submitted, released = value.ProcessActions, value.Commitments, value.ReleasedCommitmentIDs
    steps: tuple[Any, ...] = ()
    if actions is not _UNSET:
        pairs = []
        for item in actions:
            pairs.append((item.Step, item.Statement))
        steps = tuple(pairs)
    commitments: tuple[Any, ...] = ()
    if submitted is not _UNSET:
        triples = []
        for index, item in enumerate(submitted):
            triples.append((index, item.CommitmentID, item.Statement))
        commitments = tuple(triples)
    return (
        value.Kind,
        steps,
        commitments,
        () if released is _UNSET else tuple(enumerate(released)),
        None,
        _listed(value.EntityIDs),
    )


def _pal_request(value: Any) -> _RequestFields:
    constraints = value.Constraints
    asked = None if constraints is _UNSET else (_unset_none(constraints.Role), _unset_none(constraints.Locale))
    return None, (), (), (), asked, ()


def _prc_response(value: Any) -> _ResponseFields:
    representation = value.Representation
    if representation is _UNSET:
        return None, None, 0, None, (), None
    action_context = representation.ActionContext
    return (
        None if action_context is _UNSET else _packed_struct_context(action_context),
        _struct_entities(representation, _REPRESENTATION_ENTITIES),
        _filled_members(_REPRESENTATION, representation),
        None,
        (),
        None,
    )


def _dac_response(value: Any) -> _ResponseFields:
    answer, statuses, feasibility = value.Answer, value.CommitmentStatus, value.Feasibility
    filled = _filled_members(_DAC_RESPONSE, value)
    if answer is not _UNSET:
        filled |= _filled_members(_ANSWER, answer)
    steps = None
    if feasibility is not _UNSET:
        pairs = []
        for item in feasibility.Steps:
            pairs.append((item.Step, item.PAStatus))
        steps = tuple(pairs)
    said: tuple[Any, ...] = ()
    if statuses is not _UNSET:
        triples = []
        for index, item in enumerate(statuses):
            triples.append((index, item.CommitmentID, item.Status))
        said = tuple(triples)
    return None, None, filled, steps, said, None


def _pal_response(value: Any) -> _ResponseFields:
    stance = value.Stance
    return (
        None,
        None,
        0,
        None,
        (),
        None if stance is _UNSET else (_unset_none(stance.Role), _unset_none(stance.Locale)),
    )


def _unset_none(value: Any) -> Any:
    return None if value is _UNSET else value


_REQUEST_READERS: dict[str, Callable[[Any], _RequestFields]] = {
    "BKN-PRC": _prc_request,
    "BKN-DAC": _dac_request,
    "BKN-PAL": _pal_request,
}
_RESPONSE_READERS: dict[str, Callable[[Any], _ResponseFields]] = {
    "BKN-PRC": _prc_response,
    "BKN-DAC": _dac_response,
    "BKN-PAL": _pal_response,
}


def item_facts(item: Item) -> Facts:
    """The facts of a message as read from a source, with its validation
    (:func:`pgm_explore.io.report_fields`): the work done on each message of a transcript."""
    type_name, mode, _, findings = report_fields(item)
    return _facts_of(item.document, type_name, mode, findings)


_encode_facts = msgspec.msgpack.Encoder().encode
with interrupts_deferred():  # (as the typed reader's decoders are built: pgm_explore._signals)
    _decode_facts = msgspec.msgpack.Decoder(list[Facts]).decode
_replace = msgspec.structs.replace


class PackedFacts(NamedTuple):
    """The facts of consecutive messages of a partition, as a worker sends them back: their
    lines (within the partition); their facts without findings, as MessagePack arrays of
    :data:`CHUNK` messages; each distinct tuple of findings once; and (message, tuple) for each
    message that has findings, in order.

    Pickled in protocol 5 (Dask's, between a worker and the client), each chunk is a
    :class:`pickle.PickleBuffer`, which pickle leaves out of its stream for Dask to send as a
    frame of its own, and which comes back as a ``memoryview`` of it: as bytes, the chunks were
    copied into the pickle, and the pickle scanned by Dask for ``__main__``, on the worker's
    event loop (with the client fetching results from the workers itself, the event loop of a
    worker went from 0.8-0.9 to 0.5 µs a message of ``bench_check.py``'s short mix, measured)."""

    numbers: list[int]
    chunks: list[bytes] | list[memoryview]
    table: list[tuple[Finding, ...]]
    marks: list[tuple[int, int]]

    def __reduce_ex__(self, protocol: SupportsIndex) -> tuple[Any, ...]:
        if int(protocol) < 5:  # (PickleBuffer needs 5; Dask's scheduler speaks 4 where it relays results)
            return PackedFacts, tuple(self)
        return PackedFacts, (self.numbers, [PickleBuffer(chunk) for chunk in self.chunks], self.table, self.marks)


CHUNK = 256
"""Messages a packed chunk. The client decodes a chunk as the rules come to it: the facts of a
whole partition decoded at once (thousands of messages) would be cold in the cache by the time
their turn comes, and linger long enough for the garbage collector to walk them (a fifth more
time a message, measured)."""


class _Listed:
    """The lines and facts of the messages of a partition worked on in this process, as
    :func:`~pgm_explore.io.iter_batched` tells them (a ``LineBatch``): a clean line as its typed
    Struct (its facts read from it, no dict made), any other message as an item."""

    __slots__ = ("facts", "numbers")

    def __init__(self) -> None:
        self.numbers: list[int] = []
        self.facts: list[Facts] = []

    def typed(self, line: int, way: Way, value: Any) -> None:
        self.numbers.append(line)
        self.facts.append(struct_facts(value, way.dt.name, way.mode, clean_fields(way, value)[3]))

    def item(self, item: Item) -> None:
        self.numbers.append(item.line)  # type: ignore[arg-type]  # (a partition's items have their line)
        self.facts.append(item_facts(item))

    def cut(self) -> tuple[list[int], list[Facts]]:
        done = self.numbers, self.facts
        self.numbers, self.facts = [], []
        return done


class _Packed:
    """:class:`_Listed` packed, on a worker (see :class:`PackedFacts`): the client decodes
    MessagePack several times faster than it unpickles a thousand Structs.

    The facts are written a chunk at a time, as soon as it is full (one call to the encoder for
    :data:`CHUNK` messages, whose own cost is that of several messages' facts), and dropped. The
    findings travel beside, each distinct tuple of them once, as objects: a log that repeats one
    mistake on every line (a header-only message has nine findings) holds one tuple of findings
    for all of them, and so must the client, which MessagePack, writing each message's in full,
    would not let it."""

    __slots__ = ("chunks", "marks", "numbers", "table", "tables", "written")

    def __init__(self) -> None:
        self.numbers: list[int] = []
        self.written: list[Facts] = []  # the facts of the chunk under way
        self.chunks: list[bytes] = []
        self.tables: dict[Any, int] = {}  # a tuple of findings (or its id) -> its place in the table
        self.table: list[tuple[Finding, ...]] = []
        self.marks: list[tuple[int, int]] = []

    def typed(self, line: int, way: Way, value: Any) -> None:
        findings = clean_fields(way, value)[3]
        facts = struct_facts(value, way.dt.name, way.mode, ())
        if findings:
            self._mark(findings)
        # (_add, written out: this runs for every clean message, and a call costs more than it)
        self.numbers.append(line)
        written = self.written
        written.append(facts)
        if len(written) == CHUNK:
            self.chunks.append(_encode_facts(written))
            written.clear()

    def item(self, item: Item) -> None:
        type_name, mode, _, findings = report_fields(item)
        if findings:
            self._mark(findings)
        self._add(item.line, _facts_of(item.document, type_name, mode, ()))  # type: ignore[arg-type]

    def _mark(self, findings: tuple[Finding, ...]) -> None:
        """The next message has ``findings``: their place in the table (added if new) is marked."""
        try:
            key: Any = findings
            index = self.tables.get(key)
        except TypeError:  # (a finding about a value that cannot be hashed: only the same tuple is shared)
            key = id(findings)
            index = self.tables.get(key)
        if index is None:
            index = self.tables[key] = len(self.table)
            self.table.append(findings)
        self.marks.append((len(self.numbers), index))

    def _add(self, line: int, facts: Facts) -> None:
        self.numbers.append(line)
        written = self.written
        written.append(facts)
        if len(written) == CHUNK:
            self.chunks.append(_encode_facts(written))
            written.clear()

    def cut(self) -> PackedFacts:
        if self.written:
            self.chunks.append(_encode_facts(self.written))
        done = PackedFacts(self.numbers, self.chunks, self.table, self.marks)
        self.__init__()  # type: ignore[misc]  # (the next run starts afresh)
        return done


def facts_batch(items: Iterator[Item]) -> tuple[list[int], list[Facts]]:
    """The lines and facts of consecutive messages of a partition worked on in this process."""
    batch = _Listed()
    for item in items:
        batch.item(item)
    return batch.cut()


def packed_facts_batch(items: Iterator[Item]) -> PackedFacts:
    """:func:`facts_batch` packed, on a worker (see :class:`_Packed`)."""
    batch = _Packed()
    for item in items:
        batch.item(item)
    return batch.cut()


def fact_chunks(batch: tuple[list[int], list[Facts]] | PackedFacts) -> Iterator[list[Facts]]:
    """The facts of a batch, in order, a chunk at a time (unpacked if a worker packed them)."""
    if not isinstance(batch, PackedFacts):
        yield batch[1]
        return
    table, marks = batch.table, batch.marks
    mark = 0
    start = 0
    for chunk in batch.chunks:
        facts = _decode_facts(chunk)
        end = start + len(facts)
        while mark < len(marks) and marks[mark][0] < end:
            position, index = marks[mark]
            facts[position - start] = _replace(facts[position - start], findings=table[index])
            mark += 1
        yield facts
        start = end


def unpacked_facts(batch: tuple[list[int], list[Facts]] | PackedFacts) -> tuple[list[int], list[Facts]]:
    """The lines and facts of a batch, unpacked if a worker packed them."""
    return batch[0], [fact for facts in fact_chunks(batch) for fact in facts]


def iter_facts(
    path: str, engine: Engine | None = None, progress: Callable[[int], object] | None = None
) -> Iterator[tuple[str, Sequence[int], list[Facts]]]:
    """The sources and facts of every message of ``path``, in order, made where ``engine`` works
    (see :func:`pgm_explore.io.iter_batched`; ``progress`` is told the bytes done): what the
    transcript rules read of a transcript file.

    They come a run at a time, as ``(head, lines, facts)``: the messages at ``f"{head}{line}"``
    for each of ``lines`` (a ``range`` when they follow one another), or (``lines`` ``[-1]``) the
    one message read at ``head`` (a message read here on its own, whose source may be any text).
    A run is one chunk of a partition, so that
    the caller hands the checker a run at a time (:meth:`TranscriptChecker.feed_run
    <pgm_explore.dialogue.TranscriptChecker>`), with no generator step and no text for each message."""
    spread = engine is not None and not engine.in_process
    # (The rules run here over each batch: the last partitions shrink, so that what is left to them
    # once the workers are done is small.)
    batches = iter_batched(
        path, item_facts, Pushed(_Packed if spread else _Listed), engine=engine, progress=progress, shrink=True
    )
    head = f"{path}:"
    for got in batches:
        if type(got) is Batch:
            base = got.base
            numbers = got.value[0]
            start = 0
            for facts in fact_chunks(got.value):
                end = start + len(facts)
                if not facts:  # (a run of no message: a partition that begins with a line left to this process)
                    continue
                first = base + numbers[start]
                if numbers[end - 1] - numbers[start] == end - 1 - start:
                    # (lines one after the other, as a partition's mostly are: no list to build)
                    yield head, range(first, first + end - start), facts
                else:
                    yield head, [base + number for number in numbers[start:end]], facts
                start = end
        else:
            source, fact = cast(tuple[str, Facts], got)  # (a (source, facts) pair: what is not a Batch)
            yield source, [-1], [fact]
