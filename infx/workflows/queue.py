"""The queue check: does every point of a sweep start before GitHub cancels it for waiting?

GitHub: "Each job for self-hosted runners can be queued for a maximum of 24 hours. If a
self-hosted runner does not start executing the job within this limit, the job is terminated and
fails to complete." A launching sweep queues all its points at once; a lane's runners take them
one at a time each, in plan order (the canary first), each point holding its runner for its
expected hours. A point that would still be waiting 24 hours after the sweep queued it is lost,
roughly when points × hours passes the lane's runners × 24 hours.

So the plan queues per lane only the points that start within the limit, and **holds back** the
rest: they stay in the plan (a rerun of the sweep's run, `infx github rerun-failed`, runs every
point without a result, these among them) but are not handed to the fan-out, and the plan says how
many runners would run them all at once.

A lane here is the set of runner labels that share runners: `configs/runners.yaml` lists each
label's self-hosted runners, and labels with a runner in common compete for the same queue. A
point's expected hours are its benchmark time (duration × concurrency runs; 1,800 s per
fixed-seq-len run, as the GPU-hours estimate counts) plus the `queue.point-overhead-minutes` of the
lane profile that declares its label (Slurm's wait, the container, loading the model; 0 without one).
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass
from pathlib import Path

from ..config import DEFAULT_RUNNERS
from ..diagnostics import warning
from ..launch.lane import lane_entries
from ..points import benchmark_hours, point_id
from ..sweepplan import QueueCheck, QueueLane
from ..yamlio import load_yaml

QUEUE_LIMIT_HOURS = 24.0


@dataclass(frozen=True, kw_only=True)
class LaneQueue:
    """One lane's share of a sweep: its labels, runners, each point's expected hours (plan order)
    and which points start within the queue limit."""

    labels: tuple[str, ...]
    runners: int
    points: tuple[str, ...]
    hours: tuple[float, ...]

    @property
    def queued(self) -> tuple[str, ...]:
        return self.points[: starting(self.hours, self.runners)]

    @property
    def held(self) -> tuple[str, ...]:
        return self.points[starting(self.hours, self.runners) :]

    @property
    def runners_needed(self) -> int:
        """The fewest runners that start every point within the limit."""
        low, high = 1, max(1, len(self.hours))
        while low < high:
            middle = (low + high) // 2
            if starting(self.hours, middle) == len(self.hours):
                high = middle
            else:
                low = middle + 1
        return low

    def summary(self) -> QueueLane:
        """The lane as the plan keeps it: counts, and the ids of the held points."""
        return QueueLane.build(
            labels=self.labels,
            runners=self.runners,
            points=len(self.points),
            runner_hours=round(sum(self.hours), 1),
            queued=len(self.queued),
            held=self.held,
            runners_needed=self.runners_needed,
        )


def starting(hours: tuple[float, ...], runners: int) -> int:
    """How many of the points (in order) a runner starts within QUEUE_LIMIT_HOURS, when ``runners``
    runners take the queued points in order, each as soon as it is free (start times never decrease,
    so the points that start are a prefix)."""
    free = [0.0] * max(runners, 0)
    for index, needed in enumerate(hours):
        if not free:
            return 0
        start = heapq.heappop(free)
        if start >= QUEUE_LIMIT_HOURS:
            return index
        heapq.heappush(free, start + needed)
    return len(hours)


def lanes_of(labels: dict[str, list[str]]) -> dict[str, tuple[str, ...]]:
    """label -> every label it shares a runner with (itself included), transitively."""
    parent = {label: label for label in labels}

    def root(label: str) -> str:
        while parent[label] != label:
            parent[label] = parent[parent[label]]
            label = parent[label]
        return label

    owner: dict[str, str] = {}
    for label, names in labels.items():
        for name in names:
            if name in owner:
                parent[root(label)] = root(owner[name])
            else:
                owner[name] = label
    groups: dict[str, list[str]] = {}
    for label in labels:
        groups.setdefault(root(label), []).append(label)
    return {label: tuple(sorted(groups[root(label)])) for label in labels}


def check(rows: list[dict], labels: dict[str, list[str]], overhead_hours: dict[str, float]) -> list[LaneQueue]:
    """The queue of every lane the rows (in launch order) use; rows of an undeclared label are left
    out (`infx config validate` refuses them)."""
    lanes = lanes_of(labels)
    runners = {lane: len({name for label in lane for name in labels[label]}) for lane in set(lanes.values())}
    members: dict[tuple[str, ...], list[tuple[str, float]]] = {}
    for row in rows:
        runner = row.get("runner")
        lane = lanes.get(runner) if isinstance(runner, str) else None
        if lane is not None:
            members.setdefault(lane, []).append(
                (point_id(row), benchmark_hours(row) + overhead_hours.get(row["runner"], 0.0))
            )
    return [
        LaneQueue(
            labels=lane,
            runners=runners[lane],
            points=tuple(pid for pid, _ in points),
            hours=tuple(hours for _, hours in points),
        )
        for lane, points in members.items()
    ]


def repository_queues(rows: list[dict], root: Path) -> list[LaneQueue]:
    """check() with the repository's configs/runners.yaml and its lane profiles' overheads."""
    runners, problems = load_yaml(root / DEFAULT_RUNNERS, display=DEFAULT_RUNNERS)
    declared = runners.data.get("labels") if runners is not None and isinstance(runners.data, dict) else None
    labels = {
        label: [str(name) for name in names] for label, names in (declared or {}).items() if isinstance(names, list)
    }
    # A profile counts once it is valid (`infx lane validate` refuses the others, and so does the lane gate).
    overhead = {
        label: lane.queue.point_overhead_minutes / 60
        for lane in filter(None, (entry.typed() for entry in lane_entries(root)))
        for label in lane.runner_labels
    }
    return check(rows, labels, overhead)


def queue_check(queues: list[LaneQueue]) -> QueueCheck:
    """The check as the plan keeps it (`queue`): each lane's summary, and every held point in plan order."""
    return QueueCheck.build(
        limit_hours=QUEUE_LIMIT_HOURS,
        lanes=tuple(lane.summary() for lane in queues),
        held=tuple(pid for lane in queues for pid in lane.held),
    )


def warnings(queues: list[LaneQueue], root: Path) -> list:
    """One located warning (at the lane's first label in configs/runners.yaml) per lane that holds points back."""
    doc, _ = load_yaml(root / DEFAULT_RUNNERS, display=DEFAULT_RUNNERS)
    found = []
    for lane in queues:
        if not lane.held:
            continue
        where = doc.where(("labels", lane.labels[0])) if doc is not None else None
        found.append(
            warning(
                DEFAULT_RUNNERS,
                where,
                "plan-queue-limit",
                f"lane {', '.join(lane.labels)}: {len(lane.points)} points need about {sum(lane.hours):,.1f} "
                f"runner-hours on its {lane.runners} runner(s); GitHub cancels a self-hosted job that waits "
                f"{QUEUE_LIMIT_HOURS:.0f} h for a runner, so {len(lane.held)} point(s) are held back (planned, not "
                f"queued); {lane.runners_needed} runners would start them all",
                f"Register {lane.runners_needed} runners for these labels (and list them in {DEFAULT_RUNNERS}), or run "
                "the held points after this sweep: `infx github rerun-failed --run-id <this run>` runs every point "
                "without a result. A point's expected hours: its benchmark time plus the lane profile's "
                "queue.point-overhead-minutes.",
            )
        )
    return found


def markdown(queue: QueueCheck | None) -> list[str]:
    """Lines for the step summary and the PR comment: the lanes that hold points back."""
    if queue is None:
        return []
    lines = [
        f"- ⏸ lane `{', '.join(lane.labels)}`: {len(lane.held)} of {lane.points} points held back "
        f"(about {lane.runner_hours:,.1f} runner-hours on {lane.runners} runner(s); GitHub cancels a job that "
        f"waits {QUEUE_LIMIT_HOURS:.0f} h; {lane.runners_needed} runners would start them all). "
        "They run with `infx github rerun-failed` after this sweep."
        for lane in queue.lanes
        if lane.held
    ]
    return ["", "#### Queues", "", *lines] if lines else []
