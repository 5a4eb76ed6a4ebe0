"""infx/shapes.py: the one table of string shapes, the schemas' copies of it, and hostile values."""

import json
from pathlib import Path

import pytest

from infx import shapes
from infx.launch.staging import result_name
from testing.cli import run_cli

REPO = Path(__file__).resolve().parents[1]
SCHEMAS = sorted((REPO / "infx" / "schemas").glob("*.schema.json"))


def shape_defs(path: Path) -> dict:
    return {
        name: node for name, node in json.loads(path.read_text()).get("$defs", {}).items() if name.startswith("shape-")
    }


@pytest.mark.parametrize("path", SCHEMAS, ids=lambda p: p.name)
def test_every_shape_a_schema_carries_is_the_modules_own(path):
    expected = shapes.schema_defs()
    for name, node in shape_defs(path).items():
        assert node == expected[name], (
            f"{path.name} $defs/{name} differs from infx.shapes; paste {json.dumps(expected[name])}"
        )


def test_the_schemas_that_take_boundary_strings_use_the_shapes():
    used = {path.name: set(shape_defs(path)) for path in SCHEMAS}
    assert {"shape-setting"} <= used["master.schema.json"]
    assert {"shape-setting", "shape-name"} <= used["row.schema.json"]
    assert {"shape-slurm-partition", "shape-git-url", "shape-relative-path", "shape-model-alias"} <= used[
        "lane.schema.json"
    ]
    for path in SCHEMAS:  # every copied def is referenced, so none is dead
        text = path.read_text()
        for name in shape_defs(path):
            assert f'"#/$defs/{name}"' in text, f"{path.name} carries {name} but never uses it"


HOSTILE = ["a\nb", "a\n", "a b", "a;b", "a'b", 'a"b', "a/b", "../x", "-x", "", "a\tb", "a`b", "$(x)"]


@pytest.mark.parametrize("value", HOSTILE)
@pytest.mark.parametrize("shape", ["name", "slurm-partition"])
def test_names_refuse_whitespace_newlines_quotes_separators(shape, value):
    assert shapes.problem(shape, value, "x") is not None


@pytest.mark.parametrize(
    "value", ["/etc/passwd", "../../x", "recipes/a/../../..", "a/./b", "a//b", "-rf", "a/-b", "a\n", "a b", ""]
)
def test_relative_paths_stay_relative_and_never_climb(value):
    assert shapes.problem("relative-path", value, "dest") is not None
    assert shapes.problem("config-file", value, "CONFIG_FILE") is not None


@pytest.mark.parametrize(
    "value",
    [
        "recipes/sglang/deepseek-v4/8k1k/disagg-gb300-1p1d-tp4-tp4-2-c1.yaml",
        "recipes/b200-fp4/8k1k.yaml:zip_override_stp_lowlat[2]",
        "recipes/x/.hidden/y...yaml:base",
        "benchmarks/multi_node/srt-slurm-recipes/trtllm/a.yaml:override_mtp",
    ],
)
def test_real_config_files_are_accepted(value):
    assert shapes.problem("config-file", value, "CONFIG_FILE") is None


@pytest.mark.parametrize(
    "url",
    [
        "--upload-pack=touch $M;",
        "-u",
        "ext::sh -c touch",
        "http://github.com/x",
        "ssh://git@github.com/x",
        "git@github.com:x/y.git",
        "https://github.com/x y",
        "https://-host/x",
        "https://github.com/x\n",
        "https://",
        "file://relative",
    ],
)
def test_git_urls_are_https_and_never_an_option(url):
    assert shapes.url_problem(url, ("https", "file"), "url") is not None


def test_file_urls_only_where_the_lane_allows_them():
    assert shapes.url_problem("https://github.com/NVIDIA/srt-slurm.git", ("https",), "url") is None
    assert "does not allow" in shapes.url_problem("file:///tmp/repo", ("https",), "url")
    assert shapes.url_problem("file:///tmp/repo", ("https", "file"), "url") is None


def test_inside_follows_symlinks(tmp_path):
    root, outside = tmp_path / "root", tmp_path / "outside"
    (root / "sub").mkdir(parents=True)
    outside.mkdir()
    (root / "out").symlink_to(outside)
    assert shapes.inside(root, "sub/new", "dest") == root.resolve() / "sub/new"
    for bad in ("out", "out/x", "../outside", str(outside)):
        with pytest.raises(shapes.Escape):
            shapes.inside(root, bad, "dest")


@pytest.mark.parametrize("exp_name", ["../../escape", "/tmp/abs", "a/b", "x\ny"])
def test_result_names_cannot_leave_the_output_dir(exp_name):
    with pytest.raises(ValueError, match="exp-name"):
        result_name({"exp-name": exp_name}, "abc-c4", env={})
    with pytest.raises(ValueError, match="RESULT_FILENAME"):
        result_name({"exp-name": "ok"}, "abc-c4", env={"RESULT_FILENAME": exp_name})
    assert result_name({"exp-name": "dsv4_8k1k"}, "abc-c4", env={}) == "dsv4_8k1k_abc-c4"


def _validate(path: Path):
    side = ["--runners", str(REPO / "configs" / "runners.yaml")]
    return run_cli("config", "validate", path, *side, "--format", "json", timeout=120)


@pytest.mark.parametrize(
    "setting, rule",
    [
        ('"SLURM_PARTITION=batch_3\\n#SBATCH --partition=other"', "bad-format"),
        ('"SLURM_PARTITION=batch_3\\n"', "bad-format"),
        ('"SLURM_PARTITION=batch 3;rm"', "bad-format"),
        ('"CONFIG_FILE=/etc/passwd"', "bad-format"),
        ('"CONFIG_FILE=recipes/sglang/../../../../etc/passwd"', "bad-format"),
    ],
)
def test_config_validate_refuses_hostile_launch_settings_located(tmp_path, setting, rule):
    text = (REPO / "configs" / "nvidia-master.yaml").read_text()
    assert text.count('"SLURM_PARTITION=batch_3"') > 1
    line = text[: text.index('"SLURM_PARTITION=batch_3"')].count("\n") + 1
    bad = tmp_path / "nvidia-master.yaml"
    bad.write_text(text.replace('"SLURM_PARTITION=batch_3"', setting, 1))
    done = _validate(bad)
    assert done.returncode == 1 and "Traceback" not in done.stderr
    body = json.loads(done.stdout)
    found = [d for d in body["diagnostics"] if d["rule"] == rule]
    assert found and found[0]["line"] == line and found[0]["file"] == str(bad), body
    assert "not in the accepted form" in found[0]["message"]


def test_the_bundled_master_config_passes_as_shipped():
    assert _validate(REPO / "configs" / "nvidia-master.yaml").returncode == 0


@pytest.mark.parametrize(
    "field, value",
    [("model-prefix", "../dsv4"), ("precision", "fp4;x"), ("image", "lmsysorg/sglang:v0.5.14\\n#SBATCH --x")],
)
def test_config_validate_refuses_names_that_reach_file_names_and_tags(tmp_path, field, value):
    text = (REPO / "configs" / "nvidia-master.yaml").read_text()
    start = text.index(f"  {field}: ")
    end = text.index("\n", start)
    bad = tmp_path / "nvidia-master.yaml"
    bad.write_text(text[:start] + f'  {field}: "{value}"' + text[end:])
    done = _validate(bad)
    errors = [d for d in json.loads(done.stdout)["diagnostics"] if d["severity"] == "error"]
    assert done.returncode == 1 and errors[0]["rule"] == "bad-format"
    assert errors[0]["line"] == text[:start].count("\n") + 1 and field in errors[0]["message"]
