"""The label table (infx/workflows/labels.py): each trigger's mode, `infx plan --label` on
the bundled changelog, trimming as the reference trims, the canary, and the docs table."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from infx.changelog.plan import apply_mode, pick_canary, trim_conc
from infx.points import gpu_hours, point_id
from infx.runmode import Mode
from infx.sweepplan import SweepPlan
from infx.workflows.labels import LABELS, PRIMARY_LABELS, describe, render_table, resolve_mode
from testing.cli import run_cli

REPO = Path(__file__).resolve().parents[2]
MODE_KEYS = {
    "dispatch",
    "trim-conc",
    "canary",
    "fail-fast",
    "evals-only",
    "all-evals",
    "agentx-fast",
    "reuse",
    "primary-label",
    "why",
}


@pytest.mark.parametrize(
    "labels, expected",
    [
        ([], dict(dispatch=False)),
        (["sweep-enabled"], dict(dispatch=True, trim_conc=True)),
        (["full-sweep-enabled"], dict(dispatch=True, canary=True)),
        (["non-canary-full-sweep-enabled"], dict(dispatch=True)),
        (["full-sweep-fail-fast"], dict(dispatch=True, canary=True, fail_fast=True)),
        (["full-sweep-fail-fast-no-canary"], dict(dispatch=True, fail_fast=True)),
        (["evals-only"], dict(evals_only=True)),
        (["all-evals", "non-canary-full-sweep-enabled", "documentation"], dict(dispatch=True, all_evals=True)),
        (["sweep-enabled", "no-reuse"], dict(dispatch=True, trim_conc=True, reuse=False)),
        (["agentx-fast"], dict(agentx_fast=True)),  # a modifier: alone it launches nothing, as the reference
        (["full-sweep-enabled", "agentx-fast"], dict(dispatch=True, canary=True, agentx_fast=True)),
    ],
)
def test_each_pull_request_label_gives_its_mode(labels, expected):
    mode, problems = resolve_mode("pull_request", labels)
    assert problems == []
    flags = {
        name: getattr(mode, name)
        for name in ("dispatch", "trim_conc", "canary", "fail_fast", "evals_only", "all_evals", "agentx_fast", "reuse")
    }
    assert flags == {**dict.fromkeys(flags, False), "reuse": True, **expected}
    assert mode.primary_label == next((label for label in labels if label in PRIMARY_LABELS), None)


def test_skip_sweep_takes_the_launch_away_on_pull_requests_only():
    assert resolve_mode("pull_request", ["sweep-enabled"], "Fix a typo [skip-sweep]\n")[0].dispatch is False
    assert resolve_mode("pull_request", ["sweep-enabled"], "Fix a typo\n")[0].dispatch is True
    assert resolve_mode("push", [], "Merge (#1) [skip-sweep]")[0].dispatch is True
    assert resolve_mode("workflow_dispatch", [])[0].dispatch is True


def test_two_primary_labels_are_refused_naming_both():
    mode, problems = resolve_mode("pull_request", ["full-sweep-enabled", "evals-only", "sweep-enabled"])
    assert len(problems) == 1 and problems[0].rule == "plan-labels-conflict"
    assert "'sweep-enabled'" in problems[0].message and "'full-sweep-enabled'" in problems[0].message
    assert mode.dispatch is False


def plan(*labels: str, extra: tuple[str, ...] = ()) -> dict:
    done = run_cli("plan", *(f"--label={label}" for label in labels), *extra, "--format", "json")
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_plan_prints_the_mode_and_trims_on_the_bundled_changelog():
    full, trimmed = plan("non-canary-full-sweep-enabled"), plan("sweep-enabled")
    assert set(full["mode"]) == MODE_KEYS and full["mode"]["dispatch"] is True and full["mode"]["trim-conc"] is False
    assert trimmed["mode"]["primary-label"] == "sweep-enabled" and trimmed["mode"]["trim-conc"] is True
    rows = lambda p: [r for rows in p["buckets"].values() for r in rows]  # noqa: E731
    throughput = [r for r in rows(full) if not r.get("run-eval")]
    assert [r for r in rows(trimmed) if not r.get("run-eval")] == trim_conc(throughput)
    assert plan()["mode"]["dispatch"] is False  # no label: planned, not launched
    assert plan(extra=("--labels-json", '["evals-only"]'))["mode"]["evals-only"] is True


def test_plan_refuses_conflicting_labels_with_exit_1():
    done = run_cli("plan", "--label", "sweep-enabled", "--label", "full-sweep-fail-fast-no-canary")
    assert done.returncode == 1
    assert "'sweep-enabled'" in done.stderr and "'full-sweep-fail-fast-no-canary'" in done.stderr
    bad = run_cli("plan", "--labels-json", '{"not": "a list"}')
    assert bad.returncode == 2 and "JSON list" in bad.stderr and "Traceback" not in bad.stderr


def test_trimming_follows_the_reference():
    # As the reference trims: a topology keeps its lowest concurrency where that row stands (here
    # after B's), a multinode row the lowest of its list.
    backend = {"name": "x", "nested": {"a": 1}}
    rows = [
        {"recipe-fingerprint": "A", "conc": 8, "backend": backend},
        {"recipe-fingerprint": "B", "conc": 4},
        {"recipe-fingerprint": "A", "conc": 2, "backend": backend},
        {"recipe-fingerprint": "M", "conc": [64, 8, 512]},
    ]
    assert [r["conc"] for r in trim_conc(rows)] == [4, 2, [8]]


def test_the_canary_is_the_cheapest_throughput_point_and_leaves_the_fan_out():
    full = plan("full-sweep-enabled")
    points = [(b, r) for b, rows in full["buckets"].items() for r in rows]
    cheapest = min((r for _, r in points if not r.get("run-eval")), key=gpu_hours)
    assert full["canary"]["id"] == point_id(cheapest)
    buckets, canary = SweepPlan.from_json(full).fan_out()
    assert canary == [cheapest]
    assert sorted(point_id(r) for rows in buckets.values() for r in rows) == sorted(
        point_id(r) for _, r in points if point_id(r) != point_id(cheapest)
    )
    assert pick_canary({"evals": [{"run-eval": True, "tp": 1, "conc": 1}]}) is None
    no_canary, _ = resolve_mode("pull_request", ["full-sweep-fail-fast-no-canary"])
    assert apply_mode(SweepPlan.from_json(full), no_canary).canary is None


def test_docs_render_the_label_table_from_the_same_data():
    text = (REPO / "docs" / "workflows.md").read_text()
    found = re.search(r"<!-- labels-table:start -->\n(.*?)<!-- labels-table:end -->", text, re.S)
    assert found and found.group(1) == render_table()
    for label in LABELS:
        assert f"`{label}`" in found.group(1)


def test_agentx_fast_changes_only_agentic_throughput_points():
    """The reference's agentx-fast: its agentic throughput jobs run one warm-up request per lane and a
    1,200 s profile; eval (and fixed-seq-len) points stay canonical. A fast point is its own point."""
    canonical, fast = plan("full-sweep-enabled"), plan("full-sweep-enabled", "agentx-fast")
    assert fast["mode"]["agentx-fast"] is True and canonical["mode"]["agentx-fast"] is False
    assert list(fast["buckets"]) == list(canonical["buckets"])
    changed = kept = 0
    for bucket, rows in canonical["buckets"].items():
        for before, after in zip(rows, fast["buckets"][bucket], strict=True):
            if before.get("scenario-type") == "agentic-coding" and not before.get("eval-only"):
                changed += 1
                assert before["duration"] == 3600 and "warmup-requests-per-lane" not in before
                assert after == {
                    **before,
                    "duration": 1200,
                    "warmup-requests-per-lane": 1,
                    "recipe-fingerprint": after["recipe-fingerprint"],
                }
                assert (
                    after["recipe-fingerprint"] != before["recipe-fingerprint"]
                )  # never reused as the canonical point
            else:
                kept += 1
                assert after == before
    assert changed == 5 and kept == 5  # the ladder's five agentic points and their five eval points
    assert canonical["canary"]["id"] != fast["canary"]["id"]
    assert "AgentX fast" in describe(Mode.from_json(fast["mode"]))


def test_agentx_fast_reaches_rows_given_to_plan(tmp_path):
    """A manual dispatch with the agentx-fast input plans its rows with `--label agentx-fast`."""
    rows_file = tmp_path / "rows.json"
    done = run_cli(
        "matrix",
        "--config-key",
        "dsv4-fp4-gb300-dynamo-sglang-agentic-disagg",
        "--format",
        "json",
        "--output",
        str(rows_file),
    )
    assert done.returncode == 0, done.stderr
    fast = run_cli(
        "plan", "--rows", str(rows_file), "--event", "workflow_dispatch", "--label", "agentx-fast", "--format", "json"
    )
    assert fast.returncode == 0, fast.stderr
    rows = [r for bucket in json.loads(fast.stdout)["buckets"].values() for r in bucket]
    assert rows and {(r["duration"], r["warmup-requests-per-lane"]) for r in rows if not r.get("eval-only")} == {
        (1200, 1)
    }
