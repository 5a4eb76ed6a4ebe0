"""The options several commands share are declared once (infx/commands/options.py) and spelled
one way: the PR's number is --pr-number everywhere, with the old --pr still accepted but not shown."""

from __future__ import annotations

import re
from pathlib import Path

import click
import pytest

from infx.cli import COMMANDS, cli

COMMANDS_DIR = Path(__file__).resolve().parents[2] / "infx" / "commands"
# matrix's own --evals-only and --all-evals select rows, a different meaning from the run-wide modifiers
SHARED = ("--repo", "--pr-number", "--pr", "--format", "--changelog", "--trim-conc")


def every_command() -> list[tuple[str, click.Command]]:
    found = []

    def walk(command: click.Command, path: str) -> None:
        found.append((path, command))
        if isinstance(command, click.Group):
            ctx = click.Context(command)
            for name in command.list_commands(ctx):
                sub = command.get_command(ctx, name)
                assert sub is not None
                walk(sub, f"{path} {name}")

    ctx = click.Context(cli)
    for name in COMMANDS:
        command = cli.get_command(ctx, name)
        assert command is not None
        walk(command, name)
    return found


def help_of(command: click.Command, path: str) -> str:
    return command.get_help(click.Context(command, info_name=path, terminal_width=200, max_content_width=200))


def test_the_shared_options_are_declared_only_in_options_py():
    declared = {
        path.name: [name for name in SHARED if re.search(rf"click\.option\(\s*\"{re.escape(name)}\"", path.read_text())]
        for path in COMMANDS_DIR.glob("*.py")
        if path.name != "options.py"
    }
    assert {name: found for name, found in declared.items() if found} == {}
    assert all(f'"{name}"' in (COMMANDS_DIR / "options.py").read_text() for name in SHARED)


def test_the_pr_number_is_spelled_one_way_in_every_help():
    with_pr = []
    for path, command in every_command():
        params = {param.name: param for param in command.params}
        if "pr_number" in params:
            with_pr.append(path)
            assert params["pr_number"].opts == ["--pr-number", "--pr"], path
            text = help_of(command, path)
            assert "--pr-number" in text and not re.search(r"--pr\b(?!-)", text), path
    assert sorted(with_pr) == [
        "changelog fix",
        "changelog validate",
        "github report",
        "github rerun-failed",
        "plan",
        "reuse select",
    ]


@pytest.mark.parametrize("spelling", ["--pr-number", "--pr"])
def test_both_spellings_give_the_same_value(spelling: str):
    command = cli.get_command(click.Context(cli), "github")
    assert isinstance(command, click.Group)
    report = command.get_command(click.Context(command), "report")
    assert report is not None
    ctx = report.make_context("report", [spelling, "7", "--plan", "plan.json"])
    assert ctx.params["pr_number"] == 7


def test_a_missing_or_bad_pr_number_names_the_current_spelling():
    command = cli.get_command(click.Context(cli), "github")
    assert isinstance(command, click.Group)
    report = command.get_command(click.Context(command), "report")
    assert report is not None
    with pytest.raises(click.MissingParameter) as missing:
        report.make_context("report", ["--plan", "plan.json"])
    assert "'--pr-number'" in missing.value.format_message() and "'--pr'" not in missing.value.format_message()
    with pytest.raises(click.BadParameter) as bad:
        report.make_context("report", ["--pr", "0", "--plan", "plan.json"])
    assert "'--pr-number'" in bad.value.format_message() and "'--pr'" not in bad.value.format_message()
