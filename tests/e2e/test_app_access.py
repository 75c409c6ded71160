"""``pgm-explore app`` serves nothing that starts a kernel without its token, nor to another name.

Attacked two ways, as issue 19 found it open: raw requests carrying any Host and Origin header
(``http.client``, what a page of another site makes a browser send once its name points at
127.0.0.1), and Chromium opening the server by such a name. Voilà starts a kernel for every
page it serves, so "no kernel" is checked as a fact: the kernels the server has started.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

import pytest
from http_peer import get, kernels, post_form, upgrade

from .conftest import FOREIGN_NAME, KERNEL_MS, NO_PLAYWRIGHT, Server, type_into

if TYPE_CHECKING:
    from playwright.sync_api import Page

expect = pytest.importorskip("playwright.sync_api", reason=NO_PLAYWRIGHT).expect
pytestmark = pytest.mark.e2e

FOREIGN = (
    FOREIGN_NAME,
    "localhost.rebound.example",  # a name that merely starts with a local one
    "127.0.0.1.nip.io",  # a public name that resolves to loopback
    "192.0.2.7",  # an address that is not this machine's
    "",  # no name at all
)
KERNEL_ID = re.compile(rb'"kernelId": "([0-9a-f-]{36})"')
# What a websocket opened from a page does: "open", or "closed" when the server refused it.
OPEN_WEBSOCKET = """(url) => new Promise((done) => {
    const socket = new WebSocket(url);
    socket.onopen = () => { done("open"); socket.close(); };
    socket.onclose = () => done("closed");
})"""


def _port(server: Server) -> int:
    port = urlsplit(server.url).port
    assert port is not None
    return port


def _started(server: Server, before: set[int]) -> set[int]:
    """The kernels the server has started since ``before`` (Voilà starts a page's kernel before
    it answers with the page: a refused request that started one would show here at once)."""
    return kernels(server.process.pid) - before


def test_raw_requests_without_the_token_or_for_another_name_get_no_kernel(app_server: Server) -> None:
    port, token = _port(app_server), app_server.token
    local = f"127.0.0.1:{port}"
    before = kernels(app_server.process.pid)

    # Without the token: the login page, for the page and for the files beside it.
    for path in ("/", "/?token=wrong", "/voila/render/app.ipynb", "/voila/files/app.ipynb"):
        answer = get(port, path, local)
        assert answer.status == 302 and (answer.location or "").startswith("/login"), (path, answer)
    # For another name, with the token or without: refused, the login page and the static files too.
    for name in FOREIGN:
        host = f"{name}:{port}" if name else ""
        for path in (
            f"/?token={token}",
            "/",
            "/login",
            "/voila/static/voila.js",
            f"/voila/files/app.ipynb?token={token}",
        ):
            answer = get(port, path, host, origin=f"http://{host}")
            assert answer.status == 403, (host, path, answer.status)
    assert _started(app_server, before) == set(), "a page was served without the token or to another name"

    # With the token, by its own name: the page, and the one kernel it starts.
    page = get(port, f"/?token={token}", local)
    assert page.status == 200
    found = KERNEL_ID.search(page.body)
    assert found, page.body[:500]
    kernel = found.group(1).decode()
    assert len(_started(app_server, before)) == 1

    # The kernel's API and websocket: only with the token (or its cookie), by its name, from its origin.
    api, channels = f"/api/kernels/{kernel}", f"/api/kernels/{kernel}/channels"
    assert get(port, f"{api}?token={token}", local).status == 200
    assert get(port, api, local).status == 403
    own = f"http://{local}"
    assert upgrade(port, f"{channels}?token={token}", local, origin=own) == 101  # (the page's own: it opens)
    assert upgrade(port, f"{channels}?token={token}", local, origin=f"http://{FOREIGN_NAME}:{port}") == 403
    assert upgrade(port, channels, local, origin=own, cookie=page.cookies) == 101
    assert upgrade(port, channels, local, origin=f"http://{FOREIGN_NAME}:{port}", cookie=page.cookies) == 403
    assert upgrade(port, channels, local, origin=own) == 403  # no token, no cookie
    for name in FOREIGN:
        host = f"{name}:{port}" if name else ""
        assert get(port, f"{api}?token={token}", host).status == 403, host
        for origin in (f"http://{host}", own, None):
            assert upgrade(port, f"{channels}?token={token}", host, origin=origin) == 403, (host, origin)
            assert upgrade(port, channels, host, origin=origin, cookie=page.cookies) == 403, (host, origin)
    assert len(_started(app_server, before)) == 1


def test_the_login_page_writes_no_password_file(app_server: Server, app_work: Path, e2e_state: Path) -> None:
    # Jupyter's login form sets a password for one who types the token, written to
    # jupyter_server_config.json in the server's folder: a file written through the page.
    port, local = _port(app_server), f"127.0.0.1:{_port(app_server)}"
    form = get(port, "/login", local)
    xsrf = re.search(rb'name="_xsrf" value="([^"]+)"', form.body)
    assert form.status == 200 and xsrf is not None
    assert b"new_password" not in form.body  # not offered
    answer = post_form(
        port,
        "/login?next=%2F",
        local,
        {"_xsrf": xsrf.group(1).decode(), "password": app_server.token, "new_password": "chosen-by-a-visitor"},
        cookie=form.cookies,
    )
    assert answer.status == 302, answer  # logged in with the token
    for folder in (app_work, app_server.root, e2e_state / "jupyter-config"):
        assert not (folder / "jupyter_server_config.json").exists(), folder


def test_in_chromium_another_name_or_no_token_gets_no_kernel(
    page: Page, app_server: Server, shot: Callable[[str], Path]
) -> None:
    port, token = _port(app_server), app_server.token
    before = kernels(app_server.process.pid)

    # The page opened by another name that points here, token and all: refused.
    response = page.goto(f"http://{FOREIGN_NAME}:{port}/?token={token}", timeout=KERNEL_MS)
    assert response is not None and response.status == 403
    expect(page.locator(".pgmx-app")).to_have_count(0)
    shot("another name refused")

    # Without the token: the login page; a wrong token typed there leaves it shut.
    page.goto(app_server.url, timeout=KERNEL_MS)
    password = page.locator("#password_input")
    expect(password).to_be_visible()
    type_into(password, "not-the-token")
    page.locator("#login_submit").click()
    expect(page.locator("#password_input")).to_be_visible()
    expect(page.locator(".pgmx-app")).to_have_count(0)
    assert _started(app_server, before) == set()
    shot("wrong token")

    # The token typed in: the app, and its kernel.
    type_into(page.locator("#password_input"), token)
    page.locator("#login_submit").click()
    expect(page.locator(".pgmx-app")).to_be_visible(timeout=KERNEL_MS)
    shot("logged in with the token")
    [kernel] = KERNEL_ID.findall(page.content().encode())
    assert len(_started(app_server, before)) == 1

    # A page of another name, in the same browser (which holds the login cookie), reaches for
    # the kernel's websocket: at this server's address (another origin) and at its own name.
    other = page.context.new_page()
    other.goto(f"http://{FOREIGN_NAME}:{port}/login")
    for url in (f"ws://127.0.0.1:{port}", f"ws://{FOREIGN_NAME}:{port}"):
        assert other.evaluate(OPEN_WEBSOCKET, f"{url}/api/kernels/{kernel.decode()}/channels") == "closed", url
    other.close()
    # The app's own page opens it (so "closed" above is the server refusing).
    assert page.evaluate(OPEN_WEBSOCKET, f"ws://127.0.0.1:{port}/api/kernels/{kernel.decode()}/channels") == "open"
    assert len(_started(app_server, before)) == 1
