"""The PR comment and the step summary with results: the comparison table most-changed first,
the charts, each point without a valid result in one line with a link to its logs artifact,
all cut to GitHub's limits with a count of what was cut."""

from __future__ import annotations

import json
import shutil

import pytest

from bench.results_pipeline import bundled_rows, generate_sweep  # noqa: E402
from infx.results.collect import collect  # noqa: E402
from infx.results.compare import compare_to_baseline  # noqa: E402
from infx.results.plot import plot, read_chart_blocks  # noqa: E402
from infx.workflows.report import COMMENT_LIMIT, SUMMARY_LIMIT, build_comment, comparison_markdown  # noqa: E402
from testing.artifacts import point_folder  # noqa: E402
from testing.cli import run_cli  # noqa: E402
from testing.github_server import SLUG, LocalGitHub  # noqa: E402


@pytest.fixture(scope="module")
def sweep(tmp_path_factory):
    """500 generated points (every bundled config key), a baseline 10 % slower, 3 failed points."""
    root = tmp_path_factory.mktemp("sweep")
    rows = bundled_rows()
    head_folders = generate_sweep(root / "head", rows)
    generate_sweep(root / "base", rows, scale=0.9)
    for folder in head_folders[:3]:  # these points failed: their artifact is point-<id>-failed
        record_path = next(folder.glob("*_launch.json"))
        record = json.loads(record_path.read_text())
        shutil.rmtree(folder)
        point_folder(
            root / "head", record["point"], {}, exit_code=1, message=f"job {record['job-id']}: FAILED (exit code 1:0)"
        )
    head, base = collect([root / "head"]), collect([root / "base"])
    comparison = compare_to_baseline(base.rows, head, 0.05, {"kind": "files", "paths": ["base.json"]})
    charts = plot(base.rows, head.rows, root / "charts")
    plan = [json.loads(next(f.glob("*_launch.json")).read_text())["point"] for f in sorted((root / "head").iterdir())]
    return {
        "root": root,
        "head": head,
        "comparison": comparison,
        "charts": read_chart_blocks(root / "charts" / "charts.md"),
        "chart_count": len(charts),
        "plan": plan,
    }


def test_the_comment_fits_and_ranks_the_most_changed_first(sweep):
    from infx.sweepplan import SweepPlan

    data = sweep["comparison"].to_json()
    assert data["counts"]["improved"] == 497 and data["counts"]["without a valid result"] == 3
    links = {
        p.artifact: f"https://github.com/{SLUG}/actions/runs/77/artifacts/{i}"
        for i, p in enumerate(sweep["head"].points)
    }
    body = build_comment(
        SweepPlan.from_json(sweep["plan"]).buckets,
        None,
        "https://github.com/acme/bench/actions/runs/77",
        comparison=data,
        charts=sweep["charts"],
        logs_links=links,
    )
    assert len(body) <= COMMENT_LIMIT
    assert "### Results against the baseline" in body and "🔺 improved: **497**" in body
    assert "more rows not shown (size limit)" in body  # 497 matches do not fit: the tail is cut, with a count
    # one line per failed point, with the reason and a link to its logs artifact
    failed = [p for p in sweep["head"].points if p.status == "failed"]
    for point in failed:
        line = next(line for line in body.splitlines() if f"| ❌ failed | {point.point_id} |" in line)
        assert f"FAILED (exit code 1:0) | [{point.artifact}]({links[point.artifact]}) |" in line
        assert point.artifact == f"point-{point.point_id}-failed"
    # most changed first: the magnitudes of the shown rows do not increase
    shown = data["matches"]
    assert [m["magnitude"] for m in shown] == sorted((m["magnitude"] for m in shown), reverse=True)
    first_row = next(line for line in body.splitlines() if line.startswith("| 🔺 improved |"))
    top = shown[0]
    assert f"| {top['config-key']} | {top['scenario']} | {top['topology']} | {top['conc']} |" in first_row
    assert "```mermaid\n%%{init:" in body and "\nxychart-beta\n" in body


def test_the_step_summary_carries_every_chart_and_fits_its_limit(sweep):
    summary = comparison_markdown(sweep["comparison"].to_json(), sweep["charts"])
    assert len(summary.encode()) <= SUMMARY_LIMIT
    assert summary.count("```mermaid") == sweep["chart_count"] >= 9
    tight = comparison_markdown(sweep["comparison"].to_json(), sweep["charts"], budget=20_000)
    assert len(tight) <= 20_000 and "more rows not shown" in tight


def test_github_report_posts_table_and_charts(sweep, tmp_path):
    root = sweep["root"]
    (tmp_path / "comparison.json").write_text(sweep["comparison"].to_json_text())
    (tmp_path / "plan.json").write_text(json.dumps(sweep["plan"]))
    with LocalGitHub() as server:
        server.state.add_pull(7)
        server.state.add_run(77, head_branch="feature", event="pull_request")
        ids = {}
        for folder in sorted((root / "head").iterdir()):
            ids[folder.name] = server.state.add_artifact(77, folder.name)["id"]
        done = run_cli(
            "github",
            "report",
            "--pr",
            "7",
            "--plan",
            str(tmp_path / "plan.json"),
            "--run-id",
            "77",
            "--comparison",
            str(tmp_path / "comparison.json"),
            "--charts",
            str(root / "charts" / "charts.md"),
            env={"GITHUB_TOKEN": "ghs_test", "GITHUB_API_URL": server.url, "GITHUB_REPOSITORY": SLUG},
        )
        assert done.returncode == 0, done.stderr
        [post] = server.state.requests_to("POST", rf"/repos/{SLUG}/issues/7/comments")
    body = post.body["body"]
    assert len(body) <= COMMENT_LIMIT and "```mermaid" in body and "| 🔺 improved |" in body
    failed = next(p for p in sweep["head"].points if p.status == "failed")
    assert f"[{failed.artifact}](https://github.com/{SLUG}/actions/runs/77/artifacts/{ids[failed.artifact]})" in body
    assert "❌ failed: **3**" in body  # the outcomes, from the same artifacts


def test_report_refuses_an_unreadable_comparison(tmp_path):
    (tmp_path / "plan.json").write_text("[]")
    (tmp_path / "c.json").write_text("[1, 2]")
    done = run_cli(
        "github",
        "report",
        "--pr",
        "7",
        "--plan",
        str(tmp_path / "plan.json"),
        "--comparison",
        str(tmp_path / "c.json"),
        env={"GITHUB_TOKEN": "x", "GITHUB_REPOSITORY": SLUG},
    )
    assert done.returncode == 2 and "is not a comparison" in done.stderr


def test_the_summary_command_renders_comparison_and_charts(sweep, tmp_path):
    (tmp_path / "comparison.json").write_text(sweep["comparison"].to_json_text())
    done = run_cli(
        "results",
        "summary",
        "--comparison",
        str(tmp_path / "comparison.json"),
        "--charts",
        str(sweep["root"] / "charts" / "charts.md"),
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("### Results against the baseline")
    assert done.stdout.count("```mermaid") == sweep["chart_count"] and len(done.stdout.encode()) <= SUMMARY_LIMIT
    # In a run, each failed point links to the run's artifact list.
    in_run = run_cli(
        "results",
        "summary",
        "--comparison",
        str(tmp_path / "comparison.json"),
        env={"GITHUB_SERVER_URL": "https://github.com", "GITHUB_REPOSITORY": SLUG, "GITHUB_RUN_ID": "77"},
    )
    failed = next(p for p in sweep["head"].points if p.status == "failed")
    assert f"[{failed.artifact}](https://github.com/{SLUG}/actions/runs/77#artifacts)" in in_run.stdout
