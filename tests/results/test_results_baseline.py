"""The baseline finder over real HTTP: PyGithub against tests/testing/github_server.py.

The newest successful run of run-sweep.yml on main with results for the same config keys,
read from its `sweep-results` artifact (results.json in a zip, through the redirect to blob
storage GitHub answers with); failed runs, other branches and expired artifacts are skipped.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from infx.results.render import FORMAT  # noqa: E402
from infx.workflows.baseline import RESULTS_ARTIFACT, find_baseline  # noqa: E402
from infx.workflows.github.client import Connection, Settings  # noqa: E402
from testing.cli import run_cli  # noqa: E402
from testing.github_helpers import env_for  # noqa: E402
from testing.github_server import SLUG, LocalGitHub  # noqa: E402
from testing.ladder import LADDER, SEED_FIGURES, VLLM_DISAGG, ladder_results  # noqa: E402


def results_zip(rows: list[dict]) -> dict:
    return {"results.json": json.dumps({"format": FORMAT, "rows": rows, "points": []}), "charts.md": "_No rows._\n"}


def add_sweep(server, run_id: int, rows: list[dict], branch="main", conclusion="success", expired=False) -> None:
    run = server.state.add_run(run_id, head_branch=branch, event="push" if branch == "main" else "pull_request")
    run["conclusion"] = conclusion
    server.state.add_artifact(run_id, RESULTS_ARTIFACT, expired=expired, files=results_zip(rows))
    server.state.add_artifact(run_id, "point-abc-c4")


@pytest.fixture
def sweeps(tmp_path):
    baseline = json.loads(Path(ladder_results(tmp_path, "baseline")).read_text())["rows"]
    head = ladder_results(tmp_path, "head")
    other = [dict(r, **{"config-key": VLLM_DISAGG}) for r in baseline]
    stale = [dict(r, request_metrics={"throughput": {"per_gpu": {"total_tput_tps": 1.0}}}) for r in baseline]
    with LocalGitHub() as server:
        add_sweep(server, 900, baseline)  # the one to find for the ladder
        add_sweep(server, 910, stale, conclusion="failure")
        add_sweep(server, 920, stale, branch="feature")
        add_sweep(server, 930, stale, expired=True)
        add_sweep(server, 950, other)  # newest, but only another config key
        yield server, head


def test_finder_takes_each_config_key_from_the_newest_successful_main_run(sweeps):
    server, _ = sweeps
    settings = Settings(token="ghs_test", base_url=server.url, pace=False)
    found = find_baseline(SLUG, [LADDER, VLLM_DISAGG], Connection(settings=settings))
    assert [(r["run-id"], r["config-keys"]) for r in found.source["runs"]] == [(950, [VLLM_DISAGG]), (900, [LADDER])]
    assert found.notices == []
    assert {r["config-key"] for r in found.rows} == {LADDER, VLLM_DISAGG} and len(found.rows) == 6
    listed = server.state.requests_to("GET", rf"/repos/{SLUG}/actions/workflows/run-sweep\.yml/runs")
    assert listed and listed[0].query["branch"] == ["main"] and listed[0].query["status"] == ["success"]
    downloads = server.state.requests_to("GET", r"/blob-storage/\d+\.zip")
    assert len(downloads) == 2  # 950 and 900; failed, feature-branch and expired runs are never downloaded


def test_compare_against_the_found_baseline_gives_the_seed_figures(sweeps):
    server, head = sweeps
    done = run_cli("results", "compare", "--head", head, env=env_for(server))
    assert done.returncode == 0, done.stderr
    assert (
        "the newest successful sweep on `main` per config key (runs [900](https://github.com/acme/bench/actions/runs/900))"
        in done.stdout
    )
    for tput, ttft in SEED_FIGURES.values():
        assert f"({tput} 🔺)" in done.stdout and f"({ttft} 🔺)" in done.stdout
    saved = Path(head).parent / "found-baseline.json"
    pinned = run_cli(
        "results",
        "compare",
        "--head",
        head,
        "--baseline-run",
        "900",
        "--format",
        "json",
        "--save-baseline",
        str(saved),
        env=env_for(server),
    )
    assert pinned.returncode == 0, pinned.stderr
    kept = json.loads(saved.read_text())
    assert len(kept["rows"]) == 3 and kept["baseline"]["run-id"] == 900  # what `plot --baseline` then reads
    data = json.loads(pinned.stdout)
    assert data["baseline"]["kind"] == "run" and data["baseline"]["run-id"] == 900 and data["counts"]["improved"] == 3


def test_no_baseline_is_a_notice_not_a_failure(sweeps):
    server, head = sweeps
    server.state.runs.clear()
    done = run_cli("results", "compare", "--head", head, "--fail-on-regression", env=env_for(server))
    assert done.returncode == 0, done.stderr
    assert f"notice: no successful run-sweep.yml run on main among the newest 0 has results for {LADDER}" in done.stderr
    assert "Baseline: none found." in done.stdout and "new: **3**" in done.stdout
    missing_run = run_cli("results", "compare", "--head", head, "--baseline-run", "930", env=env_for(server))
    assert (
        missing_run.returncode == 0
        and "notice: no baseline: " in missing_run.stderr
        and "HTTP 404" in missing_run.stderr
    )
    assert "Traceback" not in missing_run.stderr and "new: **3**" in missing_run.stdout


def test_an_expired_pinned_run_is_a_notice(sweeps):
    server, head = sweeps
    done = run_cli("results", "compare", "--head", head, "--baseline-run", "930", env=env_for(server))
    assert done.returncode == 0, done.stderr
    assert "run 930 has no readable `sweep-results` artifact" in done.stderr


@pytest.mark.parametrize(
    "status, body, says",
    [
        (502, {"message": "Bad Gateway"}, "HTTP 502"),  # a burst longer than the read retries
        (403, {"message": "Resource not accessible by integration"}, "HTTP 403"),
    ],
)
def test_a_baseline_lookup_github_refuses_is_a_notice_and_the_results_still_come_out(
    sweeps, tmp_path, status, body, says
):
    """The step that collects and compares never fails because of the baseline: the comparison
    is written, every row new, with the reason in its Markdown (the step summary and comment)."""
    from testing.github_server import Fault

    server, head = sweeps

    def refuse() -> None:  # every try of the runs listing, however many the client makes
        server.state.faults[:] = [Fault("GET", r".*/actions/workflows/.*/runs", status, body) for _ in range(50)]

    refuse()
    out = tmp_path / "comparison.md"
    done = run_cli(
        "results",
        "compare",
        "--head",
        head,
        "--fail-on-regression",
        "--output",
        str(out),
        env={**env_for(server), "INFX_GITHUB_MAX_WAIT": "0"},
    )
    assert done.returncode == 0, done.stderr
    assert "notice: no baseline: " in done.stderr and says in done.stderr and "Traceback" not in done.stderr
    markdown = out.read_text()
    assert "> **Notice:** no baseline: " in markdown and says in markdown and "new: **3**" in markdown
    refuse()
    summary = run_cli(
        "results", "compare", "--head", head, "--format", "json", env={**env_for(server), "INFX_GITHUB_MAX_WAIT": "0"}
    )
    assert summary.returncode == 0 and json.loads(summary.stdout)["baseline"] == {"kind": "none"}
