"""From a wheel, not the checkout: the partners find their files and the demo runs over every transport;
``lab`` and ``app`` say plainly that their extra is missing.

Builds the wheel with uv, installs it with the mcp extra in a fresh venv outside the checkout (from uv's
cache, offline when the cache holds everything, else from the package registry), and runs
``pgm-explore dialogue --demo`` from a folder that is not the checkout, with an environment that names
nothing of it.
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import ROOT

pytestmark = pytest.mark.slow

# uv comes with the test extra. Its binary is called directly: `python -m uv` would aim `uv pip`
# at the interpreter running the tests rather than at the fresh venv.
HAS_UV = importlib.util.find_spec("uv") is not None


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if not HAS_UV:
        pytest.skip('uv is not installed (pip install -e ".[test]")')
    where = tmp_path_factory.mktemp("wheel")
    env = dict(os.environ)
    env.setdefault("UV_CACHE_DIR", str(where / "uv-cache"))
    env.pop("VIRTUAL_ENV", None)

    def uv(*args: str, **extra: str) -> None:
        from uv import find_uv_bin

        command = [find_uv_bin(), *args]
        try:  # from the cache first; the package registry only for what the cache lacks
            subprocess.run([*command, "--offline"], check=True, capture_output=True, env={**env, **extra}, timeout=600)
        except subprocess.CalledProcessError:
            subprocess.run(command, check=True, capture_output=True, env={**env, **extra}, timeout=600)

    uv("build", "--wheel", "-o", str(where / "dist"), str(ROOT))
    (wheel,) = (where / "dist").glob("*.whl")
    uv("venv", "-q", "-p", getattr(sys, "_base_executable", sys.executable), str(where / "venv"))
    uv("pip", "install", "-q", f"{wheel}[mcp]", VIRTUAL_ENV=str(where / "venv"))
    return where / "venv"


@pytest.mark.parametrize("transport", ["inprocess", "stdio", "http"])
def test_the_demo_runs_from_a_wheel(installed: Path, transport: str, tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PGM_EXPLORE", "PYTHON", "VIRTUAL_ENV"))}
    out = tmp_path / "demo.jsonl"
    done = subprocess.run(
        [str(installed / "bin" / "pgm-explore"), "dialogue", "--demo", "--out", str(out), "--transport", transport],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    assert f"recorded 19 messages to {out}: 0 errors, 0 warnings" in done.stdout
    where = subprocess.run(
        [
            str(installed / "bin" / "python"),
            "-c",
            "from importlib import resources; print(resources.files('pgm_explore.mcp') / 'data')",
        ],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert str(installed) in where and str(ROOT) not in where  # the files came with the wheel


@pytest.mark.parametrize(("command", "missing"), [("lab", "JupyterLab"), ("app", "Voilà")])
def test_a_server_whose_extra_is_not_installed_is_a_clear_message(
    installed: Path, command: str, missing: str, tmp_path: Path
) -> None:
    # The wheel was installed with the mcp extra only: neither JupyterLab nor Voilà is there.
    done = subprocess.run(
        [str(installed / "bin" / "pgm-explore"), command, "--no-browser"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert (done.returncode, done.stdout) == (2, "")
    assert (
        done.stderr == f'pgm-explore {command}: {missing} is not installed; run pip install -e ".[notebook,mcp,app]"\n'
    )
