"""The sticky PR comment: the plan (points per bucket, GPU-hours) and, after a sweep, each
point's outcome. Pure: plan data and outcomes in, one Markdown body out, always under
GitHub's comment limit (the longest tables are cut first, with a count of what was cut).
"""

from __future__ import annotations

import re
from collections import Counter

from ..launch.lanecheck import markdown as held_lines
from ..points import gpu_hours, point_id
from ..runmode import Mode
from ..sweepplan import LaneCheck, QueueCheck, ReuseSummary
from .actions import SUMMARY_LIMIT_BYTES as SUMMARY_LIMIT  # GitHub drops a larger step summary (bytes)
from .actions import markdown_cell
from .labels import describe
from .lanegate import render_lines
from .markers import MARKER, RESULTS_ARTIFACT
from .queue import markdown

COMMENT_LIMIT = 65_536  # GitHub rejects longer comment bodies (characters)
COMMENT_BUDGET = COMMENT_LIMIT - 1_024  # room for the truncation notes
SUMMARY_BUDGET = SUMMARY_LIMIT // 4 - 1_024  # cut by characters here: one may take up to 4 bytes in UTF-8
OUTCOME_OK, OUTCOME_FAILED, OUTCOME_MISSING = "ok", "failed", "missing"
OUTCOME_LABELS = {OUTCOME_FAILED: "❌ failed", OUTCOME_MISSING: "⏳ no result", OUTCOME_OK: "✅ ok"}


WHY_LIMIT = 300  # characters of a reason shown in a table cell


def clip(text: str) -> str:
    """A reason cut to WHY_LIMIT characters, with an ellipsis where it was cut."""
    return text if len(text) <= WHY_LIMIT else text[: WHY_LIMIT - 1] + "…"


def _cell(value) -> str:
    if isinstance(value, list):
        value = "x".join(str(v) for v in value)
    return markdown_cell(str(value if value is not None else ""))


class Table:
    def __init__(
        self, title: str, header: list[str], rows: list, note: str = "", keep: int = 0
    ):  # rows of cells (_cell), or Blocks' blocks; the first `keep` rows are never cut
        self.title, self.header, self.rows, self.note = title, header, rows, note
        self.shown, self.keep = len(rows), min(keep, len(rows))

    def render(self) -> str:
        lines = [self.title, ""] + ([self.note, ""] if self.note else [])
        lines += ["| " + " | ".join(self.header) + " |", "|" + "---|" * len(self.header)]
        lines += ["| " + " | ".join(_cell(c) for c in row) + " |" for row in self.rows[: self.shown]]
        if self.shown < len(self.rows):
            lines.append(f"\n_… and {len(self.rows) - self.shown} more rows not shown (size limit)._")
        return "\n".join(lines)


class Blocks(Table):
    """Whole Markdown blocks (charts) cut like table rows: the last ones go first, counted."""

    def __init__(self, title: str, blocks: list[str], note: str = ""):
        super().__init__(title, [], blocks, note)

    def render(self) -> str:
        lines = [self.title, ""] + ([self.note, ""] if self.note else []) + self.rows[: self.shown]
        if self.shown < len(self.rows):
            lines.append(
                f"_… and {len(self.rows) - self.shown} more charts not shown (size limit); "
                "all of them are in the sweep's results artifact._"
            )
        return "\n".join(lines)


def _fit(head: str, tables: list[Table], budget: int) -> str:
    """Cut the table with the most shown rows until the whole body fits."""
    while True:
        body = "\n\n".join([head] + [t.render() for t in tables if t.rows]) + "\n"
        if len(body) <= budget:
            return body
        cuttable = [t for t in tables if t.shown > t.keep]
        if not cuttable:
            return body[: budget - 40] + "\n\n_(cut at the size limit)_\n"
        largest = max(cuttable, key=lambda t: t.shown - t.keep)
        average = max(1, len(largest.render()) // max(1, largest.shown))
        largest.shown = max(largest.keep, min(largest.shown - 1, largest.shown - (len(body) - budget) // average - 1))


def build_comment(
    buckets: dict[str, list[dict]],
    outcomes: dict[str, str] | None = None,
    run_url: str | None = None,
    budget: int = COMMENT_BUDGET,
    comparison: dict | None = None,
    charts: list[str] | None = None,
    logs_links: dict[str, str] | None = None,
    mode: Mode | None = None,
    lane_gate: dict | None = None,
    reuse: ReuseSummary | None = None,
    queue: QueueCheck | None = None,
    lanes: LaneCheck | None = None,
) -> str:
    """The whole comment body, starting with the marker, at most `budget` characters.

    ``mode``: the plan's run mode (from the label table); ``lane_gate``: each lane's check;
    ``comparison``/``charts``: the results against the baseline (infx results compare/plot);
    ``reuse``: the plan's reused points (infx reuse), which do not run; ``queue``: the plan's
    queue check (infx/workflows/queue.py), whose held-back points are not queued; ``lanes``: the
    plan's lane check (infx/launch/lanecheck.py), one line counting the points held for want of a lane.
    """
    total = sum(len(rows) for rows in buckets.values())
    hours = {name: sum(gpu_hours(r) for r in rows) for name, rows in buckets.items()}
    head = [
        MARKER,
        "### infx sweep plan",
        "",
        f"**{total} points** in {len(buckets)} buckets, about **{sum(hours.values()):,.0f} GPU-hours** (estimate).",
    ]
    head += (
        _mode_lines(mode) + _lane_lines(lane_gate, buckets) + reuse_lines(reuse) + markdown(queue) + held_lines(lanes)
    )
    tables = [
        Table(
            "#### Points per bucket",
            ["bucket", "points", "GPU-hours"],
            [[name, str(len(rows)), f"{hours[name]:,.1f}"] for name, rows in buckets.items()],
        )
    ]
    if reuse is not None and reuse.reused and outcomes is None:  # after the sweep, the one points table lists them
        tables.append(reuse_table(reuse))
    points = [(name, row) for name, rows in buckets.items() for row in rows]
    if outcomes is not None:
        status = {point_id(row): outcomes.get(point_id(row), OUTCOME_MISSING) for _, row in points}
        counts = {kind: sum(1 for s in status.values() if s == kind) for kind in OUTCOME_LABELS}
        where = f" of [the sweep]({run_url})" if run_url else ""
        head += [
            "",
            f"#### Outcomes{where}",
            "",
            " · ".join(f"{OUTCOME_LABELS[kind]}: **{counts[kind]}**" for kind in OUTCOME_LABELS),
        ]
        if counts[OUTCOME_FAILED] or counts[OUTCOME_MISSING]:
            head += [
                "",
                "Rerun exactly the points without a valid result: `infx github rerun-failed --run-id <run id>`.",
            ]
        verdicts = {p["point-id"]: p for p in (comparison or {}).get("points", []) if p.get("point-id")}
        # first: the points without a valid result lead it, and the results lead the comment
        tables.insert(0, points_table(points, status, verdicts, reuse, artifact_link(logs_links, run_url), run_url))
    else:
        tables.append(
            Table(
                "#### Points",
                ["point", "bucket", "config-key", "runner", "conc"],
                [[point_id(r), b, r.get("config-key"), r.get("runner"), r.get("conc")] for b, r in points],
            )
        )
    if comparison is not None:
        head.append("")
        head.extend(comparison_head(comparison))
        results = comparison_tables(comparison, logs_links, run_url, charts, points_listed=outcomes is not None)
        tables = tables[:1] + results + tables[1:] if outcomes is not None else results + tables
    return _fit("\n".join(head), tables, budget)


KEPT_UNRESOLVED = 100  # points without a valid result the size limit never cuts from the points table
POINT_STATES = {  # each point's one state in the comment, in the order the points table lists them
    "failed": "❌ failed",
    "invalid": "⚠️ invalid",
    OUTCOME_MISSING: "⏳ no result",
    OUTCOME_OK: "✅ ok",
    "reused": "♻️ reused",
}


def artifact_link(logs_links: dict[str, str] | None, run_url: str | None):
    """A function: an artifact's name as a link to it (its own URL, else the run's artifact list)."""
    links = logs_links or {}

    def link(artifact) -> str:
        if not artifact:
            return ""
        url = (links.get(artifact) if isinstance(artifact, str) else None) or (
            f"{run_url}#artifacts" if run_url else None
        )
        return f"[{artifact}]({url})" if url else str(artifact)

    return link


def source_run(run_id, run_url: str | None) -> str:
    """`run 8000`, a link to it when this run's URL says where runs live."""
    if not run_id:
        return "an earlier run"
    base = re.sub(r"/runs/\d+$", "", run_url) if run_url and re.search(r"/runs/\d+$", run_url) else None
    return f"[run {run_id}]({base}/runs/{run_id})" if base else f"run {run_id}"


def points_table(
    points: list[tuple[str, dict]],
    status: dict[str, str],
    verdicts: dict[str, dict],
    reuse: ReuseSummary | None,
    link,
    run_url: str | None = None,
) -> Table:
    """Every point of the sweep once, with its one state: collect's verdict when the results have
    one (failed, invalid, ok), else the run's outcome, and the reused points; why, and its artifact."""
    rows: list[list] = []
    for bucket, row in points:
        pid = point_id(row)
        verdict = verdicts.get(pid, {})
        state = verdict.get("status") or status[pid]
        why = clip("; ".join(verdict.get("reasons") or []))
        artifact = link(verdict.get("artifact")) if state != OUTCOME_OK else ""  # a valid result's is in the run
        rows.append([state, pid, bucket, row.get("config-key"), row.get("conc"), why, artifact])
    for item in reuse.reused if reuse is not None else ():
        # its artifact belongs to the run that stored it, not to this one
        rows.append(
            ["reused", item.point_id, "", "", "", f"result of {source_run(item.source_run, run_url)}", item.artifact]
        )
    order = {state: i for i, state in enumerate(POINT_STATES)}
    rows.sort(key=lambda cells: order.get(str(cells[0]), len(order)))
    unresolved = sum(1 for cells in rows if cells[0] not in (OUTCOME_OK, "reused"))
    return Table(
        "#### Points",
        ["state", "point", "bucket", "config-key", "conc", "why", "artifact"],
        [[POINT_STATES.get(str(cells[0]), str(cells[0])), *cells[1:]] for cells in rows],
        keep=min(unresolved, KEPT_UNRESOLVED),
    )


def reuse_lines(reuse: ReuseSummary | None) -> list[str]:
    """One sentence: how many points were reused instead of run, and the GPU-hours saved."""
    if reuse is None:
        return []
    lines = []
    if reuse.reused:
        runs = sorted({str(item.source_run) for item in reuse.reused if item.source_run})
        origin = f" (from run {', '.join(runs)})" if runs else ""
        lines = [
            "",
            f"♻️ **{len(reuse.reused)} points reused**{origin}: their result keys already have valid results; "
            f"about **{reuse.gpu_hours_saved:,.0f} GPU-hours saved**. The other points run.",
        ]
    if reuse.notice:
        lines += ["", f"⚠️ {'Reuse incomplete' if lines else 'No reuse'}: {reuse.notice}."]
    return lines


def reuse_table(reuse: ReuseSummary) -> Table:
    return Table(
        "#### Reused points (not run again)",
        ["point", "result key", "from run", "artifact", "GPU-hours"],
        [
            [
                item.point_id,
                item.result_key[:16],
                item.source_run or "?",
                item.artifact,
                f"{item.gpu_hours:,.1f}",
            ]
            for item in reuse.reused
        ],
    )


def dispatch_reasons_table(reuse: ReuseSummary) -> Table:
    """Each point that runs and why no stored result stood in for it (the lookup's reasons)."""
    return Table(
        "#### Points that run, and why no stored result was reused",
        ["point", "why"],
        [[pid, str(why)] for pid, why in reuse.dispatch_reasons.items()],
    )


def reuse_markdown(reuse: ReuseSummary | None, budget: int = SUMMARY_BUDGET) -> str:
    """The step summary's reuse section: what was reused, and why every other point runs
    (empty without a reuse lookup); the longest table is cut first to stay within ``budget``."""
    lines = reuse_lines(reuse)[1:]
    if reuse is None or not (lines or reuse.dispatch_reasons):
        return ""
    tables = ([reuse_table(reuse)] if reuse.reused else []) + ([] if reuse.notice else [dispatch_reasons_table(reuse)])
    return _fit("\n".join(lines) if lines else "#### Reuse", tables, budget)


def _mode_lines(mode: Mode | None) -> list[str]:
    return ["", describe(mode)] if mode else []


def _lane_lines(lane_gate: dict | None, buckets: dict[str, list[dict]]) -> list[str]:
    if not lane_gate:
        return []

    lines = render_lines(
        lane_gate,
        Counter(runner for rows in buckets.values() for row in rows if isinstance(runner := row.get("runner"), str)),
    )
    return ["", "#### Lane check", "", *lines] if lines else []


# --- results: the comparison with the baseline and the charts -----------------------------------

VERDICT_LABELS = {"regressed": "🔻 regressed", "improved": "🔺 improved", "within": "➖ within"}
STATUS_LABELS = {"failed": "❌ failed", "invalid": "⚠️ invalid"}


def percent(change: float | None) -> str:
    """`+13.2 %`, `−21.6 %` (a true minus sign), `n/a` without a baseline value."""
    if change is None:
        return "n/a"
    text = f"{change * 100:+.1f} %"
    return text.replace("-", "\u2212")


def _value(value: float | None, scale: float) -> str:
    if value is None:
        return "n/a"
    shown = value * scale
    return f"{shown:,.1f}" if abs(shown) >= 10 else f"{shown:.3g}"


def _baseline_line(comparison: dict) -> str:
    source = comparison.get("baseline") or {}
    if source.get("kind") == "run":
        where = f"[run {source.get('run-id')}]({source['url']})" if source.get("url") else f"run {source.get('run-id')}"
        return f"Baseline: {where} of `{source.get('workflow', 'the sweep')}` on `{source.get('branch', 'main')}`."
    if source.get("kind") == "runs":
        runs = ", ".join(
            f"[{r['run-id']}]({r['url']})" if r.get("url") else str(r["run-id"]) for r in source.get("runs", [])
        )
        return f"Baseline: the newest successful sweep on `main` per config key (runs {runs})."
    if source.get("kind") == "files":
        return "Baseline: " + ", ".join(f"`{p}`" for p in source.get("paths", [])) + "."
    return "Baseline: none found."


def comparison_head(comparison: dict) -> list[str]:
    counts = comparison.get("counts", {})
    threshold = comparison.get("threshold", 0) * 100
    lines = ["### Results against the baseline", "", _baseline_line(comparison)]
    for notice in comparison.get("notices", []):  # a blank line between: one quote each, not one run-on paragraph
        lines += ["", f"> **Notice:** {notice}"]
    lines += [
        "",
        f"{VERDICT_LABELS['regressed']}: **{counts.get('regressed', 0)}** · {VERDICT_LABELS['improved']}: "
        f"**{counts.get('improved', 0)}** · {VERDICT_LABELS['within']} ±{threshold:g} %: **{counts.get('within', 0)}**"
        f" · new: **{counts.get('new', 0)}** · gone: **{counts.get('gone', 0)}**"
        f" · without a valid result: **{counts.get('without a valid result', 0)}**",
    ]
    return lines + accuracy_lines(comparison.get("accuracy"))


# --- accuracy: the sweep's eval rows against their floors and main (infx/results/accuracy.py) -----

ACCURACY_LABELS = {
    "missing": "❌ no score",
    "below": "❌ below floor",
    "no-floor": "⚠️ no floor",
    "no-metric": "⚠️ no exact-match score",
    "ok": "✅ at or above floor",
}


def _points(value: float | None, signed: bool = False) -> str:
    """A fraction as percent with two decimals (`90.52`), or a change in percentage points (`+1.20`, true minus)."""
    if value is None:
        return "n/a"
    text = f"{value * 100:+.2f}" if signed else f"{value * 100:.2f}"
    return text.replace("-", "\u2212")


def accuracy_lines(accuracy: dict | None) -> list[str]:
    """The Accuracy counts, one line, with where the floors come from."""
    if not accuracy:
        return []
    counts = accuracy.get("counts", {})
    source = accuracy.get("floors")
    # a path in code font; "the floors infx ships (…)" as the words it is
    floors = (f" ({source})" if " " in source else f" (floors: `{source}`)") if source else " (no floors could be read)"
    return [
        "",
        f"**Accuracy**{floors}: "
        + " · ".join(f"{ACCURACY_LABELS[kind]}: **{counts.get(kind, 0)}**" for kind in ACCURACY_LABELS),
    ]


def accuracy_tables(accuracy: dict | None) -> list[Table]:
    """Eval folders without a score (why), then every eval row: failures first (accuracy.py orders them)."""
    if not accuracy:
        return []
    unscored = Table(
        "#### Accuracy: eval points without a score",
        ["", "point", "config-key", "why"],
        [
            [
                ACCURACY_LABELS["missing"],
                item.get("point-id") or item.get("folder"),
                item.get("config-key") or "?",
                clip(str(item.get("why", ""))),
            ]
            for item in accuracy.get("unscored", [])
        ],
    )
    rows = []
    for row in accuracy.get("rows", []):
        score = _points(row.get("score")) + (
            f" ± {_points(row['score-se'])}" if row.get("score-se") is not None else ""
        )
        if row.get("score-name") and row["score-name"] != "em_strict":
            score += f" ({row['score-name']})"
        floor = _points(row.get("floor")) if row.get("floor") is not None else "none"
        rows.append(
            [
                ACCURACY_LABELS[row["status"]],
                row.get("config-key") or row.get("model-prefix"),
                row.get("topology"),
                row.get("conc"),
                row.get("task"),
                score,
                floor,
                _points(row.get("change"), signed=True),
            ]
        )
    table = Table(
        "#### Accuracy",
        ["", "config-key", "topology", "conc", "task", "score ± stderr (%)", "floor (%)", "vs main (pp)"],
        rows,
        "Score: strict exact match (lm-eval), with its standard error; the floor applies to the strict and the "
        "flexible score (`infx results check-evals`); the change is against main's newest eval of the same point.",
    )
    return [unscored, table]


def comparison_tables(
    comparison: dict,
    logs_links: dict[str, str] | None = None,
    run_url: str | None = None,
    charts: list[str] | None = None,
    points_listed: bool = False,
) -> list[Table]:
    """Points without a valid result (one line each, with a link to the logs; left out when
    ``points_listed``: the comment's one points table has them), the Accuracy tables (eval points
    without a score, then every eval row, failures first), then the matched rows most-changed
    first, then new and gone rows, then the charts (when given)."""
    metrics = comparison.get("metrics", [])
    link = artifact_link(logs_links, run_url)
    failed = [] if points_listed else [p for p in comparison.get("points", []) if p.get("status") != "ok"]

    def logs(point: dict) -> str:
        return link(point.get("artifact"))

    tables = [
        Table(
            "#### Points without a valid result",
            ["", "point", "config-key", "why", "logs"],
            [
                [
                    STATUS_LABELS.get(p["status"], p["status"]),
                    p.get("point-id") or "?",
                    p.get("config-key") or "?",
                    clip("; ".join(p.get("reasons") or [])),
                    logs(p),
                ]
                for p in failed
            ],
        )
    ]
    tables += accuracy_tables(comparison.get("accuracy"))
    header = ["", "config-key", "scenario", "topology", "conc"] + [f"{m['label']} ({m['unit']})" for m in metrics]
    rows = []
    for match in comparison.get("matches", []):
        cells = []
        for m in metrics:
            change = match["metrics"].get(m["id"], {})
            mark = {"improved": " 🔺", "regressed": " 🔻"}.get(change.get("judgement"), "")
            cells.append(f"{_value(change.get('head'), m['scale'])} ({percent(change.get('change'))}{mark})")
        rows.append(
            [VERDICT_LABELS[match["verdict"]], match["config-key"], match["scenario"], match["topology"], match["conc"]]
            + cells
        )
    tables.append(
        Table(
            "#### Matched points, most changed first",
            header,
            rows,
            "Each cell: the head value (the change against the baseline).",
        )
    )
    for kind in ("new", "gone"):
        tables.append(
            Table(
                f"#### {kind.capitalize()} points",
                ["config-key", "scenario", "topology", "conc"],
                [[k["config-key"], k["scenario"], k["topology"], k["conc"]] for k in comparison.get(kind, [])],
            )
        )
    pngs = link(RESULTS_ARTIFACT) if (logs_links or {}).get(RESULTS_ARTIFACT) or run_url else f"`{RESULTS_ARTIFACT}`"
    note = (
        f"The same charts as PNG images, every frontier point and series drawn in full: folder `charts/` of the "
        f"run's {pngs} artifact."
    )
    return tables + ([Blocks("#### Charts", charts, note)] if charts else [])


def comparison_markdown(
    comparison: dict,
    charts: list[str] | None = None,
    logs_links: dict[str, str] | None = None,
    run_url: str | None = None,
    budget: int = SUMMARY_BUDGET,
) -> str:
    """The step summary: the comparison and the charts, at most `budget` characters."""
    return _fit(
        "\n".join(comparison_head(comparison)), comparison_tables(comparison, logs_links, run_url, charts), budget
    )
