"""The lane's prepare: steps as data — squash imports and `make setup` in the plan and the dry run."""

import hashlib
import json
import os
import subprocess
import sys

import pytest
import yaml

from infx.launch.prepare import GUARD
from testing.cli import run_cli
from testing.launchkit import REPO, Workspace, lane_profile, point, v1_recipe

STANDIN_BIN = REPO / "tests" / "slurm" / "standin-bin"
GB300_PREPARE = yaml.safe_load((REPO / "runners" / "gb300-nv.yaml").read_text())["prepare"]


def gb300_dry_run(points, index=0, **env):
    done = run_cli(
        "launch",
        "--lane",
        "gb300-nv",
        "--dry-run",
        "--format",
        "json",
        env={"POINT_JSON": json.dumps(points[index]), **env},
    )
    assert done.returncode == 0, done.stdout + done.stderr
    return json.loads(done.stdout)


def test_gb300_dry_run_lists_imports_on_a_compute_node_then_make_setup(points):
    data = dict(points[0])
    data["prefill"] = {
        **data["prefill"],
        "additional-settings": [*data["prefill"]["additional-settings"], "SLURM_PARTITION=batch_3"],
    }
    body = gb300_dry_run([data])
    squash = (
        "/data/home/sa-shared/gharunners/squash/"
        + data["image"].replace("/", "_").replace(":", "_").replace("@", "_").replace("#", "_")
        + ".sqsh"
    )
    nginx = "/data/home/sa-shared/gharunners/squash/nginx_1.27.4.sqsh"
    on_node = ["srun", "--partition=batch_3", "--exclusive", "--time=180"]
    assert [step["argv"] for step in body["prepare"]] == [
        [*on_node, "python3", "<launch dir>/squash_guard.py", "verify", squash, data["image"]],
        [
            *on_node,
            "flock",
            "-w",
            "600",
            squash + ".lock",
            "python3",
            "<launch dir>/squash_guard.py",
            squash,
            data["image"],
            "--",
            "enroot",
            "import",
            "-o",
            squash,
            f"docker://{data['image']}",
        ],
        [*on_node, "python3", "<launch dir>/squash_guard.py", "verify", nginx, "nginx:1.27.4"],
        [
            *on_node,
            "flock",
            "-w",
            "600",
            nginx + ".lock",
            "python3",
            "<launch dir>/squash_guard.py",
            nginx,
            "nginx:1.27.4",
            "--",
            "enroot",
            "import",
            "-o",
            nginx,
            "docker://nginx:1.27.4",
        ],
        ["make", "setup", "ARCH=aarch64"],
    ]
    assert [step["skip-if-ok"] for step in body["prepare"]] == [
        None,
        f"squash-check {data['image']}",
        None,
        "squash-check nginx:1.27.4",
        None,
    ]


def test_gb300_text_dry_run_shows_the_steps_before_the_submit_argv(points):
    done = run_cli("launch", "--lane", "gb300-nv", "--dry-run", env={"POINT_JSON": json.dumps(points[0])})
    lines = done.stdout.splitlines()
    prepare = [i for i, line in enumerate(lines) if line.startswith("prepare     ")]
    argv = next(i for i, line in enumerate(lines) if line.startswith("argv        srtctl apply"))
    assert done.returncode == 0 and len(prepare) == 5 and max(prepare) < argv
    assert (
        lines[prepare[-1]] == "prepare     make setup ARCH=aarch64"
        and "only when the check above fails" in lines[prepare[1]]
    )


def test_an_extra_image_alias_goes_into_srtslurm_yaml(tmp_path):
    ws = Workspace(tmp_path, lane_profile("file:///x", "a" * 40) | {"squash-dir": "/sq", "prepare": GB300_PREPARE})
    ws.recipe("recipe.yaml", v1_recipe())
    code, body = ws.dry_run(ws.point(point()))
    assert code == 0 and len(body["prepare"]) == 5
    from infx.launch.lane import load_lane
    from infx.launch.plan import plan_point
    from infx.launch.pointfile import load_point

    plan = plan_point(load_lane("testlane", tmp_path), load_point(str(ws.point(point())), {}), tmp_path, env={})
    containers = plan.cluster_config("/ck", plan.squash_file())["containers"]
    assert (
        containers["nginx-sqsh"] == "/sq/nginx_1.27.4.sqsh"
        and containers["dynamo-sglang"] == "/sq/lmsysorg_sglang_v0.5.14-cu130.sqsh"
    )


def test_lane_without_prepare_has_no_steps(tmp_path):
    ws = Workspace(tmp_path, lane_profile("file:///x", "a" * 40))
    ws.recipe("recipe.yaml", v1_recipe())
    code, body = ws.dry_run(ws.point(point()))
    assert code == 0 and body["prepare"] == []


def test_setup_alone_is_one_step(tmp_path):
    ws = Workspace(
        tmp_path, lane_profile("file:///x", "a" * 40) | {"prepare": {"setup": ["make", "setup", "P={partition}"]}}
    )
    ws.recipe("recipe.yaml", v1_recipe())
    code, body = ws.dry_run(ws.point(point()))
    assert code == 0 and [s["argv"] for s in body["prepare"]] == [["make", "setup", "P=testlane"]]


def test_prepare_section_is_validated_with_locations(tmp_path):
    bad = {"squash-import": ["srun", "{squash}"], "setup": "make setup"}
    ws = Workspace(tmp_path, lane_profile("file:///x", "a" * 40) | {"prepare": bad})
    ws.recipe("recipe.yaml", v1_recipe())
    code, body = ws.dry_run(ws.point(point()))
    messages = [d["message"] for d in body["diagnostics"]]
    assert (
        code == 1
        and {d["rule"] for d in body["diagnostics"]} == {"lane-schema"}
        and all(d["line"] for d in body["diagnostics"])
    )
    assert any("squash-check" in m and "dependency" in m for m in messages) and any(
        "prepare.setup" in m for m in messages
    )
    ws.write_profile(lane_profile("file:///x", "a" * 40) | {"prepare": {**GB300_PREPARE, "setup": ["make", "{image}"]}})
    code, body = ws.dry_run(ws.point(point()))
    [d] = body["diagnostics"]
    assert (
        code == 1
        and d["rule"] == "lane-prepare-placeholder"
        and "{image}" in d["message"]
        and "{partition}" in d["hint"]
    )
    lines = (tmp_path / "runners" / "testlane.yaml").read_text().splitlines()
    assert lines[d["line"] - 1].strip() == "- '{image}'"  # located at the offending argument


IMAGE = "nginx:1.27.4"


def guard(tmp_path, squash, *extra_env, image=IMAGE):
    log = tmp_path / "enroot.log"
    env = {**os.environ, "PATH": f"{STANDIN_BIN}{os.pathsep}{os.environ['PATH']}", "STANDIN_ENROOT_LOG": str(log)}
    done = subprocess.run(
        [
            sys.executable,
            str(GUARD),
            str(squash),
            image,
            "--",
            "enroot",
            "import",
            "-o",
            str(squash),
            f"docker://{image}",
        ],
        env=dict(env, **dict(extra_env)),
        capture_output=True,
        text=True,
    )
    return done, (log.read_text().splitlines() if log.exists() else [])


def verify(squash, image=IMAGE):
    return subprocess.run([sys.executable, str(GUARD), "verify", str(squash), image], capture_output=True, text=True)


def test_guard_imports_a_missing_squash_records_its_digest_and_keeps_it(tmp_path):
    squash = tmp_path / "nginx_1.27.4.sqsh"
    assert verify(squash).returncode == 1
    done, imports = guard(tmp_path, squash)
    assert done.returncode == 0 and len(imports) == 1 and json.loads(imports[0])["uri"] == "docker://nginx:1.27.4"
    record = json.loads((tmp_path / "nginx_1.27.4.sqsh.infx-digest").read_text())
    assert record == {
        "image": IMAGE,
        "size": squash.stat().st_size,
        "sha256": hashlib.sha256(squash.read_bytes()).hexdigest(),
    }
    assert verify(squash).returncode == 0
    done, imports = guard(tmp_path, squash)  # another launch imported it while this one waited for the lock
    assert done.returncode == 0 and "keeping it" in done.stdout and len(imports) == 1


@pytest.mark.parametrize(
    "tamper, unpacks",
    [
        # another job swaps in a squash that unpacks fine but is not what was imported
        (lambda squash: squash.write_text("standin-squashfs\ndocker://attacker/image:latest\n"), True),
        (lambda squash: squash.write_text(squash.read_text()[:10]), False),  # cut short
        (
            lambda squash: (squash.parent / (squash.name + ".infx-digest")).unlink(),
            True,
        ),  # no record: not imported by infx
    ],
    ids=["substituted", "truncated", "unrecorded"],
)
def test_a_squash_that_does_not_hash_to_its_import_record_is_imported_again(tmp_path, tamper, unpacks):
    squash = tmp_path / "nginx_1.27.4.sqsh"
    guard(tmp_path, squash)
    tamper(squash)
    old_check = subprocess.run(
        [sys.executable, str(STANDIN_BIN / "unsquashfs"), "-l", str(squash)], capture_output=True
    )
    assert (old_check.returncode == 0) == unpacks  # `unsquashfs -l` alone would have kept the substituted files
    assert verify(squash).returncode == 1
    done, imports = guard(tmp_path, squash)
    assert done.returncode == 0 and "removing it" in done.stdout and len(imports) == 2
    assert "docker://nginx:1.27.4" in squash.read_text() and verify(squash).returncode == 0


def test_a_squash_imported_for_another_image_under_the_same_name_is_not_used(tmp_path):
    squash = tmp_path / "a_b_c.sqsh"  # both a/b:c and a_b:c map to this name
    guard(tmp_path, squash, image="a/b:c")
    assert verify(squash, "a_b:c").returncode == 1 and "imported for 'a/b:c'" in verify(squash, "a_b:c").stdout
    digest = "nginx@sha256:" + "1" * 64
    guard(tmp_path, tmp_path / "pinned.sqsh", image=digest)
    assert verify(tmp_path / "pinned.sqsh", digest).returncode == 0
    assert verify(tmp_path / "pinned.sqsh", "nginx@sha256:" + "2" * 64).returncode == 1


def test_guard_replaces_an_invalid_squash_and_passes_import_failures_on(tmp_path):
    squash = tmp_path / "x.sqsh"
    squash.write_text("half a download")
    done, imports = guard(tmp_path, squash)
    assert done.returncode == 0 and "removing it" in done.stdout and len(imports) == 1
    squash.unlink()
    done, imports = guard(tmp_path, squash, ("STANDIN_ENROOT_FAIL", "manifest unknown"))
    assert done.returncode == 1 and "manifest unknown" in done.stderr and not squash.exists()
    assert not (tmp_path / "x.sqsh.infx-digest").exists()


def test_guard_usage(tmp_path):
    done = subprocess.run(
        [sys.executable, str(GUARD), str(tmp_path / "x.sqsh"), "--", "enroot"], capture_output=True, text=True
    )
    assert done.returncode == 2 and "usage" in done.stderr
