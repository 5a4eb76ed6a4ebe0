"""One rule finds a point's lane: its `runner` label through the profiles' `runner-labels`;
`--lane` (a lane name, a label or a profile path) overrides it."""

import json

import pytest
import yaml

from infx.diagnostics import InfxError
from infx.launch.lane import duplicate_label_diagnostics, find_lane, lane_entries, load_lane
from testing.launchkit import REPO, Workspace, lane_profile, point, v1_recipe


def test_every_label_of_the_bundled_profiles_names_exactly_one_lane():
    entries = lane_entries(REPO)
    assert [e.name for e in entries] == ["gb300-nv"] and all(e.problems == () for e in entries)
    assert duplicate_label_diagnostics(entries) == []
    for entry in entries:
        assert entry.labels, f"{entry.path} declares no runner-labels"
        for label in entry.labels:
            assert find_lane(REPO, runner=label) == entry.path
            assert find_lane(REPO, selector=label) == entry.path
            assert load_lane(label, REPO).name == entry.name


def test_every_bundled_row_finds_its_lane_from_its_runner(points):
    assert {row["runner"] for row in points} == {"gb300-nv", "gb300", "cluster:gb300-nv"}
    assert {find_lane(REPO, runner=row["runner"]) for row in points} == {REPO / "runners" / "gb300-nv.yaml"}


@pytest.fixture
def ws(tmp_path):
    ws = Workspace(tmp_path, lane_profile("file:///nonexistent", "a" * 40))
    ws.recipe("recipe.yaml", v1_recipe())
    return ws


def second_profile(ws, labels):
    profile = {**lane_profile("file:///nonexistent", "b" * 40), "lane": "otherlane", "runner-labels": labels}
    (ws.root / "runners" / "otherlane.yaml").write_text(yaml.safe_dump(profile, sort_keys=False))


def test_a_label_declared_by_two_profiles_is_an_error_in_the_profiles(ws):
    second_profile(ws, ["other", "testlane"])
    diagnostics = duplicate_label_diagnostics(lane_entries(ws.root))
    assert sorted((d.rule, d.file.rsplit("/", 1)[-1], d.line) for d in diagnostics) == [
        ("lane-label-duplicate", "otherlane.yaml", 4),
        ("lane-label-duplicate", "testlane.yaml", 3),
    ]
    assert all("'testlane'" in d.message for d in diagnostics)
    with pytest.raises(InfxError) as caught:
        find_lane(ws.root, runner="testlane")
    assert caught.value.exit_code == 1 and {d.rule for d in caught.value.diagnostics} == {"lane-label-duplicate"}
    done = ws.infx("launch", "--point", str(ws.point(point())), "--dry-run")
    assert done.returncode == 1 and "error[lane-label-duplicate]" in done.stderr
    # An unambiguous label of the same set still resolves; a lane name is a file name.
    assert find_lane(ws.root, runner="other").name == "otherlane.yaml"
    assert find_lane(ws.root, selector="testlane").name == "testlane.yaml"


def test_override_by_name_label_or_path_and_usage_errors(ws):
    second_profile(ws, ["canary", "cluster:canary"])
    row = point()  # runner: testlane
    for override in ("otherlane", "cluster:canary", str(ws.root / "runners" / "otherlane.yaml")):
        done = ws.infx("launch", "--lane", override, "--point", str(ws.point(row)), "--dry-run", "--format", "json")
        assert done.returncode == 0, done.stderr
        assert (
            json.loads(done.stdout)["lane"] == "otherlane"
            and json.loads(done.stdout)["srt-slurm"]["commit"] == "b" * 40
        )
    done = ws.infx("launch", "--lane", "canry", "--point", str(ws.point(row)), "--dry-run")
    assert (
        done.returncode == 2
        and "--lane 'canry' names no lane" in done.stderr
        and "did you mean 'canary'" in done.stderr
    )
    assert "otherlane: canary, cluster:canary" in done.stderr and "testlane: testlane" in done.stderr
    done = ws.infx("launch", "--lane", "no/such.yaml", "--point", str(ws.point(row)), "--dry-run")
    assert done.returncode == 2 and "no lane profile at no/such.yaml" in done.stderr
    unlabelled = {k: v for k, v in row.items() if k != "runner"}
    done = ws.infx("launch", "--point", str(ws.point(unlabelled)), "--dry-run", "--format", "json")
    assert done.returncode == 2 and json.loads(done.stdout)["diagnostics"][0]["rule"] == "lane-unknown-label"
    # The label's origin is located: the `runner` key of the point file.
    done = ws.infx("launch", "--point", str(ws.point(point(runner="nowhere"))), "--dry-run")
    assert done.returncode == 2 and done.stderr.startswith("point.json:")  # relative to the repository root


def test_an_unreadable_profile_is_reported_when_the_label_is_not_found_elsewhere(ws):
    (ws.root / "runners" / "broken.yaml").write_text("lane: broken\nrunner-labels: [a, b\n")
    assert find_lane(ws.root, runner="testlane").name == "testlane.yaml"
    with pytest.raises(InfxError) as caught:
        find_lane(ws.root, runner="b")
    assert [d.rule for d in caught.value.diagnostics] == ["yaml-syntax"] and caught.value.diagnostics[0].file.endswith(
        "broken.yaml"
    )


def test_lane_check_accepts_any_label_of_the_lane(ws):
    second_profile(ws, ["canary", "cluster:canary"])
    for selector, lane in (
        ("otherlane", "otherlane"),
        ("cluster:canary", "otherlane"),
        ("canary", "otherlane"),
        ("testlane", "testlane"),
    ):
        done = ws.infx("lane", "check", selector, "--format", "json")
        # Whether the partition answers depends on the machine; which lane was checked does not.
        assert json.loads(done.stdout)["lane"] == lane, (selector, done.stdout, done.stderr)
    done = ws.infx("lane", "check", "cluster:canery")
    assert done.returncode == 2 and "names no lane" in done.stderr and "did you mean 'cluster:canary'" in done.stderr
