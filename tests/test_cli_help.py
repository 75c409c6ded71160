"""Every command's ``--help`` is part of its contract: other tools and people's scripts read it.

The expected texts in tests/data/cli-help/ were written by the command as it was before the
``cli`` module became a package, at a fixed width of 80 columns (argparse wraps to the terminal).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from pgm_explore.cli import main

EXPECTED = Path(__file__).parent / "data" / "cli-help"
COMMANDS = ("validate", "check", "table", "dialogue", "probe", "lab", "app")


@pytest.mark.parametrize("command", ("pgm-explore", *COMMANDS))
def test_help_text_is_unchanged(
    command: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "80")  # argparse wraps to the terminal's width
    argv = ["--help"] if command == "pgm-explore" else [command, "--help"]
    assert main(argv) == 0
    assert capsys.readouterr().out == (EXPECTED / f"{command}.txt").read_text(encoding="utf-8")


def test_every_command_has_its_expected_help() -> None:
    from pgm_explore.cli import build_parser

    parser = build_parser()
    subparsers = next(a for a in parser._actions if a.dest == "command")  # argparse lists subcommands nowhere public
    assert sorted(subparsers.choices) == sorted(COMMANDS)
