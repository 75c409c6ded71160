"""Each rule is declared once, in RULES; the RuleCode type and docs/rules.md say what it says.

``docs/rules.py`` writes both from the registry; these tests fail when either was edited by hand
or not rewritten after a change of the registry, and hold every finding's clause to its rule's.
"""

from __future__ import annotations

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
