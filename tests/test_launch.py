"""``pgm-explore lab`` and ``pgm-explore app`` start their servers, as root too, and say where to open them."""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from pgm_explore import _launch
from pgm_explore.cli import main

ROOT = Path(__file__).resolve().parents[1]
START_SECONDS = 120


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture
def quiet_env(tmp_path: Path) -> dict[str, str]:
    """Jupyter's and IPython's state in a temporary folder, not in the home."""
    env = dict(os.environ)
    for variable in ("JUPYTER_CONFIG_DIR", "JUPYTER_DATA_DIR", "JUPYTER_RUNTIME_DIR", "IPYTHONDIR", "MPLCONFIGDIR"):
        env[variable] = str(tmp_path / variable.lower())
    env["PGM_EXPLORE_DRAFTS"] = str(tmp_path / "drafts")
    env["PGM_EXPLORE_WORK"] = str(tmp_path / "work")
    env["PYTHONUNBUFFERED"] = "1"
    return env


class _Started:
    def __init__(self, process: subprocess.Popen[str], log: Path) -> None:
        self.process, self.log = process, log

    def text(self) -> str:
        return self.log.read_text(encoding="utf-8", errors="replace")

    def wait_for(self, pattern: str) -> re.Match[str]:
        deadline = time.monotonic() + START_SECONDS
        while time.monotonic() < deadline:
            found = re.search(pattern, self.text())
            if found:
                return found
            assert self.process.poll() is None, f"exited with {self.process.returncode}:\n{self.text()[-3000:]}"
            time.sleep(0.25)
        raise AssertionError(f"{pattern!r} not printed in {START_SECONDS} s:\n{self.text()[-3000:]}")


@pytest.fixture
def start(tmp_path: Path, quiet_env: dict[str, str]) -> Iterator[Callable[..., _Started]]:
    started: list[_Started] = []

    def run(*args: str, cwd: Path = ROOT) -> _Started:
        log = tmp_path / f"server-{len(started)}.log"
        with log.open("w") as out:
            process = subprocess.Popen(
                [sys.executable, "-m", "pgm_explore", *args],
                cwd=cwd,
                env=quiet_env,
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
                text=True,
            )
        started.append(_Started(process, log))
        return started[-1]

    yield run
    for server in started:
        if server.process.poll() is None:
            server.process.terminate()  # SIGTERM: the command passes it on to its server
            try:
                server.process.wait(60)
            except subprocess.TimeoutExpired:
                server.process.kill()
                raise


def _get(url: str) -> tuple[int, bytes]:
    try:
        with urllib.request.urlopen(url, timeout=10) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as error:
        return error.code, b""


def test_lab_starts_on_the_checkout_and_serves_the_first_notebook(start) -> None:
    port = _free_port()
    server = start("lab", "--no-browser", f"--port={port}")
    said = server.wait_for(rf"open (http://127\.0\.0\.1:{port}/lab/tree/(\S+)\?token=(\w+))")
    assert said.group(2) == _launch.FIRST_NOTEBOOK
    token = said.group(3)
    server.wait_for("JupyterLab is ready")
    assert "Running as root is not recommended" not in server.text()
    # Rooted at the repository: the notebooks and the documents their links name are both served.
    status, body = _get(f"http://127.0.0.1:{port}/api/contents/{_launch.FIRST_NOTEBOOK}?token={token}")
    assert status == 200 and json.loads(body)["type"] == "notebook"
    status, body = _get(f"http://127.0.0.1:{port}/api/contents/docs/rules.md?token={token}")
    assert status == 200 and "# " in json.loads(body)["content"]
    # The address printed opens the first notebook (JupyterLab's page for it, not a 404).
    status, _ = _get(said.group(1))
    assert status == 200
    server.process.terminate()
    assert server.process.wait(60) == 0 or server.process.returncode in (-15, 143)
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        assert "--allow-root" in _launch.lab_command(ROOT, port, token)


def test_lab_outside_a_checkout_serves_the_current_folder(start, tmp_path: Path) -> None:
    folder = tmp_path / "mine"
    folder.mkdir()
    (folder / "note.md").write_text("# mine\n", encoding="utf-8")
    port = _free_port()
    server = start("lab", "--no-browser", f"--port={port}", cwd=folder)
    said = server.wait_for(rf"open http://127\.0\.0\.1:{port}/lab\?token=(\w+)")
    server.wait_for("JupyterLab is ready")
    status, body = _get(f"http://127.0.0.1:{port}/api/contents/note.md?token={said.group(1)}")
    assert status == 200 and json.loads(body)["content"] == "# mine\n"


def test_checkout_root_is_found_from_a_subfolder() -> None:
    assert _launch.checkout_root(ROOT / "notebooks") == ROOT
    assert _launch.checkout_root(ROOT) == ROOT


@pytest.mark.skipif(not (hasattr(os, "geteuid") and os.geteuid() == 0), reason="runs as root only")
def test_lab_command_allows_root_when_root() -> None:
    assert "--allow-root" in _launch.lab_command(ROOT, 8888, "t")


def test_app_serves_the_app_notebook(start) -> None:
    port = _free_port()
    server = start("app", "--no-browser", f"--port={port}")
    server.wait_for(rf"open http://127\.0\.0\.1:{port}/")
    server.wait_for("the app is ready")
    assert _launch.APP_NOTEBOOK.is_file()


def test_missing_server_package_is_a_clear_message(monkeypatch: pytest.MonkeyPatch, capsys) -> None:
    real = _launch.importlib.util.find_spec
    monkeypatch.setattr(_launch.importlib.util, "find_spec", lambda name: None if name == "voila" else real(name))
    assert main(["app", "--no-browser"]) == 2
    assert 'pip install -e ".[notebook,mcp,app]"' in capsys.readouterr().err


def test_help_lists_lab_and_app(capsys) -> None:
    assert main(["--help"]) == 0
    shown = capsys.readouterr().out
    assert re.search(r"^\s+lab\s+start JupyterLab", shown, re.M)
    assert re.search(r"^\s+app\s+serve the composer-and-check app page", shown, re.M)
