"""``pgm-explore lab`` and ``pgm-explore app`` start their servers, as root too, and say where to open them."""

from __future__ import annotations

import http.client
import importlib.util
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

import http_peer as peer
import pytest

from pgm_explore import _launch
from pgm_explore.cli import main

ROOT = Path(__file__).resolve().parents[1]
START_SECONDS = 120
# A server started for real takes seconds (slow), and needs its extra: without it, the test is
# skipped with the reason, not failed.
_NO_LAB = importlib.util.find_spec("jupyterlab") is None
_NO_VOILA = importlib.util.find_spec("voila") is None


def serves_lab(test: Callable[..., None]) -> Callable[..., None]:
    return pytest.mark.slow(needs_lab(test))


def serves_app(test: Callable[..., None]) -> Callable[..., None]:
    return pytest.mark.slow(needs_voila(test))


needs_lab = pytest.mark.skipif(_NO_LAB, reason="JupyterLab is not installed (the notebook extra)")
needs_voila = pytest.mark.skipif(_NO_VOILA, reason="Voilà is not installed (the app extra)")


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


@serves_lab
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
        assert "--allow-root" in _launch.lab_command(ROOT, port)
    assert token not in " ".join(_launch.lab_command(ROOT, port))  # (in the environment, not on `ps`)


@serves_lab
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
    assert "--allow-root" in _launch.lab_command(ROOT, 8888)


@serves_app
def test_app_serves_the_app_notebook(start) -> None:
    port = _free_port()
    server = start("app", "--no-browser", f"--port={port}")
    token = server.wait_for(rf"open http://127\.0\.0\.1:{port}/\?token=(\w{{48}})").group(1)
    server.wait_for("the app is ready")
    assert _launch.APP_NOTEBOOK.is_file()
    assert token not in " ".join(_launch.app_command(port))  # (in the environment, not on `ps`)
    # Listening on loopback, it says nothing about others reaching it.
    assert "listening on" not in server.text()


@serves_app
def test_app_honours_jupyter_token_and_a_token_given(start, quiet_env: dict[str, str]) -> None:
    port = _free_port()
    quiet_env["JUPYTER_TOKEN"] = "from-the-environment"
    server = start("app", "--no-browser", f"--port={port}")
    server.wait_for(rf"open http://127\.0\.0\.1:{port}/\?token=from-the-environment\n")
    port = _free_port()
    server = start("app", "--no-browser", f"--port={port}", "--token=given-on-the-line")
    server.wait_for(rf"open http://127\.0\.0\.1:{port}/\?token=given-on-the-line\n")
    server.wait_for("the app is ready")
    assert peer.get(port, "/?token=from-the-environment", f"127.0.0.1:{port}").status == 302  # (the login page)


@pytest.mark.parametrize("command", [pytest.param("app", marks=needs_voila), pytest.param("lab", marks=needs_lab)])
def test_an_empty_token_or_a_bad_host_name_is_refused(command: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main([command, "--no-browser", "--token", " "]) == 2
    assert "--token is empty" in capsys.readouterr().err
    assert main([command, "--no-browser", "--allow-host", "evil.example/path"]) == 2
    assert "is not a host name or an address" in capsys.readouterr().err


@needs_voila
def test_app_refuses_a_work_folder_where_jupyter_reads_configuration(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # A kernelspec saved there would run a command of the visitor's choice (issue 19).
    kernels = tmp_path / "data" / "kernels" / "python3"
    kernels.mkdir(parents=True)
    monkeypatch.setenv("JUPYTER_DATA_DIR", str(tmp_path / "data"))
    assert main(["app", "--no-browser", "--work-folder", str(kernels)]) == 2
    assert "where Jupyter or Python reads configuration" in capsys.readouterr().err
    assert main(["app", "--no-browser", "--work-folder", str(tmp_path / "missing")]) == 2
    assert "is not a folder" in capsys.readouterr().err


@serves_app
def test_app_on_every_address_says_who_can_reach_it_and_answers_only_its_names(start) -> None:
    port = _free_port()
    server = start("app", "--no-browser", f"--port={port}", "--ip=0.0.0.0", "--allow-host=class.example")
    said = server.wait_for(
        r"listening on every address of this machine \(--ip 0\.0\.0\.0\): anyone (.|\n)*?repeatable\)"
    )
    assert f"anyone who can reach port {port}" in said.group(0) and "has the token" in said.group(0)
    assert socket.gethostname().lower() in said.group(0) and "class.example" in said.group(0)
    assert "plain HTTP" in said.group(0) and "--allow-host NAME" in said.group(0)
    server.wait_for("the app is ready")
    static = "/voila/static/voila.js"  # (no page: a page would start a kernel)
    for host in ("127.0.0.1", "localhost", socket.gethostname(), "class.example"):
        assert peer.get(port, static, f"{host}:{port}").status == 200, host
    for host in ("rebound.example", "localhost.rebound.example", "192.0.2.7"):
        assert peer.get(port, static, f"{host}:{port}").status == 403, host
        assert peer.get(port, "/login", f"{host}:{port}").status == 403, host


@serves_lab
def test_lab_answers_only_its_names_and_its_own_origin_on_every_address(start) -> None:
    # Jupyter Server switches its Host check off when it listens beyond loopback; pgm-explore lab keeps it.
    port = _free_port()
    server = start("lab", "--no-browser", f"--port={port}", "--ip=0.0.0.0")
    server.wait_for(r"listening on every address of this machine")
    token = server.wait_for(rf"open http://127\.0\.0\.1:{port}/lab\S*\?token=(\w+)").group(1)
    server.wait_for("JupyterLab is ready")
    local, foreign = f"127.0.0.1:{port}", f"rebound.example:{port}"
    assert peer.get(port, f"/api/status?token={token}", local).status == 200
    assert peer.get(port, f"/api/status?token={token}", f"{socket.gethostname()}:{port}").status == 200
    assert peer.get(port, f"/api/status?token={token}", foreign).status == 403
    assert peer.get(port, f"/lab?token={token}", foreign).status == 403
    # A kernel, and its websocket: refused to another name, and to another origin with the cookie.
    page = peer.get(port, f"/lab?token={token}", local)
    assert page.status == 200 and page.cookies
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    try:
        connection.request("POST", f"/api/kernels?token={token}", body="{}", headers={"Host": local})
        created = connection.getresponse()
        assert created.status == 201
        kernel = json.loads(created.read())["id"]
    finally:
        connection.close()
    channels = f"/api/kernels/{kernel}/channels"
    assert peer.upgrade(port, channels, local, origin=f"http://{local}", cookie=page.cookies) == 101
    assert peer.upgrade(port, channels, local, origin=f"http://{foreign}", cookie=page.cookies) == 403
    assert peer.upgrade(port, channels, foreign, origin=f"http://{foreign}", cookie=page.cookies) == 403
    assert peer.upgrade(port, f"{channels}?token={token}", foreign, origin=f"http://{foreign}") == 403


def test_help_lists_lab_and_app(capsys) -> None:
    assert main(["--help"]) == 0
    shown = capsys.readouterr().out
    assert re.search(r"^\s+lab\s+start JupyterLab", shown, re.M)
    assert re.search(r"^\s+app\s+serve the composer-and-check app page", shown, re.M)
