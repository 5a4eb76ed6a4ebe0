"""The sticky PR comment: the plan (points per bucket, GPU-hours) and, after a sweep, each
point's outcome. Pure: plan data and outcomes in, one Markdown body out, always under
GitHub's comment limit (the longest tables are cut first, with a count of what was cut).
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from ..diagnostics import InfxError, UsageError, error
from ..fsio import read_bytes
from ..jsonfast import JSONProblem, parse
from ..matrix.rowschema import row_findings
from ..points import gpu_hours, point_id
from .actions import SUMMARY_LIMIT_BYTES as SUMMARY_LIMIT  # GitHub drops a larger step summary (bytes)
from .actions import markdown_cell

MARKER = "<!-- infx:sweep-report -->"  # finds our comment again; invisible when rendered
COMMENT_LIMIT = 65_536  # GitHub rejects longer comment bodies (characters)
COMMENT_BUDGET = COMMENT_LIMIT - 1_024  # room for the truncation notes
SUMMARY_BUDGET = SUMMARY_LIMIT // 4 - 1_024  # cut by characters here: one may take up to 4 bytes in UTF-8
ROW_KEYS = ("recipe-fingerprint", "runner", "config-key")
GENERIC_CONTAINERS = ("rows", "points", "matrix")  # rows under these keys are bucketed here
NAMING_CONTAINERS = ("buckets",)  # keys that hold bucket names (infx plan's JSON), not a name

OUTCOME_OK, OUTCOME_FAILED, OUTCOME_MISSING = "ok", "failed", "missing"
OUTCOME_LABELS = {OUTCOME_FAILED: "❌ failed", OUTCOME_MISSING: "⏳ no result", OUTCOME_OK: "✅ ok"}


def _is_rows(value) -> bool:
    return isinstance(value, list) and bool(value) and all(
        isinstance(item, dict) and any(key in item for key in ROW_KEYS) for item in value)


def _bucketize(rows: list[dict]) -> dict[str, list[dict]]:
    from ..matrix import bucketize  # the one place bucket names are decided

    return bucketize(rows)


def plan_buckets(data) -> dict[str, list[dict]]:
    """Bucket name -> rows from a plan or matrix JSON document.

    Accepts what `infx matrix --format json` prints (a list of rows, bucketed here), what
    `infx plan --format json` prints (`{"buckets": {name: rows}, …}`), and other mappings
    of bucket names (nested or `a/b`) to rows. Keys holding no rows (metadata) are ignored.
    """
    if isinstance(data, list):
        return _bucketize(data) if data else {}
    buckets: dict[str, list[dict]] = {}

    def walk(value, path: tuple[str, ...]) -> None:
        if _is_rows(value):
            if path and path[-1] in GENERIC_CONTAINERS:
                for name, rows in _bucketize(value).items():
                    buckets.setdefault(name, []).extend(rows)
            else:
                buckets.setdefault("/".join(path) or "all", []).extend(value)
        elif isinstance(value, dict):
            for key, item in value.items():
                walk(item, path if not path and key in NAMING_CONTAINERS else path + (str(key),))

    walk(data, ())
    return buckets


PLAN_HINT = "Pass the JSON written by `infx plan --format json` or `infx matrix --format json`."
ROW_HINT = "Rows are checked as `infx matrix` checks the rows it builds (docs/matrix.md, \"The row contract\")."


def read_plan(path: Path) -> dict[str, list[dict]]:
    """The plan's buckets. A missing or unusable file (a folder, a FIFO) is exit 2; text that is
    not JSON, or whose rows do not have the row schema's types, is a located error (exit 1)."""
    return checked_buckets(read_json(path), path)


def checked_buckets(data, path: Path) -> dict[str, list[dict]]:
    """The buckets of a plan document already read from ``path`` (errors located there)."""
    if isinstance(data, list) and not all(isinstance(row, dict) for row in data):
        raise InfxError(error(str(path), (1, 1), "plan-json", "the plan is a list, but not of rows (JSON objects)", PLAN_HINT))
    if not isinstance(data, (list, dict)):
        raise InfxError(error(str(path), (1, 1), "plan-json", "the plan must be a list of rows or an object of buckets", PLAN_HINT))
    if isinstance(data, list) and not _is_rows(data) and data:
        raise InfxError(error(str(path), (1, 1), "plan-json", f"the plan's items are not all rows (objects with one of {', '.join(ROW_KEYS)})",
                              PLAN_HINT))
    problems = []
    for index, (where, row) in enumerate(_rows_in(data, ())):  # before bucketing: bucket names are made from row values
        problems += [(where, index, *found) for found in row_findings(row)]
    if problems:
        raise InfxError(_row_diagnostics(path, problems))
    return plan_buckets(data)


MAX_ROW_DIAGNOSTICS = 20  # every problem is one line; past this the rest are counted


def _row_diagnostics(path: Path, problems: list[tuple]) -> list:
    """Each row problem located at its field in the plan file (JSON is YAML: its loader gives positions)."""
    from ..yamlio import parse_yaml

    try:
        doc, _ = parse_yaml(read_bytes(path), str(path))
    except (OSError, ValueError):
        doc = None
    diagnostics = []
    for where, index, field, rule, message, hint in problems[:MAX_ROW_DIAGNOSTICS]:
        at = doc.where(where + tuple(field)) if doc is not None else None
        shown = "$" + "".join(f"[{part}]" if isinstance(part, int) else f".{part}" for part in where)
        diagnostics.append(error(str(path), at, rule, f"row {index} (at {shown}): {message}",
                                 hint + (" " if hint else "") + ROW_HINT))
    if len(problems) > MAX_ROW_DIAGNOSTICS:
        diagnostics.append(error(str(path), None, "plan-row-count", f"{len(problems) - MAX_ROW_DIAGNOSTICS} more row problem(s) not shown",
                                 "Fix the ones above and run again."))
    return diagnostics


def read_json(path: Path, what: str = "plan file", hint: str = PLAN_HINT):
    """A JSON document infx wrote earlier (a plan, a lane gate). A missing or unusable file (a
    folder, a FIFO) is a usage error (exit 2); text that is not JSON within infx's limits is a
    located error (exit 1)."""
    try:
        raw = read_bytes(path)
    except FileNotFoundError:
        raise UsageError(f"the {what} does not exist", hint, str(path)) from None
    except (OSError, ValueError) as exc:
        raise UsageError(f"cannot read the {what}: {getattr(exc, 'strerror', None) or exc}", hint, str(path)) from None
    try:
        return parse(raw)
    except JSONProblem as exc:
        rule = what.removesuffix(" file").replace(" ", "-") + "-json"  # plan-json, lane-gate-json
        raise InfxError(error(str(path), (exc.line or 1, exc.column), rule, f"cannot read the {what}: {exc.message}", hint)) from None


def _rows_in(data, where: tuple = ()):
    """(JSON path, row) of every object in a list that has a row's keys, however deep."""
    if isinstance(data, list):
        for index, item in enumerate(data):
            if isinstance(item, dict) and any(key in item for key in ROW_KEYS):
                yield where + (index,), item
            else:
                yield from _rows_in(item, where + (index,))
    elif isinstance(data, dict):
        for key, value in data.items():
            yield from _rows_in(value, where + (key,))


def _cell(value) -> str:
    if isinstance(value, list):
        value = "x".join(str(v) for v in value)
    return markdown_cell(str(value if value is not None else ""))


class Table:
    def __init__(self, title: str, header: list[str], rows: list, note: str = ""):  # rows of cells (_cell), or Blocks' blocks
        self.title, self.header, self.rows, self.note = title, header, rows, note
        self.shown = len(rows)

    def render(self) -> str:
        lines = [self.title, ""] + ([self.note, ""] if self.note else [])
        lines += ["| " + " | ".join(self.header) + " |", "|" + "---|" * len(self.header)]
        lines += ["| " + " | ".join(_cell(c) for c in row) + " |" for row in self.rows[: self.shown]]
        if self.shown < len(self.rows):
            lines.append(f"\n_… and {len(self.rows) - self.shown} more rows not shown (size limit)._")
        return "\n".join(lines)


class Blocks(Table):
    """Whole Markdown blocks (charts) cut like table rows: the last ones go first, counted."""

    def __init__(self, title: str, blocks: list[str]):
        super().__init__(title, [], blocks)

    def render(self) -> str:
        lines = [self.title, ""] + self.rows[: self.shown]
        if self.shown < len(self.rows):
            lines.append(f"_… and {len(self.rows) - self.shown} more charts not shown (size limit); "
                         "all of them are in the sweep's results artifact._")
        return "\n".join(lines)


def _fit(head: str, tables: list[Table], budget: int) -> str:
    """Cut the table with the most shown rows until the whole body fits."""
    while True:
        body = "\n\n".join([head] + [t.render() for t in tables if t.rows]) + "\n"
        if len(body) <= budget:
            return body
        largest = max(tables, key=lambda t: t.shown)
        if largest.shown == 0:
            return body[: budget - 40] + "\n\n_(cut at the size limit)_\n"
        average = max(1, len(largest.render()) // max(1, largest.shown))
        largest.shown = max(0, min(largest.shown - 1, largest.shown - (len(body) - budget) // average - 1))


def build_comment(buckets: dict[str, list[dict]], outcomes: dict[str, str] | None = None,
                  run_url: str | None = None, budget: int = COMMENT_BUDGET, comparison: dict | None = None,
                  charts: list[str] | None = None, logs_links: dict[str, str] | None = None, mode: dict | None = None,
                  lane_gate: dict | None = None, reuse: dict | None = None, queue: dict | None = None) -> str:
    """The whole comment body, starting with the marker, at most `budget` characters.

    ``mode``: the plan's run mode (from the label table); ``lane_gate``: each lane's check;
    ``comparison``/``charts``: the results against the baseline (infx results compare/plot);
    ``reuse``: the plan's reused points (infx reuse), which do not run; ``queue``: the plan's
    queue check (infx/workflows/queue.py), whose held-back points are not queued.
    """
    total = sum(len(rows) for rows in buckets.values())
    hours = {name: sum(gpu_hours(r) for r in rows) for name, rows in buckets.items()}
    head = [MARKER, "### infx sweep plan", "",
            f"**{total} points** in {len(buckets)} buckets, about **{sum(hours.values()):,.0f} GPU-hours** (estimate)."]
    head += _mode_lines(mode) + _lane_lines(lane_gate, buckets) + reuse_lines(reuse) + _queue_lines(queue)
    tables = [Table("#### Points per bucket", ["bucket", "points", "GPU-hours"],
                    [[name, str(len(rows)), f"{hours[name]:,.1f}"] for name, rows in buckets.items()])]
    if reuse and reuse.get("reused"):
        tables.append(reuse_table(reuse))
    points = [(name, row) for name, rows in buckets.items() for row in rows]
    if outcomes is not None:
        status = {point_id(row): outcomes.get(point_id(row), OUTCOME_MISSING) for _, row in points}
        counts = {kind: sum(1 for s in status.values() if s == kind) for kind in OUTCOME_LABELS}
        where = f" of [the sweep]({run_url})" if run_url else ""
        head += ["", f"#### Outcomes{where}", "",
                 " · ".join(f"{OUTCOME_LABELS[kind]}: **{counts[kind]}**" for kind in OUTCOME_LABELS)]
        if counts[OUTCOME_FAILED] or counts[OUTCOME_MISSING]:
            head += ["", "Rerun exactly the points without a valid result: `infx github rerun-failed --run-id <run id>`."]
        order = {kind: i for i, kind in enumerate(OUTCOME_LABELS)}
        ranked = sorted(points, key=lambda item: order[status[point_id(item[1])]])
        tables.append(Table("#### Point outcomes", ["outcome", "point", "bucket", "config-key", "conc"],
                            [[OUTCOME_LABELS[status[point_id(r)]], point_id(r), b, r.get("config-key"), r.get("conc")]
                             for b, r in ranked]))
    else:
        tables.append(Table("#### Points", ["point", "bucket", "config-key", "runner", "conc"],
                            [[point_id(r), b, r.get("config-key"), r.get("runner"), r.get("conc")] for b, r in points]))
    if comparison is not None:
        head.append("")
        head.extend(comparison_head(comparison))
        tables = comparison_tables(comparison, logs_links, run_url, charts) + tables
    return _fit("\n".join(head), tables, budget)


def reuse_lines(reuse: dict | None) -> list[str]:
    """One sentence: how many points were reused instead of run, and the GPU-hours saved."""
    if not reuse:
        return []
    lines = []
    if reuse.get("reused"):
        runs = sorted({str(item["source-run"]) for item in reuse["reused"] if item.get("source-run")})
        origin = f" (from run {', '.join(runs)})" if runs else ""
        lines = ["", f"♻️ **{len(reuse['reused'])} points reused**{origin}: their result keys already have valid results; "
                     f"about **{reuse.get('gpu-hours-saved', 0):,.0f} GPU-hours saved**. The other points run."]
    if reuse.get("notice"):
        lines += ["", f"⚠️ {'Reuse incomplete' if lines else 'No reuse'}: {reuse['notice']}."]
    return lines


def reuse_table(reuse: dict) -> Table:
    return Table("#### Reused points (not run again)", ["point", "result key", "from run", "artifact", "GPU-hours"],
                 [[item["point-id"], item["result-key"][:16], item.get("source-run") or "?", item["artifact"],
                   f"{item.get('gpu-hours', 0):,.1f}"] for item in reuse["reused"]])


def dispatch_reasons_table(reuse: dict) -> Table:
    """Each point that runs and why no stored result stood in for it (the lookup's reasons)."""
    reasons = reuse.get("dispatch-reasons") or {}
    return Table("#### Points that run, and why no stored result was reused", ["point", "why"],
                 [[pid, str(why)] for pid, why in reasons.items()])


def reuse_markdown(reuse: dict | None, budget: int = SUMMARY_BUDGET) -> str:
    """The step summary's reuse section: what was reused, and why every other point runs
    (empty without a reuse lookup); the longest table is cut first to stay within ``budget``."""
    lines = reuse_lines(reuse)[1:]
    if not reuse or not (lines or reuse.get("dispatch-reasons")):
        return ""
    tables = ([reuse_table(reuse)] if reuse.get("reused") else []) + ([] if reuse.get("notice") else [dispatch_reasons_table(reuse)])
    return _fit("\n".join(lines) if lines else "#### Reuse", tables, budget)


def _mode_lines(mode: dict | None) -> list[str]:
    if not mode:
        return []
    from .labels import Mode, describe

    return ["", describe(Mode.from_json(mode))]


def _queue_lines(queue: dict | None) -> list[str]:
    from .queue import markdown

    return markdown(queue)


def _lane_lines(lane_gate: dict | None, buckets: dict[str, list[dict]]) -> list[str]:
    if not lane_gate:
        return []
    from .lanegate import render_lines

    lines = render_lines(lane_gate, Counter(runner for rows in buckets.values() for row in rows if isinstance(runner := row.get("runner"), str)))
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
        runs = ", ".join(f"[{r['run-id']}]({r['url']})" if r.get("url") else str(r["run-id"]) for r in source.get("runs", []))
        return f"Baseline: the newest successful sweep on `main` per config key (runs {runs})."
    if source.get("kind") == "files":
        return "Baseline: " + ", ".join(f"`{p}`" for p in source.get("paths", [])) + "."
    return "Baseline: none found."


def comparison_head(comparison: dict) -> list[str]:
    counts = comparison.get("counts", {})
    threshold = comparison.get("threshold", 0) * 100
    lines = ["### Results against the baseline", "", _baseline_line(comparison)]
    lines += [f"> **Notice:** {notice}" for notice in comparison.get("notices", [])]
    lines += ["", f"{VERDICT_LABELS['regressed']}: **{counts.get('regressed', 0)}** · {VERDICT_LABELS['improved']}: "
              f"**{counts.get('improved', 0)}** · {VERDICT_LABELS['within']} ±{threshold:g} %: **{counts.get('within', 0)}**"
              f" · new: **{counts.get('new', 0)}** · gone: **{counts.get('gone', 0)}**"
              f" · without a valid result: **{counts.get('without a valid result', 0)}**"]
    return lines + accuracy_lines(comparison.get("accuracy"))


# --- accuracy: the sweep's eval rows against their floors and main (infx/results/accuracy.py) -----

ACCURACY_LABELS = {"missing": "❌ no score", "below": "❌ below floor", "no-floor": "⚠️ no floor",
                   "no-metric": "⚠️ no exact-match score", "ok": "✅ at or above floor"}


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
    floors = f" (floors: `{accuracy['floors']}`)" if accuracy.get("floors") else " (no floors could be read)"
    return ["", f"**Accuracy**{floors}: " + " · ".join(f"{ACCURACY_LABELS[kind]}: **{counts.get(kind, 0)}**" for kind in ACCURACY_LABELS)]


def accuracy_tables(accuracy: dict | None) -> list[Table]:
    """Eval folders without a score (why), then every eval row: failures first (accuracy.py orders them)."""
    if not accuracy:
        return []
    unscored = Table("#### Accuracy: eval points without a score", ["", "point", "config-key", "why"],
                     [[ACCURACY_LABELS["missing"], item.get("point-id") or item.get("folder"), item.get("config-key") or "?",
                       str(item.get("why", ""))[:300]] for item in accuracy.get("unscored", [])])
    rows = []
    for row in accuracy.get("rows", []):
        score = _points(row.get("score")) + (f" ± {_points(row['score-se'])}" if row.get("score-se") is not None else "")
        if row.get("score-name") and row["score-name"] != "em_strict":
            score += f" ({row['score-name']})"
        floor = _points(row.get("floor")) if row.get("floor") is not None else "none"
        rows.append([ACCURACY_LABELS[row["status"]], row.get("config-key") or row.get("model-prefix"), row.get("topology"),
                     row.get("conc"), row.get("task"), score, floor, _points(row.get("change"), signed=True)])
    table = Table("#### Accuracy", ["", "config-key", "topology", "conc", "task", "score ± stderr (%)", "floor (%)", "vs main (pp)"],
                  rows, "Score: strict exact match (lm-eval), with its standard error; the floor applies to the strict and the "
                        "flexible score (`infx results check-evals`); the change is against main's newest eval of the same point.")
    return [unscored, table]


def comparison_tables(comparison: dict, logs_links: dict[str, str] | None = None, run_url: str | None = None,
                      charts: list[str] | None = None) -> list[Table]:
    """Points without a valid result (one line each, with a link to the logs), the Accuracy tables
    (eval points without a score, then every eval row, failures first), then the matched rows
    most-changed first, then new and gone rows, then the charts (when given)."""
    metrics = comparison.get("metrics", [])
    links = logs_links or {}
    failed = [p for p in comparison.get("points", []) if p.get("status") != "ok"]

    def logs(point: dict) -> str:
        artifact = point.get("artifact")
        url = (links.get(artifact) if isinstance(artifact, str) else None) or (f"{run_url}#artifacts" if run_url else None)
        return f"[{point.get('artifact')}]({url})" if url else str(point.get("artifact"))

    tables = [Table("#### Points without a valid result", ["", "point", "config-key", "why", "logs"],
                    [[STATUS_LABELS.get(p["status"], p["status"]), p.get("point-id") or "?", p.get("config-key") or "?",
                      "; ".join(p.get("reasons") or [])[:300], logs(p)] for p in failed])]
    tables += accuracy_tables(comparison.get("accuracy"))
    header = ["", "config-key", "scenario", "topology", "conc"] + [f"{m['label']} ({m['unit']})" for m in metrics]
    rows = []
    for match in comparison.get("matches", []):
        cells = []
        for m in metrics:
            change = match["metrics"].get(m["id"], {})
            mark = {"improved": " 🔺", "regressed": " 🔻"}.get(change.get("judgement"), "")
            cells.append(f"{_value(change.get('head'), m['scale'])} ({percent(change.get('change'))}{mark})")
        rows.append([VERDICT_LABELS[match["verdict"]], match["config-key"], match["scenario"], match["topology"],
                     match["conc"]] + cells)
    tables.append(Table("#### Matched points, most changed first", header, rows,
                        "Each cell: the head value (the change against the baseline)."))
    for kind in ("new", "gone"):
        tables.append(Table(f"#### {kind.capitalize()} points", ["config-key", "scenario", "topology", "conc"],
                            [[k["config-key"], k["scenario"], k["topology"], k["conc"]] for k in comparison.get(kind, [])]))
    return tables + ([Blocks("#### Charts", charts)] if charts else [])


def comparison_markdown(comparison: dict, charts: list[str] | None = None, logs_links: dict[str, str] | None = None,
                        run_url: str | None = None, budget: int = SUMMARY_BUDGET) -> str:
    """The step summary: the comparison and the charts, at most `budget` characters."""
    return _fit("\n".join(comparison_head(comparison)), comparison_tables(comparison, logs_links, run_url, charts), budget)
