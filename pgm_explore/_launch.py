"""``pgm-explore lab`` and ``pgm-explore app``: the explorer's servers, started for a person.

``lab`` starts JupyterLab on the repository's root folder (so that the notebooks' links to
``../docs`` and ``../data`` resolve) and opens notebook 01; ``app`` serves the composer-and-check
app page with Voilà, which shows the widgets and no code. Both

- say what they start and where to open it, before the first (slow) start and again when the
  server answers, rather than leaving a person in front of a silent terminal;
- run as root too (``--allow-root``), which is how containers run;
- choose a free port from 8888 (or 8866) on, and fix it, so that the printed address is right;
- serve nothing without a secret token (``--token``, else ``$JUPYTER_TOKEN``, else a new one;
  never empty), printed in the address they print, and passed to the server in its environment,
  where another user's ``ps`` does not show it;
- answer only requests made to a name of this server (:mod:`pgm_explore._access`), and say on
  stderr who can reach them when they listen beyond this machine (``--ip 0.0.0.0``).

The servers run as child processes, ``python -m pgm_explore._launch lab|voila [options]``
(:mod:`pgm_explore._servers`: JupyterLab, or Voilà with its Host check and token switched on and
the Markdown documents it serves rendered); Ctrl-C reaches them as it reaches this one, and
SIGTERM is passed on, so that a server and its kernels never outlive the command.

The app's work folder (``--work-folder``, else the folder the command is started in) is where
its page saves and opens, by name only (``pgm_explore.widgets``); it goes to the page in
``$PGM_EXPLORE_WORK``. A folder where Jupyter or Python reads configuration is refused.

This module imports neither Jupyter nor Voilà at import time: they are started with ``python -m``,
so that a missing extra is a clear message, not a traceback.
"""

from __future__ import annotations

import argparse
import html
import importlib.util
import os
import re
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from types import FrameType
from typing import IO

from pgm_explore import _access as _access_rules

__all__ = ["app_command", "checkout_root", "lab_command", "run_app", "run_lab"]

FIRST_NOTEBOOK = "notebooks/01_tour_of_the_data_types.ipynb"
APP_NOTEBOOK = Path(__file__).resolve().parent / "widgets" / "app.ipynb"
INSTALL_HINT = 'pip install -e ".[notebook,mcp,app]"'
WORK_ENV = "PGM_EXPLORE_WORK"
"""The app's work folder, as the app page reads it (``pgm_explore.widgets``: ``default_work_dir``)."""
# Voilà serves a notebook's neighbours only when they match one of these: the notebooks' links
# to the documentation and the data READMEs, and pictures.
VOILA_FILES = (r".*\.(md|png|jpg|gif|svg)",)


def checkout_root(start: Path | None = None) -> Path:
    """The pgm-explore checkout that ``start`` (default: the current folder) is in, else ``start``.

    A checkout is a folder holding ``pyproject.toml``, ``notebooks/`` and ``pgm_explore/``.

    >>> checkout_root(Path("/")) == Path("/")
    True
    """
    here = (start or Path.cwd()).resolve()
    for folder in (here, *here.parents):
        if (
            (folder / "pyproject.toml").is_file()
            and (folder / "notebooks").is_dir()
            and (folder / "pgm_explore").is_dir()
        ):
            return folder
    return here


def _free_port(first: int, ip: str) -> int:
    """The first port from ``first`` on that nothing listens on."""
    for port in range(first, first + 50):
        with socket.socket() as probe:
            try:
                probe.bind((ip if ip not in ("", "localhost") else "127.0.0.1", port))
            except OSError:
                continue
            return port
    raise OSError(f"no free port in {first}..{first + 49}")


def _is_root() -> bool:
    return hasattr(os, "geteuid") and os.geteuid() == 0


def _host(ip: str) -> str:
    """The address a browser on this machine opens for a server listening on ``ip``."""
    return "127.0.0.1" if ip in ("", "0.0.0.0", "localhost") else ip


def lab_command(
    root: Path, port: int, *, ip: str = "127.0.0.1", browser: bool = True, hosts: Sequence[str] = ()
) -> list[str]:
    """The command line that ``pgm-explore lab`` runs: JupyterLab, with the Host check on for
    ``hosts`` (see :mod:`pgm_explore._access`). The token goes in the environment
    (``JUPYTER_TOKEN``), where other users' ``ps`` does not show it."""
    command = [
        *server_prefix("lab"),
        f"--ServerApp.root_dir={root}",
        f"--ServerApp.ip={ip}",
        f"--ServerApp.port={port}",
        "--ServerApp.port_retries=0",
        # Jupyter Server switches its Host check off when it listens beyond loopback: on, always.
        "--ServerApp.allow_remote_access=False",
        *_list_option("ServerApp.local_hostnames", hosts or ["localhost"]),
    ]
    if (root / FIRST_NOTEBOOK).is_file():
        command.append(f"--LabApp.default_url=/lab/tree/{FIRST_NOTEBOOK}")
    if not browser:
        command.append("--no-browser")
    if _is_root():
        command.append("--allow-root")
    return command


def app_command(port: int, *, ip: str = "127.0.0.1", hosts: Sequence[str] = ()) -> list[str]:
    """The Voilà command line that ``pgm-explore app`` runs (the token in ``JUPYTER_TOKEN``, as
    for lab; the command opens the browser itself, with the token, once the page answers)."""
    return [
        *voila_prefix(),
        str(APP_NOTEBOOK),
        f"--Voila.ip={ip}",
        f"--port={port}",
        "--Voila.port_retries=0",
        *_list_option("VoilaConfiguration.file_allowlist", VOILA_FILES),
        *_list_option("DocsVoila.local_hostnames", hosts or ["localhost"]),
        "--no-browser",
    ]


def _list_option(name: str, values: Sequence[str]) -> list[str]:
    """A list option of a Jupyter application, an item at a time (traitlets 5 deprecates ``=[...]``).

    >>> _list_option("ServerApp.local_hostnames", ["localhost", "vm"])
    ['--ServerApp.local_hostnames=localhost', '--ServerApp.local_hostnames=vm']
    """
    return [f"--{name}={value}" for value in values]


def server_prefix(server: str) -> list[str]:
    """The start of a command line running ``lab`` or ``voila`` as pgm-explore runs them (see
    ``pgm_explore._servers``): the Host check and the token on, the documents rendered."""
    return [sys.executable, "-m", "pgm_explore._launch", server]


def voila_prefix() -> list[str]:
    """The start of a command line running Voilà as ``pgm-explore app`` runs it."""
    return server_prefix("voila")


_HOST_NAME = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9._-]{0,252})")


def _access(command: str, args: argparse.Namespace, err: IO[str]) -> tuple[str, list[str]] | None:
    """The token and the host names of a server, or None once a bad option is said on ``err``."""
    import secrets  # (here: the module is imported by every command, and this costs some 4 ms)

    token = args.token if args.token is not None else os.environ.get("JUPYTER_TOKEN") or secrets.token_hex(24)
    if not token.strip():
        err.write(f"pgm-explore {command}: --token is empty; a server of pgm-explore always has a secret token\n")
        return None
    for name in args.allow_host:
        if not (_HOST_NAME.fullmatch(name) or _access_rules.is_address(name)):
            err.write(f"pgm-explore {command}: --allow-host {name!r} is not a host name or an address\n")
            return None
    return token, _access_rules.server_names(args.ip, args.allow_host)


def _warn_if_exposed(
    command: str, args: argparse.Namespace, port: int, names: list[str], what: str, err: IO[str]
) -> None:
    if not _access_rules.is_loopback(args.ip):
        err.write(_access_rules.exposure_warning(command, args.ip, port, names, what))
        err.flush()


def run_lab(args: argparse.Namespace, out: IO[str], err: IO[str]) -> int:
    if importlib.util.find_spec("jupyterlab") is None:
        err.write(f"pgm-explore lab: JupyterLab is not installed; run {INSTALL_HINT}\n")
        return 2
    root = (args.root or checkout_root()).resolve()
    if not root.is_dir():
        err.write(f"pgm-explore lab: {root} is not a folder\n")
        return 2
    access = _access("lab", args, err)
    if access is None:
        return 2
    token, names = access
    port = args.port or _free_port(args.first_port, args.ip)
    base = f"http://{_host(args.ip)}:{port}"
    opened = f"/lab/tree/{FIRST_NOTEBOOK}" if (root / FIRST_NOTEBOOK).is_file() else "/lab"
    url = f"{base}{opened}?token={token}"
    _warn_if_exposed("lab", args, port, names, "JupyterLab, and run any code on this machine as this user", err)
    out.write(f"starting JupyterLab on {root} (the first start takes up to a minute)…\n")
    out.write(f"open {url}\n")
    out.flush()
    command = lab_command(root, port, ip=args.ip, browser=args.browser, hosts=names)
    env = {**os.environ, "JUPYTER_TOKEN": token}
    ready = _answers(f"{base}/api/status?token={token}")
    return _serve(command, root, ready, f"JupyterLab is ready: open {url}", out, env)


def run_app(args: argparse.Namespace, out: IO[str], err: IO[str]) -> int:
    if importlib.util.find_spec("voila") is None:
        err.write(f"pgm-explore app: Voilà is not installed; run {INSTALL_HINT}\n")
        return 2
    work = (args.work_folder or Path.cwd()).expanduser().resolve()
    problem = _work_folder_problem(work)
    if problem is not None:
        err.write(f"pgm-explore app: {problem}\n")
        return 2
    access = _access("app", args, err)
    if access is None:
        return 2
    token, names = access
    port = args.port or _free_port(args.first_port, args.ip)
    url = f"http://{_host(args.ip)}:{port}/?token={token}"
    _warn_if_exposed("app", args, port, names, "the app page (compose, save and open in the work folder)", err)
    out.write("starting the pgm-explore app (Voilà; the first start takes up to a minute)…\n")
    out.write(f"work folder (Save and Open, by name): {work}\n")
    out.write(f"open {url}\n")
    out.flush()
    env = {**os.environ, "JUPYTER_TOKEN": token, WORK_ENV: str(work)}
    data = checkout_root() / "data"
    if "PGM_EXPLORE_DATA" not in env and data.is_dir():
        env["PGM_EXPLORE_DATA"] = str(data)  # the app's examples, wherever the package is installed
    # Readiness is a TCP connect: a GET of the page would start a kernel in Voilà.
    ready = _listens(_host(args.ip), port)
    opener = _open_browser(url) if args.browser else None
    return _serve(
        app_command(port, ip=args.ip, hosts=names),
        work,
        ready,
        f"the app is ready: open {url}",
        out,
        env,
        opener,
    )


def _work_folder_problem(work: Path) -> str | None:
    """Why ``work`` may not be the app's work folder, or None: it must be a folder, and none
    where a JSON file is configuration that Jupyter or Python runs (a kernelspec saved there
    would run a command of the visitor's choice)."""
    if not work.is_dir():
        return f"the work folder {work} is not a folder"
    from jupyter_core.paths import jupyter_config_path, jupyter_path, jupyter_runtime_dir

    guarded = [*jupyter_path(), *jupyter_config_path(), jupyter_runtime_dir(), sys.prefix, sys.base_prefix]
    guarded += [os.environ.get("IPYTHONDIR") or str(Path.home() / ".ipython"), str(Path(__file__).resolve().parent)]
    for folder in guarded:
        resolved = Path(folder).expanduser().resolve()
        if work == resolved or work.is_relative_to(resolved):
            return (
                f"the work folder {work} is inside {resolved}, where Jupyter or Python reads configuration; "
                "choose another with --work-folder DIR"
            )
    return None


def _open_browser(url: str) -> Callable[[], None]:
    """Open ``url`` in a browser through a private file that redirects to it, as Jupyter does, so
    that the token is not on the browser's command line; returns what removes the file."""
    import tempfile
    import webbrowser

    handle, name = tempfile.mkstemp(prefix="pgm-explore-open-", suffix=".html")
    with os.fdopen(handle, "w", encoding="utf-8") as page:
        link = html.escape(url, quote=True)
        page.write(
            f'<!DOCTYPE html><meta charset="utf-8"><meta http-equiv="refresh" content="0;url={link}">'
            f'<p><a href="{link}">Open the pgm-explore app</a></p>\n'
        )
    opened = False

    def open_or_clean(done: bool = False) -> None:
        nonlocal opened
        if done:
            Path(name).unlink(missing_ok=True)
        elif not opened:
            opened = True
            webbrowser.open(Path(name).as_uri())

    return open_or_clean


def _answers(url: str) -> Callable[[], bool]:
    # (Imported here: this module is imported by every command, and urllib.request costs some 9 ms.)
    import urllib.error
    import urllib.request

    def ready() -> bool:
        try:
            with urllib.request.urlopen(url, timeout=2) as response:
                return bool(response.status == 200)
        except (OSError, urllib.error.URLError):
            return False

    return ready


def _listens(host: str, port: int) -> Callable[[], bool]:
    def ready() -> bool:
        try:
            with socket.create_connection((host, port), timeout=1):
                return True
        except OSError:
            return False

    return ready


def _serve(
    command: Sequence[str],
    cwd: Path,
    ready: Callable[[], bool],
    ready_line: str,
    out: IO[str],
    env: dict[str, str] | None = None,
    opener: Callable[..., None] | None = None,
) -> int:
    """Run a server until it exits; say so once it answers (and call ``opener``); pass SIGTERM
    and SIGHUP on to it."""
    process = subprocess.Popen(list(command), cwd=cwd, env=env)

    def pass_on(signum: int, frame: FrameType | None) -> None:
        process.send_signal(signum)

    previous = {sig: signal.signal(sig, pass_on) for sig in (signal.SIGTERM, signal.SIGHUP)}
    try:
        announced = False
        while True:
            try:
                if process.poll() is not None:
                    return process.returncode
                if not announced and ready():
                    out.write(ready_line + "\n")
                    out.flush()
                    announced = True
                    if opener is not None:
                        opener()
                time.sleep(0.5)
            except KeyboardInterrupt:
                # The terminal's Ctrl-C reached the server too: it asks, or stops, on its own.
                continue
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        if process.poll() is None:
            process.terminate()
            process.wait(30)
        if opener is not None:
            opener(True)


if __name__ == "__main__" and sys.argv[1:2] in (["voila"], ["lab"]):
    from pgm_explore import _servers

    (_servers.run_voila if sys.argv[1] == "voila" else _servers.run_lab)(sys.argv[2:])
