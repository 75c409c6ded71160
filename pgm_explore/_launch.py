"""``pgm-explore lab`` and ``pgm-explore app``: the explorer's servers, started for a person.

``lab`` starts JupyterLab on the repository's root folder (so that the notebooks' links to
``../docs`` and ``../data`` resolve) and opens notebook 01; ``app`` serves the composer-and-check
app page with Voilà, which shows the widgets and no code. Both

- say what they start and where to open it, before the first (slow) start and again when the
  server answers, rather than leaving a person in front of a silent terminal;
- run as root too (``--allow-root``), which is how containers run;
- choose a free port from 8888 (or 8866) on, and fix it, so that the printed address is right.

The servers run as child processes; Ctrl-C reaches them as it reaches this one, and SIGTERM is
passed on, so that a server and its kernels never outlive the command.

Voilà serves a notebook's neighbours as files: a link to ``../docs/rules.md`` showed the Markdown
as raw text. So Voilà runs here as ``python -m pgm_explore._launch voila [voila options]``: the same
Voilà, whose ``/voila/files/<path>.md`` answers with the document rendered as an HTML page
(:func:`markdown_page`; headings carry GitHub's anchors, so ``rules.md#<anchor>`` links land), with
mistune, which Voilà's nbconvert already installs. Nothing is fetched over the network.

This module imports neither Jupyter nor Voilà at import time: they are started with ``python -m``,
so that a missing extra is a clear message, not a traceback.
"""

from __future__ import annotations

import argparse
import html
import importlib.util
import os
import re
import secrets
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Sequence
from pathlib import Path
from types import FrameType
from typing import IO, Any

__all__ = ["add_app", "add_lab", "app_command", "checkout_root", "lab_command"]

FIRST_NOTEBOOK = "notebooks/01_tour_of_the_data_types.ipynb"
APP_NOTEBOOK = Path(__file__).resolve().parent / "widgets" / "app.ipynb"
INSTALL_HINT = 'pip install -e ".[notebook,mcp,app]"'
# Voilà serves a notebook's neighbours only when they match one of these: the notebooks' links
# to the documentation and the data READMEs, and pictures.
VOILA_FILES = r"['.*\.(md|png|jpg|gif|svg)']"


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


def lab_command(root: Path, port: int, token: str, *, ip: str = "127.0.0.1", browser: bool = True) -> list[str]:
    """The ``jupyter lab`` command line that ``pgm-explore lab`` runs."""
    command = [
        sys.executable,
        "-m",
        "jupyter",
        "lab",
        f"--ServerApp.root_dir={root}",
        f"--ServerApp.ip={ip}",
        f"--ServerApp.port={port}",
        "--ServerApp.port_retries=0",
        f"--IdentityProvider.token={token}",
    ]
    if (root / FIRST_NOTEBOOK).is_file():
        command.append(f"--LabApp.default_url=/lab/tree/{FIRST_NOTEBOOK}")
    if not browser:
        command.append("--no-browser")
    if _is_root():
        command.append("--allow-root")
    return command


def app_command(port: int, *, ip: str = "127.0.0.1", browser: bool = True) -> list[str]:
    """The ``voila`` command line that ``pgm-explore app`` runs."""
    command = [
        *voila_prefix(),
        str(APP_NOTEBOOK),
        f"--Voila.ip={ip}",
        f"--port={port}",
        "--Voila.port_retries=0",
        f"--VoilaConfiguration.file_allowlist={VOILA_FILES}",
    ]
    if not browser:
        command.append("--no-browser")
    return command


def voila_prefix() -> list[str]:
    """The start of a command line running Voilà with the documents rendered (see the module)."""
    return [sys.executable, "-m", "pgm_explore._launch", "voila"]


_PAGE = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{title}</title>
<style>
body {{font: 15px/1.55 -apple-system, "Segoe UI", Helvetica, Arial, sans-serif; max-width: 60em;
  margin: 2em auto; padding: 0 1.5em; color: #1f2328}}
h1, h2 {{border-bottom: 1px solid #d1d9e0; padding-bottom: .3em}}
code, pre {{font: 13px ui-monospace, SFMono-Regular, Menlo, monospace; background: #f6f8fa}}
code {{padding: .1em .3em; border-radius: 4px}}
pre {{padding: 1em; overflow: auto; border-radius: 6px}}
pre code {{padding: 0}}
table {{border-collapse: collapse; margin: 1em 0}}
th, td {{border: 1px solid #d1d9e0; padding: 4px 10px; text-align: left; vertical-align: top}}
blockquote {{margin: 0; padding: 0 1em; color: #59636e; border-left: 4px solid #d1d9e0}}
</style></head>
<body class="pgmx-doc">
{body}
</body></html>
"""


def _anchor(heading_html: str) -> str:
    """GitHub's anchor of a heading: its text in lower case, punctuation dropped, spaces as dashes.

    >>> _anchor("The <code>overall-mismatch</code> rule: why?")
    'the-overall-mismatch-rule-why'
    """
    text = html.unescape(re.sub(r"<[^>]+>", "", heading_html)).strip().lower()
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def markdown_page(text: str) -> str:
    """A Markdown document as a whole HTML page (GitHub-flavoured tables, anchored headings).

    >>> page = markdown_page("# Rules\\n\\nSee [notes](spec-notes.md#d13).\\n\\n| a |\\n|---|\\n| 1 |")
    >>> '<h1 id="rules">Rules</h1>' in page, '<a href="spec-notes.md#d13">' in page, "<td>1</td>" in page
    (True, True, True)
    >>> "<title>Rules</title>" in page
    True
    """
    import mistune  # Voilà's nbconvert brings it; only the docs pages need it

    class Renderer(mistune.HTMLRenderer):
        def heading(self, text: str, level: int, **attrs: Any) -> str:
            return f'<h{level} id="{_anchor(text)}">{text}</h{level}>\n'

    # The documents are the repository's own: their inline HTML is kept, as GitHub keeps it.
    render = mistune.create_markdown(renderer=Renderer(escape=False), plugins=["table", "strikethrough", "url"])
    body = str(render(text))
    found = re.search(r"<h1[^>]*>(.*?)</h1>", body, re.S)
    title = html.escape(html.unescape(re.sub(r"<[^>]+>", "", found.group(1)))) if found else "document"
    return _PAGE.format(title=title, body=body)


def _run_voila(argv: list[str]) -> None:
    """Voilà, with ``/voila/files/<path>.md`` rendered (allow-list and root as for the other files)."""
    import tornado.web
    from jupyter_server.utils import url_path_join
    from voila.app import Voila

    class MarkdownHandler(tornado.web.RequestHandler):
        def initialize(self, root: str, allowlist: list[str], denylist: list[str]) -> None:
            self.root, self.allowlist, self.denylist = Path(root).resolve(), allowlist, denylist

        def get(self, path: str) -> None:
            allowed = any(re.fullmatch(p, path) for p in self.allowlist) and not any(
                re.fullmatch(p, path) for p in self.denylist
            )
            file = (self.root / path).resolve()
            if not allowed or not file.is_relative_to(self.root) or not file.is_file():
                raise tornado.web.HTTPError(404)
            self.set_header("Content-Type", "text/html; charset=utf-8")
            self.finish(markdown_page(file.read_text(encoding="utf-8")))

    class DocsVoila(Voila):
        def init_handlers(self) -> list[Any]:
            handlers: list[Any] = super().init_handlers()
            settings = {
                "root": self.root_dir,
                "allowlist": self.voila_configuration.file_allowlist,
                "denylist": self.voila_configuration.file_denylist,
            }
            # Before Voilà's own file handler, which would send the text.
            handlers.insert(0, (url_path_join(self.server_url, r"/voila/files/(.*\.md)"), MarkdownHandler, settings))
            return handlers

    DocsVoila.launch_instance(argv)


def add_lab(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = commands.add_parser(
        "lab",
        help="start JupyterLab on the repository and open the first notebook",
        description="Start JupyterLab with the repository (the checkout this folder is in, else this "
        "folder) as its root, so that the notebooks' links to docs/ and data/ work, and open notebook 01. "
        "Works as root (as in a container) and as a user. Ctrl-C stops it.",
    )
    _server_options(parser, 8888)
    parser.add_argument("--root", type=Path, default=None, help="serve this folder instead of the checkout")
    parser.set_defaults(run=run_lab)


def add_app(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = commands.add_parser(
        "app",
        help="serve the composer-and-check app page (Voilà: widgets, no code)",
        description="Serve the explorer as an app page with Voilà: compose a message of any type and mode, "
        "upload files to validate, load a transcript and see its tables and plots. No code is shown. "
        "Ctrl-C stops it.",
    )
    _server_options(parser, 8866)
    parser.set_defaults(run=run_app)


def _server_options(parser: argparse.ArgumentParser, port: int) -> None:
    parser.add_argument(
        "--port", type=int, default=None, help=f"the port to listen on (default: the first free one from {port})"
    )
    parser.add_argument(
        "--ip", default="127.0.0.1", help="the address to listen on (default 127.0.0.1; 0.0.0.0 in a container)"
    )
    parser.add_argument("--no-browser", dest="browser", action="store_false", help="do not open a browser")
    parser.set_defaults(first_port=port)


def run_lab(args: argparse.Namespace, out: IO[str], err: IO[str]) -> int:
    if importlib.util.find_spec("jupyterlab") is None:
        err.write(f"pgm-explore lab: JupyterLab is not installed; run {INSTALL_HINT}\n")
        return 2
    root = (args.root or checkout_root()).resolve()
    if not root.is_dir():
        err.write(f"pgm-explore lab: {root} is not a folder\n")
        return 2
    port = args.port or _free_port(args.first_port, args.ip)
    token = os.environ.get("JUPYTER_TOKEN") or secrets.token_hex(24)
    base = f"http://{_host(args.ip)}:{port}"
    opened = f"/lab/tree/{FIRST_NOTEBOOK}" if (root / FIRST_NOTEBOOK).is_file() else "/lab"
    url = f"{base}{opened}?token={token}"
    out.write(f"starting JupyterLab on {root} (the first start takes up to a minute)…\n")
    out.write(f"open {url}\n")
    out.flush()
    command = lab_command(root, port, token, ip=args.ip, browser=args.browser)
    return _serve(command, root, _answers(f"{base}/api/status?token={token}"), f"JupyterLab is ready: open {url}", out)


def run_app(args: argparse.Namespace, out: IO[str], err: IO[str]) -> int:
    if importlib.util.find_spec("voila") is None:
        err.write(f"pgm-explore app: Voilà is not installed; run {INSTALL_HINT}\n")
        return 2
    port = args.port or _free_port(args.first_port, args.ip)
    url = f"http://{_host(args.ip)}:{port}/"
    out.write("starting the pgm-explore app (Voilà; the first start takes up to a minute)…\n")
    out.write(f"open {url}\n")
    out.flush()
    env = dict(os.environ)
    data = checkout_root() / "data"
    if "PGM_EXPLORE_DATA" not in env and data.is_dir():
        env["PGM_EXPLORE_DATA"] = str(data)  # the app's examples, wherever the package is installed
    # Readiness is a TCP connect: a GET of the page would start a kernel in Voilà.
    ready = _listens(_host(args.ip), port)
    return _serve(
        app_command(port, ip=args.ip, browser=args.browser),
        Path.cwd(),
        ready,
        f"the app is ready: open {url}",
        out,
        env,
    )


def _answers(url: str) -> Callable[[], bool]:
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
) -> int:
    """Run a server until it exits; say so once it answers; pass SIGTERM and SIGHUP on to it."""
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


if __name__ == "__main__" and sys.argv[1:2] == ["voila"]:
    _run_voila(sys.argv[2:])
