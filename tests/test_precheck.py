"""The HEURISTIC feasibility pre-check: each row of the NOTES 4.7 mapping, its order, and the examples."""

from __future__ import annotations

import json
from typing import Any

import pytest
from conftest import EXAMPLES

from pgm_explore.dialogue.precheck import (
    CHECKS,
    Comparison,
    Prediction,
    action_context_of,
    compare,
    predict,
    steps_of,
)
from pgm_explore.models.pc_prompt import ActionContextModel
from pgm_explore.spec.process_actions import PA_STATUS_CODES


def _one(statement: str, context: dict[str, Any] | None, **kwargs: Any) -> Prediction:
    (prediction,) = predict([(0, statement)], context, **kwargs)
    return prediction


def _statuses(predictions: list[Prediction]) -> list[tuple[str, str | None]]:
    return [(p.predicted, p.check) for p in predictions]


def test_checks_follow_the_notes_table() -> None:
    assert [(c.name, c.status) for c in CHECKS] == [
        ("statement", "FaultyReq"),
        ("repertoire", "FaultyReq"),
        ("ids", "IncID"),
        ("m-location", "LocOOR"),
        ("rights", "InsRights"),
        ("wallet", "InsValue"),
        ("qualifier", "QualNS"),
        ("data-qualifier", "IncDQ"),
        ("clash", "Clash"),
        ("post", "PostRef"),
        ("max-steps", "FaultyReq"),
    ]
    assert {c.name for c in CHECKS if not c.decided} == {"data-qualifier", "post"}
    assert {c.status for c in CHECKS} <= set(PA_STATUS_CODES)


def test_every_prediction_is_labelled_a_heuristic() -> None:
    p = _one("MM-Send Nil Message To proc-1", None)
    assert (p.predicted, p.check, p.heuristic) == ("Ack", None, True)
    assert p.parsed is not None and p.parsed.action == "MM-Send"
    assert "heuristic=True" in repr(p)


def test_a_prediction_is_a_frozen_record_whose_repr_leaves_out_the_parse() -> None:
    p = _one("MM-Send Nil Message To proc-1", None)
    assert "parsed" not in repr(p) and "'MM-Send Nil Message To proc-1'" in repr(p)
    with pytest.raises(AttributeError):
        p.predicted = "InsValue"  # type: ignore[misc]  # (frozen: the assignment is the point)
    assert p == Prediction(p.step, p.statement, p.predicted, p.reason, p.check, p.parsed)
    assert hash(p) == hash(Prediction(p.step, p.statement, p.predicted, p.reason, p.check, p.parsed))


# --- row: statement --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("statement", "fragment"),
    [
        ("Track Nil item-1", "does not parse: Track is an MMM-ARC V1.x action, not V2.2 (column 1)"),
        ("MM-Add Nil item-1 With Rights (Status=Draft)", "bad status 'Draft'"),
        ("May MM-Add Nil item-1", "'May' makes the statement a Right"),
        ("MM-Send Nil Message From proc-1", "MM-Send takes no From complement"),
        ("Identifies Data", "does not parse"),  # strict unless lenient=True
    ],
)
def test_statement_row(statement: str, fragment: str) -> None:
    p = _one(statement, None)
    assert (p.predicted, p.check) == ("FaultyReq", "statement")
    assert fragment in p.reason


def test_statement_row_with_lenient_grammar() -> None:
    assert _one("Identifies Data With Qualifier", None, lenient=True).predicted == "Ack"


def test_statement_that_is_not_a_string() -> None:
    p = predict([{"Step": 0, "Statement": 42}], None)[0]
    assert (p.predicted, p.check, p.parsed) == ("FaultyReq", "statement", None)
    assert "not a string" in p.reason


# --- row: repertoire -------------------------------------------------------------------------------------


def test_repertoire_row() -> None:
    context = {"Repertoire": ["MM-Move", "PropertyChange", "Rights Manage", "May MM-Send Nil Message", "junk entry"]}
    assert _one("MM-Add Nil item-1", context).check == "repertoire"
    assert _one("MM-Add Nil item-1", context).predicted == "FaultyReq"
    assert "MM-Add is not in the ActionContext's Repertoire" in _one("MM-Add Nil item-1", context).reason
    for fine in ("MM-Move Nil item-1", "Property Change Nil item-1", "RightsChange Nil p-1", "MM-Send Nil Message"):
        assert _one(fine, context).predicted == "Ack", fine
    assert _one("MM-Add Nil item-1", {"Repertoire": []}).check == "repertoire"  # given but empty: nothing may be used
    assert _one("MM-Add Nil item-1", {}).predicted == "Ack"  # not given: not checked


# --- row: ids ---------------------------------------------------------------------------------------------


def test_ids_row_only_with_known_ids() -> None:
    statement = "MM-Move Nil item-9 From ML-1 To ML-2 With SpatialAttitude"
    assert _one(statement, None).predicted == "Ack"
    p = _one(statement, None, known_ids={"item-1"})
    assert (p.predicted, p.check, p.reason) == ("IncID", "ids", "item-9 is not a known ID")
    # M-Locations are left to the m-location check; type names are not IDs.
    assert _one(statement, None, known_ids={"item-9"}).predicted == "Ack"
    assert _one("MM-Send Nil Message To proc-1", None, known_ids={"proc-1"}).predicted == "Ack"
    assert _one("MM-Send Nil Message To ProcessID=proc-2", None, known_ids={"proc-1"}).predicted == "IncID"
    assert _one("MM-Add Nil Avatar", None, known_ids=set()).predicted == "Ack"


# --- row: m-location ------------------------------------------------------------------------------------

ML = {"MLocations": ["ML-Gate", "ML-Stall", "Gallery-4"]}


@pytest.mark.parametrize(
    ("statement", "expected"),
    [
        ("MM-Add Nil item-1 At ML-Gate", "Ack"),
        ("MM-Add Nil item-1 At ML-Balcony", "LocOOR"),  # ML- prefix: an M-Location by convention
        ("MM-Add Nil item-1 At Gallery-4", "Ack"),  # in MLocations: an M-Location whatever its name
        ("MM-Add Nil item-1 At Gallery-5", "Ack"),  # neither: not recognised as an M-Location
        ("MM-Add Nil item-1 At MLocationID=Gallery-5", "LocOOR"),  # typed
        ("MM-Add Nil item-1 At MLocation=ML-Gate", "Ack"),
        ("MM-Move Nil item-1 From ML-Gate To ML-Roof", "LocOOR"),
        ("MM-Move Nil item-1 From ML-Cellar To ML-Gate", "LocOOR"),
        ("MU-Actuate Nil item-1 Nil MLocation=ML-Roof At UL-1", "LocOOR"),  # typed: any preposition
        ("MU-Actuate Nil item-1 Nil ML-Roof At UL-1", "Ack"),  # untyped Nil: not a place operand
        ("MM-Add Nil ML-Roof-Model At ML-Gate", "Ack"),  # the direct object is not a place
        ("MM-Add Nil item-1 At The ML-Gate area", "Ack"),  # multi-word terms are not IDs
    ],
)
def test_m_location_row(statement: str, expected: str) -> None:
    p = _one(statement, ML)
    assert p.predicted == expected, p.reason
    if expected == "LocOOR":
        assert p.check == "m-location"
        assert "is not among the ActionContext's MLocations" in p.reason


def test_m_location_row_needs_mlocations() -> None:
    assert _one("MM-Add Nil item-1 At ML-Balcony", {"Repertoire": ["MM-Add"]}).predicted == "Ack"


# --- row: rights ------------------------------------------------------------------------------------------


def test_rights_row_explicit_rights_id() -> None:
    context = {"RightsRefs": ["rgt-1"]}
    p = _one("MM-Add Nil item-1 With Rights=rgt-2 (Status=Model)", context)
    assert (p.predicted, p.check) == ("InsRights", "rights")
    assert p.reason == "With Rights=rgt-2 names a Right that is not among the ActionContext's RightsRefs"
    assert _one("MM-Add Nil item-1 With Rights=rgt-1", context).predicted == "Ack"
    assert _one("MM-Add Nil item-1 With RightsID=rgt-3", context).predicted == "InsRights"
    assert _one("MM-Add Nil item-1 With Rights (Status=Model)", context).predicted == "Ack"  # no id: nothing to check
    assert _one("MM-Add Nil item-1 With Rights=rgt-2", {}).predicted == "Ack"  # RightsRefs not given


def test_rights_row_may_not_rule() -> None:
    context = {"Rules": ["rule-opaque-1", "Any Process May Not MM-Add Nil Item At ML-Fountain"]}
    p = _one("MM-Add Nil item-1 At ML-Fountain", context)
    assert (p.predicted, p.check) == ("InsRights", "rights")
    assert "the Rule 'Any Process May Not MM-Add Nil Item At ML-Fountain' forbids it" in p.reason
    assert _one("MM-Add Nil item-1 At ML-Gate", context).predicted == "Ack"
    assert _one("MM-Move Nil item-1 To ML-Fountain", context).predicted == "Ack"


def test_rights_row_rules_by_process_and_condition() -> None:
    context = {
        "Rules": ["proc-guide May Not MM-Move Nil Item", "Any Process May Not MM-Send Nil Message If it is night"]
    }
    statement = "MM-Move Nil exh-1 To ML-2"
    assert _one(statement, context).predicted == "Ack"  # the Rule is for another Process, or unknown requester
    assert _one(statement, context, requester="proc-guide").predicted == "InsRights"
    assert _one(statement, context, requester="proc-curator").predicted == "Ack"
    assert _one("MM-Send Nil Message", context).predicted == "Ack"  # conditional Rules are ignored


def test_rights_row_definitions_resolve_opaque_ids() -> None:
    context = {"Rules": ["rule-museum-exhibits-fixed"], "RightsRefs": ["rgt-1"]}
    definitions = {
        "rule-museum-exhibits-fixed": "Any Process May Not MM-Move Nil exh-amphora-0412",
        "rgt-1": ["May MM-Move Nil Item", "May MM-Animate Nil Item"],
    }
    assert _one("MM-Move Nil exh-amphora-0412 To ML-1", context).predicted == "Ack"
    p = _one("MM-Move Nil exh-amphora-0412 To ML-1", context, definitions=definitions)
    assert (p.predicted, p.check) == ("InsRights", "rights")
    assert "May Not prevails" in p.reason  # a May Right is held, but the May Not Rule wins
    assert _one("MM-Move Nil exh-other To ML-1", context, definitions=definitions).predicted == "Ack"


def test_rights_row_coverage_needs_every_rightsref_readable() -> None:
    readable = {"RightsRefs": ["May MM-Add Nil Item At ML-Balcony", "May MM-Send Nil Message"]}
    assert _one("MM-Add Nil item-1 At ML-Balcony", readable).predicted == "Ack"
    assert _one("MM-Send Nil Message To proc-1", readable).predicted == "Ack"
    p = _one("MM-Add Nil item-1 At ML-Gate", readable)
    assert (p.predicted, p.check) == ("InsRights", "rights")
    assert "none of the RightsRefs (all readable) grants MM-Add" in p.reason
    assert _one("MM-Move Nil item-1 To ML-Gate", readable).predicted == "InsRights"
    # One opaque identifier and coverage is no longer decidable.
    assert (
        _one("MM-Move Nil item-1 To ML-Gate", {"RightsRefs": [*readable["RightsRefs"], "rgt-opaque"]}).predicted
        == "Ack"
    )
    # A conditional Right is unreadable for coverage.
    assert _one("MM-Move Nil x", {"RightsRefs": ["May MM-Add Nil Item If day"]}).predicted == "Ack"
    # An empty RightsRefs decides nothing (what a Process owns it may act on without a Right).
    assert _one("MM-Move Nil x", {"RightsRefs": []}).predicted == "Ack"
    # A May Not Right among the RightsRefs forbids.
    assert (
        _one("MM-Add Nil x At ML-1", {"RightsRefs": ["rgt-x", "May Not MM-Add Nil Item At ML-1"]}).predicted
        == "InsRights"
    )


# --- row: wallet ------------------------------------------------------------------------------------------


def test_wallet_row_is_cumulative() -> None:
    steps = [
        (0, "Transact With Transaction=60 AGR"),
        (1, "Transact With SPM=50AGR"),
        (2, "Transact With Value=45 AGR"),  # 155 > 150
        (3, "Transact With Value=40 AGR"),  # step 2 failed, spent nothing: 150 is not over 150
        (4, "Transact With Value=0.5"),
    ]
    predictions = predict(steps, {"WalletLimit": 150})
    assert _statuses(predictions) == [
        ("Ack", None),
        ("Ack", None),
        ("InsValue", "wallet"),
        ("Ack", None),
        ("InsValue", "wallet"),
    ]
    assert predictions[2].reason == "45 AGR would bring the spending to 155, over the WalletLimit 150"
    assert predictions[4].reason == "0.5 would bring the spending to 150.5, over the WalletLimit 150"


def test_wallet_row_amount_conventions() -> None:
    context = {"WalletLimit": 100}
    # One payment described twice (SPM and Transaction): the larger amount counts, not the sum.
    assert _one("Transact With SPM=80 With Transaction=80", context).predicted == "Ack"
    assert _one("Transact With SPM=80 With Transaction=120", context).predicted == "InsValue"
    # Not numbers, or not With: no amount.
    assert _one("Transact With SPM=spm-stall-07 With Transaction (Status=Model)", context).predicted == "Ack"
    assert _one("Transact With Value=lots", context).predicted == "Ack"
    assert _one("Transact With Value=120", {}).predicted == "Ack"  # no WalletLimit
    assert _one("Transact With Value=120", {"WalletLimit": True}).predicted == "Ack"  # not a number


def test_wallet_row_stops_at_mixed_currencies() -> None:
    steps = [(0, "Transact With Value=90 AGR"), (1, "Transact With Value=20 EUR")]
    assert _statuses(predict(steps, {"WalletLimit": 100})) == [("Ack", None), ("Ack", None)]


# --- row: qualifier ---------------------------------------------------------------------------------------


def test_qualifier_row() -> None:
    context = {"Vocabularies": ["PGM-AOQ-Gesture-V1.0"]}
    p = _one("Convert Nil item-1 With ModelQualifier=PGM-AOQ-Speech-V1.0", context)
    assert (p.predicted, p.check) == ("QualNS", "qualifier")
    assert p.reason == "ModelQualifier PGM-AOQ-Speech-V1.0 is not among the ActionContext's Vocabularies"
    assert _one("Identify Nil Data With Qualifier=PGM-AOQ-Gesture-V1.0", context).predicted == "Ack"
    assert _one("Identify Nil Data With Vocabulary=other", context).predicted == "QualNS"
    assert _one("Identify Nil Data With Qualifier", context).predicted == "Ack"  # no value: nothing to check
    assert _one("Identify Nil Data With Qualifier=other", {}).predicted == "Ack"


# --- row: clash -------------------------------------------------------------------------------------------


def test_clash_row_same_item_same_place() -> None:
    steps = [
        (0, "MM-Add Nil item-1 At ML-1"),
        (1, "MM-Add Nil item-1 At ML-1"),
        (2, "MM-Add Nil item-1 At ML-2"),  # another place: not decided
        (3, "MU-Add Nil item-1 At ML-1"),  # MU-Add places R-Items in the Universe: another family
    ]
    predictions = predict(steps, None)
    assert _statuses(predictions) == [("Ack", None), ("Clash", "clash"), ("Ack", None), ("Ack", None)]
    assert predictions[1].reason == "step 0 already placed item-1 at ML-1"


def test_clash_row_moving_from_elsewhere() -> None:
    steps = [
        (0, "MM-Add Nil item-1 At ML-1"),
        (1, "MM-Move Nil item-1 From ML-2 To ML-3"),
        (2, "MM-Move Nil item-1 From ML-1 To ML-3"),
        (3, "MM-Move Nil item-1 From ML-1 To ML-4"),  # step 2 moved it away from ML-1
        (4, "MM-Move Nil item-1 From ML-3 To ML-4"),
        (5, "MM-Move Nil item-2 From ML-9 To ML-4"),  # never placed by the plan: not decided
        (6, "MM-Move Nil item-1 To ML-5"),  # no From: nothing to compare
    ]
    predictions = predict(steps, None)
    assert [p.predicted for p in predictions] == ["Ack", "Clash", "Ack", "Clash", "Ack", "Ack", "Ack"]
    assert predictions[1].reason == "item-1 is at ML-1 (step 0), not at ML-2"


def test_clash_row_ignores_steps_that_fail() -> None:
    steps = [(0, "MM-Add Nil item-1 At ML-Roof"), (1, "MM-Add Nil item-1 At ML-Roof")]
    # Step 0 is out of range, so it places nothing and step 1 does not clash with it (but is out of range too).
    assert _statuses(predict(steps, {"MLocations": ["ML-1"]})) == [("LocOOR", "m-location"), ("LocOOR", "m-location")]
    assert _statuses(predict(steps, None)) == [("Ack", None), ("Clash", "clash")]


# --- row: max-steps ---------------------------------------------------------------------------------------


def test_max_steps_row_counts_positions_in_step_order() -> None:
    steps = [(5, "MM-Send Nil Message To p-1"), (1, "MM-Send Nil Message To p-2"), (3, "MM-Send Nil Message To p-3")]
    predictions = predict(steps, {"MaxSteps": 2})
    assert [(p.step, p.predicted, p.check) for p in predictions] == [
        (1, "Ack", None),
        (3, "Ack", None),
        (5, "FaultyReq", "max-steps"),
    ]
    assert predictions[2].reason == "it is Process Action number 3, beyond MaxSteps 2"
    assert _statuses(predict(steps, {"MaxSteps": 2.5})) == [("Ack", None)] * 3  # not an integer: not checked


# --- first failing check wins, in the table's order ----------------------------------------------------

ORDER_CONTEXT = {
    "Repertoire": ["MM-Add", "Transact"],
    "MLocations": ["ML-1"],
    "RightsRefs": ["rgt-1"],
    "WalletLimit": 10,
    "Vocabularies": ["voc-1"],
    "MaxSteps": 1,
}


@pytest.mark.parametrize(
    ("statement", "check"),
    [
        ("May MM-Move Nil x At ML-9 With Rights=rgt-9", "statement"),
        ("MM-Move Nil x To ML-9 With Rights=rgt-9", "repertoire"),
        ("MM-Add Nil x At ML-9 With Rights=rgt-9 With SPM=20", "m-location"),
        ("MM-Add Nil x At ML-1 With Rights=rgt-9 With SPM=20", "rights"),
        ("MM-Add Nil x At ML-1 With Rights=rgt-1 With SPM=20 With Qualifier=voc-9", "wallet"),
        ("MM-Add Nil x At ML-1 With SPM=5 With Qualifier=voc-9", "qualifier"),
    ],
)
def test_first_failing_check_wins(statement: str, check: str) -> None:
    # Each statement is also the second step, beyond MaxSteps 1: max-steps comes last in the table.
    first, second = predict([(0, "Transact With SPM=1"), (1, statement)], ORDER_CONTEXT)
    assert first.predicted == "Ack"
    assert second.check == check
    assert predict([(0, "Transact With SPM=1"), (1, "MM-Add Nil x At ML-1")], ORDER_CONTEXT)[1].check == "max-steps"


def test_ids_come_before_m_locations() -> None:
    p = _one("MM-Add Nil item-9 At ML-9", {"MLocations": ["ML-1"]}, known_ids={"item-1"})
    assert p.check == "ids"


def test_a_statement_is_read_anew_for_each_action_context() -> None:
    # What a statement says is derived once per text; what it means for a step depends on the
    # ActionContext: an untyped word is an M-Location when MLocations lists it, else maybe an ID.
    statement = "MM-Move Nil item-1 From Gallery-4 To ML-1"
    for _ in range(2):
        assert _one(statement, {"MLocations": ["Gallery-4", "ML-1"]}, known_ids={"item-1"}).predicted == "Ack"
        p = _one(statement, {"MLocations": ["ML-1"]}, known_ids={"item-1"})
        assert (p.check, p.reason) == ("ids", "Gallery-4 is not a known ID")
        assert _one(statement, {"MLocations": ["ML-2"]}).reason == "ML-1 is not among the ActionContext's MLocations"
        assert _one(statement, {"MLocations": ["ML-2"]}, lenient=True).check == "m-location"


def test_action_context_as_a_model() -> None:
    model = ActionContextModel(Repertoire=["MM-Send"], MaxSteps=1)
    assert _one("MM-Add Nil x", model).check == "repertoire"  # type: ignore[arg-type]


# --- compare ---------------------------------------------------------------------------------------------


def test_compare_inputs_and_kinds() -> None:
    predictions = predict(
        [(0, "MM-Send Nil Message"), (1, "Track Nil x"), (2, "MM-Add Nil x At ML-9"), (3, "MM-Send Nil Message")],
        {"MLocations": ["ML-1"]},
    )
    reported = [
        {"Step": 0, "PAStatus": "InsValue"},
        {"Step": 1, "PAStatus": "Ack"},
        {"Step": 2, "PAStatus": "LocOOR"},
        {"Step": 2, "PAStatus": "Clash"},  # a duplicate: the first report counts
        {"Step": 7, "PAStatus": "Ack"},
    ]
    expected = [
        (0, "Ack", "InsValue", False, "missed"),
        (1, "FaultyReq", "Ack", False, "stricter"),
        (2, "LocOOR", "LocOOR", True, "agree"),
        (3, "Ack", None, False, "unreported"),
        (7, None, "Ack", False, "unreported"),
    ]
    for given in (
        reported,
        [(r["Step"], r["PAStatus"]) for r in reported],
        {0: "InsValue", 1: "Ack", 2: "LocOOR", 7: "Ack"},
    ):
        comparisons = compare(predictions, given)
        assert [(c.step, c.predicted, c.reported, c.agree, c.kind) for c in comparisons] == expected
    assert comparisons[2].check == "m-location"
    assert comparisons[2].reason == "ML-9 is not among the ActionContext's MLocations"
    assert all(c.heuristic for c in comparisons)
    assert Comparison(0, "LocOOR", "InsRights", False).kind == "differs"


def test_compare_ignores_non_string_statuses() -> None:
    (c,) = compare(predict([(0, "MM-Send Nil Message")], None), [{"Step": 0, "PAStatus": 3}])
    assert (c.reported, c.agree) == (None, False)


# --- the examples ----------------------------------------------------------------------------------------


def _load(relative: str) -> dict[str, Any]:
    return json.loads((EXAMPLES / relative).read_text(encoding="utf-8"))


# (PC Prompt or BKN-PRC Response with the ActionContext, feasibility pair, predicted per step, reported per step)
EXAMPLE_PAIRS = [
    (
        "pc-prompt/valid/market-purchase.json",
        "feasibility-market",
        ["Ack", "Ack", "Ack"],
        # Step 1: the price (180 AGR) is in the stall's SPM, not in the statement ("With SPM" has no amount), so
        # the wallet check cannot see it. Step 2: InsRights because the Transaction of step 1 failed; the
        # statement does not say that the Item's Rights come from that Transaction.
        ["Ack", "InsValue", "InsRights"],
    ),
    (
        "bkn-prc/valid/rs-action-context-museum.json",
        "feasibility-museum",
        # Step 0 moves the amphora To ML-Gallery4-Plinth, outside the MLocations: LocOOR comes before InsRights in
        # the table. The Response cites the opaque Rule rule-museum-exhibits-fixed, which the heuristic cannot read.
        ["LocOOR", "LocOOR"],
        ["InsRights", "LocOOR"],
    ),
    ("pc-prompt/valid/market-purchase.json", "feasibility-place", ["Ack", "Ack"], ["Ack", "Ack"]),
]


@pytest.mark.parametrize(
    ("context_file", "pair", "predicted", "reported"), EXAMPLE_PAIRS, ids=[p[1] for p in EXAMPLE_PAIRS]
)
def test_example_pairs(context_file: str, pair: str, predicted: list[str], reported: list[str]) -> None:
    context = action_context_of(_load(context_file))
    assert context is not None
    request = _load(f"bkn-dac/valid/rq-{pair}.json")
    response = _load(f"bkn-dac/valid/rs-{pair}.json")
    predictions = predict(steps_of(request), context)
    assert [p.predicted for p in predictions] == predicted
    comparisons = compare(predictions, response["Feasibility"]["Steps"])
    assert [c.reported for c in comparisons] == reported
    # Where they disagree, the heuristic either saw nothing (missed) or saw an earlier row of the table.
    assert {c.kind for c in comparisons} <= {"agree", "missed", "differs"}


def test_example_market_with_the_price_in_the_statement() -> None:
    """With the amount written in the statement, the wallet check predicts the reported InsValue."""
    context = action_context_of(_load("pc-prompt/valid/market-purchase.json"))
    steps = steps_of(_load("bkn-dac/valid/rq-feasibility-market.json"))
    steps[1] = (1, "Transact With Transaction=180 AGR With SPM (Status=Model)")
    assert [p.predicted for p in predict(steps, context)] == ["Ack", "InsValue", "Ack"]


def test_example_museum_with_the_rule_resolved() -> None:
    """Resolving the opaque Rule does not change step 0: LocOOR still comes first in the table's order."""
    context = action_context_of(_load("bkn-prc/valid/rs-action-context-museum.json"))
    steps = steps_of(_load("bkn-dac/valid/rq-feasibility-museum.json"))
    definitions = {"rule-museum-exhibits-fixed": "Any Process May Not MM-Move Nil exh-amphora-0412"}
    assert [p.check for p in predict(steps, context, definitions=definitions)] == ["m-location", "m-location"]
    # Moving it within the allowed M-Locations, the resolved Rule decides.
    steps[0] = (0, "MM-Move Nil exh-amphora-0412 From ML-Gallery4-Case2 To ML-Gallery4-Centre")
    assert predict(steps, context, definitions=definitions)[0].predicted == "InsRights"
    assert predict(steps, context)[0].predicted == "Ack"


def test_helpers() -> None:
    assert steps_of({}) == []
    assert steps_of({"ProcessActions": "junk"}) == []
    assert action_context_of({"ActionContext": "junk"}) is None
    assert action_context_of(_load("pc-prompt/valid/minimal.json")) is None
