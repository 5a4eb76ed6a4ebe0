"""runners.yaml, components.yaml and the component version policy."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from infx.config import load_config_set
from infx.config.components import is_image_reference
from infx.config.load import SHIPPED_COMPONENTS

REPO = Path(__file__).resolve().parent.parent.parent
FIXTURES = REPO / "tests" / "fixtures"
GOOD = FIXTURES / "positive" / "unknown-key.yaml"


def validate_with(tmp_path: Path, runners: str | None = None, components: str | None = None):
    runners_path, components_path = FIXTURES / "runners.yaml", SHIPPED_COMPONENTS
    if runners is not None:
        runners_path = tmp_path / "runners.yaml"
        runners_path.write_text(runners)
    if components is not None:
        components_path = tmp_path / "components.yaml"
        components_path.write_text(components)
    return load_config_set([GOOD], runners_path, components_path)


@pytest.mark.parametrize(
    "text, rule, line",
    [
        ("h100: [h100-cw_0]\n", "unknown-key", 1),  # the old flat layout: labels: is missing
        ("labels:\n  b200: b200-nb_0\n", "wrong-type", 2),
        ("labels:\n  b200: []\n", "empty-value", 2),
        ("labels:\n  b200: [1]\n", "wrong-type", 2),
        (
            "labels:\n  b200: [b200-nb_0]\nhardware:\n  b200: { available-cpu-dram-mib: 1, gpus-per-node: 0 }\n",
            "out-of-range",
            4,
        ),
        ("labels:\n  b200: [b200-nb_0]\nmodel-paths: {}\n", "unknown-key", 3),
        ("- b200\n", "file-not-mapping", 1),
    ],
)
def test_bad_runners_file_is_located(tmp_path, text, rule, line):
    config_set, report = validate_with(tmp_path, runners=text)
    assert config_set is None
    mine = [(d.rule, d.line) for d in report.diagnostics if d.file.endswith("runners.yaml")]
    assert (rule, line) in mine, [(d.rule, d.line, d.message) for d in report.diagnostics]


def test_flat_runners_file_also_says_labels_is_missing(tmp_path):
    _, report = validate_with(tmp_path, runners="h100: [h100-cw_0]\n")
    assert any(d.rule == "missing-field" and "'labels'" in d.message for d in report.diagnostics)


def test_runner_rules_wait_for_a_usable_runners_file(tmp_path):
    _, report = validate_with(tmp_path, runners="labels:\n  other: [x]\nhardware: 3\n")
    assert {d.rule for d in report.diagnostics} == {"wrong-type"}  # no runner-unknown noise


@pytest.mark.parametrize(
    "text, rule",
    [
        ("kv-offload-backends:\n  mooncake: { versioning: pinned, description: x }\n", "not-allowed-value"),
        ("kv-offload-backends:\n  mooncake: { versioning: independent }\n", "missing-field"),
        ("kv-offload-backends: {}\n", "empty-value"),
        ("backends: {}\n", "unknown-key"),
    ],
)
def test_bad_components_file_is_located(tmp_path, text, rule):
    config_set, report = validate_with(tmp_path, components=text)
    assert config_set is None
    assert any(d.rule == rule and d.file.endswith("components.yaml") and d.line for d in report.diagnostics)


def test_policy_comes_from_components_yaml(tmp_path):
    """Declaring mooncake framework-native lifts the version requirement: the data decides."""
    seed = FIXTURES / "negative" / "kv-offload-backend-version-required.yaml"
    text = SHIPPED_COMPONENTS.read_text().replace(
        "  mooncake:\n    versioning: independent", "  mooncake:\n    versioning: framework-native"
    )
    components = tmp_path / "components.yaml"
    components.write_text(text)
    _, strict = load_config_set([seed], FIXTURES / "runners.yaml", SHIPPED_COMPONENTS)
    _, relaxed = load_config_set([seed], FIXTURES / "runners.yaml", components)
    assert not strict.ok and relaxed.ok


def test_the_seed_gap_mooncake_without_version_names_rule_and_fix():
    seed = FIXTURES / "negative" / "kv-offload-backend-version-required.yaml"
    _, report = load_config_set([seed], FIXTURES / "runners.yaml", SHIPPED_COMPONENTS)
    (d,) = report.diagnostics
    assert d.rule == "kv-offload-backend-version-required"
    assert "mooncake" in d.message and "independently" in d.message
    assert "version:" in d.hint and (d.line, d.column) == (20, 9)


@pytest.mark.parametrize(
    "version, image",
    [
        ("0.3.12.post1", False),
        ("1.3.0.dev20260718", False),
        ("v1.3.0-deepseek-v4-dev.1", False),
        ("81d0555ee23519cea80a42b4fe824e30368b7300", False),
        ("release/1.2", False),
        ("image:vllm/vllm-openai:v0.23.0", True),
        ("lmsysorg/sglang:v0.5.14-cu130", True),
        ("sglang:v0.5.14", True),
        ("lmsysorg/sglang@sha256:5027e95b", True),
        ("nvcr.io#nvidia/ai-dynamo/tensorrtllm-runtime:1.3.0", True),
        ("Image:x", True),
    ],
)
def test_image_references(version, image):
    assert is_image_reference(version) is image


def test_validation_result_api(tmp_path):
    shutil.copy(FIXTURES / "positive" / "topology-aggregated.yaml", tmp_path / "a-master.yaml")
    config_set, report = load_config_set([tmp_path / "a-master.yaml"], FIXTURES / "runners.yaml", SHIPPED_COMPONENTS)
    assert report.ok and report.diagnostics == []
    key, worker_key = config_set.entries
    assert config_set.where(key, "scenarios")[0] == str(tmp_path / "a-master.yaml")
    item = config_set.entries[key]["scenarios"]["agentic-coding"][0]["search-space"][0]
    assert item["prefill"] == {
        "num-worker": 1,
        "tp": 4,
        "ep": 1,
        "dp-attn": False,
        "additional-settings": ["CONFIG_FILE=recipes/sglang/agg-tp4.yaml"],
    }
    assert item["decode"]["num-worker"] == 0 and "worker" not in item  # the one worker form, as written
    first, second = config_set.entries[worker_key]["scenarios"]["fixed-seq-len"][0]["search-space"]
    assert (
        first["decode"]["num-worker"] == 0 and "worker" not in first and first["num-nodes"] == 1
    )  # worker: made the pair
    assert second["decode"]["num-worker"] == 1  # the reference main's pair with decode workers: kept as written


def test_type_hint_suggests_dropping_quotes_only_when_that_helps(tmp_path):
    text = (FIXTURES / "positive" / "topology-single-node.yaml").read_text()
    path = tmp_path / "q-master.yaml"
    for value, hint in [('"8"', "Remove the quotes"), ("eight", "Write a whole number here.")]:
        path.write_text(text.replace("tp: 8,", f"tp: {value},"))
        _, report = load_config_set([path], FIXTURES / "runners.yaml", SHIPPED_COMPONENTS)
        (d,) = report.diagnostics
        assert d.rule == "wrong-type" and d.hint.startswith(hint)


@pytest.mark.parametrize(
    "name", sorted(p.name.removesuffix(".schema.json") for p in (REPO / "infx" / "schemas").glob("*.schema.json"))
)
def test_every_shipped_schema_is_draft_2020_12_and_builds(name):
    import jsonschema_rs
    from jsonschema import Draft202012Validator

    from infx.schema import load_schema, validator

    schema = load_schema(name)
    Draft202012Validator.check_schema(schema)
    assert jsonschema_rs.meta.is_valid(schema)
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    validator(name)  # the one validation path builds it


@pytest.mark.parametrize(
    "path",
    [
        "configs/nvidia-master.yaml",
        "configs/runners.yaml",
        "infx/config/components.yaml",
        *[
            str(p.relative_to(REPO))
            for p in sorted(FIXTURES.glob("*/*.yaml"))
            if p.read_text().startswith("# yaml-language")
        ],
        "tests/fixtures/runners.yaml",
    ],
)
def test_yaml_files_name_their_schema_for_editors(path):
    first = (REPO / path).read_text().splitlines()[0]
    assert first.startswith("# yaml-language-server: $schema=")
    schema = (REPO / path).parent / first.split("$schema=", 1)[1]
    assert schema.resolve().is_file(), schema
    kind = (
        "runners" if path.endswith("runners.yaml") else "components" if path.endswith("components.yaml") else "master"
    )
    assert schema.name == f"{kind}.schema.json"


def test_aggregated_point_suggestion_is_yaml_that_reads_back_as_the_point(tmp_path):
    import yaml

    path = FIXTURES / "negative" / "aggregated-point-in-disagg.yaml"
    text = path.read_text().replace(
        '"CONFIG_FILE=recipes/sglang/agg-tp4.yaml"',
        '"CONFIG_FILE=recipes/sglang/agg-tp4.yaml", "A=b c", "B=", "C=#x, y"',
    )
    copy = tmp_path / "point-master.yaml"
    copy.write_text(text)
    config_set, report = load_config_set([copy], FIXTURES / "runners.yaml", SHIPPED_COMPONENTS)
    (warning,) = report.diagnostics
    suggested = yaml.safe_load(warning.message.split("placed just before this one:\n", 1)[1])
    (key,) = config_set.entries
    item = config_set.entries[key]["scenarios"]["fixed-seq-len"][0]["search-space"][1]
    entry = suggested[f"{key}-agg"]
    assert entry["disagg"] is False and "kv-p2p-transfer" not in entry
    assert entry["scenarios"]["fixed-seq-len"][0]["search-space"] == [item]
    # the suggested entry is valid as written
    (tmp_path / "agg-master.yaml").write_text(yaml.safe_dump(suggested, sort_keys=False))
    _, agg_report = load_config_set([tmp_path / "agg-master.yaml"], FIXTURES / "runners.yaml", SHIPPED_COMPONENTS)
    assert agg_report.ok and agg_report.diagnostics == []
