"""The servers ``pgm-explore lab`` and ``pgm-explore app`` run, in their own process.

``python -m pgm_explore._launch lab|voila [options]`` runs JupyterLab or Voilà here, with
Jupyter Server's protections switched on for every request (:mod:`pgm_explore._access` says
why and for which names):

- **the Host check** (``allow_remote_access`` off, the names in ``local_hostnames``). Voilà
  0.5.13 hard-codes ``allow_remote_access=True`` and ``server_root_dir="/"`` in its tornado
  settings, which switched the check off: ``DocsVoila`` (:func:`voila_class`) sets them back. Jupyter Server's
  check takes no address but the loopback ones, so a server listening on a network address
  refused its own address: :func:`guard_hosts` makes its ``check_host`` take the addresses
  listed in ``local_hostnames`` as well, and Voilà's handlers that are plain tornado handlers
  (its static files) get the same check;
- **the token** (Jupyter Server's token IdentityProvider): Voilà serves nothing of the page, its
  kernels and their websockets without it, and ``DocsVoila`` refuses to start without one. Its
  login page does not offer to set a password (which it would write to a file);
- **the Origin check** of the websockets (Jupyter Server's ``WebSocketMixin.check_origin``, no
  ``allow_origin``): a websocket opened by a page of another site is refused. Jupyter Server
  skips it for a request that carries the token (one who has the token needs no browser);
  JupyterLab keeps that (other tools connect to it with the token), Voilà's page does not.

Voilà also serves ``/voila/files/<path>.md`` as the document rendered
(:func:`markdown_page`) rather than its text, and the files it serves
beside the notebook only to a person who has the token.

This module imports Jupyter and Voilà: only the server process imports it.
"""

from __future__ import annotations

import html
import logging
import re
from functools import cache
from pathlib import Path
from typing import Any

import tornado.web
from jupyter_server.base.handlers import JupyterHandler
from jupyter_server.utils import url_path_join
from traitlets import List, Unicode, default

from pgm_explore._access import host_allowed

__all__ = ["MarkdownHandler", "check_host", "guard_hosts", "run_lab", "run_voila", "voila_class"]

_log = logging.getLogger("pgm_explore.servers")


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


def check_host(handler: tornado.web.RequestHandler) -> bool:
    """Jupyter Server's Host check (``JupyterHandler.check_host``) for ``handler``'s request,
    where ``local_hostnames`` may list addresses too, and a request without a Host is refused."""
    settings = handler.settings
    if settings.get("allow_remote_access", False):
        return True
    # The header as sent: tornado takes a request without one for a request to 127.0.0.1.
    host = handler.request.headers.get("Host")
    if host_allowed(host, settings.get("local_hostnames", ["localhost"])):
        return True
    _log.warning(
        "Refused a request for %s: its Host %r is not a name of this server (add a name with --allow-host)",
        handler.request.path,
        host,
    )
    return False


def guard_hosts() -> None:
    """Have every Jupyter handler of this process check the Host by :func:`check_host`: Jupyter
    Server has no setting for the addresses of a server (see the module)."""
    JupyterHandler.check_host = check_host  # type: ignore[method-assign,assignment]


class _HostChecked(tornado.web.RequestHandler):
    """The Host check for a handler that is not a Jupyter handler (Voilà's static files)."""

    def prepare(self) -> Any:
        if not check_host(self):
            raise tornado.web.HTTPError(403)
        return super().prepare()


class _OriginChecked(JupyterHandler):
    """Jupyter Server skips the Origin check of a request that carries the token, and so let a
    page of another site that has the token open a kernel's websocket; the app page has no
    reason to: a request that says it comes from a page (``Origin``) must come from its own."""

    def skip_check_origin(self) -> bool:
        return self.request.method == "OPTIONS"  # (a preflight request asks about origins)


class MarkdownHandler(JupyterHandler):
    """``/voila/files/<path>.md``: the document as a page (allow-list and root as for the other files)."""

    def initialize(self, root: str, allowlist: list[str], denylist: list[str]) -> None:
        self.root, self.allowlist, self.denylist = Path(root).resolve(), allowlist, denylist

    @tornado.web.authenticated
    def get(self, path: str) -> None:
        allowed = any(re.fullmatch(p, path) for p in self.allowlist) and not any(
            re.fullmatch(p, path) for p in self.denylist
        )
        file = (self.root / path).resolve()
        if not allowed or not file.is_relative_to(self.root) or not file.is_file():
            raise tornado.web.HTTPError(404)
        self.set_header("Content-Type", "text/html; charset=utf-8")
        self.finish(markdown_page(file.read_text(encoding="utf-8")))


@cache
def voila_class() -> Any:
    """:class:`DocsVoila`, made on first use: lab does not need Voilà, which takes a second to import."""
    from voila.app import Voila
    from voila.static_file_handler import AllowListFileHandler

    class AuthenticatedFiles(JupyterHandler, AllowListFileHandler):
        """Voilà's files beside the notebook, to a person who has the token only."""

        @property
        def content_security_policy(self) -> str:
            # An SVG may hold scripts: confined to an origin of their own, as Jupyter Server's own files.
            return str(super().content_security_policy) + "; sandbox allow-scripts"

        @tornado.web.authenticated
        def get(self, path: str, include_body: bool = True) -> Any:
            return super().get(path, include_body)

    class DocsVoila(Voila):
        """Voilà with its Host check and token switched on, and its documents rendered (see the module)."""

        local_hostnames = List(
            Unicode(),
            ["localhost"],
            config=True,
            help="Host names and addresses the server answers to, besides the loopback ones.",
        )

        @default("auto_token")
        def _auto_token(self) -> bool:
            # No token given: the identity provider's own (JUPYTER_TOKEN, else a new one), never none.
            return True

        def init_settings(self) -> dict[str, Any]:
            # Its login page would let one with the token set a password, written to
            # jupyter_server_config.json in the current folder: the page writes no file.
            self.config.PasswordIdentityProvider.allow_password_change = False
            settings: dict[str, Any] = super().init_settings()
            if not self.identity_provider.token:
                self.log.critical("pgm-explore serves no page without a token; give one that is not empty")
                self.exit(2)
            # Voilà's own values switch Jupyter Server's Host check off.
            settings.update(
                allow_remote_access=False,
                local_hostnames=list(self.local_hostnames),
                server_root_dir=self.root_dir,
            )
            return settings

        def init_handlers(self) -> list[Any]:
            guarded: list[Any] = []
            for pattern, handler, *rest in super().init_handlers():
                if handler is AllowListFileHandler:
                    handler = AuthenticatedFiles
                if issubclass(handler, JupyterHandler):
                    handler = type(handler.__name__, (_OriginChecked, handler), {})
                else:
                    handler = type(f"HostChecked{handler.__name__}", (_HostChecked, handler), {})
                guarded.append((pattern, handler, *rest))
            settings = {
                "root": self.root_dir,
                "allowlist": self.voila_configuration.file_allowlist,
                "denylist": self.voila_configuration.file_denylist,
            }
            # Before Voilà's own file handler, which would send the text.
            guarded.insert(0, (url_path_join(self.server_url, r"/voila/files/(.*\.md)"), MarkdownHandler, settings))
            return guarded

    return DocsVoila


def run_voila(argv: list[str]) -> None:
    """Voilà, as ``pgm-explore app`` runs it (see the module)."""
    guard_hosts()
    voila_class().launch_instance(argv)


def run_lab(argv: list[str]) -> None:
    """JupyterLab, as ``pgm-explore lab`` runs it (see the module)."""
    from jupyterlab.labapp import LabApp  # type: ignore[import-untyped]

    guard_hosts()
    LabApp.launch_instance(argv)
