"""The whole gate: refs -> revisions -> diff -> keys -> coverage -> plan, every problem at once.

This is the only module of the changelog package with effects (git reads, a temporary
copy of the configs at a ref); everything it calls is pure.
"""

from __future__ import annotations

from contextlib import ExitStack
from dataclasses import dataclass, field, replace
from pathlib import Path

from .. import git
from ..config.atref import ConfigsAtRef, relabel
from ..diagnostics import ON_BASE, ON_BASE_DEMOTED, Diagnostic, Report, Severity, UsageError, demote_on_base
from ..launch.lane import LANES_DIR
from ..recipes import RECIPES_DIR
from ..reporoot import repository_root
from ..sweepplan import ChangelogMetadata, SweepPlan
from . import CHANGELOG, changelog_path
from .diff import ChangelogDiff, diff_changelog
from .keys import Resolution, changed_keys, coverage, resolve
from .plan import PlanOptions, plan_sweep
from .policy import canonical_link, resolve_slug

CONFIG_PATHS = ["configs", RECIPES_DIR, LANES_DIR]  # LANES_DIR: the lane check reads the head's profiles


@dataclass(kw_only=True)
class GateResult:
    report: Report
    change: ChangelogDiff | None = None
    resolution: Resolution | None = None
    plan: SweepPlan | None = None
    base_commit: str = ""
    head_commit: str = ""


SWEPT = f" ({ON_BASE}, but this change sweeps the config: fix it here)"


def swept_problems(diagnostics: list[Diagnostic], keys: list[str]) -> list[Diagnostic]:
    """An older problem of a config the change sweeps is an error again: its points must run."""
    prefixes = tuple(f"{key}: " for key in keys)

    def swept(d: Diagnostic) -> bool:
        return d.message.endswith(ON_BASE_DEMOTED) and bool(prefixes) and d.message.startswith(prefixes)

    return [
        replace(d, message=d.message.removesuffix(ON_BASE_DEMOTED) + SWEPT, severity=Severity.ERROR) if swept(d) else d
        for d in diagnostics
    ]


def nothing_to_sweep(unchanged: Diagnostic) -> Diagnostic:
    """A PR that leaves the changelog alone and adds or changes no master key asks for no sweep:
    deleted or deprecated keys, a runner node in runners.yaml. It passes with this notice."""
    return Diagnostic(
        file=unchanged.file,
        line=None,
        column=None,
        rule="changelog-nothing-to-sweep",
        message="the changelog is unchanged and this change adds or modifies no master-config key "
        "(deleted keys, deprecations and runners.yaml changes ask for no sweep): nothing will be swept",
        hint="To benchmark something, change its master config and append an entry naming its key.",
        severity=Severity.NOTICE,
    )


def run_gate(
    repo: Path,
    base_ref: str,
    head_ref: str,
    *,
    slug: str,
    pr_number: int | None = None,
    changelog: str = CHANGELOG,
    allow_removal: bool = False,
    plan_options=None,
    with_plan: bool = True,
) -> GateResult:
    """Validate the changelog change base..head (merge-base on PR runs) and, if asked, plan it.

    ``repo`` is the repository's top-level folder (``git.toplevel``).
    """
    head = git.resolve(repo, head_ref)
    base = git.resolve(repo, base_ref)
    if pr_number is not None:
        base = git.merge_base(repo, base, head)
    report = Report()
    result = GateResult(report=report, base_commit=base, head_commit=head)
    head_raw = git.read_file(repo, head, changelog)
    if head_raw is None:
        raise UsageError(f"{changelog} does not exist at {head_ref}", "Pass --changelog with the changelog's path.")
    base_raw = git.read_file(repo, base, changelog)
    change = diff_changelog(
        base_raw, head_raw, file=changelog, slug=slug, pr_number=pr_number, allow_removal=allow_removal
    )
    result.change = change
    report.extend(change.diagnostics)

    with ExitStack() as stack:
        configs = ConfigsAtRef(repo, stack, CONFIG_PATHS)
        head_set, head_report = configs.load(head, keep_invalid=True)
        head_problems = head_report.diagnostics
        if any(d.severity is not Severity.NOTICE for d in head_problems):  # judged against the base's (one rule)
            base_problems = configs.load(base, keep_invalid=True)[1].diagnostics
            head_problems = demote_on_base(head_problems, configs.roots[head], base_problems, configs.roots[base])
        report.extend(relabel(head_problems, configs.roots[head], repo, head))
        if head_set is None or any(d.is_error for d in head_problems):
            return result
        same_masters = configs.same_masters(base, head)
        if same_masters:
            base_entries = head_set.raw_entries
        else:
            base_set, _ = configs.load(base, validate=False)
            base_entries = base_set.raw_entries if base_set else {}
        head_keys = list(head_set.entries)

        resolution = resolve(
            change.added, head_keys, list(base_entries), changelog, lambda entry, n: entry.key_positions[n]
        )
        result.resolution = resolution
        report.extend(resolution.diagnostics)
        report.diagnostics = swept_problems(report.diagnostics, resolution.keys)
        swept_invalid = any(d.message.endswith(SWEPT) for d in report.diagnostics)  # its rows cannot be built
        if change.mode == "pr":
            changed = [] if same_masters else changed_keys(base_entries, head_set.raw_entries)
            report.extend(coverage(changed, change.added, changelog))
            if not changed:
                report.diagnostics = [
                    nothing_to_sweep(d) if d.rule == "changelog-unchanged" else d for d in report.diagnostics
                ]
        if with_plan and not swept_invalid:  # even when other checks failed: "the plan builds" is reported with them
            options = plan_options or PlanOptions()
            plan, problems = plan_sweep(
                head_set,
                change.added,
                resolution,
                options,
                base_loader=lambda: configs.load(base, keep_invalid=True)[0],
                change=ChangelogMetadata.build(
                    base_ref=base_ref,
                    head_ref=head_ref,
                    base=base,
                    head=head,
                    pr_number=pr_number,
                    change_kind=change.mode,
                    pr_link=canonical_link(slug, pr_number) if pr_number else None,
                    removed=[{"position": i, "entry": d} for i, d in change.removed],
                    deleted_keys=resolution.deleted,
                ),
                unnamed_checked=change.mode == "pr",
            )
            report.extend(problems)
            result.plan = plan
    return result


@dataclass(frozen=True, kw_only=True)
class GateRequest:
    """`infx changelog validate`: the change base..head of the repository the working folder is in."""

    base_ref: str
    head_ref: str
    pr_number: int | None = None  # a PR run (placeholders allowed); None: a push run
    repo_slug: str | None = None  # whose PR links are canonical (None: changelog.policy.resolve_slug's default)
    changelog: str | None = None  # as given (None: perf-changelog.yaml); must be inside the repository
    allow_removal: bool = False
    plan_options: PlanOptions = field(default_factory=PlanOptions)


def validate_changelog(request: GateRequest, cwd: Path | None = None) -> GateResult:
    """The whole gate for the repository around ``cwd`` (default: the working folder; infx.reporoot's rule)."""
    repo = git.toplevel(repository_root(start=cwd))
    slug, _ = resolve_slug(request.repo_slug, repo)
    return run_gate(
        repo,
        request.base_ref,
        request.head_ref,
        slug=slug,
        pr_number=request.pr_number,
        changelog=changelog_path(repo, request.changelog),
        allow_removal=request.allow_removal,
        plan_options=request.plan_options,
    )
