"""Every command's ``--help`` is part of its contract: other tools and people's scripts read it.

The expected texts in tests/data/cli-help/ were written by the command as it was before the
``cli`` module became a package, at a fixed width of 80 columns (argparse wraps to the terminal).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from conftest import ROOT

from pgm_explore.cli import COMMANDS, main

EXPECTED = Path(__file__).parent / "data" / "cli-help"
# Written out: a command that disappeared from COMMANDS would take its help test with it.
NAMES = ("validate", "check", "table", "dialogue", "probe", "lab", "app")


@pytest.mark.parametrize("command", ("pgm-explore", *NAMES))
def test_help_text_is_unchanged(
    command: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "80")  # argparse wraps to the terminal's width
    argv = ["--help"] if command == "pgm-explore" else [command, "--help"]
    assert main(argv) == 0
    assert capsys.readouterr().out == (EXPECTED / f"{command}.txt").read_text(encoding="utf-8")


def test_every_command_has_its_expected_help() -> None:
    assert tuple(command.name for command in COMMANDS) == NAMES
    assert sorted(path.stem for path in EXPECTED.glob("*.txt")) == sorted(("pgm-explore", *NAMES))


def test_the_commands_are_listed_once_for_the_parser_the_help_and_the_documents(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["--help"]) == 0
    listed = " ".join(capsys.readouterr().out.split("COMMAND ...", 1)[1].split())
    for command in COMMANDS:
        assert f"{command.name} {command.help}" in listed  # its line in `pgm-explore --help`
        assert main([command.name, "--help"]) == 0
        assert " ".join(command.description.split()) in " ".join(capsys.readouterr().out.split())
    # docs/cli.md: a section per command, in the same order, opening with its help line.
    text = (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")
    sections = re.findall(r"^## `([a-z-]+)`\n\n(.+)$", text, re.MULTILINE)
    assert sections == [(command.name, command.help) for command in COMMANDS]
    # README's map of the code names every command of the package, in the same order.
    (row,) = [
        line for line in (ROOT / "README.md").read_text(encoding="utf-8").splitlines() if "`pgm_explore/cli/`" in line
    ]
    assert re.findall(r"`([a-z]+)`", row.split("COMMANDS`", 1)[1]) == list(NAMES)
