"""The inspector's bearer token never lands in a saved notebook (follow-up to issues 19 and 22).

The attack: JupyterLab's "Save Widget State Automatically" writes every widget's synced state into
the .ipynb on save, a Password box's value included. So a person turns that setting on in the
page, types a partner's token into the Token box with real key events, connects to a partner served
beyond loopback (``serve domain-access --http --host 0.0.0.0 --token``), calls its tool, and saves
with Ctrl+S; the file read from disk holds the widget state (the URL typed is there) but not the
token. A token typed and saved before Connect (with the focus still in the box, after leaving it,
after more keystrokes) is not in the file either, the box still shows it, and Connect sends it (the
box keeps its text out of the widget state: pgm_explore/widgets/_secret.py). Connect again with the box empty keeps working (the token is kept in the kernel), Forget
token drops it (the partner then asks for one), a token typed again connects, and a Connect to another
URL does not send it there.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from tests import probing

from .conftest import ACTION_MS, NO_PLAYWRIGHT, WIDGETS_MS, Notebook, type_into, wait_for_idle

if TYPE_CHECKING:
    from playwright.sync_api import Locator, Page

expect = pytest.importorskip("playwright.sync_api", reason=NO_PLAYWRIGHT).expect
pytest.importorskip("mcp", reason='the inspector needs the mcp extra (pip install -e ".[mcp]")')
pytestmark = pytest.mark.e2e

TOKEN = "tok-e2e-8f3b27-never-in-the-notebook"
SAVE_STATE = "@jupyter-widgets/jupyterlab-manager:saveWidgetState"
WIDGET_STATE = "application/vnd.jupyter.widget-state+json"


@pytest.fixture
def guarded_partner() -> Iterator[str]:
    """``serve domain-access --http --host 0.0.0.0 --token TOKEN``; its URL."""
    with probing.http_server(probing.guarded_reference_http("domain-access", TOKEN)) as url:
        yield url


@pytest.fixture
def other_partner() -> Iterator[str]:
    """A second partner beyond loopback, with a token of its own; its URL."""
    with probing.http_server(probing.guarded_reference_http("domain-access", TOKEN + "-other")) as url:
        yield url


@pytest.fixture
def widget_state_setting(e2e_env: dict[str, str]) -> Iterator[Path]:
    """The user-settings file the page writes when the setting is toggled; removed afterwards, so
    that the Lab server other tests share saves no widget state."""
    path = (
        Path(e2e_env["JUPYTERLAB_SETTINGS_DIR"])
        / "@jupyter-widgets"
        / "jupyterlab-manager"
        / "plugin.jupyterlab-settings"
    )
    assert not path.exists(), f"{path} left by another test"
    yield path
    path.unlink(missing_ok=True)


def _turn_on_saving_widget_state(page: Page, setting: Path) -> None:
    """Settings → Save Widget State Automatically, as a person clicks it; until the setting is stored."""
    page.locator(".lm-MenuBar-item", has_text="Settings").click()
    item = page.locator(f'li.lm-Menu-item[data-command="{SAVE_STATE}"]')
    expect(item).to_be_visible(timeout=ACTION_MS)
    expect(item).not_to_have_class(re.compile(r"lm-mod-toggled"))
    item.click()
    deadline = time.monotonic() + ACTION_MS / 1000
    while not (setting.exists() and '"saveState": true' in setting.read_text(encoding="utf-8")):
        assert time.monotonic() < deadline, f"the page did not store saveState in {setting}"
        time.sleep(0.2)


def _save(notebook: Notebook, *, blur: bool = True) -> dict[str, object]:
    """Ctrl+S with the notebook (not a widget's box) focused, or (``blur=False``) File → Save Notebook
    from the menu bar, whose clicks leave the focus where it was; the file as written to disk."""
    page = notebook.page
    before = notebook.path.stat().st_mtime_ns
    if blur:
        notebook.panel.locator(".jp-Cell .jp-InputArea-prompt").first.click()  # command mode, focus off the widgets
        page.keyboard.press("Control+s")
    else:  # Ctrl+S in a widget's box is the box's own key, not JupyterLab's
        page.locator(".lm-MenuBar-item", has_text="File").click()
        page.locator('li.lm-Menu-item[data-command="docmanager:save"]').click()
    deadline = time.monotonic() + ACTION_MS / 1000
    while notebook.path.stat().st_mtime_ns == before:
        assert time.monotonic() < deadline, "Ctrl+S did not write the notebook"
        time.sleep(0.2)
    expect(page.locator(".lm-TabBar-tab.jp-mod-current.jp-mod-dirty")).to_have_count(0, timeout=ACTION_MS)
    text = notebook.path.read_text(encoding="utf-8")
    assert TOKEN not in text, "the bearer token was written into the notebook"
    return json.loads(text)


def _widget_models(saved: dict[str, object]) -> list[dict[str, object]]:
    """The saved state of every widget model, asserting the setting took effect (else no attack)."""
    models = list(saved["metadata"]["widgets"][WIDGET_STATE]["state"].values())  # type: ignore[index]
    assert models, "the widget state was not saved: the attack was not tried"
    return models


def _token_typed(
    open_code_in_lab: Callable[[list[str]], Notebook], setting: Path, url: str
) -> tuple[Notebook, Locator, Locator]:
    """A PartnerInspector in a new notebook, "Save Widget State Automatically" turned on, a URL
    picked, ``url`` and TOKEN typed: the notebook, the inspector and its Token box."""
    notebook = open_code_in_lab(["from pgm_explore.widgets import PartnerInspector\nPartnerInspector()"])
    _turn_on_saving_widget_state(notebook.page, setting)
    inspector = notebook.panel.locator(".pgmx-inspector")
    expect(inspector).to_be_visible(timeout=WIDGETS_MS)
    inspector.locator(".pgmx-inspector-partner select").select_option("a URL…")
    token_box = inspector.locator(".pgmx-inspector-token input")
    expect(token_box).to_be_visible(timeout=WIDGETS_MS)
    type_into(inspector.locator(".pgmx-inspector-target input"), url)
    type_into(token_box, TOKEN)
    return notebook, inspector, token_box


def _connect(inspector: Locator, url: str) -> None:
    inspector.locator("button.pgmx-inspector-connect").click()
    expect(inspector.locator(".pgmx-inspector-status")).to_contain_text(
        f"Connected to {url} (over Streamable HTTP): 1 tool", timeout=WIDGETS_MS
    )


def _send(inspector: Locator) -> None:
    expect(inspector.locator(".pgmx-inspector-request .pgmx-composer")).to_be_visible(timeout=WIDGETS_MS)
    inspector.locator("button.pgmx-inspector-send").click()
    expect(inspector.locator(".pgmx-inspector-status")).to_contain_text("bkn_dac: answered", timeout=WIDGETS_MS)


def test_a_saved_notebook_keeps_no_token_and_the_inspector_keeps_working(
    open_code_in_lab: Callable[[list[str]], Notebook],
    guarded_partner: str,
    other_partner: str,
    widget_state_setting: Path,
    shot: Callable[[str], Path],
) -> None:
    notebook, inspector, token_box = _token_typed(open_code_in_lab, widget_state_setting, guarded_partner)
    page = notebook.page
    _connect(inspector, guarded_partner)
    expect(token_box).to_have_value("")
    state = inspector.locator(".pgmx-inspector-token-state")
    expect(state).to_contain_text(f"A token is set for {guarded_partner}: kept in the kernel, not in the notebook")
    expect(inspector.locator("button.pgmx-inspector-forget")).to_be_visible()
    _send(inspector)
    inspector.locator(".pgmx-inspector-partner").scroll_into_view_if_needed()
    shot("connected and answered, the Token box empty")

    wait_for_idle(page)
    saved = _save(notebook)
    values = [model["state"].get("value") for model in _widget_models(saved)]  # type: ignore[attr-defined]
    assert guarded_partner in values, "the widget state was not saved: the attack was not tried"

    # Connect again, the box empty: the token kept in the kernel is sent, the call goes through.
    _connect(inspector, guarded_partner)
    _send(inspector)
    _save(notebook)

    # Forget token: the partner then asks for one; typed again, it connects.
    inspector.locator("button.pgmx-inspector-forget").click()
    expect(inspector.locator(".pgmx-inspector-status")).to_contain_text("Token forgotten")
    expect(state).to_be_hidden()
    status = inspector.locator(".pgmx-inspector-status")
    for button in ("send", "connect"):  # the open connection was closed with it: Send reconnects without
        inspector.locator(f"button.pgmx-inspector-{button}").click()
        expect(status).to_contain_text(
            "the partner asks for a bearer token: type its token in the Token box", timeout=WIDGETS_MS
        )
        expect(status).not_to_contain_text("answered")
    type_into(token_box, TOKEN)
    _connect(inspector, guarded_partner)
    _send(inspector)
    expect(token_box).to_have_value("")
    inspector.locator(".pgmx-inspector-partner").scroll_into_view_if_needed()
    shot("forgotten, typed again, connected")

    # Another URL, the box empty: the token kept for the first one is not sent there (that partner
    # says none came, not that a wrong one did), and the line saying a token is set goes.
    type_into(inspector.locator(".pgmx-inspector-target input"), other_partner)
    inspector.locator("button.pgmx-inspector-connect").click()
    expect(inspector.locator(".pgmx-inspector-status")).to_contain_text(
        f"could not connect to {other_partner}: the partner asks for a bearer token", timeout=WIDGETS_MS
    )
    expect(state).to_be_hidden()
    _save(notebook)
    expect(page.locator("body")).not_to_contain_text(TOKEN)
    expect(page.locator("body")).not_to_contain_text("Traceback")


def test_a_token_typed_and_saved_before_connect_stays_out_of_the_notebook_and_connects(
    open_code_in_lab: Callable[[list[str]], Notebook],
    guarded_partner: str,
    widget_state_setting: Path,
    shot: Callable[[str], Path],
) -> None:
    """The person types the token and saves before Connect: with the focus still in the box (File →
    Save Notebook), then again after leaving it (the box's change event, which a text box syncs on
    blur), then after one more keystroke and Backspace. No save holds the token; the box still shows
    what was typed, and Connect sends it."""
    notebook, inspector, token_box = _token_typed(open_code_in_lab, widget_state_setting, guarded_partner)
    page = notebook.page
    expect(token_box).to_have_attribute("type", "password")
    wait_for_idle(page)  # whatever the browser sends the kernel while typing has been sent
    saved = _save(notebook, blur=False)
    assert guarded_partner in [m["state"].get("value") for m in _widget_models(saved)]  # type: ignore[attr-defined]
    expect(token_box).to_have_value(TOKEN)  # nothing typed was lost

    _save(notebook)  # the focus leaves the box first
    token_box.click()
    token_box.press("End")
    token_box.press_sequentially("x", delay=20)
    token_box.press("Backspace")
    wait_for_idle(page)
    _save(notebook)
    expect(token_box).to_have_value(TOKEN)
    shot("typed and saved before Connect: the box keeps it, the file does not")

    _connect(inspector, guarded_partner)
    expect(token_box).to_have_value("")
    expect(inspector.locator(".pgmx-inspector-token-state")).to_contain_text(
        f"A token is set for {guarded_partner}: kept in the kernel, not in the notebook"
    )
    _send(inspector)
    _save(notebook)
    expect(page.locator("body")).not_to_contain_text(TOKEN)
    expect(page.locator("body")).not_to_contain_text("Traceback")
