"""Transcript rules: what only the messages around a message can show.

:class:`TranscriptChecker` reads a transcript one message at a time and remembers only
what later messages can refer to: the ids in use, the open dialogues with their PC
Prompt context, the Requests still waiting for a Response and the commitments of each
BKN-DAC dialogue. Memory grows with those and not with the transcript, so a transcript
larger than memory can be checked.

The error-level rules are exactly those of DECISIONS D16; every other rule is a warning
(NOTES 6.3, with the codes of ``docs/rules.md``).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, NamedTuple

import msgspec

from pgm_explore._sources import Item
from pgm_explore._sources import report_built as _report
from pgm_explore.dialogue._facts import Facts, facts_of, simple_time_seconds
from pgm_explore.dialogue.precheck import Prediction, compare, predict
from pgm_explore.validation import Finding, Report, RuleCode
from pgm_explore.validation._limits import MAX_FINDINGS, Tally
from pgm_explore.validation.findings import clip

__all__ = ["TranscriptChecker", "TranscriptFinding", "check_documents", "simple_time_seconds"]

_WORD = {"RQ": "Request", "RS": "Response"}
# What an answered Response should carry for the Kind of its Request (NOTES 6.3 O2).
_PAYLOAD_FOR_KIND: Mapping[tuple[str, str], tuple[str, tuple[str, ...]]] = {
    ("BKN-PRC", "referents"): ("Representation", ("ResolvedReferents",)),
    ("BKN-PRC", "intent"): ("Representation", ("Intent",)),
    ("BKN-PRC", "propositions"): ("Representation", ("Propositions",)),
    ("BKN-PRC", "goal_constraints"): ("Representation", ("GoalConstraints",)),
    ("BKN-PRC", "action_context"): ("Representation", ("ActionContext",)),
    ("BKN-DAC", "semantic_grounding"): ("Answer", ("ObjectClasses", "Relations", "Text")),
    ("BKN-DAC", "affordances"): ("Answer", ("Affordances",)),
    ("BKN-DAC", "constraints"): ("Answer", ("Constraints",)),
    ("BKN-DAC", "behavioural_expectations"): ("Answer", ("BehaviouralExpectations",)),
    ("BKN-DAC", "clarification"): ("Answer", ("Text",)),
}
# The same members as Facts.filled names them ("Representation.Intent").
_QUALIFIED = {kind: frozenset(f"{holder}.{key}" for key in keys) for kind, (holder, keys) in _PAYLOAD_FOR_KIND.items()}


def _some(steps: list[Any], shown: int = 10) -> str:
    """Steps named in a message: the first ``shown``, then how many more (never the whole of a
    list of 40,000).

    >>> _some([1, 2]), _some(list(range(12)))
    ('1, 2', '0, 1, 2, 3, 4, 5, 6, 7, 8, 9 and 2 more')
    """
    named = ", ".join(clip(str(step)) for step in steps[:shown])
    return named if len(steps) <= shown else f"{named} and {len(steps) - shown:,} more"


@dataclass(frozen=True, slots=True)
class TranscriptFinding:
    """A finding at one message of a transcript: where it is, which dialogue, what it says."""

    source: str
    dialog: str | None
    type: str | None
    finding: Finding

    @property
    def rule(self) -> RuleCode:
        return self.finding.rule

    @property
    def severity(self) -> str:
        return self.finding.severity

    @property
    def message(self) -> str:
        return self.finding.message

    @property
    def spec(self) -> str:
        return self.finding.spec

    @property
    def path(self) -> str:
        return self.finding.json_path

    def to_dict(self) -> dict[str, Any]:
        """One line of ``pgm-explore check --format json`` (keys in the documented order)."""
        return {
            "source": self.source,
            "dialog": self.dialog,
            "type": self.type,
            "rule": self.finding.rule,
            "severity": self.finding.severity,
            "message": self.finding.message,
            "spec": self.finding.spec,
            "path": self.finding.json_path,
        }


# The checker keeps a _Context and a _Dialogue for every dialogue it has seen (one may go on
# at any time), tens of thousands in a long transcript. Each full pass of the garbage
# collector walks every container object still alive, so what is kept for long is kept in
# objects it does not track: msgspec Structs with gc=False (nothing in them refers back to
# them, so they can be in no reference cycle), and sets of Entity ids as dictionaries with
# None values (which, unlike sets, the collector stops tracking when they hold only strings).


class _Context(msgspec.Struct, gc=False):
    """What a PC Prompt, and the BKN-PRC Responses of its dialogue, tell about a dialogue.

    A BKN-PRC Response returns "a more complete or different representation of the
    understanding of the context": its ActionContext replaces the PC Prompt's and its
    ResolvedReferents add Entities.
    """

    source: str
    ids: tuple[Any, Any, Any]
    action_context: Mapping[str, Any] | None
    entities: dict[str, None]
    """The Entity ids mentioned so far (the keys)."""
    time: tuple[bool, float] | None = None


class _Pending(NamedTuple):
    """A Request waiting for its Response: what the Response is checked against."""

    # A NamedTuple: one is made for every Request, and a tuple is made in a third of the
    # time a dataclass instance takes.
    source: str
    turn: Any
    kind: Any
    time: tuple[bool, float] | None
    steps: list[tuple[int, str]]
    commitments: list[str]
    constraints: Mapping[str, Any] | None
    new_commitments: frozenset[str]
    """CommitmentIDs this Request submitted that the dialogue did not hold before."""
    predictions: list[Prediction] | None
    """The pre-check of the steps, made once when the Request came; kept only when it
    foresees a failure (only then can a Response be more lenient than it)."""


_NO_COMMITMENTS: frozenset[str] = frozenset()
_encode = msgspec.msgpack.Encoder().encode


class _Dialogue(msgspec.Struct, gc=False):
    # A long transcript holds many of these: nothing that is not needed (see _Context).
    last_turn: int | None = None
    last_time: tuple[bool, float] | None = None
    pending: dict[str, _Pending] = {}  # (msgspec gives each instance a dictionary of its own)
    # BKN-DAC commitments: id -> (statement, state) with state "retained" or "released".
    commitments: dict[str, tuple[str, str]] = {}


class _SourceCodes:
    """Sources ("PATH:LINE", "PATH#INDEX") as small ints, decoded when a message needs one.

    >>> codes = _SourceCodes()
    >>> sources = ("t.jsonl:7", "t.jsonl:8", "t.jsonl:8:9", "u.jsonl:1", "t.json#0", "odd source", "12")
    >>> [codes.decode(codes.encode(s)) for s in sources] == list(sources)
    True
    """

    def __init__(self) -> None:
        self._paths: list[str] = []
        self._index: dict[str, int] = {}
        self._last: tuple[str, int] | None = None  # the PATH: of the last PATH:LINE, and its index

    def encode(self, source: str) -> int | str:
        if self._last is not None:  # most often, the next line of the same file
            head, index = self._last
            if source.startswith(head) and (tail := source[len(head) :]).isdigit():
                return (int(tail) << 21) | (index << 1)
        head, found, tail = source.rpartition(":")
        kind = 0
        if not (found and tail.isdigit()):
            head, found, tail = source.rpartition("#")
            kind = 1
            if not (found and tail.isdigit()):
                return source
        index = self._index.get(head)
        if index is None:
            index = self._index[head] = len(self._paths)
            self._paths.append(head)
        if kind == 0:
            self._last = (head + ":", index)
        return (int(tail) << 21) | (index << 1) | kind

    def decode(self, code: int | str) -> str:
        if isinstance(code, str):
            return code
        separator = "#" if code & 1 else ":"
        return f"{self._paths[(code >> 1) & 0xFFFFF]}{separator}{code >> 21}"


def _answer_marked(code: int | str | tuple[str]) -> int | tuple[str]:
    """The code of a QueryID whose Request has been answered: negative, or a 1-tuple for a
    source kept as text. (A mark in the one dictionary of QueryIDs rather than a set of its
    own: a transcript of a million messages would hold half a million more strings.)"""
    if isinstance(code, int):
        return code if code < 0 else -1 - code
    return code if isinstance(code, tuple) else (code,)


def _unmarked(code: int | str | tuple[str]) -> int | str:
    if isinstance(code, int):
        return -1 - code if code < 0 else code
    return code[0] if isinstance(code, tuple) else code


def _answered(code: int | str | tuple[str] | None) -> bool:
    return (isinstance(code, int) and code < 0) or isinstance(code, tuple)


class TranscriptChecker:
    """Checks a transcript fed one message at a time, in the order they happened.

    >>> checker = TranscriptChecker()
    >>> found = checker.feed("t.jsonl:1", {"Header": "PGM-KPA-V1.0", "Mode": "RS", "RequestID": "q-9", "DialogID": "d"})
    >>> "request-unknown" in {f.rule for f in found}
    True
    """

    def __init__(self) -> None:
        # Every id ever used is kept (a reuse may come at any time), so each entry is kept
        # small: the source as an int code, marked when the Request it names is answered
        # (QueryIDs are unique in a transcript, and query-id-reused says so when they are not).
        self._sources = _SourceCodes()
        self._query_ids: dict[str, int | str | tuple[str]] = {}
        self._prompt_ids: dict[str, int | str] = {}
        self._opened: dict[str, _Context] = {}
        self._session_context: dict[str, _Context] = {}
        self._session_entities: dict[str, dict[str, None]] = {}
        # One object for each distinct ActionContext (by its MessagePack encoding): an A-User
        # mostly opens dialogue after dialogue with the same one, and keeping one copy saves
        # memory, the collector's time, and the pre-check's work on each (it caches per object).
        self._action_contexts: dict[bytes, Mapping[str, Any]] = {}
        self._dialogues: dict[tuple[str, str], _Dialogue] = {}
        self.messages = 0

    # --- the public loop ----------------------------------------------------------------

    def feed(self, source: str, document: Any, problem: Finding | None = None) -> list[TranscriptFinding]:
        """Validate one message and check it against what came before; return its findings."""
        # The bulk reader's own reporting: a problem is the report's only finding, a message
        # that is itself a JSON string is "not an object" (not text to parse), and a value too
        # deep for the schema engines is a finding rather than a crash.
        report = _report(Item(source, None, None, document, problem))
        return self.feed_report(source, document, report)

    def feed_report(self, source: str, document: Any, report: Report) -> list[TranscriptFinding]:
        """Like :meth:`feed`, for a message already validated (the composers have the report)."""
        return self.feed_facts(source, facts_of(document, report))

    def feed_facts(self, source: str, facts: Facts) -> list[TranscriptFinding]:
        """Like :meth:`feed`, for what :func:`~pgm_explore.dialogue._facts.facts_of` read of a
        message (the bulk path has the facts made by a helper process)."""
        # This runs once per message of a transcript: the common case (a conforming message
        # with nothing to say) must cost little more than the dictionary lookups it needs.
        self.messages += 1
        type_name, dialog = facts.type, facts.dialog
        found: list[Finding] = list(facts.findings)
        if type_name == "PC Prompt":
            self._prompt(source, facts, found)
        elif type_name is not None and dialog is not None and facts.mode is not None:
            if facts.query_id is not None:
                self._query_id(source, facts.query_id, found)
            opener = self._opened.get(dialog)
            if type_name == "BKN-PRC" and opener is None:
                found.append(
                    Finding.of(
                        "dialog-not-opened",
                        ("DialogID",),
                        f"DialogID {dialog} was opened by no earlier PC Prompt; BKN-PRC exchanges happen "
                        '"during the dialogue that the PC Prompt opens".',
                        "BKN-PRC Definition; DECISIONS D15, D16",
                    )
                )
            key = (dialog, type_name)
            state = self._dialogues.get(key)
            if state is None:
                # The PC Prompt opened the dialogue, so its time is the first in it (NOTES 6.3 D13).
                state = self._dialogues[key] = _Dialogue(last_time=opener.time if opener else None)
            if opener is not None and facts.ids != opener.ids:
                self._context_ids(facts, dialog, opener, found)
            if facts.mode == "RQ":
                self._request(source, facts, type_name, dialog, state, found)
            else:
                self._response(source, facts, type_name, dialog, state, found)
        if not found:
            return []
        if len(found) - len(facts.findings) > MAX_FINDINGS:
            # The transcript rules keep at most as many findings per message as validation does.
            tally = Tally()
            tally.extend(found[len(facts.findings) :])
            found[len(facts.findings) :] = tally.findings()
        return [TranscriptFinding(source, dialog, type_name, f) for f in found]

    def finish(self) -> list[TranscriptFinding]:
        """Findings that only the end of the transcript reveals: Requests never answered."""
        out = []
        for (dialog, type_name), state in self._dialogues.items():
            for query_id, pending in state.pending.items():
                out.append(
                    TranscriptFinding(
                        pending.source,
                        dialog,
                        type_name,
                        Finding.of(
                            "unanswered",
                            ("QueryID",),
                            f"Request {query_id} has no Response by the end of the transcript.",
                            f'{type_name} Functional Requirement "Correlation"',
                        ),
                    )
                )
            state.pending.clear()
        return out

    # --- PC Prompts ---------------------------------------------------------------------

    def _prompt(self, source: str, facts: Facts, found: list[Finding]) -> None:
        prompt_id, dialog = facts.prompt_id, facts.dialog
        if prompt_id is not None:
            if prompt_id in self._prompt_ids:
                found.append(
                    Finding.of(
                        "prompt-id-reused",
                        ("PCPromptID",),
                        f"PCPromptID {prompt_id} was already used by the PC Prompt at "
                        f"{self._sources.decode(self._prompt_ids[prompt_id])}; "
                        "it identifies one instance.",
                        "PC Prompt Table 1, PCPromptID; DECISIONS D16",
                    )
                )
            else:
                self._prompt_ids[prompt_id] = self._sources.encode(source)
        if dialog is None:
            return
        if dialog in self._opened:
            found.append(
                Finding.of(
                    "dialog-reopened",
                    ("DialogID",),
                    f"DialogID {dialog} was already opened by the PC Prompt at {self._opened[dialog].source}; "
                    "a PC Prompt opens a dialogue.",
                    "PC Prompt Table 1, DialogID (NOTES 6.3 D3)",
                )
            )
        entities = dict.fromkeys(facts.entities or ())
        context = _Context(source, facts.ids, self._shared(facts.action_context), entities, facts.time)
        self._opened[dialog] = context
        session = facts.session
        if session is not None:
            self._session_context[session] = context
            self._session_entities.setdefault(session, {}).update(entities)

    def _shared(self, action_context: dict[str, Any] | None) -> Mapping[str, Any] | None:
        if not action_context:
            return action_context
        try:
            key = _encode(action_context)
        except (TypeError, ValueError, OverflowError):  # an int beyond 64 bits: kept as it is
            return action_context
        return self._action_contexts.setdefault(key, action_context)

    def action_context_for(self, document: Mapping[str, Any]) -> Mapping[str, Any] | None:
        """The ActionContext that applies to ``document`` now: its dialogue's PC Prompt (or a
        later BKN-PRC Response of that dialogue), else the latest PC Prompt of its session."""
        dialog, session = document.get("DialogID"), document.get("SessionID")
        context = (
            self._context_for(dialog, session if isinstance(session, str) else None)
            if isinstance(dialog, str)
            else None
        )
        return context.action_context if context else None

    def _known_entities(self, session: str | None, context: _Context) -> dict[str, None]:
        # BKN-DAC and BKN-PAL dialogues outlive the PC Prompt that started them (D15): every
        # Entity any PC Prompt of the session mentioned is known to them.
        return self._session_entities.get(session, context.entities) if session is not None else context.entities

    def _context_for(self, dialog: str, session: str | None) -> _Context | None:
        # BKN-DAC and BKN-PAL may run in MCP sessions of their own (D15): then the latest
        # PC Prompt of the same A-User session gives the context.
        if dialog in self._opened:
            return self._opened[dialog]
        return self._session_context.get(session) if session is not None else None

    def _context_ids(self, facts: Facts, dialog: str, context: _Context, found: list[Finding]) -> None:
        for key, value, expected in zip(
            ("MInstance", "UEnvironment", "SessionID"), facts.ids, context.ids, strict=True
        ):
            if isinstance(value, str) and isinstance(expected, str) and value != expected:
                found.append(
                    Finding.of(
                        "context-mismatch",
                        (key,),
                        f"{key} is {value}, but the PC Prompt that opened dialogue {dialog} ({context.source}) "
                        f"says {expected}.",
                        'Functional Requirement "Identification"; NOTES 6.3 D4',
                    )
                )

    # --- ids, turns and times -------------------------------------------------------------

    def _query_id(self, source: str, query_id: str, found: list[Finding]) -> None:
        # One look-up in a dictionary that holds every QueryID of the transcript, not two.
        known = self._query_ids
        count = len(known)
        earlier = known.setdefault(query_id, self._sources.encode(source))
        if len(known) == count:
            found.append(
                Finding.of(
                    "query-id-reused",
                    ("QueryID",),
                    f"QueryID {query_id} was already used by the message at "
                    f"{self._sources.decode(_unmarked(earlier))}; "
                    "a QueryID identifies one Request or Response.",
                    'Functional Requirement "Identification"; Table 1, QueryID; DECISIONS D16',
                )
            )

    def _time(self, facts: Facts, state: _Dialogue, found: list[Finding]) -> tuple[bool, float] | None:
        time = facts.time
        if time is None:
            return None
        last = state.last_time
        if last is not None and time[0] == last[0] and time[1] < last[1]:
            found.append(
                Finding.of(
                    "time-backwards",
                    ("QueryTime",),
                    f"QueryTime is {last[1] - time[1]:.3f} s earlier than the message before it in this dialogue.",
                    "Table 1, QueryTime (NOTES 6.3 D13)",
                )
            )
        state.last_time = time
        return time

    # --- Requests -------------------------------------------------------------------------

    def _request(
        self, source: str, facts: Facts, type_name: str, dialog: str, state: _Dialogue, found: list[Finding]
    ) -> None:
        turn = facts.turn
        if type(turn) is float and turn.is_integer():  # 3.0 is the integer 3 in JSON Schema
            turn = int(turn)
        if type(turn) is int:
            last_turn = state.last_turn
            if last_turn is None:
                if turn != 0:
                    found.append(
                        Finding.of(
                            "turn-start",
                            ("TurnIndex",),
                            f"The first exchange of this {type_name} dialogue has TurnIndex {turn}; turns start from 0.",
                            f"{type_name} Table 1, TurnIndex",
                        )
                    )
                state.last_turn = turn
            else:
                if turn != last_turn + 1:
                    found.append(
                        Finding.of(
                            "turn-gap",
                            ("TurnIndex",),
                            f"TurnIndex {turn} follows {last_turn}; the next exchange is {last_turn + 1}.",
                            f"{type_name} Table 1, TurnIndex (NOTES 6.3 D9)",
                        )
                    )
                if turn > last_turn:
                    state.last_turn = turn
        time = self._time(facts, state, found)
        session = facts.session
        context = self._opened.get(dialog) or self._context_for(dialog, session)
        steps = facts.steps
        commitments = [cid for _, cid, _ in facts.commitments] if facts.commitments else []
        new_commitments = _NO_COMMITMENTS
        predictions = None
        if type_name == "BKN-DAC":
            if commitments:
                new_commitments = frozenset(c for c in commitments if c not in state.commitments)
            if facts.commitments or facts.released:
                self._request_commitments(facts, state, found)
            if steps and context is not None and context.action_context:
                predictions = predict(steps, context.action_context)
                self._request_feasibility(steps, context, predictions, found)
                if all(p.predicted == "Ack" for p in predictions):
                    predictions = None
        if context is not None and facts.entity_ids and (known := self._known_entities(session, context)):
            unknown = [e for e in facts.entity_ids if e not in known]
            if unknown:
                found.append(
                    Finding.of(
                        "entity-unknown",
                        ("EntityIDs",),
                        f"{', '.join(unknown)} {'is' if len(unknown) == 1 else 'are'} not among the Entities the "
                        f"PC Prompt at {context.source} mentions (ResolvedReferents, SceneContext, Affordances).",
                        f"{type_name} Table 2, EntityIDs (NOTES 6.3 O4)",
                    )
                )
        if facts.query_id is not None:
            # tuple.__new__ rather than _Pending(...): the NamedTuple's own __new__ is a Python
            # function, and this runs for every Request.
            state.pending[facts.query_id] = tuple.__new__(
                _Pending,
                (source, turn, facts.kind, time, steps, commitments, facts.constraints, new_commitments, predictions),
            )

    def _request_feasibility(
        self, steps: tuple[tuple[int, str], ...], context: _Context, predictions: list[Prediction], found: list[Finding]
    ) -> None:
        action_context = context.action_context or {}
        max_steps = action_context.get("MaxSteps")
        if isinstance(max_steps, int) and not isinstance(max_steps, bool) and len(steps) > max_steps:
            found.append(
                Finding.of(
                    "too-many-steps",
                    ("ProcessActions",),
                    f"{len(steps)} Process Actions, but the ActionContext (PC Prompt at {context.source}) "
                    f"allows at most MaxSteps {max_steps}.",
                    "PC Prompt Table 1, ActionContext – MaxSteps (NOTES 6.3 F5)",
                )
            )
        repertoire = action_context.get("Repertoire")
        if isinstance(repertoire, list) and any(isinstance(action, str) for action in repertoire):
            for prediction in predictions:
                if prediction.check == "repertoire":
                    index = next(i for i, (step, _) in enumerate(steps) if step == prediction.step)
                    found.append(
                        Finding.of(
                            "action-not-in-repertoire",
                            ("ProcessActions", index, "Statement"),
                            f"Step {prediction.step}: {prediction.reason}",
                            "PC Prompt Table 1, ActionContext – Repertoire (NOTES 6.3 F4)",
                        )
                    )

    def _request_commitments(self, facts: Facts, state: _Dialogue, found: list[Finding]) -> None:
        for index, cid, statement in facts.commitments:
            held = state.commitments.get(cid)
            if held and held[1] == "retained" and held[0] != statement:
                found.append(
                    Finding.of(
                        "commitment-conflict",
                        ("Commitments", index, "Statement"),
                        f"Commitment {cid} is already retained with another Statement ({held[0]!r}); "
                        "release it first or use a new CommitmentID.",
                        "BKN-DAC Table 2, Commitments (NOTES 6.3 C1)",
                    )
                )
            elif isinstance(statement, str):
                state.commitments[cid] = (statement, "retained")
        for index, cid in facts.released:
            held = state.commitments.get(cid)
            if held is None:
                found.append(
                    Finding.of(
                        "release-unknown",
                        ("ReleasedCommitmentIDs", index),
                        f"Commitment {cid} is released, but no Request of this dialogue asked to retain it.",
                        "BKN-DAC Table 2, ReleasedCommitmentIDs (NOTES 6.3 C2)",
                    )
                )
            elif held[1] == "released":
                found.append(
                    Finding.of(
                        "released-twice",
                        ("ReleasedCommitmentIDs", index),
                        f"Commitment {cid} was already released earlier in this dialogue.",
                        "BKN-DAC Table 2, ReleasedCommitmentIDs (NOTES 6.3 C2)",
                    )
                )
            else:
                state.commitments[cid] = (held[0], "released")

    # --- Responses ------------------------------------------------------------------------

    def _response(
        self, source: str, facts: Facts, type_name: str, dialog: str, state: _Dialogue, found: list[Finding]
    ) -> None:
        before = len(found)
        time = self._time(facts, state, found)
        request_id = facts.request_id
        if request_id is None:
            return
        if _answered(self._query_ids.get(request_id)) and request_id not in state.pending:
            found.append(
                Finding.of(
                    "response-duplicate",
                    ("RequestID",),
                    f"Request {request_id} was already answered; a Request has one Response.",
                    f'{type_name} Functional Requirement "Correlation"; DECISIONS D16',
                )
            )
            return
        pending = state.pending.pop(request_id, None)
        if pending is None:
            found.append(
                Finding.of(
                    "request-unknown",
                    ("RequestID",),
                    f"RequestID {request_id} names no earlier {type_name} Request of dialogue {dialog}.",
                    f'{type_name} Functional Requirement "Correlation"; DECISIONS D16',
                )
            )
            return
        code = self._query_ids.get(request_id)
        self._query_ids[request_id] = _answer_marked(self._sources.encode(pending.source) if code is None else code)
        turn = facts.turn
        if pending.turn is not None and turn != pending.turn and not isinstance(turn, bool):
            found.append(
                Finding.of(
                    "turn-mismatch",
                    ("TurnIndex",),
                    f"TurnIndex is {turn}, but the Request it answers ({pending.source}) has TurnIndex {pending.turn}; "
                    "a Response has the TurnIndex of its Request.",
                    f'{type_name} Functional Requirement "Dialogue"; DECISIONS D16',
                )
            )
        already = len(found) > before  # _time() found the Response dated before the message it follows
        if not already and time and pending.time and time[0] == pending.time[0] and time[1] < pending.time[1]:
            found.append(
                Finding.of(
                    "time-backwards",
                    ("QueryTime",),
                    f"The Response is dated {pending.time[1] - time[1]:.3f} s before its Request ({pending.source}).",
                    "Table 1, QueryTime (NOTES 6.3 D13)",
                )
            )
        self._payload_kind(facts, type_name, pending, found)
        if type_name == "BKN-PRC":
            self._representation(facts, dialog)
        if type_name == "BKN-DAC":
            self._response_commitments(facts, state, pending, found)
            self._response_feasibility(facts, pending, found)
        if type_name == "BKN-PAL":
            self._stance(facts, pending, found)

    def _representation(self, facts: Facts, dialog: str) -> None:
        """Fold what Prompt Creation returns into the dialogue's context (see :class:`_Context`)."""
        context = self._opened.get(dialog)
        if facts.entities is None or context is None or facts.outcome == "not_answered":
            return
        if facts.action_context is not None:
            context.action_context = self._shared(facts.action_context)
        added = dict.fromkeys(facts.entities)
        context.entities.update(added)
        session = facts.session
        if session is not None:
            self._session_entities.setdefault(session, {}).update(added)

    def _payload_kind(self, facts: Facts, type_name: str, pending: _Pending, found: list[Finding]) -> None:
        if facts.outcome != "answered" or not isinstance(pending.kind, str):
            return
        if type_name == "BKN-DAC" and pending.kind in ("feasibility", "commitment"):
            wanted_key = "Feasibility" if pending.kind == "feasibility" else "CommitmentStatus"
            if wanted_key not in facts.filled:
                found.append(
                    Finding.of(
                        "payload-kind",
                        (wanted_key,),
                        f"The Request asked for {pending.kind} and the Outcome is answered, "
                        f"but the Response carries no {wanted_key}.",
                        "BKN-DAC Table 3 (NOTES 6.3 F6, O2)",
                    )
                )
            return
        if type_name == "BKN-DAC" and "Feasibility" in facts.filled:
            found.append(
                Finding.of(
                    "payload-kind",
                    ("Feasibility",),
                    f"The Response carries Feasibility, but its Request asked for {pending.kind}, not feasibility.",
                    "BKN-DAC Table 3, Feasibility: the result for the Process Actions of the Request (NOTES 6.3 F6)",
                )
            )
        wanted = _PAYLOAD_FOR_KIND.get((type_name, pending.kind))
        if wanted is None:
            return
        holder, keys = wanted
        if facts.filled.isdisjoint(_QUALIFIED[type_name, pending.kind]):
            found.append(
                Finding.of(
                    "payload-kind",
                    (holder,),
                    f"The Request asked for {pending.kind} and the Outcome is answered, but {holder} carries "
                    f"no {' or '.join(keys)}.",
                    f"{type_name} Table 3, {holder}: 'as appropriate to the Kind of the Request' (NOTES 6.3 O2)",
                )
            )

    def _response_feasibility(self, facts: Facts, pending: _Pending, found: list[Finding]) -> None:
        reported = facts.feasibility
        if reported is None or not pending.steps:
            return
        asked = {step for step, _ in pending.steps}
        answered = {step for step, _ in reported}
        partial = facts.outcome == "partially_answered"
        if answered != asked and not (partial and answered < asked):
            missing = sorted(asked - answered, key=str)
            extra = sorted(answered - asked, key=str)
            parts = [f"no outcome for Step {_some(missing)}" if missing else ""]
            parts.append(f"Step {_some(extra)} not in the Request" if extra else "")
            found.append(
                Finding.of(
                    "steps-mismatch",
                    ("Feasibility", "Steps"),
                    f"The steps differ from the Request's ProcessActions ({pending.source}): "
                    f"{'; '.join(p for p in parts if p)}.",
                    "BKN-DAC Table 3, Feasibility – Steps: 'Outcome for each Process Action' (NOTES 6.3 F7)",
                )
            )
        if pending.predictions is None:
            return
        statuses = {step: status for step, status in reported if isinstance(status, str)}
        first_index: dict[Any, int] = {}  # (looked up per comparison: a scan each would be quadratic)
        for i, (step, _) in enumerate(reported):
            first_index.setdefault(step, i)
        for comparison in compare(pending.predictions, statuses):
            # Only "stricter" is worth a warning: Domain Access accepted a step that the
            # ActionContext rules out. Where it reports a failure the ActionContext cannot
            # show (missed) or names another failure (differs), Domain Access knows more.
            if comparison.kind == "stricter":
                index = first_index[comparison.step]
                found.append(
                    Finding.of(
                        "precheck-differs",
                        ("Feasibility", "Steps", index, "PAStatus"),
                        f"Heuristic pre-check: Step {comparison.step} is reported {comparison.reported}, "
                        f"but the ActionContext suggests {comparison.predicted} ({comparison.reason}).",
                        "NOTES 4.7 mapping table (a heuristic of pgm-explore, not a spec rule)",
                    )
                )

    def _response_commitments(self, facts: Facts, state: _Dialogue, pending: _Pending, found: list[Finding]) -> None:
        reported: set[str] = set()
        for index, cid, status in facts.statuses:
            reported.add(cid)
            held = state.commitments.get(cid)
            if held is None:
                found.append(
                    Finding.of(
                        "commitment-status-unknown",
                        ("CommitmentStatus", index, "CommitmentID"),
                        f"Commitment {cid} was never submitted in this dialogue.",
                        "BKN-DAC Table 3, CommitmentStatus (NOTES 6.3 C3)",
                    )
                )
            elif status == "released" and held[1] != "released":
                found.append(
                    Finding.of(
                        "commitment-status-wrong",
                        ("CommitmentStatus", index, "Status"),
                        f"Commitment {cid} is reported released, but no Request released it.",
                        "BKN-DAC Table 3, CommitmentStatus (NOTES 6.3 C3)",
                    )
                )
            elif status == "retained" and held[1] == "released":
                found.append(
                    Finding.of(
                        "commitment-status-wrong",
                        ("CommitmentStatus", index, "Status"),
                        f"Commitment {cid} is reported retained after a Request released it.",
                        "BKN-DAC Table 3, CommitmentStatus (NOTES 6.3 C3)",
                    )
                )
            elif status == "conflicting" and cid in pending.new_commitments:
                # Domain Access refused to retain what this Request submitted first: the dialogue
                # does not hold it. A conflicting re-submission leaves the retained original alone.
                del state.commitments[cid]
        missing = [cid for cid in pending.commitments if cid not in reported]
        if missing and facts.outcome != "not_answered":
            found.append(
                Finding.of(
                    "commitment-unconfirmed",
                    ("CommitmentStatus",),
                    f"The Request ({pending.source}) submitted {', '.join(missing)}, which CommitmentStatus "
                    "does not report (retained or conflicting).",
                    "BKN-DAC Table 3, CommitmentStatus (NOTES 6.3 C4)",
                )
            )

    def _stance(self, facts: Facts, pending: _Pending, found: list[Finding]) -> None:
        if facts.outcome != "answered" or facts.stance is None or not pending.constraints:
            return
        for key, given in zip(("Role", "Locale"), facts.stance, strict=True):
            wanted = pending.constraints.get(key)
            if isinstance(wanted, str) and isinstance(given, str) and wanted != given:
                found.append(
                    Finding.of(
                        "stance-constraints",
                        ("Stance", key),
                        f"The Request ({pending.source}) asked for {key} {wanted}; the Stance gives {given}.",
                        "BKN-PAL Table 2, Constraints; Table 3, Stance (NOTES 6.3 O5)",
                    )
                )


def check_documents(items: Iterable[tuple[str, Any, Finding | None]]) -> list[TranscriptFinding]:
    """All findings of a transcript given as (source, document, problem) triples."""
    checker = TranscriptChecker()
    out = [f for source, document, problem in items for f in checker.feed(source, document, problem)]
    return out + checker.finish()
