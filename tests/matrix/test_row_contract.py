"""The row contract on rows infx is given (`infx plan --rows`, `infx github select-points`): the
row schema and the cross-field rules `infx matrix` applies to the rows it builds, every problem
located at its row and field, exit 1; the rows the reference's row models accept are accepted.

The rows are the reference's own test fixtures (utils/matrix_logic/test_validation.py:
valid_single_node_matrix_entry, valid_multinode_matrix_entry and its agentic entries), with
infx's identity fields added (config-key, recipe-fingerprint, node-count: docs/matrix.md) and the
worker parallelism written out as the reference's generator writes it.
"""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path

import pytest

from infx.diagnostics import InfxError
from infx.matrix import refuse_invalid_rows
from infx.matrix.rowschema import row_findings
from testing.cli import run_cli
from testing.matrix_helpers import sn_entry

REPO = Path(__file__).resolve().parents[2]
IDENTITY = {"config-key": "dsr1-fp4-mi355x-sglang", "recipe-fingerprint": "0" * 64}
SINGLE = {
    "image": "rocm/7.0:rocm7.0_ubuntu_22.04_sgl-dev-v0.5.2-rocm7.0-mi35x-20250915",
    "model": "amd/DeepSeek-R1-0528-MXFP4-Preview",
    "model-prefix": "dsr1",
    "precision": "fp4",
    "framework": "sglang",
    "spec-decoding": "none",
    "runner": "mi355x",
    "isl": 1024,
    "osl": 1024,
    "tp": 8,
    "pp": 1,
    "dcp-size": 1,
    "pcp-size": 1,
    "ep": 1,
    "dp-attn": False,
    "conc": 4,
    "max-model-len": 2248,
    "exp-name": "dsr1_1k1k",
    "disagg": False,
    "run-eval": False,
    **IDENTITY,
}
WORKER = {"pp": 1, "dcp-size": 1, "pcp-size": 1}
MULTI = {
    "image": "nvcr.io#nvidia/ai-dynamo/tensorrtllm-runtime:0.5.1-rc0.pre3",
    "model": "deepseek-r1-fp4",
    "model-prefix": "dsr1",
    "precision": "fp4",
    "framework": "dynamo-trt",
    "spec-decoding": "none",
    "runner": "gb200",
    "isl": 1024,
    "osl": 1024,
    "prefill": {
        "hardware": "gb200",
        "num-worker": 5,
        "tp": 4,
        "ep": 4,
        "dp-attn": True,
        "additional-settings": ["PREFILL_MAX_NUM_TOKENS=8448", "PREFILL_MAX_BATCH_SIZE=1"],
        **WORKER,
    },
    "decode": {
        "hardware": "h100",
        "num-worker": 1,
        "tp": 8,
        "ep": 8,
        "dp-attn": True,
        "additional-settings": [
            "DECODE_MAX_NUM_TOKENS=256",
            "DECODE_MAX_BATCH_SIZE=256",
            "DECODE_GPU_MEM_FRACTION=0.8",
            "DECODE_MTP_SIZE=0",
        ],
        **WORKER,
    },
    "conc": [2150],
    "max-model-len": 2248,
    "exp-name": "dsr1_1k1k",
    "disagg": True,
    "kv-p2p-transfer": "nixl",
    "run-eval": False,
    "node-count": 6,
    **IDENTITY,
}
AGENTIC = {
    "image": "cquil/vllm-openai:v0.21.0-8813c92",
    "model": "deepseek-ai/DeepSeek-V4-Pro",
    "model-prefix": "dsv4",
    "precision": "fp4",
    "framework": "vllm",
    "runner": "cluster:b200-dgxc",
    "tp": 8,
    "pp": 1,
    "dcp-size": 1,
    "pcp-size": 1,
    "ep": 1,
    "dp-attn": False,
    "spec-decoding": "none",
    "conc": 1,
    "kv-offloading": "dram",
    "kv-offload-backend": {"name": "future-backend"},
    "total-cpu-dram-gb": 2949,
    "duration": 3600,
    "exp-name": "dsv4_tp8_conc1_kvdram-future-backend",
    "scenario-type": "agentic-coding",
    "run-eval": False,
    **IDENTITY,
}


def changed(row: dict, path: tuple = (), value=None, delete: bool = False) -> dict:
    row = copy.deepcopy(row)
    target = row
    for part in path[:-1]:
        target = target[part]
    if delete:
        del target[path[-1]]
    else:
        target[path[-1]] = value
    return row


ACCEPTED = [
    pytest.param(SINGLE, id="reference single-node fixture"),
    pytest.param(MULTI, id="reference multinode fixture"),
    pytest.param(AGENTIC, id="arbitrary backend name"),
    *[
        pytest.param(changed(SINGLE, ("spec-decoding",), value), id=f"spec-decoding {value}")
        for value in ("mtp", "draft_model")
    ],
    pytest.param(
        changed(AGENTIC, ("kv-offload-backend",), {"name": "lmcache", "version": "0.5.1"}), id="backend with version"
    ),
    pytest.param(
        changed(changed(MULTI, ("prefill", "hardware"), delete=True), ("decode", "hardware"), delete=True),
        id="no hardware",
    ),
    pytest.param(
        changed(changed(MULTI, ("disagg",), False), ("kv-p2p-transfer",), delete=True), id="aggregated without transfer"
    ),
    pytest.param(changed(changed(MULTI, ("eval-all-concs",), True), ("run-eval",), True), id="all-evals batch marker"),
    pytest.param(changed(MULTI, ("conc",), [64, 8, 8]), id="conc list in any order, repeated"),
    pytest.param(changed(SINGLE, ("router",), {"name": "vllm-router", "version": "0.1.14"}), id="router"),
]


@pytest.mark.parametrize("row", ACCEPTED)
def test_rows_the_reference_accepts_are_accepted(row):
    assert row_findings(row) == []


# (row, path of the finding, rule): the reference refuses each (its test_validation.py cases and
# the list), infx with the rule named here.
REFUSED = [
    pytest.param(
        changed(SINGLE, ("spec-decoding",), "eagle"),
        ("spec-decoding",),
        "not-allowed-value",
        id="unknown spec-decoding",
    ),
    pytest.param(changed(SINGLE, ("model",), delete=True), (), "missing-field", id="missing required field"),
    pytest.param(changed(SINGLE, ("extra-field",), "value"), ("extra-field",), "unknown-key", id="unknown field"),
    pytest.param(changed(SINGLE, ("disagg",), True), ("disagg",), "not-allowed-value", id="single-node disagg"),
    pytest.param(
        changed(MULTI, ("decode", "hardware"), delete=True),
        ("prefill", "hardware"),
        "hardware-both-or-neither",
        id="hardware on one worker",
    ),
    pytest.param(changed(MULTI, ("conc",), 2150), ("conc",), "wrong-type", id="multinode conc not a list"),
    pytest.param(
        changed(MULTI, ("prefill",), delete=True), ("decode",), "missing-field", id="multinode without prefill"
    ),
    pytest.param(
        changed(MULTI, ("decode",), delete=True), ("prefill",), "missing-field", id="multinode without decode"
    ),
    pytest.param(changed(AGENTIC, ("tp",), delete=True), (), "missing-field", id="agentic without its workers"),
    pytest.param(
        changed(MULTI, ("kv-p2p-transfer",), delete=True),
        ("disagg",),
        "kv-p2p-transfer-required",
        id="disagg without transfer",
    ),
    pytest.param(
        changed(changed(SINGLE, ("dcp-size",), 3), ("tp",), 8),
        ("dcp-size",),
        "tp-divisible-by-dcp",
        id="dcp does not divide tp",
    ),
    pytest.param(changed(MULTI, ("prefill", "pp"), 0), ("prefill", "pp"), "out-of-range", id="worker pp 0"),
    pytest.param(
        changed(AGENTIC, ("kv-offloading",), "none"),
        ("kv-offload-backend",),
        "kv-offload-backend-coupling",
        id="backend without offload",
    ),
    pytest.param(
        changed(AGENTIC, ("kv-offload-backend",), delete=True),
        ("kv-offloading",),
        "kv-offload-backend-coupling",
        id="offload without backend",
    ),
    pytest.param(
        changed(AGENTIC, ("kv-offload-backend",), {"name": "lmcache", "mode": "x"}),
        ("kv-offload-backend", "mode"),
        "unknown-key",
        id="backend with unknown metadata",
    ),
    pytest.param(
        changed(MULTI, ("router",), {"name": "dynamo-router"}),
        ("router",),
        "missing-field",
        id="router without version",
    ),
]


@pytest.mark.parametrize("row, path, rule", REFUSED)
def test_rows_the_reference_refuses_are_refused_at_their_field(row, path, rule):
    findings = row_findings(row)
    assert (path, rule) in [(found[0], found[1]) for found in findings], findings
    assert all(message and hint for _, _, message, hint in findings)


def test_plan_rows_refuses_every_bad_row_with_its_index_field_and_position(tmp_path):
    rows = [
        SINGLE,
        changed(SINGLE, ("spec-decoding",), "eagle"),
        MULTI,
        changed(MULTI, ("decode", "hardware"), delete=True),
    ]
    path = tmp_path / "rows.json"
    path.write_text(json.dumps(rows, indent=2))
    done = run_cli("plan", "--rows", str(path), "--event", "workflow_dispatch", "--format", "json", cwd=tmp_path)
    assert done.returncode == 1 and done.stdout == "" and "Traceback" not in done.stderr
    text = path.read_text().splitlines()
    found = re.findall(
        rf"{re.escape(path.name)}:(\d+):(\d+): error\[([a-z-]+)\]: row (\d+) \(at \$\[(\d+)\]\): (.*)", done.stderr
    )
    assert [(rule, index) for _, _, rule, index, _, _ in found] == [
        ("not-allowed-value", "1"),
        ("hardware-both-or-neither", "3"),
    ]
    for line, column, rule, _index, _, _message in found:  # each at its field's key in the file
        assert text[int(line) - 1][int(column) - 1 :].startswith(
            '"spec-decoding"' if rule == "not-allowed-value" else '"hardware"'
        )
    assert "eagle" in found[0][5] and "did you mean" not in found[1][5]
    assert "docs/matrix.md" in done.stderr  # the hint says where the contract is


def test_plan_rows_plans_the_rows_the_reference_accepts(tmp_path):
    path = tmp_path / "rows.json"
    path.write_text(json.dumps([row.values[0] for row in ACCEPTED]))
    done = run_cli("plan", "--rows", str(path), "--event", "workflow_dispatch", "--format", "json", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["point-count"] == len(ACCEPTED)


def test_select_points_refuses_a_plan_with_a_bad_row(tmp_path):
    plan = {"buckets": {"single_node/1k1k": [SINGLE, changed(SINGLE, ("disagg",), True)]}, "point-count": 2}
    path = tmp_path / "plan.json"
    path.write_text(json.dumps(plan))
    done = run_cli("github", "select-points", "--plan", str(path), "--points", "0000000000000000-c4", cwd=tmp_path)
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert re.search(
        r"error\[not-allowed-value\]: row 1 \(at \$\.buckets\.single_node/1k1k\[1\]\): disagg must be", done.stderr
    )


def test_a_generated_row_that_breaks_the_contract_is_matrix_row_schema_at_its_config(make_repo):
    # An internal-bug guard: build_matrix checks its own rows before handing them on. A real row of a
    # real config, broken by hand (no valid config can produce it), is refused at that config's key.
    repo = make_repo({"dsr1-fp8-mi300x-sglang": sn_entry()})
    config_set = repo.config_set()
    rows = repo.build()
    refuse_invalid_rows(config_set, rows)  # the rows it built pass
    rows[3]["conc"] = 0
    with pytest.raises(InfxError) as caught:
        refuse_invalid_rows(config_set, rows)
    (problem,) = caught.value.diagnostics
    assert problem.rule == "matrix-row-schema" and problem.file.endswith("test-master.yaml") and problem.line == 1
    assert "row.conc" in problem.message and "report this" in problem.hint
