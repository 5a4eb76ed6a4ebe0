"""The reference corpus: only its real defects are reported; patched, it validates clean."""

from __future__ import annotations

from pathlib import Path

from infx.config import load_config_set
from tests.corpus import AGGREGATED_POINT_IN_DISAGG, MISSING_RUNNER_LABELS, patched_corpus

REPO = Path(__file__).resolve().parent.parent.parent
COMPONENTS = REPO / "configs" / "components.yaml"

# (file, config key, rule) of every real defect; docs/config.md explains each.
KNOWN_DEFECTS = {
    ("amd-master.yaml", "dsv4-fp8-mi325x-vllm", "runner-unknown"),
    ("amd-master.yaml", "dsv4-fp8-mi325x-vllm-mtp", "runner-unknown"),
    ("nvidia-master.yaml", "dsv4-fp8-h200-sglang", "runner-unknown"),
    ("nvidia-master.yaml", "dsv4-fp8-h200-sglang-mtp", "runner-unknown"),
    ("nvidia-master.yaml", "dsr1-fp8-gb300-dynamo-trt", "runner-unknown"),
    ("nvidia-master.yaml", "dsv4-fp4-gb300-dynamo-vllm", "runner-unknown"),
    ("nvidia-master.yaml", "dsv4-fp4-gb300-dynamo-trt", "runner-unknown"),
    ("nvidia-master.yaml", "dsv4-fp4-gb300-dynamo-trt-mtp", "runner-unknown"),
    ("nvidia-master.yaml", "dsv4-fp4-gb200-dynamo-vllm-mtp2", "num-worker-zero"),
    ("nvidia-master.yaml", "dsv4-fp4-gb200-dynamo-vllm-mtp2-nosynthetic", "num-worker-zero"),
}


def validate(configs: Path):
    return load_config_set(sorted(configs.glob("*-master.yaml")), configs / "runners.yaml", COMPONENTS)


def test_corpus_reports_only_its_known_defects(corpus):
    config_set, report = validate(corpus / "configs")
    assert config_set is None
    errors = [d for d in report.diagnostics if d.is_error]
    found = {(Path(d.file).name, d.message.split(":", 1)[0], d.rule) for d in errors}
    assert found == KNOWN_DEFECTS
    assert len(errors) == len(KNOWN_DEFECTS)
    for d in errors:
        assert d.line and d.column and d.hint
    unknown_runners = {d.message.split("'")[1] for d in errors if d.rule == "runner-unknown"}
    assert unknown_runners == set(MISSING_RUNNER_LABELS)
    assert {d.rule for d in report.diagnostics if not d.is_error} == {"legacy-aggregate"}


def test_patched_corpus_validates_clean_and_normalises(corpus, tmp_path):
    root = patched_corpus(corpus, tmp_path)
    config_set, report = validate(root / "configs")
    assert report.ok, [d.message for d in report.diagnostics if d.is_error]
    assert len(config_set.entries) == 210  # 152 + 56 reference entries, + 2 split out by the patch
    for key in AGGREGATED_POINT_IN_DISAGG:
        assert config_set.entries[key]["disagg"] is True
        assert config_set.entries[f"{key}-agg"]["disagg"] is False
    legacy = 0
    for key, entry in config_set.entries.items():
        for kind in ("fixed-seq-len", "agentic-coding"):
            for scenario in entry["scenarios"].get(kind, []):
                for item in scenario["search-space"]:
                    assert item.get("decode", {}).get("num-worker") != 0, key  # no legacy form left
                    legacy += "worker" in item
    warned = sum(d.rule == "legacy-aggregate" for d in report.diagnostics)
    assert legacy == warned == 59


def test_bundled_configs_validate_clean(repo_root):
    config_set, report = load_config_set(root=repo_root)
    assert report.ok and report.diagnostics == []
    assert list(config_set.entries) == list(config_set.raw_entries)


def test_legacy_aggregate_is_normalised_with_a_warning(corpus, tmp_path):
    root = patched_corpus(corpus, tmp_path)
    config_set, report = validate(root / "configs")
    key = "dsv4-fp4-gb300-dynamo-sglang-agentic-agg"
    item = config_set.entries[key]["scenarios"]["agentic-coding"][0]["search-space"][0]
    assert "prefill" not in item and "decode" not in item
    assert item["worker"]["tp"] == 4 and item["worker"]["num-worker"] == 1
    raw = config_set.raw_entries[key]
    assert raw["scenarios"]["agentic-coding"][0]["search-space"][0]["decode"]["num-worker"] == 0
    warning = next(d for d in report.diagnostics if key in d.message)
    assert "worker:" in warning.message and "num-nodes: 1" in warning.message


def test_strict_loader_reads_the_corpus_as_pyyaml_does(corpus):
    """Guards the loader's fast paths (plain-scalar tag cache, decimal ints, no alias walk without '&')."""
    import yaml

    from infx.yamlio import load_yaml

    for name in ("nvidia-master.yaml", "amd-master.yaml", "runners.yaml"):
        path = corpus / "configs" / name
        assert load_yaml(path)[0].data == yaml.load(path.read_text(), Loader=yaml.SafeLoader)
