"""A peer that is not a browser: raw HTTP requests and websocket handshakes with any Host and Origin.

What a page of another site can make a browser send (after pointing its own name at 127.0.0.1),
written out by hand with ``http.client``, so that a test sees what the server answers to exactly
those headers. ``kernels(pid)`` counts the kernels a server has started: Voilà starts one for
every page it serves, so that "no kernel" is a fact a test can check.
"""

from __future__ import annotations

import base64
import http.client
import os
import urllib.parse
from dataclasses import dataclass

import psutil

__all__ = ["Answer", "get", "kernels", "post_form", "upgrade"]


@dataclass(frozen=True)
class Answer:
    status: int
    location: str | None
    body: bytes
    cookies: str  # the cookies set, as a Cookie header sends them back


def _headers(host: str, origin: str | None, cookie: str | None, **more: str) -> dict[str, str]:
    headers = {"Host": host, **more}
    if origin is not None:
        headers["Origin"] = origin
    if cookie is not None:
        headers["Cookie"] = cookie
    return headers


def _exchange(port: int, method: str, path: str, headers: dict[str, str], body: str | None = None) -> Answer:
    """One request on 127.0.0.1:``port`` with exactly these headers; a 101 is answered without
    its body (a websocket that opened has none to wait for)."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    try:
        connection.request(method, path, body=body, headers=headers)
        response = connection.getresponse()
        cookies = "; ".join(c.split(";", 1)[0] for c in response.headers.get_all("Set-Cookie") or ())
        content = b"" if response.status == 101 else response.read()
        return Answer(response.status, response.getheader("Location"), content, cookies)
    finally:
        connection.close()


def get(port: int, path: str, host: str, *, origin: str | None = None, cookie: str | None = None) -> Answer:
    """``GET path`` with exactly these Host and Origin headers."""
    return _exchange(port, "GET", path, _headers(host, origin, cookie))


def post_form(port: int, path: str, host: str, fields: dict[str, str], *, cookie: str = "") -> Answer:
    """``POST path`` of a form with this Host, as a browser sends it from the server's own page."""
    headers = _headers(host, f"http://{host}", cookie, **{"Content-Type": "application/x-www-form-urlencoded"})
    return _exchange(port, "POST", path, headers, urllib.parse.urlencode(fields))


def upgrade(port: int, path: str, host: str, *, origin: str | None = None, cookie: str | None = None) -> int:
    """The status a websocket handshake for ``path`` gets (101: the websocket is open)."""
    key = base64.b64encode(os.urandom(16)).decode("ascii")
    handshake = {
        "Upgrade": "websocket",
        "Connection": "Upgrade",
        "Sec-WebSocket-Key": key,
        "Sec-WebSocket-Version": "13",
    }
    return _exchange(port, "GET", path, _headers(host, origin, cookie, **handshake)).status


def kernels(pid: int) -> set[int]:
    """The kernel processes (ipykernel) among the descendants of process ``pid``."""
    found = set()
    for child in psutil.Process(pid).children(recursive=True):
        try:
            if any("ipykernel" in part for part in child.cmdline()):
                found.add(child.pid)
        except (psutil.NoSuchProcess, psutil.ZombieProcess):
            continue
    return found
