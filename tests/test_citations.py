"""Every citation a user can see leads to a page that ships and an anchor on it.

Findings, docstrings, examples, notebooks and docs cite the team's background notes as "NOTES 6.3 D9"
(docs/notes.md, anchor ``#6-3-d9``) and the binding decisions as "DECISIONS D16" (docs/spec-notes.md,
anchor ``#d16``); docs/notes.md's introduction explains the short form. A citation whose section or item
has no anchor there is dangling, and so is naming a file that does not ship (``NOTES.md``, ``DECISIONS.md``)
or the notes without a section or a link to them.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.test_links import anchors

ROOT = Path(__file__).resolve().parents[1]
NOTES_PAGE = ROOT / "docs" / "notes.md"
DECISIONS_PAGE = ROOT / "docs" / "spec-notes.md"

# Everything a user reads: the library (finding specs, messages, docstrings, the course), the examples and
# transcripts with their expected outputs (the specs of every finding they raise, as the validator and the
# transcript checker write them), the test data the CLI prints, and the pages.
SOURCES = sorted(
    {
        *(ROOT / "pgm_explore").rglob("*.py"),
        *(ROOT / "pgm_explore").rglob("*.json"),
        *(p for p in (ROOT / "data").rglob("*") if p.suffix in (".json", ".jsonl", ".md", ".txt")),
        *(p for p in (ROOT / "tests" / "data").rglob("*") if p.suffix in (".json", ".jsonl", ".md", ".txt")),
        ROOT / "README.md",
        ROOT / "CHANGELOG.md",
        *(ROOT / "docs").glob("*.md"),
        *(ROOT / "notebooks").glob("*.ipynb"),
    }
)

_SECTION = r"§?\d+(?:\.\d+)?"
# "NOTES" then what a citation is made of: sections (6.3, §3.5, 4.2-4.4, §5.1–5.4), rule items of 6.1/6.3
# (D9, F6, O2, C1-C4) and numbered items (item 7, #1, question 3); the first other word ends it.
_NOTES = re.compile(
    rf"\bNOTES(?:\s*,?\s*(?:{_SECTION}(?:\s*[-–]\s*{_SECTION})?|[CDFOS]\d+(?:\s*[-–]\s*[CDFOS]?\d+)?"
    r"|(?:item|question|#)\s*\d+|and(?=\s+§?\d)))*"
)
_DECISIONS = re.compile(r"\bDECISIONS(?:\s+(D\d+[a-z]?)(?:\s*[-–]\s*(D\d+))?)?(\.md)?")


def _expand(first: str, last: str | None) -> list[str]:
    """``C1``–``C4`` → C1, C2, C3, C4 (``O1-2`` too); a single item → itself."""
    if not last:
        return [first]
    letter, start = first[0], int(first[1:])
    return [f"{letter}{n}" for n in range(start, int(last.lstrip(letter)) + 1)]


def notes_anchors(citation: str) -> list[str]:
    """The anchors of docs/notes.md a "NOTES …" citation names (empty: it names no section)."""
    names: list[str] = []
    section = ""
    for token in re.finditer(
        rf"({_SECTION})(?:\s*[-–]\s*({_SECTION}))?|([CDFOS]\d+)(?:\s*[-–]\s*([CDFOS]?\d+))?|(?:item|question|#)\s*(\d+)",
        citation.removeprefix("NOTES"),
    ):
        sec, sec_to, item, item_to, number = token.groups()
        if sec:
            major, _, minor = sec.lstrip("§").partition(".")
            if not minor:  # a whole chapter, "NOTES §1"
                section = major
                names.append(major)
                continue
            last = int(sec_to.lstrip("§").split(".")[1]) if sec_to else int(minor)
            section = f"{major}-{minor}"
            names += [f"{major}-{n}" for n in range(int(minor), last + 1)]
        elif item:
            names += [f"{section}-{name.lower()}" for name in _expand(item, item_to)]
        else:
            names.append(f"{section}-{number}")
    return names


def dangling(text: str, *, bare: bool) -> list[str]:
    """The citations in ``text`` that lead nowhere; with ``bare``, also mentions that name no section or decision."""
    notes, decisions = anchors(NOTES_PAGE), anchors(DECISIONS_PAGE)
    broken = []
    for match in _NOTES.finditer(text):
        names = notes_anchors(match.group(0))
        # "NOTES.md" names a file that does not ship; "NOTES" alone must be a link to docs/notes.md.
        unnamed = not names and (bare or text[match.end() : match.end() + 3] == ".md")
        target = _link_target(text, match)
        linked = target is not None and target.partition("#")[0] == "notes.md"
        if (unnamed and not linked) or any(name not in notes for name in names):
            broken.append(match.group(0).strip())
        elif names and target is not None and target not in {f"notes.md#{name}" for name in names}:
            broken.append(f"[{match.group(0).strip()}]({target})")  # the link leads elsewhere than the text says
    for match in _DECISIONS.finditer(text):
        first, last, md = match.groups()
        if not first:
            # An f-string's "DECISIONS {decision}" is filled in at run time: the expected outputs of the examples
            # (held to what the validator says by tests/test_examples.py) carry the filled-in citations.
            if md or (bare and not text.startswith(" {", match.end())):
                broken.append(match.group(0))
            continue
        named = [name.lower() for name in _expand(first, last)]
        target = _link_target(text, match)
        if any(name not in decisions for name in named) or (
            target is not None and target.rpartition("#")[2] not in named
        ):
            broken.append(match.group(0))
    return broken


def _link_target(text: str, match: re.Match[str]) -> str | None:
    """Where a Markdown link leads whose text is the citation ``match`` (None: it is not a link's text)."""
    if text[max(0, match.start() - 1)] != "[":
        return None
    link = re.match(r"[^\]\[]*\]\(([^)\s]+)\)", text[match.end() :])
    return link.group(1) if link else None


@pytest.mark.parametrize("source", SOURCES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_citation_resolves_to_an_anchor_of_a_shipped_page(source: Path) -> None:
    text = source.read_text(encoding="utf-8", errors="replace")
    if source == NOTES_PAGE:
        # The notes as written refer to each other and to DECISIONS.md; only their own introduction is held.
        text = text.partition("\n---\n")[0]
    assert dangling(text, bare=source != NOTES_PAGE) == []


@pytest.mark.parametrize(
    ("citation", "names"),
    [
        ("NOTES 6.3 D9", ["6-3", "6-3-d9"]),
        ("NOTES 6.3 F6, O2", ["6-3", "6-3-f6", "6-3-o2"]),
        ("NOTES 6.3 C1-C4", ["6-3", "6-3-c1", "6-3-c2", "6-3-c3", "6-3-c4"]),
        ("NOTES 7.5 item 7", ["7-5", "7-5-7"]),
        ("NOTES 2.6 #1", ["2-6", "2-6-1"]),
        ("NOTES §7.5, question 3", ["7-5", "7-5-3"]),
        ("NOTES §5.1–5.4", ["5-1", "5-2", "5-3", "5-4"]),
        ("NOTES §3.5, §3.6", ["3-5", "3-6"]),
        ("NOTES 4.2-4.4", ["4-2", "4-3", "4-4"]),
        ("NOTES §1", ["1"]),
    ],
)
def test_a_citation_names_its_anchors(citation: str, names: list[str]) -> None:
    match = _NOTES.search(f"({citation}).")
    assert match is not None
    assert notes_anchors(match.group(0)) == names
    assert set(names) <= anchors(NOTES_PAGE)


@pytest.mark.parametrize(
    "text",
    [
        "spec: BKN-DAC Table 3, CommitmentStatus (NOTES 6.3 C9)",
        "(NOTES 6.3 D3, D17)",
        "NOTES 8.1",
        "see NOTES 4.6 item 12",
        "(DECISIONS D19)",
        "DECISIONS D13–D19",
        "as DECISIONS.md says",
        "as NOTES.md says",
    ],
)
def test_a_dangling_citation_is_caught(text: str) -> None:
    assert dangling(text, bare=False) != []


def test_the_notes_are_named_with_a_section_or_linked() -> None:
    assert dangling("the team's notes (NOTES) say", bare=True) != []
    assert dangling("NOTES 6.3 D9, then the notes (NOTES) say", bare=True) != []
    assert dangling("the notes (NOTES) say", bare=False) == []
    assert dangling("the team's [NOTES](notes.md) say, and NOTES §3.1", bare=True) == []
    assert dangling("a D16 citation: DECISIONS D16 and DECISIONS D13–D18", bare=True) == []
    assert dangling("[NOTES 6.3 C3](notes.md#6-3-c3), [DECISIONS D16](spec-notes.md#d16)", bare=True) == []
    assert dangling("[NOTES 6.3 C3](notes.md#6-3-c2)", bare=True) != []
    assert dangling("[DECISIONS D16](#d15)", bare=True) != []


def test_the_sources_hold_citations_to_check() -> None:
    texts = [source.read_text(encoding="utf-8", errors="replace") for source in SOURCES]
    assert sum(len(_NOTES.findall(text)) for text in texts) > 50
    assert sum(len(_DECISIONS.findall(text)) for text in texts) > 100
