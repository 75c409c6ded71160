"""The reference partners answer from their files, honestly: what the domain or profile lacks is said."""

from __future__ import annotations

from typing import Any

import pytest

pytest.importorskip("mcp")

from pgm_explore.mcp import DomainAccess, PersonalityAlignment, PromptCreation
from pgm_explore.models import data_exchange_metadata, simple_time_now
from pgm_explore.validation import validate

HEADERS = {"BKN-PRC": "PGM-KPR-V1.0", "BKN-DAC": "PGM-KDA-V1.0", "BKN-PAL": "PGM-KPA-V1.0"}


def request(type_name: str, dialog: str = "d-1", turn: int = 0, session: str = "s-1", **fields: Any) -> dict:
    query = f"q-{dialog}-{turn}"
    message = {
        "Header": HEADERS[type_name],
        "Mode": "RQ",
        "MInstance": "mi-1",
        "UEnvironment": "ue-1",
        "SessionID": session,
        "QueryID": query,
        "QueryTime": simple_time_now(time_id=f"st-{query}"),
        "DialogID": dialog,
        "TurnIndex": turn,
        **fields,
    }
    message["DataXMData"] = data_exchange_metadata(type_name, "RQ", query)
    assert validate(message).conforms
    return message


def test_grounding_an_unknown_term_says_so() -> None:
    dac = DomainAccess()
    unknown = dac.answer(request("BKN-DAC", Kind="semantic_grounding", Terms=[{"Text": "hovercraft"}]))
    assert unknown["Outcome"] == "not_answered" and "'hovercraft'" in unknown["DescrMetadata"]
    known = dac.answer(request("BKN-DAC", turn=1, Kind="semantic_grounding", Terms=[{"Text": "lamp"}]))
    assert known["Outcome"] == "answered"
    assert [c["Class"] for c in known["Answer"]["ObjectClasses"]] == ["Lantern"]
    mixed = dac.answer(
        request("BKN-DAC", turn=2, Kind="semantic_grounding", Terms=[{"Text": "lamp"}, {"Text": "hovercraft"}])
    )
    assert mixed["Outcome"] == "partially_answered" and "'hovercraft'" in mixed["DescrMetadata"]


def test_buying_an_item_the_domain_lacks_is_not_ack() -> None:
    dac = DomainAccess()
    steps = [
        {"Step": 0, "Statement": "MM-Move Nil aua-shopper-03 From ML-Plaza-Gate To ML-Stall-07"},
        {"Step": 1, "Statement": "Transact With Transaction=item-flying-carpet-1 With SPM=10 AGR"},
    ]
    response = dac.answer(request("BKN-DAC", Kind="feasibility", ProcessActions=steps))
    step = response["Feasibility"]["Steps"][1]
    assert step["PAStatus"] == "IncID" and "item-flying-carpet-1" in step["Reason"]
    assert response["Feasibility"]["Overall"] == "partially_feasible" and validate(response).findings == ()


def test_personality_alignment_refuses_a_role_or_locale_its_profile_lacks() -> None:
    pal = PersonalityAlignment()
    pirate = pal.answer(request("BKN-PAL", Question="Greet the User.", Constraints={"Role": "pirate"}))
    assert pirate["Outcome"] == "not_answered" and "'pirate'" in pirate["DescrMetadata"]
    assert "shopping assistant" in pirate["DescrMetadata"] and "Stance" not in pirate
    klingon = pal.answer(request("BKN-PAL", turn=1, Question="Greet the User.", Constraints={"Locale": "tlh"}))
    assert klingon["Outcome"] == "not_answered" and "'tlh'" in klingon["DescrMetadata"]
    guide = pal.answer(request("BKN-PAL", turn=2, Question="Greet the User.", Constraints={"Role": "guide"}))
    assert guide["Outcome"] == "answered" and guide["Stance"]["Role"] == "guide"
    own = PersonalityAlignment({**pal.profile, "Roles": ["pirate"]})  # the profile decides
    assert own.answer(request("BKN-PAL", Question="Ahoy?", Constraints={"Role": "pirate"}))["Outcome"] == "answered"


def test_prompt_creation_answers_the_question_from_the_dialogues_pc_prompt() -> None:
    prc = PromptCreation()
    prompt = prc.pc_prompt("d-prc")
    ids = {k: prompt[k] for k in ("MInstance", "UEnvironment", "SessionID")}

    def ask(turn: int, kind: str, question: str | None = None) -> dict:
        message = request(
            "BKN-PRC", dialog="d-prc", turn=turn, Kind=kind, **({"Question": question} if question else {})
        )
        return prc.answer({**message, **ids})

    plain = ask(0, "goal_constraints", "What must the purchase respect?")
    cheaper = ask(1, "goal_constraints", "Is a cheaper lantern acceptable?")
    assert plain["Representation"]["GoalConstraints"] == prompt["GoalConstraints"]  # the PC Prompt's own view
    assert len(cheaper["Representation"]["GoalConstraints"]) == len(prompt["GoalConstraints"]) + 1
    balcony = ask(2, "referents", "Where is my balcony?")
    assert [r["EntityID"] for r in balcony["Representation"]["ResolvedReferents"]] == ["ML-Balcony-Lucia"]
    nothing = ask(3, "referents", "Who is the vendor's cousin?")
    assert nothing["Outcome"] == "not_answered" and "cousin" in nothing["DescrMetadata"]


@pytest.mark.parametrize("partner", [PromptCreation, DomainAccess, PersonalityAlignment], ids=lambda p: p.__name__)
def test_the_envelope_of_every_response_is_the_requests_echo(partner: type) -> None:
    # dialogue.documents builds it: the order and the echoes are those the partners always sent.
    type_name = partner.type_name
    fields = {"BKN-PAL": {}, "BKN-DAC": {"Kind": "affordances"}, "BKN-PRC": {"Kind": "intent"}}[type_name]
    rq = request(type_name, dialog="d-echo", turn=3, **fields)
    rs = partner().answer(rq)
    assert list(rs)[:10] == [
        "Header",
        "Mode",
        "MInstance",
        "UEnvironment",
        "SessionID",
        "QueryID",
        "QueryTime",
        "DialogID",
        "TurnIndex",
        "RequestID",
    ]
    assert list(rs)[-1] == "DataXMData" and list(rs)[10] == "Outcome"
    assert (rs["Header"], rs["Mode"], rs["RequestID"], rs["DialogID"], rs["TurnIndex"]) == (
        HEADERS[type_name],
        "RS",
        rq["QueryID"],
        "d-echo",
        3,
    )
    assert rs["QueryID"].startswith(HEADERS[type_name][4:7].lower() + "-") and rs["QueryID"] != rq["QueryID"]
    assert rs["QueryTime"]["SimpleTimeID"] == f"st-{rs['QueryID']}" and rs["DataXMData"]["DataID"] == rs["QueryID"]
    assert validate(rs).conforms


def test_a_partner_of_ones_own_needs_public_names_only() -> None:
    from pgm_explore.mcp import Partner, PartnerDialogue

    class Counting(Partner):
        """Another implementer's partner: how often it was asked in each dialogue."""

        type_name = "BKN-PAL"

        def payload(self, message: dict[str, Any], dialogue: PartnerDialogue, **extra: Any) -> dict[str, Any]:
            dialogue.state["asked"] = dialogue.state.get("asked", 0) + 1
            session = dialogue.identity["SessionID"]
            return {"Outcome": "not_answered", "DescrMetadata": f"asked {dialogue.state['asked']} times in {session}"}

    partner = Counting()
    first = partner.answer(request("BKN-PAL", Question="a?"))
    partner.prepare(request("BKN-PAL", turn=1, Question="b?"))  # never committed: changes nothing
    second = partner.answer(request("BKN-PAL", turn=1, Question="b?"))
    assert [first["DescrMetadata"], second["DescrMetadata"]] == ["asked 1 times in s-1", "asked 2 times in s-1"]
    assert validate(first).conforms and validate(second).conforms
    assert (second["RequestID"], second["TurnIndex"]) == ("q-d-1-1", 1)  # the envelope is the base's
