"""The app's Inspect tab and a partner served beyond loopback, which asks for a bearer token
(issue 19), in Chromium as a person tries it: a URL without the token, or with a wrong one, is a
sentence naming the fix; the token typed in the password box connects, and the call goes through.
The token is never shown on the page, and Connect empties the box (the token is kept in the kernel)."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from tests import probing

from .conftest import NO_PLAYWRIGHT, WIDGETS_MS, Server, open_app, type_into

if TYPE_CHECKING:
    from playwright.sync_api import Page

expect = pytest.importorskip("playwright.sync_api", reason=NO_PLAYWRIGHT).expect
pytest.importorskip("mcp", reason='the inspector needs the mcp extra (pip install -e ".[mcp]")')
pytestmark = pytest.mark.e2e

TOKEN = "tok-e2e-5d1a9c-inspect"


@pytest.fixture
def guarded_partner() -> Iterator[str]:
    """``serve domain-access --http --host 0.0.0.0 --token TOKEN``; its URL."""
    with probing.http_server(probing.guarded_reference_http("domain-access", TOKEN)) as url:
        yield url


def test_the_inspect_tab_connects_to_a_partner_that_asks_for_a_token(
    page: Page, app_server: Server, guarded_partner: str, shot: Callable[[str], Path]
) -> None:
    inspector = open_app(page, app_server, "Inspect").locator(".pgmx-inspector")
    expect(inspector).to_be_visible(timeout=WIDGETS_MS)
    token_box = inspector.locator(".pgmx-inspector-token input")
    expect(token_box).to_be_hidden()  # a reference partner of this page needs none
    inspector.locator(".pgmx-inspector-partner select").select_option("a URL…")
    expect(token_box).to_be_visible(timeout=WIDGETS_MS)
    expect(token_box).to_have_attribute("type", "password")
    type_into(inspector.locator(".pgmx-inspector-target input"), guarded_partner)
    status = inspector.locator(".pgmx-inspector-status")
    connect = inspector.locator("button.pgmx-inspector-connect")

    connect.click()
    expect(status).to_contain_text(
        f"could not connect to {guarded_partner}: the partner asks for a bearer token: type its token in the Token box",
        timeout=WIDGETS_MS,
    )
    shot("no token: the fix in words")
    type_into(token_box, TOKEN + "x")
    connect.click()
    expect(status).to_contain_text("refused the bearer token sent (401)", timeout=WIDGETS_MS)
    # The app's Inspect tab is the notebook's PartnerInspector: Connect takes the token out of the
    # box into the kernel (tests/e2e/test_inspector_token_state.py saves a notebook to check).
    expect(token_box).to_have_value("")
    expect(inspector.locator(".pgmx-inspector-token-state")).to_contain_text(
        "A token is set for " + guarded_partner + ": kept in the kernel, not in the notebook"
    )

    type_into(token_box, TOKEN)
    connect.click()
    expect(status).to_contain_text(f"Connected to {guarded_partner} (over Streamable HTTP): 1 tool", timeout=WIDGETS_MS)
    expect(inspector.locator(".pgmx-inspector-tool select")).to_have_value("bkn_dac")
    expect(inspector.locator(".pgmx-inspector-request .pgmx-composer")).to_be_visible(timeout=WIDGETS_MS)
    inspector.locator("button.pgmx-inspector-send").click()
    expect(status).to_contain_text(re.compile(r"bkn_dac: answered"), timeout=WIDGETS_MS)
    log = inspector.locator(".pgmx-inspector-log textarea")
    expect(log).to_have_value(re.compile(r'^← .*"RequestID"', re.M))
    shot("connected with the token, a Request answered")
    assert TOKEN not in log.input_value()
    expect(token_box).to_have_value("")
    expect(page.locator("body")).not_to_contain_text(TOKEN)
    expect(page.locator("body")).not_to_contain_text("Traceback")
