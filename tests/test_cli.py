"""The command line: every command has --help; plugins lists the built-ins."""

from __future__ import annotations

import pytest

from bicrit.cli import build_parser, main


def test_plugins_lists_builtins(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["plugins"]) == 0
    out = capsys.readouterr().out
    assert "multiclass" in out and "bicrit" in out


@pytest.mark.parametrize(
    "command", [[], *[[c] for c in build_parser()._subparsers._group_actions[0].choices]]
)
def test_help_everywhere(command: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        main([*command, "--help"])
    assert info.value.code == 0
    assert "usage: bicrit" in capsys.readouterr().out
