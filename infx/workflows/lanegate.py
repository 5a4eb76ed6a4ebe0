"""The lane gate: from the lane checks of a run (one `infx lane check` per lane, each on its
lane's runner) to the lanes whose points must not start. A lane without a passing check
(no node up, or no check result at all) is stopped: its points would only wait in a queue.
"""

from __future__ import annotations

import json
from pathlib import Path


def read_checks(checks_dir: Path, lanes: list[str]) -> dict[str, dict]:
    """{lane label: {"up": bool, "detail": str}} for every lane of the plan.

    ``checks_dir`` holds one folder per check artifact, each with `label` (the runner label
    checked) and `check.json` (what `infx lane check --format json` printed).
    """
    found: dict[str, dict] = {}
    for folder in sorted(p for p in checks_dir.glob("*") if p.is_dir()) if checks_dir.is_dir() else []:
        try:
            label = (folder / "label").read_text(encoding="utf-8").strip()
        except OSError:
            continue
        try:
            check = json.loads((folder / "check.json").read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError):
            check = {}
        if not isinstance(check, dict):
            check = {}
        found[label] = check
    gate = {}
    for lane in lanes:
        check = found.get(lane)
        if check is None:
            gate[lane] = {"up": False, "detail": "no lane check result (its runner did not report)"}
        elif check.get("ok") is True:
            gate[lane] = {"up": True, "detail": _detail(check)}
        else:
            gate[lane] = {"up": False, "detail": _detail(check) or "the lane check failed"}
    return gate


def _detail(check: dict) -> str:
    if "usable" in check and "total" in check:
        return f"partition {check.get('partition', '?')}: {check['usable']} of {check['total']} nodes usable"
    diagnostics = check.get("diagnostics") or []
    return "; ".join(str(d.get("message", "")) for d in diagnostics if isinstance(d, dict))


def down_lanes(gate: dict[str, dict]) -> list[str]:
    return [lane for lane, state in gate.items() if not state["up"]]


def render_lines(gate: dict[str, dict], points_per_lane: dict[str, int] | None = None) -> list[str]:
    """Markdown lines for the step summary and the PR comment (empty when every lane is up)."""
    lines = []
    for lane in down_lanes(gate):
        count = (points_per_lane or {}).get(lane)
        points = f" its {count} point(s) were not started" if count is not None else " its points were not started"
        lines.append(f"- ⛔ lane `{lane}` has no node up ({gate[lane]['detail']}):{points}.")
    return lines
