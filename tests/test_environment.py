"""environment.yml mirrors pyproject.toml, and .ci/run runs exactly the README's test command."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _pyproject_requirements() -> set[str]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    requirements = list(project["dependencies"])
    for extra in ("notebook", "test", "e2e", "mcp", "app"):
        requirements += project["optional-dependencies"][extra]
    return {re.sub(r"\s+", "", r) for r in requirements}


def _environment_requirements() -> set[str]:
    lines = (ROOT / "environment.yml").read_text(encoding="utf-8").splitlines()
    found = set()
    for line in lines:
        match = re.match(r"^  - ([A-Za-z0-9_.\-]+[<>=!].*)$", line)
        if match and not match.group(1).startswith("python"):
            found.add(match.group(1).strip())
    return found


def test_environment_mirrors_pyproject() -> None:
    assert _environment_requirements() == _pyproject_requirements()


def _readme_commands() -> list[str]:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    return re.findall(r"```(?:bash|sh)\n(.+?)\n```", readme, re.S)


def test_ci_runs_the_readme_test_command() -> None:
    commands = _readme_commands()
    test_command = next(c for c in commands if "pytest" in c)
    assert test_command.strip() in (ROOT / ".ci" / "run").read_text(encoding="utf-8")


def test_readme_launch_command_starts_the_explorer() -> None:
    """The launch command installs what the explorer needs, shows pip's progress, and starts
    JupyterLab through `pgm-explore lab` (which runs as root too and serves the repository)."""
    launch = next(c for c in _readme_commands() if "pgm-explore lab" in c)
    install = re.search(r'pip install (?:\S+ )*-e "\.\[([a-z,]+)\]"', launch)
    assert install, launch
    extras = set(install.group(1).split(","))
    assert {"notebook", "app", "mcp"} <= extras, "the explorer's notebooks, the app page and notebook 07"
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert extras <= set(project["optional-dependencies"])
    assert " -q" not in launch, "a silent install looks like a hang: let pip show its progress"
    assert launch.rstrip().endswith(".venv/bin/pgm-explore lab")


def test_the_changelog_starts_with_the_packages_version() -> None:
    from pgm_explore import __version__

    headings = re.findall(r"^## (\S+)", (ROOT / "CHANGELOG.md").read_text(encoding="utf-8"), re.M)
    assert headings[0] == __version__, "a new version gets its CHANGELOG.md section (or the section its version)"
    assert len(headings) == len(set(headings))
