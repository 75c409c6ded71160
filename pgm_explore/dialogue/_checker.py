"""The transcript checker's driver: one message at a time, in the order they happened.

:class:`TranscriptChecker` takes each message (or what :func:`~pgm_explore.dialogue._facts.facts_of`
read of it), runs the rules of :mod:`._rules` against what it remembers (:mod:`._state`) and returns
what it found (:class:`Found`): the findings, and for a BKN-DAC Request the ActionContext in force
and the heuristic pre-check of its steps, which the tables show beside the reported PA Status.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, overload

from pgm_explore.dialogue import _rules
from pgm_explore.dialogue._facts import Facts, facts_of
from pgm_explore.dialogue._rules import REQUEST_RULES, RESPONSE_RULES
from pgm_explore.dialogue._state import DialogueContext, DialogueState, PendingRequest, TranscriptState
from pgm_explore.dialogue.precheck import Prediction
from pgm_explore.io import Item
from pgm_explore.io import report as report_on
from pgm_explore.validation import MAX_FINDINGS, Finding, Report, RuleCode, Tally

__all__ = ["Found", "TranscriptChecker", "TranscriptFinding", "check_documents"]


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


class TranscriptChecker:
    """Checks a transcript fed one message at a time, in the order they happened.

    >>> checker = TranscriptChecker()
    >>> found = checker.feed("t.jsonl:1", {"Header": "PGM-KPA-V1.0", "Mode": "RS", "RequestID": "q-9", "DialogID": "d"})
    >>> "request-unknown" in {f.rule for f in found}
    True
    """

    def __init__(self) -> None:
        self._state = TranscriptState()
        self.messages = 0

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
        # This runs once per message of a transcript: the common case (a conforming message
        # with nothing to say) must cost little more than the dictionary lookups it needs.
        self.messages += 1
        state = self._state
        type_name, dialog, mode = facts.type, facts.dialog, facts.mode
        found: list[Finding] = list(facts.findings)
        request: PendingRequest | None = None
        action_context = None
        if type_name == "PC Prompt":
            if facts.prompt_id is not None:
                _rules.prompt_id_unused(state, source, facts.prompt_id, found)
            if dialog is not None:
                _rules.dialogue_opened_once(state, dialog, found)
                state.open_dialogue(source, facts)
        elif type_name is not None and dialog is not None and mode is not None:
            if facts.query_id is not None:
                _rules.query_id_unused(state, source, facts.query_id, found)
            opener = state.opened.get(dialog)
            if type_name == "BKN-PRC" and opener is None:
                _rules.opened_by_a_prompt(dialog, found)
            key = (dialog, type_name)
            dialogue = state.dialogues.get(key)
            if dialogue is None:
                # The PC Prompt opened the dialogue, so its time is the first in it (NOTES 6.3 D13).
                state.dialogues[(state.shared(dialog), type_name)] = dialogue = (
                    DialogueState(last_time=opener.time, last_absolute=opener.absolute) if opener else DialogueState()
                )
            if opener is not None and facts.ids != opener.ids:
                _rules.context_ids_match(facts, dialog, opener, found)
            if mode == "RQ":
                context = opener or state.context_for(dialog, facts.session)
                request = self._request(source, facts, type_name, dialogue, context, found)
                if type_name == "BKN-DAC" and context is not None and context.action_context is not None:
                    action_context = context.action_context.value
            else:
                self._response(facts, type_name, dialogue, found)
        if found:
            if len(found) - len(facts.findings) > MAX_FINDINGS:
                # The transcript rules keep at most as many findings per message as validation does.
                tally = Tally()
                tally.extend(found[len(facts.findings) :])
                found[len(facts.findings) :] = tally.findings()
            findings = tuple([TranscriptFinding(source, dialog, type_name, f) for f in found])
        elif action_context is None:
            return _NOTHING
        else:
            findings = ()
        return Found(findings, action_context, request.predictions if request is not None else None)

    def finish(self) -> Found:
        """What only the end of the transcript reveals: Requests never answered."""
        out = []
        for (dialog, type_name), dialogue in self._state.dialogues.items():
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

    # --- the two modes --------------------------------------------------------------------------

    def _request(
        self,
        source: str,
        facts: Facts,
        type_name: str,
        dialogue: DialogueState,
        context: DialogueContext | None,
        found: list[Finding],
    ) -> PendingRequest:
        turn = _rules.turn_follows(facts, type_name, dialogue, found)
        _rules.time_moves_forward(facts, dialogue, found)
        request = PendingRequest(
            facts.query_id,
            source,
            turn,
            facts.kind,
            facts.time,
            facts.steps,
            [cid for _, cid, _ in facts.commitments] if facts.commitments else [],
            facts.constraints,
        )
        for rule in REQUEST_RULES[type_name]:
            rule(self._state, facts, dialogue, request, context, found)
        if facts.query_id is not None:
            dialogue.wait(request)
        return request

    def _response(self, facts: Facts, type_name: str, dialogue: DialogueState, found: list[Finding]) -> None:
        before = len(found)
        _rules.time_moves_forward(facts, dialogue, found)
        pending = _rules.answers_a_request(self._state, facts, type_name, dialogue, found)
        if pending is None:
            return
        _rules.turn_matches_request(facts, type_name, pending.turn, pending.source, found)
        if len(found) == before:  # a Response already dated before the message it follows, or of another turn
            _rules.time_after_request(facts, pending, found)
        for rule in RESPONSE_RULES[type_name]:
            rule(self._state, facts, dialogue, pending, found)


def check_documents(items: Iterable[tuple[str, Any, Finding | None]]) -> list[TranscriptFinding]:
    """All findings of a transcript given as (source, document, problem) triples."""
    checker = TranscriptChecker()
    out = [f for source, document, problem in items for f in checker.feed(source, document, problem)]
    return out + list(checker.finish())
