"""Every check of a launch runs before any side effect and yields a located diagnostic."""

import datetime as dt
import json
import os
from pathlib import Path

import pytest
import yaml

from infx.diagnostics import InfxError
from infx.launch.lane import load_lane
from infx.launch.plan import plan_point
from infx.launch.pointfile import load_point
from testing.cli import run_cli
from testing.launchkit import REPO, Workspace, lane_profile, point, schema2_recipe, store, v1_recipe

TODAY = dt.date(2026, 11, 30)


@pytest.fixture
def ws(tmp_path):
    return Workspace(tmp_path, lane_profile("file:///nonexistent", "a" * 40))


def plan_of(ws, data, env=None):
    path = ws.point(data)
    return plan_point(load_lane("testlane", ws.root), load_point(str(path), {}), ws.root, env=env or {}, today=TODAY)


def problems(ws, data, env=None):
    with pytest.raises(InfxError) as caught:
        plan_of(ws, data, env)
    return caught.value.diagnostics


def test_plan_resolves_one_flat_recipe_named_after_the_job(ws):
    ws.recipe("recipe.yaml", v1_recipe())
    plan = plan_of(ws, point(), env={"RUNNER_NAME": "testlane_1"})
    assert plan.recipe["name"] == "testlane_1" and plan.job_name == "testlane_1"
    assert plan.argv() == [
        "srtctl",
        "apply",
        "-f",
        "recipes/infx-resolved/testlane_1.yaml",
        "--tags",
        "testlane,dsv4,fp4,8x8,20261130",
    ]
    assert plan.node_count == 2 and plan.sources == [] and plan.route.name == "fixed"


def test_a_selector_materialises_its_variant_and_an_index_out_of_range_is_refused(ws):
    base = v1_recipe()
    ws.recipe(
        "ladder.yaml",
        {
            "base": base,
            "zip_override_lowlat": {
                "resources": {"decode_nodes": [1, 1], "decode_workers": [1, 1]},
                "slurm": {"time_limit": ["1:00", "2:00"]},
            },
        },
    )
    plan = plan_of(ws, point("recipes/test/ladder.yaml:zip_override_lowlat[1]"))
    assert plan.recipe["slurm"]["time_limit"] == "2:00" and "base" not in plan.recipe
    bad = problems(ws, point("recipes/test/ladder.yaml:zip_override_lowlat[2]"))
    assert [d.rule for d in bad] == ["recipe-selector"] and "out of range" in bad[0].message and bad[0].line


def test_recipe_missing_and_config_file_missing(ws):
    ws.recipe("unrelated.yaml", v1_recipe())
    [d] = problems(ws, point("recipes/test/nope.yaml"))
    assert d.rule == "recipe-missing" and d.file.endswith("point.json") and d.line
    data = point()
    data["prefill"]["additional-settings"] = []
    [d] = problems(ws, data)
    assert d.rule == "point-config-file" and "model-prefix=dsv4 precision=fp4 framework=dynamo-sglang" in d.message


def test_eval_config_file_and_slurm_partition_override_the_recipe_and_partition(ws):
    ws.recipe("recipe.yaml", v1_recipe())
    ws.recipe("eval.yaml", v1_recipe(time_limit="3:00"))
    data = point()
    data["prefill"]["additional-settings"] += [
        "EVAL_ONLY=true",
        "EVAL_CONFIG_FILE=recipes/test/eval.yaml",
        "SLURM_PARTITION=batch_3",
    ]
    plan = plan_of(ws, data)
    assert plan.recipe["slurm"]["time_limit"] == "3:00" and plan.partition == "batch_3"
    assert plan.cluster_config("/x", "/sq")["default_partition"] == "batch_3"


def test_an_unknown_model_fails_at_plan_time(ws):
    ws.recipe("recipe.yaml", v1_recipe())
    diagnostics = problems(ws, point(precision="fp8"))
    assert "lane-unsupported-model" in {d.rule for d in diagnostics}
    assert any("Unsupported model: dsv4-fp8" in d.message for d in diagnostics)


def test_the_cluster_config_has_exactly_one_model_alias(ws):
    ws.recipe("recipe.yaml", v1_recipe())
    config = plan_of(ws, point()).cluster_config("/ckout", "/sq/x.sqsh")
    assert config["model_paths"] == {"deepseek-v4-pro": "/models/dsv4"}
    assert config["containers"] == {"dynamo-sglang": "/sq/x.sqsh", "lmsysorg/sglang:v0.5.14-cu130": "/sq/x.sqsh"}
    assert config["use_segment_sbatch_directive"] is False and config["gpus_per_node"] == 4


def test_the_squash_file_is_named_after_the_image(ws):
    ws.recipe("recipe.yaml", v1_recipe())
    plan = plan_of(ws, point(image="lmsysorg/sglang:nightly-dev-cu13-20260719-99f5a6f4"))
    assert Path(plan.squash_file()).name == "lmsysorg_sglang_nightly-dev-cu13-20260719-99f5a6f4.sqsh"


@pytest.mark.parametrize("image", ["", "Has Spaces:1", "repo:tag:tag", "UPPER/case"])
def test_invalid_image(ws, image):
    ws.recipe("recipe.yaml", v1_recipe())
    assert "point-image" in {d.rule for d in problems(ws, point(image=image))}


@pytest.mark.parametrize(
    "mutate, field",
    [
        (lambda p: p["prefill"].update({"num-worker": 2}), "num-worker"),
        (lambda p: p["decode"].update({"tp": 8}), "tp"),
        (lambda p: p["decode"].update({"ep": 4}), "ep"),
        (lambda p: p["prefill"].update({"dp-attn": True}), "dp-attn"),
    ],
)
def test_point_recipe_topology_agreement(ws, mutate, field):
    ws.recipe("recipe.yaml", v1_recipe())
    data = point()
    mutate(data)
    [d] = problems(ws, data)
    assert d.rule == "point-recipe-mismatch" and field in d.message and d.file.endswith("point.json") and d.line


def test_node_count_includes_dedicated_infra_node(ws):
    ws.recipe("recipe.yaml", v1_recipe(infra={"etcd_nats_dedicated_node": True}))
    assert plan_of(ws, point(**{"node-count": 3})).node_count == 3
    [d] = problems(ws, point(**{"node-count": 2}))
    assert d.rule == "point-recipe-nodes" and "3" in d.message


def test_model_alias_image_and_dynamo_version(ws):
    recipe = v1_recipe(dynamo={"install": True, "wheel": "1.3.0"})
    recipe["model"] = {"path": "other-alias", "container": "some/other:image", "precision": "fp4"}
    ws.recipe("recipe.yaml", recipe)
    rules = {d.rule: d for d in problems(ws, point(router={"name": "dynamo-router", "version": "1.4.0"}))}
    assert set(rules) == {"recipe-model-alias", "recipe-image", "recipe-dynamo-version"}
    assert all(d.file.endswith("recipe.yaml") and d.line for d in rules.values())
    ws.recipe("recipe.yaml", v1_recipe(dynamo={"install": True, "wheel": "1.3.0"}))
    assert plan_of(ws, point(router={"name": "dynamo-router", "version": "v1.3.0"})).recipe


def test_schema2_mooncake_ladder_passes(ws):
    ws.recipe("recipe.yaml", schema2_recipe())
    plan = plan_of(ws, point())
    assert plan.node_count == 3  # 1 prefill + 1 decode + the dedicated benchmark node


def test_store_service_without_mooncake_device_is_named(ws):
    ws.recipe("recipe.yaml", schema2_recipe(services=[store("store-a", 8800), store("store-b", 8801, device=None)]))
    [d] = problems(ws, point())
    assert d.rule == "lane-store-client-env" and "'store-b'" in d.message and "MOONCAKE_DEVICE" in d.message
    assert d.file.endswith("recipe.yaml") and d.line


def test_prefill_role_without_mooncake_device_is_named(ws):
    ws.recipe("recipe.yaml", schema2_recipe(prefill_env={"OTHER": "1"}))
    [d] = problems(ws, point())
    assert d.rule == "lane-store-client-env" and "role 'prefill'" in d.message


def test_stores_sharing_a_node_need_distinct_ports(ws):
    ws.recipe(
        "recipe.yaml", schema2_recipe(services=[store("store-0", 8800), store("store-1", 8801), store("store-2", 8800)])
    )
    [d] = problems(ws, point())
    assert (
        d.rule == "lane-service-port" and "'store-0'" in d.message and "'store-2'" in d.message and "8800" in d.message
    )


def test_the_power_guard_reads_only_the_telemetry_block(ws):
    telemetry = {"enabled": True, "provider": "dcgm-power"}
    ws.recipe("recipe.yaml", v1_recipe(telemetry=telemetry))
    profile = lane_profile("file:///x", "a" * 40)
    profile["routes"].append(
        {"name": "vllm", "match": {"scenario": "fixed-seq-len", "framework": "dynamo-vllm"}, "srt-slurm": "standin"}
    )
    ws.write_profile(profile)
    rules = {d.rule for d in problems(ws, point(framework="dynamo-vllm"))}
    assert rules == {"lane-power-framework"}
    ws.recipe("recipe.yaml", v1_recipe(benchmark={"command": "true", "enabled": True, "provider": "dcgm-power"}))
    assert plan_of(ws, point(framework="dynamo-vllm")).power is False


def test_collects_every_problem_at_once(ws):
    recipe = v1_recipe()
    recipe["model"]["path"] = "wrong"
    ws.recipe("recipe.yaml", recipe)
    data = point(image="Bad Image")
    data["decode"]["tp"] = 2
    assert {d.rule for d in problems(ws, data)} == {"point-image", "point-recipe-mismatch", "recipe-model-alias"}


def test_overlay_folder_must_exist(ws):
    ws.recipe("recipe.yaml", v1_recipe(), folder="elsewhere")
    [d] = problems(ws, point("recipes/elsewhere/recipe.yaml"))
    assert d.rule == "lane-overlay-missing" and d.file.endswith("testlane.yaml") and d.line


def test_recipe_from_srt_slurm_is_deferred_and_said_so(ws):
    ws.recipe("unrelated.yaml", v1_recipe())
    code, body = ws.dry_run(ws.point(point("recipes/upstream/big.yaml")))
    assert code == 0 and body["recipe"] is None
    assert (
        body["recipe-source"]["origin"] == "srt-slurm"
        and "after srt-slurm checkout" in body["recipe-source"]["checked"]
    )
    assert any(w["rule"] == "recipe-deferred" for w in body["warnings"])


def test_a_recipe_from_srt_slurm_that_enables_power_is_refused_after_checkout(ws, tmp_path):
    # The route (and so the power route) is chosen before the checkout exists; a power recipe found only
    # in the checkout cannot have been routed for power, so it is refused where it is switched on.
    from infx.launch.checkout import resolve_in_checkout

    ws.recipe("unrelated.yaml", v1_recipe())
    plan = plan_of(ws, point("recipes/upstream/power.yaml"))
    assert plan.recipe is None and plan.power is False
    checkout = tmp_path / "checkout"
    (checkout / "recipes/upstream").mkdir(parents=True)
    (checkout / "recipes/upstream/power.yaml").write_text(
        yaml.safe_dump(v1_recipe(telemetry={"enabled": True, "provider": "dcgm-power"}), sort_keys=False)
    )
    with pytest.raises(InfxError) as caught:
        resolve_in_checkout(plan, checkout)
    (problem,) = caught.value.diagnostics
    telemetry_line = (checkout / "recipes/upstream/power.yaml").read_text().splitlines().index("telemetry:") + 1
    assert problem.rule == "recipe-power-deferred" and (problem.file, problem.line) == (
        "standin:recipes/upstream/power.yaml",
        telemetry_line,
    )
    assert "Keep power recipes in this repository" in problem.hint and plan.recipe is None


def test_a_recipe_that_gives_no_node_count_is_recipe_nodes_at_its_resources(ws):
    recipe = v1_recipe()
    del recipe["resources"]["prefill_nodes"], recipe["resources"]["decode_nodes"]
    ws.recipe("recipe.yaml", recipe)
    code, body = ws.dry_run(ws.point(point()))
    assert code == 1
    found = [d for d in body["diagnostics"] if d["rule"] == "recipe-nodes"]
    assert (
        len(found) == 1
        and found[0]["message"] == "the recipe declares no node counts"
        and "prefill_nodes + decode_nodes" in found[0]["hint"]
    )
    text = (ws.root / "benchmarks/multi_node/srt-slurm-recipes/test/recipe.yaml").read_text()
    assert (
        found[0]["file"].endswith("test/recipe.yaml") and found[0]["line"] == text.splitlines().index("resources:") + 1
    )


def test_dry_run_json_keys_and_failure_shape(ws):
    ws.recipe("recipe.yaml", v1_recipe())
    code, body = ws.dry_run(ws.point(point()))
    assert code == 0
    assert {"route", "sources", "srt-slurm", "recipe", "argv", "node-count"} <= set(body)
    assert (
        body["sources"] == [] and body["srt-slurm"]["commit"] == "a" * 40 and body["recipe"]["name"].startswith("infx-")
    )
    code, body = ws.dry_run(ws.point(point(image="no good")))
    assert code == 1 and body["ok"] is False and body["diagnostics"][0]["rule"] == "point-image"


def test_point_from_env_and_usage_errors(ws):
    ws.recipe("recipe.yaml", v1_recipe())
    done = ws.infx(
        "launch", "--lane", "testlane", "--dry-run", "--format", "json", env={"POINT_JSON": json.dumps(point())}
    )
    assert done.returncode == 0 and json.loads(done.stdout)["route"] == "fixed"
    assert ws.infx("launch", "--lane", "testlane", "--point", "missing.json", "--dry-run").returncode == 2
    assert ws.infx("launch", "--lane", "nolane", "--point", str(ws.point(point())), "--dry-run").returncode == 2
    # Without --lane the lane comes from the point's runner label; RUNNER_NAME only names the job.
    done = ws.infx(
        "launch",
        "--point",
        str(ws.point(point())),
        "--dry-run",
        "--format",
        "json",
        env={"RUNNER_NAME": "other-lane_0"},
    )
    assert (
        done.returncode == 0
        and json.loads(done.stdout)["job-name"] == "other-lane_0"
        and json.loads(done.stdout)["lane"] == "testlane"
    )
    done = ws.infx(
        "launch", "--point", str(ws.point(point(runner="testlan"))), "--dry-run", env={"RUNNER_NAME": "testlane_0"}
    )
    assert (
        done.returncode == 2
        and "runner label 'testlan' names no lane" in done.stderr
        and "testlane: testlane" in done.stderr
    )


def test_unresolved_pin_is_refused_before_any_side_effect(tmp_path):
    ws = Workspace(tmp_path, lane_profile("file:///nonexistent", None))
    ws.recipe("recipe.yaml", v1_recipe())
    done = ws.infx(
        "launch", "--lane", "testlane", "--point", str(ws.point(point())), "--output-dir", str(tmp_path / "out")
    )
    # The profile itself is invalid: located at the pin's commit, with the command that fills it in.
    commit_line = (tmp_path / "runners/testlane.yaml").read_text().splitlines().index("      commit: null") + 1
    assert done.returncode == 1 and f"runners/testlane.yaml:{commit_line}:" in done.stderr
    assert (
        "error[lane-schema]: srt-slurm.pins.standin.commit" in done.stderr
        and "infx lane pins LANE --update" in done.stderr
    )
    assert not (tmp_path / ".cache").exists() and not (tmp_path / "out").exists()
    # Defence in depth: a plan whose pin has no SHA (a profile built in code) never launches.
    from dataclasses import replace

    from infx.launch.run import launch_point
    from infx.results.artifact import judge

    ws.write_profile(lane_profile("file:///nonexistent", "a" * 40))
    plan = plan_of(ws, point())
    plan.pin = replace(plan.pin, commit=None)
    assert (
        launch_point(
            plan,
            tmp_path / "out",
            ws.root,
            judge=judge,
            env={"INFX_CACHE_DIR": str(tmp_path / ".cache"), "PATH": os.environ["PATH"]},
        )
        == 1
    )
    record = json.loads(next((tmp_path / "out").glob("*_launch.json")).read_text())
    assert record["job-id"] is None and record["exit-code"] == 1 and "no commit SHA" in record["message"]
    assert not (tmp_path / ".cache").exists()


def test_a_plan_whose_pin_has_no_sha_warns_at_the_pin(ws):
    # Defence in depth (docs/launch.md): the schema refuses such a profile; a lane built in code still
    # gets a plan that says, at the pin's commit, that a launch will refuse it.
    from dataclasses import replace

    ws.recipe("recipe.yaml", v1_recipe())
    lane = load_lane("testlane", ws.root)
    lane.pins["standin"] = replace(lane.pins["standin"], commit=None)
    plan = plan_point(lane, load_point(str(ws.point(point())), {}), ws.root, env={}, today=TODAY)
    (warning,) = [w for w in plan.warnings if w.rule == "lane-pin-unresolved"]
    commit_line = (ws.root / "runners/testlane.yaml").read_text().splitlines().index(f"      commit: {'a' * 40}") + 1
    assert warning.file.endswith("testlane.yaml") and warning.line == commit_line and not warning.is_error
    assert (
        "has no commit SHA; a launch will refuse it" in warning.message
        and "git ls-remote file:///nonexistent main" in warning.hint
    )


def test_every_gb300_point_of_the_master_config_plans(tmp_path, harness_repo):
    """Every gb300-nv row the matrix builds passes every pre-submit check in a checkout with an AgentX
    harness (the CLI path is timed in bench/); in this repository, which has none, exactly the
    agentic rows are refused, each at its recipe's benchmark command."""
    from bench.gb300_points import write_points

    lane = load_lane("gb300-nv", REPO)
    paths = write_points(tmp_path / "points", REPO)
    failures, refused = {}, {}
    for path in paths:
        point = load_point(str(path), {})
        try:
            plan_point(lane, point, harness_repo, env={})
        except InfxError as exc:
            failures[path.name] = [d.message for d in exc.diagnostics]
        try:
            plan_point(lane, point, REPO, env={})
        except InfxError as exc:
            refused[path.name] = (point.data.get("scenario-type"), [(d.rule, d.file, d.line) for d in exc.diagnostics])
    assert failures == {} and len(paths) == 68  # 63 fixed-seq-len and agentic points + the 5-point Mooncake ladder
    assert len(refused) == 21 and {scenario for scenario, _ in refused.values()} == {"agentic-coding"}
    for _, diagnostics in refused.values():
        [(rule, file, line)] = diagnostics
        assert rule == "agentic-harness-missing" and file.startswith("benchmarks/multi_node/srt-slurm-recipes/")
        assert (
            "/infmax-workspace/benchmarks/multi_node/agentic_srt.sh" in (REPO / file).read_text().splitlines()[line - 1]
        )
    done = run_cli("launch", "--lane", "gb300-nv", "--point", paths[0], "--dry-run", "--format", "json")
    assert done.returncode == 0 and json.loads(done.stdout)["ok"] is True


def test_schema2_ladder_with_file_level_schema_and_zip(ws):
    body = schema2_recipe()
    schema = body.pop("schema")
    ws.recipe(
        "ladder.yaml",
        {
            "schema": schema,
            "base": body,
            "zip_override_ladder": {"roles": {"prefill": {"nodes": [1, 2], "workers": [1, 2]}}},
        },
    )
    plan = plan_of(ws, point("recipes/test/ladder.yaml:zip_override_ladder[0]"))
    assert plan.recipe["schema"] == 2 and plan.node_count == 3
    [d] = problems(ws, point("recipes/test/ladder.yaml:zip_override_ladder[1]"))
    assert d.rule == "point-recipe-mismatch" and "prefill num-worker is 1 in the point but 2" in d.message


def test_recipe_declared_sources_show_in_the_dry_run(tmp_path):
    profile = lane_profile(
        "file:///x",
        "a" * 40,
        sources={"engine": {"url": "file:///engine", "commit": "e" * 40, "dest": "configs/engine"}},
    )
    ws = Workspace(tmp_path, profile)
    ws.recipe("needs.yaml", v1_recipe(**{"infx-sources": ["engine"]}))
    ws.recipe("plain.yaml", v1_recipe())
    code, body = ws.dry_run(ws.point(point("recipes/test/needs.yaml")))
    assert code == 0 and body["sources"] == [
        {"name": "engine", "url": "file:///engine", "commit": "e" * 40, "dest": "configs/engine"}
    ]
    assert "infx-sources" not in body["recipe"]
    code, body = ws.dry_run(ws.point(point("recipes/test/plain.yaml")))
    assert code == 0 and body["sources"] == []
    ws.recipe(
        "bad.yaml", v1_recipe(**{"infx-sources": ["nope", {"name": "x", "url": "u", "commit": "main", "dest": "d"}]})
    )
    code, body = ws.dry_run(ws.point(point("recipes/test/bad.yaml")))
    assert code == 1 and [d["rule"] for d in body["diagnostics"]] == ["recipe-source", "recipe-source"]


def test_a_hosted_runner_name_only_labels_a_dry_run(ws, tmp_path):
    """run-point.yml dry-runs on a GitHub-hosted runner, whose RUNNER_NAME ("GitHub Actions 7") is no job name."""
    ws.recipe("recipe.yaml", v1_recipe())
    hosted = {"RUNNER_NAME": "GitHub Actions 7", "RUNNER_ENVIRONMENT": "github-hosted"}
    code, body = ws.dry_run(ws.point(point()), env=hosted)
    assert code == 0 and body["job-name"].startswith("infx-")
    assert [w["rule"] for w in body["warnings"]] == ["env-runner-name-unused"]
    # Elsewhere the name is checked as for a launch; a launch always checks it.
    code, body = ws.dry_run(ws.point(point()), env={"RUNNER_NAME": "GitHub Actions 7"})
    assert code == 1 and body["diagnostics"][0]["rule"] == "env-shape"
    done = ws.infx(
        "launch",
        "--lane",
        "testlane",
        "--point",
        str(ws.point(point())),
        "--output-dir",
        str(tmp_path / "out"),
        env=hosted,
    )
    assert done.returncode == 1 and "error[env-shape]" in done.stderr and not (tmp_path / ".cache").exists()


@pytest.mark.parametrize(
    "settings, row, expected",
    [
        (["CONFIG_FILE=recipes/test/recipe.yaml"], {}, "recipes/test/recipe.yaml"),
        (
            ["CONFIG_FILE=recipes/test/recipe.yaml", "EVAL_CONFIG_FILE=recipes/test/eval.yaml"],
            {},
            "recipes/test/recipe.yaml",
        ),
        (
            ["CONFIG_FILE=recipes/test/recipe.yaml", "EVAL_CONFIG_FILE=recipes/test/eval.yaml"],
            {"eval-only": True},
            "recipes/test/eval.yaml",
        ),
        (
            ["CONFIG_FILE=recipes/test/recipe.yaml", "EVAL_ONLY=true", "EVAL_CONFIG_FILE=recipes/test/eval.yaml"],
            {},
            "recipes/test/eval.yaml",
        ),
    ],
)
def test_the_launcher_and_the_matrix_name_the_same_recipe(ws, settings, row, expected):
    from infx.recipes import recipe_ref_of

    ws.recipe("recipe.yaml", v1_recipe())
    ws.recipe("eval.yaml", v1_recipe(time_limit="3:00"))
    data = {**point(), **row}
    data["prefill"]["additional-settings"] = [
        s for s in data["prefill"]["additional-settings"] if not s.startswith("CONFIG_FILE=")
    ] + settings
    plan = plan_of(ws, data)
    matrix_ref = recipe_ref_of(data["prefill"], data["decode"], eval_only=data.get("eval-only"))
    assert plan.recipe_source.ref.value == matrix_ref.value == expected


def test_a_library_caller_plans_a_launch_through_its_request_without_the_command_line(ws):
    """LaunchRequest + plan_launch: what `infx launch` does before any side effect, no click. A
    dry run on a GitHub-hosted runner names the job after the point, not the hosted runner."""
    from infx.launch.plan import LaunchRequest, plan_launch

    ws.recipe("recipe.yaml", v1_recipe())
    env = {"RUNNER_ENVIRONMENT": "github-hosted", "RUNNER_NAME": "GitHub Actions 7", "POINT_JSON": json.dumps(point())}
    plan = plan_launch(LaunchRequest(point_file=None, lane=None, root=ws.root, env=env, dry_run=True))
    assert (plan.lane.name, plan.route.name, plan.job_name) == ("testlane", "fixed", f"infx-{plan.point_id}")
    assert [w.rule for w in plan.warnings] == ["env-runner-name-unused"]
    with pytest.raises(InfxError) as caught:  # a real launch keeps $RUNNER_NAME, whose shape is checked
        plan_launch(
            LaunchRequest(
                point_file=None, lane="testlane", root=ws.root, env={**env, "RUNNER_ENVIRONMENT": "self-hosted"}
            )
        )
    assert [d.rule for d in caught.value.diagnostics] == ["env-shape"]
