"""PartnerInspector: try a partner's tools by hand and read the JSON-RPC messages both ways.

The widget face of :class:`pgm_explore.mcp.inspector.Inspector`: pick a partner (a reference
partner of this process, a command, a URL and, when the partner asks for one, its bearer token in a
password box), Connect, pick a tool (its description and schemas are
shown), compose its ``message`` in a :class:`MessageComposer` (the Request skeleton of the dialogue
so far) and its other arguments as JSON, Send. The Response is shown in a composer beside the
Request, with the findings of the exchange and the transcript rules, and the raw JSON-RPC log below
(a text box: select and copy). Save writes the transcript and its log to the work folder.

The buttons start tasks on the kernel's event loop (the partner answers while the page stays
live); :attr:`PartnerInspector.pending` is the latest one. JupyterLab may deliver each widget's
messages on a kernel subshell, a thread with an event loop of its own, while the connection must be
used from the loop that opened it: so every callback runs on the loop the widget was made on (the
kernel's main one). Nothing raises into the page: a partner
that cannot be reached, or bad JSON in the arguments, is a sentence in the status line.
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
from collections.abc import Awaitable, Callable
from contextlib import suppress
from pathlib import Path
from typing import Any

import ipywidgets as widgets

from pgm_explore._display import STYLE, esc, table
from pgm_explore._workfolder import NameRefused, WorkFolder
from pgm_explore.mcp.inspector import REFERENCE_PARTNERS, Call, Inspector, InspectorError, ToolInfo, endpoint_for
from pgm_explore.widgets._base import ErrorArea
from pgm_explore.widgets._composer import MessageComposer
from pgm_explore.widgets._drafts import default_work_dir
from pgm_explore.widgets._filebar import download_html
from pgm_explore.widgets._ordered import OrderedButton, OrderedText, OrderedTextarea
from pgm_explore.widgets._secret import SecretBox

__all__ = ["PartnerInspector"]

COMMAND = "a command…"
URL = "a URL…"
_PLACEHOLDERS = {COMMAND: "python -m my_partner --stdio", URL: "http://127.0.0.1:8000/mcp"}
_CSS = """<style>
.pgmx-inspector-log textarea {font-family: monospace; font-size: 12px; white-space: pre}
.pgmx-inspector-status .pgmx-inspector-bad {color: #b71c1c}
.pgmx-inspector-schema pre {max-height: 300px; overflow: auto; font-size: 12px; background: #f7f7f7; padding: 4px}
.pgmx-inspector-side {flex: 1 1 50%; min-width: 0}
</style>"""


def _schema_html(tool: ToolInfo) -> str:
    """A tool's description and schemas, folded (escaped: a partner's text is not trusted)."""
    parts = [f"<p><b>{esc(tool.name)}</b>: {esc(tool.description or 'no description')}</p>"]
    if tool.type_name:
        parts.append(f"<p>Its <code>message</code> is a {esc(tool.type_name)} Request: compose it below.</p>")
    for label, schema in (("input schema", tool.input_schema), ("output schema", tool.output_schema)):
        if schema is not None:
            text = json.dumps(schema, indent=1, ensure_ascii=False)
            parts.append(f"<details><summary>{label}</summary><pre>{esc(text)}</pre></details>")
    return "".join(parts)


def _short(text: str, limit: int = 120) -> str:
    """The start of a partner's text, on one line, for the status line.

    >>> _short("Error executing tool bkn_dac: " + "x" * 200)[-12:], _short("closed   by peer")
    ('xxxxxxxxxxx…', 'closed by peer')
    """
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def _call_html(call: Call, checked: Any) -> str:
    """The findings of one exchange, then the transcript rules on the dialogue so far."""
    parts = [STYLE, "<h4>This exchange</h4>"]
    if call.findings:
        rows = [[f.rule, f.json_path, f.message] for f in call.findings]
        parts.append(table(["rule", "path", "message"], rows))
    else:
        parts.append("<p>No finding about the exchange.</p>")
    parts.append("<h4>Transcript rules (the dialogue so far)</h4>")
    parts.append(checked._repr_mimebundle_().get("text/html", esc(str(checked))))
    return "".join(parts)


class PartnerInspector(widgets.VBox):
    """Connect to a partner, call its tools, and read every JSON-RPC message (see the module).

    ``allow_commands=False`` (the app page, served to people who run no code) offers the reference
    partners and URLs only. ``work_folder``: where Save writes (default ``$PGM_EXPLORE_WORK``, else
    ``~/.pgm-explore/work``), by a name, never a path.
    """

    def __init__(
        self,
        partner: str = "Personality Alignment",
        *,
        allow_commands: bool = True,
        work_folder: WorkFolder | str | Path | None = None,
        timeout: float = 60.0,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.allow_commands = allow_commands
        self.timeout = timeout
        self.work_folder = WorkFolder(work_folder) if isinstance(work_folder, str | Path) else work_folder
        """Where Save writes (None: the default work folder, made when first saved to)."""
        self.inspector: Inspector | None = None
        self.pending: asyncio.Future[None] | None = None
        """The task the latest button started (tests await it)."""
        self.last_call: Call | None = None
        try:
            self._loop: asyncio.AbstractEventLoop | None = asyncio.get_running_loop()
        except RuntimeError:  # made outside any loop: the callbacks run where they are called
            self._loop = None
        self._area = ErrorArea(("pgmx-error", "pgmx-inspector-error"))

        choices = [*REFERENCE_PARTNERS, *([COMMAND] if allow_commands else []), URL]
        self.partner = widgets.Dropdown(
            description="Partner",
            options=choices,
            value=partner if partner in choices else choices[0],
            _dom_classes=("pgmx-inspector-partner",),
        )
        # Ordered boxes and buttons: a click acts on what was typed before it (widgets._ordered),
        # so that Save under a busy kernel does not take a name typed only in part.
        self.target = OrderedText(
            placeholder="", layout={"width": "420px", "display": "none"}, _dom_classes=("pgmx-inspector-target",)
        )
        # A partner served beyond loopback asks for a bearer token: typed here, never read from the
        # kernel's environment (a page's visitor must not get the server's secret sent to their URL).
        # A Password box's value is widget state, which JupyterLab and Voilà write into the notebook,
        # typed and saved before Connect too: a SecretBox keeps the text out of the state (its text
        # reaches the kernel as a message), and Connect moves it into _kept and empties the box.
        self.token = SecretBox(
            description="Token",
            placeholder="if the partner asks for one",
            layout={"width": "280px", "display": "none"},
            _dom_classes=("pgmx-inspector-token",),
        )
        self._kept: tuple[str, str] | None = None
        """(URL, token): the token Connect took from the box, kept in the kernel for that URL only."""
        self.token_state = widgets.HTML(layout={"display": "none"}, _dom_classes=("pgmx-inspector-token-state",))
        self.forget_button = widgets.Button(
            description="Forget token", layout={"display": "none"}, _dom_classes=("pgmx-inspector-forget",)
        )
        self.connect_button = OrderedButton(
            description="Connect", button_style="primary", _dom_classes=("pgmx-inspector-connect",)
        )
        self.status = widgets.HTML(_dom_classes=("pgmx-inspector-status",))
        self._say("Pick a partner and click Connect: its tools are listed below.")
        self.tool = widgets.Dropdown(description="Tool", options=[], _dom_classes=("pgmx-inspector-tool",))
        self.schema = widgets.HTML(_dom_classes=("pgmx-inspector-schema",))
        self.arguments = OrderedTextarea(
            value="{}",
            description="Other arguments",
            placeholder='{"name": value, ...}',
            layout={"width": "95%", "height": "60px"},
            style={"description_width": "initial"},
            _dom_classes=("pgmx-inspector-arguments",),
        )
        self.new_button = widgets.Button(description="New Request", _dom_classes=("pgmx-inspector-new",))
        self.send_button = OrderedButton(
            description="Send", button_style="success", disabled=True, _dom_classes=("pgmx-inspector-send",)
        )
        self.request_box = widgets.VBox(_dom_classes=("pgmx-inspector-request",))
        self.response_box = widgets.VBox(_dom_classes=("pgmx-inspector-response",))
        self.findings = widgets.HTML(_dom_classes=("pgmx-inspector-findings",))
        self.raw_log = widgets.Textarea(
            layout={"width": "100%", "height": "220px"},
            placeholder="The JSON-RPC messages: → sent to the partner, ← received from it (· what the kernel logged)",
            _dom_classes=("pgmx-inspector-log",),
        )
        self.save_name = OrderedText(
            description="Save as", placeholder="a name", _dom_classes=("pgmx-inspector-save-name",)
        )
        self.save_button = OrderedButton(description="Save", _dom_classes=("pgmx-inspector-save",))
        self.downloads = widgets.HTML(_dom_classes=("pgmx-inspector-download",))
        self.request: MessageComposer | None = None
        self.response: MessageComposer | None = None
        self._log_text = ""

        main = self._on_main
        self.partner.observe(main(self._partner_picked), names="value")
        self.connect_button.on_click(main(lambda: self._launch(self.connect)))
        self.forget_button.on_click(main(self.forget_token))
        self.tool.observe(main(self._tool_picked), names="value")
        self.new_button.on_click(main(self._new_request))
        self.send_button.on_click(main(lambda: self._launch(self.send)))
        self.save_button.on_click(main(lambda: self.save(self.save_name.value)))
        # The log says what happened: an edit in the box is put back (select and copy it instead).
        self.raw_log.observe(main(self._log_edited), names="value")

        request_side = widgets.VBox(
            [
                widgets.HTML("<h4>Request</h4>"),
                self.request_box,
                self.arguments,
                widgets.HBox([self.new_button, self.send_button]),
            ],
            _dom_classes=("pgmx-inspector-side",),
        )
        response_side = widgets.VBox(
            [widgets.HTML("<h4>Response</h4>"), self.response_box, self.findings], _dom_classes=("pgmx-inspector-side",)
        )
        self.children = [
            widgets.HTML(_CSS, _dom_classes=("pgmx-hidden",)),
            widgets.HBox([self.partner, self.target, self.token, self.connect_button]),
            widgets.HBox([self.token_state, self.forget_button]),
            self.status,
            self.tool,
            self.schema,
            widgets.HBox([request_side, response_side]),
            widgets.HTML("<h4>JSON-RPC log</h4>"),
            self.raw_log,
            widgets.HBox([self.save_name, self.save_button, self.downloads]),
            self._area.box,
        ]
        self.add_class("pgmx-inspector")

    @property
    def errors(self) -> list[BaseException]:
        """Exceptions raised in callbacks (each is also shown in the widget)."""
        return self._area.errors

    # -- what the buttons do ------------------------------------------------------------------------

    def _on_main(self, action: Callable[[], Any]) -> Callable[..., None]:
        """A callback that runs ``action`` (guarded) on the widget's loop, whichever thread calls it."""
        guarded = self._area.guard(action)

        def callback(*_args: Any) -> None:
            loop = self._loop
            try:
                here: asyncio.AbstractEventLoop | None = asyncio.get_running_loop()
            except RuntimeError:
                here = None
            if loop is None or loop is here or loop.is_closed():
                guarded()
            else:
                loop.call_soon_threadsafe(guarded)

        return callback

    def _launch(self, work: Callable[[], Awaitable[None]]) -> None:
        async def run() -> None:
            self._busy(True)
            try:
                await work()
            except (InspectorError, NameRefused) as exc:
                self._say(str(exc), bad=True)
            except Exception as exc:  # a bug of ours: shown, with its traceback, in the error area
                self._area.record(exc)
            finally:
                self._busy(False)
                self._show_log()

        self.pending = asyncio.ensure_future(run())

    def _busy(self, busy: bool) -> None:
        self.connect_button.disabled = busy
        self.send_button.disabled = busy or not self.tool.options

    def _say(self, text: str, *, bad: bool = False) -> None:
        self.status.value = f"<p class='{'pgmx-inspector-bad' if bad else 'pgmx-inspector-ok'}'>{esc(text)}</p>"

    def _partner_picked(self) -> None:
        typed = self.partner.value in _PLACEHOLDERS
        self.target.layout.display = "" if typed else "none"
        self.target.placeholder = _PLACEHOLDERS.get(self.partner.value, "")
        self.token.layout.display = "" if self.partner.value == URL else "none"
        self._show_token_state()

    def _show_token_state(self) -> None:
        """Say, in words, whether a token is kept (never the token), with the way to forget it."""
        shown = self._kept is not None and self.partner.value == URL
        self.token_state.layout.display = self.forget_button.layout.display = "" if shown else "none"
        self.token.placeholder = "set: type another to replace it" if shown else "if the partner asks for one"
        if self._kept is not None:
            self.token_state.value = (
                f"<span>A token is set for {esc(self._kept[0])}: kept in the kernel, not in the notebook; "
                "Connect sends it. Type another in the Token box to replace it.</span>"
            )

    def forget_token(self) -> None:
        """Drop the token kept in the kernel: the next Connect sends none (until one is typed)."""
        self._kept = None
        self.token.clear()
        self._show_token_state()
        self._say("Token forgotten: the next Connect sends none.")
        if self.inspector is not None and self.inspector.endpoint.token:
            # The open connection holds it too: closed, so that a Send reconnects without it.
            self.inspector.endpoint = dataclasses.replace(self.inspector.endpoint, token=None)
            self._launch(self.inspector.close)

    def _take_token(self, url: str) -> str | None:
        """The token to send to ``url``: one just typed (then kept, and the box emptied), else the one
        kept for that same URL; a token kept for another URL is forgotten, never sent elsewhere."""
        typed = self.token.take().strip()
        if typed:
            self._kept = (url, typed)
        elif self._kept is not None and self._kept[0] != url:
            self._kept = None
        self._show_token_state()
        return self._kept[1] if self._kept is not None else None

    def _partner_named(self) -> str:
        if self.partner.value in _PLACEHOLDERS:
            typed = self.target.value.strip()
            if self.partner.value == URL and not typed.startswith(("http://", "https://")):
                raise InspectorError(f'"{typed}" is not a URL: type one starting with http:// or https://')
            return typed
        return str(self.partner.value)

    async def connect(self) -> None:
        """Connect to the partner picked (again: a new connection, the same log) and list its tools."""
        # Taken out of the box first, even when the URL is refused below: the box never keeps it.
        token = self._take_token(self.target.value.strip()) if self.partner.value == URL else None
        named = self._partner_named()
        self._say(f"Connecting to {named}…")
        if self.inspector is None or self.inspector.target != named or self.inspector.endpoint.token != token:
            if self.inspector is not None:
                await self.inspector.close()
            endpoint = dataclasses.replace(endpoint_for(named, allow_commands=self.allow_commands), token=token)
            self.inspector = Inspector(endpoint, allow_commands=self.allow_commands, timeout=self.timeout)
        tools = await self.inspector.connect()
        where = {"inprocess": "in this kernel", "stdio": "a command, over stdio", "http": "over Streamable HTTP"}
        self._say(
            f"Connected to {named} ({where[self.inspector.endpoint.transport]}): "
            f"{len(tools)} tool{'' if len(tools) == 1 else 's'}."
        )
        names = [t.name for t in tools]
        keep = self.tool.value if self.tool.value in names else (names[0] if names else None)
        self.tool.options = names
        self.tool.value = keep
        self._tool_picked()

    def _tool_picked(self) -> None:
        tool = self.inspector.tool(self.tool.value) if self.inspector and self.tool.value else None
        self.send_button.disabled = tool is None
        if tool is None:
            self.schema.value = ""
            return
        self.schema.value = _schema_html(tool)
        self.arguments.value = "{}"
        self._new_request()

    def _new_request(self) -> None:
        """The composer gets the next Request of the tool picked, from the dialogue so far."""
        tool = self.inspector.tool(self.tool.value) if self.inspector and self.tool.value else None
        skeleton = self.inspector.request_for(tool.name) if self.inspector and tool else None
        if skeleton is None or tool is None or tool.type_name is None:
            self.request_box.children = [
                widgets.HTML("<p>This tool takes no PGM-AUA message: give its arguments as JSON.</p>")
            ]
            self.request = None
            return
        if self.request is None or self.request.type_name != tool.type_name:
            self.request = MessageComposer(
                tool.type_name,
                "RQ",
                document=skeleton,
                draft_dir=False,
                reply_button=False,
                work_folder=self.work_folder,
            )
        else:
            self.request.load(skeleton)
        self.request_box.children = [self.request]

    def _arguments(self) -> dict[str, Any]:
        text = self.arguments.value.strip() or "{}"
        try:
            value = json.loads(text)
        except ValueError as exc:
            raise InspectorError(f"Other arguments are not JSON: {exc}") from None
        if not isinstance(value, dict):
            raise InspectorError('Other arguments must be a JSON object: {"name": value, ...}')
        if self.request is not None:
            value["message"] = self.request.value
        return value

    async def send(self) -> None:
        """Send the tool's arguments (the composer's Request as ``message``) and show what came back."""
        if self.inspector is None or not self.tool.value:
            raise InspectorError("Connect to a partner first")
        arguments = self._arguments()
        again = "" if self.inspector.connected else " (the connection was closed: connecting again)"
        self._say(f"Sending {self.tool.value}…{again}")
        call = await self.inspector.call(self.tool.value, arguments)
        self.last_call = call
        self._show_response(call)
        self.findings.value = _call_html(call, self.inspector.checked())
        outcome = call.response.get("Outcome") if call.response is not None else None
        if call.response is not None:
            said = f"answered, Outcome {outcome}."
        else:  # one line: the partner's whole error (a tool error's JSON, say) is under This exchange
            said = f"no Response: {_short(call.reply.error or 'nothing came back')} (in full under This exchange)."
        self._say(f"{self.tool.value}: {said}", bad=call.response is None)

    def _show_response(self, call: Call) -> None:
        document = call.response
        tool = self.inspector.tool(call.tool) if self.inspector else None
        if document is None or tool is None or tool.type_name is None:
            shown = json.dumps(document, indent=1, ensure_ascii=False) if document is not None else call.reply.error
            self.response_box.children = [widgets.HTML(f"<pre>{esc(shown or 'nothing')}</pre>")]
            return
        if self.response is None:
            self.response = MessageComposer.from_document(
                document, draft_dir=False, reply_button=False, work_folder=self.work_folder
            )
        else:
            self.response.load(document)
        self.response_box.children = [self.response]

    def _log_edited(self) -> None:
        if self.raw_log.value != self._log_text:
            self._show_log()

    def _show_log(self) -> None:
        self._log_text = "\n".join(self.inspector.log_lines()) if self.inspector is not None else ""
        self.raw_log.value = self._log_text
        if self.inspector is not None and self.inspector.log:
            # Through the browser too: the log and the transcript onto the person's own computer.
            transcript, log = self._documents()
            self.downloads.value = (
                download_html(log, "inspector.jsonrpc.json")
                + " "
                + download_html(transcript, "inspector-transcript.json")
            )

    def _documents(self) -> tuple[str, str]:
        """The transcript (a JSON array of the messages) and the JSON-RPC log, as Save writes them."""
        assert self.inspector is not None
        transcript = json.dumps(self.inspector.transcript, ensure_ascii=False, indent=1) + "\n"
        return transcript, json.dumps(self.inspector.log_document(), ensure_ascii=False, indent=1) + "\n"

    def save(self, name: str) -> tuple[Path, Path] | None:
        """Write the transcript (``NAME.json``, a JSON array of the messages) and its JSON-RPC log
        (``NAME.jsonrpc.json``) to the work folder; an existing file is not replaced."""
        try:
            if self.inspector is None:
                raise InspectorError("Nothing to save yet: connect to a partner and send a Request")
            stem = name.strip().removesuffix(".json")
            transcript, log = self._documents()
            if self.work_folder is None:
                default_work_dir().mkdir(parents=True, exist_ok=True)
            folder = self.work_folder or WorkFolder(default_work_dir())
            folder.entry(stem)  # a name refused as the person typed it, before anything is written
            written = folder.write(stem, transcript)
            try:
                logged = folder.write(f"{stem}.jsonrpc", log)
            except FileExistsError:
                written.unlink()
                raise
        except (InspectorError, NameRefused) as exc:
            self._say(str(exc), bad=True)
            return None
        except FileExistsError as exc:
            self._say(f"{Path(exc.filename or name).name} exists in the work folder: choose another name", bad=True)
            return None
        self._say(f"Saved {written.name} (the transcript) and {logged.name} (its JSON-RPC log) in the work folder.")
        return written, logged

    def close(self) -> None:
        if self.inspector is not None:
            with suppress(RuntimeError):  # no loop running: the connection ends with the process
                asyncio.get_running_loop().create_task(self.inspector.close())
        super().close()
