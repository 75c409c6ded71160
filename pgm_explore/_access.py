"""Who may reach a server that ``pgm-explore lab`` or ``pgm-explore app`` starts: the names it answers to.

A browser sends the name it was told to open in the ``Host`` header. A web page elsewhere can
point a name of its own at 127.0.0.1 ("DNS rebinding") and then talk to a server on this machine
as if it were its own site; the one thing it cannot change is that ``Host`` header, which still
carries its own name. So the servers answer only requests whose Host is a name of this server:

- the loopback names and addresses (``localhost``, ``127.0.0.0/8``, ``::1``), always;
- the address given with ``--ip`` when it is one address;
- listening on every address (``--ip 0.0.0.0``), this machine's own names and addresses: its
  host name, its fully qualified name, and the address of each network interface;
- and every name given with ``--allow-host`` (a DNS alias, the name of a proxy in front).

This is Jupyter Server's own rule (``ServerApp.allow_remote_access`` off: loopback addresses
and ``local_hostnames``), with one addition: Jupyter takes no address but the loopback ones,
so that a server listening on a network address refused every request made to that address.
:func:`host_allowed` is the rule; the servers apply it to every request (``_servers``).

Nothing here imports Jupyter: the command line computes the names before it starts a server.
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Iterable, Sequence

__all__ = ["EVERY_ADDRESS", "exposure_warning", "host_allowed", "is_address", "is_loopback", "server_names"]

EVERY_ADDRESS = frozenset({"", "0.0.0.0", "::", "*"})
"""``--ip`` values that listen on every address of the machine."""
_LOCAL_NAMES = ("localhost",)
_Address = ipaddress.IPv4Address | ipaddress.IPv6Address


def _address(text: str) -> _Address | None:
    """``text`` as an IP address (an IPv4-mapped IPv6 address as its IPv4 one), or None.

    >>> _address("::ffff:127.0.0.1"), _address("fe80::1%eth0"), _address("example.org")
    (IPv4Address('127.0.0.1'), IPv6Address('fe80::1'), None)
    """
    try:
        address = ipaddress.ip_address(text.split("%", 1)[0])
    except ValueError:
        return None
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return address.ipv4_mapped
    return address


def _name(text: str) -> str:
    """A host name as compared: lower case, without the final dot of an absolute name."""
    return text.strip().lower().removesuffix(".")


def _host_part(header: str) -> str:
    """The host of a ``Host`` header, without its port and the brackets of an IPv6 address.

    >>> _host_part("example.org:8866"), _host_part("[::1]:8866"), _host_part("::1"), _host_part("a")
    ('example.org', '::1', '::1', 'a')
    """
    header = header.strip()
    if header.startswith("["):
        end = header.find("]")
        return header[1:end] if end > 0 else header
    host, colon, port = header.rpartition(":")
    if colon and port.isdigit() and ":" not in host:
        return host
    return header


def is_address(text: str) -> bool:
    """Whether ``text`` is an IP address (v4, or v6 with or without brackets).

    >>> is_address("192.168.1.20"), is_address("[::1]"), is_address("teacher-pc")
    (True, True, False)
    """
    return _address(text.strip().removeprefix("[").removesuffix("]")) is not None


def is_loopback(ip: str) -> bool:
    """Whether listening on ``ip`` keeps a server to this machine.

    >>> is_loopback("127.0.0.1"), is_loopback("localhost"), is_loopback("0.0.0.0"), is_loopback("10.0.0.5")
    (True, True, False, False)
    """
    if _name(ip) in _LOCAL_NAMES:
        return True
    address = _address(ip)
    return address is not None and address.is_loopback


def host_allowed(header: str | None, names: Iterable[str]) -> bool:
    """Whether a request whose ``Host`` header is ``header`` is made to this server, known by
    ``names`` (host names and addresses); loopback addresses and ``localhost`` always are.

    >>> names = ["localhost", "teacher-pc", "192.168.1.20"]
    >>> [host_allowed(h, names) for h in ("127.0.0.1:8866", "[::1]:8866", "TEACHER-PC.:8866", "192.168.1.20")]
    [True, True, True, True]
    >>> [host_allowed(h, names) for h in ("evil.example:8866", "192.168.1.21", "localhost.evil.example", "", None)]
    [False, False, False, False, False]
    """
    if not header:
        return False
    host = _host_part(header)
    address = _address(host)
    if address is not None:
        return address.is_loopback or address in {a for a in map(_address, names) if a is not None}
    return bool(host) and _name(host) in {_name(n) for n in (*_LOCAL_NAMES, *names)}


def _machine_names() -> list[str]:
    """This machine's host name, fully qualified name and the addresses of its interfaces."""
    import psutil  # type: ignore[import-untyped]  # (the notebook and app extras install it; kernels need it too)

    names = [socket.gethostname(), socket.getfqdn()]
    for addresses in psutil.net_if_addrs().values():
        names += [a.address for a in addresses if a.family in (socket.AF_INET, socket.AF_INET6)]
    return names


def server_names(ip: str, allowed: Sequence[str] = ()) -> list[str]:
    """The names a server listening on ``ip`` answers to, besides the loopback ones (see the
    module): ``ip`` itself, or this machine's names and addresses when ``ip`` is every
    address, and the names ``allowed``. Each once, in that order, ``localhost`` first."""
    found = [*_LOCAL_NAMES]
    found += _machine_names() if ip in EVERY_ADDRESS else [ip]
    found += allowed
    unique: dict[str, str] = {}
    for name in found:
        address = _address(name.strip().removeprefix("[").removesuffix("]"))
        key = str(address) if address is not None else _name(name)
        if key and not (address is not None and address.is_loopback):
            unique.setdefault(key, key)
    return list(unique)


def exposure_warning(command: str, ip: str, port: int, names: Sequence[str], what: str) -> str:
    """What ``pgm-explore lab``/``app`` says on stderr when it listens beyond this machine."""
    where = "every address of this machine" if ip in EVERY_ADDRESS else f"the address {ip}"
    reachable = ", ".join(n for n in names if n not in _LOCAL_NAMES) or "(none but localhost)"
    given = ip or '""'
    return (
        f"pgm-explore {command}: listening on {where} (--ip {given}): anyone who can reach port {port} "
        f"of it over the network and has the token can use {what}.\n"
        "  Share the address with its token only with those who should; the connection is plain HTTP, so\n"
        "  the token and what is typed cross the network unencrypted (use a trusted network or a proxy with TLS).\n"
        f"  Requests are answered for these names only (and localhost, 127.0.0.1, ::1): {reachable}.\n"
        "  A request for any other name is refused (403); if people reach this machine by another name\n"
        "  (a DNS alias, a proxy), add it: --allow-host NAME (repeatable).\n"
    )
