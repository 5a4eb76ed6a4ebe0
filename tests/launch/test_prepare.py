"""The lane's prepare: steps as data — squash imports and `make setup` in the plan and the dry run."""

import json
import os
import subprocess
import sys

import yaml

from infx.launch.prepare import GUARD
from launchkit import REPO, Workspace, lane_profile, point, v1_recipe

STANDIN_BIN = REPO / "tests" / "slurm" / "standin-bin"
GB300_PREPARE = yaml.safe_load((REPO / "runners" / "gb300-nv.yaml").read_text())["prepare"]


def gb300_dry_run(points, index=0, **env):
    done = subprocess.run([sys.executable, "-m", "infx", "launch", "--lane", "gb300-nv", "--dry-run", "--format", "json"],
                          cwd=REPO, env={**os.environ, "PYTHONPATH": str(REPO), "POINT_JSON": json.dumps(points[index]), **env},
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    return json.loads(done.stdout)


def test_gb300_dry_run_lists_imports_on_a_compute_node_then_make_setup(points):
    data = dict(points[0])
    data["prefill"] = {**data["prefill"], "additional-settings": [*data["prefill"]["additional-settings"], "SLURM_PARTITION=batch_3"]}
    body = gb300_dry_run([data])
    squash = "/data/home/sa-shared/gharunners/squash/" + data["image"].replace("/", "_").replace(":", "_").replace("@", "_").replace("#", "_") + ".sqsh"
    nginx = "/data/home/sa-shared/gharunners/squash/nginx_1.27.4.sqsh"
    on_node = ["srun", "--partition=batch_3", "--exclusive", "--time=180"]
    assert [step["argv"] for step in body["prepare"]] == [
        [*on_node, "unsquashfs", "-l", squash],
        [*on_node, "flock", "-w", "600", squash + ".lock", "python3", "<launch dir>/squash_guard.py", squash, "--",
         "enroot", "import", "-o", squash, f"docker://{data['image']}"],
        [*on_node, "unsquashfs", "-l", nginx],
        [*on_node, "flock", "-w", "600", nginx + ".lock", "python3", "<launch dir>/squash_guard.py", nginx, "--",
         "enroot", "import", "-o", nginx, "docker://nginx:1.27.4"],
        ["make", "setup", "ARCH=aarch64"],
    ]
    assert [step["skip-if-ok"] for step in body["prepare"]] == [
        None, f"squash-check {data['image']}", None, "squash-check nginx:1.27.4", None]


def test_gb300_text_dry_run_shows_the_steps_before_the_submit_argv(points):
    done = subprocess.run([sys.executable, "-m", "infx", "launch", "--lane", "gb300-nv", "--dry-run"], cwd=REPO,
                          env={**os.environ, "PYTHONPATH": str(REPO), "POINT_JSON": json.dumps(points[0])}, capture_output=True, text=True)
    lines = done.stdout.splitlines()
    prepare = [i for i, line in enumerate(lines) if line.startswith("prepare     ")]
    argv = next(i for i, line in enumerate(lines) if line.startswith("argv        srtctl apply"))
    assert done.returncode == 0 and len(prepare) == 5 and max(prepare) < argv
    assert lines[prepare[-1]] == "prepare     make setup ARCH=aarch64" and "only when the check above fails" in lines[prepare[1]]


def test_b9_extra_image_alias_goes_into_srtslurm_yaml(tmp_path):
    ws = Workspace(tmp_path, lane_profile("file:///x", "a" * 40) | {"squash-dir": "/sq", "prepare": GB300_PREPARE})
    ws.recipe("recipe.yaml", v1_recipe())
    code, body = ws.dry_run(ws.point(point()))
    assert code == 0 and len(body["prepare"]) == 5
    from infx.launch.lane import load_lane
    from infx.launch.plan import build_plan, load_point

    plan = build_plan(load_lane("testlane", tmp_path), load_point(str(ws.point(point())), {}), tmp_path, env={})
    containers = plan.cluster_config("/ck", plan.squash_file())["containers"]
    assert containers["nginx-sqsh"] == "/sq/nginx_1.27.4.sqsh" and containers["dynamo-sglang"] == "/sq/lmsysorg_sglang_v0.5.14-cu130.sqsh"


def test_lane_without_prepare_has_no_steps(tmp_path):
    ws = Workspace(tmp_path, lane_profile("file:///x", "a" * 40))
    ws.recipe("recipe.yaml", v1_recipe())
    code, body = ws.dry_run(ws.point(point()))
    assert code == 0 and body["prepare"] == []


def test_setup_alone_is_one_step(tmp_path):
    ws = Workspace(tmp_path, lane_profile("file:///x", "a" * 40) | {"prepare": {"setup": ["make", "setup", "P={partition}"]}})
    ws.recipe("recipe.yaml", v1_recipe())
    code, body = ws.dry_run(ws.point(point()))
    assert code == 0 and [s["argv"] for s in body["prepare"]] == [["make", "setup", "P=testlane"]]


def test_prepare_section_is_validated_with_locations(tmp_path):
    bad = {"squash-import": ["srun", "{squash}"], "setup": "make setup"}
    ws = Workspace(tmp_path, lane_profile("file:///x", "a" * 40) | {"prepare": bad})
    ws.recipe("recipe.yaml", v1_recipe())
    code, body = ws.dry_run(ws.point(point()))
    messages = [d["message"] for d in body["diagnostics"]]
    assert code == 1 and {d["rule"] for d in body["diagnostics"]} == {"lane-schema"} and all(d["line"] for d in body["diagnostics"])
    assert any("squash-check" in m and "dependency" in m for m in messages) and any("prepare.setup" in m for m in messages)
    ws.write_profile(lane_profile("file:///x", "a" * 40) | {"prepare": {**GB300_PREPARE, "setup": ["make", "{image}"]}})
    code, body = ws.dry_run(ws.point(point()))
    [d] = body["diagnostics"]
    assert code == 1 and d["rule"] == "lane-prepare-placeholder" and "{image}" in d["message"] and "{partition}" in d["hint"]
    lines = (tmp_path / "runners" / "testlane.yaml").read_text().splitlines()
    assert lines[d["line"] - 1].strip() == "- '{image}'"  # located at the offending argument


def guard(tmp_path, squash, *extra_env):
    log = tmp_path / "enroot.log"
    env = {**os.environ, "PATH": f"{STANDIN_BIN}{os.pathsep}{os.environ['PATH']}", "STANDIN_ENROOT_LOG": str(log)}
    done = subprocess.run([sys.executable, str(GUARD), str(squash), "--", "enroot", "import", "-o", str(squash), "docker://nginx:1.27.4"],
                          env=dict(env, **dict(extra_env)), capture_output=True, text=True)
    return done, (log.read_text().splitlines() if log.exists() else [])


def test_guard_imports_a_missing_squash_and_keeps_a_valid_one(tmp_path):
    squash = tmp_path / "nginx_1.27.4.sqsh"
    done, imports = guard(tmp_path, squash)
    assert done.returncode == 0 and len(imports) == 1 and json.loads(imports[0])["uri"] == "docker://nginx:1.27.4"
    done, imports = guard(tmp_path, squash)  # another launch imported it while this one waited for the lock
    assert done.returncode == 0 and "keeping it" in done.stdout and len(imports) == 1


def test_guard_replaces_an_invalid_squash_and_passes_import_failures_on(tmp_path):
    squash = tmp_path / "x.sqsh"
    squash.write_text("half a download")
    done, imports = guard(tmp_path, squash)
    assert done.returncode == 0 and "removing it" in done.stdout and len(imports) == 1
    squash.unlink()
    done, imports = guard(tmp_path, squash, ("STANDIN_ENROOT_FAIL", "manifest unknown"))
    assert done.returncode == 1 and "manifest unknown" in done.stderr and not squash.exists()
