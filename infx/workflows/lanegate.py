"""The lane gate: which lanes of a launching sweep have a self-hosted runner online, read through
the API by a GitHub-hosted job (run-sweep.yml's `lane-gate`), so that no job of the sweep ever
waits for a lane's own runner: a lane (a runner label of the plan) with no online runner carrying
it is stopped, and its points are skipped instead of waiting out GitHub's 24-hour queue; the
other lanes' points start at once.

Listing a repository's runners needs the Administration read permission, which no GITHUB_TOKEN
can have: the gate uses the token in RUNNERS_TOKEN (a repository secret). Without one, or when it
may not read the runners, nothing is stopped and the gate says it did not check: a lane whose
runners are offline then holds only its own points, each waiting in its own queue. A lane is
stopped only when every place its runners could be registered was read. Whether a lane's Slurm
partition has a node up, each of its points asks on its own runner (run-point.yml).

This module is the gate's rule and its lines (`judge`, `render_lines`); reading the runners through
the API is `read_gate` in infx/workflows/github/repository.py.

Effects: none (data in, data out).
"""

from __future__ import annotations

from dataclasses import dataclass

RUNNERS_TOKEN = "INFX_RUNNERS_TOKEN"
SELF_HOSTED = "self-hosted"
NOT_CHECKED = (
    f"runner availability not checked ({{why}}): a lane whose runners are all offline holds only its own "
    f"points, which GitHub cancels after 24 hours in the queue. The repository secret {RUNNERS_TOKEN} (a token "
    "with the repository's Administration: read, and for an organization's runner groups its Self-hosted "
    "runners: read) lets the gate skip them instead"
)


@dataclass(frozen=True)
class Gate:
    """Each lane's state ({lane: {"up": bool, "detail": str}}), and why nothing was checked, if so."""

    lanes: dict[str, dict]
    notice: str = ""

    @property
    def down(self) -> list[str]:
        return down_lanes(self.lanes)

    def to_json(self) -> dict:
        return {
            "lanes": self.lanes,
            "down": self.down,
            "checked": not self.notice,
            **({"notice": self.notice} if self.notice else {}),
        }


def unchecked(lanes: list[str], why: str) -> Gate:
    return Gate({lane: {"up": True, "detail": "not checked"} for lane in lanes}, NOT_CHECKED.format(why=why))


def judge(lanes: list[str], runners: tuple, complete: bool) -> Gate:
    """The gate from the runners the token could see (repocheck.Runner); ``complete``: every place a
    lane's runners could be registered was read, so a lane none of them serves is truly without one."""
    states = {}
    for lane in lanes:
        carrying = [runner for runner in runners if lane in runner.labels and SELF_HOSTED in runner.labels]
        online = [runner for runner in carrying if runner.online]
        if online:
            states[lane] = {"up": True, "detail": f"{len(online)} of {len(carrying)} runner(s) online"}
        elif not complete:
            states[lane] = {
                "up": True,
                "detail": "no runner online among those the token can see (not all could be read)",
            }
        elif carrying:
            states[lane] = {
                "up": False,
                "detail": f"no runner online: all {len(carrying)} runner(s) with the label are offline",
            }
        else:
            states[lane] = {
                "up": False,
                "detail": "no runner online: no self-hosted runner this repository can use carries the label",
            }
    return Gate(states)


def down_lanes(gate: dict[str, dict]) -> list[str]:
    return [lane for lane, state in gate.items() if not state["up"]]


def render_lines(gate: dict[str, dict], points_per_lane: dict[str, int] | None = None) -> list[str]:
    """Markdown lines for the step summary and the PR comment (empty when every lane is up)."""
    lines = []
    for lane in down_lanes(gate):
        count = (points_per_lane or {}).get(lane)
        points = f" its {count} point(s) were not started" if count is not None else " its points were not started"
        lines.append(f"- ⛔ lane `{lane}`: {gate[lane]['detail']}:{points}.")
    return lines
