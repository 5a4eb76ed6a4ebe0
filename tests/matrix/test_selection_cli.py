"""Filters, the CLI surface (formats, exit codes, notices) and the published row schema."""

from __future__ import annotations

import copy
import json

import jsonschema
import pytest

from infx.matrix import EvalMode, Selection, bucketize
from infx.matrix.rowschema import row_problems, row_schema
from testing.matrix_helpers import entry, fixed, mn_entry, rows_of, sn_entry


@pytest.fixture
def mixed(make_repo):
    return make_repo(
        {
            "dsr1-fp8-mi300x-sglang": sn_entry(),
            "gptoss-fp4-h200-vllm": entry(
                model_prefix="gptoss",
                runner="h200",
                precision="fp4",
                framework="vllm",
                scenarios={"fixed-seq-len": [fixed({"tp": 2, "conc-list": [8, 4]}, isl=2048)]},
            ),
            "dsr1-fp4-gb200-dynamo-trt": mn_entry(),
            "dsv4-agentic": entry(
                model_prefix="dsv4",
                runner="cluster:b300-nv",
                scenarios={
                    "agentic-coding": [{"search-space": [{"tp": 8, "kv-offloading": "none", "conc-list": [1, 2]}]}]
                },
            ),
        }
    )


@pytest.mark.parametrize(
    "selection, keys",
    [
        (Selection(model_prefixes=("gptoss",)), ["gptoss-fp4-h200-vllm"]),
        (Selection(frameworks=("dynamo-trt", "vllm")), ["gptoss-fp4-h200-vllm", "dsr1-fp4-gb200-dynamo-trt"]),
        (Selection(precisions=("fp4",)), ["gptoss-fp4-h200-vllm", "dsr1-fp4-gb200-dynamo-trt"]),
        (Selection(runner_types=("h200", "gb200")), ["gptoss-fp4-h200-vllm", "dsr1-fp4-gb200-dynamo-trt"]),
        (Selection(seq_lens=("2048_1024",)), ["gptoss-fp4-h200-vllm", "dsv4-agentic"]),
        (Selection(scenario_types=("agentic-coding",)), ["dsv4-agentic"]),
        (Selection(node_types=("multi-node",)), ["dsr1-fp4-gb200-dynamo-trt"]),
    ],
)
def test_entry_filters(mixed, selection, keys):
    assert list(dict.fromkeys(r["config-key"] for r in mixed.build(selection))) == keys


def test_every_sequence_gets_its_bucket(mixed):
    buckets = bucketize(mixed.build())
    assert {name: len(rows) for name, rows in buckets.items()} == {
        "single_node/1k1k": 5,
        "single_node/8k1k": 5,
        "single_node/2048_1024": 2,
        "multi_node/1k1k": 1,
        "single_node/agentic": 2,
    }
    assert [r["conc"] for r in buckets["single_node/2048_1024"]] == [8, 4]  # lists keep their order
    assert {r["exp-name"] for r in buckets["single_node/2048_1024"]} == {"gptoss_2048_1024"}
    assert buckets["single_node/2048_1024"][0]["max-model-len"] == 2048 + 1024 + 256


def test_json_is_stable_and_table_is_aligned(mixed, tmp_path):
    first, second = mixed.cli("--format", "json"), mixed.cli()
    assert rows_of(first) == rows_of(second) == mixed.build() and first.stdout == second.stdout
    table = mixed.cli("--format", "table")
    assert table.returncode == 0
    lines = table.stdout.splitlines()
    assert "single_node/8k1k: 5 points" in lines and lines[-1] == "total: 15 points in 5 buckets"
    header = next(line for line in lines if line.strip().startswith("config-key"))
    row = lines[lines.index(header) + 1]
    assert header.index("runner") == row.index("  mi300x  ") + 2  # columns line up
    out = tmp_path / "m.json"
    result = mixed.cli("--output", str(out), "--evals-only")
    assert result.returncode == 0 and result.stdout == ""
    assert [r["conc"] for r in json.loads(out.read_text())] == [32, 64, 2]  # agentic evals are opt-in here


def test_nothing_matched_is_not_an_error(mixed):
    result = mixed.cli("--framework", "nonexistent")
    assert rows_of(result) == [] and "the selection matched no points" in result.stderr


def test_invalid_input_exits_1_without_output(mixed, make_repo):
    mixed.master.write_text(mixed.master.read_text() + "dsv4-agentic: {}\n")  # a duplicate key
    result = mixed.cli()
    assert result.returncode == 1 and result.stdout == "" and "duplicate" in result.stderr
    bad = make_repo(
        {
            "a": entry(
                runner="cluster:b300-nv",
                scenarios={
                    "agentic-coding": [
                        {
                            "search-space": [
                                {
                                    "tp": 8,
                                    "kv-offloading": "dram",
                                    "kv-offload-backend": {"name": "hicache"},
                                    "conc-list": [1],
                                }
                            ]
                        }
                    ]
                },
            )
        }
    )
    result = bad.cli()
    assert result.returncode == 1 and result.stdout == "" and "requires dram-utilization" in result.stderr
    assert "test-master.yaml:" in result.stderr  # located at the search-space entry


def test_unknown_flags_and_values_are_usage_errors(mixed):
    assert mixed.cli("--seq-lens", "4k").returncode == 2
    assert mixed.cli("--scenario-type", "chat").returncode == 2
    assert mixed.cli("--no-evals", "--evals-only").returncode == 2
    assert mixed.cli("--format", "yaml").returncode == 2
    missing = mixed.cli("--config", "configs/no-such-master.yaml")
    assert missing.returncode == 2 and "no-such-master.yaml" in missing.stderr and missing.stdout == ""


def test_row_schema_is_valid_and_agrees_with_jsonschema(mixed):
    jsonschema.Draft202012Validator.check_schema(row_schema())
    reference = jsonschema.Draft202012Validator(row_schema())
    rows = mixed.build() + mixed.build(evals=EvalMode.ALL)
    mutations = [
        lambda r: r.update(conc=True),
        lambda r: r.update({"recipe-fingerprint": "ABC"}),
        lambda r: r.pop("exp-name"),
        lambda r: r.update(extra=1),
        lambda r: r.update({"spec-decoding": "eagle"}),
        lambda r: r.update(disagg=True) if "prefill" not in r else r["prefill"].update(tp=0),
        lambda r: r.update({"scenario-type": "chat"}),
        lambda r: r.update({"run-eval": 1}),
        lambda r: r.update(image=""),
        lambda r: r.update(conc=[]) if "prefill" in r else r.update(conc=0),
    ]
    assert row_problems(rows) == [] and all(reference.is_valid(r) for r in rows)
    for row in rows:
        for mutate in mutations:
            bad = copy.deepcopy(row)
            mutate(bad)
            assert row_problems([bad]) and not reference.is_valid(bad), (mutate, bad)


@pytest.mark.parametrize("image", ["img:1", "bild:größe-ü", "\u2603"])
def test_fingerprint_is_the_contract_canonical_form(image):
    import hashlib

    from infx.matrix.derive import topology_fingerprint as fingerprint

    row = {"image": image, "conc": 4, "exp-name": "x", "prefill": {"tp": 4, "ep": 1}, "run-eval": False}
    body = {"image": image, "prefill": {"ep": 1, "tp": 4}}
    expected = hashlib.sha256(json.dumps(body, sort_keys=True, separators=(",", ":")).encode("ascii")).hexdigest()
    assert fingerprint(row) == expected == fingerprint({**row, "conc": 8, "recipe-fingerprint": "f" * 64})
    assert fingerprint({**row, "run-eval": True, "eval-conc": 4}) == expected  # eval marks are not the topology
    assert fingerprint({**row, "eval-only": True}) != expected  # an eval-only job is another job


def test_selection_takes_a_lone_string_as_one_value(mixed):
    assert Selection(config_keys="dsv4-*").config_keys == ("dsv4-*",)
    assert {r["config-key"] for r in mixed.build(Selection(config_keys="dsv4-*", seq_lens=["8k1k"]))} == {
        "dsv4-agentic"
    }


def test_stdlib_json_fallback_is_byte_identical(mixed, monkeypatch):
    """Without orjson the fingerprints and the JSON text are the same (fallback encoder)."""
    from infx import jsonfast

    rows = mixed.build()
    with_orjson = ([jsonfast.canonical(r) for r in rows], json.loads(jsonfast.dumps(rows)))
    monkeypatch.setattr(jsonfast, "orjson", None)
    assert ([jsonfast.canonical(r) for r in rows], json.loads(jsonfast.dumps(rows))) == with_orjson
    assert mixed.build() == rows


def test_a_matrix_request_gives_the_rows_and_notices_the_command_prints(mixed):
    from infx.diagnostics import UsageError
    from infx.matrix.request import MatrixRequest, expand_matrix

    request = MatrixRequest(
        masters=(mixed.master,),
        runners=mixed.root / "configs" / "runners.yaml",
        components=mixed.root / "configs" / "components.yaml",
        selection=Selection(config_keys=("dsr1-*", "nope-*")),
        evals=EvalMode.ONLY,
    )
    matrix = expand_matrix(request)
    printed = mixed.cli("--config-key", "dsr1-*,nope-*", "--evals-only")
    assert matrix.rows == rows_of(printed) and matrix.rows
    assert matrix.notices and all(note.message in printed.stderr for note in matrix.notices)
    with pytest.raises(UsageError, match="cannot be combined"):
        MatrixRequest(evals=EvalMode.NONE | EvalMode.ONLY).check()
