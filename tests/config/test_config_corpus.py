"""The reference corpus: only its real defects are reported; with its runner labels declared it is valid."""

from __future__ import annotations

from pathlib import Path

from infx.config import load_config_set
from infx.diagnostics import Severity
from infx.workers import is_aggregated
from testing.cli import run_cli
from testing.corpus import MISSING_RUNNER_LABELS, patched_corpus

# disagg: true entries whose first point is aggregated (decode num-worker 0): warned, expanded as the reference does.
AGGREGATED_POINT_IN_DISAGG = ["dsv4-fp4-gb200-dynamo-vllm-mtp2", "dsv4-fp4-gb200-dynamo-vllm-mtp2-nosynthetic"]

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
}


def validate(configs: Path):
    """As `infx config validate` does in the repository: no components.yaml there, so the shipped policy."""
    return load_config_set(sorted(configs.glob("*-master.yaml")), configs / "runners.yaml")


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
    assert {d.rule for d in report.diagnostics if not d.is_error} == {
        "aggregated-point-in-disagg",
        "components-default",
    }
    assert sum(d.rule == "components-default" for d in report.diagnostics) == 1  # said once


def test_patched_corpus_validates_with_warnings_only_and_normalises(corpus, tmp_path):
    root = patched_corpus(corpus, tmp_path)
    config_set, report = validate(root / "configs")
    assert report.ok, [d.message for d in report.diagnostics if d.is_error]
    assert len(config_set.entries) == 208  # 152 + 56 reference entries
    raw_aggregated = normalised_workers = 0
    for key, entry in config_set.entries.items():
        for kind in ("fixed-seq-len", "agentic-coding"):
            for raw, item in zip(_items(config_set.raw_entries[key], kind), _items(entry, kind)):
                normalised_workers += "worker" in item  # the one worker form: prefill + decode
                if entry["multinode"] and not entry.get("disagg"):
                    raw_aggregated += is_aggregated(raw)
                    if "prefill" in raw:
                        assert (item["prefill"], item["decode"]) == (raw["prefill"], raw["decode"]), (
                            key
                        )  # kept as written
    assert normalised_workers == 0
    # The reference main's aggregated spelling (prefill + decode num-worker 0): read as it is, no warning.
    assert raw_aggregated == 57 and not [d for d in report.diagnostics if "aggregated spelling" in d.message]
    misplaced = [d for d in report.diagnostics if d.rule == "aggregated-point-in-disagg"]
    assert [d.message.split(":", 1)[0] for d in misplaced] == AGGREGATED_POINT_IN_DISAGG
    for d, key in zip(misplaced, AGGREGATED_POINT_IN_DISAGG):
        assert f"  {key}-agg:\n" in d.message and "disagg: false" in d.message and "num-worker: 0" in d.message
        assert "CONFIG_FILE=recipes/vllm/deepseek-v4/8k1k/agg-gb200-low-latency-mtp2.yaml" in d.message


def _items(entry: dict, kind: str):
    return [item for scenario in entry["scenarios"].get(kind, []) for item in scenario["search-space"]]


def test_bundled_configs_validate_clean(repo_root):
    config_set, report = load_config_set(root=repo_root)
    # The bundled repository keeps no components.yaml of its own: the shipped policy, said once.
    assert report.ok and [d.rule for d in report.diagnostics] == ["components-default"]
    assert list(config_set.entries) == list(config_set.raw_entries)


def test_the_reference_mains_aggregated_spelling_is_read_as_written(corpus, tmp_path):
    root = patched_corpus(corpus, tmp_path)
    config_set, report = validate(root / "configs")
    key = "dsv4-fp4-gb300-dynamo-sglang-agentic-agg"
    item = config_set.entries[key]["scenarios"]["agentic-coding"][0]["search-space"][0]
    raw = config_set.raw_entries[key]["scenarios"]["agentic-coding"][0]["search-space"][0]
    assert "worker" not in item and item == raw  # the pair is already the one worker form
    assert item["decode"]["num-worker"] == 0 and item["prefill"]["tp"] == 4
    assert not [d for d in report.diagnostics if key in d.message]


def test_strict_loader_reads_the_corpus_as_pyyaml_does(corpus):
    """Guards the loader's fast paths (plain-scalar tag cache, decimal ints, no alias walk without '&')."""
    import yaml

    from infx.yamlio import load_yaml

    for name in ("nvidia-master.yaml", "amd-master.yaml", "runners.yaml"):
        path = corpus / "configs" / name
        assert load_yaml(path)[0].data == yaml.load(path.read_text(), Loader=yaml.SafeLoader)


def test_validate_command_on_the_corpus_exits_0_with_warnings_only(corpus, tmp_path):
    """`infx config validate` from the corpus's root, as a user would run it: defaults, no components.yaml."""
    import json

    root = patched_corpus(corpus, tmp_path)
    done = run_cli(
        "config", "validate", "--format", "json", cwd=root, env={"INFX_CACHE_DIR": str(tmp_path / "cache")}, timeout=120
    )
    assert done.returncode == 0, done.stderr
    body = json.loads(done.stdout)
    assert body["ok"] is True
    severities = {(d["rule"], d["severity"]) for d in body["diagnostics"]}
    assert severities == {("aggregated-point-in-disagg", "warning"), ("components-default", "notice")}


def test_without_warnings_a_valid_set_skips_them_and_an_invalid_one_reports_them_all(corpus, tmp_path):
    """`infx matrix` loads with warnings=False: it shows diagnostics only for an invalid set,
    and then the same ones `infx config validate` finds, warnings included."""

    def load(configs: Path, warnings: bool):
        return load_config_set(sorted(configs.glob("*-master.yaml")), configs / "runners.yaml", warnings=warnings)

    unpatched = corpus / "configs"
    (invalid, full), (invalid_quiet, quiet) = load(unpatched, True), load(unpatched, False)
    assert invalid is None and invalid_quiet is None
    assert quiet.sorted() == full.sorted()
    assert sum(d.rule == "aggregated-point-in-disagg" for d in quiet.diagnostics) == 2
    patched = patched_corpus(corpus, tmp_path) / "configs"
    (valid, full), (valid_quiet, quiet) = load(patched, True), load(patched, False)
    assert valid_quiet.entries == valid.entries and valid_quiet.raw_entries == valid.raw_entries
    assert quiet.sorted() == [d for d in full.sorted() if d.severity is not Severity.WARNING]
    assert any(d.severity is Severity.WARNING for d in full.diagnostics)
