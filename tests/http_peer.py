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


def get(port: int, path: str, host: str, *, origin: str | None = None, cookie: str | None = None) -> Answer:
    """``GET path`` on 127.0.0.1:``port`` with exactly these Host and Origin headers."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    headers = {"Host": host}
    if origin is not None:
        headers["Origin"] = origin
    if cookie is not None:
        headers["Cookie"] = cookie
    try:
        connection.request("GET", path, headers=headers)
        response = connection.getresponse()
        cookies = "; ".join(c.split(";", 1)[0] for c in response.headers.get_all("Set-Cookie") or ())
        return Answer(response.status, response.getheader("Location"), response.read(), cookies)
    finally:
        connection.close()


def post_form(port: int, path: str, host: str, fields: dict[str, str], *, cookie: str = "") -> Answer:
    """``POST path`` of a form (``application/x-www-form-urlencoded``) with this Host, as a
    browser sends it from the server's own page (its Origin)."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    headers = {
        "Host": host,
        "Origin": f"http://{host}",
        "Content-Type": "application/x-www-form-urlencoded",
        "Cookie": cookie,
    }
    try:
        connection.request("POST", path, body=urllib.parse.urlencode(fields), headers=headers)
        response = connection.getresponse()
        cookies = "; ".join(c.split(";", 1)[0] for c in response.headers.get_all("Set-Cookie") or ())
        return Answer(response.status, response.getheader("Location"), response.read(), cookies)
    finally:
        connection.close()


def upgrade(port: int, path: str, host: str, *, origin: str | None = None, cookie: str | None = None) -> int:
    """The status a websocket handshake for ``path`` gets (101: the websocket is open)."""
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    headers = {
        "Host": host,
        "Upgrade": "websocket",
        "Connection": "Upgrade",
        "Sec-WebSocket-Key": base64.b64encode(os.urandom(16)).decode("ascii"),
        "Sec-WebSocket-Version": "13",
    }
    if origin is not None:
        headers["Origin"] = origin
    if cookie is not None:
        headers["Cookie"] = cookie
    try:
        connection.request("GET", path, headers=headers)
        return connection.getresponse().status  # (a 101 has no body to wait for)
    finally:
        connection.close()


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
