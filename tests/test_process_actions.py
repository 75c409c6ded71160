"""The MMM-TEC V2.2 Process Action statement grammar: what it accepts, what it rejects and where."""

from __future__ import annotations

import json
from typing import Any, get_args

import pytest
from conftest import EXAMPLES
from hypothesis import given, settings
from hypothesis import strategies as st

from pgm_explore.models.bkn_dac import PAStatusCode as ModelPAStatusCode
from pgm_explore.spec.process_actions import (
    ACTION_INFO,
    ACTIONS,
    KEYWORDS,
    NON_V22_ACTIONS,
    OPERAND_TYPES,
    PA_STATUS,
    PA_STATUS_CODES,
    PREPOSITIONS,
    SIGNATURES,
    STATUS_ALIASES,
    SYNONYMS,
    Complement,
    Statement,
    StatementError,
    covers,
    normalize_status,
    parse_rule,
    parse_statement,
    resolve_action,
    signature_problems,
)

# --- accepted statements, with the structure they parse to ------------------------------------------

C = Complement
ACCEPTED: list[tuple[str, dict[str, Any]]] = [
    (
        "MM-Add Nil item-lantern-blue-114 At ML-Balcony-Lucia With SpatialAttitude With PerceptibilityState=1 With Rights (Status=Model)",
        {
            "action": "MM-Add",
            "complements": (
                C("Nil", "item-lantern-blue-114"),
                C("At", "ML-Balcony-Lucia"),
                C("With", "SpatialAttitude"),
                C("With", "PerceptibilityState", "1"),
                C("With", "Rights", None, "Model"),
            ),
        },
    ),
    (
        # The MMM-TEC "about" page: commas, a multi-word term, =value and a status.
        "MM-Add Nil Avatar, With SpatialAttitude, With PerceptStatus=1 With Requested Rights (Status=Model)",
        {
            "action": "MM-Add",
            "complements": (
                C("Nil", "Avatar"),
                C("With", "SpatialAttitude"),
                C("With", "PerceptStatus", "1"),
                C("With", "Requested Rights", None, "Model"),
            ),
        },
    ),
    (
        "Transact With Transaction With SPM (Status=Model)",
        {"action": "Transact", "complements": (C("With", "Transaction"), C("With", "SPM", None, "Model"))},
    ),
    ("Transact With SPM (Status-Final)", {"action": "Transact", "complements": (C("With", "SPM", None, "Final"),)}),
    ("Transact With SPM ( Status = Model )", {"action": "Transact", "complements": (C("With", "SPM", None, "Model"),)}),
    ("Transact With Value=180 AGR", {"action": "Transact", "complements": (C("With", "Value", "180 AGR"),)}),
    ("Transact With Value = 12.5EUR", {"action": "Transact", "complements": (C("With", "Value", "12.5EUR"),)}),
    (
        "MM-Send Nil Message To proc-user-lucia",
        {"action": "MM-Send", "complements": (C("Nil", "Message"), C("To", "proc-user-lucia"))},
    ),
    ("Register", {"action": "Register", "complements": ()}),
    ("  Register  ", {"action": "Register", "complements": ()}),
    ("May MM-Add Nil Item", {"deontic": "May", "action": "MM-Add", "complements": (C("Nil", "Item"),)}),
    (
        "May Not MM-Add Nil Item At ML-Plaza-Fountain",
        {"deontic": "May Not", "action": "MM-Add", "complements": (C("Nil", "Item"), C("At", "ML-Plaza-Fountain"))},
    ),
    ("Must Hide Nil HideID", {"deontic": "Must", "action": "Hide", "complements": (C("Nil", "HideID"),)}),
    (
        "Property Change Nil item-1 With PerceptibilityStatus=0",
        {"action": "Property Change", "complements": (C("Nil", "item-1"), C("With", "PerceptibilityStatus", "0"))},
    ),
    ("PropertyChange Nil item-1", {"action": "Property Change", "complements": (C("Nil", "item-1"),)}),
    ("Property Manage Nil item-1", {"action": "Property Change", "complements": (C("Nil", "item-1"),)}),
    (
        "RightsChange Nil proc-1 With NewRights=rgt-9",
        {"action": "Rights Change", "complements": (C("Nil", "proc-1"), C("With", "NewRights", "rgt-9"))},
    ),
    ("Rights Manage Nil proc-1", {"action": "Rights Change", "complements": (C("Nil", "proc-1"),)}),
    (
        "MU-Actuate Nil item-1 Nil ML-1 At UL-1",
        {"action": "MU-Actuate", "complements": (C("Nil", "item-1"), C("Nil", "ML-1"), C("At", "UL-1"))},
    ),
    (
        "MM-Animate Nil exh-1 At PointOfView At MLocationID=ML-1 With Stream",
        {
            "action": "MM-Animate",
            "complements": (
                C("Nil", "exh-1"),
                C("At", "PointOfView"),
                C("At", "MLocationID", "ML-1"),
                C("With", "Stream"),
            ),
        },
    ),
    (
        "MM-Send Nil Message To proc-1 If the User asks for it",
        {
            "action": "MM-Send",
            "complements": (C("Nil", "Message"), C("To", "proc-1")),
            "condition": "the User asks for it",
        },
    ),
    (
        "MM-Send Nil Message, If Lucia arrives",
        {"action": "MM-Send", "complements": (C("Nil", "Message"),), "condition": "Lucia arrives"},
    ),
    (
        'MM-Send Nil Message If "Lucia goes To the gate"',
        {"action": "MM-Send", "complements": (C("Nil", "Message"),), "condition": "Lucia goes To the gate"},
    ),
    (
        'MM-Move Nil "crate With lid" To ML-2',
        {"action": "MM-Move", "complements": (C("Nil", "crate With lid"), C("To", "ML-2"))},
    ),
    (
        'MM-Add Nil item-1 With Label="a, b (c)=d"',
        {"action": "MM-Add", "complements": (C("Nil", "item-1"), C("With", "Label", "a, b (c)=d"))},
    ),
    ("MM-Add Nil Point of View", {"action": "MM-Add", "complements": (C("Nil", "Point of View"),)}),
    ("MM-Add\tNil  item-1,With X", {"action": "MM-Add", "complements": (C("Nil", "item-1"), C("With", "X"))}),
    ("Discover With Discovery", {"action": "Discover", "complements": (C("With", "Discovery"),)}),
]


@pytest.mark.parametrize(("text", "expected"), ACCEPTED, ids=[t for t, _ in ACCEPTED])
def test_accepted(text: str, expected: dict[str, Any]) -> None:
    s = parse_statement(text)
    assert s == Statement(**expected)
    assert s.source == text
    assert parse_statement(str(s)) == s
    assert str(parse_statement(str(s))) == str(s)


# --- rejected statements: column and a fragment of the message ---------------------------------------

REJECTED: list[tuple[str, int, str]] = [
    ("", 1, "empty statement"),
    ("   ", 1, "empty statement"),
    ("Track Nil item-1", 1, "Track is an MMM-ARC V1.x action, not V2.2"),
    ("MM-Embed Nil item-1", 1, "MM-Embed is an MMM-ARC V1.x and MMM-TEC V2.0 action, not V2.2"),
    ("Change Nil item-1", 1, "V2.2 has Property Change and Rights Change"),
    ("May UM-Render Nil x", 5, "UM-Render is an MMM-ARC V1.x action"),
    ("MM-Ad Nil item-1", 1, "did you mean 'MM-Add'"),
    ("mm-add Nil item-1", 1, "did you mean 'MM-Add'?"),
    ("Property Nil item-1", 1, "did you mean 'Property Change'"),
    ("Identifies Data", 1, "write the V2.2 name 'Identify'"),
    ("Nil item-1", 1, "expected an action before 'Nil'"),
    ("(Status=Model)", 1, "expected an action"),
    ("May not MM-Add Nil x", 5, "'May Not'"),
    ("May Not", 8, "expected an action, found the end"),
    ("MM-Add Into ML-1", 8, "unknown preposition 'Into': Into is an MMM-ARC V1.2 preposition"),
    ("MM-Add Nil item-1 Into ML-1", 19, "unknown preposition 'Into'"),
    ("MM-Add Nil item-1, Onto ML-1", 20, "unknown preposition 'Onto'"),
    ("MM-Add Nil item-1 Of ML-1", 19, "lenient=True"),
    ("MM-Add Avatar", 8, "unknown preposition 'Avatar'"),
    ("MM-Add Nil item-1 with Rights", 19, "write the keyword as 'With'"),
    ("MM-Add Nil item-1 At ml-1 AT ML-2", 27, "write the keyword as 'At'"),
    ("MM-Add Nil", 11, "empty operand: 'Nil' needs a term"),
    ("MM-Add Nil item-1 With", 23, "empty operand: 'With'"),
    ("MM-Add Nil item-1 With At ML-1", 24, "empty operand: 'With'"),
    ("MM-Add Nil item-1 With =1", 24, "empty operand"),
    ('MM-Add Nil ""', 12, "empty operand"),
    ("MM-Add Nil item-1 With X=", 26, "empty value after '='"),
    ("MM-Add Nil item-1 With X= With Y", 27, "empty value after '='"),
    ("MM-Add Nil item-1 With X=1=2", 27, "unexpected '='"),
    ("MM-Add Nil item-1 With Rights (Status=Model", 31, "unbalanced parenthesis: the '(' at column 31 is not closed"),
    ("MM-Add Nil item-1 With Rights (Status=Model With X", 31, "unbalanced parenthesis"),
    ("MM-Add Nil item-1 With Rights (", 31, "unbalanced parenthesis"),
    ("MM-Add Nil item-1 With Rights Status=Model)", 43, "unbalanced parenthesis: ')' without a matching '('"),
    ("MM-Add Nil item-1 )", 19, "unbalanced parenthesis"),
    ("MM-Add (Status=Model)", 8, "must follow an operand"),
    ("MM-Add Nil item-1 With Rights (Status=Draft)", 39, "bad status 'Draft'"),
    ("MM-Add Nil item-1 With Rights (Status-model)", 39, "bad status 'model'"),
    ("MM-Add Nil item-1 With Rights (Status)", 38, "bad status: expected '=' or '-'"),
    ("MM-Add Nil item-1 With Rights (Model)", 32, "bad status 'Model'"),
    ("MM-Add Nil item-1 With Rights ()", 32, "bad status"),
    ("MM-Add Nil item-1 With Rights (Status=Model) (Status=Final)", 46, "at most one (Status=...)"),
    ("MM-Add Nil item-1 If", 21, "empty condition"),
    ("MM-Add Nil item-1 If Lucia arrives With X", 36, "text after the condition"),
    ("MM-Add Nil item-1 If Lucia arrives If Bob leaves", 36, "text after the condition"),
    ("MM-Add Nil item-1 If Lucia (arrives)", 28, "text after the condition"),
    ("MM-Add At ML-1 Nil item-1", 16, "the Nil complement (the direct object) must come first"),
    ("MM-Add Nil item-1 Nil item-2", 19, "at most one Nil complement"),
    ("MU-Actuate Nil a Nil b Nil c", 24, "at most 2 Nil complements (MU-Actuate)"),
    ("MM-Add Nil item-1,", 19, "a comma must be followed by a complement or a condition"),
    ("MM-Add Nil item-1,, With X", 19, "expected a preposition, found ','"),
    ('MM-Add Nil "item-1', 12, "unterminated quotation mark"),
    ('MM-Add Nil "item" 1', 19, "a quoted phrase must stand alone"),
    ('MM-Add Nil item-1 With "X"=1 "2"', 30, "a quoted phrase must stand alone"),
]


@pytest.mark.parametrize(("text", "column", "fragment"), REJECTED, ids=[t or "<empty>" for t, _, _ in REJECTED])
def test_rejected(text: str, column: int, fragment: str) -> None:
    with pytest.raises(StatementError) as info:
        parse_statement(text)
    error = info.value
    assert fragment in error.message
    assert error.column == column, error.pointer()
    assert isinstance(error, ValueError)
    assert error.text == text
    assert str(error) == f"{error.message} (column {column})"


def test_error_lists_what_was_expected() -> None:
    with pytest.raises(StatementError) as info:
        parse_statement("MM-Add Nil x, Onto y")
    assert info.value.expected == (*PREPOSITIONS, "If")
    with pytest.raises(StatementError) as info:
        parse_statement("MM-Ad Nil x")
    assert info.value.expected[0] == "MM-Add"
    with pytest.raises(StatementError) as info:
        parse_statement("Zzzz")
    assert info.value.expected == ACTIONS  # no close match: every action is a hint
    assert info.value.pointer() == "Zzzz\n^"


def test_multi_word_terms_absorb_lower_case_words_only() -> None:
    # The convention: a term runs until the next keyword, comma, '=', parenthesis or the end.
    s = parse_statement("MM-Move Nil the blue lantern From stall number 7 To ML-Balcony-Lucia")
    assert [c.term for c in s.complements] == ["the blue lantern", "stall number 7", "ML-Balcony-Lucia"]


def test_non_string_is_a_type_error() -> None:
    with pytest.raises(TypeError):
        parse_statement(42)  # type: ignore[arg-type]


# --- every example statement parses, and round-trips to the same text -------------------------------


def _example_statements() -> list[tuple[str, str]]:
    found = []
    for path in sorted(EXAMPLES.rglob("*.json")):
        if path.name.endswith(".expected.json") or path.parent.name == "malformed":
            continue
        sidecar = path.with_name(path.stem + ".expected.json")
        if sidecar.exists() and "statement-syntax" in json.loads(sidecar.read_text(encoding="utf-8"))["rules"]:
            continue  # broken on purpose
        doc = json.loads(path.read_text(encoding="utf-8"))
        for item in doc.get("ProcessActions") or ():
            found.append(
                (f"{path.parent.parent.name}/{path.parent.name}/{path.name}#{item['Step']}", item["Statement"])
            )
    return found


EXAMPLE_STATEMENTS = _example_statements()


def test_examples_have_statements() -> None:
    assert len(EXAMPLE_STATEMENTS) >= 7


@pytest.mark.parametrize(("where", "text"), EXAMPLE_STATEMENTS, ids=[w for w, _ in EXAMPLE_STATEMENTS])
def test_example_statements_parse(where: str, text: str) -> None:
    s = parse_statement(text)
    assert str(s) == text  # the examples are written in the canonical form
    assert signature_problems(s) == ()


def test_example_rules_parse() -> None:
    doc = json.loads((EXAMPLES / "pc-prompt" / "valid" / "market-purchase.json").read_text(encoding="utf-8"))
    rule = parse_rule(doc["ActionContext"]["Rules"][1])
    assert (rule.process, rule.right.deontic, rule.right.action) == ("Any Process", "May Not", "MM-Add")
    with pytest.raises(StatementError, match="deontic verb"):
        parse_rule(doc["ActionContext"]["Rules"][0])  # an opaque identifier


# --- lenient mode ----------------------------------------------------------------------------------------

LENIENT: list[tuple[str, str]] = [
    # V2.2 Process Actions page prose and the "about" page
    (
        "Identifies Data With Qualifier With Rights (Status-Model)",
        "Identify Nil Data With Qualifier With Rights (Status=Model)",
    ),
    ("MM-Sends Message With Model Rights", "MM-Send Nil Message With Model Rights"),
    ("MM-Add Nil Avatar Of Lucia", "MM-Add Nil Avatar Of Lucia"),
    ("Modifies Nil item-1", "Modify Nil item-1"),
    ("Licenses Nil asset-1", "License Nil asset-1"),
    ("Property Changes Nil item-1", "Property Change Nil item-1"),
    ("May Not Hides Nil item-1", "May Not Hide Nil item-1"),
]


@pytest.mark.parametrize(("text", "canonical"), LENIENT, ids=[t for t, _ in LENIENT])
def test_lenient(text: str, canonical: str) -> None:
    with pytest.raises(StatementError):
        parse_statement(text)
    s = parse_statement(text, lenient=True)
    assert str(s) == canonical
    assert parse_statement(canonical, lenient=True) == s


def test_lenient_still_rejects_older_actions_and_prepositions() -> None:
    with pytest.raises(StatementError, match=r"Track is an MMM-ARC V1\.x action"):
        parse_statement("Tracks Nil item-1", lenient=True)
    with pytest.raises(StatementError, match=r"By is an MMM-ARC V1\.2 preposition"):
        parse_statement("MM-Add Nil item-1 By proc-1", lenient=True)
    with pytest.raises(StatementError, match="unknown preposition 'item-1'"):
        parse_statement("MM-Add With X, item-1", lenient=True)  # an implicit Nil only right after the action


# --- round trip for any Statement --------------------------------------------------------------------

_word = st.from_regex(r"[A-Za-z0-9][A-Za-z0-9_.:-]{0,8}", fullmatch=True)
_phrase = st.one_of(
    st.lists(_word, min_size=1, max_size=3).map(" ".join),
    st.text(st.characters(blacklist_characters='"', blacklist_categories=("Cs",)), min_size=1, max_size=12),
)


@st.composite
def _statements(draw: st.DrawFn) -> Statement:
    action = draw(st.sampled_from(ACTIONS))
    sig = SIGNATURES.get(action)
    nils = draw(st.integers(0, sig.max_nil if sig else 1))
    complements = [C("Nil", draw(_phrase)) for _ in range(nils)]
    for _ in range(draw(st.integers(0, 4))):
        complements.append(
            C(
                draw(st.sampled_from(("At", "From", "To", "With", "Of"))),
                draw(_phrase),
                draw(st.none() | _phrase),
                draw(st.sampled_from((None, "Model", "Final"))),
            )
        )
    return Statement(
        deontic=draw(st.sampled_from((None, "May", "May Not", "Must"))),
        action=action,
        complements=tuple(complements),
        condition=draw(st.none() | _phrase),
    )


@settings(max_examples=300, deadline=None)
@given(_statements())
def test_round_trip(s: Statement) -> None:
    assert parse_statement(str(s), lenient=True) == s
    if not s.find("Of"):
        assert parse_statement(str(s)) == s


def test_statement_checks_its_fields() -> None:
    with pytest.raises(ValueError, match=r"canonical V2\.2 action"):
        Statement(action="PropertyChange")
    with pytest.raises(ValueError, match="deontic"):
        Statement(deontic="Shall", action="MM-Add")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="Nil complements must come first"):
        Statement(action="MM-Add", complements=(C("At", "ML-1"), C("Nil", "x")))
    with pytest.raises(ValueError, match="double quote"):
        C("Nil", 'a "b"')
    with pytest.raises(ValueError, match="non-empty"):
        C("With", "X", "")
    with pytest.raises(ValueError, match="preposition"):
        C("Into", "X")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="status"):
        C("With", "Rights", None, "Draft")  # type: ignore[arg-type]


# --- vocabulary -------------------------------------------------------------------------------------------


def test_actions_are_the_union_of_the_v22_lists() -> None:
    assert len(ACTIONS) == 31
    assert {"MM-Capture", "License", "Inform", "UM-Actuate", "Property Change", "Rights Change"} <= set(ACTIONS)
    assert not set(ACTIONS) & set(SYNONYMS)
    assert set(SYNONYMS.values()) == {"Property Change", "Rights Change"}
    assert not set(NON_V22_ACTIONS) & set(ACTIONS)
    assert set(NON_V22_ACTIONS) == {
        "Track",
        "UM-Render",
        "MU-Render",
        "MM-Disable",
        "MM-Enable",
        "MM-Embed",
        "MU-Embed",
        "UM-Embed",
        "UM-Animate",
        "Change",
    }
    assert ACTION_INFO["MM-Capture"].sources == ("AnyAction.json", "ProcessActions.json", "actions/")
    assert ACTION_INFO["MM-Add"].service == "Locate"
    assert ACTION_INFO["License"].description is None
    assert all(set(info.sources) for info in ACTION_INFO.values())


def test_resolve_action() -> None:
    assert resolve_action("MM-Add") == "MM-Add"
    assert resolve_action("Property Manage") == "Property Change"
    assert resolve_action("MM-Sends") is None
    assert resolve_action("MM-Sends", lenient=True) == "MM-Send"
    assert resolve_action("Track", lenient=True) is None


def test_pa_status_codes_match_the_models_and_notes() -> None:
    assert get_args(ModelPAStatusCode) == PA_STATUS_CODES
    assert tuple(PA_STATUS) == PA_STATUS_CODES
    facts = {code for code, status in PA_STATUS.items() if status.basis == "FACT"}
    assert facts == {"Ack", "FaultyReq", "IncID", "InsRights", "InsValue"}
    assert normalize_status("FaultyPA") == "FaultyReq"
    assert {normalize_status(code) for code in STATUS_ALIASES} == {"FaultyReq", "LocOOR"}


def test_signatures() -> None:
    assert set(SIGNATURES) == set(ACTIONS) - {"License", "Inform"}
    for sig in SIGNATURES.values():
        assert sig.statuses <= set(PA_STATUS_CODES), sig.action
        assert "FaultyReq" in sig.statuses or not sig.errors_complete, sig.action
        nils = [slot.preposition == "Nil" for slot in sig.request]
        assert nils == sorted(nils, reverse=True), f"{sig.action}: Nil comes first"
    assert SIGNATURES["MU-Actuate"].max_nil == 2
    assert SIGNATURES["MM-Add"].header == "MMM-2DP-V2.2"
    assert [str(s) for s in SIGNATURES["MM-Send"].request] == ["Nil Message", "To ProcessID", "With Rights", "With SPM"]
    assert SIGNATURES["Post"].allows("PostRef") is True
    assert SIGNATURES["MM-Send"].allows("PostRef") is False
    assert SIGNATURES["Rights Change"].allows("MLocOOR") is True
    assert SIGNATURES["Rights Change"].allows("Clash") is None
    assert {"ProcessID", "ItemID", "MLocationID", "Item", "SpatialAttitude"} <= OPERAND_TYPES
    assert not OPERAND_TYPES & KEYWORDS


def test_signature_problems() -> None:
    assert signature_problems(parse_statement("MM-Send Nil Message From proc-1 Of x", lenient=True)) == (
        "MM-Send takes no From complement in V2.2 (its request complements: Nil Message; To ProcessID; With Rights; With SPM)",
        "MM-Send takes no Of complement in V2.2 (its request complements: Nil Message; To ProcessID; With Rights; With SPM)",
    )
    assert signature_problems(parse_statement("Inform Nil x From y")) == ()  # no signature
    assert signature_problems(parse_statement("UM-Send Nil m To p With Rights")) == ()  # recorded in part


# --- Rules and covers() ---------------------------------------------------------------------------------


def test_parse_rule() -> None:
    assert parse_rule("May MM-Send Nil Message").process is None
    rule = parse_rule("proc-curator-3 Must MM-Move Nil exh-1")
    assert (rule.process, rule.right.deontic) == ("proc-curator-3", "Must")
    with pytest.raises(StatementError) as info:
        parse_rule("Any Process May Not MM-Ad Nil Item")
    assert info.value.column == 21  # columns count from the start of the Rule, not of the Right
    assert info.value.text == "Any Process May Not MM-Ad Nil Item"


COVERS = [
    ("May MM-Add Nil Item", "MM-Add Nil item-1 At ML-1", True),
    ("May MM-Add Nil Item", "MM-Move Nil item-1 To ML-1", False),
    ("May MM-Add Nil item-1", "MM-Add Nil item-2", False),
    ("May MM-Add Nil Item At ML-1", "MM-Add Nil item-1 At MLocationID=ML-1", True),
    ("May MM-Add Nil Item At MLocationID=ML-1", "MM-Add Nil item-1 At ML-1", True),
    ("May MM-Add Nil Item At MLocationID=ML-1", "MM-Add Nil item-1 At MLocationID=ML-2", False),
    ("May MM-Add Nil Item At ML-1", "MM-Add Nil item-1 From ML-1", False),
    ("May MM-Add Nil Item With PerceptibilityState=1", "MM-Add Nil x With PerceptibilityState=0", False),
    ("May MM-Add Nil Item With Rights (Status=Final)", "MM-Add Nil x", True),
    ("May Property Change", "PropertyChange Nil x", True),
]


@pytest.mark.parametrize(("pattern", "statement", "expected"), COVERS)
def test_covers(pattern: str, statement: str, expected: bool) -> None:
    assert covers(parse_statement(pattern), parse_statement(statement)) is expected


# --- the documentation page --------------------------------------------------------------------------

DOC = EXAMPLES.parent.parent / "docs" / "process-actions.md"


def test_doc_examples_run() -> None:
    import doctest

    result = doctest.testfile(
        str(DOC), module_relative=False, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE
    )
    assert result.attempted >= 4
    assert result.failed == 0


def test_doc_lists_the_vocabulary() -> None:
    text = DOC.read_text(encoding="utf-8")
    for action in ACTIONS:
        assert f"| {action} |" in text, action
    for code in PA_STATUS_CODES:
        assert f"| {code} | {PA_STATUS[code].meaning} | {PA_STATUS[code].basis} |" in text, code


@pytest.mark.parametrize(
    ("text", "column", "fragment"), [r for r in REJECTED if f"| `{r[0]}` |" in DOC.read_text(encoding="utf-8")]
)
def test_doc_error_table_matches(text: str, column: int, fragment: str) -> None:
    row = next(line for line in DOC.read_text(encoding="utf-8").splitlines() if line.startswith(f"| `{text}` |"))
    assert row.endswith(f"({column}) |")


def test_the_package_exports_every_name_from_its_public_home() -> None:
    import pgm_explore.spec.process_actions as package

    for name in package.__all__:
        value = getattr(package, name)
        owner = getattr(value, "__module__", None)
        if (isinstance(value, type) or callable(value)) and isinstance(owner, str) and owner.startswith("pgm_explore"):
            assert owner == package.__name__, name
    # The MMM-TEC Rule has its own name (the old one warns: see the test below).
    assert "Rule" not in package.__all__
    assert package.parse_rule("Any Process May MM-Send Nil Message").__class__.__name__ == "ProcessRule"


def test_every_module_of_the_package_is_short() -> None:
    from pathlib import Path

    import pgm_explore.spec.process_actions as package

    lengths = {
        p.name: len(p.read_text(encoding="utf-8").splitlines()) for p in Path(package.__file__).parent.glob("*.py")
    }
    assert len(lengths) == 7
    assert max(lengths.values()) <= 500, lengths


def test_the_old_name_of_process_rule_still_works_and_says_it_is_deprecated() -> None:
    import pgm_explore.spec.process_actions as package

    with pytest.warns(DeprecationWarning, match="use ProcessRule"):
        old = package.Rule
    assert old is package.ProcessRule
    with pytest.raises(AttributeError, match="no attribute 'Rules'"):
        package.Rules  # noqa: B018
