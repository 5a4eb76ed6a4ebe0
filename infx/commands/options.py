"""The command-line options several commands share, each declared once here: the same spelling,
value type, destination and help wherever it appears."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path

import click

from .. import shapes

FORMATS = ("text", "json", "github")
PLAN_HELP = "The plan: JSON from `infx plan --format json` or `infx matrix --format json`."
REPO_DEFAULT = "default: $GITHUB_REPOSITORY, then configs/infx.yaml"  # the one rule: changelog.policy.resolve_slug


class HiddenAliasOption(click.Option):
    """An option with old spellings that still work but are not shown: ``--help`` and error
    messages name only the current spelling."""

    def __init__(self, *args, hidden_aliases: Iterable[str] = (), **kwargs):
        super().__init__(*args, **kwargs)
        self.hidden_aliases = frozenset(hidden_aliases)

    def shown_opts(self) -> list[str]:
        return [name for name in self.opts if name not in self.hidden_aliases]

    def get_help_record(self, ctx: click.Context) -> tuple[str, str] | None:
        every = self.opts
        self.opts = self.shown_opts()
        try:
            return super().get_help_record(ctx)
        finally:
            self.opts = every

    def get_error_hint(self, ctx: click.Context | None) -> str:
        return " / ".join(f"'{name}'" for name in self.shown_opts())


def repo_option(purpose: str = "") -> Callable:
    """--repo OWNER/NAME into ``repo_slug``; ``purpose`` (e.g. " whose PR links are canonical") says what for."""
    return click.option("--repo", "repo_slug", metavar="OWNER/NAME", help=f"The repository{purpose} ({REPO_DEFAULT}).")


def pr_number_option(help: str, required: bool = False) -> Callable:
    """--pr-number N into ``pr_number`` (the reference's spelling); ``--pr`` is its deprecated alias."""
    return click.option(
        "--pr-number",
        "--pr",
        "pr_number",
        cls=HiddenAliasOption,
        hidden_aliases=("--pr",),
        type=click.IntRange(min=1),
        required=required,
        help=help,
    )


def format_option(
    choices: Iterable[str] = FORMATS, default: str | None = "text", help: str = "Output format."
) -> Callable:
    return click.option(
        "--format",
        "fmt",
        type=click.Choice(list(choices)),
        default=default,
        show_default=default is not None,
        help=help,
    )


def plan_option(help: str = PLAN_HELP, required: bool = True) -> Callable:
    """--plan PATH into ``plan_path``: a plan file `infx plan` or `infx matrix` wrote."""
    return click.option("--plan", "plan_path", type=click.Path(path_type=Path), required=required, help=help)


def config_inputs(command: Callable) -> Callable:
    """--runners and --components: the files besides the masters that `config validate` and `matrix` read."""
    for option in reversed(
        (
            click.option(
                "--runners",
                "runners_path",
                type=click.Path(path_type=Path),
                help="runners.yaml (default: configs/runners.yaml).",
            ),
            click.option(
                "--components",
                "components_path",
                type=click.Path(path_type=Path),
                help="components.yaml (default: configs/components.yaml).",
            ),
        )
    ):
        command = option(command)
    return command


changelog_option = click.option(
    "--changelog", "changelog_file", metavar="PATH", help="The changelog (default: perf-changelog.yaml)."
)


def run_modifier_options(command: Callable) -> Callable:
    """--evals-only, --all-evals, --trim-conc: the run-wide modifiers a PR's labels also set."""
    for option in reversed(
        (
            click.option("--evals-only", is_flag=True, help="Run-wide modifier (PR label): evals only."),
            click.option("--all-evals", is_flag=True, help="Run-wide modifier (PR label): every eval point."),
            click.option(
                "--trim-conc",
                is_flag=True,
                help="Run-wide modifier (the sweep-enabled label): lowest concurrency per point.",
            ),
        )
    ):
        command = option(command)
    return command


def _git_ref(ctx: click.Context, param: click.Parameter, value: str | None) -> str | None:
    """A ref's shape is checked on the command line, before any file is read (git.resolve checks it again)."""
    if value is not None and shapes.problem("git-ref", value, "the git ref"):
        raise click.BadParameter(f"{value[:200]!r} is not a usable git ref: pass {shapes.accepted('git-ref')}")
    return value


def base_ref_option(command: Callable) -> Callable:
    """--base-ref REF into ``base_ref``: findings the base already had (the merge-base of REF and HEAD)
    are warnings saying so (infx.diagnostics.demote_on_base); what the change introduced stays an error."""
    return click.option(
        "--base-ref",
        "base_ref",
        metavar="REF",
        callback=_git_ref,
        help="Judge against this base (a PR's base branch or commit): a finding it already has is a warning.",
    )(command)
