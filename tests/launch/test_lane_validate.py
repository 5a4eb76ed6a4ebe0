"""`infx lane validate`: the profiles themselves, as the PR checks run it."""

import json
import re
import shutil

import pytest
import yaml

from testing.cli import run_cli
from testing.launchkit import REPO, lane_profile

BUNDLED = (REPO / "runners" / "gb300-nv.yaml").read_text()


def test_the_bundled_profiles_are_valid():
    done = run_cli("lane", "validate", "--format", "json")
    assert done.returncode == 0 and json.loads(done.stdout) == {"ok": True, "diagnostics": []}
    assert run_cli("lane", "validate", "gb300-nv", "cluster:gb300-nv").returncode == 0


def test_a_pin_without_a_full_commit_fails_located(tmp_path):
    pins = re.findall(r"^    (\S+): \{.*commit: ([0-9a-f]{40})\}$", BUNDLED, re.M)
    assert len(pins) == 7  # every bundled pin carries a full commit
    text = (
        BUNDLED.replace(f"commit: {pins[0][1]}", "commit: null")
        .replace(f"commit: {pins[1][1]}", f"commit: {pins[1][1][:12]}")
        .replace(f", commit: {pins[2][1]}", "")
    )
    bad = tmp_path / "lane.yaml"
    bad.write_text(text)
    lines = text.splitlines()
    done = run_cli("lane", "validate", str(bad), "--format", "json")
    assert done.returncode == 1
    found = {(d["rule"], d["line"]) for d in json.loads(done.stdout)["diagnostics"]}
    assert found == {
        ("lane-schema", next(i + 1 for i, line in enumerate(lines) if line.startswith(f"    {name}:")))
        for name, _ in pins[:3]
    }
    done = run_cli("lane", "validate", str(bad), "--format", "github")
    assert done.returncode == 1 and done.stdout.count("::error ") == 3 and "infx lane pins LANE --update" in done.stdout
    done = run_cli("lane", "validate", str(bad))
    assert (
        done.returncode == 1
        and f"{bad}:{lines.index(next(each for each in lines if each.startswith('    ' + pins[0][0]))) + 1}:"
        in done.stderr
    )


def test_set_rules_over_runners_dir(tmp_path):
    runners = tmp_path / "runners"
    runners.mkdir()
    (runners / "one.yaml").write_text(
        yaml.safe_dump({**lane_profile("file:///x", "a" * 40, evals=False), "lane": "one", "runner-labels": ["a", "b"]})
    )
    (runners / "two.yaml").write_text(
        yaml.safe_dump({**lane_profile("file:///x", "a" * 40, evals=False), "lane": "three", "runner-labels": ["b"]})
    )
    done = run_cli("lane", "validate", "--format", "json", cwd=tmp_path)
    assert done.returncode == 1
    found = sorted((d["rule"], d["file"], d["line"]) for d in json.loads(done.stdout)["diagnostics"])
    assert [(rule, file) for rule, file, _ in found] == [
        ("lane-label-duplicate", "runners/one.yaml"),
        ("lane-label-duplicate", "runners/two.yaml"),
        ("lane-name-mismatch", "runners/two.yaml"),
    ]
    # A profile outside runners/ (a candidate, a copy) is checked on its own: no clash with the set.
    (tmp_path / "copy.yaml").write_text((runners / "one.yaml").read_text())
    assert run_cli("lane", "validate", "copy.yaml", cwd=tmp_path).returncode == 0
    done = run_cli("lane", "validate", "nowhere", cwd=tmp_path)
    assert done.returncode == 2 and "names no lane" in done.stderr


def test_a_runner_label_runners_yaml_does_not_declare_fails(tmp_path):
    (tmp_path / "configs").mkdir()
    (tmp_path / "configs" / "runners.yaml").write_text((REPO / "configs" / "runners.yaml").read_text())
    shutil.copytree(REPO / "benchmarks" / "evals", tmp_path / "benchmarks" / "evals")  # the suite the profile names
    (tmp_path / "runners").mkdir()
    text = BUNDLED.replace('"cluster:gb300-nv"]', '"cluster:gb300nv"]')
    (tmp_path / "runners" / "gb300-nv.yaml").write_text(text)
    done = run_cli("lane", "validate", "--format", "json", cwd=tmp_path)
    [d] = json.loads(done.stdout)["diagnostics"]
    assert (
        done.returncode == 1
        and d["rule"] == "lane-label-undeclared"
        and (d["file"], d["line"]) == ("runners/gb300-nv.yaml", 6)
    )
    assert "did you mean 'cluster:gb300-nv'" in d["message"]
    (tmp_path / "runners" / "gb300-nv.yaml").write_text(BUNDLED)
    assert run_cli("lane", "validate", cwd=tmp_path).returncode == 0


def test_a_pin_repository_that_is_no_url_gets_the_url_hint_not_the_commit_one(tmp_path):
    text = BUNDLED.replace(
        'repository: "https://github.com/NVIDIA/srt-slurm.git"', "repository: /srv/srt-slurm.bundle", 1
    )
    assert text != BUNDLED
    bad = tmp_path / "lane.yaml"
    bad.write_text(text)
    done = run_cli("lane", "validate", str(bad), "--format", "json")
    assert done.returncode == 1
    (diagnostic,) = json.loads(done.stdout)["diagnostics"]
    assert "repository" in diagnostic["message"] and "git url" in diagnostic["hint"] and "SHA" not in diagnostic["hint"]


def test_validate_checks_the_eval_suite_a_profile_names(tmp_path):
    (tmp_path / "runners").mkdir()
    (tmp_path / "runners" / "one.yaml").write_text(
        yaml.safe_dump({**lane_profile("file:///x", "a" * 40), "lane": "one", "runner-labels": ["a"]})
    )
    shutil.copytree(REPO / "benchmarks" / "evals", tmp_path / "benchmarks" / "evals")
    assert run_cli("lane", "validate", "runners/one.yaml", cwd=tmp_path).returncode == 0
    (tmp_path / "benchmarks" / "evals" / "gpqa_diamond_docs.py").unlink()
    done = run_cli("lane", "validate", "runners/one.yaml", "--format", "json", cwd=tmp_path)
    [d] = json.loads(done.stdout)["diagnostics"]
    assert (
        done.returncode == 1
        and d["rule"] == "eval-workspace-missing"
        and d["file"] == "benchmarks/evals/suite.yaml"
        and d["line"]
    )


ROUTE = """  - name: vllm-dsv4-fixed
    match: {scenario: fixed-seq-len, framework: dynamo-vllm, model-prefix: dsv4}
    srt-slurm: nvidia-gb200-dsv4-recipes
"""
SAME_MATCH = ROUTE.replace("name: vllm-dsv4-fixed", "name: vllm-dsv4-again") + "    overlays: []\n" + ROUTE
CROSS_CHECKS = [  # (the bundled profile's text, edited; the rule; the line it is reported at; words of the message)
    (
        'nvidia-v1.0.25: {repository: "https://github.com/',
        'nvidia-v1.0.25: {repository: "file:///srv/',
        "lane-git-protocol",
        "    nvidia-v1.0.25:",
        "uses file://, which this lane does not allow (git-protocols: https)",
    ),
    (
        "    srtctl-flags: [--no-preflight]\n    time-limit",
        "    srtctl-flags: [--no-preflight]\n    sources: [mooncake]\n    time-limit",
        "lane-unknown-source",
        "    sources: [mooncake]",
        "route 'trt-dsv4-agentic' names source 'mooncake', which sources: does not define",
    ),
    (
        ROUTE,
        SAME_MATCH,
        "lane-route-ambiguous",
        "  - name: vllm-dsv4-fixed\n",  # the second of the two
        "routes 'vllm-dsv4-again' and 'vllm-dsv4-fixed' match exactly the same points",
    ),
]


@pytest.mark.parametrize("old, new, rule, at, message", CROSS_CHECKS, ids=[case[2] for case in CROSS_CHECKS])
def test_cross_checks_the_schema_cannot_say_are_located(tmp_path, old, new, rule, at, message):
    text = BUNDLED.replace(old, new, 1)
    assert text != BUNDLED
    bad = tmp_path / "lane.yaml"
    bad.write_text(text)
    done = run_cli("lane", "validate", str(bad), "--format", "json")
    assert done.returncode == 1 and "Traceback" not in done.stderr
    (diagnostic,) = json.loads(done.stdout)["diagnostics"]
    line = text.count("\n", 0, text.index(at)) + 1
    assert (
        (diagnostic["rule"], diagnostic["line"]) == (rule, line)
        and message in diagnostic["message"]
        and diagnostic["hint"]
    )


# --- the typed profile ------------------------------------------------------------------------


def _schema_objects(node, path=()):
    """Every object of the lane schema that declares properties, by its path of keys."""
    if isinstance(node, dict):
        if isinstance(node.get("properties"), dict):
            yield path
        for key, value in node.items():
            yield from _schema_objects(value, (*path, key))


def test_the_profile_sections_are_every_object_of_the_schema():
    from infx.launch import lane  # noqa: F401  (defines the lane's records)
    from infx.records import records
    from infx.schema import load_schema

    # Every object of the schema is a typed section, but for the `match` objects (the facts a
    # route or model entry is chosen by, compared as a mapping) and an overlay's (from, to) pair.
    not_sections = {
        ("properties", "routes", "items", "properties", "match"),
        ("properties", "models", "items", "properties", "match"),
        ("properties", "routes", "items", "properties", "overlays", "items"),
    }
    sections = {tuple(filter(None, cls.POINTER.split("/"))) for cls in records() if cls.SCHEMA == "lane"}
    assert set(_schema_objects(load_schema("lane"))) - not_sections == sections


def test_the_bundled_profile_reads_into_its_sections():
    from infx.launch.lane import load_lane

    raw = yaml.safe_load(BUNDLED)
    profile = load_lane("gb300-nv", REPO)
    assert (profile.name, profile.runner_labels) == (raw["lane"], tuple(raw["runner-labels"]))
    assert (
        profile.slurm.partition,
        profile.slurm.gpus_per_node,
        profile.slurm.partition_setting,
        profile.slurm.account,
    ) == (
        raw["slurm"]["partition"],
        raw["slurm"]["gpus-per-node"],
        raw["slurm"]["partition-setting"],
        raw["slurm"]["account"],
    )
    assert profile.srt_slurm.pins["nvidia-v1.0.25"].commit == raw["srt-slurm"]["pins"]["nvidia-v1.0.25"]["commit"]
    assert [image.alias for image in profile.prepare.images] == [
        item.get("alias", "") for item in raw["prepare"]["images"]
    ]
    assert profile.prepare.setup == tuple(raw["prepare"]["setup"]) and profile.evals.suite == raw["evals"]["suite"]
    assert list(profile.container_mounts.items()) == list(
        raw["container-mounts"].items()
    )  # srtslurm.yaml keeps their order
    assert profile.rules.store_client_env.when_service_type == raw["rules"]["store-client-env"]["when-service-type"]
    assert profile.rules.power_frameworks == tuple(raw["rules"]["power-frameworks"])
    assert [(model.alias, model.path) for model in profile.models] == [(m["alias"], m["path"]) for m in raw["models"]]
    assert [route.index for route in profile.routes] == list(range(len(raw["routes"])))


def test_a_profile_without_its_optional_sections_loads_with_the_defaults(tmp_path):
    from infx.launch.lane import LaneRules, PrepareSettings, QueueSettings, load_lane_file
    from infx.launch.prepare import plan_steps

    minimal = {
        "lane": "bare",
        "runner-labels": ["bare"],
        "slurm": {"partition": "batch", "gpus-per-node": 8, "default-time-limit": "2:00:00"},
        "models": [],
        "srt-slurm": {"pins": {"v1": {"repository": "https://example.invalid/srt-slurm.git", "commit": "a" * 40}}},
        "routes": [{"name": "fixed", "match": {"scenario": "fixed-seq-len", "framework": "sglang"}, "srt-slurm": "v1"}],
    }
    path = tmp_path / "bare.yaml"
    path.write_text(yaml.safe_dump(minimal))
    profile = load_lane_file(path)
    slurm = profile.slurm
    assert (slurm.poll_seconds, slurm.command_timeout_seconds, slurm.deadline_margin_seconds) == (10.0, 30.0, 3600.0)
    assert (slurm.account, slurm.partition_setting, slurm.gpus_per_node) == ("", "", 8)
    assert (
        profile.evals is None and profile.queue == QueueSettings(0.0) and profile.rules == LaneRules(None, None, None)
    )
    assert (
        profile.prepare == PrepareSettings()
        and plan_steps(profile.prepare, profile.squash_dir, "batch", "img:1", "g") == []
    )
    assert (profile.git_protocols, profile.container_aliases, profile.srt_slurm.pip_args) == (("https",), (), ())
    assert (dict(profile.sources), dict(profile.container_mounts), profile.squash_dir) == ({}, {}, "")
    route = profile.routes[0]
    assert (route.overlays, route.srtctl_flags, route.time_limit, route.sources) == ((), (), None, ())
    assert profile.pins["v1"].ref == ""


def test_a_library_caller_validates_and_checks_lanes_through_their_requests(tmp_path, monkeypatch):
    """ValidateRequest and LaneCheckRequest: `infx lane validate` and `infx lane check` without click."""
    from infx.launch.lane import LaneCheckRequest, ValidateRequest, check_lane, validate_lanes

    assert (
        validate_lanes(ValidateRequest(selectors=(), root=REPO)).ok
        and validate_lanes(ValidateRequest(selectors=("gb300-nv",), root=REPO)).ok
    )
    bad = tmp_path / "lane.yaml"
    bad.write_text(BUNDLED.replace("gpus-per-node: 4", "gpus-per-node: 0"))
    assert [d.rule for d in validate_lanes(ValidateRequest(selectors=(str(bad),), root=REPO)).diagnostics] == [
        "lane-schema"
    ]
    monkeypatch.setenv(
        "SLURM_CONF", str(tmp_path / "no-slurm.conf")
    )  # a controller no command can find: answered, not hung
    result = check_lane(LaneCheckRequest(lane="gb300-nv", root=REPO))
    assert not result.ok and result.to_json()["lane"] == "gb300-nv" and "cannot ask Slurm" in result.text()
