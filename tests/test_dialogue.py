"""Transcript rules on small transcripts built in the test, one behaviour each."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from conftest import minimal_message

from pgm_explore.dialogue import Transcript, TranscriptChecker
from pgm_explore.validation import validate

SESSION = "s-1"


def _time(ms: int) -> dict[str, Any]:
    return {
        "Header": "OSD-STM-V1.5",
        "SimpleTimeID": f"t-{ms}",
        "SimpleTimeData": [
            {
                "FlagsByte": 3,
                "StartTime": ms,
                "EndTime": ms,
                "AccuracyMode": "single",
                "AccuracyPlusMinus": 1,
                "TimeType": True,
                "TimeUnit": "01",
            }
        ],
    }


def prompt(dialog: str = "d-1", ms: int = 1_000, **extra: Any) -> dict[str, Any]:
    doc = minimal_message("PC Prompt") | {"DialogID": dialog, "PCPromptID": f"p-{dialog}", "PCPromptTime": _time(ms)}
    doc["DataXMData"]["DataID"] = doc["PCPromptID"]
    return doc | extra


def request(type_name: str, query: str, turn: int, ms: int, dialog: str = "d-1", **extra: Any) -> dict[str, Any]:
    doc = minimal_message(type_name, "RQ")
    doc.update({"QueryID": query, "TurnIndex": turn, "QueryTime": _time(ms), "DialogID": dialog})
    doc["DataXMData"]["DataID"] = query
    return doc | extra


def response(
    type_name: str, query: str, answers: str, turn: int, ms: int, dialog: str = "d-1", **extra: Any
) -> dict[str, Any]:
    doc = minimal_message(type_name, "RS")
    doc.update({"QueryID": query, "RequestID": answers, "TurnIndex": turn, "QueryTime": _time(ms), "DialogID": dialog})
    doc["DataXMData"]["DataID"] = query
    for key, value in extra.items():
        if value is None:
            doc.pop(key, None)
        else:
            doc[key] = value
    return doc


def rules(documents: list[dict[str, Any]]) -> list[tuple[int, str]]:
    t = Transcript.from_documents(documents, source="t")
    return sorted((int(f.source.split("#")[1]), f.rule) for f in t.findings)


def test_a_clean_exchange_has_no_findings() -> None:
    docs = [prompt(), request("BKN-PRC", "q-1", 0, 2_000), response("BKN-PRC", "q-2", "q-1", 0, 3_000)]
    assert rules(docs) == []


def test_response_dated_before_its_request_is_reported_once() -> None:
    docs = [prompt(), request("BKN-PRC", "q-1", 0, 5_000), response("BKN-PRC", "q-2", "q-1", 0, 4_000)]
    assert rules(docs) == [(2, "time-backwards")]


def test_query_time_before_the_pc_prompt_is_backwards() -> None:
    docs = [prompt(ms=10_000), request("BKN-PRC", "q-1", 0, 5_000), response("BKN-PRC", "q-2", "q-1", 0, 11_000)]
    assert rules(docs) == [(1, "time-backwards")]


def _commitment_request(
    query: str, turn: int, ms: int, statement: str | None = None, release: bool = False
) -> dict[str, Any]:
    extra: dict[str, Any] = {"Kind": "commitment"}
    if statement is not None:
        extra["Commitments"] = [{"CommitmentID": "c-1", "Statement": statement}]
    if release:
        extra["ReleasedCommitmentIDs"] = ["c-1"]
    return request("BKN-DAC", query, turn, ms, dialog="dac-1", **extra)


def _commitment_response(query: str, answers: str, turn: int, ms: int, status: str) -> dict[str, Any]:
    return response(
        "BKN-DAC",
        query,
        answers,
        turn,
        ms,
        dialog="dac-1",
        Answer=None,
        CommitmentStatus=[{"CommitmentID": "c-1", "Status": status}],
    )


def test_conflicting_resubmission_keeps_the_retained_original() -> None:
    docs = [
        prompt(),
        _commitment_request("q-1", 0, 2_000, "The budget is 150."),
        _commitment_response("q-2", "q-1", 0, 2_500, "retained"),
        _commitment_request("q-3", 1, 3_000, "The budget is 200."),
        _commitment_response("q-4", "q-3", 1, 3_500, "conflicting"),
        _commitment_request("q-5", 2, 4_000, release=True),
        _commitment_response("q-6", "q-5", 2, 4_500, "released"),
    ]
    # Only the re-submission itself is questionable; the release finds c-1 still retained.
    assert rules(docs) == [(3, "commitment-conflict")]


def test_a_first_submission_refused_as_conflicting_is_not_held() -> None:
    docs = [
        prompt(),
        _commitment_request("q-1", 0, 2_000, "The budget is 150."),
        _commitment_response("q-2", "q-1", 0, 2_500, "conflicting"),
        _commitment_request("q-3", 1, 3_000, release=True),
        _commitment_response("q-4", "q-3", 1, 3_500, "released"),
    ]
    assert rules(docs) == [(3, "release-unknown"), (4, "commitment-status-unknown")]


def _feasibility(query: str, turn: int, ms: int, statement: str) -> dict[str, Any]:
    return request(
        "BKN-DAC",
        query,
        turn,
        ms,
        dialog="dac-1",
        Kind="feasibility",
        ProcessActions=[{"Step": 0, "Statement": statement}],
    )


def _feasible(query: str, answers: str, turn: int, ms: int) -> dict[str, Any]:
    return response(
        "BKN-DAC",
        query,
        answers,
        turn,
        ms,
        dialog="dac-1",
        Answer=None,
        Feasibility={"Steps": [{"Step": 0, "PAStatus": "Ack"}], "Overall": "feasible"},
    )


PLACE = "MM-Add Nil Lantern At ML-Fountain With SpatialAttitude With Rights (Status=Model)"


def test_action_context_of_a_prompt_creation_response_replaces_the_prompts() -> None:
    context = {"Repertoire": ["MM-Add"], "MLocations": ["ML-Stall"]}
    wider = {"Repertoire": ["MM-Add"], "MLocations": ["ML-Stall", "ML-Fountain"]}
    before = [prompt(ActionContext=context), _feasibility("q-1", 0, 2_000, PLACE), _feasible("q-2", "q-1", 0, 2_500)]
    assert rules(before) == [(2, "precheck-differs")]
    after = [
        prompt(ActionContext=context),
        request("BKN-PRC", "q-3", 0, 1_500, Kind="action_context"),
        response("BKN-PRC", "q-4", "q-3", 0, 1_800, Representation={"ActionContext": wider}),
        _feasibility("q-1", 0, 2_000, PLACE),
        _feasible("q-2", "q-1", 0, 2_500),
    ]
    assert rules(after) == []
    transcript = Transcript.from_documents(after)
    assert transcript.action_context(transcript.messages[3]) == wider


def test_feed_returns_the_action_context_and_the_predictions_it_used() -> None:
    context = {"Repertoire": ["MM-Add"], "MLocations": ["ML-Stall"]}
    checker = TranscriptChecker()
    assert not checker.feed("t#0", prompt(ActionContext=context))
    found = checker.feed("t#1", _feasibility("q-1", 0, 2_000, PLACE))
    assert (len(found), found.action_context) == (0, context)
    assert [(p.step, p.predicted, p.check) for p in found.predictions or ()] == [(0, "LocOOR", "m-location")]
    answered = checker.feed("t#2", _feasible("q-2", "q-1", 0, 2_500))
    assert [f.rule for f in answered] == ["precheck-differs"] and answered.predictions is None
    assert answered.findings[0] is answered[0] and "LocOOR" in answered[0].message


def test_a_plan_sent_again_under_one_action_context_is_judged_alike_and_has_its_own_predictions() -> None:
    # (The pre-check of a plan is kept for the next Request of the same plan under the same
    # ActionContext: each Request still gets what the pre-check says, in a list of its own.)
    context = {"Repertoire": ["MM-Add"], "MLocations": ["ML-Stall"]}
    checker = TranscriptChecker()
    checker.feed("t#0", prompt(ActionContext=context))
    first = checker.feed("t#1", _feasibility("q-1", 0, 2_000, PLACE))
    assert [f.rule for f in checker.feed("t#2", _feasible("q-2", "q-1", 0, 2_500))] == ["precheck-differs"]
    again = checker.feed("t#3", _feasibility("q-3", 1, 3_000, PLACE))
    assert [f.rule for f in checker.feed("t#4", _feasible("q-4", "q-3", 1, 3_500))] == ["precheck-differs"]
    assert first.predictions == again.predictions and first.predictions is not again.predictions
    assert [(p.step, p.predicted) for p in again.predictions or ()] == [(0, "LocOOR")]


def test_one_action_context_is_kept_once_and_one_beyond_64_bits_on_its_own() -> None:
    # (The facts carry an ActionContext as MessagePack, which the checker keeps one copy of for
    # every dialogue that has it, decoded once; one that MessagePack cannot write stays a dict.)
    context = {"Repertoire": ["MM-Add"], "MLocations": ["ML-Stall"], "MaxSteps": 4}
    huge = context | {"MaxSteps": 2**64}
    checker = TranscriptChecker()
    for number, (dialog, given) in enumerate([("d-1", context), ("d-2", dict(context)), ("d-3", huge)]):
        assert not checker.feed(f"t#{number}", prompt(dialog, ActionContext=given))
    state = checker._state
    opened = [state.opened[dialog].action_context for dialog in ("d-1", "d-2", "d-3")]
    assert opened[0] is opened[1] and list(state.action_contexts.values()) == [opened[0]]
    assert opened[0] is not None and opened[0].value == context and list(opened[0].value) == list(context)
    assert opened[2] is not None and opened[2].value == huge and opened[2].value["MaxSteps"] == 2**64
    found = checker.feed("t#3", _feasibility("q-1", 0, 2_000, PLACE) | {"DialogID": "d-3"})
    assert found.action_context == huge and [p.predicted for p in found.predictions or ()] == ["LocOOR"]


def test_an_empty_action_context_is_in_force_but_rules_nothing_out() -> None:
    docs = [prompt(ActionContext={}), _feasibility("q-1", 0, 2_000, "Track Nil x"), _feasible("q-2", "q-1", 0, 2_500)]
    t = Transcript.from_documents(docs)
    request = t.messages[1]
    assert t.action_context(request) == {}
    # Shown in the tables (the statement does not parse), yet no precheck-differs: nothing in force
    # rules it out (validation says what is wrong with the statement).
    assert [p.predicted for p in t.predicted(request) or ()] == ["FaultyReq"]
    assert rules(docs) == [(1, "statement-syntax")]


def test_the_checker_and_domain_access_keep_commitments_alike() -> None:
    # The reference partner answers; the checker, reading the exchange, finds nothing to say.
    pytest.importorskip("mcp", reason="the reference partners need the mcp extra")
    from pgm_explore.mcp import DomainAccess

    partner = DomainAccess()
    ids = {key: minimal_message("BKN-DAC", "RQ")[key] for key in ("MInstance", "UEnvironment", "SessionID")}
    checker = TranscriptChecker()
    asked = [
        _commitment_request("q-1", 0, 2_000, "The budget is 150."),
        _commitment_request("q-3", 1, 3_000, "The budget is 200."),
        _commitment_request("q-5", 2, 4_000, release=True),
    ]
    findings = []
    for index, ask in enumerate(asked):
        ask.update(ids)
        findings += [f.rule for f in checker.feed(f"t#{2 * index}", ask)]
        findings += [f.rule for f in checker.feed(f"t#{2 * index + 1}", partner.answer(ask))]
    # Only the re-submission itself, which the partner refuses too. (It dates its Responses now, after
    # Requests dated in 1970: time-backwards is no matter here.)
    assert [rule for rule in findings if rule != "time-backwards"] == ["commitment-conflict"]
    assert partner.retained("dac-1") == {}


def test_entities_of_every_pc_prompt_of_the_session_are_known() -> None:
    first = prompt("d-1", 1_000, ResolvedReferents=[{"Expression": "that stall", "EntityID": "stall-05"}])
    second = prompt("d-2", 5_000, ResolvedReferents=[{"Expression": "the lantern", "EntityID": "lantern-1"}])
    ask = request("BKN-DAC", "q-1", 0, 6_000, dialog="dac-1", Kind="affordances", EntityIDs=["stall-05", "ghost"])
    answer = response(
        "BKN-DAC", "q-2", "q-1", 0, 6_500, dialog="dac-1", Answer={"Affordances": [{"Action": "Inspect"}]}
    )
    assert rules([first, second, ask, answer]) == [(2, "entity-unknown")]
    finding = next(f for f in Transcript.from_documents([first, second, ask, answer]).findings)
    assert "ghost" in finding.message and "stall-05" not in finding.message


def test_malformed_steps_do_not_crash_the_checker() -> None:
    ask = _feasibility("q-1", 0, 2_000, PLACE)
    answer = _feasible("q-2", "q-1", 0, 2_500)
    answer["Feasibility"]["Steps"][0]["Step"] = [0]
    t = Transcript.from_documents([prompt(ActionContext={"Repertoire": ["MM-Add"]}), ask, answer])
    assert any(f.rule == "type" for f in t.findings)


def test_a_response_before_its_request_is_not_paired() -> None:
    answer = response("BKN-PAL", "q-2", "q-1", 0, 2_500, dialog="pal-1")
    ask = request("BKN-PAL", "q-1", 0, 2_000, dialog="pal-1")
    t = Transcript.from_documents([answer, ask])
    assert [(e.request.position, e.response) for e in t.exchanges()] == [(1, None)]
    assert sorted(f.rule for f in t.findings) == ["request-unknown", "time-backwards", "unanswered"]


def test_latency_needs_one_clock() -> None:
    ask = request("BKN-PAL", "q-1", 0, 2_000, dialog="pal-1")
    answer = response("BKN-PAL", "q-2", "q-1", 0, 2_500, dialog="pal-1")
    t = Transcript.from_documents([ask, answer])
    assert t.exchanges()[0].latency == 0.5
    relative = copy.deepcopy(answer)
    relative["QueryTime"]["SimpleTimeData"][0].update(TimeType=False, FlagsByte=2)
    assert Transcript.from_documents([ask, relative]).exchanges()[0].latency is None


def test_paths_may_be_path_objects(tmp_path: Any) -> None:
    import json

    from pgm_explore.dialogue import check_paths

    path = tmp_path / "t.jsonl"
    path.write_text(json.dumps(request("BKN-PAL", "q-1", 0, 2_000, dialog="pal-1")) + "\n", encoding="utf-8")
    assert [f.rule for f in Transcript.load(path).findings] == ["unanswered"]
    assert [f.rule for f in check_paths([path])] == ["unanswered"]


def test_a_message_that_is_a_json_string_is_not_an_object() -> None:
    t = Transcript.from_documents(["hello"])
    assert [f.rule for f in t.findings] == ["not-object"]


def test_counts_read_as_english_one_warning_not_one_warnings() -> None:
    # issue #12: "1 warnings" in the transcript summary and its notebook badge.
    doc = minimal_message("PC Prompt") | {"Prompt": ""}
    transcript = Transcript.from_documents([doc])
    assert str(transcript).splitlines()[0] == "1 message, 0 errors, 1 warning"
    html = transcript._repr_mimebundle_()["text/html"]
    assert "1 message in 1 dialogue" in html and ">1 warning<" in html and ">0 errors<" in html
    report = validate(doc)
    assert ">1 warning<" in report._repr_mimebundle_()["text/html"]


def test_a_transcript_built_in_python_judges_integers_longer_than_python_writes() -> None:
    # issue #11: the compiled engine took 10**5000 for a FlagsByte of at most 255.
    doc = minimal_message("BKN-PAL", "RQ")
    doc["QueryTime"]["SimpleTimeData"][0]["FlagsByte"] = 10**5000
    where = ("range", "$.QueryTime.SimpleTimeData[0].FlagsByte")
    assert where in [(f.rule, f.path) for f in Transcript.from_documents([doc]).findings]
    assert [(f.rule, f.path) for f in TranscriptChecker().feed("x", doc)] == [where]


def test_a_reused_query_id_names_the_first_source_as_it_was_written() -> None:
    first = request("BKN-PAL", "q-1", 0, 2_000, dialog="pal-1")
    again = request("BKN-PAL", "q-1", 1, 3_000, dialog="pal-1")
    checker = TranscriptChecker()
    checker.feed("log.jsonl:007", first)  # (no reader writes a line so; a caller may)
    (reused,) = [f for f in checker.feed("log.jsonl:8", again) if f.rule == "query-id-reused"]
    assert "at log.jsonl:007;" in reused.message


D16_IDS = ("query-id-reused", "response-duplicate")


def test_every_reused_query_id_names_its_own_first_source() -> None:
    # Where a QueryID was first used is found by its place among the QueryIDs kept: by going
    # through them for the first few findings, by an index kept up to date after. Each reuse and
    # each second Response, before and after the index and for QueryIDs kept after it, names
    # the message that used it first.
    checker = TranscriptChecker()
    sources: dict[str, str] = {}
    found: list[tuple[str, str]] = []
    line = 0

    def feed(doc: dict[str, Any]) -> None:
        nonlocal line
        line += 3  # (lines apart, as other messages would leave them)
        source = f"log.jsonl:{line}"
        sources.setdefault(doc["QueryID"], source)
        found.extend((f.rule, f.message) for f in checker.feed(source, doc) if f.rule in D16_IDS)

    for n in range(12):
        feed(request("BKN-PAL", f"q-{n}", n, 1_000 + n, dialog="pal-1"))
        feed(response("BKN-PAL", f"r-{n}", f"q-{n}", n, 1_000 + n, dialog="pal-1"))
    for n in (7, 0, 11, 3, 5, 9, 1):  # (more than the passes through the QueryIDs kept)
        feed(request("BKN-PAL", f"q-{n}", 20 + n, 2_000 + n, dialog="pal-2"))
        feed(response("BKN-PAL", f"r-{n}", f"q-{n}", 20 + n, 2_000 + n, dialog="pal-2"))
        feed(response("BKN-PAL", f"x-{n}", f"q-{n}", n, 2_000 + n, dialog="pal-1"))
    feed(request("BKN-PAL", "q-new", 40, 3_000, dialog="pal-1"))
    feed(request("BKN-PAL", "q-new", 41, 3_001, dialog="pal-1"))
    feed(response("BKN-PAL", "r-0", "q-new", 41, 3_002, dialog="pal-1"))
    wanted = []
    for n in (7, 0, 11, 3, 5, 9, 1):
        wanted += [("query-id-reused", f"q-{n}"), ("query-id-reused", f"r-{n}"), ("response-duplicate", f"q-{n}")]
    wanted += [("query-id-reused", "q-new"), ("query-id-reused", "r-0")]
    assert [rule for rule, _ in found] == [rule for rule, _ in wanted]
    for (rule, message), (_, query_id) in zip(found, wanted, strict=True):
        if rule == "query-id-reused":
            assert f"QueryID {query_id} was already used by the message at {sources[query_id]};" in message
        else:
            assert f"Request {query_id} was already answered" in message


def test_a_second_response_with_another_turn_has_both_d16_errors() -> None:
    # D16 names both: a second Response to the same Request, and a TurnIndex other than the Request's.
    # The Request's turn is remembered whatever it is: small, beyond what the state packs, or not an integer.
    for turn in (0, 2**40, "zero"):
        docs = [
            prompt(),
            request("BKN-PRC", "q-1", turn, 2_000),  # type: ignore[arg-type]
            response("BKN-PRC", "q-2", "q-1", turn, 3_000),  # type: ignore[arg-type]
            response("BKN-PRC", "q-3", "q-1", 7, 4_000),
        ]
        found = [(f.rule, f.message) for f in Transcript.from_documents(docs, source="t").findings if "#3" in f.source]
        assert [rule for rule, _ in found] == ["response-duplicate", "turn-mismatch"], turn
        assert f"(t#1) has TurnIndex {turn};" in found[1][1]
        same_turn = [*docs[:3], response("BKN-PRC", "q-3", "q-1", turn, 4_000)]  # type: ignore[arg-type]
        assert [rule for index, rule in rules(same_turn) if index == 3 and rule != "type"] == ["response-duplicate"]


def _order(documents: list[dict[str, Any]]) -> list[tuple[int, str]]:
    """(message, rule) of every finding, in the order they are reported."""
    return [(int(f.source.split("#")[1]), f.rule) for f in Transcript.from_documents(documents, source="t").findings]


def test_requests_waiting_together_are_answered_in_any_order() -> None:
    docs = [
        request("BKN-PAL", "q-1", 0, 1_000, dialog="pal-1"),
        request("BKN-PAL", "q-2", 1, 1_100, dialog="pal-1"),
        request("BKN-DAC", "q-9", 0, 1_150, dialog="dac-1"),
        request("BKN-PAL", "q-3", 2, 1_200, dialog="pal-1"),
        request("BKN-PAL", "q-4", 3, 1_250, dialog="pal-1"),
        response("BKN-PAL", "r-2", "q-2", 1, 1_300, dialog="pal-1"),
        response("BKN-PAL", "r-1", "q-1", 0, 1_400, dialog="pal-1"),
        response("BKN-PAL", "r-4", "q-4", 3, 1_450, dialog="pal-1"),
        response("BKN-PAL", "r-5", "q-1", 0, 1_500, dialog="pal-1"),  # a second Response
        response("BKN-PAL", "r-6", "q-2", 2, 1_600, dialog="pal-1"),  # a second one, of another turn
    ]
    # What is left waiting is reported at the end, dialogue by dialogue in the order they began.
    assert _order(docs) == [
        (8, "response-duplicate"),
        (9, "response-duplicate"),
        (9, "turn-mismatch"),
        (3, "unanswered"),
        (2, "unanswered"),
    ]


def test_a_request_that_reuses_a_waiting_query_id_takes_its_place() -> None:
    docs = [
        request("BKN-PAL", "q-1", 0, 1_000, dialog="pal-1"),
        request("BKN-PAL", "q-2", 1, 1_100, dialog="pal-1"),
        request("BKN-PAL", "q-1", 2, 1_200, dialog="pal-1"),
        response("BKN-PAL", "r-1", "q-1", 0, 1_300, dialog="pal-1"),
    ]
    found = Transcript.from_documents(docs, source="t").findings
    assert [(f.source, f.rule) for f in found] == [
        ("t#2", "query-id-reused"),
        ("t#3", "turn-mismatch"),
        ("t#1", "unanswered"),
    ]
    assert "(t#2) has TurnIndex 2" in found[1].message


def _referent(entity: str) -> list[dict[str, str]]:
    return [{"Expression": f"the {entity}", "EntityID": entity}]


def test_a_dialogue_keeps_its_own_entities_apart_from_its_session() -> None:
    # Without a SessionID, a Request is held to the Entities of its own dialogue's PC Prompt (and
    # what that dialogue's Prompt Creation returned); with one, to those of the whole session.
    first = prompt("d-1", 1_000, ResolvedReferents=_referent("stall-05"))
    second = prompt("d-2", 1_100, ResolvedReferents=_referent("lantern-1"))
    other = prompt("d-3", 1_150, SessionID="s-2", ResolvedReferents=_referent("well-2"))
    # Prompt Creation is asked and answers, in dialogue d-3, under session s-1: one Entity more.
    ask = request("BKN-PRC", "q-1", 0, 1_200, dialog="d-3")
    answer = response(
        "BKN-PRC",
        "q-2",
        "q-1",
        0,
        1_300,
        dialog="d-3",
        Outcome="answered",
        Representation={"Text": "A crate too.", "ResolvedReferents": _referent("crate-7")},
    )

    def asking(query: str, ms: int, dialog: str, session: str | None, entity: str) -> dict[str, Any]:
        doc = request("BKN-DAC", query, 0, ms, dialog=dialog, Kind="affordances", EntityIDs=[entity])
        if session is None:
            del doc["SessionID"]
        else:
            doc["SessionID"] = session
        return doc

    asks = [
        asking("q-3", 2_000, "d-1", None, "lantern-1"),  # the session's second PC Prompt's, not d-1's
        asking("q-4", 2_100, "d-1", None, "crate-7"),  # the session's, by d-3's Response, not d-1's
        asking("q-5", 2_200, "d-2", "s-1", "lantern-1"),
        asking("q-6", 2_300, "d-2", "s-1", "crate-7"),
        asking("q-7", 2_400, "d-2", "s-1", "stall-05"),
        asking("q-8", 2_500, "d-3", None, "crate-7"),  # d-3's own
        asking("q-9", 2_600, "d-3", "s-2", "crate-7"),  # not s-2's: the Response said s-1
        asking("q-10", 2_700, "d-3", "s-2", "well-2"),
    ]
    found = [
        (position, rule)
        for position, rule in _order([first, second, other, ask, answer, *asks])
        if rule in ("entity-unknown", "context-mismatch")
    ]
    assert found == [
        (3, "context-mismatch"),
        (4, "context-mismatch"),
        (5, "entity-unknown"),
        (6, "entity-unknown"),
        (11, "entity-unknown"),
    ]


def test_entities_learnt_by_the_hundred_and_by_the_thousand_of_sets() -> None:
    # Prompt Creation resolves 300 referents in one Response, then one more in each of the next
    # two; thousands of PC Prompts mention sets of their own. Each set is known where it was said.
    docs = [prompt("d-1", 1_000, ResolvedReferents=_referent("stall-05"))]
    many = [entity for i in range(300) for entity in _referent(f"e-{i}")]
    for turn, referents in enumerate([many, _referent("e-300"), _referent("e-301")]):
        docs.append(request("BKN-PRC", f"q-{turn}", turn, 1_100 + turn, dialog="d-1"))
        representation = {"Text": "More.", "ResolvedReferents": referents}
        answer = response("BKN-PRC", f"r-{turn}", f"q-{turn}", turn, 1_150 + turn, dialog="d-1", Outcome="answered")
        docs.append(answer | {"Representation": representation})
    for number in range(4_200):
        docs.append(prompt(f"o-{number}", 2_000, SessionID=f"s-o{number}", ResolvedReferents=_referent(f"x-{number}")))
    for query, (dialog, session, entity) in enumerate(
        [
            ("d-1", "s-1", "e-299"),
            ("d-1", "s-1", "e-301"),
            ("d-1", "s-1", "ghost"),
            ("o-0", "s-o0", "x-0"),  # the first of the sets, forgotten by then, still known to its own
            ("o-0", "s-o0", "x-1"),
            ("o-4199", "s-o4199", "x-4199"),
        ]
    ):
        ask = request("BKN-DAC", f"k-{query}", 0, 3_000, dialog=dialog, Kind="affordances", EntityIDs=[entity])
        docs.append(ask | {"SessionID": session})
    first = len(docs) - 6
    assert [(position - first, rule) for position, rule in _order(docs) if rule == "entity-unknown"] == [
        (2, "entity-unknown"),
        (4, "entity-unknown"),
    ]


def test_a_check_leaves_the_older_objects_out_of_the_collectors_passes_and_gives_them_back(tmp_path: Any) -> None:
    import gc

    from pgm_explore.dialogue import check_paths
    from pgm_explore.dialogue._checker import older_objects_frozen

    assert gc.get_freeze_count() == 0
    with older_objects_frozen():
        assert gc.get_freeze_count() > 0  # (the objects alive before it: modules, functions, ...)
    assert gc.get_freeze_count() == 0
    path = tmp_path / "t.jsonl"
    path.write_text('{"Header": "PGM-KPA-V1.0", "Mode": "RQ", "QueryID": "q", "DialogID": "d"}\n', encoding="utf-8")
    findings = check_paths([path], workers=0)
    next(findings)
    assert gc.get_freeze_count() > 0  # while it runs ...
    list(findings)
    assert gc.get_freeze_count() == 0  # ... and given back at its end
    gc.freeze()  # someone else's freeze is theirs to undo
    try:
        frozen = gc.get_freeze_count()
        with older_objects_frozen():
            assert gc.get_freeze_count() == frozen
        assert gc.get_freeze_count() == frozen
    finally:
        gc.unfreeze()


def test_the_drivers_look_at_a_responses_payload_finds_what_payload_fits_kind_finds() -> None:
    """The checker calls payload_fits_kind only where PAYLOAD_FITS cannot rule its findings out:
    over every Kind of the spec (and one of none) and every set of the members it reads, the
    checker reports exactly what the rule itself finds."""
    from itertools import chain, combinations

    from pgm_explore.dialogue._facts import FILLED, Facts
    from pgm_explore.dialogue._rules import PAYLOAD_FITS, payload_fits_kind
    from pgm_explore.dialogue._state import DialogueState, PendingRequest, TranscriptState

    members = sorted(FILLED.values())
    compared = 0
    for type_name, fits in PAYLOAD_FITS.items():
        for kind in [*fits, "not-a-kind"]:
            for filled in chain.from_iterable(combinations(members, size) for size in (0, 1, 2)):
                checker = TranscriptChecker()
                request = Facts(type_name, "RQ", (), "d-1", query_id="q-1", turn=0, kind=kind)  # type: ignore[arg-type]
                response = Facts(
                    type_name,  # type: ignore[arg-type]
                    "RS",
                    (),
                    "d-1",
                    query_id="q-2",
                    turn=0,
                    request_id="q-1",
                    outcome="answered",
                    filled=sum(filled),
                )
                checker.feed_facts("t#0", request)
                got = [f.finding for f in checker.feed_facts("t#1", response) if f.rule == "payload-kind"]
                wanted: list[Any] = []
                pending = PendingRequest("q-1", "t#0", -1, 0, kind, None, (), (), None)
                payload_fits_kind(TranscriptState(), response, DialogueState(), pending, wanted)
                assert got == wanted, (type_name, kind, filled)
                compared += bool(wanted)
    assert compared > 100  # (the rule finds something in many of them: both sides are tried)


def _relative(doc: dict[str, Any]) -> dict[str, Any]:
    """``doc`` with its time relative (TimeType false)."""
    doc["QueryTime" if "QueryTime" in doc else "PCPromptTime"]["SimpleTimeData"][0]["TimeType"] = False
    return doc


def test_relative_and_absolute_times_are_compared_only_among_their_kind() -> None:
    """An absolute time travels as its seconds and a relative one as the pair (Facts.time): a
    relative time earlier than the absolute one before it is no time-backwards, nor an absolute
    Request's relative Response; a time earlier than the one before it of its kind is."""
    docs = [
        prompt(ms=10_000),
        _relative(request("BKN-PRC", "q-1", 0, 5_000)),
        _relative(response("BKN-PRC", "q-2", "q-1", 0, 4_000)),
        request("BKN-PRC", "q-3", 1, 11_000),
        _relative(response("BKN-PRC", "q-4", "q-3", 1, 3_000)),
        request("BKN-PRC", "q-5", 2, 10_500),
        response("BKN-PRC", "q-6", "q-5", 2, 10_400),
    ]
    assert rules(docs) == [(2, "time-backwards"), (6, "time-backwards")]
