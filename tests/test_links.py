"""Every link of the README, the changelog, the docs, the data folders' READMEs and the notebooks
leads somewhere: the file it names exists, and the heading its anchor names is in it.

Anchors are GitHub's, made from a heading's text as github-slugger makes them (lower case, spaces
as dashes, punctuation dropped, ``-1``, ``-2``... for a heading written again), so a link that works
here works on GitHub; ``tests/e2e/test_docs_links.py`` clicks the notebooks' links in JupyterLab and
Voilà. Links to the web are not followed (nothing is fetched over the network).
"""

from __future__ import annotations

import re
from pathlib import Path

import nbformat
import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = sorted(
    [
        ROOT / "README.md",
        ROOT / "CHANGELOG.md",
        *(ROOT / "docs").glob("*.md"),
        *(ROOT / "data").rglob("README.md"),
        *(ROOT / "notebooks").glob("*.ipynb"),
    ]
)
# [text](target) or ![alt](target "title"); the text may hold `code` and [brackets] one level deep.
LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\[\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
FENCE = re.compile(r"^(```|~~~).*?^\1", re.M | re.S)


def github_anchor(heading: str) -> str:
    """The anchor GitHub gives a heading.

    >>> github_anchor("D2 – `Header` is a constant; PC Prompt has no `Mode`")
    'd2--header-is-a-constant-pc-prompt-has-no-mode'
    >>> github_anchor("### `mode-forbidden`".lstrip("# ")), github_anchor("The [app](x.md) page")
    ('mode-forbidden', 'the-app-page')
    """
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link reads as its text
    text = re.sub(r"<[^>]+>", "", text).replace("`", "").replace("*", "").strip().lower()
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def _text(page: Path) -> str:
    """The Markdown of a page: a notebook's Markdown cells, without fenced code."""
    if page.suffix == ".ipynb":
        cells = nbformat.read(page, as_version=4).cells
        text = "\n\n".join(cell.source for cell in cells if cell.cell_type == "markdown")
    else:
        text = page.read_text(encoding="utf-8")
    return FENCE.sub("", text)


def anchors(page: Path) -> set[str]:
    """The anchors a Markdown page has: its headings' (GitHub's), and any ``id``/``name`` it writes."""
    found: set[str] = set()
    seen: dict[str, int] = {}
    for line in _text(page).splitlines():
        heading = re.match(r"^#{1,6}\s+(.*?)\s*#*\s*$", line)
        if heading:
            slug = github_anchor(heading.group(1))
            count = seen.get(slug, 0)
            seen[slug] = count + 1
            found.add(slug if count == 0 else f"{slug}-{count}")
        found.update(re.findall(r"<a\s+(?:id|name)=\"([^\"]+)\"", line))
    return found


def links(page: Path) -> list[str]:
    return [target for target in LINK.findall(_text(page)) if not re.match(r"^[a-z][a-z0-9+.-]*:", target)]


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_link_leads_to_a_file_and_a_heading_in_it(page: Path) -> None:
    broken = []
    for target in links(page):
        path, _, anchor = target.partition("#")
        file = (page.parent / path).resolve() if path else page
        if not file.exists():
            broken.append(f"{target}: no {file.relative_to(ROOT) if file.is_relative_to(ROOT) else file}")
        elif anchor and file.suffix in (".md", ".ipynb") and anchor not in anchors(file):
            broken.append(f"{target}: no heading #{anchor} in {file.relative_to(ROOT)}")
    assert broken == []


def test_the_pages_have_links_and_anchors_to_check() -> None:
    assert len(PAGES) > 10
    notes = anchors(ROOT / "docs" / "spec-notes.md")
    assert {"d2--header-is-a-constant-pc-prompt-has-no-mode", "d2", "p19"} <= notes  # (a heading's, and its own id)
    assert sum(len(links(page)) for page in PAGES) > 50
