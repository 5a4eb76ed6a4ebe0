"""The full expansion of the (patched) reference corpus: counts and sample rows from
reference/matrix.md §4–§5, built here from those facts, not from infx's output."""

from __future__ import annotations

import gzip
import hashlib
import json
from collections import Counter

import pytest

from infx.config import load_config_set
from infx.matrix import EvalMode, Selection, bucketize, build_matrix
from testing.cli import run_cli
from testing.corpus import REFERENCE_ROWS, patched_corpus
from testing.matrix_helpers import CORPUS

AGENTIC_DISAGG = "dsv4-fp4-gb300-dynamo-sglang-agentic-disagg"
AGENTIC_AGG = "dsv4-fp4-gb300-dynamo-sglang-agentic-agg"
RECIPES = "recipes/sglang/deepseek-v4/agentic/"


@pytest.fixture(scope="module")
def corpus_repo(tmp_path_factory):
    if not CORPUS.is_dir():
        pytest.fail(f"the reference corpus is missing at {CORPUS}")
    return patched_corpus(CORPUS, tmp_path_factory.mktemp("corpus"))


@pytest.fixture(scope="module")
def config_set(corpus_repo):
    masters = [corpus_repo / "configs" / "nvidia-master.yaml", corpus_repo / "configs" / "amd-master.yaml"]
    config_set, report = load_config_set(masters)
    assert config_set is not None, report.diagnostics[:5]
    return config_set


@pytest.fixture(scope="module")
def rows(config_set):
    return build_matrix(config_set)


# Fields infx adds to the reference's rows (docs/matrix.md); every other field is the reference's.
INFX_FIELDS = {"config-key", "recipe-fingerprint", "node-count"}


def test_rows_equal_the_reference_generators(rows):
    """The unmodified corpus (runner labels declared) expands to the reference's rows, field by field, in order."""
    expected = json.loads(gzip.decompress(REFERENCE_ROWS.read_bytes()))
    assert len(rows) == len(expected) == 1820
    for index, (row, reference) in enumerate(zip(rows, expected)):
        core = {key: value for key, value in row.items() if key not in INFX_FIELDS}
        assert core == reference, (index, row["config-key"])
    legacy = [r for r in rows if r["config-key"] == "dsv4-fp4-gb200-dynamo-vllm-mtp2"]
    assert (
        legacy[0]["disagg"] is True and legacy[0]["decode"]["num-worker"] == 0
    )  # the aggregated point, as the reference runs it


def bucket_sizes(rows):
    return {name: len(bucket) for name, bucket in bucketize(rows).items()}


def test_full_expansion_counts(rows):
    assert len(rows) == 1820
    assert bucket_sizes(rows) == {
        "single_node/8k1k": 690,
        "single_node/agentic": 482,
        "multi_node/8k1k": 383,
        "multi_node/1k1k": 1,
        "multi_node/agentic": 264,
    }
    assert sum(r["run-eval"] for r in rows) == 519
    assert sum("eval-conc" in r for r in rows) == 317
    assert sum(len(r["conc"]) for r in rows if "prefill" in r) == 906  # every multinode concurrency


@pytest.mark.parametrize(
    "mode, expected",
    [
        (
            EvalMode.NONE,
            {
                "single_node/8k1k": 690,
                "single_node/agentic": 482,
                "multi_node/8k1k": 383,
                "multi_node/1k1k": 1,
                "multi_node/agentic": 264,
            },
        ),
        (EvalMode.ONLY, {"evals": 202, "multinode_evals": 317, "agentic_evals": 33, "multinode_agentic_evals": 93}),
        (EvalMode.ALL, {"evals": 690, "multinode_evals": 375, "agentic_evals": 482, "multinode_agentic_evals": 116}),
    ],
)
def test_eval_mode_counts(config_set, mode, expected):
    assert bucket_sizes(build_matrix(config_set, evals=mode)) == expected


def test_filter_counts(config_set):
    count = lambda **kw: len(build_matrix(config_set, Selection(**kw), EvalMode.NONE))  # noqa: E731
    assert count(node_types=("single-node",)) == 1172
    assert count(node_types=("multi-node",)) == 648
    assert count(scenario_types=("agentic-coding",)) == 746
    assert count(seq_lens=("1k1k",)) == 747  # seq-lens filters fixed-seq-len only, as the reference
    assert count(config_keys=("*",)) == 1820
    assert count(runner_node_filter="mi355x") == 3105
    # reference 18103 on every node; the patched labels (gb300-nv ×3 nodes, h200-dgxc ×2,
    # cluster:mi325x-tw ×1) add their configs' 45×3 + 12×2 + 13×1 rows
    assert count(runner_node_filter="_") == 18103 + 45 * 3 + 12 * 2 + 13


def test_throughput_points_survive_eval_modes(config_set, rows):
    """Each throughput point is in exactly one list; eval rows never replace throughput rows."""
    throughput = build_matrix(config_set, evals=EvalMode.NONE)
    evals = build_matrix(config_set, evals=EvalMode.ONLY)

    def points(some_rows):
        return Counter(
            (
                r["config-key"],
                r["runner"],
                r["exp-name"],
                json.dumps(r.get("prefill"), sort_keys=True),
                r.get("tp"),
                r.get("ep"),
                r.get("isl"),
                json.dumps(r["conc"]),
            )
            for r in some_rows
        )

    assert points(rows) == points(throughput)  # default marking changes flags, never the points
    combined = bucketize(throughput + evals)
    throughput_lists = [rows for name, rows in combined.items() if "/" in name]
    eval_lists = [rows for name, rows in combined.items() if "/" not in name]
    assert points([r for bucket in throughput_lists for r in bucket]) == points(throughput)
    assert sum(len(b) for b in eval_lists) == len(evals) == 645
    assert not any(r.get("eval-only") for bucket in throughput_lists for r in bucket)


def expected_fingerprint(row):
    body = {
        k: v for k, v in row.items() if k not in ("conc", "exp-name", "run-eval", "eval-conc", "recipe-fingerprint")
    }
    canonical = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    return hashlib.sha256(canonical.encode()).hexdigest()


def test_sample_rows_agentic_disagg(rows):
    """§4.1: five rows, one concurrency each, 721 GB DRAM (860160 MiB × 0.8 on full 4-GPU nodes)."""
    sample = [r for r in rows if r["config-key"] == AGENTIC_DISAGG]
    table = [  # conc, prefill (nw, tp, ep, dpa), decode (nw, tp, ep, dpa), recipe, reference nodes
        (80, (1, 8, 8, True), (1, 4, 1, False), "disagg-gb300-2p1d-dep8-tp4-c80-mtp-kvoffload.yaml", 3),
        (256, (1, 8, 8, True), (1, 16, 16, True), "disagg-gb300-2p4d-dep8-dep16-c256-mtp-kvoffload.yaml", 6),
        (512, (2, 8, 8, True), (1, 16, 16, True), "disagg-gb300-4p4d-dep8-dep16-c512-mtp-kvoffload.yaml", 8),
        (768, (3, 8, 8, True), (1, 16, 16, True), "disagg-gb300-6p4d-dep8-dep16-c768-mtp-kvoffload.yaml", 10),
        (1536, (6, 8, 8, True), (1, 16, 16, True), "disagg-gb300-12p4d-dep8-dep16-c1536-mtp-kvoffload.yaml", 16),
    ]
    names = [
        "dsv4_p1x8ep8dpa_d1x4_conc80_kvdram-hicache",
        "dsv4_p1x8ep8dpa_d1x16ep16dpa_conc256_kvdram-hicache",
        "dsv4_p2x8ep8dpa_d1x16ep16dpa_conc512_kvdram-hicache",
        "dsv4_p3x8ep8dpa_d1x16ep16dpa_conc768_kvdram-hicache",
        "dsv4_p6x8ep8dpa_d1x16ep16dpa_conc1536_kvdram-hicache",
    ]
    expected = []
    for (conc, p, d, recipe, nodes), name in zip(table, names):
        row = {
            "image": "lmsysorg/sglang:nightly-dev-cu13-20260719-99f5a6f4",
            "model": "deepseek-ai/DeepSeek-V4-Pro",
            "model-prefix": "dsv4",
            "precision": "fp4",
            "framework": "dynamo-sglang",
            "runner": "cluster:gb300-nv",
            "spec-decoding": "mtp",
            "prefill": {
                "num-worker": p[0],
                "tp": p[1],
                "ep": p[2],
                "dp-attn": p[3],
                "additional-settings": [f"CONFIG_FILE={RECIPES}{recipe}"],
                "pp": 1,
                "dcp-size": 1,
                "pcp-size": 1,
            },
            "decode": {
                "num-worker": d[0],
                "tp": d[1],
                "ep": d[2],
                "dp-attn": d[3],
                "pp": 1,
                "dcp-size": 1,
                "pcp-size": 1,
            },
            "conc": [conc],
            "kv-offloading": "dram",
            "kv-offload-backend": {"name": "hicache"},
            "total-cpu-dram-gb": 721,
            "duration": 3600,
            "exp-name": name,
            "disagg": True,
            "scenario-type": "agentic-coding",
            "router": {"name": "dynamo-router", "version": "1.3.0.dev20260718"},
            "kv-p2p-transfer": "mooncake",
            "run-eval": False,
            # infx counts the dedicated etcd/nats node these recipes request; the reference did not
            "node-count": nodes + 1,
            "config-key": AGENTIC_DISAGG,
        }
        row["recipe-fingerprint"] = expected_fingerprint(row)
        expected.append(row)
    assert sample == expected
    assert list(sample[0]) == list(expected[0])  # field order too: the JSON output is stable


def test_sample_rows_agentic_agg(rows, config_set):
    """§4.2: the aggregated entry is emitted as the prefill + decode(num-worker 0) pair."""
    sample = [r for r in rows if r["config-key"] == AGENTIC_AGG]
    assert [r["exp-name"] for r in sample] == [f"dsv4_p1x4_d0x4_conc{c}_kvdram-hicache" for c in (2, 4, 8, 16)]
    assert [r["conc"] for r in sample] == [[2], [4], [8], [16]]
    for row in sample:
        assert row["decode"] == {
            "num-worker": 0,
            "tp": 4,
            "ep": 1,
            "dp-attn": False,
            "pp": 1,
            "dcp-size": 1,
            "pcp-size": 1,
        }
        assert row["prefill"]["additional-settings"] == [f"CONFIG_FILE={RECIPES}agg-gb300-tp4-mtp-kvoffload.yaml"]
        assert (row["total-cpu-dram-gb"], row["disagg"], row["node-count"]) == (721, False, 1 + 1)
        assert "kv-p2p-transfer" not in row
    assert len({r["recipe-fingerprint"] for r in sample}) == 1
    evals = [r for r in build_matrix(config_set, Selection(config_keys=(AGENTIC_AGG,)), EvalMode.ONLY)]
    assert [(r["conc"], r["eval-conc"]) for r in evals] == [([16], 16)]
    (merged,) = build_matrix(config_set, Selection(config_keys=(AGENTIC_AGG,)), EvalMode.ALL)
    assert (merged["conc"], merged["eval-conc"]) == ([2, 4, 8, 16], 16)


def test_sample_rows_other_gb300(rows):
    agentx = [r for r in rows if r["config-key"] == "dsv4-fp4-gb300-dynamo-trt-agentx"]
    assert len(agentx) == 6 and {r["total-cpu-dram-gb"] for r in agentx} == {193}  # utilization 0.21429
    assert len([r for r in rows if r["config-key"].startswith("dsv4-fp4-gb300")]) == 75
    trt = [r for r in rows if r["config-key"] == "dsv4-fp4-gb300-dynamo-trt"]
    assert [r["conc"] for r in trt] == [[c] for c in (4, 5, 15, 25, 55, 154, 308, 615, 1127, 1229, 2253, 2253, 4301)]
    assert {(r["exp-name"], r["max-model-len"], r["isl"], r["osl"]) for r in trt} == {("dsv4_8k1k", 9472, 8192, 1024)}


def test_cli_json_matches_the_api(corpus_repo, rows):
    result = run_cli(
        "matrix",
        "--config",
        "configs/nvidia-master.yaml",
        "--config",
        "configs/amd-master.yaml",
        "--format",
        "json",
        cwd=corpus_repo,
    )
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == rows


def test_one_topology_keeps_its_fingerprint_across_concurrencies_and_eval_marks(rows):
    """Every row of a topology (all but conc, names and eval marks) shares one fingerprint, eval-marked or not."""
    from infx.matrix.derive import topology

    by_topology: dict = {}
    for row in rows:
        by_topology.setdefault(topology(row), set()).add(row["recipe-fingerprint"])
    assert all(len(prints) == 1 for prints in by_topology.values())
    assert len({p for prints in by_topology.values() for p in prints}) == len(by_topology)
    marked = {r["recipe-fingerprint"] for r in rows if r["run-eval"]}
    unmarked = {r["recipe-fingerprint"] for r in rows if not r["run-eval"]}
    assert marked & unmarked  # topologies with an eval at one concurrency and none at another


def test_docs_matrix_names_the_fields_a_topology_leaves_out():
    """docs/matrix.md states which fields the fingerprint's topology leaves out: NOT_TOPOLOGY's, no more, no less."""
    import re
    from pathlib import Path

    from infx.matrix.derive import NOT_TOPOLOGY

    doc = (Path(__file__).resolve().parents[2] / "docs" / "matrix.md").read_text()
    sentence = re.search(
        r"A point's topology is its row without (.*?)\(`infx\.matrix\.derive\.NOT_TOPOLOGY`\)", doc, re.S
    )
    assert sentence and set(re.findall(r"`([a-z-]+)`", sentence.group(1))) == NOT_TOPOLOGY


def test_rows_pass_jsonschema(rows, config_set):
    """jsonschema (a second implementation) agrees with the jsonschema-rs check build_matrix runs: every corpus row of
    every mode is valid."""
    import jsonschema

    from infx.matrix.rowschema import row_schema

    validator = jsonschema.Draft202012Validator(row_schema())
    every = rows + build_matrix(config_set, evals=EvalMode.ALL) + build_matrix(config_set, evals=EvalMode.ONLY)
    assert [e.message for r in every for e in validator.iter_errors(r)][:3] == []


@pytest.mark.parametrize("master, expected", [("nvidia-master.yaml", 1355), ("amd-master.yaml", 465)])
def test_one_master_file(corpus_repo, master, expected):
    config_set, report = load_config_set([corpus_repo / "configs" / master])
    assert config_set is not None, report.diagnostics[:3]
    assert len(build_matrix(config_set)) == expected
