"""The closed list of rule codes and its documentation agree, code for code."""

from __future__ import annotations

import re
from pathlib import Path

from pgm_explore.validation import RULES

DOC = Path(__file__).resolve().parents[1] / "docs" / "rules.md"
HEADING = re.compile(
    r"^### `([a-z-]+)`\n\n- severity: \*\*(error|warning)\*\*; (breaks conformance|does not change)", re.M
)


def test_every_code_is_documented_once_with_its_severity() -> None:
    documented = HEADING.findall(DOC.read_text(encoding="utf-8"))
    codes = [code for code, _, _ in documented]
    assert len(codes) == len(set(codes)), "a code is documented twice"
    assert set(codes) == set(RULES)
    for code, severity, conformance in documented:
        assert RULES[code].severity == severity, code
        assert RULES[code].conformance == (conformance == "breaks conformance"), code


def test_rule_registry_and_rule_code_type_list_the_same_codes() -> None:
    # A test, not an import-time assert: `python -O` would strip the assert and the two could drift.
    from typing import get_args

    from pgm_explore.validation.findings import RuleCode

    assert set(RULES) == set(get_args(RuleCode))
