"""What the transcript checker remembers between messages (the rules are in :mod:`._rules`).

Only what later messages can refer to is kept: the ids in use (a reuse may come at any time), the
open dialogues with the context their PC Prompt gave (PC Prompt Table 1; BKN-PRC Responses refine
it), the Requests still waiting for a Response (the Functional Requirement "Correlation" of each
type) and the commitments of each BKN-DAC dialogue (:mod:`pgm_explore.dialogue.commitments`).
Memory grows with those and not with the transcript, so a transcript larger than memory can be checked.

The checker keeps a :class:`DialogueContext` and a :class:`DialogueState` for every dialogue it
has seen (one may go on at any time), tens of thousands in a long transcript. Each full pass of
the garbage collector walks every container object still alive, so what is kept for long is kept
in objects it does not track: msgspec Structs with ``gc=False`` (nothing in them refers back to
them, so they can be in no reference cycle), and sets of Entity ids kept once each however many
contexts share them, or, for a context that has learnt more, as dictionaries with None values
(which, unlike sets, the collector stops tracking when they hold only strings).

Memory is what limits a long transcript (issue 20: a million messages, or a hundred thousand
dialogues open at once, in less than 300 MB), so what is kept for each dialogue, context and
QueryID is kept small: no container where most would be empty or hold one item, no tuple where
two fields do, no number object where an entry of an array does, one copy of what many share. ``benchmarks/bench_check.py --memory-only`` measures it.
"""

from __future__ import annotations

import sys
from array import array
from bisect import bisect_right
from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from operator import indexOf, itemgetter
from typing import Any, NamedTuple

import msgspec

from pgm_explore.dialogue._facts import Facts, session_of, time_pair
from pgm_explore.dialogue._precheck_checks import ContextRules, context_rules
from pgm_explore.dialogue.commitments import CommitmentLedger
from pgm_explore.dialogue.precheck import Prediction, predict_with_rules

__all__ = [
    "DialogueContext",
    "DialogueState",
    "KnownActionContext",
    "PendingRequest",
    "Plan",
    "SourceLog",
    "TranscriptState",
    "stance_constraints",
]

_decode = msgspec.msgpack.Decoder().decode
_NO_ENTITIES: frozenset[str] = frozenset()

Entities = frozenset[str] | dict[str, None]
"""Entity ids: a set shared by every context and session that knows those ids and no others
(:meth:`TranscriptState.entity_set`, never changed), or, past :data:`_SHARED_ENTITIES` ids, a
dictionary of one context or session alone (the ids its keys), grown in place."""

_SHARED_ENTITIES = 256
"""The most Entity ids a shared set holds: growing one makes another, which costs its size each
time (a context told of one Entity more at each of a thousand Responses would cost a thousand
times the set), while a dictionary of one's own grows in place."""

_ENTITY_SETS = 4096
"""The distinct sets of Entity ids :meth:`TranscriptState.entity_set` remembers, the oldest
forgotten first (a set forgotten stays with whoever holds it; a later equal one is kept anew)."""

_PLANS = 64
"""The distinct plans whose pre-check :meth:`KnownActionContext.predict` keeps for each
ActionContext, the oldest forgotten first."""

_NO_COMMITMENTS: frozenset[str] = frozenset()
_OTHER_ANSWERED = -1
"""The entry in :attr:`TranscriptState.query_ids` of an answered Request whose TurnIndex is kept in
:attr:`TranscriptState.other_turns` (odd, as every answered entry is)."""

_SCANS = 4
"""How many times :meth:`TranscriptState.first_use` looks for a QueryID's place by going through
:attr:`TranscriptState.query_ids` before it keeps an index of every place instead: a transcript
with a few reused QueryIDs costs a few passes, one with many the memory of the index."""


class Plan(NamedTuple):
    """The pre-check of one plan (a Request's (Step, Statement) pairs) under one ActionContext,
    and what the rules read of it, worked out once for every Request that sends the same plan."""

    predictions: list[Prediction]
    failing: bool
    """Whether any step is predicted to fail (only then can a Response be more lenient)."""
    too_many: int | None
    """The ActionContext's MaxSteps, when the plan has more steps than that; else None."""
    off_repertoire: tuple[tuple[int, Prediction], ...]
    """(index in the plan, prediction) of each step outside the Repertoire, when the ActionContext
    has a Repertoire of names."""


class KnownActionContext(msgspec.Struct, gc=False):
    """One distinct ActionContext of the transcript (PC Prompt Table 1, ActionContext), and what
    the pre-check compiled of it once a feasibility Request needed it."""

    value: Mapping[str, Any]
    rules: ContextRules | None = None
    plans: dict[tuple[tuple[int, str], ...], Plan] | None = None
    """The pre-check of the latest distinct plans (:meth:`plan`)."""

    def precheck_rules(self) -> ContextRules:
        if self.rules is None:
            self.rules = context_rules(self.value, {}, None)
        return self.rules

    def plan(self, steps: tuple[tuple[int, str], ...]) -> Plan:
        """The pre-check of ``steps`` (a Request's (Step, Statement) pairs) under this ActionContext.
        An A-User sends the same plan again and again under one ActionContext, and the pre-check
        of a plan costs more than the rest of the checks of its message: each of the latest
        :data:`_PLANS` distinct plans is pre-checked once (the pre-check depends on nothing else),
        and what the rules read of it (MaxSteps, the Repertoire) worked out then."""
        plans = self.plans
        if plans is None:
            plans = self.plans = {}
        plan = plans.get(steps)
        if plan is None:
            predictions = predict_with_rules(steps, self.precheck_rules())
            value = self.value
            max_steps = value.get("MaxSteps")
            too_many = (
                max_steps
                if isinstance(max_steps, int) and not isinstance(max_steps, bool) and len(steps) > max_steps
                else None
            )
            repertoire = value.get("Repertoire")
            off: list[tuple[int, Prediction]] = []
            if isinstance(repertoire, list) and any(isinstance(action, str) for action in repertoire):
                for prediction in predictions:
                    if prediction.check == "repertoire":
                        index = next(i for i, (step, _) in enumerate(steps) if step == prediction.step)
                        off.append((index, prediction))
            plan = Plan(predictions, any(p.predicted != "Ack" for p in predictions), too_many, tuple(off))
            if len(plans) >= _PLANS:
                del plans[next(iter(plans))]
            plans[steps] = plan
        return plan

    def predict(self, steps: tuple[tuple[int, str], ...]) -> list[Prediction]:
        """The pre-check of ``steps`` (:meth:`plan`), as a list of its own (the tables keep it)."""
        return list(self.plan(steps).predictions)


class DialogueContext(msgspec.Struct, gc=False):
    """What a PC Prompt, and the BKN-PRC Responses of its dialogue, tell about a dialogue.

    A BKN-PRC Response returns "a more complete or different representation of the
    understanding of the context": its ActionContext replaces the PC Prompt's and its
    ResolvedReferents add Entities.
    """

    log: SourceLog
    logged: int
    """Where the PC Prompt was read, as its number in ``log`` (:attr:`source`): the number its
    PCPromptID is kept with, where the text took some 90 bytes more for each PC Prompt."""
    ids: str | tuple[Any, Any, Any]
    """Its MInstance, UEnvironment and SessionID, as :attr:`Facts.ids` has them (one string as a
    rule: a later message's are compared with them as they come)."""
    session: str | None
    """Its SessionID when it is a string (one copy kept, :meth:`TranscriptState.shared`)."""
    action_context: KnownActionContext | None
    entities: Entities
    """The Entity ids mentioned so far."""
    time: float | None = None
    """The PCPromptTime in seconds (:func:`~pgm_explore.spec.simple_time_seconds`) ..."""
    absolute: bool = False
    """... and whether it is absolute (on the epoch) or relative: kept apart, as in
    :class:`DialogueState`."""

    @property
    def source(self) -> str:
        """Where the PC Prompt was read."""
        return self.log.source(self.logged)


class PendingRequest(msgspec.Struct, gc=False):
    """A Request waiting for its Response: what the Response is checked against."""

    query_id: str | None
    """None for a Request without a (string) QueryID: checked, but never kept."""
    head: str
    line: int
    """Where it was read (:attr:`source`): ``f"{head}{line}"``, or ``head`` itself for a negative
    ``line``. (Written out only when a finding names it: most Requests are answered without one,
    and the text took some 90 bytes more for each Request waiting.)"""
    turn: Any
    kind: Any
    time: float | tuple[bool, float] | None
    steps: tuple[tuple[int, str], ...]
    commitments: tuple[str, ...]
    """The CommitmentIDs it submitted."""
    constraints: Mapping[str, str] | None
    """What the Response's Stance is held to (:func:`stance_constraints`)."""
    new_commitments: frozenset[str] = _NO_COMMITMENTS
    """CommitmentIDs it submitted that the dialogue did not hold before."""
    predictions: list[Prediction] | None = None
    """The pre-check of its steps under the ActionContext in force, made once when it came."""
    foresees_failure: bool = False
    """Whether the pre-check, under a non-empty ActionContext, foresees a failure: only then can a
    Response be more lenient than it (``precheck-differs``)."""

    @property
    def source(self) -> str:
        """Where the Request was read."""
        return self.head if self.line < 0 else f"{self.head}{self.line}"


def stance_constraints(constraints: tuple[Any, Any]) -> Mapping[str, str] | None:
    """The Role and Locale a BKN-PAL Request's Constraints ask of the Stance (``constraints``, their
    Role and Locale as :attr:`Facts.constraints` has them), those given as strings: all that is kept
    of the Constraints while the Request waits (a hundred thousand Requests waiting held some 400
    bytes each of Constraints no rule reads), one copy shared by every Request that asks the same
    (:func:`_stance`: an A-User asks for the same Role again and again; a hundred thousand Requests
    waiting held 50 bytes each of their own still).

    >>> stance_constraints(("guide", 3)), stance_constraints((None, None))
    ({'Role': 'guide'}, None)
    >>> stance_constraints(("guide", None)) is stance_constraints(("guide", ["fr"]))
    True
    """
    role, locale = constraints
    return _stance(role if isinstance(role, str) else None, locale if isinstance(locale, str) else None)


@lru_cache(maxsize=1024)
def _stance(role: str | None, locale: str | None) -> Mapping[str, str] | None:
    """The constraints kept for ``role`` and ``locale``, one copy of each of the latest 1,024
    distinct ones (read, never changed)."""
    if role is not None:
        return {"Role": role, "Locale": locale} if locale is not None else {"Role": role}
    return {"Locale": locale} if locale is not None else None


class DialogueState(msgspec.Struct, gc=False):
    """One dialogue of one data type (D15: turns are counted per DialogID and type). (Its place
    among the dialogues of the transcript is kept apart: :attr:`TranscriptState.begun_numbers`.)"""

    last_turn: int | None = None
    last_time: float | None = None
    """The latest QueryTime (or the PC Prompt's time) in seconds ..."""
    last_absolute: bool = False
    """... and whether it is absolute. The pair :func:`~pgm_explore.spec.simple_time_seconds` gives
    is kept as two fields: a tuple of them for every dialogue took 64 bytes more each."""
    pending: PendingRequest | dict[str, PendingRequest] | None = None
    """The Requests waiting for their Response, by QueryID: none (most dialogues, most of the
    time), the one Request itself, or a dictionary of several. A dictionary for every dialogue of
    a transcript, empty or of one entry, would take 180 bytes each of hundreds of thousands."""
    commitments: CommitmentLedger | None = None
    """BKN-DAC: made when the first commitment comes (most dialogues have none)."""
    opener: DialogueContext | None = None
    """The context of the PC Prompt that opened its DialogID (:attr:`TranscriptState.opened`), kept
    up to date by :meth:`TranscriptState.open_dialogue`: every message of the dialogue needs it, and
    a look in a dictionary of every DialogID of the transcript costs a miss of the processor's cache."""

    def ledger(self) -> CommitmentLedger:
        if self.commitments is None:
            self.commitments = CommitmentLedger()
        return self.commitments

    def wait(self, request: PendingRequest) -> None:
        """Keep ``request`` (which has a QueryID) until its Response; it takes the place of a
        Request of the same QueryID still waiting."""
        query_id = request.query_id
        assert query_id is not None
        pending = self.pending
        if pending is None or (isinstance(pending, PendingRequest) and pending.query_id == query_id):
            self.pending = request
        elif isinstance(pending, PendingRequest):
            assert pending.query_id is not None
            self.pending = {pending.query_id: pending, query_id: request}
        else:
            pending[query_id] = request

    def waits_for(self, query_id: str) -> bool:
        pending = self.pending
        if isinstance(pending, PendingRequest):
            return pending.query_id == query_id
        return pending is not None and query_id in pending

    def take(self, query_id: str) -> PendingRequest | None:
        """The Request ``query_id`` waiting for its Response, no longer waiting; None if none waits."""
        pending = self.pending
        if isinstance(pending, PendingRequest):
            if pending.query_id != query_id:
                return None
            self.pending = None
            return pending
        if pending is None:
            return None
        request = pending.pop(query_id, None)
        if len(pending) < 2:
            self.pending = next(iter(pending.values()), None)
        return request

    def waiting(self) -> list[PendingRequest]:
        """The Requests waiting for their Response, in the order they came."""
        pending = self.pending
        if pending is None:
            return []
        return [pending] if isinstance(pending, PendingRequest) else list(pending.values())


class SourceLog:
    """Where messages were read ("PATH:LINE", "PATH#INDEX", or any other text), each kept as a
    number: the sources of the ids a transcript keeps to its end, when a reuse may name them.

    A reader gives message after message the next line (or index) of the same file, so the log
    holds runs: where a run starts, and the line its first source names. A source kept as text
    takes some 90 bytes for each QueryID of the transcript (a million in a long one), a number 28.

    >>> log = SourceLog()
    >>> sources = ["t.jsonl:7", "t.jsonl:8", "t.jsonl:10", "u.json#0", "u.json#1", "odd", "", "", "t.jsonl:011"]
    >>> numbers = [log.add(s) for s in sources]
    >>> numbers, [log.source(n) for n in numbers] == sources, len(log.runs)
    ([0, 1, 2, 3, 4, 5, 6, 7, 8], True, 7)
    """

    __slots__ = ("_expect", "_head", "runs", "size")

    def __init__(self) -> None:
        self.runs: list[tuple[int, str, int | None]] = []
        """(number of its first source, "PATH:" or "PATH#" or the whole source, its line or None)."""
        self.size = 0
        # The last run's head, and the line that would continue it (-1: none would).
        self._head = ""
        self._expect = -1

    def add(self, source: str) -> int:
        """Log ``source``; return its number."""
        number = self.size
        self.size = number + 1
        expect = self._expect
        if expect >= 0 and source == f"{self._head}{expect}":
            self._expect = expect + 1
        else:
            self._start_run(number, source)
        return number

    def add_line(self, head: str, line: int) -> int:
        """Log the source ``f"{head}{line}"`` (``head`` ends with ":" or "#", ``line`` >= 0) without
        writing it out; return its number. (The bulk reader gives each message its line: the
        text, and reading it back, cost more than the rest of logging it.)

        >>> log = SourceLog()
        >>> [log.add_line("t.jsonl:", 7), log.add_line("t.jsonl:", 8), log.add("t.jsonl:9"), log.add_line("u:", 1)]
        [0, 1, 2, 3]
        >>> [log.source(n) for n in range(4)], len(log.runs)
        (['t.jsonl:7', 't.jsonl:8', 't.jsonl:9', 'u:1'], 2)
        """
        number = self.size
        self.size = number + 1
        if line != self._expect or head != self._head:
            self._head = head
            self.runs.append((number, head, line))
        self._expect = line + 1
        return number

    def add_lines(self, head: str, lines: range) -> int:
        """Log the sources ``f"{head}{line}"`` of every line of ``lines`` (consecutive, >= 0) at
        once; return what added to a line gives its number. (A run of messages of the bulk
        reader, logged before its messages are checked: each message that needs its number then
        costs an addition rather than a call. A number for a message that needs none is left
        unused.)

        >>> log = SourceLog()
        >>> offset = log.add_lines("t.jsonl:", range(7, 10))
        >>> [offset + 7, offset + 9, log.add_line("t.jsonl:", 10), log.add_lines("u:", range(1, 3)) + 2]
        [0, 2, 3, 5]
        >>> [log.source(n) for n in (0, 2, 3, 4, 5)], len(log.runs)
        (['t.jsonl:7', 't.jsonl:9', 't.jsonl:10', 'u:1', 'u:2'], 2)
        """
        number, first = self.size, lines.start
        self.size = number + len(lines)
        if first != self._expect or head != self._head:
            self._head = head
            self.runs.append((number, head, first))
        self._expect = lines.stop
        return number - first

    def _start_run(self, number: int, source: str) -> None:
        for separator in (":", "#"):
            head, found, tail = source.rpartition(separator)
            # (only a line written as str(int) writes back the same: not "011", not "²")
            if found and tail.isascii() and tail.isdigit() and (tail == "0" or tail[0] != "0"):
                line = int(tail)
                self._head, self._expect = head + separator, line + 1
                self.runs.append((number, self._head, line))
                return
        self._head, self._expect = source, -1
        self.runs.append((number, source, None))

    def source(self, number: int) -> str:
        """The source logged under ``number``."""
        run_start, head, first = self.runs[bisect_right(self.runs, number, key=itemgetter(0)) - 1]
        return head if first is None else f"{head}{first + number - run_start}"


@dataclass(slots=True)
class TranscriptState:
    """Everything the checker keeps, from the first message to the end of the transcript."""

    sources: SourceLog = field(default_factory=SourceLog)
    query_ids: dict[str, int] = field(default_factory=dict)
    """QueryID -> whether its Request has had its Response, for every QueryID of the transcript
    (QueryIDs are unique in a transcript: query-id-reused): 0 while not answered, and once it is,
    odd: ``turn << 1 | 1`` for the Request's TurnIndex ``turn`` (a non-negative integer), which a
    second Response is checked against (D16; :meth:`answer`), or :data:`_OTHER_ANSWERED` with the
    TurnIndex in :attr:`other_turns`. Every Request and Response looks its QueryID up, most find
    nothing, and in a dictionary of a million QueryIDs each look that finds nothing costs a miss of
    the processor's cache or two: one dictionary for both, one look. Its values are Python's own
    small integers (the TurnIndex of a dialogue of fewer than 128 turns), so that an entry costs
    no object of its own; where each QueryID was first used is kept apart (:attr:`query_sources`),
    by its place in this dictionary, which keeps the order the QueryIDs came in."""
    query_sources: array[int] = field(default_factory=lambda: array("Q"))
    """Where each QueryID of :attr:`query_ids` was first used, in the same order: its source's
    number in :attr:`sources` (8 bytes each, where a number of its own took 32; see :meth:`first_use`).
    Unsigned (``"Q"``), as every number here is: CPython stores an item of an unsigned array with
    one conversion, and one of a signed array by parsing a format (about 300 instructions more
    for each append, one for nearly every message)."""
    query_places: dict[str, int] | None = None
    """QueryID -> its place in :attr:`query_ids`, once more than :data:`_SCANS` findings needed one
    (made then, and kept up to date by :meth:`new_query_id`)."""
    scans: int = 0
    """How many times :meth:`first_use` went through :attr:`query_ids` for a place."""
    other_turns: dict[str, Any] = field(default_factory=dict)
    """The TurnIndex of an answered Request that no entry of :attr:`query_ids` holds (not a
    non-negative integer)."""
    prompt_ids: dict[str, int] = field(default_factory=dict)
    """PCPromptID -> the source (in :attr:`sources`) of its first use."""
    opened: dict[str, DialogueContext] = field(default_factory=dict)
    """DialogID -> the context of the PC Prompt that opened it."""
    session_context: dict[str, DialogueContext] = field(default_factory=dict)
    """SessionID -> the context of its latest PC Prompt."""
    session_entities: dict[str, Entities] = field(default_factory=dict)
    """SessionID -> the Entities mentioned by its PC Prompts and by the BKN-PRC Responses given in it."""
    entity_sets: dict[frozenset[str], frozenset[str]] = field(default_factory=dict)
    """One copy of each set of Entity ids a PC Prompt mentions (:meth:`entity_set`)."""
    action_contexts: dict[bytes, KnownActionContext] = field(default_factory=dict)
    """One entry for each distinct ActionContext (by its MessagePack encoding): an A-User mostly
    opens dialogue after dialogue with the same one, and keeping one copy saves memory, the
    collector's time, and the pre-check's work (it compiles each once)."""
    dialogues: defaultdict[str, dict[str, DialogueState]] = field(default_factory=lambda: defaultdict(dict))
    """Data type -> DialogID -> its state. (A dictionary for each data type, not one by (DialogID,
    data type): a tuple for each dialogue took 64 bytes, and one made to look each message up.)"""
    begun: int = 0
    """How many dialogues have begun."""
    begun_numbers: defaultdict[str, array[int]] = field(default_factory=lambda: defaultdict(lambda: array("Q")))
    """Data type -> the place of each of its dialogues among the dialogues of the transcript, in the
    order they began, in the order of :attr:`dialogues` (which keeps the order they came in and
    never lets one go): 8 bytes each, where a number in each :class:`DialogueState` took 40
    (unsigned, as :attr:`query_sources`)."""

    def begin(self, dialog: str, type_name: str, opener: DialogueContext | None) -> DialogueState:
        """The state of a dialogue that begins now (the first message of its DialogID and type)."""
        self.begun_numbers[type_name].append(self.begun)
        self.begun += 1
        # The PC Prompt opened the dialogue, so its time is the first in it (NOTES 6.3 D13).
        if opener is None:
            dialogue = DialogueState()
            # (its DialogID kept as it came: shared only with what a PC Prompt opened)
            self.dialogues[type_name][dialog] = dialogue
        else:
            dialogue = DialogueState(last_time=opener.time, last_absolute=opener.absolute, opener=opener)
            self.dialogues[type_name][self.shared(dialog)] = dialogue
        return dialogue

    def waiting(self) -> list[tuple[str, str, DialogueState]]:
        """(DialogID, data type, state) of the dialogues with Requests waiting, in the order they began."""
        found = [
            (number, dialog, type_name, dialogue)
            for type_name, of_type in self.dialogues.items()
            for number, (dialog, dialogue) in zip(self.begun_numbers[type_name], of_type.items(), strict=True)
            if dialogue.pending is not None
        ]
        found.sort(key=itemgetter(0))
        return [(dialog, type_name, dialogue) for _, dialog, type_name, dialogue in found]

    def new_query_id(self, query_id: str, number: int) -> None:
        """Keep ``query_id`` (not in :attr:`query_ids`), first used where :attr:`sources` logged
        ``number``. (The checker's driver does the same for the common Request, inline.)"""
        self.query_ids[query_id] = 0
        self.query_sources.append(number)
        if self.query_places is not None:
            self.query_places[query_id] = len(self.query_sources) - 1

    def answer(self, query_id: str, turn: Any) -> None:
        """Record that the Request ``query_id`` (in :attr:`query_ids`, not answered yet) has its
        Response; its TurnIndex is ``turn``."""
        if type(turn) is int and turn >= 0:
            self.query_ids[query_id] = turn << 1 | 1
        else:
            self.query_ids[query_id] = _OTHER_ANSWERED
            self.other_turns[query_id] = turn

    def first_use(self, query_id: str) -> int:
        """Where ``query_id`` (in :attr:`query_ids`) was first used: its source's number in :attr:`sources`.

        Only a finding asks (a reused QueryID, a second Response): its place in :attr:`query_ids`
        is looked for by going through it, at most :data:`_SCANS` times in a transcript, then in an
        index of every place made once (:attr:`query_places`).

        >>> state = TranscriptState()
        >>> for query_id in ("q-1", "q-2", "q-3"):
        ...     state.new_query_id(query_id, state.sources.add(f"t.jsonl:{query_id[-1]}0"))
        >>> state.answer("q-2", 3)
        >>> [state.sources.source(state.first_use("q-2")) for _ in range(6)], state.query_places
        (['t.jsonl:20', 't.jsonl:20', 't.jsonl:20', 't.jsonl:20', 't.jsonl:20', 't.jsonl:20'], {'q-1': 0, 'q-2': 1, 'q-3': 2})
        >>> state.new_query_id("q-4", state.sources.add("t.jsonl:40"))
        >>> state.sources.source(state.first_use("q-4")), state.query_ids["q-2"] & 1, state.answered_turn("q-2", state.query_ids["q-2"])
        ('t.jsonl:40', 1, 3)
        """
        places = self.query_places
        if places is None:
            if self.scans < _SCANS:
                self.scans += 1
                return self.query_sources[indexOf(self.query_ids, query_id)]
            places = self.query_places = {key: place for place, key in enumerate(self.query_ids)}
        return self.query_sources[places[query_id]]

    def answered_turn(self, query_id: str, entry: int) -> Any:
        """The TurnIndex of the answered Request ``query_id`` (its entry in :attr:`query_ids` ``entry``)."""
        return entry >> 1 if entry >= 0 else self.other_turns[query_id]

    def known_action_context(self, action_context: bytes | dict[str, Any] | None) -> KnownActionContext | None:
        """The one copy kept of an ActionContext (as :attr:`Facts.action_context` has it: its
        MessagePack, decoded here only the first time, or a dict of its own)."""
        if action_context is None:
            return None
        if isinstance(action_context, dict):  # (an int beyond 64 bits, which MessagePack cannot write)
            return KnownActionContext(action_context)  # (kept on its own)
        known = self.action_contexts.get(action_context)
        if known is None:
            known = self.action_contexts[action_context] = KnownActionContext(_decode(action_context))
        return known

    @staticmethod
    def shared(name: str) -> str:
        """One string object for every copy of ``name`` kept: each message is decoded into strings
        of its own, and a DialogID, a SessionID or an Entity id is kept once for each dialogue,
        context or PC Prompt that names it (QueryIDs, each used once, are kept as they come)."""
        return sys.intern(name) if type(name) is str else name

    def open_dialogue(self, logged: int, facts: Facts) -> None:
        """Record the context a PC Prompt (read where :attr:`sources` logged as ``logged``) gives
        the dialogue it opens (and its session)."""
        assert facts.dialog is not None
        shared = self.shared
        entities = self.entity_set(facts.entities or _NO_ENTITIES)
        ids = facts.ids
        session = session_of(ids)
        if type(session) is not str:
            session = None
        # The ids kept once: those of the session's latest context when they are the same (an
        # A-User's PC Prompts mostly are), else shared anew.
        latest = self.session_context.get(session) if session is not None else None
        if latest is not None and latest.ids == ids:
            ids, session = latest.ids, latest.session
        else:
            if not isinstance(ids, str):
                instance, environment, session_id = ids
                ids = (shared(instance), shared(environment), shared(session_id))
            if session is not None:
                session = shared(session)
        absolute, seconds = time_pair(facts.time) or (False, None)
        context = DialogueContext(
            self.sources,
            logged,
            ids,
            session,
            self.known_action_context(facts.action_context),
            entities,
            seconds,
            absolute,
        )
        dialog = shared(facts.dialog)
        self.opened[dialog] = context
        for of_type in self.dialogues.values():  # (the dialogues of that DialogID begun before it)
            begun = of_type.get(dialog)
            if begun is not None:
                begun.opener = context
        if session is not None:
            known = self.session_entities.get(session)
            self.session_entities[session] = entities if known is None else self.grown(known, entities)
            self.session_context[session] = context

    def entity_set(self, entities: frozenset[str]) -> frozenset[str]:
        """The one copy kept of a set of Entity ids, its ids shared: an A-User opens dialogue
        after dialogue in the same scene, its PC Prompts mention the same Entities, and Prompt
        Creation resolves the same referents."""
        known = self.entity_sets.get(entities)
        if known is None:
            known = frozenset(map(self.shared, entities))
            if len(self.entity_sets) >= _ENTITY_SETS:
                del self.entity_sets[next(iter(self.entity_sets))]
            self.entity_sets[known] = known
        return known

    def grown(self, entities: Entities, added: frozenset[str]) -> Entities:
        """``entities`` with ``added`` among them."""
        if isinstance(entities, dict):
            entities.update(dict.fromkeys(map(self.shared, added)))
            return entities
        if added <= entities:
            return entities
        if len(entities) + len(added) > _SHARED_ENTITIES:
            return dict.fromkeys(map(self.shared, entities | added))
        return self.entity_set(entities | added)

    def refine_context(self, facts: Facts, context: DialogueContext | None) -> None:
        """Fold what a BKN-PRC Response's Representation returns into its dialogue's context
        (``context``, that of the PC Prompt that opened its DialogID: :attr:`DialogueState.opener`)."""
        added = facts.entities
        if added is None or context is None or facts.outcome == "not_answered":
            return
        if facts.action_context is not None:
            context.action_context = self.known_action_context(facts.action_context)
        if not added:  # (most Representations add no Entity; one that adds none records nothing)
            return
        ids = facts.ids
        if ids == context.ids:  # (the context's own SessionID, as it mostly is: kept once already)
            session = context.session
        else:
            session = session_of(ids)
            if type(session) is str:
                shared = context.session
                session = shared if session == shared else self.shared(session)
            else:
                session = None
        context.entities = self.grown(context.entities, added)
        if session is not None:
            self.session_entities[session] = self.grown(self.session_entities.get(session, _NO_ENTITIES), added)

    def dialogue_count(self, others: Iterable[tuple[str, str]] = ()) -> int:
        """How many dialogues the messages so far belong to (D15: a PC Prompt to the BKN-PRC
        dialogue it opens), with the (DialogID, data type) of ``others``, which nothing here keeps."""
        dialogues, opened = self.dialogues, self.opened
        prc = dialogues.get("BKN-PRC", {})
        count = sum(map(len, dialogues.values())) + sum(dialog not in prc for dialog in opened)
        more = {
            (dialog, type_name)
            for dialog, type_name in others
            if dialog not in dialogues.get(type_name, {}) and not (type_name == "BKN-PRC" and dialog in opened)
        }
        return count + len(more)

    def context_for(self, dialog: str, session: str | None) -> DialogueContext | None:
        """The context of ``dialog``: its PC Prompt's, else (BKN-DAC and BKN-PAL may run in MCP
        sessions of their own, D15) that of the latest PC Prompt of the same A-User session."""
        opened = self.opened.get(dialog)
        if opened is not None:
            return opened
        return self.session_context.get(session) if session is not None else None
