"""The command-line options several commands share, each declared once here: the same spelling,
value type, destination and help wherever it appears; and the two pieces that let a command declare
its option set once (``option_set``) and build its request from it (``built_from``).

An option's destination is the name of the request field it fills, so a request is built by keyword
from what the command line gave, and a new option that fills a field needs no other line."""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any, TypeVar

import click

from .. import shapes

FORMATS = ("text", "json", "github")
PLAN_HELP = "The plan: JSON from `infx plan --format json` or `infx matrix --format json`."
REPO_DEFAULT = "default: $GITHUB_REPOSITORY, then configs/infx.yaml"  # the one rule: changelog.policy.resolve_slug


Built = TypeVar("Built")


def option_set(*options: Callable) -> Callable:
    """One decorator for ``options`` (click options, or other option sets), shown in --help in the order given."""

    def apply(command: Callable) -> Callable:
        for option in reversed(options):
            command = option(command)
        return command

    return apply


def built_from(build: Callable[..., Built], given: Mapping[str, Any], **computed: Any) -> Built:
    """``build`` (a request type, or a function making one) called by keyword: ``computed``, and for
    each of its other parameters the option of that destination in ``given``, as given."""
    names = inspect.signature(build).parameters.keys() - computed.keys()
    return build(**{name: value for name, value in given.items() if name in names}, **computed)


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


# --runners and --components: the files besides the masters that `config validate` and `matrix` read.
config_inputs = option_set(
    click.option("--runners", type=click.Path(path_type=Path), help="runners.yaml (default: configs/runners.yaml)."),
    click.option(
        "--components", type=click.Path(path_type=Path), help="components.yaml (default: configs/components.yaml)."
    ),
)

changelog_option = click.option("--changelog", metavar="PATH", help="The changelog (default: perf-changelog.yaml).")

# --evals-only, --all-evals, --trim-conc: the run-wide modifiers a PR's labels also set
# (infx.changelog.plan.PlanOptions.of reads them).
run_modifier_options = option_set(
    click.option("--evals-only", is_flag=True, help="Run-wide modifier (PR label): evals only."),
    click.option("--all-evals", is_flag=True, help="Run-wide modifier (PR label): every eval point."),
    click.option(
        "--trim-conc", is_flag=True, help="Run-wide modifier (the sweep-enabled label): lowest concurrency per point."
    ),
)


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
