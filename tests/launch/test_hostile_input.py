"""The reproductions of issue 15 (hostile strings): each is refused, located, before any side effect."""

import json

import pytest

from testing.launchkit import Workspace, lane_profile, point, v1_recipe

COMMIT = "c" * 40


@pytest.fixture
def ws(tmp_path):
    return Workspace(tmp_path / "ws", lane_profile("file:///nonexistent", "a" * 40))


def launch(ws, point_path, out, env=None):
    """A real (not dry) launch; it must stop at the plan."""
    return ws.infx("launch", "--lane", "testlane", "--point", str(point_path), "--output-dir", str(out), env=env)


def assert_refused_without_side_effects(ws, point_path, rule, tmp_path, env=None):
    code, body = ws.dry_run(point_path, env=env)
    assert code == 1 and body["ok"] is False
    found = [d for d in body["diagnostics"] if d["rule"] == rule]
    assert found and found[0]["line"], body["diagnostics"]
    out = tmp_path / "out"
    done = launch(ws, point_path, out, env=env)
    assert done.returncode == 1 and "Traceback" not in done.stderr and f"error[{rule}]" in done.stderr
    assert not out.exists() and not (ws.root / ".cache").exists()  # no output, no checkout, no cache
    return found[0]


def test_a_source_url_that_is_a_git_option_never_runs(ws, tmp_path):
    marker = tmp_path / "M"
    ws.recipe(
        "evil.yaml",
        v1_recipe(
            **{
                "infx-sources": [
                    {"name": "engine", "url": f"--upload-pack=touch {marker};", "commit": COMMIT, "dest": "engine"}
                ]
            }
        ),
    )
    found = assert_refused_without_side_effects(
        ws, ws.point(point("recipes/test/evil.yaml")), "recipe-source-shape", tmp_path
    )
    assert "https://" in found["message"] and found["file"].endswith("evil.yaml")
    assert not marker.exists()


@pytest.mark.parametrize("dest", ["../../../../victim", "/victim", "engine/../../victim"])
def test_a_source_dest_outside_the_checkout_deletes_nothing(ws, tmp_path, dest):
    victim = tmp_path / "victim"
    (victim / "precious").mkdir(parents=True)
    dest = str(victim) if dest == "/victim" else dest
    ws.recipe(
        "evil.yaml",
        v1_recipe(
            **{
                "infx-sources": [
                    {"name": "engine", "url": "https://github.com/x/y.git", "commit": COMMIT, "dest": dest}
                ]
            }
        ),
    )
    found = assert_refused_without_side_effects(
        ws, ws.point(point("recipes/test/evil.yaml")), "recipe-source-shape", tmp_path
    )
    assert "dest" in found["message"]
    assert (victim / "precious").is_dir()


def test_a_lane_source_with_a_bad_url_or_dest_is_a_lane_schema_error(tmp_path):
    for source in (
        {"url": "--upload-pack=x", "commit": COMMIT, "dest": "engine"},
        {"url": "https://github.com/x/y", "commit": COMMIT, "dest": "../../victim"},
    ):
        ws = Workspace(tmp_path / "ws", lane_profile("file:///nonexistent", "a" * 40, sources={"engine": source}))
        ws.recipe("r.yaml", v1_recipe())
        code, body = ws.dry_run(ws.point(point()))
        assert code == 1 and {d["rule"] for d in body["diagnostics"]} == {"lane-schema"}
        assert body["diagnostics"][0]["line"]


def test_slurm_partition_with_a_newline_is_refused_by_the_dry_run(ws, tmp_path):
    ws.recipe("recipe.yaml", v1_recipe())
    data = point()
    data["prefill"]["additional-settings"].append("SLURM_PARTITION=batch\n#SBATCH --partition=other")
    found = assert_refused_without_side_effects(ws, ws.point(data), "point-setting-shape", tmp_path)
    assert "SLURM_PARTITION" in found["message"]


def test_a_lane_partition_with_a_newline_is_a_lane_schema_error(tmp_path):
    ws = Workspace(tmp_path / "ws", lane_profile("file:///nonexistent", "a" * 40, partition="batch\n#SBATCH --x"))
    ws.recipe("recipe.yaml", v1_recipe())
    code, body = ws.dry_run(ws.point(point()))
    assert (
        code == 1
        and body["diagnostics"][0]["rule"] == "lane-schema"
        and "slurm.partition" in body["diagnostics"][0]["message"]
    )


@pytest.mark.parametrize(
    "config_file", ["/etc/passwd", "recipes/test/../../../../../etc/passwd", "recipes/upstream/../../../x.yaml"]
)
def test_config_file_outside_the_recipe_tree_is_refused(ws, tmp_path, config_file):
    found = assert_refused_without_side_effects(ws, ws.point(point(config_file)), "point-setting-shape", tmp_path)
    assert "CONFIG_FILE" in found["message"]


def test_config_file_through_a_symlink_out_of_the_recipe_tree_is_refused(ws, tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "r.yaml").write_text(json.dumps(v1_recipe()))
    ws.recipe("recipe.yaml", v1_recipe())
    (ws.root / "benchmarks/multi_node/srt-slurm-recipes/test/link").symlink_to(outside)
    found = assert_refused_without_side_effects(
        ws, ws.point(point("recipes/test/link/r.yaml")), "point-setting-shape", tmp_path
    )
    assert "outside" in found["message"]


@pytest.mark.parametrize("exp_name", ["../../escape", "a/b", "x\ny", "/abs"])
def test_an_exp_name_cannot_write_outside_the_output_dir(ws, tmp_path, exp_name):
    ws.recipe("recipe.yaml", v1_recipe())
    found = assert_refused_without_side_effects(ws, ws.point(point(**{"exp-name": exp_name})), "point-shape", tmp_path)
    assert "exp-name" in found["message"]
    assert not any(p.name.startswith("escape") for p in tmp_path.rglob("*"))


@pytest.mark.parametrize("key", ["RUNNER_NAME", "RESULT_FILENAME"])
def test_environment_values_that_become_names_are_checked(ws, tmp_path, key):
    ws.recipe("recipe.yaml", v1_recipe())
    code, body = ws.dry_run(ws.point(point()), env={key: "x\n#SBATCH --uid=0"})
    assert code == 1 and body["diagnostics"][0]["rule"] == "env-shape" and body["diagnostics"][0]["file"] == f"${key}"


def test_an_image_with_a_newline_is_refused(ws, tmp_path):
    ws.recipe("recipe.yaml", v1_recipe())
    found = assert_refused_without_side_effects(
        ws, ws.point(point(image="lmsysorg/sglang:v0.5.14-cu130\n")), "point-image", tmp_path
    )
    assert "not a valid container reference" in found["message"]


@pytest.mark.parametrize(
    "field, value, rule, says",
    [
        ("recipe-fingerprint", "../../../escape", "point-shape", "point id"),
        # A number where the row schema has one is refused by the point reader, before any shape check.
        ("conc", ["1/../../x"], "point-type", "a matrix row has integer here"),
        ("isl", "8;rm", "point-type", "a matrix row has integer here"),
    ],
)
def test_fields_that_build_the_point_id_and_tags_are_checked(ws, tmp_path, field, value, rule, says):
    ws.recipe("recipe.yaml", v1_recipe())
    found = assert_refused_without_side_effects(ws, ws.point(point(**{field: value})), rule, tmp_path)
    assert says in found["message"]
