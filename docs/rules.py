"""Write what the rule registry says into the two places that repeat it: ``RuleCode`` and docs/rules.md.

A rule is declared once, as its ``Rule`` in ``RULES`` (``pgm_explore/validation/findings.py``): code,
severity, conformance, summary, spec clause and scope. Two things are made from it here, never by hand:

- the ``RuleCode`` Literal in the same file, between its markers, so that type checkers know the
  closed list of codes (a Literal cannot be computed at run time and still be seen by mypy);
- the head of each rule's section in [rules.md](rules.md): under its ``### `code``` heading, the
  severity line, the summary and the spec clause, before the hand-written example and notes.

    python docs/rules.py --write    # rewrite both from RULES
    python docs/rules.py --check    # exit 1 when either holds something else

``tests/test_rules_doc.py`` runs the check. A new rule's heading is written by hand, in the section of
its scope, with its example; ``--write`` then fills in its head.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path

from pgm_explore.validation import RULES, Rule

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "rules.md"
SOURCE = ROOT / "pgm_explore" / "validation" / "findings.py"

BEGIN = "# BEGIN generated from RULES by `python docs/rules.py --write`: do not edit\n"
END = "# END generated\n"
HEADING = re.compile(r"^### `([a-z-]+)`\n\n", re.M)
EXAMPLE = "- example:"
SECTIONS: Mapping[str, tuple[str, ...]] = {
    "message": (
        "Reading the input",
        "Read, but worth a word",
        "Telling the data type",
        "Conformance (the verdict)",
        "Consistency within one message",
        "The report itself",
    ),
    "transcript": ("Transcript rules",),
    "partner": ("Partners over MCP",),
}
"""The sections of rules.md a rule of each scope may be documented in."""


def rule_codes(rules: Mapping[str, Rule] = RULES) -> str:
    """The ``RuleCode`` Literal, as findings.py holds it between the markers."""
    return "RuleCode = Literal[\n" + "".join(f'    "{code}",\n' for code in rules) + "]\n"


def head(rule: Rule) -> str:
    """The lines under a rule's heading that come from the registry.

    >>> print(head(RULES["turn-mismatch"]), end="")
    - severity: **error**; does not change the verdict
    - A Response whose TurnIndex differs from its Request's.
    - spec: `{type} Functional Requirement "Dialogue"; DECISIONS D16`
    """
    verdict = "breaks conformance" if rule.conformance else "does not change the verdict"
    return f"- severity: **{rule.severity}**; {verdict}\n- {rule.summary}\n- spec: `{rule.spec}`\n"


def sections(text: str) -> dict[str, tuple[str, int, int]]:
    """Each documented code: (its ``## `` section, where its head starts, where its example starts)."""
    found: dict[str, tuple[str, int, int]] = {}
    for match in HEADING.finditer(text):
        section = re.findall(r"^## (.+)$", text[: match.start()], re.M)
        example = text.find(f"\n{EXAMPLE}", match.end())
        stop = text.find("\n#", match.end())
        end = example + 1 if example != -1 and (stop == -1 or example < stop) else match.end()
        if match.group(1) in found:
            raise ValueError(f"docs/rules.md documents {match.group(1)} twice")
        found[match.group(1)] = (section[-1] if section else "", match.end(), end)
    return found


def problems(doc: str, source: str, rules: Mapping[str, Rule] = RULES) -> list[str]:
    """What docs/rules.md and findings.py say that the registry does not (empty: nothing)."""
    found = []
    if _block(source) != rule_codes(rules):
        found.append(f"{SOURCE.relative_to(ROOT)}: RuleCode is not the codes of RULES")
    documented = sections(doc)
    for code, rule in rules.items():
        if code not in documented:
            found.append(
                f"docs/rules.md: no heading ### `{code}` (write it in one of {', '.join(SECTIONS[rule.scope])})"
            )
            continue
        section, start, end = documented[code]
        if section not in SECTIONS[rule.scope]:
            found.append(f"docs/rules.md: {code} is under '## {section}', not a section for scope {rule.scope}")
        if doc[start:end] != head(rule):
            found.append(f"docs/rules.md: the head of {code} is not the registry's")
    found.extend(f"docs/rules.md: {code} is no code of RULES" for code in documented if code not in rules)
    return found


def written(doc: str, source: str, rules: Mapping[str, Rule] = RULES) -> tuple[str, str]:
    """docs/rules.md and findings.py with what comes from the registry written anew."""
    old = _block(source)
    source = source.replace(BEGIN + old + END, BEGIN + rule_codes(rules) + END)
    for code, (_, start, end) in sorted(sections(doc).items(), key=lambda item: -item[1][1]):
        if code in rules:
            doc = doc[:start] + head(rules[code]) + doc[end:]
    return doc, source


def _block(source: str) -> str:
    start = source.index(BEGIN) + len(BEGIN)
    return source[start : source.index(END, start)]


def main(argv: Iterable[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    action = parser.add_mutually_exclusive_group(required=True)
    action.add_argument("--write", action="store_true", help="write RuleCode and the heads of docs/rules.md")
    action.add_argument("--check", action="store_true", help="exit 1 when either differs from RULES")
    args = parser.parse_args(None if argv is None else list(argv))
    doc, source = DOC.read_text(encoding="utf-8"), SOURCE.read_text(encoding="utf-8")
    if args.write:
        new_doc, new_source = written(doc, source)
        DOC.write_text(new_doc, encoding="utf-8")
        SOURCE.write_text(new_source, encoding="utf-8")
        doc, source = new_doc, new_source
    found = problems(doc, source)
    for problem in found:
        print(problem, file=sys.stderr)
    if found and args.check:
        print("run python docs/rules.py --write", file=sys.stderr)
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
