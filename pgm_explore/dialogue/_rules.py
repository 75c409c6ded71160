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

import sys
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from pgm_explore._sources import Item
from pgm_explore._sources import report as _report
from pgm_explore.dialogue.precheck import Prediction, compare, predict
from pgm_explore.validation import Finding, Report, RuleCode

__all__ = ["TranscriptChecker", "TranscriptFinding", "check_documents", "simple_time_seconds"]

_UNIT = {"00": 1.0, "01": 1e-3, "10": 1e-6, "11": 1e-9}
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
        }


def simple_time_seconds(value: Any) -> tuple[bool, float] | None:
    """(absolute?, seconds) of the first segment of an OSD Simple Time, if it can be read.

    >>> simple_time_seconds({"SimpleTimeData": [{"StartTime": 1500, "TimeType": True, "TimeUnit": "01"}]})
    (True, 1.5)
    >>> simple_time_seconds({"SimpleTimeData": [{"FlagsByte": 0, "StartTime": 2}]})
    (False, 2.0)
    """
    try:
        segment = value["SimpleTimeData"][0]
        start = segment["StartTime"]
        flags = segment.get("FlagsByte", 0)
        absolute = segment.get("TimeType", bool(flags & 1))
        unit = segment.get("TimeUnit", format((flags >> 1) & 3, "02b"))
        if isinstance(start, bool) or not isinstance(start, int | float) or unit not in _UNIT:
            return None
        return bool(absolute), start * _UNIT[unit]
    except (KeyError, IndexError, TypeError, AttributeError):
        return None


@dataclass
class _Context:
    """What a PC Prompt, and the BKN-PRC Responses of its dialogue, tell about a dialogue.

    A BKN-PRC Response returns "a more complete or different representation of the
    understanding of the context": its ActionContext replaces the PC Prompt's and its
    ResolvedReferents add Entities.
    """

    source: str
    ids: tuple[Any, Any, Any]
    action_context: Mapping[str, Any] | None
    entities: set[str]
    time: tuple[bool, float] | None = None


@dataclass(slots=True)
class _Pending:
    source: str
    turn: Any
    kind: Any
    time: tuple[bool, float] | None
    steps: list[tuple[int, str]]
    commitments: list[str]
    released: list[str]
    constraints: Mapping[str, Any] | None
    context: _Context | None
    new_commitments: frozenset[str] = frozenset()
    """CommitmentIDs this Request submitted that the dialogue did not hold before."""
    predictions: list[Prediction] | None = None
    """The pre-check of the steps, made once when the Request came."""


@dataclass(slots=True)
class _Dialogue:
    # A long transcript holds many of these: slots, and nothing that is not needed.
    last_turn: int | None = None
    last_time: tuple[bool, float] | None = None
    pending: dict[str, _Pending] = field(default_factory=dict)
    # BKN-DAC commitments: id -> (statement, state) with state "retained" or "released".
    commitments: dict[str, tuple[str, str]] = field(default_factory=dict)


def _entities(value: Any, into: set[str], key: str = "") -> None:
    """Entity ids a PC Prompt mentions: ResolvedReferents, Affordances and any *ID/*IDs in SceneContext."""
    if isinstance(value, dict):
        for k, v in value.items():
            _entities(v, into, k)
    elif isinstance(value, list):
        for v in value:
            _entities(v, into, key)
    elif isinstance(value, str) and key.endswith(("ID", "IDs")):
        into.add(value)


class _SourceCodes:
    """Sources ("PATH:LINE", "PATH#INDEX") as small ints, decoded when a message needs one.

    >>> codes = _SourceCodes()
    >>> [codes.decode(codes.encode(s)) for s in ("t.jsonl:7", "t.json#0", "odd source")]
    ['t.jsonl:7', 't.json#0', 'odd source']
    """

    def __init__(self) -> None:
        self._paths: list[str] = []
        self._index: dict[str, int] = {}

    def encode(self, source: str) -> int | str:
        for kind, separator in enumerate((":", "#")):
            head, found, tail = source.rpartition(separator)
            if found and tail.isdigit():
                index = self._index.get(head)
                if index is None:
                    index = self._index[head] = len(self._paths)
                    self._paths.append(head)
                return (int(tail) << 21) | (index << 1) | kind
        return source

    def decode(self, code: int | str) -> str:
        if isinstance(code, str):
            return code
        separator = "#" if code & 1 else ":"
        return f"{self._paths[(code >> 1) & 0xFFFFF]}{separator}{code >> 21}"


def _strings(value: Any) -> list[str]:
    return [v for v in value if isinstance(v, str)] if isinstance(value, list) else []


def _items(value: Any) -> list[Mapping[str, Any]]:
    """The objects of an array property, whatever a non-conforming message put there."""
    return [v for v in value if isinstance(v, dict)] if isinstance(value, list) else []


def _is_step(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


class TranscriptChecker:
    """Checks a transcript fed one message at a time, in the order they happened.

    >>> checker = TranscriptChecker()
    >>> found = checker.feed("t.jsonl:1", {"Header": "PGM-KPA-V1.0", "Mode": "RS", "RequestID": "q-9", "DialogID": "d"})
    >>> "request-unknown" in {f.rule for f in found}
    True
    """

    def __init__(self) -> None:
        # Every id ever used is kept (a reuse may come at any time), so each entry is kept
        # small: the source as an int code, the id interned so that the answered set shares it.
        self._sources = _SourceCodes()
        self._query_ids: dict[str, int | str] = {}
        self._prompt_ids: dict[str, int | str] = {}
        self._opened: dict[str, _Context] = {}
        self._session_context: dict[str, _Context] = {}
        self._session_entities: dict[str, set[str]] = {}
        # QueryIDs are unique in a transcript (query-id-reused says so when they are not), so
        # one set of answered Requests serves every dialogue.
        self._answered: set[str] = set()
        self._dialogues: dict[tuple[str, str], _Dialogue] = {}
        self.messages = 0

    # --- the public loop ----------------------------------------------------------------

    def feed(self, source: str, document: Any, problem: Finding | None = None) -> list[TranscriptFinding]:
        """Validate one message and check it against what came before; return its findings."""
        self.messages += 1
        # The bulk reader's own reporting: a problem is the report's only finding, a message
        # that is itself a JSON string is "not an object" (not text to parse), and a value too
        # deep for the schema engines is a finding rather than a crash.
        report = _report(Item(source, None, None, document, problem))
        return self.feed_report(source, document, report)

    def feed_report(self, source: str, document: Any, report: Report) -> list[TranscriptFinding]:
        """Like :meth:`feed`, for a message already validated (the composers have the report)."""
        dialog = document.get("DialogID") if isinstance(document, dict) else None
        dialog = dialog if isinstance(dialog, str) else None
        out = [TranscriptFinding(source, dialog, report.type, f) for f in report.findings]
        if report.type is None:
            return out
        found: list[Finding] = []
        if report.type == "PC Prompt":
            self._prompt(source, document, dialog, found)
        elif report.mode is not None and dialog is not None:
            self._query_id(source, document, found)
            if report.type == "BKN-PRC" and dialog not in self._opened:
                found.append(
                    Finding.of(
                        "dialog-not-opened",
                        ("DialogID",),
                        f"DialogID {dialog} was opened by no earlier PC Prompt; BKN-PRC exchanges happen "
                        '"during the dialogue that the PC Prompt opens".',
                        "BKN-PRC Definition; DECISIONS D15, D16",
                    )
                )
            state = self._dialogues.get((dialog, report.type))
            if state is None:
                opener = self._opened.get(dialog)
                # The PC Prompt opened the dialogue, so its time is the first in it (NOTES 6.3 D13).
                state = self._dialogues[(dialog, report.type)] = _Dialogue(last_time=opener.time if opener else None)
            self._context_ids(document, dialog, found)
            if report.mode == "RQ":
                self._request(source, document, report.type, dialog, state, found)
            else:
                self._response(source, document, report.type, state, found)
        return out + [TranscriptFinding(source, dialog, report.type, f) for f in found]

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

    def _prompt(self, source: str, doc: Mapping[str, Any], dialog: str | None, found: list[Finding]) -> None:
        prompt_id = doc.get("PCPromptID")
        if isinstance(prompt_id, str):
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
        action_context = doc.get("ActionContext")
        entities: set[str] = set()
        for key in ("ResolvedReferents", "SceneContext", "ActionContext"):
            _entities(doc.get(key), entities)
        context = _Context(
            source,
            (doc.get("MInstance"), doc.get("UEnvironment"), doc.get("SessionID")),
            action_context if isinstance(action_context, dict) else None,
            entities,
            simple_time_seconds(doc.get("PCPromptTime")),
        )
        self._opened[dialog] = context
        if isinstance(doc.get("SessionID"), str):
            self._session_context[doc["SessionID"]] = context
            self._session_entities.setdefault(doc["SessionID"], set()).update(entities)

    def action_context_for(self, document: Mapping[str, Any]) -> Mapping[str, Any] | None:
        """The ActionContext that applies to ``document`` now: its dialogue's PC Prompt (or a
        later BKN-PRC Response of that dialogue), else the latest PC Prompt of its session."""
        dialog = document.get("DialogID")
        context = self._context_for(document, dialog) if isinstance(dialog, str) else None
        return context.action_context if context else None

    def _known_entities(self, doc: Mapping[str, Any], context: _Context) -> set[str]:
        # BKN-DAC and BKN-PAL dialogues outlive the PC Prompt that started them (D15): every
        # Entity any PC Prompt of the session mentioned is known to them.
        session = doc.get("SessionID")
        return self._session_entities.get(session, context.entities) if isinstance(session, str) else context.entities

    def _context_for(self, doc: Mapping[str, Any], dialog: str) -> _Context | None:
        # BKN-DAC and BKN-PAL may run in MCP sessions of their own (D15): then the latest
        # PC Prompt of the same A-User session gives the context.
        if dialog in self._opened:
            return self._opened[dialog]
        session = doc.get("SessionID")
        return self._session_context.get(session) if isinstance(session, str) else None

    def _context_ids(self, doc: Mapping[str, Any], dialog: str, found: list[Finding]) -> None:
        context = self._opened.get(dialog)
        if context is None:
            return
        for key, expected in zip(("MInstance", "UEnvironment", "SessionID"), context.ids, strict=True):
            value = doc.get(key)
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

    def _query_id(self, source: str, doc: Mapping[str, Any], found: list[Finding]) -> None:
        query_id = doc.get("QueryID")
        if not isinstance(query_id, str):
            return
        if query_id in self._query_ids:
            found.append(
                Finding.of(
                    "query-id-reused",
                    ("QueryID",),
                    f"QueryID {query_id} was already used by the message at "
                    f"{self._sources.decode(self._query_ids[query_id])}; "
                    "a QueryID identifies one Request or Response.",
                    'Functional Requirement "Identification"; Table 1, QueryID; DECISIONS D16',
                )
            )
        else:
            self._query_ids[sys.intern(query_id)] = self._sources.encode(source)

    def _time(self, doc: Mapping[str, Any], state: _Dialogue, found: list[Finding]) -> tuple[bool, float] | None:
        time = simple_time_seconds(doc.get("QueryTime"))
        last = state.last_time
        if time is not None and last is not None and time[0] == last[0] and time[1] < last[1]:
            found.append(
                Finding.of(
                    "time-backwards",
                    ("QueryTime",),
                    f"QueryTime is {last[1] - time[1]:.3f} s earlier than the message before it in this dialogue.",
                    "Table 1, QueryTime (NOTES 6.3 D13)",
                )
            )
        if time is not None:
            state.last_time = time
        return time

    # --- Requests -------------------------------------------------------------------------

    def _request(
        self, source: str, doc: Mapping[str, Any], type_name: str, dialog: str, state: _Dialogue, found: list[Finding]
    ) -> None:
        turn = doc.get("TurnIndex")
        if isinstance(turn, int | float) and not isinstance(turn, bool) and turn == int(turn):
            turn = int(turn)
            if state.last_turn is None and turn != 0:
                found.append(
                    Finding.of(
                        "turn-start",
                        ("TurnIndex",),
                        f"The first exchange of this {type_name} dialogue has TurnIndex {turn}; turns start from 0.",
                        f"{type_name} Table 1, TurnIndex",
                    )
                )
            elif state.last_turn is not None and turn != state.last_turn + 1:
                found.append(
                    Finding.of(
                        "turn-gap",
                        ("TurnIndex",),
                        f"TurnIndex {turn} follows {state.last_turn}; the next exchange is {state.last_turn + 1}.",
                        f"{type_name} Table 1, TurnIndex (NOTES 6.3 D9)",
                    )
                )
            state.last_turn = turn if state.last_turn is None else max(turn, state.last_turn)
        time = self._time(doc, state, found)
        context = self._context_for(doc, dialog)
        query_id = doc.get("QueryID")
        steps = [
            (item["Step"], item["Statement"])
            for item in _items(doc.get("ProcessActions"))
            if _is_step(item.get("Step")) and isinstance(item.get("Statement"), str)
        ]
        commitments = [
            item["CommitmentID"] for item in _items(doc.get("Commitments")) if isinstance(item.get("CommitmentID"), str)
        ]
        new_commitments: frozenset[str] = frozenset()
        predictions = None
        if type_name == "BKN-DAC":
            new_commitments = frozenset(c for c in commitments if c not in state.commitments)
            self._request_commitments(doc, state, found)
            if steps and context is not None and context.action_context:
                predictions = predict(steps, context.action_context)
                self._request_feasibility(steps, context, predictions, found)
        known = self._known_entities(doc, context) if context is not None else set()
        if context is not None and known:
            unknown = [e for e in _strings(doc.get("EntityIDs")) if e not in known]
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
        if isinstance(query_id, str):
            constraints = doc.get("Constraints")
            state.pending[query_id] = _Pending(
                source,
                turn,
                doc.get("Kind"),
                time,
                steps,
                commitments,
                _strings(doc.get("ReleasedCommitmentIDs")),
                constraints if isinstance(constraints, dict) else None,
                context,
                new_commitments,
                predictions,
            )

    def _request_feasibility(
        self, steps: list[tuple[int, str]], context: _Context, predictions: list[Prediction], found: list[Finding]
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
        repertoire = _strings(action_context.get("Repertoire"))
        if repertoire:
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

    def _request_commitments(self, doc: Mapping[str, Any], state: _Dialogue, found: list[Finding]) -> None:
        for index, item in enumerate(doc.get("Commitments") if isinstance(doc.get("Commitments"), list) else ()):
            if not isinstance(item, dict) or not isinstance(cid := item.get("CommitmentID"), str):
                continue
            statement = item.get("Statement")
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
        released = doc.get("ReleasedCommitmentIDs")
        for index, cid in enumerate(released if isinstance(released, list) else ()):
            if not isinstance(cid, str):
                continue
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
        self, source: str, doc: Mapping[str, Any], type_name: str, state: _Dialogue, found: list[Finding]
    ) -> None:
        self._time(doc, state, found)
        request_id = doc.get("RequestID")
        if not isinstance(request_id, str):
            return
        if request_id in self._answered and request_id not in state.pending:
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
                    f"RequestID {request_id} names no earlier {type_name} Request of dialogue {doc.get('DialogID')}.",
                    f'{type_name} Functional Requirement "Correlation"; DECISIONS D16',
                )
            )
            return
        self._answered.add(sys.intern(request_id))
        turn = doc.get("TurnIndex")
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
        time = simple_time_seconds(doc.get("QueryTime"))
        already = any(f.rule == "time-backwards" for f in found)
        if not already and time and pending.time and time[0] == pending.time[0] and time[1] < pending.time[1]:
            found.append(
                Finding.of(
                    "time-backwards",
                    ("QueryTime",),
                    f"The Response is dated {pending.time[1] - time[1]:.3f} s before its Request ({pending.source}).",
                    "Table 1, QueryTime (NOTES 6.3 D13)",
                )
            )
        self._payload_kind(doc, type_name, pending, found)
        if type_name == "BKN-PRC":
            self._representation(doc)
        if type_name == "BKN-DAC":
            self._response_commitments(doc, state, pending, found)
            self._response_feasibility(doc, pending, found)
        if type_name == "BKN-PAL":
            self._stance(doc, pending, found)

    def _representation(self, doc: Mapping[str, Any]) -> None:
        """Fold what Prompt Creation returns into the dialogue's context (see :class:`_Context`)."""
        representation = doc.get("Representation")
        context = self._opened.get(doc.get("DialogID"))  # type: ignore[arg-type]
        if not isinstance(representation, dict) or context is None or doc.get("Outcome") == "not_answered":
            return
        if isinstance(representation.get("ActionContext"), dict):
            context.action_context = representation["ActionContext"]
        added: set[str] = set()
        for key in ("ResolvedReferents", "ActionContext"):
            _entities(representation.get(key), added)
        context.entities |= added
        session = doc.get("SessionID")
        if isinstance(session, str):
            self._session_entities.setdefault(session, set()).update(added)

    def _payload_kind(self, doc: Mapping[str, Any], type_name: str, pending: _Pending, found: list[Finding]) -> None:
        if doc.get("Outcome") != "answered" or not isinstance(pending.kind, str):
            return
        if type_name == "BKN-DAC" and pending.kind in ("feasibility", "commitment"):
            wanted_key = "Feasibility" if pending.kind == "feasibility" else "CommitmentStatus"
            if not doc.get(wanted_key):
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
        if type_name == "BKN-DAC" and doc.get("Feasibility"):
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
        payload = doc.get(holder)
        if not isinstance(payload, dict) or not any(payload.get(k) for k in keys):
            found.append(
                Finding.of(
                    "payload-kind",
                    (holder,),
                    f"The Request asked for {pending.kind} and the Outcome is answered, but {holder} carries "
                    f"no {' or '.join(keys)}.",
                    f"{type_name} Table 3, {holder}: 'as appropriate to the Kind of the Request' (NOTES 6.3 O2)",
                )
            )

    def _response_feasibility(self, doc: Mapping[str, Any], pending: _Pending, found: list[Finding]) -> None:
        feasibility = doc.get("Feasibility")
        if not isinstance(feasibility, dict) or not pending.steps:
            return
        reported = [(item.get("Step"), item.get("PAStatus")) for item in _items(feasibility.get("Steps"))]
        reported = [(step, status) for step, status in reported if _is_step(step)]
        asked = {step for step, _ in pending.steps}
        answered = {step for step, _ in reported}
        partial = doc.get("Outcome") == "partially_answered"
        if answered != asked and not (partial and answered < asked):
            missing = sorted(asked - answered, key=str)
            extra = sorted(answered - asked, key=str)
            parts = [f"no outcome for Step {', '.join(map(str, missing))}" if missing else ""]
            parts.append(f"Step {', '.join(map(str, extra))} not in the Request" if extra else "")
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
        for comparison in compare(pending.predictions, statuses):
            # Only "stricter" is worth a warning: Domain Access accepted a step that the
            # ActionContext rules out. Where it reports a failure the ActionContext cannot
            # show (missed) or names another failure (differs), Domain Access knows more.
            if comparison.kind == "stricter":
                index = next(i for i, (step, _) in enumerate(reported) if step == comparison.step)
                found.append(
                    Finding.of(
                        "precheck-differs",
                        ("Feasibility", "Steps", index, "PAStatus"),
                        f"Heuristic pre-check: Step {comparison.step} is reported {comparison.reported}, "
                        f"but the ActionContext suggests {comparison.predicted} ({comparison.reason}).",
                        "NOTES 4.7 mapping table (a heuristic of pgm-explore, not a spec rule)",
                    )
                )

    def _response_commitments(
        self, doc: Mapping[str, Any], state: _Dialogue, pending: _Pending, found: list[Finding]
    ) -> None:
        reported: set[str] = set()
        for index, item in enumerate(
            doc.get("CommitmentStatus") if isinstance(doc.get("CommitmentStatus"), list) else ()
        ):
            if not isinstance(item, dict) or not isinstance(cid := item.get("CommitmentID"), str):
                continue
            reported.add(cid)
            status = item.get("Status")
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
        if missing and doc.get("Outcome") != "not_answered":
            found.append(
                Finding.of(
                    "commitment-unconfirmed",
                    ("CommitmentStatus",),
                    f"The Request ({pending.source}) submitted {', '.join(missing)}, which CommitmentStatus "
                    "does not report (retained or conflicting).",
                    "BKN-DAC Table 3, CommitmentStatus (NOTES 6.3 C4)",
                )
            )

    def _stance(self, doc: Mapping[str, Any], pending: _Pending, found: list[Finding]) -> None:
        stance = doc.get("Stance")
        if doc.get("Outcome") != "answered" or not isinstance(stance, dict) or not pending.constraints:
            return
        for key in ("Role", "Locale"):
            wanted, given = pending.constraints.get(key), stance.get(key)
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
