"""The result key: one test per ingredient shows the key moves when it moves; cosmetic edits do not.

Each test edits a copy of the bundled repository (lane profile, recipe, point) the way a user
would, and plans the bundled Mooncake-ladder point with the real planner.
"""

from __future__ import annotations

import copy
import re
import shutil
from pathlib import Path

import pytest

from infx.launch.lane import load_lane
from infx.launch.plan import plan_point
from infx.launch.pointfile import PointFile
from infx.launch.resultkey import COSMETIC_POINT_FIELDS, RESULT_FORMAT, ingredients

REPO = Path(__file__).resolve().parents[2]
LADDER_KEY = "dsv4-fp4-gb300-dynamo-sglang-agentic-disagg"
LADDER_RECIPE = (
    "benchmarks/multi_node/srt-slurm-recipes/sglang/deepseek-v4/agentic/"
    "disagg-gb300-dep8-dep16-mtp-mooncake-ladder.yaml"
)


@pytest.fixture
def workspace(tmp_path) -> Path:
    """The repository's lane profiles and recipes, with an AgentX harness for the ladder's recipe to run."""
    from testing.launchkit import add_harness

    for part in ("runners", "benchmarks"):
        shutil.copytree(REPO / part, tmp_path / part)
    return add_harness(tmp_path)


@pytest.fixture(scope="module")
def ladder_point(points) -> dict:
    return next(row for row in points if row["config-key"] == LADDER_KEY)


def key_of(root: Path, row: dict, env: dict | None = None) -> str:
    plan = plan_point(load_lane("gb300-nv", root), PointFile(data=row, file="<test>"), root, env=env or {})
    key = plan.result_key()
    assert key is not None and re.fullmatch(r"[0-9a-f]{64}", key)
    return key


def edit(path: Path, old: str, new: str) -> None:
    text = path.read_text()
    assert old in text, f"{old!r} not in {path}"
    path.write_text(text.replace(old, new, 1))


def test_the_same_point_twice_has_the_same_key(workspace, ladder_point):
    assert key_of(workspace, ladder_point) == key_of(workspace, copy.deepcopy(ladder_point))


def test_cosmetic_fields_and_the_runner_name_do_not_change_the_key(workspace, ladder_point):
    base = key_of(workspace, ladder_point)
    # node-count is checked against the recipe before a key exists; it is derived, so not hashed.
    renamed = {**ladder_point, "exp-name": "another-name", "recipe-fingerprint": "0" * 64, "result-key": "1" * 64}
    assert COSMETIC_POINT_FIELDS <= set(renamed)
    assert key_of(workspace, renamed) == base
    # The job is named after the runner it runs on: where it ran, not what it measured.
    assert key_of(workspace, ladder_point, env={"RUNNER_NAME": "gb300-nv_7"}) == base


@pytest.mark.parametrize(
    "field, value",
    [
        ("image", "lmsysorg/sglang:nightly-dev-cu13-20261001-0000000"),  # an image bump
        ("conc", [121]),  # another concurrency
        ("duration", 1800),
        ("config-key", "dsv4-fp4-gb300-dynamo-sglang-agentic-disagg-v2"),
    ],
)
def test_a_point_field_that_changes_the_run_changes_the_key(workspace, ladder_point, field, value):
    assert ladder_point[field] != value
    assert key_of(workspace, {**ladder_point, field: value}) != key_of(workspace, ladder_point)


def test_recipe_content_changes_the_key(workspace, ladder_point):
    base = key_of(workspace, ladder_point)
    edit(workspace / LADDER_RECIPE, "mem-fraction-static: 0.80", "mem-fraction-static: 0.79")
    assert key_of(workspace, ladder_point) != base


def test_a_comment_in_the_recipe_does_not_change_the_key(workspace, ladder_point):
    base = key_of(workspace, ladder_point)
    recipe = workspace / LADDER_RECIPE
    recipe.write_text("# reformatted by a tidy-up\n" + recipe.read_text())
    assert key_of(workspace, ladder_point) == base


def test_the_pin_commit_changes_the_key(workspace, ladder_point):
    base = key_of(workspace, ladder_point)
    edit(
        workspace / "runners" / "gb300-nv.yaml",
        "commit: 32ef19f7d08297925b0978b4f1ef68bf30ce494d",
        "commit: " + "ab12" * 10,
    )
    assert key_of(workspace, ladder_point) != base


@pytest.mark.parametrize(
    "old, new",
    [
        ("partition: batch_1", "partition: batch_2"),  # where the job runs
        ('default-time-limit: "4:00:00"', 'default-time-limit: "6:00:00"'),  # the job's time limit
        ("path: /scratch/models/DeepSeek-V4-Pro\n", "path: /scratch/models/DeepSeek-V4-Pro-r2\n"),  # the weights
        (
            "/data/home/sa-shared/gharunners/hf-hub-cache: /hf_hub_cache",
            "/data/other/hf-hub-cache: /hf_hub_cache",
        ),  # a mount
        (
            "srtctl-flags: [--no-preflight]\n  - name: trt-dsv4-agentic",
            "srtctl-flags: []\n  - name: trt-dsv4-agentic",
        ),  # route flags
    ],
)
def test_lane_settings_that_reach_the_job_change_the_key(workspace, ladder_point, old, new):
    base = key_of(workspace, ladder_point)
    edit(workspace / "runners" / "gb300-nv.yaml", old, new)
    assert key_of(workspace, ladder_point) != base


def test_a_source_commit_changes_the_key(workspace, ladder_point):
    profile = workspace / "runners" / "gb300-nv.yaml"
    edit(
        profile,
        "sources: {}",
        'sources:\n  traces: {url: "https://example.invalid/traces.git", commit: "' + "a" * 40 + '", dest: traces}',
    )
    edit(profile, "srt-slurm: sa-schema2\n", "srt-slurm: sa-schema2\n    sources: [traces]\n")
    with_source = key_of(workspace, ladder_point)
    edit(profile, "a" * 40, "b" * 40)
    assert key_of(workspace, ladder_point) != with_source


def test_the_result_format_version_is_an_ingredient(workspace, ladder_point, monkeypatch):
    from infx.launch import resultkey

    base = key_of(workspace, ladder_point)
    monkeypatch.setattr(resultkey, "RESULT_FORMAT", RESULT_FORMAT + 1)
    assert key_of(workspace, ladder_point) != base


def test_ingredients_say_what_is_hashed(workspace, ladder_point):
    plan = plan_point(
        load_lane("gb300-nv", workspace),
        PointFile(data=ladder_point, file="<test>"),
        workspace,
        env={"RUNNER_NAME": "x_1"},
    )
    body = ingredients(plan)
    assert set(body) == {"result-format", "point", "recipe", "srt-slurm-commit", "route", "lane", "sources"}
    assert "name" not in body["recipe"] and "exp-name" not in body["point"]
    assert "srtctl_root" not in body["lane"]["cluster"] and body["lane"]["partition"] == "batch_1"


def test_every_bundled_point_with_a_workspace_recipe_has_a_distinct_key(points, lane, harness_repo):
    keys = []
    for row in points:
        plan = plan_point(lane, PointFile(data=row, file="<test>"), harness_repo, env={})
        if plan.recipe is not None:
            keys.append(plan.result_key())
    assert len(keys) >= 40 and all(keys) and len(set(keys)) == len(keys)
