"""The Accuracy section (infx/results/accuracy.py) of `infx results compare`, the step summary and
the sticky comment: each eval row's score ± standard error, its floor, the change against main's
newest eval row of the same identity (found as the throughput baseline is), failures first, cut to
GitHub's limits.

The sweep is the seed change's eval points (the Mooncake ladder's agentic eval-only points), their
eval/ folders made from the real lm-eval result (tests/testing/evalstage.py).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from infx.sweepplan import SweepPlan  # noqa: E402
from infx.workflows.baseline import RESULTS_ARTIFACT  # noqa: E402
from infx.workflows.report import COMMENT_LIMIT, build_comment  # noqa: E402
from testing.artifacts import point_folder  # noqa: E402
from testing.cli import run_cli  # noqa: E402
from testing.evalstage import eval_stage_output  # noqa: E402
from testing.github_helpers import env_for  # noqa: E402
from testing.github_server import LocalGitHub  # noqa: E402

LADDER = "dsv4-fp4-gb300-dynamo-sglang-agentic-disagg"


@pytest.fixture(scope="module")
def seed_eval_rows() -> list[dict]:
    done = run_cli("plan", "--label", "sweep-enabled", "--label", "evals-only", "--format", "json")
    assert done.returncode == 0, done.stderr
    return [row for rows in json.loads(done.stdout)["buckets"].values() for row in rows]


def sweep(tmp_path: Path, name: str, rows: list[dict], strict: dict[int, float | None], run_id: int) -> Path:
    """results.json of the eval points of ``rows`` (index -> strict score; None: no eval result staged)."""
    folder = tmp_path / name
    folder.mkdir(parents=True)
    for index, score in strict.items():
        artifact = point_folder(folder, rows[index], {}, run_id=run_id, eval_results=False)
        if score is not None:
            eval_stage_output(rows[index], artifact / "eval", strict=score, flexible=min(1.0, score + 0.03))
    out = tmp_path / f"{name}.json"
    done = run_cli("results", "collect", str(folder), "--exit-zero", "--output", str(out))
    assert done.returncode == 0, done.stderr
    return out


def test_compare_shows_each_score_its_floor_and_the_change_against_main_failures_first(tmp_path, seed_eval_rows):
    base = sweep(tmp_path, "base", seed_eval_rows, {0: 0.93, 1: 0.85, 2: 0.95, 3: 0.92}, run_id=100)
    head = sweep(tmp_path, "head", seed_eval_rows, {0: 0.95, 1: 0.905, 2: 0.95, 3: 0.92, 4: None}, run_id=200)
    done = run_cli("results", "compare", "--head", str(head), "--baseline", str(base), "--format", "json")
    assert done.returncode == 0, done.stderr
    accuracy = json.loads(done.stdout)["accuracy"]
    assert accuracy["counts"] == {"missing": 1, "below": 1, "no-floor": 0, "no-metric": 0, "ok": 3}
    # no repository floors: the shipped ones, named as such (not where pip installed them)
    assert accuracy["floors"] == "the floors infx ships (infx/config/eval-thresholds.yaml)"
    [missing] = accuracy["unscored"]
    assert missing["rules"] == ["eval-missing"] and missing["point-id"].endswith(f"c{seed_eval_rows[4]['conc'][0]}")
    first, *rest = accuracy["rows"]
    assert (first["status"], first["conc"], first["floor"], first["floor-source"]) == (
        "below",
        seed_eval_rows[1]["conc"][0],
        0.91,
        "models.dsv4.gsm8k",
    )
    # below its floor though better than main: a failure all the same, shown first
    assert first["score"] == 0.905 and first["change"] == pytest.approx(0.905 - 0.85) and 0 < first["score-se"] < 0.01
    assert [row["status"] for row in rest] == ["ok"] * 3
    changes = {row["conc"]: row["change"] for row in rest}
    assert changes[seed_eval_rows[0]["conc"][0]] == pytest.approx(0.02) and changes[seed_eval_rows[3]["conc"][0]] == 0
    assert [row["change"] for row in rest] == sorted(row["change"] for row in rest)  # the largest drop first
    assert (
        first["topology"] == "1P1D · P tp8 ep8 dpa · D tp16 ep16 dpa"
    )  # the ladder's 480 point, from its meta_env.json

    markdown = run_cli("results", "compare", "--head", str(head), "--baseline", str(base)).stdout
    assert (
        "**Accuracy** (the floors infx ships (infx/config/eval-thresholds.yaml))" in markdown
        and "❌ below floor: **1**" in markdown
        and "❌ no score: **1**" in markdown
    )
    table = markdown[markdown.index("#### Accuracy\n") :]
    lines = [line for line in table.splitlines() if line.startswith("| ")][1:]
    assert (
        lines[0].startswith("| ❌ below floor | " + LADDER)
        and "| 90.50 ± " in lines[0]
        and "| 91.00 | +5.50 |" in lines[0]
    )
    assert markdown.index("#### Accuracy: eval points without a score") < markdown.index("#### Accuracy\n")


def test_a_score_without_a_main_eval_row_has_no_change(tmp_path, seed_eval_rows):
    head = sweep(tmp_path, "head", seed_eval_rows, {0: 0.95}, run_id=200)
    done = run_cli(
        "results", "compare", "--head", str(head), "--baseline", str(head.parent / "nothing.json"), "--format", "json"
    )
    assert done.returncode == 2  # a baseline file that does not exist: the command line's problem
    (tmp_path / "empty.json").write_text(json.dumps({"format": "infx-results/1", "rows": [], "points": []}))
    data = json.loads(
        run_cli(
            "results", "compare", "--head", str(head), "--baseline", str(tmp_path / "empty.json"), "--format", "json"
        ).stdout
    )
    [row] = data["accuracy"]["rows"]
    assert row["baseline"] is None and row["change"] is None and row["status"] == "ok"


def test_main_s_eval_rows_are_found_through_the_api_even_from_an_evals_only_sweep(tmp_path, seed_eval_rows):
    """main's newest sweep with eval rows of the config key (an evals-only sweep: no throughput rows)."""
    base = json.loads(sweep(tmp_path, "base", seed_eval_rows, {0: 0.92}, run_id=100).read_text())
    older = json.loads(sweep(tmp_path, "older", seed_eval_rows, {0: 0.80}, run_id=90).read_text())
    head = sweep(tmp_path, "head", seed_eval_rows, {0: 0.95}, run_id=200)
    with LocalGitHub() as server:
        for run_id, results in ((890, older), (900, base)):
            run = server.state.add_run(run_id, head_branch="main", event="push")
            run["conclusion"] = "success"
            server.state.add_artifact(run_id, RESULTS_ARTIFACT, files={"results.json": json.dumps(results)})
        saved = tmp_path / "baseline.json"
        done = run_cli(
            "results",
            "compare",
            "--head",
            str(head),
            "--format",
            "json",
            "--save-baseline",
            str(saved),
            env=env_for(server),
        )
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert [run["run-id"] for run in data["baseline"]["runs"]] == [900]
    [row] = data["accuracy"]["rows"]
    assert row["baseline"] == 0.92 and row["change"] == pytest.approx(0.03)
    assert len(json.loads(saved.read_text())["evals"]["rows"]) == 1  # the baseline's eval rows are kept for later


def test_thousands_of_eval_rows_fit_the_comment_with_the_failures_shown_and_the_cut_counted(seed_eval_rows):
    """3,000 eval rows: the Accuracy table is the largest, so it is cut first; what stays is its
    head, the failures; the comment stays under GitHub's 65,536 characters."""
    rows = []
    for n in range(3000):
        below = n % 500 == 0
        rows.append(
            {
                "status": "below" if below else "ok",
                "config-key": LADDER,
                "point-id": f"{n:016x}-c{n}",
                "model-prefix": "dsv4",
                "topology": "1P1D · P tp8 ep8 dpa · D tp16 ep16 dpa",
                "conc": n + 1,
                "task": "gsm8k",
                "score": 0.85 if below else 0.95,
                "score-name": "em_strict",
                "score-se": 0.008,
                "em-strict": 0.85 if below else 0.95,
                "em-flexible": 0.9,
                "floor": 0.91,
                "floor-source": "models.dsv4.gsm8k",
                "baseline": 0.93,
                "change": -0.08 if below else 0.02,
            }
        )
    rows.sort(key=lambda r: r["status"] != "below")
    accuracy = {
        "counts": {"missing": 0, "below": 6, "no-floor": 0, "no-metric": 0, "ok": 2994},
        "unscored": [],
        "rows": rows,
        "floors": "configs/eval-thresholds.yaml",
    }
    comparison = {
        "threshold": 0.05,
        "baseline": {"kind": "none"},
        "notices": [],
        "counts": {},
        "metrics": [],
        "matches": [],
        "new": [],
        "gone": [],
        "points": [],
        "accuracy": accuracy,
    }
    body = build_comment(SweepPlan.from_json(seed_eval_rows).buckets, None, comparison=comparison)
    assert len(body) <= COMMENT_LIMIT
    table = body[body.index("#### Accuracy\n") :]
    shown = [line for line in table.splitlines() if line.startswith("| ❌") or line.startswith("| ✅")]
    assert 6 < len(shown) < 3000
    assert all(line.startswith("| ❌ below floor") for line in shown[:6])
    assert f"_… and {3000 - len(shown)} more rows not shown (size limit)._" in table
    assert "❌ below floor: **6**" in body and "✅ at or above floor: **2994**" in body  # the counts are never cut


def test_the_step_summary_has_the_accuracy_section(tmp_path, seed_eval_rows):
    head = sweep(tmp_path, "head", seed_eval_rows, {0: 0.95, 1: 0.5}, run_id=200)
    comparison = tmp_path / "comparison.json"
    done = run_cli(
        "results",
        "compare",
        "--head",
        str(head),
        "--baseline",
        str(head),
        "--format",
        "json",
        "--output",
        str(comparison),
    )
    assert done.returncode == 0, done.stderr
    summary = run_cli("results", "summary", "--comparison", str(comparison))
    assert summary.returncode == 0, summary.stderr
    assert (
        "#### Accuracy" in summary.stdout and "| ❌ below floor | " in summary.stdout and "| +0.00 |" in summary.stdout
    )
