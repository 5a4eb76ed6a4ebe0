"""The workflow wiring of the results, run for real: run-point's artifact name follows the
result check, and run-sweep's `results` job script (collect, compare with the baseline found
through the API, plot, summary) runs with the real infx against the local GitHub server."""

from __future__ import annotations

import json
from pathlib import Path

from infx.workflows.baseline import RESULTS_ARTIFACT  # noqa: E402
from testing.executor import (  # noqa: E402
    WORKFLOWS,
    Engine,  # noqa: E402
    load,
    run_step,
)
from testing.github_server import SLUG, LocalGitHub  # noqa: E402
from testing.ladder import SEED_FIGURES, ladder_folders, ladder_results  # noqa: E402


def test_an_invalid_result_fails_the_point_and_names_its_artifact_failed():
    """Evaluated by GitHub's own evaluator: the check runs unless dry or the lane had no node up, and
    its failure (or a launch that failed or never ran) names the artifact `-failed`."""
    assert (
        "infx results collect"
        in next(s for s in load("run-point.yml")["jobs"]["launch"]["steps"] if s.get("id") == "results")["run"]
    )
    engine = Engine()
    try:
        steps = engine.parse(WORKFLOWS / "run-point.yml")["jobs"]["launch"]["steps"]
        check = next(s for s in steps if s.get("id") == "results")
        status = {"success": True}
        up, down = ({"lane": {"outputs": {"up": value}}} for value in ("true", "false"))
        assert engine.condition(check["if"], {"inputs": {"dry-run": False}, "steps": up}, status)
        assert not engine.condition(check["if"], {"inputs": {"dry-run": True}, "steps": {}}, status)
        assert not engine.condition(check["if"], {"inputs": {"dry-run": False}, "steps": down}, status)
        naming = next(s for s in steps if s.get("id") == "artifact")
        for launch, results, suffix in (
            ("success", "success", ""),
            ("success", "failure", "-failed"),
            ("failure", "skipped", "-failed"),
            ("skipped", "skipped", "-failed"),
        ):
            ctx = {"steps": {"launch": {"outcome": launch}, "results": {"outcome": results}}}
            assert engine.value(naming["env"]["OUTCOME"], ctx) == suffix
        upload = next(s for s in steps if "upload-artifact" in s.get("uses", ""))
        assert (
            engine.value(upload["with"]["name"], {"steps": {"artifact": {"outputs": {"name": "point-abc-failed"}}}})
            == "point-abc-failed"
        )
    finally:
        engine.close()


def test_the_sweeps_results_job_script_runs_for_real(tmp_path):
    job = load("run-sweep.yml")["jobs"]["results"]
    scripts = [
        s["run"] for s in job["steps"] if s.get("id") in ("collect", "compare", "plot") or s.get("name") == "Summarise"
    ]
    assert len(scripts) == 4
    upload = next(s for s in job["steps"] if "upload-artifact" in s.get("uses", ""))
    assert upload["with"]["name"] == RESULTS_ARTIFACT
    # The head sweep as the download step leaves it: one folder per point artifact.
    ladder_folders(tmp_path / "points", "head")
    baseline_rows = json.loads(Path(ladder_results(tmp_path / "b", "baseline")).read_text())["rows"]
    summary = tmp_path / "summary.md"
    with LocalGitHub() as server:
        run = server.state.add_run(900)
        run["conclusion"] = "success"
        server.state.add_artifact(900, RESULTS_ARTIFACT, files={"results.json": json.dumps({"rows": baseline_rows})})
        for script in scripts:  # the steps in order, as the runner runs them
            done = run_step(
                script,
                tmp_path,
                {
                    "GITHUB_TOKEN": "ghs_test",
                    "GITHUB_API_URL": server.url,
                    "GITHUB_REPOSITORY": SLUG,
                    "GITHUB_RUN_ID": "901",
                    "GITHUB_STEP_SUMMARY": str(summary),
                },
            )
            assert done.returncode == 0, done.stderr
    out = tmp_path / "sweep-results"
    assert {p.name for p in out.iterdir()} == {"results.json", "comparison.json", "baseline.json", "charts"}
    assert len(list((out / "charts").glob("*.png"))) == 1
    text = summary.read_text()
    for tput, ttft in SEED_FIGURES.values():
        assert f"({tput} 🔺)" in text and f"({ttft} 🔺)" in text
    assert "\nxychart-beta\n" in text and "runs [900]" in text
