"""The lane check: can each point of a plan launch on a lane?

`infx launch` finds a point's lane from its runner label: the one profile under runners/ whose
`runner-labels` declare it (infx/launch/lane.py, ``label_claims``; `--lane` overrides). A point
whose label no profile serves would fail there, on a GPU runner, after the sweep started; so the
plan asks the same question first. Such a point is **held**: it stays in the plan (its `lanes`
names its label's lane as null) but is in no shard, and each label is one located diagnostic at
the label in configs/runners.yaml, with the fix. Held points are reported, never fatal: a
repository with one lane profile gets a green plan for the points it can run.

configs/infx.yaml's `sweep.lanes` says what the repository sweeps (SWEEP_LANES_HELP). The same check
runs wherever a plan is built (`infx plan`, `infx changelog validate`, the workflows' setup), so a
held label has one severity everywhere; it sits beside the lane lookup it asks (launch/lane.py), below
the plan's builders. Reads the lane profiles, configs/infx.yaml and configs/runners.yaml; no network.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path

from ..config import DEFAULT_RUNNERS
from ..diagnostics import Diagnostic, Severity, UsageError, error
from ..points import gpu_hours, point_id
from ..settings import SETTINGS_FILE, read_settings
from ..sweepplan import LANE_EXCLUDED, LANE_MISSING, LANE_SERVED, LabelLane, LaneCheck, SweepPlan
from ..yamldoc import Document
from ..yamlio import load_yaml
from .lane import LANES_DIR, find_lane, label_claims, lane_entries

# --lane: a lane name or a runner label, never a path (a manual sweep names a lane of runners/).
LANE_OR_LABEL = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:-]*")
PROFILED = "profiled"  # sweep.lanes: only the lanes the repository has profiles for, and that is expected
SWEEP_LANES_HELP = f"`sweep: {{lanes: {PROFILED}}}` in {SETTINGS_FILE}"


@dataclass(frozen=True, kw_only=True)
class SweepLanes:
    """configs/infx.yaml's sweep.lanes: None (not set), PROFILED or lane names, and where it is written."""

    value: str | tuple[str, ...] | None = None
    doc: Document | None = None

    def where(self, *path: object) -> tuple[int, int] | None:
        return self.doc.where(("sweep", "lanes", *path)) if self.doc is not None else None

    @property
    def named(self) -> tuple[str, ...]:
        return self.value if isinstance(self.value, tuple) else ()


def read_sweep_lanes(root: Path) -> tuple[SweepLanes, list[Diagnostic]]:
    """sweep.lanes of the repository's configs/infx.yaml (checked against its schema; no file: not set)."""
    doc, problems = read_settings(root)
    if doc is None or not isinstance(doc.data, dict):
        return SweepLanes(), problems
    value = (doc.data.get("sweep") or {}).get("lanes")
    return SweepLanes(value=tuple(value) if isinstance(value, list) else value, doc=doc), []


def check_lanes(plan: SweepPlan, root: Path, lane: str | None = None) -> tuple[SweepPlan, list[Diagnostic]]:
    """The plan with its lane check (``lane``: `--lane`, the one lane every point runs on), and the
    diagnostics: one per label whose points are held; an error for a sweep.lanes that names no profile."""
    if lane is not None:
        if not LANE_OR_LABEL.fullmatch(lane) or lane.endswith((".yaml", ".yml")):
            raise UsageError(
                f"--lane {lane[:100]!r} is not a lane name or runner label",
                f"Name a lane ({LANES_DIR}/<lane>.yaml) or one of its runner-labels: letters, digits, "
                "`.`, `_`, `-`, `:`.",
            )
        name = find_lane(root, lane).stem
        return _checked(plan, lambda label: (name, LANE_SERVED), (name,)), []
    settings, problems = read_sweep_lanes(root)
    if problems:
        return plan, problems
    entries = lane_entries(root)
    profiles = {entry.name for entry in entries}
    unknown = [
        error(
            SETTINGS_FILE,
            settings.where(index),
            "settings-lane-unknown",
            f"sweep.lanes names lane {name!r}, which has no profile: there is no {LANES_DIR}/{name}.yaml",
            f"Name lanes of {LANES_DIR}/ ({', '.join(sorted(profiles)) or 'none yet'}), or write the lane's profile "
            "first (`infx init --lane NAME` writes a skeleton).",
        )
        for index, name in enumerate(settings.named)
        if name not in profiles
    ]
    if unknown:
        return plan, unknown
    claims = label_claims(entries)

    def lane_of(label: str) -> tuple[str | None, str]:
        owners = claims.get(label, [])
        if len(owners) != 1:  # none, or several (`infx lane validate` reports those; launch refuses them)
            return None, LANE_MISSING
        found = owners[0].name
        return found, LANE_EXCLUDED if settings.named and found not in settings.named else LANE_SERVED

    checked = _checked(plan, lane_of, settings.value)
    assert checked.lanes is not None
    return checked, _diagnostics(checked.lanes, settings, root, claims)


def _checked(
    plan: SweepPlan,
    lane_of: Callable[[str], tuple[str | None, str]],
    sweep_lanes: str | tuple[str, ...] | None,
) -> SweepPlan:
    """The plan with each runner label's lane (``lane_of``: label -> (lane, status)) and the held points."""
    by_label: dict[str, list[dict]] = {}
    for row in plan.rows:
        by_label.setdefault(str(row.get("runner", "")), []).append(row)
    labels = []
    for label, rows in by_label.items():
        lane, status = lane_of(label)
        labels.append(
            LabelLane.build(
                label=label,
                lane=lane,
                status=status,
                points=len(rows),
                gpu_hours=round(sum(map(gpu_hours, rows)), 1),
            )
        )
    held_labels = {item.label for item in labels if item.held}
    held = tuple(dict.fromkeys(point_id(row) for row in plan.rows if str(row.get("runner", "")) in held_labels))
    return replace(plan, lanes=LaneCheck.build(sweep_lanes=sweep_lanes, labels=tuple(labels), held=held))


def _diagnostics(lanes: LaneCheck, settings: SweepLanes, root: Path, claims: dict) -> list[Diagnostic]:
    """One diagnostic per held label: a warning when sweep.lanes is not set (the gap is news), else a
    notice (the repository said which lanes it sweeps); located at the label in configs/runners.yaml,
    or at sweep.lanes for a lane it leaves out."""
    if not lanes.held:
        return []
    runners, _ = load_yaml(root / DEFAULT_RUNNERS, display=DEFAULT_RUNNERS)
    severity = Severity.WARNING if settings.value is None else Severity.NOTICE

    def held(file: str, where: tuple[int, int] | None, rule: str, message: str, hint: str) -> Diagnostic:
        line, column = where if where else (None, None)
        return Diagnostic(file=file, line=line, column=column, rule=rule, message=message, hint=hint, severity=severity)

    found = []
    for item in lanes.labels:
        if not item.held:
            continue
        points = f"{item.points} point(s) (about {item.gpu_hours:,.1f} GPU-hours)"
        if item.status == LANE_EXCLUDED:
            found.append(
                held(
                    SETTINGS_FILE,
                    settings.where(),
                    "plan-lane-excluded",
                    f"runner label {item.label!r} is served by lane {item.lane}, which sweep.lanes leaves out: "
                    f"{points} held (planned, not dispatched)",
                    f"Add {item.lane} to sweep.lanes in {SETTINGS_FILE} to run them.",
                )
            )
            continue
        owners = claims.get(item.label, [])
        why = (
            f"{len(owners)} profiles declare it ({', '.join(entry.name for entry in owners)})"
            if owners
            else f"no {LANES_DIR}/*.yaml declares it in runner-labels"
        )
        found.append(
            held(
                DEFAULT_RUNNERS,
                runners.where(("labels", item.label)) if runners is not None else None,
                "plan-lane-missing",
                f"runner label {item.label!r} has no lane: {why}, so `infx launch` could not run its "
                f"{points}; they are held (planned, not dispatched)",
                f"Add a lane profile {LANES_DIR}/<lane>.yaml with {item.label!r} in its runner-labels (`infx init "
                f"--lane NAME` writes a skeleton), or sweep only the lanes you have profiles for: {SWEEP_LANES_HELP}."
                if not owners
                else f"Keep {item.label!r} in one profile's runner-labels (`infx lane validate` names them).",
            )
        )
    return found


HELD_WHY = {LANE_MISSING: "no lane", LANE_EXCLUDED: "left out by sweep.lanes"}  # LabelLane.status -> in words


def markdown(lanes: LaneCheck | None) -> list[str]:
    """One line for the step summary and the PR comment: the held points, counted by runner label."""
    held = [item for item in lanes.labels if item.held] if lanes is not None else []
    if not held:
        return []
    counts = ", ".join(f"`{item.label}` {item.points} ({HELD_WHY[item.status]})" for item in held)
    return [
        "",
        f"- ⏸ {sum(item.points for item in held)} point(s) held, not dispatched: {counts}. A lane profile under "
        f"`{LANES_DIR}/` serving the label runs them (`infx github rerun-failed`); `sweep.lanes` in "
        f"`{SETTINGS_FILE}` limits sweeps to the lanes the repository has.",
    ]
