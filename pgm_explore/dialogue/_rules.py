"""Transcript rules: what only the messages around a message can show.

Each rule is a small function named after what it checks. The rules of every Request and every
Response (identification, turns, times, correlation) run in the order the checker's driver
(:mod:`._checker`) calls them; the rules of one data type and mode run from one function each
(:data:`REQUEST_RULES`, :data:`RESPONSE_RULES`, at the end), in the order they are defined here,
each only when the message has what it reads. A rule appends its findings to ``found`` (most find nothing, and the rules run for every
message of a transcript: a list handed down costs less than one returned by each) and reads and
updates what the checker remembers (:mod:`._state`).

The error-level rules are exactly those of DECISIONS D16; every other rule is a warning (NOTES
6.3, with the codes of ``docs/rules.md``).

Its size (some 600 lines) is that of the list of rules: the 25 transcript rule codes of
``docs/rules.md``, each with its message and its spec reference written out, in reading order. Where
a rule needs more than a few lines of its own (the pre-check, the commitment ledger), that lives
elsewhere (:mod:`.precheck`, :mod:`.commitments`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, get_args

from pgm_explore.dialogue._facts import FILLED, Facts, ids_of, session_of, time_pair
from pgm_explore.dialogue._state import DialogueContext, DialogueState, PendingRequest, TranscriptState
from pgm_explore.dialogue.precheck import compare
from pgm_explore.spec import PAYLOAD_FOR_KIND, DACKind, PRCKind
from pgm_explore.validation import Finding
from pgm_explore.validation.findings import clip

__all__ = [
    "REQUEST_RULES",
    "PAYLOAD_FITS",
    "RESPONSE_RULES",
    "answers_a_request",
    "context_ids_match",
    "dialogue_opened_once",
    "opened_by_a_prompt",
    "payload_fits_kind",
    "prompt_id_unused",
    "query_id_unused",
    "time_after_request",
    "time_moves_forward",
    "turn_follows",
    "turn_matches_request",
]

RequestRules = Callable[
    [TranscriptState, Facts, DialogueState, PendingRequest, DialogueContext | None, list[Finding]], None
]
ResponseRules = Callable[[TranscriptState, Facts, DialogueState, PendingRequest, list[Finding]], None]


# The members a Kind asks for, as bits of Facts.filled (FILLED: "Representation.Intent").
_QUALIFIED = {
    kind: sum(FILLED[f"{holder}.{key}"] for key in set(keys)) for kind, (holder, keys) in PAYLOAD_FOR_KIND.items()
}
_FEASIBILITY, _COMMITMENT_STATUS = FILLED["Feasibility"], FILLED["CommitmentStatus"]


def _some(steps: list[Any], shown: int = 10) -> str:
    """Steps named in a message: the first ``shown``, then how many more (never the whole of a
    list of 40,000).

    >>> _some([1, 2]), _some(list(range(12)))
    ('1, 2', '0, 1, 2, 3, 4, 5, 6, 7, 8, 9 and 2 more')
    """
    named = ", ".join(clip(str(step)) for step in steps[:shown])
    return named if len(steps) <= shown else f"{named} and {len(steps) - shown:,} more"


# --- PC Prompts ---------------------------------------------------------------------------------


def prompt_id_unused(state: TranscriptState, logged: int, prompt_id: str, found: list[Finding]) -> None:
    """``logged``: where the PC Prompt was read, as its number in ``state.sources``."""
    earlier = state.prompt_ids.get(prompt_id)
    if earlier is None:
        state.prompt_ids[prompt_id] = logged
    else:
        found.append(
            Finding.of(
                "prompt-id-reused",
                ("PCPromptID",),
                f"PCPromptID {prompt_id} was already used by the PC Prompt at {state.sources.source(earlier)}; "
                "it identifies one instance.",
            )
        )


def dialogue_opened_once(state: TranscriptState, dialog: str, found: list[Finding]) -> None:
    opened = state.opened.get(dialog)
    if opened is not None:
        found.append(
            Finding.of(
                "dialog-reopened",
                ("DialogID",),
                f"DialogID {dialog} was already opened by the PC Prompt at {opened.source}; "
                "a PC Prompt opens a dialogue.",
            )
        )


# --- every Request and Response: identification ----------------------------------------------------


def query_id_unused(state: TranscriptState, source: str, query_id: str, found: list[Finding]) -> None:
    if query_id not in state.query_ids:
        state.new_query_id(query_id, state.sources.add(source))
        return
    found.append(
        Finding.of(
            "query-id-reused",
            ("QueryID",),
            f"QueryID {query_id} was already used by the message at "
            f"{state.sources.source(state.first_use(query_id))}; a QueryID identifies one Request or Response.",
        )
    )


def opened_by_a_prompt(dialog: str, found: list[Finding]) -> None:
    """For BKN-PRC, whose dialogue no PC Prompt opened."""
    found.append(
        Finding.of(
            "dialog-not-opened",
            ("DialogID",),
            f"DialogID {dialog} was opened by no earlier PC Prompt; BKN-PRC exchanges happen "
            '"during the dialogue that the PC Prompt opens".',
        )
    )


def context_ids_match(facts: Facts, dialog: str, context: DialogueContext, found: list[Finding]) -> None:
    names = ("MInstance", "UEnvironment", "SessionID")
    for key, value, expected in zip(names, ids_of(facts.ids), ids_of(context.ids), strict=True):
        if isinstance(value, str) and isinstance(expected, str) and value != expected:
            found.append(
                Finding.of(
                    "context-mismatch",
                    (key,),
                    f"{key} is {value}, but the PC Prompt that opened dialogue {dialog} ({context.source}) "
                    f"says {expected}.",
                )
            )


# --- turns and times ------------------------------------------------------------------------------


def turn_follows(facts: Facts, type_name: str, dialogue: DialogueState, found: list[Finding]) -> Any:
    """Check a Request's TurnIndex against the dialogue's last; return it (3.0 read as 3)."""
    turn = facts.turn
    if type(turn) is float and turn.is_integer():  # 3.0 is the integer 3 in JSON Schema
        turn = int(turn)
    if type(turn) is int:
        last_turn = dialogue.last_turn
        if last_turn is None:
            if turn != 0:
                found.append(
                    Finding.of(
                        "turn-start",
                        ("TurnIndex",),
                        f"The first exchange of this {type_name} dialogue has TurnIndex {turn}; turns start from 0.",
                        data_type=type_name,
                    )
                )
            dialogue.last_turn = turn
        else:
            if turn != last_turn + 1:
                found.append(
                    Finding.of(
                        "turn-gap",
                        ("TurnIndex",),
                        f"TurnIndex {turn} follows {last_turn}; the next exchange is {last_turn + 1}.",
                        data_type=type_name,
                    )
                )
            if turn > last_turn:
                dialogue.last_turn = turn
    return turn


def time_moves_forward(facts: Facts, dialogue: DialogueState, found: list[Finding]) -> None:
    time = time_pair(facts.time)
    if time is None:
        return
    last = dialogue.last_time
    if last is not None and time[0] == dialogue.last_absolute and time[1] < last:
        found.append(
            Finding.of(
                "time-backwards",
                ("QueryTime",),
                f"QueryTime is {last - time[1]:.3f} s earlier than the message before it in this dialogue.",
            )
        )
    dialogue.last_absolute, dialogue.last_time = time


# --- every Response: correlation -------------------------------------------------------------------


def answers_a_request(
    state: TranscriptState, facts: Facts, type_name: str, dialogue: DialogueState, found: list[Finding]
) -> PendingRequest | None:
    """The pending Request a Response answers (no longer pending), or None and why."""
    request_id = facts.request_id
    if request_id is None:
        return None
    entry = state.query_ids.get(request_id)
    # (the lowest bit of an entry: whether its Request has had its Response, TranscriptState.query_ids)
    if entry is not None and entry & 1 and not dialogue.waits_for(request_id):
        found.append(
            Finding.of(
                "response-duplicate",
                ("RequestID",),
                f"Request {request_id} was already answered; a Request has one Response.",
                data_type=type_name,
            )
        )
        # D16 names both errors: a second Response with the wrong TurnIndex has both.
        turn_matches_request(
            facts,
            type_name,
            state.answered_turn(request_id, entry),
            state.sources.source(state.first_use(request_id)),
            found,
        )
        return None
    pending = dialogue.take(request_id)
    if pending is None:
        found.append(
            Finding.of(
                "request-unknown",
                ("RequestID",),
                f"RequestID {request_id} names no earlier {type_name} Request of dialogue {facts.dialog}.",
                data_type=type_name,
            )
        )
        return None
    if entry is not None and not entry & 1:  # (else a reused QueryID already answered once)
        state.answer(request_id, pending.turn)  # (the dictionary keeps the key it has: no copy kept)
    return pending


def turn_matches_request(
    facts: Facts, type_name: str, request_turn: Any, request_source: str, found: list[Finding]
) -> None:
    """Check a Response's TurnIndex against that of the Request (read at ``request_source``) it answers."""
    turn = facts.turn
    if request_turn is not None and turn != request_turn and not isinstance(turn, bool):
        found.append(
            Finding.of(
                "turn-mismatch",
                ("TurnIndex",),
                f"TurnIndex is {turn}, but the Request it answers ({request_source}) has TurnIndex {request_turn}; "
                "a Response has the TurnIndex of its Request.",
                data_type=type_name,
            )
        )


def time_after_request(facts: Facts, pending: PendingRequest, found: list[Finding]) -> None:
    time, sent = time_pair(facts.time), time_pair(pending.time)
    if time and sent and time[0] == sent[0] and time[1] < sent[1]:
        found.append(
            Finding.of(
                "time-backwards",
                ("QueryTime",),
                f"The Response is dated {sent[1] - time[1]:.3f} s before its Request ({pending.source}).",
            )
        )


# --- Requests of one type -------------------------------------------------------------------------


def commitments_submitted(
    state: TranscriptState,
    facts: Facts,
    dialogue: DialogueState,
    request: PendingRequest,
    context: DialogueContext | None,
    found: list[Finding],
) -> None:
    if not (facts.commitments or facts.released):
        return
    ledger = dialogue.ledger()
    if request.commitments:
        request.new_commitments = frozenset(request.commitments).difference(ledger.held)
    for index, cid, statement in facts.commitments:
        held = ledger.conflicting(cid, statement)
        if held is not None:
            found.append(
                Finding.of(
                    "commitment-conflict",
                    ("Commitments", index, "Statement"),
                    f"Commitment {cid} is already retained with another Statement ({held.statement!r}); "
                    "release it first or use a new CommitmentID.",
                )
            )
        elif isinstance(statement, str):
            ledger.retain(state.shared(cid), statement)  # (an id kept once however many dialogues use it)
    for index, cid in facts.released:
        released = ledger.release(cid)
        if released == "unknown":
            found.append(
                Finding.of(
                    "release-unknown",
                    ("ReleasedCommitmentIDs", index),
                    f"Commitment {cid} is released, but no Request of this dialogue asked to retain it.",
                )
            )
        elif released == "already released":
            found.append(
                Finding.of(
                    "released-twice",
                    ("ReleasedCommitmentIDs", index),
                    f"Commitment {cid} was already released earlier in this dialogue.",
                )
            )


def steps_fit_action_context(
    state: TranscriptState,
    facts: Facts,
    dialogue: DialogueState,
    request: PendingRequest,
    context: DialogueContext | None,
    found: list[Finding],
) -> None:
    """MaxSteps and Repertoire, and the pre-check of every step (kept for the Response)."""
    steps = facts.steps
    if not steps or context is None or context.action_context is None:
        return
    known = context.action_context
    plan = known.plan(steps)  # (what MaxSteps and the Repertoire find of the plan, worked out once)
    request.predictions = list(plan.predictions)  # (a list of its own for each Request: the tables keep it)
    if not known.value:
        return  # (an empty ActionContext rules nothing out: its predictions are only shown)
    request.foresees_failure = plan.failing
    if plan.too_many is not None:
        found.append(
            Finding.of(
                "too-many-steps",
                ("ProcessActions",),
                f"{len(steps)} Process Actions, but the ActionContext (PC Prompt at {context.source}) "
                f"allows at most MaxSteps {plan.too_many}.",
            )
        )
    for index, prediction in plan.off_repertoire:
        found.append(
            Finding.of(
                "action-not-in-repertoire",
                ("ProcessActions", index, "Statement"),
                f"Step {prediction.step}: {prediction.reason}",
            )
        )


def entities_known(
    state: TranscriptState,
    facts: Facts,
    dialogue: DialogueState,
    request: PendingRequest,
    context: DialogueContext | None,
    found: list[Finding],
) -> None:
    entity_ids = facts.entity_ids
    if context is None or not entity_ids:
        return
    # BKN-DAC and BKN-PAL dialogues outlive the PC Prompt that started them (D15): every Entity
    # any PC Prompt of the session mentioned is known to them. (Looked up by the context's own
    # SessionID when it is the same, as most are: its hash is kept in it, where the message's
    # is worked out anew; and when all the ids are the context's, as most are, with no SessionID
    # taken out of them.)
    ids, shared = facts.ids, context.session
    session = shared if ids == context.ids else session_of(ids)
    if type(session) is str:
        if session == shared:
            known = state.session_entities.get(shared, context.entities)
        else:
            # A SessionID other than the context's (context-mismatch says so): the Entities of the
            # dialogue's PC Prompt stay known, and those of the session named are known beside them.
            known = context.entities
            named = state.session_entities.get(session)
            if named:
                known = frozenset((*known, *named))
    else:
        known = context.entities
    if not known or (type(known) is frozenset and known.issuperset(entity_ids)):
        return  # (most Requests name Entities that are known: looked at in one call)
    unknown = [e for e in entity_ids if e not in known]
    if unknown:
        found.append(
            Finding.of(
                "entity-unknown",
                ("EntityIDs",),
                f"{', '.join(unknown)} {'is' if len(unknown) == 1 else 'are'} not among the Entities the "
                f"PC Prompt at {context.source} mentions (ResolvedReferents, SceneContext, Affordances).",
                data_type=facts.type,
            )
        )


# --- Responses of one type ------------------------------------------------------------------------


def payload_fits_kind(
    state: TranscriptState, facts: Facts, dialogue: DialogueState, pending: PendingRequest, found: list[Finding]
) -> None:
    kind, type_name = pending.kind, facts.type or ""
    if facts.outcome != "answered" or not isinstance(kind, str):
        return
    if type_name == "BKN-DAC" and kind in ("feasibility", "commitment"):
        wanted_key = "Feasibility" if kind == "feasibility" else "CommitmentStatus"
        if not facts.filled & FILLED[wanted_key]:
            found.append(
                Finding.of(
                    "payload-kind",
                    (wanted_key,),
                    f"The Request asked for {kind} and the Outcome is answered, "
                    f"but the Response carries no {wanted_key}.",
                )
            )
        return
    if type_name == "BKN-DAC" and facts.filled & _FEASIBILITY:
        found.append(
            Finding.of(
                "payload-kind",
                ("Feasibility",),
                f"The Response carries Feasibility, but its Request asked for {kind}, not feasibility.",
                # The clause of the Feasibility row, which answers only a Kind feasibility.
                "BKN-DAC Table 3, Feasibility: the result for the Process Actions of the Request (NOTES 6.3 F6)",
            )
        )
    wanted = PAYLOAD_FOR_KIND.get((type_name, kind))
    if wanted is None:
        return
    holder, keys = wanted
    if not _QUALIFIED[type_name, kind] & facts.filled:
        found.append(
            Finding.of(
                "payload-kind",
                (holder,),
                f"The Request asked for {kind} and the Outcome is answered, but {holder} carries "
                f"no {' or '.join(keys)}.",
                # The clause of the row that holds what this Kind asks for.
                f"{type_name} Table 3, {holder}: 'as appropriate to the Kind of the Request' (NOTES 6.3 O2)",
            )
        )


def _fits(type_name: str, kind: str) -> tuple[int, int]:
    """What :func:`payload_fits_kind` reads of an answered Response to a Request of ``kind``:
    (the members one of which it must carry, those it must not carry), as bits of
    :attr:`~pgm_explore.dialogue._facts.Facts.filled` (0: no such condition)."""
    if type_name == "BKN-DAC" and kind in ("feasibility", "commitment"):
        return (_FEASIBILITY if kind == "feasibility" else _COMMITMENT_STATUS), 0
    return _QUALIFIED.get((type_name, kind), 0), _FEASIBILITY if type_name == "BKN-DAC" else 0


PAYLOAD_FITS: dict[str, dict[str, tuple[int, int]]] = {
    type_name: {kind: _fits(type_name, kind) for kind in kinds}
    for type_name, kinds in (("BKN-PRC", get_args(PRCKind)), ("BKN-DAC", get_args(DACKind)), ("BKN-PAL", ()))
}
"""Data type -> Kind of the spec -> (needed, forbidden): an answered Response whose ``filled``
has a bit of ``needed`` and none of ``forbidden`` (0: no such condition) has nothing for
:func:`payload_fits_kind` to find (most do). The checker's driver looks here first, so that the
common Response costs a look rather than a call; any other Kind goes to the rule itself."""


def representation_refines_context(
    state: TranscriptState, facts: Facts, dialogue: DialogueState, pending: PendingRequest, found: list[Finding]
) -> None:
    """Finds nothing: what Prompt Creation returns refines the dialogue's context (see DialogueContext)."""
    state.refine_context(facts, dialogue.opener)


def commitments_reported(
    state: TranscriptState, facts: Facts, dialogue: DialogueState, pending: PendingRequest, found: list[Finding]
) -> None:
    ledger = dialogue.ledger() if facts.statuses else dialogue.commitments
    reported: set[str] = set()
    for index, cid, status in facts.statuses:
        reported.add(cid)
        held = ledger.get(cid) if ledger is not None else None
        if held is None:
            found.append(
                Finding.of(
                    "commitment-status-unknown",
                    ("CommitmentStatus", index, "CommitmentID"),
                    f"Commitment {cid} was never submitted in this dialogue.",
                )
            )
        elif status == "released" and held.status != "released":
            found.append(
                Finding.of(
                    "commitment-status-wrong",
                    ("CommitmentStatus", index, "Status"),
                    f"Commitment {cid} is reported released, but no Request released it.",
                )
            )
        elif status == "retained" and held.status == "released":
            found.append(
                Finding.of(
                    "commitment-status-wrong",
                    ("CommitmentStatus", index, "Status"),
                    f"Commitment {cid} is reported retained after a Request released it.",
                )
            )
        elif status == "conflicting" and cid in pending.new_commitments and ledger is not None:
            # Domain Access refused to retain what this Request submitted first: the dialogue
            # does not hold it. A conflicting re-submission leaves the retained original alone.
            ledger.withdraw(cid)
    missing = [cid for cid in pending.commitments if cid not in reported]
    if missing and facts.outcome != "not_answered":
        found.append(
            Finding.of(
                "commitment-unconfirmed",
                ("CommitmentStatus",),
                f"The Request ({pending.source}) submitted {', '.join(missing)}, which CommitmentStatus "
                "does not report (retained or conflicting).",
            )
        )


def feasibility_answers_steps(
    state: TranscriptState, facts: Facts, dialogue: DialogueState, pending: PendingRequest, found: list[Finding]
) -> None:
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
            )
        )
    if not pending.foresees_failure or pending.predictions is None:
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
                )
            )


def stance_keeps_constraints(
    state: TranscriptState, facts: Facts, dialogue: DialogueState, pending: PendingRequest, found: list[Finding]
) -> None:
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
                )
            )


# --- the rules of each data type and mode, in the order their findings are reported -------------
# Dispatched once by the checker, by data type and mode. A rule is called only when the message
# has what it reads (most Requests carry no commitments, steps or Entity ids): each rule would
# return at once without it, and a call costs more than the look that saves it.


def _entities(
    state: TranscriptState,
    facts: Facts,
    dialogue: DialogueState,
    request: PendingRequest,
    context: DialogueContext | None,
    found: list[Finding],
) -> None:
    if facts.entity_ids and context is not None:
        entities_known(state, facts, dialogue, request, context, found)


def _dac_request(
    state: TranscriptState,
    facts: Facts,
    dialogue: DialogueState,
    request: PendingRequest,
    context: DialogueContext | None,
    found: list[Finding],
) -> None:
    if facts.commitments or facts.released:
        commitments_submitted(state, facts, dialogue, request, context, found)
    if facts.steps and context is not None and context.action_context is not None:
        steps_fit_action_context(state, facts, dialogue, request, context, found)
    if facts.entity_ids and context is not None:
        entities_known(state, facts, dialogue, request, context, found)


def _prc_response(
    state: TranscriptState, facts: Facts, dialogue: DialogueState, pending: PendingRequest, found: list[Finding]
) -> None:
    if facts.entities is not None:
        representation_refines_context(state, facts, dialogue, pending, found)


def _dac_response(
    state: TranscriptState, facts: Facts, dialogue: DialogueState, pending: PendingRequest, found: list[Finding]
) -> None:
    if facts.statuses or pending.commitments:
        commitments_reported(state, facts, dialogue, pending, found)
    if facts.feasibility is not None and pending.steps:
        feasibility_answers_steps(state, facts, dialogue, pending, found)


def _pal_response(
    state: TranscriptState, facts: Facts, dialogue: DialogueState, pending: PendingRequest, found: list[Finding]
) -> None:
    if facts.stance is not None and pending.constraints:
        stance_keeps_constraints(state, facts, dialogue, pending, found)


REQUEST_RULES: dict[str, RequestRules] = {"BKN-PRC": _entities, "BKN-DAC": _dac_request, "BKN-PAL": _entities}
"""The rules of a Request of each data type (after the turn and time rules), as one call. Each
sees the :class:`PendingRequest` the checker will keep for it. The checker's driver calls them only
for a Request with ``entity_ids``, ``steps``, ``commitments`` or ``released`` (what they read): a
rule that reads another of its facts must be named in that test too."""

RESPONSE_RULES: dict[str, ResponseRules] = {
    "BKN-PRC": _prc_response,
    "BKN-DAC": _dac_response,
    "BKN-PAL": _pal_response,
}
"""The rules of a Response of each data type that answers a known Request (after correlation,
turn, time and :func:`payload_fits_kind`, which every type has), as one call."""
