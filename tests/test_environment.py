"""environment.yml mirrors pyproject.toml, and .ci/run runs exactly the README's test command."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _pyproject_requirements() -> set[str]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    requirements = list(project["dependencies"])
    for extra in ("notebook", "test", "e2e", "mcp"):
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


def test_readme_launch_command_opens_the_notebooks() -> None:
    launch = next(c for c in _readme_commands() if "jupyter lab" in c)
    assert "notebooks" in launch and "pip install" in launch
