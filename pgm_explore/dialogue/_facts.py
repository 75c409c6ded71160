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

from collections.abc import Callable, Iterator, Sequence
from typing import Any, Literal, NamedTuple, cast

import msgspec

from pgm_explore._engine import Engine
from pgm_explore.io import Batch, Item, iter_batched, report_fields
from pgm_explore.spec import simple_time_seconds
from pgm_explore.validation import Finding, Report

__all__ = [
    "Facts",
    "PackedFacts",
    "entities",
    "facts_of",
    "CHUNK",
    "fact_chunks",
    "facts_batch",
    "item_facts",
    "iter_facts",
    "packed_facts_batch",
    "simple_time_seconds",
    "unpacked_facts",
]

_ID_SUFFIXES = ("ID", "IDs")


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
        for k, v in value.items():
            if isinstance(v, str):
                if k.endswith(_ID_SUFFIXES):
                    into.add(v)
            elif isinstance(v, (dict, list)):
                entities(v, into, k)
    elif isinstance(value, list):
        named = key.endswith(_ID_SUFFIXES)
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


class Facts(msgspec.Struct, frozen=True, array_like=True, gc=False, omit_defaults=True):
    """What the transcript rules read of one message (see the module). Fields a message of
    its type and mode has no use for keep their defaults.

    A msgspec Struct: made, read and sent between processes (as MessagePack) several times
    faster than a NamedTuple or a dataclass. Not tracked by the garbage collector: nothing
    in it can refer back to it. What the client decodes of each message is kept to few
    objects: the type and mode are the Literal's own strings (no copy made, and compared by
    identity), the names of the payload's members a tuple (no hash table), the defaults at the
    end are left out.
    """

    type: TypeName | None
    mode: Literal["RQ", "RS"] | None
    findings: tuple[Finding, ...]
    """The validation report's findings."""
    dialog: str | None
    ids: tuple[Any, Any, Any] = (None, None, None)
    """MInstance, UEnvironment and SessionID, as the message gives them."""
    time: tuple[bool, float] | None = None
    """QueryTime (a PC Prompt's PCPromptTime) as :func:`simple_time_seconds` reads it."""
    query_id: str | None = None
    turn: Any = None
    """TurnIndex, as the message gives it."""
    # --- PC Prompts, and what a BKN-PRC Response's Representation adds to their context
    prompt_id: str | None = None
    action_context: dict[str, Any] | None = None
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
    constraints: dict[str, Any] | None = None
    entity_ids: tuple[str, ...] = ()
    # --- Responses
    request_id: str | None = None
    outcome: Any = None
    filled: tuple[str, ...] = ()
    """The payload with content: "Feasibility", "CommitmentStatus", "Representation.Intent", "Answer.Text", ..."""
    feasibility: tuple[tuple[int, Any], ...] | None = None
    """(Step, PAStatus) of each Feasibility.Steps item with a Step; None when Feasibility is not an object."""
    statuses: tuple[tuple[int, str, Any], ...] = ()
    """(index, CommitmentID, Status) of each CommitmentStatus item with a CommitmentID."""
    stance: tuple[Any, Any] | None = None
    """The Stance's Role and Locale; None when there is no Stance object."""

    @property
    def session(self) -> str | None:
        session = self.ids[2]
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
    ids = (doc.get("MInstance"), doc.get("UEnvironment"), doc.get("SessionID"))
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
            simple_time_seconds(doc.get("PCPromptTime")),
            prompt_id=prompt_id if type(prompt_id) is str else None,
            action_context=action_context if isinstance(action_context, dict) else None,
            entities=frozenset(found),
        )
    query_id = doc.get("QueryID")
    query_id = query_id if type(query_id) is str else None
    time = simple_time_seconds(doc.get("QueryTime"))
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
    tuple[Any, Any, Any],
    tuple[bool, float] | None,
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
        constraints=constraints if isinstance(constraints, dict) else None,
        entity_ids=tuple([e for e in entity_ids if isinstance(e, str)]) if isinstance(entity_ids, list) else (),
    )


def _response_facts(doc: dict[str, Any], head: _Head) -> Facts:
    request_id = doc.get("RequestID")
    representation, feasibility, stance = doc.get("Representation"), doc.get("Feasibility"), doc.get("Stance")
    answer, statuses = doc.get("Answer"), doc.get("CommitmentStatus")
    filled = [key for key, value in (("Feasibility", feasibility), ("CommitmentStatus", statuses)) if value]
    if isinstance(representation, dict):
        filled += ["Representation." + member for member, value in representation.items() if value]
    if isinstance(answer, dict):
        filled += ["Answer." + member for member, value in answer.items() if value]
    action_context, added = None, None
    if isinstance(representation, dict):
        found: set[str] = set()
        for key in ("ResolvedReferents", "ActionContext"):
            entities(representation.get(key), found)
        added = frozenset(found)
        action_context = representation.get("ActionContext")
        action_context = action_context if isinstance(action_context, dict) else None
    return Facts(
        *head,
        _turn(doc),
        action_context=action_context,
        entities=added,
        request_id=request_id if type(request_id) is str else None,
        outcome=doc.get("Outcome"),
        filled=tuple(filled),
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


def item_facts(item: Item) -> Facts:
    """The facts of a message as read from a source, with its validation
    (:func:`pgm_explore.io.report_fields`): the work done on each message of a transcript."""
    type_name, mode, _, findings = report_fields(item)
    return _facts_of(item.document, type_name, mode, findings)


_encode_facts = msgspec.msgpack.Encoder().encode
_decode_facts = msgspec.msgpack.Decoder(list[Facts]).decode
_replace = msgspec.structs.replace


class PackedFacts(NamedTuple):
    """The facts of consecutive messages of a partition, as a worker sends them back: their
    lines (within the partition); their facts without findings, as MessagePack arrays of
    :data:`CHUNK` messages; each distinct tuple of findings once; and (message, tuple) for each
    message that has findings, in order."""

    numbers: list[int]
    chunks: list[bytes]
    table: list[tuple[Finding, ...]]
    marks: list[tuple[int, int]]


CHUNK = 256
"""Messages a packed chunk. The client decodes a chunk as the rules come to it: the facts of a
whole partition decoded at once (thousands of messages) would be cold in the cache by the time
their turn comes, and linger long enough for the garbage collector to walk them (a fifth more
time a message, measured)."""


def facts_batch(items: Iterator[Item]) -> tuple[list[int], list[Facts]]:
    """The lines and facts of consecutive messages of a partition worked on in this process."""
    numbers: list[int] = []
    facts: list[Facts] = []
    for item in items:
        numbers.append(item.line)  # type: ignore[arg-type]  # (a partition's items have their line)
        facts.append(item_facts(item))
    return numbers, facts


def packed_facts_batch(items: Iterator[Item]) -> PackedFacts:
    """:func:`facts_batch` packed, on a worker: the client decodes MessagePack several times
    faster than it unpickles a thousand Structs.

    The findings travel beside, each distinct tuple of them once, as objects: a log that
    repeats one mistake on every line (a header-only message has nine findings) holds one
    tuple of findings for all of them (the reader shares them), and so must the client, which
    MessagePack, writing each message's in full, would not let it."""
    numbers, facts = facts_batch(items)
    tables: dict[int, int] = {}  # id of a tuple of findings -> its place in the table
    table: list[tuple[Finding, ...]] = []
    marks: list[tuple[int, int]] = []
    for position, fact in enumerate(facts):
        findings = fact.findings
        if findings:
            index = tables.get(id(findings))
            if index is None:
                index = tables[id(findings)] = len(table)
                table.append(findings)
            marks.append((position, index))
            facts[position] = _replace(fact, findings=())
    chunks = [_encode_facts(facts[start : start + CHUNK]) for start in range(0, len(facts), CHUNK)]
    return PackedFacts(numbers, chunks, table, marks)


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
    the caller loops over lists (:meth:`TranscriptChecker.feed_line
    <pgm_explore.dialogue.TranscriptChecker>`), with no generator step and no text for each message."""
    spread = engine is not None and not engine.in_process
    batches = iter_batched(
        path, item_facts, packed_facts_batch if spread else facts_batch, engine=engine, progress=progress
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
