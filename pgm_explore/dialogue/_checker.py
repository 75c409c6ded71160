"""The transcript checker's driver: one message at a time, in the order they happened.

:class:`TranscriptChecker` takes each message (or what :func:`~pgm_explore.dialogue._facts.facts_of`
read of it), runs the rules of :mod:`._rules` against what it remembers (:mod:`._state`) and returns
what it found (:class:`Found`): the findings, and for a BKN-DAC Request the ActionContext in force
and the heuristic pre-check of its steps, which the tables show beside the reported PA Status.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from operator import itemgetter
from typing import Any, overload

from pgm_explore._engine import older_objects_frozen
from pgm_explore.dialogue import _rules
from pgm_explore.dialogue._facts import Facts, facts_of
from pgm_explore.dialogue._rules import PAYLOAD_FITS, REQUEST_RULES, RESPONSE_RULES
from pgm_explore.dialogue._state import (
    PendingRequest,
    TranscriptState,
    stance_constraints,
)
from pgm_explore.dialogue.precheck import Prediction
from pgm_explore.io import Item
from pgm_explore.io import report as report_on
from pgm_explore.validation import MAX_FINDINGS, Finding, Report, RuleCode, Tally

__all__ = ["Found", "TranscriptChecker", "TranscriptFinding", "check_documents", "older_objects_frozen"]


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


@dataclass(slots=True)
class Found(Sequence[TranscriptFinding]):
    """What the checker found at one message (or at the end of the transcript).

    It is the sequence of its :attr:`findings` (``for f in checker.feed(...)``, ``len``, truth),
    as :meth:`TranscriptChecker.feed` returned a list of findings before it returned more.
    (Not frozen: one is made for every BKN-DAC Request, and a frozen dataclass takes three times
    as long to make.)
    """

    findings: tuple[TranscriptFinding, ...] = ()
    action_context: Mapping[str, Any] | None = None
    """For a BKN-DAC Request: the ActionContext in force (its dialogue's PC Prompt's, or a later
    BKN-PRC Response's, else the latest PC Prompt's of its session); None when there is none."""
    predictions: list[Prediction] | None = None
    """For a BKN-DAC Request with steps under an ActionContext: the HEURISTIC pre-check of each
    step (:func:`~pgm_explore.dialogue.precheck.predict`), the one its Response is held to."""

    @overload
    def __getitem__(self, index: int) -> TranscriptFinding: ...

    @overload
    def __getitem__(self, index: slice) -> Sequence[TranscriptFinding]: ...

    def __getitem__(self, index: int | slice) -> TranscriptFinding | Sequence[TranscriptFinding]:
        return self.findings[index]

    def __len__(self) -> int:
        return len(self.findings)

    def __iter__(self) -> Iterator[TranscriptFinding]:
        return iter(self.findings)


_NOTHING = Found()  # (what most messages find: one object for all of them)
_SECOND = itemgetter(1)


class TranscriptChecker:
    """Checks a transcript fed one message at a time, in the order they happened.

    >>> checker = TranscriptChecker()
    >>> found = checker.feed("t.jsonl:1", {"Header": "PGM-KPA-V1.0", "Mode": "RS", "RequestID": "q-9", "DialogID": "d"})
    >>> "request-unknown" in {f.rule for f in found}
    True
    """

    def __init__(self, *, contexts: bool = True) -> None:
        """``contexts``: whether :class:`Found` carries the ActionContext and pre-check of each
        BKN-DAC Request (the tables show them); without, it is only the findings, as ``check``
        needs them (and a message with none costs no object of its own)."""
        self._state = TranscriptState()
        self.messages = 0
        # The (DialogID, data type) of messages with both but no Mode: no rule keeps them, and
        # the dialogue count needs them (rare, so taking them here costs the others nothing).
        self._others: set[tuple[str, str]] = set()
        self._contexts = contexts

    def feed(self, source: str, document: Any, problem: Finding | None = None) -> Found:
        """Validate one message and check it against what came before; return what was found."""
        # The bulk reader's own reporting: a problem is the report's only finding, a message
        # that is itself a JSON string is "not an object" (not text to parse), and a value too
        # deep for the schema engines is a finding rather than a crash.
        return self.feed_report(source, document, report_on(Item(source, None, None, document, problem), built=True))

    def feed_report(self, source: str, document: Any, report: Report) -> Found:
        """Like :meth:`feed`, for a message already validated (the composers have the report)."""
        return self.feed_facts(source, facts_of(document, report))

    def feed_facts(self, source: str, facts: Facts) -> Found:
        """Like :meth:`feed`, for what :func:`~pgm_explore.dialogue._facts.facts_of` read of a
        message (the bulk path has the facts made where the message was read, on a worker for a big file)."""
        return self.feed_line(source, -1, facts)

    def feed_line(self, head: str, line: int, facts: Facts) -> Found:
        """:meth:`feed_facts` for the message whose source is ``f"{head}{line}"`` (``head`` "PATH:"),
        or ``head`` itself for a negative ``line``: the source is written out only for a message
        that needs it (a finding, a PC Prompt), not for every message of a big file."""
        out: list[Found] = []
        self._feed(head, (line,), (facts,), out)
        return out[0] if out else _NOTHING

    def feed_run(self, head: str, lines: Sequence[int], facts: Sequence[Facts]) -> list[Found]:
        """:meth:`feed_line` for each message of a run (``lines`` and ``facts`` of the same
        length, as :func:`~pgm_explore.dialogue._facts.iter_facts` gives them), in order: what
        was found at those that have anything to show, in their order (most have nothing)."""
        out: list[Found] = []
        self._feed(head, lines, facts, out)
        return out

    def _feed(self, head: str, lines: Sequence[int], run: Sequence[Facts], out: list[Found]) -> None:
        # This runs for every message of a transcript, in the one process that sees them all:
        # the common case (a conforming message with nothing to say) must cost little more
        # than the dictionary lookups it needs. So a run of messages is one call, with what
        # every message reads looked up once for the run; the rules are looked up once by
        # data type and mode, and a rule is called only when the message gives it something to
        # find (most QueryIDs are new, most turns and times follow the last, most Responses
        # carry what was asked): the looks that decide it are made here, and the rules of
        # _rules make the findings.
        state = self._state
        ids = state.query_ids
        dialogues = state.dialogues
        log = state.sources
        add_line = log.add_line
        contexts = self._contexts
        self.messages += len(run)
        # (A run of consecutive lines, as the bulk reader gives them, is logged at once: the number
        # of a line that needs one, for its QueryID or PC Prompt, is then ``offset + line``.)
        offset = log.add_lines(head, lines) if type(lines) is range and lines.step == 1 and lines.start >= 0 else None
        found: list[Finding] = []  # (one list for the run, emptied after a message that found something)
        for line, facts in zip(lines, run, strict=True):
            source = head if line < 0 else None
            type_name, dialog = facts.type, facts.dialog
            if facts.findings:
                found.extend(facts.findings)
            request: PendingRequest | None = None
            action_context = None
            if type_name == "PC Prompt":
                prompt_id = facts.prompt_id
                if prompt_id is not None or dialog is not None:
                    # Where it was read, logged once for its PCPromptID and the context it opens.
                    if offset is not None:
                        logged = offset + line
                    else:
                        logged = add_line(head, line) if source is None else log.add(source)
                    if prompt_id is not None:
                        _rules.prompt_id_unused(state, logged, prompt_id, found)
                    if dialog is not None:
                        _rules.dialogue_opened_once(state, dialog, found)
                        state.open_dialogue(logged, facts)
            elif type_name is not None and dialog is not None and facts.mode is not None:
                query_id = facts.query_id
                if query_id is not None:
                    if query_id in ids:
                        if source is None:
                            source = f"{head}{line}"
                        _rules.query_id_unused(state, source, query_id, found)
                    else:
                        if offset is not None:
                            logged = offset + line
                        else:
                            logged = add_line(head, line) if source is None else log.add(source)
                        if state.query_places is None:  # (TranscriptState.new_query_id, inline)
                            ids[query_id] = 0
                            state.query_sources.append(logged)
                        else:
                            state.new_query_id(query_id, logged)
                dialogue = dialogues[type_name].get(dialog)
                if dialogue is None:
                    opener = state.opened.get(dialog)
                    dialogue = state.begin(dialog, type_name, opener)
                else:
                    opener = dialogue.opener  # (state.opened's, kept with the dialogue)
                if opener is None:
                    if type_name == "BKN-PRC":
                        _rules.opened_by_a_prompt(dialog, found)
                elif facts.ids != opener.ids:
                    _rules.context_ids_match(facts, dialog, opener, found)
                asks = facts.mode == "RQ"
                if asks:  # (a Request's turn, then its time: the order of their findings)
                    turn = facts.turn
                    last_turn = dialogue.last_turn
                    if type(turn) is int and (turn == 0 if last_turn is None else turn == last_turn + 1):
                        dialogue.last_turn = turn  # (the first turn, or the next: what turn_follows finds right)
                    else:
                        turn = _rules.turn_follows(facts, type_name, dialogue, found)
                else:
                    before = len(found)  # (a Response's findings before its time's)
                time = facts.time
                if isinstance(time, float):  # (an absolute time, as good as every message's: Facts.time)
                    last = dialogue.last_time  # (time-backwards, looked at here: most times move forward)
                    if last is not None and time < last and dialogue.last_absolute:
                        _rules.time_moves_forward(facts, dialogue, found)
                    else:
                        dialogue.last_time = time
                        if not dialogue.last_absolute:  # (a Struct's attribute set costs a call: only if not yet)
                            dialogue.last_absolute = True
                elif time is not None:
                    last = dialogue.last_time
                    if last is not None and time[1] < last and time[0] == dialogue.last_absolute:
                        _rules.time_moves_forward(facts, dialogue, found)
                    else:
                        dialogue.last_absolute, dialogue.last_time = time
                if asks:
                    context = opener
                    if context is None:  # (the session's latest PC Prompt's: session_of, inline)
                        sent_ids = facts.ids
                        session = sent_ids[sent_ids.rindex("\0") + 1 :] if type(sent_ids) is str else sent_ids[2]
                        if type(session) is str:
                            context = state.session_context.get(session)
                    commitments, constraints = facts.commitments, facts.constraints
                    request = PendingRequest(
                        query_id,
                        head,
                        line,
                        turn,
                        facts.kind,
                        time,
                        facts.steps,
                        tuple(map(_SECOND, commitments)) if commitments else (),  # (their CommitmentIDs)
                        stance_constraints(constraints) if constraints else None,
                    )
                    # (what REQUEST_RULES read, and nothing else: a Request with none of them has no call)
                    if facts.entity_ids or facts.steps or commitments or facts.released:
                        REQUEST_RULES[type_name](state, facts, dialogue, request, context, found)
                    if query_id is not None:
                        if dialogue.pending is None:  # (most dialogues wait for one Request at a time)
                            dialogue.pending = request
                        else:
                            dialogue.wait(request)
                    if contexts and type_name == "BKN-DAC" and context is not None:
                        opened = context.action_context
                        action_context = opened.value if opened is not None else None
                else:
                    # The Response to the one Request its dialogue waits for (most are): taken here,
                    # and answers_a_request looks at what else it may be.
                    request_id, pending = facts.request_id, dialogue.pending
                    # (Looked up by the Request's own QueryID, the equal string whose hash was
                    # worked out when it was kept: the Response's is new, and hashing it costs more
                    # than the comparison.)
                    if (
                        request_id is not None
                        and type(pending) is PendingRequest
                        and pending.query_id == request_id
                        and not ids.get(request_id := pending.query_id, 1) & 1  # (not answered yet)
                    ):
                        dialogue.pending = None
                        request_turn = pending.turn
                        if type(request_turn) is int and request_turn >= 0:  # (TranscriptState.answer, inline)
                            ids[request_id] = request_turn << 1 | 1
                        else:
                            state.answer(request_id, request_turn)
                    else:
                        pending = _rules.answers_a_request(state, facts, type_name, dialogue, found)
                    if pending is not None:
                        turn, request_turn = facts.turn, pending.turn
                        if request_turn is not None and turn != request_turn and not isinstance(turn, bool):
                            _rules.turn_matches_request(facts, type_name, request_turn, pending.source, found)
                        # (a Response already dated before the message it follows, or of another turn: not again)
                        sent = pending.time
                        if (
                            len(found) == before
                            and time is not None
                            and sent is not None
                            and (time < sent if type(time) is float and type(sent) is float else True)
                        ):
                            _rules.time_after_request(facts, pending, found)  # (it compares any other pair)
                        kind = pending.kind
                        if facts.outcome == "answered" and isinstance(kind, str):
                            # (what payload_fits_kind reads, looked at here: most Responses carry what was asked)
                            fits = PAYLOAD_FITS[type_name].get(kind)
                            filled = facts.filled  # (bits: a mask asks, where a set took a call)
                            if fits is None or (fits[0] and not fits[0] & filled) or fits[1] & filled:
                                _rules.payload_fits_kind(state, facts, dialogue, pending, found)
                        RESPONSE_RULES[type_name](state, facts, dialogue, pending, found)
            elif type_name is not None and dialog is not None:
                self._others.add((dialog, type_name))
            if found:
                given = len(facts.findings)
                if len(found) - given > MAX_FINDINGS:
                    # The transcript rules keep at most as many findings per message as validation does.
                    tally = Tally()
                    tally.extend(found[given:])
                    found[given:] = tally.findings()
                if source is None:
                    source = f"{head}{line}"
                out.append(
                    Found(
                        tuple([TranscriptFinding(source, dialog, type_name, f) for f in found]),
                        action_context,
                        request.predictions if request is not None else None,
                    )
                )
                found.clear()
            elif action_context is not None:
                out.append(Found((), action_context, request.predictions if request is not None else None))

    def dialogues(self, others: Iterable[tuple[str, str]] = ()) -> int:
        """How many dialogues (:func:`~pgm_explore.dialogue.dialogue_key`) the messages fed so far
        belong to (those of a data type and a DialogID but no Mode too), with those of ``others``
        (more (DialogID, data type) pairs)."""
        return self._state.dialogue_count(self._others.union(others))

    def finish(self) -> Found:
        """What only the end of the transcript reveals: Requests never answered."""
        out = []
        for dialog, type_name, dialogue in self._state.waiting():
            for pending in dialogue.waiting():
                out.append(
                    TranscriptFinding(
                        pending.source,
                        dialog,
                        type_name,
                        Finding.of(
                            "unanswered",
                            ("QueryID",),
                            f"Request {pending.query_id} has no Response by the end of the transcript.",
                            data_type=type_name,
                        ),
                    )
                )
            dialogue.pending = None
        return Found(tuple(out))


def check_documents(items: Iterable[tuple[str, Any, Finding | None]]) -> list[TranscriptFinding]:
    """All findings of a transcript given as (source, document, problem) triples."""
    checker = TranscriptChecker()
    out = [f for source, document, problem in items for f in checker.feed(source, document, problem)]
    return out + list(checker.finish())
