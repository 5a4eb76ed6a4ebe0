"""How infx finds again what its own jobs left on GitHub: the sweep's plan artifact, the PR's report
comment and the launch id in a dispatched run's title. The jobs that write these (run-sweep.yml,
report.py, rerun.py) and the client that looks for them (infx/workflows/github/) share these names.

Effects: none.
"""

from __future__ import annotations

PLAN_ARTIFACT = "sweep-plan"  # uploaded by run-sweep.yml's setup job: plan.json + infx-shards/
PLAN_FILE = "plan.json"
RESULTS_ARTIFACT = "sweep-results"  # results.json, the comparison, charts.md and the PNG charts (run-sweep.yml)
MARKER = "<!-- infx:sweep-report -->"  # finds our comment again; invisible when rendered


def launch_marker(launch: str) -> str:
    """How a dispatched run shows its launch id in its title (run-sweep.yml's run-name)."""
    return f"[launch {launch}]"
