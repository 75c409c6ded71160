"""Every link of the notebooks to the documentation opens it, in JupyterLab and in Voilà.

The servers serve the repository's layout (notebooks/, docs/, data/ side by side), as
``pgm-explore lab`` and ``pgm-explore app`` do. In JupyterLab a click on ``../docs/rules.md`` opens
the document in Lab's Markdown viewer, at its heading; in Voilà the link leads to the same file
(``voila/files/...``), rendered as a page whose headings carry GitHub's anchors.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import nbformat
import pytest

from .conftest import KERNEL_MS, NO_PLAYWRIGHT, ROOT, Server, _slug

if TYPE_CHECKING:
    from playwright.sync_api import Locator, Page

expect = pytest.importorskip("playwright.sync_api", reason=NO_PLAYWRIGHT).expect
pytestmark = pytest.mark.e2e

NOTEBOOKS = sorted((ROOT / "notebooks").glob("*.ipynb"))
LINK = re.compile(r"\]\((\.\./[^)\s]+\.md)(?:#([^)\s]*))?\)")


def _links(path: Path) -> list[tuple[str, str]]:
    """(target, anchor) of every Markdown link of the notebook's text cells to a document of the repository."""
    found: dict[tuple[str, str], None] = {}
    for cell in nbformat.read(path, as_version=4).cells:
        if cell.cell_type == "markdown":
            for match in LINK.finditer(cell.source):
                found[(match.group(1), match.group(2) or "")] = None
    return list(found)


def _title(target: str, *, rendered: bool = True) -> str:
    """The first heading of the document a link names (relative to notebooks/), as Lab renders it
    (code marks gone) or as its text says."""
    text = (ROOT / "notebooks" / target).resolve().read_text(encoding="utf-8")
    title = next(line.lstrip("#").strip() for line in text.splitlines() if line.startswith("# "))
    return title.replace("`", "") if rendered else title


def _heading(target: str, anchor: str) -> str:
    """The heading an anchor names, as the document writes it: GitHub's slug of its words (lower
    case, dashes), or the ``<a id>`` it holds (``spec-notes.md#d2``)."""
    text = (ROOT / "notebooks" / target).resolve().read_text(encoding="utf-8")
    for line in text.splitlines():
        if line.startswith("#"):
            words = re.sub(r"<[^>]+>", "", line.lstrip("#")).strip()
            slug = re.sub(r"[^a-z0-9 -]", "", words.lower().replace("`", "")).replace(" ", "-")
            if slug == anchor or f'<a id="{anchor}">' in line:
                return words.replace("`", "")
    raise AssertionError(f"{target} has no heading #{anchor}")


def _headed(anchor: str) -> str:
    """A selector of the heading an anchor names: by Lab's id of its words (in their case: GitHub's
    anchors are lower case), by its own id, or as the heading that holds an ``<a id>``."""
    levels = ", ".join(f"h{n}" for n in range(1, 7))
    named = f'[id="{anchor}"], [data-jupyter-id="{anchor}"]'  # (Lab writes an id as data-jupyter-id)
    return f'[data-jupyter-id="{anchor}" i]:is({levels}), [id="{anchor}"]:is({levels}), :is({levels}):has({named})'


def _unfold(link: Locator) -> None:
    """A link inside a folded block (a Hint): unfold it, as a reader does."""
    folded = link.locator("xpath=ancestor::details[1]")
    if folded.count() and folded.get_attribute("open") is None:
        folded.locator("summary").first.click()


def _covering(notebooks: list[Path]) -> list[Path]:
    """The notebooks whose links, together, name every (document, anchor) that any notebook links
    to: each adds one the notebooks before it (most links first) do not. A link is followed the same
    way whichever notebook holds it, and opening a notebook costs a kernel (in Voilà it runs every
    cell): the others' links are clicked in these (and their targets checked to exist below)."""
    chosen: list[Path] = []
    seen: set[tuple[str, str]] = set()
    for path in sorted(notebooks, key=lambda p: (-len(_links(p)), p.name)):
        if set(_links(path)) - seen:
            chosen.append(path)
            seen |= set(_links(path))
    return sorted(chosen)


COVERING = _covering(NOTEBOOKS)


def test_every_notebook_links_to_the_documents() -> None:
    """The tests below have something to click: the notebooks do link to docs/ (and every target
    exists), and the notebooks they open hold every one of those links."""
    links = {path.name: _links(path) for path in NOTEBOOKS}
    assert sum(map(len, links.values())) >= 10, links
    for name, found in links.items():
        for target, _ in found:
            assert (ROOT / "notebooks" / target).resolve().is_file(), f"{name} links to a missing {target}"
    clicked = {link for path in COVERING for link in _links(path)}
    assert clicked == {link for found in links.values() for link in found}


@pytest.mark.parametrize("path", COVERING, ids=lambda p: p.name[:2])
def test_lab_opens_each_docs_link(
    path: Path, page: Page, lab_server: Server, request: pytest.FixtureRequest, shot: Callable[[str], Path]
) -> None:
    links = _links(path)
    workspace = _slug(request.node.name)
    page.goto(f"{lab_server.url}lab/workspaces/{workspace}/tree/notebooks/{path.name}?token={lab_server.token}")
    notebook_tab = page.locator(".lm-DockPanel-tabBar .lm-TabBar-tab", has_text=path.name)
    expect(notebook_tab).to_be_visible(timeout=KERNEL_MS)
    for target, anchor in links:
        notebook_tab.click()
        name = Path(target).name
        link = page.locator(
            ".jp-NotebookPanel:not(.lm-mod-hidden) .jp-MarkdownCell .jp-RenderedMarkdown "
            f'a:not(.jp-InternalAnchorLink)[href*="/{Path(target).parent.name}/{name}"]'
        ).first
        _unfold(link)
        link.scroll_into_view_if_needed()
        link.click()
        viewer = page.locator(".jp-MarkdownViewer")
        current = page.locator(".lm-DockPanel-tabBar .lm-TabBar-tab.lm-mod-current")
        expect(current).to_contain_text(name)
        expect(viewer.locator("h1").first).to_have_text(re.compile(re.escape(_title(target))))
        if anchor:  # the anchor names a heading of the document, as Lab renders it
            expect(viewer.locator(_headed(anchor)).first).to_contain_text(_heading(target, anchor))
        shot(f"{name} opened")
        current.locator(".lm-TabBar-tabCloseIcon").click()  # one document open at a time
        expect(viewer).to_have_count(0)


@pytest.mark.parametrize("path", COVERING, ids=lambda p: p.name[:2])
def test_voila_serves_each_docs_link(path: Path, page: Page, voila_server: Server) -> None:
    links = _links(path)
    page.goto(voila_server.at(f"voila/render/notebooks/{path.name}"), timeout=KERNEL_MS)
    for target, anchor in links:
        link = page.locator(f'a[href^="{target}"]').first
        expect(link).to_be_attached(timeout=KERNEL_MS)
        _unfold(link)
        expect(link).to_be_visible()
        # A Ctrl+click opens the document in a new tab, and the page stays as it is.
        with page.context.expect_page() as opened:
            link.click(modifiers=["Control"])
        document = opened.value
        document.wait_for_load_state()
        assert "/voila/files/" in document.url, document.url
        # The document rendered: its title a heading, no Markdown mark-up left in the text.
        expect(document.locator("h1").first).to_have_text(re.compile(re.escape(_title(target))))
        assert f"# {_title(target, rendered=False)}" not in document.locator("body").inner_text()
        if anchor:  # the anchor names a heading of the page, as on GitHub
            expect(document.locator(_headed(anchor)).first).to_contain_text(_heading(target, anchor))
        document.close()
