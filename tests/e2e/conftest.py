"""End-to-end fixtures: JupyterLab and Voilà on a temporary copy of the notebooks, driven by Chromium.

Every test here runs in a real browser: Debian's ``/usr/bin/chromium`` (``.ci/run`` installs it
with apt when it is missing; ``$PGM_EXPLORE_CHROMIUM`` names another) driven by Playwright's sync
API. Playwright never downloads a browser here. Without Chromium or Playwright the tests are
skipped, with the reason.

The servers serve a temporary folder holding copies of ``notebooks/``, ``data/`` and ``docs/`` side
by side, as in the repository, so the notebooks' relative paths (``../data``) and links
(``../docs/rules.md``) work and nothing a test does (outputs, autosave, saved messages) reaches the
working tree. Each test opens its notebook from a folder of its own,
which gives it a fresh kernel. Jupyter, IPython, matplotlib and Chromium keep their state in
temporary folders too.

Screenshots (``FAILED-<test>.png`` when a test fails) and the servers' logs go to
``$PGM_EXPLORE_SCREENSHOTS`` when set, otherwise to a new temporary folder; the terminal summary
prints where.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Generator, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from pgm_explore._launch import voila_prefix

try:
    from playwright.sync_api import TimeoutError as PlaywrightTimeout
    from playwright.sync_api import expect, sync_playwright
except ImportError:  # the e2e extra is not installed: every test here is skipped
    expect = sync_playwright = None  # type: ignore[assignment]
    PlaywrightTimeout = TimeoutError  # type: ignore[misc,assignment]

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Locator, Page

ROOT = Path(__file__).resolve().parents[2]
HERE = Path(__file__).resolve().parent
CHROMIUM = Path(os.environ.get("PGM_EXPLORE_CHROMIUM", "/usr/bin/chromium"))
FOREIGN_NAME = "rebound.example"
"""A host name that is not the servers': Chromium resolves it to 127.0.0.1 (see CHROMIUM_ARGS)."""
# Headless Debian Chromium as root in a container, with no calls home. Playwright gives every
# launch a fresh temporary --user-data-dir of its own.
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    # A name of another site that points at this machine, as a rebinding DNS server makes it point:
    # tests open the servers by it to see them refuse (tests/e2e/test_app_access.py).
    f"--host-resolver-rules=MAP {FOREIGN_NAME} 127.0.0.1",
]
SERVER_START_SECONDS = 120.0
SERVER_STOP_SECONDS = 30.0
ACTION_MS = 30_000  # clicks, fills, waits for an element
KERNEL_MS = 120_000  # a notebook's cells run (the first import of the Jupyter stack is slow)
WIDGETS_MS = 120_000
"""A click that makes a composer: the kernel answers in a tenth of a second, but the browser then
builds some 400 widget models and their views, in order, behind the kernel's messages. On a
loaded two-core machine that once took over 30 s (the status bar said Busy until it was done)."""

NO_PLAYWRIGHT = 'Playwright is not installed (pip install -e ".[e2e]")'
_FAILED = pytest.StashKey[bool]()


def _missing() -> str | None:
    if sync_playwright is None:
        return NO_PLAYWRIGHT
    if not CHROMIUM.exists():
        return f"{CHROMIUM} is missing (apt-get install chromium; .ci/run does it)"
    return None


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    reason = _missing()
    for item in items:
        if HERE in Path(item.path).resolve().parents:
            item.add_marker(pytest.mark.e2e)
            if reason:
                item.add_marker(pytest.mark.skip(reason=f"e2e: {reason}"))


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, pytest.TestReport, pytest.TestReport]:
    """Remember a failure, for the page fixture's FAILED-<test>.png."""
    report = yield
    if report.failed:
        item.stash[_FAILED] = True
    return report


# ----------------------------------------------------------------------------------------------
# Processes


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _start_time(pid: int) -> str | None:
    """The start time of a process (field 22 of /proc/<pid>/stat), or None when it is gone."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = stat.rsplit(")", 1)[1].split()
    return None if fields[0] == "Z" else fields[19]


def _descendants(pid: int) -> dict[int, str]:
    """Every live descendant of a process (kernels included), with its start time, from /proc."""
    children: dict[int, list[int]] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            text = stat.read_text()
        except OSError:
            continue
        child = int(stat.parent.name)
        parent = int(text.rsplit(")", 1)[1].split()[1])
        children.setdefault(parent, []).append(child)
    found: dict[int, str] = {}
    todo = list(children.get(pid, []))
    while todo:
        child = todo.pop()
        started = _start_time(child)
        if started is not None:
            found[child] = started
        todo += children.get(child, [])
    return found


@dataclass
class Server:
    """A server process started by a fixture: its base URL (ending in /) and its log file."""

    name: str
    url: str
    root: Path
    log: Path
    process: subprocess.Popen[bytes]
    token: str = ""

    def at(self, path: str = "") -> str:
        """The address of ``path`` (relative to the server's root) with the server's token, as a
        person opens the address the server printed."""
        return f"{self.url}{path}{'&' if '?' in path else '?'}token={self.token}"

    def log_tail(self, lines: int = 40) -> str:
        text = self.log.read_text(errors="replace") if self.log.exists() else ""
        return "\n".join(text.splitlines()[-lines:])

    def stop(self) -> None:
        """Terminate the server, wait for it, and check that it and its kernels are gone."""
        if not Path("/proc").is_dir():  # pragma: no cover - not Linux
            self.process.terminate()
            self.process.wait(SERVER_STOP_SECONDS)
            return
        kernels = _descendants(self.process.pid)
        self.process.terminate()
        try:
            self.process.wait(SERVER_STOP_SECONDS)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(SERVER_STOP_SECONDS)
            raise AssertionError(f"{self.name} ignored SIGTERM for {SERVER_STOP_SECONDS} s; killed") from None
        deadline = time.monotonic() + SERVER_STOP_SECONDS
        left = kernels
        while left and time.monotonic() < deadline:
            left = {pid: t for pid, t in left.items() if _start_time(pid) == t}
            time.sleep(0.2)
        for pid in left:  # only processes this server started, identified by pid and start time
            os.kill(pid, signal.SIGKILL)
        assert not left, f"{self.name} left processes behind (killed): {sorted(left)}"


def _wait_until_ready(server: Server, ready: Callable[[], bool]) -> None:
    deadline = time.monotonic() + SERVER_START_SECONDS
    while time.monotonic() < deadline:
        if server.process.poll() is not None:
            raise RuntimeError(f"{server.name} exited with {server.process.returncode}:\n{server.log_tail()}")
        if ready():
            return
        time.sleep(0.25)
    server.stop()
    raise RuntimeError(f"{server.name} not ready after {SERVER_START_SECONDS} s:\n{server.log_tail()}")


def _tcp_open(port: int) -> Callable[[], bool]:
    def ready() -> bool:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                return True
        except OSError:
            return False

    return ready


def _status_ok(url: str) -> Callable[[], bool]:
    def ready() -> bool:
        try:
            with urllib.request.urlopen(url, timeout=5) as response:
                return bool(response.status == 200)
        except (OSError, urllib.error.URLError):
            return False

    return ready


def _start(name: str, command: list[str], root: Path, env: dict[str, str], logs: Path) -> subprocess.Popen[bytes]:
    with (logs / f"{name}.log").open("wb") as out:
        return subprocess.Popen(
            command, cwd=root, env=env, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT
        )


# ----------------------------------------------------------------------------------------------
# Session fixtures: folders, servers, browser


@pytest.fixture(scope="package")
def e2e_state(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A temporary folder for the servers' and the browser's state (settings, kernels' runtime files, caches)."""
    return tmp_path_factory.mktemp("e2e-state")


@pytest.fixture(scope="package")
def e2e_env(e2e_state: Path) -> dict[str, str]:
    """The servers' environment: Jupyter, IPython, matplotlib, caches, drafts and saved files in temporary folders."""
    env = dict(os.environ)
    for variable, folder in (
        ("JUPYTER_CONFIG_DIR", "jupyter-config"),
        ("JUPYTER_DATA_DIR", "jupyter-data"),
        ("JUPYTER_RUNTIME_DIR", "jupyter-runtime"),
        ("JUPYTERLAB_SETTINGS_DIR", "lab-settings"),
        ("JUPYTERLAB_WORKSPACES_DIR", "lab-workspaces"),
        ("IPYTHONDIR", "ipython"),
        ("MPLCONFIGDIR", "mpl"),
        ("XDG_CACHE_HOME", "cache"),
        ("XDG_CONFIG_HOME", "config"),
        ("PGM_EXPLORE_DRAFTS", "drafts"),  # the composers' autosaved drafts
        ("PGM_EXPLORE_WORK", "work"),  # where Save writes without a file name
    ):
        (e2e_state / folder).mkdir(exist_ok=True)
        env[variable] = str(e2e_state / folder)
    env["PYTHONUNBUFFERED"] = "1"
    env.pop("JUPYTER_TOKEN", None)
    # User settings: no news toast over the widgets, and every cell attached to the DOM.
    settings = {
        "@jupyterlab/apputils-extension/notification": {"fetchNews": "false", "checkForUpdates": False},
        "@jupyterlab/notebook-extension/tracker": {"windowingMode": "none"},
    }
    for plugin, values in settings.items():
        path = e2e_state / "lab-settings" / f"{plugin}.jupyterlab-settings"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(values), encoding="utf-8")
    return env


SERVED = ("notebooks", "data", "docs", "README.md")
"""What the servers serve, copied: the repository's layout, so that the notebooks' relative paths
(``../data``) and links (``../docs/rules.md``) resolve as they do in a checkout."""
VOILA_FILES = r".*\.(md|png|jpg|gif|svg)"
"""Files Voilà serves beside the notebooks (as ``pgm-explore app`` does): the documents the notebooks link to."""


@pytest.fixture(scope="package")
def served_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A temporary copy of the repository's layout: notebooks/, data/, docs/ side by side, and README.md."""
    root = tmp_path_factory.mktemp("e2e-root")
    ignore = shutil.ignore_patterns(".ipynb_checkpoints", "__pycache__")
    for name in SERVED:
        if (ROOT / name).is_dir():
            shutil.copytree(ROOT / name, root / name, ignore=ignore)
        else:
            shutil.copyfile(ROOT / name, root / name)
    return root


@pytest.fixture(scope="package")
def lab_server(served_root: Path, e2e_env: dict[str, str], screenshots: Path) -> Iterator[Server]:
    """JupyterLab on the temporary copy, on a free loopback port, stopped (and checked gone) at the end."""
    port, token = _free_port(), secrets.token_hex(16)
    command = [
        sys.executable,
        "-m",
        "jupyter",
        "lab",
        "--no-browser",
        "--allow-root",
        "--ip=127.0.0.1",
        f"--port={port}",
        "--ServerApp.port_retries=0",
        f"--IdentityProvider.token={token}",
        f"--ServerApp.root_dir={served_root}",
        # jupyter-lsp probes `npm prefix --global` at start (writes ~/.npm); the tests need no LSP.
        "--ServerApp.jpserver_extensions=jupyter_lsp=False",
    ]
    process = _start("jupyterlab", command, served_root, e2e_env, screenshots)
    server = Server("jupyterlab", f"http://127.0.0.1:{port}/", served_root, screenshots / "jupyterlab.log", process)
    server.token = token
    _wait_until_ready(server, _status_ok(f"{server.url}api/status?token={token}"))
    yield server
    server.stop()


@pytest.fixture(scope="package")
def voila_server(served_root: Path, e2e_env: dict[str, str], screenshots: Path) -> Iterator[Server]:
    """Voilà serving the temporary copy of the repository (pages at voila/render/notebooks/<name>,
    the documents at voila/files/docs/<name>.md, rendered), started as ``pgm-explore app`` starts it.

    Readiness is a TCP connect: every page GET starts a kernel in Voilà. Its token is given in
    ``JUPYTER_TOKEN``, as ``pgm-explore app`` gives it.
    """
    port, token = _free_port(), secrets.token_hex(16)
    command = [
        *voila_prefix(),  # Voilà as pgm-explore runs it: the documents rendered, not sent as text
        "--no-browser",
        "--Voila.ip=127.0.0.1",
        f"--port={port}",
        "--Voila.port_retries=0",
        "--show_tracebacks=True",
        f"--VoilaConfiguration.file_allowlist={VOILA_FILES}",
        str(served_root),
    ]
    process = _start("voila", command, served_root, {**e2e_env, "JUPYTER_TOKEN": token}, screenshots)
    server = Server("voila", f"http://127.0.0.1:{port}/", served_root, screenshots / "voila.log", process, token)
    _wait_until_ready(server, _tcp_open(port))
    yield server
    server.stop()


@pytest.fixture(scope="package")
def app_work(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The app server's work folder (``--work-folder``): a folder of its own, with a file beside it
    that the page must never show (``outside/secret.json``)."""
    base = tmp_path_factory.mktemp("app")
    (base / "work").mkdir()
    (base / "outside").mkdir()
    return base / "work"


@pytest.fixture(scope="package")
def app_server(served_root: Path, app_work: Path, e2e_env: dict[str, str], screenshots: Path) -> Iterator[Server]:
    """``pgm-explore app``: the Voilà app page, on a free port, reading the temporary copy's data/,
    saving in ``app_work``; its token read from the address it prints, as a person reads it.

    Readiness is the command's own "ready" line (it connects over TCP: a GET would start a kernel).
    """
    port = _free_port()
    env = {**e2e_env, "PGM_EXPLORE_DATA": str(served_root / "data")}
    command = [
        *[sys.executable, "-m", "pgm_explore", "app", "--no-browser", f"--port={port}"],
        f"--work-folder={app_work}",
    ]
    process = _start("app", command, served_root, env, screenshots)
    server = Server("app", f"http://127.0.0.1:{port}/", served_root, screenshots / "app.log", process)
    _wait_until_ready(server, lambda: "the app is ready" in server.log_tail())
    printed = re.search(rf"open http://127\.0\.0\.1:{port}/\?token=(\w+)", server.log_tail(100))
    assert printed, server.log_tail()
    server.token = printed.group(1)
    yield server
    server.stop()


@pytest.fixture(scope="package")
def screenshots() -> Path:
    """Screenshots and server logs: $PGM_EXPLORE_SCREENSHOTS (tests/conftest.py names a new
    temporary folder when it is not set, and prints where at the end), else a new temporary folder;
    under pytest-xdist, a folder of each worker's in it (each worker starts servers of its own)."""
    configured = os.environ.get("PGM_EXPLORE_SCREENSHOTS")
    # Not under pytest's basetemp: pytest prunes old basetemps, and the shots should outlive the run.
    folder = Path(configured).resolve() if configured else Path(tempfile.mkdtemp(prefix="pgm-explore-e2e-"))
    folder /= os.environ.get("PYTEST_XDIST_WORKER", "")
    folder.mkdir(parents=True, exist_ok=True)
    return folder


@pytest.fixture(scope="package")
def browser(e2e_state: Path) -> Iterator[Browser]:
    """Debian's Chromium, headless, launched by Playwright (no browser download)."""
    assert sync_playwright is not None and expect is not None
    expect.set_options(timeout=ACTION_MS)
    env = {**os.environ, "XDG_CONFIG_HOME": str(e2e_state / "config"), "XDG_CACHE_HOME": str(e2e_state / "cache")}
    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(
            executable_path=str(CHROMIUM), args=CHROMIUM_ARGS, headless=True, env=env, timeout=60_000
        )
        yield chromium
        chromium.close()


# ----------------------------------------------------------------------------------------------
# Per-test fixtures: a page, screenshots, notebooks opened in Lab or Voilà


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9]+", "-", text).strip("-")[:80]


@pytest.fixture
def page(browser: Browser, request: pytest.FixtureRequest, screenshots: Path) -> Iterator[Page]:
    """A fresh browser context and page (1280x900); a screenshot named FAILED-... when the test fails."""
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    context.set_default_timeout(ACTION_MS)
    context.set_default_navigation_timeout(60_000)
    new_page = context.new_page()
    # What the page said (widget errors land in the console), kept beside the screenshot of a failure.
    said: list[str] = []
    new_page.on("console", lambda message: said.append(f"{message.type}: {message.text}"))
    new_page.on("pageerror", lambda error: said.append(f"pageerror: {error}"))
    yield new_page
    if request.node.stash.get(_FAILED, False):
        name = f"FAILED-{_slug(request.node.name)}"
        (screenshots / f"{name}.console.txt").write_text("\n".join(said), encoding="utf-8")
        with contextlib.suppress(Exception):  # best effort: the page may be what broke
            new_page.screenshot(path=str(screenshots / f"{name}.png"))
    context.close()


@pytest.fixture
def shot(page: Page, screenshots: Path, request: pytest.FixtureRequest) -> Callable[[str], Path]:
    """``shot("step")`` saves a screenshot of the page as <test>-<nn>-<step>.png and returns its path."""
    counter = iter(range(1, 100))

    def take(step: str) -> Path:
        path = screenshots / f"{_slug(request.node.name)}-{next(counter):02d}-{_slug(step)}.png"
        page.screenshot(path=str(path))
        return path

    return take


@dataclass
class Notebook:
    """A notebook opened in JupyterLab: the page, the served copy's path, and its panel."""

    page: Page
    path: Path

    @property
    def panel(self) -> Locator:
        return self.page.locator(".jp-NotebookPanel:visible")

    @property
    def folder(self) -> Path:
        return self.path.parent


def _notebook(root: Path, pattern: str) -> Path:
    found = sorted((root / "notebooks").glob(pattern))
    assert len(found) == 1, f"expected one notebook notebooks/{pattern}, found {[p.name for p in found]}"
    return found[0]


_PROMPTS = ".jp-NotebookPanel:not(.lm-mod-hidden) .jp-CodeCell .jp-InputArea-prompt"


def wait_for_idle(page: Page) -> None:
    """Until the status bar says the kernel is idle: the browser has taken in every message the
    kernel sent before it went idle (it reads them in order), widget models included."""
    page.wait_for_function(
        """() => {
            const bar = document.querySelector(".jp-StatusBar-Widget");
            return bar && /^(?!No Kernel).+ [|] Idle$/m.test(bar.innerText);
        }""",
        timeout=WIDGETS_MS,
    )


def _run_all(page: Page) -> None:
    """Run All from the Run menu; wait until the kernel is done; fail with the error if a cell raised.

    Run All stops at the first cell that raises and leaves the cells after it unrun (``[ ]:``).
    """
    page.locator(".jp-Notebook .jp-Cell").first.wait_for()
    # The toolbar's indicator says idle before a kernel is attached ("No Kernel | Initializing");
    # the status bar names the kernel once it is connected.
    page.wait_for_function(
        """() => {
            const status = document.querySelector(".jp-NotebookPanel:not(.lm-mod-hidden) .jp-Notebook-ExecutionIndicator");
            const bar = document.querySelector(".jp-StatusBar-Widget");
            return status && status.dataset.status === "idle" && bar && /^(?!No Kernel).+ [|] Idle$/m.test(bar.innerText);
        }""",
        timeout=KERNEL_MS,
    )
    started = (
        f"() => [...document.querySelectorAll({json.dumps(_PROMPTS)})].some(p => /\\[[*\\d]+\\]/.test(p.textContent))"
    )
    for attempt in range(3):  # a click that queues nothing is safe to repeat
        page.locator(".lm-MenuBar-item", has_text="Run").click()
        page.locator('li.lm-Menu-item[data-command="runmenu:run-all"]').click()
        try:
            page.wait_for_function(started, timeout=10_000)
            break
        except PlaywrightTimeout:
            if attempt == 2:
                raise
    page.wait_for_function(
        f"""() => {{
            const busy = [...document.querySelectorAll({json.dumps(_PROMPTS)})].some(p => p.textContent.includes("*"));
            const status = document.querySelector(".jp-NotebookPanel:not(.lm-mod-hidden) .jp-Notebook-ExecutionIndicator");
            return !busy && status && status.dataset.status === "idle";
        }}""",
        timeout=KERNEL_MS,
    )
    cells = page.locator(".jp-NotebookPanel:not(.lm-mod-hidden) .jp-CodeCell")
    prompts = [cells.nth(i).locator(".jp-InputArea-prompt").inner_text() for i in range(cells.count())]
    if not all(re.search(r"\[\d+\]", p) for p in prompts):
        failed = max(i for i, p in enumerate(prompts) if re.search(r"\[\d+\]", p))
        cell = cells.nth(failed)
        source = cell.locator(".jp-InputArea-editor").inner_text()[:300]
        output = cell.locator(".jp-OutputArea").inner_text()[-3000:]
        raise AssertionError(f"Run All stopped at code cell {failed + 1}:\n{source}\n--- output ---\n{output}")


@pytest.fixture
def open_in_lab(page: Page, lab_server: Server, request: pytest.FixtureRequest) -> Callable[[str], Notebook]:
    """``open_in_lab("02_*.ipynb")``: open a fresh copy of that notebook in Lab, Run All, return it.

    The copy sits in a folder of the test's own beside notebooks/ (so ``../data`` works and the
    kernel is new), and Lab opens it in a workspace of the test's own.
    """

    def open_notebook(pattern: str) -> Notebook:
        source = _notebook(lab_server.root, pattern)
        folder = lab_server.root / f"run-{_slug(request.node.name)}"
        folder.mkdir()
        path = folder / source.name
        shutil.copyfile(source, path)
        relative = path.relative_to(lab_server.root).as_posix()
        workspace = _slug(request.node.name)
        page.goto(f"{lab_server.url}lab/workspaces/{workspace}/tree/{relative}?token={lab_server.token}")
        _run_all(page)
        return Notebook(page, path)

    return open_notebook


@pytest.fixture
def open_in_voila(page: Page, voila_server: Server) -> Callable[[str], Page]:
    """``open_in_voila("02_*.ipynb")``: render that notebook with Voilà (the copy in notebooks/)."""

    def render(pattern: str) -> Page:
        path = _notebook(voila_server.root, pattern)
        page.goto(voila_server.at(f"voila/render/notebooks/{path.name}"))
        return page

    return render


# ----------------------------------------------------------------------------------------------
# The composer widget in the DOM (classes set by pgm_explore.widgets; docs/widgets.md)


def code_cell(notebook: Notebook, fragment: str) -> Locator:
    """The code cell whose source contains ``fragment``."""
    editor = notebook.page.locator(".jp-InputArea-editor", has_text=fragment)
    return notebook.panel.locator(".jp-CodeCell").filter(has=editor)


@dataclass
class Composer:
    """A MessageComposer on the page. Selectors start at its own element (``:scope >``), so a
    reply composer shown inside it is not mistaken for it."""

    root: Locator

    def _own(self, selector: str) -> Locator:
        return self.root.locator(f":scope > {selector}")

    def field(self, slug: str) -> Locator:
        """The field box of a JSON path, e.g. ``"Prompt"`` or ``"ResolvedReferents-0-Confidence"``."""
        return self._own(f".pgmx-form .pgmx-field-{slug}")

    def input(self, slug: str) -> Locator:
        return self.field(slug).locator(".pgmx-input input, .pgmx-input textarea")

    def finding(self, slug: str) -> Locator:
        return self._own(f".pgmx-form .pgmx-finding-{slug}")

    def tool(self, name: str) -> Locator:
        """A toolbar element: ``badge``, ``reply``, ``save``, ``save-path``, ``status``."""
        return self._own(f".widget-hbox .pgmx-{name}")

    @property
    def title(self) -> Locator:
        return self._own(".pgmx-title")

    @property
    def json_view(self) -> Locator:
        return self._own(".pgmx-json textarea")

    @property
    def mode(self) -> Locator:
        """The Mode switch's selected button (RQ or RS)."""
        return self.field("Mode").locator(".pgmx-mode button.mod-active")

    @property
    def replies(self) -> Locator:
        return self._own(".pgmx-replies .pgmx-composer")

    @property
    def open_panel(self) -> Locator:
        return self._own(".pgmx-open-panel")

    def type_and_see(self, slug: str, text: str) -> None:
        """Type ``text`` into the text field ``slug`` with real keys, until the JSON view shows it."""
        assert expect is not None
        type_into(self.input(slug), text)
        expect(self.json_view).to_have_value(re.compile(re.escape(f'"{slug}": {json.dumps(text)}')), timeout=WIDGETS_MS)

    def reply(self) -> Composer:
        """Click Reply, as a person does; the Response's composer shown under this one."""
        assert expect is not None
        self.tool("reply").click()
        expect(self.replies).to_have_count(1, timeout=WIDGETS_MS)
        return Composer(self.replies.first)

    def open_file(self, path: str) -> None:
        """Click Open, type ``path`` into the panel's path box and click Open file, as a person does."""
        self.tool("open").click()
        box = self.open_panel.locator(".pgmx-open-path input")
        expect(box).to_be_visible(timeout=WIDGETS_MS)
        type_into(box, path)
        self.open_panel.locator("button.pgmx-open-file").click()


def open_app(page: Page, server: Server, tab: str | None = None) -> Locator:
    """Open the app page (``pgm-explore app``) at the address it printed, and click ``tab`` if given;
    the page's ``.pgmx-app`` element."""
    assert expect is not None
    page.goto(server.at(), timeout=KERNEL_MS)
    app = page.locator(".pgmx-app")
    expect(app).to_be_visible(timeout=KERNEL_MS)
    if tab is not None:
        app.locator(".lm-TabBar-tab", has_text=tab).click()
    return app


def type_into(field: Locator, text: str) -> None:
    """Replace a text box's content with real key events, as a user types."""
    field.scroll_into_view_if_needed()
    field.click()
    field.fill("")
    if text:
        field.press_sequentially(text, delay=20)


@pytest.fixture
def open_code_in_lab(page: Page, lab_server: Server, request: pytest.FixtureRequest) -> Callable[[list[str]], Notebook]:
    """``open_code_in_lab(["code", ...])``: a new notebook of those code cells, opened in Lab and
    run (Run All), in a folder of the test's own beside notebooks/ and data/ (a fresh kernel)."""

    def open_notebook(cells: list[str]) -> Notebook:
        import nbformat

        notebook = nbformat.v4.new_notebook()
        notebook.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
        notebook.cells = [nbformat.v4.new_code_cell(source) for source in cells]
        folder = lab_server.root / f"run-{_slug(request.node.name)}"
        folder.mkdir()
        path = folder / "composer.ipynb"
        nbformat.write(notebook, path)
        relative = path.relative_to(lab_server.root).as_posix()
        page.goto(f"{lab_server.url}lab/workspaces/{_slug(request.node.name)}/tree/{relative}?token={lab_server.token}")
        _run_all(page)
        return Notebook(page, path)

    return open_notebook


def run_all(page: Page) -> None:
    """Run All from the Run menu and wait until every cell has run (see ``_run_all``)."""
    _run_all(page)


def restart_kernel(page: Page) -> None:
    """Kernel → Restart Kernel…, then Restart in the dialog that asks; until the kernel is idle."""
    assert expect is not None
    page.locator(".lm-MenuBar-item", has_text="Kernel").click()
    page.locator('li.lm-Menu-item[data-command="kernelmenu:restart"]').click()
    dialog = page.locator(".jp-Dialog")
    expect(dialog).to_contain_text("Restart")
    dialog.locator(".jp-mod-accept").click()
    expect(dialog).to_have_count(0)
    wait_for_idle(page)
