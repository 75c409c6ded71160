"""Each rule is declared once, in RULES; the RuleCode type and docs/rules.md say what it says.

``docs/rules.py`` writes both from the registry; these tests fail when either was edited by hand
or not rewritten after a change of the registry, and hold every finding's clause to its rule's.
"""

from __future__ import annotations

import ast
import runpy
from dataclasses import replace
from pathlib import Path
from types import SimpleNamespace
from typing import get_args

import pytest

from pgm_explore.validation import RULES, Finding
from pgm_explore.validation.findings import RuleCode
from tests.test_links import anchors, github_anchor

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "rules.md"


@pytest.fixture(scope="module")
def rules_py() -> SimpleNamespace:
    return SimpleNamespace(**runpy.run_path(str(ROOT / "docs" / "rules.py")))


def _texts(rules_py: SimpleNamespace) -> tuple[str, str]:
    return rules_py.DOC.read_text(encoding="utf-8"), rules_py.SOURCE.read_text(encoding="utf-8")


def test_the_page_and_the_type_are_what_the_registry_gives(rules_py: SimpleNamespace) -> None:
    assert rules_py.problems(*_texts(rules_py)) == [], "run python docs/rules.py --write"
    assert rules_py.main(["--check"]) == 0


def test_rule_registry_and_rule_code_type_list_the_same_codes() -> None:
    # A test, not an import-time assert: `python -O` would strip the assert and the two could drift.
    assert list(RULES) == list(get_args(RuleCode))


def test_every_code_has_its_heading_at_its_anchor() -> None:
    have = anchors(DOC)
    for code, rule in RULES.items():
        page, _, anchor = rule.anchor.partition("#")
        assert ROOT / page == DOC
        assert anchor == github_anchor(f"`{code}`") and anchor in have, code


def test_a_change_of_the_registry_is_a_problem_until_written(rules_py: SimpleNamespace) -> None:
    # The check can fail: a changed clause, a new code, a code moved to another scope are each seen.
    doc, source = _texts(rules_py)
    changed = dict(RULES)
    changed["turn-gap"] = replace(RULES["turn-gap"], spec="{type} Table 1, TurnIndex")
    assert rules_py.problems(doc, source, changed) == ["docs/rules.md: the head of turn-gap is not the registry's"]
    new_doc, new_source = rules_py.written(doc, source, changed)
    assert rules_py.problems(new_doc, new_source, changed) == []
    assert "- spec: `{type} Table 1, TurnIndex`\n- example:" in new_doc
    moved = {**RULES, "turn-gap": replace(RULES["turn-gap"], scope="partner")}
    assert "not a section for scope partner" in " ".join(rules_py.problems(doc, source, moved))
    added = {**RULES, "new-rule": replace(RULES["turn-gap"], code="new-rule")}
    found = rules_py.problems(doc, source, added)
    assert any("RuleCode is not the codes of RULES" in p for p in found)
    assert any("no heading ### `new-rule`" in p for p in found)


@pytest.mark.parametrize(
    ("code", "path", "data_type", "clause"),
    [
        ("turn-mismatch", ("TurnIndex",), "BKN-PAL", 'BKN-PAL Functional Requirement "Dialogue"; DECISIONS D16'),
        ("released-twice", ("ReleasedCommitmentIDs", 0), None, "BKN-DAC Table 2, ReleasedCommitmentIDs (NOTES 6.3 C2)"),
        (
            "range",
            ("Feasibility", "Steps", 2, "PAStatus"),
            "BKN-DAC",
            "BKN-DAC Table 3 (Response), Feasibility – Steps – PAStatus",
        ),
        (
            "required",
            ("DataXMData", "Source"),
            "BKN-PAL",
            "PTF V1.0 Data Exchange Metadata (DECISIONS D6), via BKN-PAL Table 1, DataXMData",
        ),
        ("schema", (), "PC Prompt", "PC Prompt"),
        ("partner-error", (), None, "MCP binding of PGM-AUA, docs/mcp.md"),
    ],
)
def test_a_finding_carries_its_rules_clause(
    code: RuleCode, path: tuple[str | int, ...], data_type: str | None, clause: str
) -> None:
    finding = Finding.of(code, path, "a message", data_type=data_type)
    assert (finding.spec, finding.severity) == (clause, RULES[code].severity)
    assert Finding.of(code, path, "a message", "a clause of its own").spec == "a clause of its own"


def test_a_clause_that_names_the_type_cannot_be_made_without_one() -> None:
    with pytest.raises(ValueError, match="turn-gap"):
        Finding.of("turn-gap", ("TurnIndex",), "TurnIndex 3 follows 0.")


def _made_in_the_package() -> list[tuple[str, ast.Call]]:
    calls = []
    for path in sorted((ROOT / "pgm_explore").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr == "of"
                and isinstance(node.func.value, ast.Name)
                and node.func.value.id == "Finding"
            ):
                calls.append((f"{path.relative_to(ROOT)}:{node.lineno}", node))
    return calls


def test_every_finding_the_package_makes_can_have_its_rules_clause() -> None:
    # A clause that names the type or the place needs the data type: seen here, not on the one path
    # of a message that reaches the call. A clause written out at a call is not the rule's own.
    calls = _made_in_the_package()
    assert len(calls) > 50
    for where, call in calls:
        if not call.args or not isinstance(call.args[0], ast.Constant):
            continue  # (a code passed on: the call that chose it is held to this)
        code = call.args[0].value
        assert code in RULES, where
        given = call.args[3] if len(call.args) > 3 else next((k.value for k in call.keywords if k.arg == "spec"), None)
        maybe_none = (
            given is None or isinstance(given, ast.IfExp) or (isinstance(given, ast.Constant) and given.value is None)
        )
        if maybe_none and "{" in RULES[code].spec:
            assert any(k.arg == "data_type" for k in call.keywords), f"{where}: {code} needs a data_type"
        if isinstance(given, ast.Constant) and isinstance(given.value, str):
            assert given.value != RULES[code].spec, f"{where}: the clause of {code} written out again"
