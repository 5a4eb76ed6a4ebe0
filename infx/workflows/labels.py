"""The one table from a run's trigger (its event, the PR's labels, the head commit's
`[skip-sweep]`) to its run mode (infx.runmode.Mode): whether points launch, and how the sweep is cut
and ordered.

`infx plan` applies it; docs/workflows.md renders it (tests check the two agree). The
labels are the reference project's, so its users keep their habits.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from ..diagnostics import Diagnostic, error
from ..evalsuite import EvalMode
from ..runmode import Mode

EVENTS = ("pull_request", "push", "workflow_dispatch")
SKIP_MARKER = "[skip-sweep]"


@dataclass(frozen=True, kw_only=True)
class Trigger:
    kind: str  # event | primary-label | modifier | commit-marker
    name: str
    sets: dict
    meaning: str


# Applied top to bottom: the event's row, then the PR's one primary label, the modifier
# labels, and last the head commit's marker (which can only take the launch away).
TABLE: tuple[Trigger, ...] = (
    Trigger(
        kind="event",
        name="pull_request",
        sets={"dispatch": False},
        meaning="A PR always plans and reports its plan; it launches only with a primary label.",
    ),
    Trigger(
        kind="event",
        name="push",
        sets={"dispatch": True},
        meaning="A push to main sweeps every planned point (the changelog is gated under the main-branch policy "
        "first).",
    ),
    Trigger(
        kind="event",
        name="workflow_dispatch",
        sets={"dispatch": True},
        meaning="A manual run sweeps the rows its inputs select (or the points of a rerun).",
    ),
    Trigger(
        kind="primary-label",
        name="sweep-enabled",
        sets={"dispatch": True, "trim_conc": True},
        meaning="The trimmed sweep: single-node rows keep the lowest concurrency of each topology, multinode rows the "
        "lowest of their list.",
    ),
    Trigger(
        kind="primary-label",
        name="full-sweep-enabled",
        sets={"dispatch": True, "canary": True},
        meaning="Every point; one canary point (the fewest GPU-hours) runs first and the rest start only when it "
        "succeeded.",
    ),
    Trigger(
        kind="primary-label",
        name="non-canary-full-sweep-enabled",
        sets={"dispatch": True},
        meaning="Every point, all started at once.",
    ),
    Trigger(
        kind="primary-label",
        name="full-sweep-fail-fast",
        sets={"dispatch": True, "canary": True, "fail_fast": True},
        meaning="Every point after a canary; the first failing point cancels the rest (`strategy.fail-fast`).",
    ),
    Trigger(
        kind="primary-label",
        name="full-sweep-fail-fast-no-canary",
        sets={"dispatch": True, "fail_fast": True},
        meaning="Every point at once; the first failing point cancels the rest.",
    ),
    Trigger(
        kind="modifier",
        name="evals-only",
        sets={"evals_only": True},
        meaning="Only the eval points of the planned configs (no throughput points).",
    ),
    Trigger(
        kind="modifier",
        name="all-evals",
        sets={"all_evals": True},
        meaning="Throughput points as usual, and every eval configuration instead of the default eval subset.",
    ),
    Trigger(
        kind="modifier",
        name="agentx-fast",
        sets={"agentx_fast": True},
        meaning="Agentic throughput points only: one warm-up request per lane and a 1,200 s profile (a preflight, "
        "not a canonical result); fixed-seq-len and eval points are unchanged.",
    ),
    Trigger(
        kind="modifier",
        name="no-reuse",
        sets={"reuse": False},
        meaning="Run every planned point, even one whose result key already has a valid result (docs/workflows.md, "
        "Reuse).",
    ),
    Trigger(
        kind="commit-marker",
        name=SKIP_MARKER,
        sets={"dispatch": False},
        meaning="In the PR head commit's message: plan and report, launch nothing.",
    ),
)

PRIMARY_LABELS = tuple(t.name for t in TABLE if t.kind == "primary-label")
MODIFIER_LABELS = tuple(t.name for t in TABLE if t.kind == "modifier")
LABELS = PRIMARY_LABELS + MODIFIER_LABELS  # the labels that change a run (others are ignored)
TABLE_FILE = "<PR labels>"


def _row(kind: str, name: str) -> Trigger:
    return next(t for t in TABLE if t.kind == kind and t.name == name)


def resolve_mode(event: str, labels: list[str], head_message: str = "") -> tuple[Mode, list[Diagnostic]]:
    """The run mode for ``event`` with the PR's ``labels`` and head commit message."""
    applied = [_row("event", event)]
    primaries = [name for name in PRIMARY_LABELS if name in labels]
    if len(primaries) > 1:
        return Mode(), [
            error(
                TABLE_FILE,
                None,
                "plan-labels-conflict",
                f"the PR carries {len(primaries)} primary sweep labels: "
                + " and ".join(f"'{n}'" for n in primaries)
                + "; they ask for different sweeps",
                "Keep exactly one of: " + ", ".join(PRIMARY_LABELS) + ".",
            )
        ]
    applied += [_row("primary-label", name) for name in primaries]
    applied += [_row("modifier", name) for name in MODIFIER_LABELS if name in labels]
    if event == "pull_request" and SKIP_MARKER in (head_message or ""):
        applied.append(_row("commit-marker", SKIP_MARKER))
    mode = Mode()
    for trigger in applied:
        mode = replace(mode, **trigger.sets)
    return replace(
        mode, primary_label=primaries[0] if primaries else None, why=tuple(f"{t.kind} {t.name}" for t in applied)
    ), []


def describe(mode: Mode) -> str:
    """One Markdown sentence for the step summary and the PR comment."""
    if not mode.dispatch:
        if any(w.startswith("commit-marker") for w in mode.why):
            return f"**Launch: no** — the head commit says `{SKIP_MARKER}`; the plan is reported only."
        return (
            "**Launch: no** — add one of the labels "
            + ", ".join(f"`{n}`" for n in PRIMARY_LABELS)
            + " to run the points."
        )
    parts = [
        "trimmed to the lowest concurrency" if mode.trim_conc else "every point",
        "a canary point first" if mode.canary else "all points at once",
    ]
    if mode.fail_fast:
        parts.append("fail-fast")
    if mode.evals.evals_only:
        parts.append(
            {
                EvalMode.ONLY | EvalMode.ALL: "every eval point only",
                EvalMode.ONLY: "evals only",
                EvalMode.ALL: "every eval point",
            }[mode.evals]
        )
    if mode.agentx_fast:
        parts.append("AgentX fast (agentic points: one warm-up request per lane, 1,200 s profile)")
    if not mode.reuse:
        parts.append("no reuse of earlier results")
    source = f"label `{mode.primary_label}`" if mode.primary_label else "this event"
    return f"**Launch: yes** ({source}): " + ", ".join(parts) + "."


MODE_COLUMNS = ("dispatch", "trim_conc", "canary", "fail_fast", "evals_only", "all_evals", "agentx_fast", "reuse")


def render_table() -> str:
    """The table as Markdown (docs/workflows.md carries exactly this between its markers)."""
    names = {
        "event": "event",
        "primary-label": "PR label",
        "modifier": "PR label (modifier)",
        "commit-marker": "head commit",
    }
    header = ["trigger", "kind"] + [c.replace("_", "-") for c in MODE_COLUMNS] + ["what it does"]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    for trigger in TABLE:
        cells = [f"`{trigger.name}`", names[trigger.kind]]
        cells += [("**yes**" if trigger.sets[c] else "no") if c in trigger.sets else "·" for c in MODE_COLUMNS]
        lines.append("| " + " | ".join(cells + [trigger.meaning]) + " |")
    return "\n".join(lines) + "\n"
