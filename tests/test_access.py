"""The names a server of pgm-explore answers to (pgm_explore._access): the Host rule against rebinding."""

from __future__ import annotations

import ipaddress

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pgm_explore._access import exposure_warning, host_allowed, is_loopback, server_names

NAMES = ["localhost", "teacher-pc", "teacher-pc.school.example", "192.168.1.20", "fd00::2"]


@pytest.mark.parametrize(
    "header",
    [
        "localhost:8866",
        "LOCALHOST",
        "localhost.:8866",  # the absolute form of the same name
        "127.0.0.1:8866",
        "127.1.2.3",  # all of 127/8 is loopback
        "[::1]:8866",
        "[::ffff:127.0.0.1]:8866",
        "teacher-pc:8866",
        "Teacher-PC.School.Example",
        "192.168.1.20:8866",
        "[fd00::2]:8866",
        "[fd00:0::2]",  # the same address written otherwise
    ],
)
def test_a_name_of_this_server_is_answered(header: str) -> None:
    assert host_allowed(header, NAMES)


@pytest.mark.parametrize(
    "header",
    [
        "rebound.example:8866",  # a page's own name, pointed at 127.0.0.1 by its DNS
        "localhost.rebound.example",
        "rebound.example.localhost.evil",
        "127.0.0.1.nip.io",
        "teacher-pc.rebound.example",
        "192.168.1.21",
        "[fd00::3]:8866",
        "0.0.0.0:8866",
        "0x7f000001",  # not an address for Python, a name: not one of the server's
        "",
        None,
        ":8866",
        "[::1",  # a broken bracket
        "localhost:8866:1",
        "local host",
    ],
)
def test_any_other_name_is_refused(header: str | None) -> None:
    assert not host_allowed(header, NAMES)


@settings(max_examples=100, deadline=None)  # a pure function: 100 host names in well under a second
@given(st.from_regex(r"[a-z][a-z0-9-]{0,20}(\.[a-z][a-z0-9-]{0,20}){0,3}", fullmatch=True), st.integers(1, 65535))
def test_a_name_is_answered_exactly_when_it_is_listed_whatever_its_port_and_case(name: str, port: int) -> None:
    listed = name in {n.lower() for n in NAMES}
    assert host_allowed(f"{name}:{port}", NAMES) is listed
    assert host_allowed(name.upper(), NAMES) is listed
    assert host_allowed(f"{name}:{port}", [*NAMES, name.upper()])


@settings(max_examples=100, deadline=None)
@given(st.ip_addresses(), st.integers(1, 65535))
def test_an_address_is_answered_when_it_is_loopback_or_listed(address: ipaddress._BaseAddress, port: int) -> None:
    written = f"[{address}]:{port}" if address.version == 6 else f"{address}:{port}"
    mapped = getattr(address, "ipv4_mapped", None)
    expected = address.is_loopback or (mapped is not None and mapped.is_loopback) or str(address) in NAMES
    assert host_allowed(written, NAMES) is expected
    assert host_allowed(written, [str(address)])


def test_the_names_of_a_server_on_every_address_are_this_machines() -> None:
    import socket

    names = server_names("0.0.0.0", ["class.example"])
    assert names[0] == "localhost" and names[-1] == "class.example"
    assert socket.gethostname().lower() in names
    assert "127.0.0.1" not in names and "::1" not in names  # (always answered: not listed)
    assert server_names("192.168.1.20") == ["localhost", "192.168.1.20"]
    assert server_names("127.0.0.1", ["Class.Example.", "class.example"]) == ["localhost", "class.example"]


def test_loopback_and_the_warning() -> None:
    assert is_loopback("127.0.0.1") and is_loopback("::1") and is_loopback("localhost")
    assert not is_loopback("0.0.0.0") and not is_loopback("") and not is_loopback("192.168.1.20")
    said = exposure_warning("app", "0.0.0.0", 8866, ["localhost", "teacher-pc"], "the app page")
    assert "every address of this machine" in said and "port 8866" in said and "teacher-pc" in said
    assert "--allow-host NAME" in said and "plain HTTP" in said
