"""An agentic point's benchmark stage as `infx launch` sets it up (docs/launch.md, "Agentic points"):
the point's profile in the resolved recipe's benchmark.env, the repository checkout as the workspace
whose harness the recipe runs, and everything a recipe or point cannot take refused before any side effect.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
import yaml

from testing.cli import run_cli
from testing.launchkit import HARNESS, REPO, Workspace, add_harness, lane_profile, point, v1_recipe

FAST = {"DURATION": "1200", "AIPERF_WARMUP_REQUESTS_PER_LANE": "1"}


def infx(*argv: str, root: Path, cache: Path) -> subprocess.CompletedProcess:
    return run_cli(*argv, cwd=root, env={"GITHUB_WORKSPACE": str(root), "INFX_CACHE_DIR": str(cache)})


def planned_rows(tmp: Path, *labels: str) -> list[dict]:
    """Every bundled row planned as a manual dispatch (run-sweep.yml's path for rows), with ``labels``."""
    rows_file = tmp / "rows.json"
    done = infx("matrix", "--format", "json", "--output", str(rows_file), root=REPO, cache=tmp / "cache")
    assert done.returncode == 0, done.stderr
    flags = [arg for label in labels for arg in ("--label", label)]
    done = infx(
        "plan",
        "--rows",
        str(rows_file),
        "--event",
        "workflow_dispatch",
        *flags,
        "--no-reuse",
        "--format",
        "json",
        root=REPO,
        cache=tmp / "cache",
    )
    assert done.returncode == 0, done.stderr
    return [row for rows in json.loads(done.stdout)["buckets"].values() for row in rows]


def dry_run(row: dict, root: Path, tmp: Path) -> tuple[int, dict]:
    path = tmp / "point.json"
    path.write_text(json.dumps(row))
    done = infx("launch", "--point", str(path), "--dry-run", "--format", "json", root=root, cache=tmp / "cache")
    return done.returncode, json.loads(done.stdout)


def agentic_throughput(rows: list[dict]) -> list[dict]:
    return [row for row in rows if row.get("scenario-type") == "agentic-coding" and not row.get("eval-only")]


def test_every_bundled_agentic_row_runs_the_fast_profile_only_under_agentx_fast(harness_repo, tmp_path):
    fast_rows, normal_rows = (
        agentic_throughput(planned_rows(tmp_path, "agentx-fast")),
        agentic_throughput(planned_rows(tmp_path)),
    )
    assert len(fast_rows) == len(normal_rows) == 21  # dynamo-vllm 10, dynamo-trt 6, the Mooncake ladder 5
    for fast_row, normal_row in zip(fast_rows, normal_rows):
        code, fast = dry_run(fast_row, harness_repo, tmp_path)
        assert code == 0, fast
        env = fast["recipe"]["benchmark"]["env"]
        assert {name: env[name] for name in FAST} == FAST, fast_row["config-key"]
        assert {name: fast["agentic"]["benchmark-env"][name] for name in FAST} == FAST
        assert env["CONC"] == str(fast_row["conc"][0]) and env["CONC_LIST"] == " ".join(map(str, fast_row["conc"]))
        assert fast["agentic"]["harness"] == [HARNESS] and fast["environment"]["INFMAX_WORKSPACE"] == "<repository>"
        code, normal = dry_run(normal_row, harness_repo, tmp_path)
        assert code == 0, normal
        env = normal["recipe"]["benchmark"]["env"]
        assert env["DURATION"] == "3600" and "AIPERF_WARMUP_REQUESTS_PER_LANE" not in env, normal_row["config-key"]
        assert (
            normal["result-key"] != fast["result-key"]
            and normal["resolved-recipe-sha256"] != fast["resolved-recipe-sha256"]
        )


def test_this_repository_refuses_its_agentic_points_at_the_recipes_command(tmp_path):
    """It ships no AgentX harness: the dry run says so at the line of the recipe's command, and writes nothing."""
    [row] = [
        r
        for r in agentic_throughput(planned_rows(tmp_path, "agentx-fast"))
        if r["config-key"] == "dsv4-fp4-gb300-dynamo-sglang-agentic-disagg"
    ][:1]
    code, body = dry_run(row, REPO, tmp_path)
    assert code == 1 and body["ok"] is False
    [diag] = body["diagnostics"]
    assert (
        diag["rule"] == "agentic-harness-missing"
        and "has no file benchmarks/multi_node/agentic_srt.sh" in diag["message"]
    )
    line = (REPO / diag["file"]).read_text().splitlines()[diag["line"] - 1]
    assert line.strip() == "command: bash /infmax-workspace/benchmarks/multi_node/agentic_srt.sh"
    assert not (REPO / ".infx-launch").exists() and not list((tmp_path / "cache").glob("dry-runs"))


# --- a test lane: what a recipe or a point cannot take -------------------------------------------


@pytest.fixture
def ws(tmp_path):
    workspace = Workspace(tmp_path / "ws", lane_profile("https://example.invalid/srt-slurm.git", "c" * 40))
    add_harness(workspace.root)
    return workspace


def agentic_recipe(**env) -> dict:
    recipe = v1_recipe(command=f"bash /infmax-workspace/{HARNESS}")
    if env:
        recipe["benchmark"]["env"] = env
    return recipe


def plan(ws: Workspace, data: dict) -> tuple[int, dict]:
    return ws.dry_run(ws.point(data))


def test_the_point_replaces_the_profile_and_fills_in_only_the_identity_the_recipe_leaves_out(ws):
    ws.recipe("recipe.yaml", agentic_recipe(MODEL="served-name", DURATION="3600", CONC="9", RESULT_DIR="/logs/agentic"))
    code, body = plan(ws, point(agentic=True, conc=(4, 8), duration=1200, **{"warmup-requests-per-lane": 1}))
    assert code == 0, body
    assert body["recipe"]["benchmark"]["env"] == {
        "MODEL": "served-name",
        "DURATION": "1200",
        "CONC": "4",
        "RESULT_DIR": "/logs/agentic",
        "AIPERF_WARMUP_REQUESTS_PER_LANE": "1",
        "CONC_LIST": "4 8",
        "MODEL_PREFIX": "dsv4",
        "FRAMEWORK": "dynamo-sglang",
        "PRECISION": "fp4",
    }
    assert body["agentic"]["replaces"] == ["DURATION", "AIPERF_WARMUP_REQUESTS_PER_LANE", "CONC", "CONC_LIST"]
    assert "MODEL" not in body["agentic"]["benchmark-env"]  # the recipe's served name stays
    # the recipe file itself is untouched, and planning it again gives the same recipe
    source = yaml.safe_load((ws.root / "benchmarks/multi_node/srt-slurm-recipes/test/recipe.yaml").read_text())
    assert source["benchmark"]["env"]["DURATION"] == "3600"
    assert (
        plan(ws, point(agentic=True, conc=(4, 8), duration=1200, **{"warmup-requests-per-lane": 1}))[1]["recipe"]
        == body["recipe"]
    )


def test_a_fixed_seq_len_or_eval_only_point_gets_no_agentic_profile(ws):
    ws.recipe("recipe.yaml", agentic_recipe())
    code, body = plan(ws, point())
    assert code == 0 and body["agentic"] is None and "env" not in body["recipe"]["benchmark"]
    assert body["environment"]["INFMAX_WORKSPACE"] == "<output dir>"


@pytest.mark.parametrize(
    "recipe, where, says",
    [
        (
            v1_recipe(command="true", benchmark={"type": "sa-bench", "isl": 8, "osl": 8}),
            ("benchmark", "type"),
            "benchmark.type 'sa-bench'",
        ),
        ({**v1_recipe(), "benchmark": None}, (), "no benchmark block"),
        (
            agentic_recipe(AIPERF_EXPERIMENTAL_FAST="1"),
            ("benchmark", "env", "AIPERF_EXPERIMENTAL_FAST"),
            "replace the point's duration and warm-up",
        ),
        (
            {**v1_recipe(), "benchmark": {"type": "custom", "command": "bash /x.sh", "env": ["DURATION=1"]}},
            ("benchmark", "env"),
            "not a mapping",
        ),
        (
            {**v1_recipe(), "benchmark": {"type": "custom", "command": "bash '/infmax-workspace/x.sh"}},
            ("benchmark", "command"),
            "cannot be read as shell words",
        ),
    ],
)
def test_a_recipe_that_cannot_take_the_profile_is_refused_at_its_key(ws, recipe, where, says):
    ws.recipe("recipe.yaml", recipe)
    code, body = plan(ws, point(agentic=True))
    assert code == 1, body
    [diag] = [d for d in body["diagnostics"] if d["rule"] == "recipe-agentic-benchmark"]
    assert says in diag["message"] and diag["file"] == "benchmarks/multi_node/srt-slurm-recipes/test/recipe.yaml"
    text = (ws.root / diag["file"]).read_text().splitlines()
    key = where[-1] if where else None
    assert key is None or text[diag["line"] - 1].strip().startswith(f"{key}:"), (diag, text)


@pytest.mark.parametrize(
    "command, setup, says",
    [
        (
            "bash /infmax-workspace/benchmarks/multi_node/missing.sh",
            None,
            "has no file benchmarks/multi_node/missing.sh",
        ),
        ("bash /infmax-workspace/../etc/passwd", None, ".."),
        (f"bash /infmax-workspace/{HARNESS}", "outside", "outside"),  # the harness is a link out of the checkout
        (f"bash /infmax-workspace/{HARNESS}", "folder", f"has no file {HARNESS}"),
    ],
)
def test_a_harness_the_checkout_does_not_hold_is_refused(ws, tmp_path, command, setup, says):
    target = ws.root / HARNESS
    if setup == "outside":
        (tmp_path / "elsewhere.sh").write_text("echo elsewhere\n")
        target.unlink()
        target.symlink_to(tmp_path / "elsewhere.sh")
    elif setup == "folder":
        target.unlink()
        target.mkdir()
    ws.recipe("recipe.yaml", v1_recipe(command=command))
    code, body = plan(ws, point(agentic=True))
    assert code == 1, body
    [diag] = body["diagnostics"]
    assert diag["rule"] == "agentic-harness-missing" and says in diag["message"]
    assert (ws.root / diag["file"]).read_text().splitlines()[diag["line"] - 1].strip().startswith("command:")


@pytest.mark.parametrize(
    "fields, field, says",
    [
        ({"duration": 0}, "duration", "duration is 0"),
        ({"warmup-requests-per-lane": 0}, "warmup-requests-per-lane", "warmup-requests-per-lane is 0"),
        ({"conc": [4, 0]}, "conc", "conc is [4, 0]"),
        ({"conc": []}, "conc", "conc is []"),
        ({"duration": 2**63 - 1, "conc": [2**63 - 1]}, None, None),  # within the point's limits: taken as it is
        ({"model": "a model; rm -rf /"}, "model", "model (MODEL)"),
    ],
)
def test_a_point_value_the_benchmark_cannot_take_is_refused_at_its_field(ws, fields, field, says):
    ws.recipe("recipe.yaml", agentic_recipe())
    path = ws.point(point(agentic=True, **fields))
    code, body = ws.dry_run(path)
    if field is None:
        assert code == 0 and body["recipe"]["benchmark"]["env"]["DURATION"] == str(2**63 - 1), body
        return
    assert code == 1, body
    [diag] = body["diagnostics"]
    assert diag["rule"] in ("point-agentic-profile", "point-shape") and says in diag["message"], diag
    assert path.read_text().splitlines()[diag["line"] - 1].strip().startswith(f'"{field}"')


def test_an_agentic_point_without_a_duration_is_refused(ws):
    ws.recipe("recipe.yaml", agentic_recipe())
    data = point(agentic=True)
    del data["duration"]
    code, body = plan(ws, data)
    assert code == 1 and [d["rule"] for d in body["diagnostics"]] == ["point-agentic-profile"], body
    assert "no duration" in body["diagnostics"][0]["message"]


def test_an_agentic_point_cannot_run_its_eval_after_the_benchmark(ws):
    ws.recipe("recipe.yaml", agentic_recipe())
    code, body = plan(ws, point(agentic=True, **{"run-eval": True}))
    assert code == 1 and "agentic-eval-after-benchmark" in [d["rule"] for d in body["diagnostics"]], body
    only = point(agentic=True, **{"run-eval": True, "eval-only": True})  # the eval alone runs no AgentX benchmark
    code, body = plan(ws, only)
    assert code == 0 and body["agentic"] is None, body


# --- the aggregates: written into the checkout by the job, moved into the output by the launch ------


@pytest.fixture
def folders(tmp_path) -> tuple[Path, Path, Path]:
    """The repository checkout the job writes into, the launch's output folder, and a file of the
    runner host outside both (what a planted link would point to)."""
    workspace, out, secret = tmp_path / "checkout", tmp_path / "out", tmp_path / "secret.txt"
    workspace.mkdir()
    out.mkdir()
    secret.write_text("a file of the runner host")
    return workspace, out, secret


def test_aggregates_move_from_the_checkout_into_the_output_and_nothing_else_is_followed(folders):
    from infx.launch import agentic

    workspace, out, secret = folders
    (workspace / "RF_conc4.json").write_text('{"conc": 4}')
    (workspace / "RF_conc8.json").symlink_to(secret)
    os.mkfifo(workspace / "RF_conc16.json")
    (workspace / "other_conc4.json").write_text("another point's")
    skipped = agentic.stage_aggregates(workspace, out, "RF", [4, 8, 16, 32])
    assert (out / "RF_conc4.json").read_text() == '{"conc": 4}' and not (workspace / "RF_conc4.json").exists()
    assert sorted(p.name for p in out.iterdir()) == ["RF_conc4.json"]  # the link and the FIFO stay where they are
    assert skipped == [
        "RF_conc8.json: not a regular file in the workspace, not followed or staged",
        "RF_conc16.json: not a regular file in the workspace, not followed or staged",
    ]
    assert (workspace / "other_conc4.json").exists()  # only this point's files are touched


def test_an_earlier_launch_s_aggregate_is_removed_before_submission_never_staged(folders):
    from infx.launch import agentic

    workspace, out, secret = folders
    (workspace / "RF_conc4.json").write_text("stale")
    (workspace / "RF_conc8.json").symlink_to(secret)
    removed = agentic.clear_stale(workspace, out, "RF", [4, 8, 16])
    assert (
        sorted(p.name for p in workspace.iterdir()) == [] and secret.read_text() == "a file of the runner host"
    )  # a link is removed, not its target
    assert removed == [
        "RF_conc4.json: an earlier launch's aggregate, removed from the workspace before submission",
        "RF_conc8.json: an earlier launch's aggregate, removed from the workspace before submission",
    ]
    assert agentic.stage_aggregates(workspace, out, "RF", [4, 8, 16]) == [] and list(out.iterdir()) == []
    (out / "RF_conc4.json").write_text("the output dir is the workspace")  # --output-dir at the checkout itself
    assert agentic.clear_stale(out, out, "RF", [4]) == [] and agentic.stage_aggregates(out, out, "RF", [4]) == []
    assert (out / "RF_conc4.json").read_text() == "the output dir is the workspace"


def test_the_text_dry_run_says_the_profile_and_the_harness(ws):
    ws.recipe("recipe.yaml", agentic_recipe(MODEL="served-name"))
    done = ws.infx(
        "launch",
        "--lane",
        "testlane",
        "--point",
        str(ws.point(point(agentic=True, duration=1200, **{"warmup-requests-per-lane": 1}))),
        "--dry-run",
    )
    assert done.returncode == 0, done.stderr
    [line] = [line for line in done.stdout.splitlines() if line.startswith("agentic ")]
    assert "DURATION=1200 AIPERF_WARMUP_REQUESTS_PER_LANE=1 CONC=4 CONC_LIST=4" in line
    assert " MODEL=" not in line and "MODEL_PREFIX=dsv4" in line  # the recipe names its served model itself
    assert f"harness {HARNESS} in the repository checkout" in line
    assert "INFMAX_WORKSPACE=<repository>" in done.stdout
