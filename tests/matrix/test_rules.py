"""The behaviours of reference/matrix.md §6.2 that belong to the matrix (rules 1–19, 25's key
globbing), with the runner fixture it describes. Where infx deliberately differs (listed in
docs/matrix.md) the test pins infx's behaviour and names the difference."""

from __future__ import annotations

import copy

import pytest

from infx.diagnostics import InfxError, UsageError
from infx.matrix import EvalMode, Selection
from testing.matrix_helpers import RUNNERS, entry, fixed, mn_entry, rows_of, sn_entry

SN_KEY = "dsr1-fp8-mi300x-sglang"
MN_KEY = "dsr1-fp4-gb200-dynamo-trt"


def concs(rows):
    return [row["conc"] for row in rows]


# rule 1
def test_full_sweep_single_node(make_repo):
    rows = make_repo({SN_KEY: sn_entry()}).build(evals=EvalMode.NONE)
    assert concs(rows) == [4, 8, 16, 32, 64] * 2
    for row in rows:
        assert (row["pp"], row["dcp-size"], row["pcp-size"], row["ep"]) == (1, 1, 1, 1)
        assert row["dp-attn"] is False and row["disagg"] is False and row["run-eval"] is False
        assert row["config-key"] == SN_KEY and row["runner"] == "mi300x"
    assert {(r["isl"], r["exp-name"], r["max-model-len"]) for r in rows} == {
        (1024, "dsr1_1k1k", 2304),
        (8192, "dsr1_8k1k", 9472),
    }


# rules 2 and 3 (infx: min/max are plain filters on the ladder; no synthetic point, no restart)
@pytest.mark.parametrize(
    "selection, expected",
    [
        (Selection(seq_lens=("1k1k",), step_size=4), [4, 16, 64]),
        (Selection(seq_lens=("1k1k",), max_conc=16), [4, 8, 16]),
        (Selection(seq_lens=("1k1k",), max_conc=1), []),  # reference: synthetic [1]
        (Selection(seq_lens=("1k1k",), min_conc=5), [8, 16, 32, 64]),  # reference: 5,10,20,40,64
        (Selection(seq_lens=("1k1k",), max_tp=4), []),
    ],
)
def test_concurrency_filters(make_repo, selection, expected):
    assert concs(make_repo({SN_KEY: sn_entry()}).build(selection)) == expected


def test_conc_list_window(make_repo):
    config = entry(scenarios={"fixed-seq-len": [fixed({"tp": 8, "conc-list": [4, 16, 64]})]})
    assert concs(make_repo({SN_KEY: config}).build(Selection(min_conc=8, max_conc=32))) == [16]


@pytest.mark.parametrize(
    "selection, message",
    [
        (Selection(step_size=1), "greater than 1"),
        (Selection(min_conc=16, max_conc=8), "less than or equal"),
        (Selection(max_conc=0), "at least 1"),
        (Selection(max_tp=-1), "at least 1"),
        (Selection(seq_lens=("2k1k",)), "not a sequence name"),
    ],
)
def test_contradictory_selection_is_a_usage_error(make_repo, selection, message):
    with pytest.raises(UsageError, match=message) as caught:
        make_repo({SN_KEY: sn_entry()}).build(selection)
    assert caught.value.exit_code == 2


# rule 4
def test_cli_usage_errors(make_repo):
    repo = make_repo({SN_KEY: sn_entry()})
    result = repo.cli("--no-evals", "--all-evals")
    assert (result.returncode, result.stdout) == (2, "")
    assert "--all-evals cannot be combined with --no-evals" in result.stderr
    result = repo.cli("--step-size", "1")
    assert result.returncode == 2 and "greater than 1" in result.stderr
    result = repo.cli("--min-conc", "16", "--max-conc", "8")
    assert result.returncode == 2 and "less than or equal" in result.stderr
    result = repo.cli("--runner-type", "invalid_runner")
    assert result.returncode == 1 and "invalid runner type 'invalid_runner'" in result.stderr


# rule 5 (infx: --max-ep drops points whose ep is above the cap; the reference rewrote ep)
def test_max_tp_and_max_ep_filter_points(make_repo):
    config = entry(
        scenarios={
            "fixed-seq-len": [
                fixed(
                    {"tp": 8, "ep": 8, "conc-start": 4, "conc-end": 4},
                    {"tp": 2, "ep": 8, "conc-start": 100, "conc-end": 200},
                )
            ]
        }
    )
    repo = make_repo({SN_KEY: config})
    assert repo.build(Selection(max_ep=2)) == []
    assert [(r["tp"], r["ep"], r["conc"]) for r in repo.build(Selection(max_tp=2))] == [(2, 8, 100), (2, 8, 200)]
    assert [r["tp"] for r in repo.build(Selection(max_ep=8, max_tp=8))] == [8, 2, 2]


# rule 6
def test_runner_node_filter(make_repo):
    repo = make_repo({SN_KEY: sn_entry(), MN_KEY: mn_entry()})
    rows = repo.build(Selection(runner_node_filter="amd", seq_lens=("1k1k",), max_conc=4))
    assert [r["runner"] for r in rows] == ["mi300x-amd_0", "mi300x-amd_1"]
    assert repo.build(Selection(runner_node_filter="nonexistent")) == []
    rows = repo.build(Selection(runner_node_filter="gb200-nv_0"))
    assert [(r["config-key"], r["runner"]) for r in rows] == [(MN_KEY, "gb200-nv_0")]
    assert repo.build(Selection(runner_node_filter="gb300-nv_0")) == []


# rule 7
def test_multinode_row(make_repo):
    repo = make_repo({MN_KEY: mn_entry()})
    (row,) = repo.build()
    assert row["conc"] == [2150] and row["disagg"] is True and row["kv-p2p-transfer"] == "nixl"
    assert row["prefill"] == {
        "num-worker": 5,
        "tp": 4,
        "ep": 4,
        "dp-attn": True,
        "hardware": "gb200",
        "pp": 1,
        "dcp-size": 1,
        "pcp-size": 1,
    }
    assert row["decode"]["num-worker"] == 1 and row["decode"]["hardware"] == "h100"
    assert row["node-count"] == 6  # 5×tp4 on 4-GPU gb200 nodes + 1×tp8 on an 8-GPU h100 node
    assert repo.build(Selection(node_types=("single-node",))) == []
    explicit = mn_entry(
        prefill={"num-worker": 5, "tp": 4, "ep": 4, "dp-attn": True, "pp": 2, "dcp-size": 2, "pcp-size": 2},
        decode={"num-worker": 1, "tp": 8, "ep": 8, "dp-attn": True, "pp": 2, "dcp-size": 4, "pcp-size": 1},
    )
    (row,) = make_repo({MN_KEY: explicit}).build()
    assert (row["prefill"]["pp"], row["prefill"]["dcp-size"], row["prefill"]["pcp-size"]) == (2, 2, 2)
    assert (row["decode"]["pp"], row["decode"]["dcp-size"], row["decode"]["pcp-size"]) == (2, 4, 1)


# rule 8 (infx: no synthetic [max] point when the window is empty)
def test_multinode_concurrency(make_repo):
    ranged = mn_entry(**{"conc-list": None, "conc-start": 1, "conc-end": 8})
    del ranged["scenarios"]["fixed-seq-len"][0]["search-space"][0]["conc-list"]
    assert concs(make_repo({MN_KEY: ranged}).build()) == [[1, 2, 4, 8]]
    listed = mn_entry(**{"conc-list": [100, 200, 400]})
    repo = make_repo({MN_KEY: listed})
    assert repo.build(Selection(max_conc=1)) == []  # reference: [[1]]
    assert concs(repo.build(Selection(max_conc=200))) == [[100, 200]]


# rule 9
@pytest.mark.parametrize(
    "search, marks",
    [
        ({"tp": 8, "conc-start": 8, "conc-end": 64}, [False, False, True, True]),
        ({"tp": 8, "conc-list": [32, 128, 512]}, [False, True, True]),
    ],
)
def test_default_single_node_eval_marking(make_repo, search, marks):
    config = entry(scenarios={"fixed-seq-len": [fixed(dict(search)), fixed(dict(search), isl=8192)]})
    rows = make_repo({SN_KEY: config}).build()
    assert [r["run-eval"] for r in rows if r["isl"] == 8192] == marks
    assert not any(r["run-eval"] for r in rows if r["isl"] == 1024)


def _mn_8k(*concs_lists, num_workers=None):
    searches = []
    for index, conc_list in enumerate(concs_lists):
        workers = (num_workers or [1] * len(concs_lists))[index]
        searches.append(
            {
                "conc-list": conc_list,
                "prefill": {"num-worker": workers, "tp": 4, "ep": 4, "dp-attn": True},
                "decode": {"num-worker": 1, "tp": 8, "ep": 8, "dp-attn": True},
            }
        )
    return entry(
        runner="gb200",
        multinode=True,
        disagg=True,
        **{"kv-p2p-transfer": "nixl"},
        scenarios={"fixed-seq-len": [fixed(*searches, isl=8192)]},
    )


# rule 10
def test_default_multinode_eval_marking(make_repo):
    rows = make_repo({MN_KEY: _mn_8k([8, 16, 32], [8, 16, 64], num_workers=[1, 2])}).build()
    assert [(r["run-eval"], r.get("eval-conc")) for r in rows] == [(True, 32), (True, 64)]
    (row,) = make_repo({MN_KEY: _mn_8k([1])}).build()
    assert row["run-eval"] is False and "eval-conc" not in row
    rows = make_repo({MN_KEY: _mn_8k([2, 4, 8, 16, 32], [64, 128, 256])}).build()
    assert [(r["run-eval"], r.get("eval-conc")) for r in rows] == [(False, None), (True, 256)]


def _agentic_sn(*searches, runner="cluster:b300-nv", utilization=0.8):
    return entry(
        runner=runner, scenarios={"agentic-coding": [{"dram-utilization": utilization, "search-space": list(searches)}]}
    )


def _agentic_mn(*searches, runner="cluster:gb200-nv", utilization=0.8, disagg=True):
    return entry(
        model_prefix="dsv4",
        runner=runner,
        multinode=True,
        disagg=disagg,
        **({"kv-p2p-transfer": "nixl"} if disagg else {}),
        scenarios={"agentic-coding": [{"dram-utilization": utilization, "search-space": list(searches)}]},
    )


def _mn_search(concs_list, prefill_workers=1, **extra):
    return {
        "conc-list": concs_list,
        "prefill": {"num-worker": prefill_workers, "tp": 4, "ep": 1, "dp-attn": False},
        "decode": {"num-worker": 1, "tp": 4, "ep": 1, "dp-attn": False},
        **extra,
    }


# rule 11
def test_agentic_eval_marking_is_opt_in(make_repo):
    single = _agentic_sn(
        {"tp": 4, "kv-offloading": "none", "conc-list": [32]}, {"tp": 8, "kv-offloading": "none", "conc-list": [64]}
    )
    multi = _agentic_mn(_mn_search([8]), _mn_search([16]), _mn_search([32]), _mn_search([64], prefill_workers=2))
    repo = make_repo({"sn-agentic": single, "mn-agentic": multi})
    assert not any(r["run-eval"] for r in repo.build())
    evals = repo.build(evals=EvalMode.ONLY)
    assert [(r["config-key"], r["conc"], r.get("eval-conc")) for r in evals] == [
        ("sn-agentic", 64, None),
        ("mn-agentic", [32], 32),
        ("mn-agentic", [64], 64),
    ]
    assert all(r["eval-only"] and r["run-eval"] for r in evals)


# rule 12
@pytest.mark.parametrize("mode", [EvalMode.ALL, EvalMode.ONLY | EvalMode.ALL])
def test_all_evals_single_node(make_repo, mode):
    rows = make_repo({SN_KEY: sn_entry()}).build(evals=mode)
    assert [(r["isl"], r["conc"], r["run-eval"], r["eval-only"]) for r in rows] == [
        (8192, c, True, True) for c in (4, 8, 16, 32, 64)
    ]


# rule 13
def test_all_evals_multinode_merges_per_topology(make_repo):
    (row,) = make_repo({MN_KEY: _mn_8k([4, 16, 64])}).build(evals=EvalMode.ALL)
    assert row["conc"] == [4, 16, 64] and row["eval-all-concs"] is True and row["eval-only"] is True
    assert "eval-conc" not in row
    config = _mn_8k([4, 8, 16], [16, 32])
    config["scenarios"]["fixed-seq-len"].append(
        fixed(*copy.deepcopy(config["scenarios"]["fixed-seq-len"][0]["search-space"]))
    )
    rows = make_repo({MN_KEY: config}).build(evals=EvalMode.ALL)
    assert [(r["isl"], r["conc"]) for r in rows] == [(8192, [4, 8, 16, 32])]  # 1k1k rows are no eval rows


# rule 14
def test_all_evals_agentic(make_repo):
    multi = _agentic_mn(_mn_search([2]), _mn_search([16]), _mn_search([32]))
    single = _agentic_sn({"tp": 4, "kv-offloading": "none", "conc-list": [8]})
    rows = make_repo({"mn": multi, "sn": single}).build(evals=EvalMode.ALL)
    assert [(r["config-key"], r["conc"], r.get("eval-conc"), "eval-all-concs" in r) for r in rows] == [
        ("mn", [2, 16, 32], 32, False),
        ("sn", 8, None, False),
    ]
    assert rows[0]["exp-name"] == "dsv4_p1x4_d1x4_conc2x16x32"


# rule 15
@pytest.mark.parametrize(
    "parallelism, budget",
    [
        ({"tp": 4}, 1199),
        ({"tp": 4, "dcp-size": 2}, 1199),
        ({"tp": 4, "pcp-size": 2}, 2399),
        ({"tp": 4, "pp": 2}, 2399),
        ({"tp": 8}, 2399),
    ],
)
def test_single_node_dram_budget(make_repo, parallelism, budget):
    search = {**parallelism, "kv-offloading": "dram", "kv-offload-backend": {"name": "native"}, "conc-list": [4]}
    (row,) = make_repo({"a": _agentic_sn(search)}).build()
    assert (row["total-cpu-dram-gb"], row["duration"], row["scenario-type"]) == (budget, 3600, "agentic-coding")
    assert row["exp-name"] == f"dsr1_tp{parallelism['tp']}_conc4_kvdram-native"


def test_dram_budget_errors_are_located(make_repo):
    runners = copy.deepcopy(RUNNERS)
    runners["hardware"]["cluster:b300-nv"]["gpus-per-node"] = 2
    search = {"tp": 4, "kv-offloading": "dram", "kv-offload-backend": {"name": "native"}, "conc-list": [4]}
    repo = make_repo({"a": _agentic_sn(search)}, runners)
    with pytest.raises(InfxError, match="exceeds gpus-per-node") as caught:
        repo.build()
    (problem,) = caught.value.diagnostics
    assert problem.file.endswith("test-master.yaml") and problem.line is not None and problem.rule == "matrix-derive"


# rule 16
def test_multinode_dram_budget(make_repo):
    def config(prefill_tp, decode_tp):
        return _agentic_mn(
            {
                "conc-list": [16],
                "kv-offloading": "dram",
                "kv-offload-backend": {"name": "hicache"},
                "prefill": {"num-worker": 1, "tp": prefill_tp, "ep": 1, "dp-attn": False},
                "decode": {"num-worker": 1, "tp": decode_tp, "ep": 1, "dp-attn": False},
            },
            runner="cluster:mi355x-amds",
        )

    for decode_tp in (8, 4):
        (row,) = make_repo({"a": config(8, decode_tp)}).build()
        assert row["total-cpu-dram-gb"] == 2399 and row["kv-offloading"] == "dram"
        assert row["kv-offload-backend"] == {"name": "hicache"}
    assert row["exp-name"] == "dsv4_p1x8_d1x4_conc16_kvdram-hicache"
    with pytest.raises(InfxError, match="does not divide"):
        make_repo({"a": config(6, 8)}).build()


# rule 17
def test_multinode_agentic_rows(make_repo):
    search = {
        "conc-list": [16, 32, 64, 128, 256],
        "prefill": {
            "num-worker": 2,
            "tp": 4,
            "ep": 4,
            "dp-attn": False,
            "pp": 2,
            "dcp-size": 2,
            "pcp-size": 2,
            "hardware": "gb200",
        },
        "decode": {
            "num-worker": 1,
            "tp": 4,
            "ep": 1,
            "dp-attn": False,
            "pp": 2,
            "dcp-size": 2,
            "pcp-size": 1,
            "hardware": "h100",
        },
    }
    rows = make_repo({"a": _agentic_mn(search)}).build()
    assert concs(rows) == [[16], [32], [64], [128], [256]]
    assert [r["exp-name"] for r in rows] == [f"dsv4_p2x4ep4_d1x4_conc{c}" for c in (16, 32, 64, 128, 256)]
    assert {r["node-count"] for r in rows} == {9} and {r["kv-offloading"] for r in rows} == {"none"}
    assert len({r["recipe-fingerprint"] for r in rows}) == 1  # one topology, five concurrencies


# rule 18
def test_agentic_point_order(make_repo):
    single = _agentic_sn({"tp": 8, "kv-offloading": "none", "conc-list": [32, 8, 32]})
    multi = _agentic_mn(_mn_search([32, 8, 32]), runner="cluster:b300-nv")
    masters = {"sn": single, "mn": multi}
    pristine = copy.deepcopy(masters)
    repo = make_repo(masters)
    config_set = repo.config_set()
    before = copy.deepcopy(config_set.entries)
    from infx.matrix import build_matrix

    rows = build_matrix(config_set, Selection(runner_node_filter="b300-nv_"))
    assert [(r["runner"], r["conc"]) for r in rows if r["config-key"] == "sn"] == [
        ("b300-nv_0", 32),
        ("b300-nv_1", 32),
        ("b300-nv_0", 8),
        ("b300-nv_1", 8),
        ("b300-nv_0", 32),
        ("b300-nv_1", 32),
    ]
    assert [(r["runner"], r["conc"]) for r in rows if r["config-key"] == "mn"] == [
        ("b300-nv_0", [32]),
        ("b300-nv_0", [8]),
        ("b300-nv_0", [32]),
        ("b300-nv_1", [32]),
        ("b300-nv_1", [8]),
        ("b300-nv_1", [32]),
    ]
    assert config_set.entries == before and masters == pristine


# rule 19 (infx: --max-tp / --max-ep apply to agentic points too)
@pytest.mark.parametrize(
    "selection, expected",
    [
        (Selection(), [3, 6, 10]),
        (Selection(min_conc=5, max_conc=9), [6]),
        (Selection(max_conc=2), []),
        (Selection(step_size=3), [3, 9, 10]),
        (Selection(max_tp=4), []),
    ],
)
def test_agentic_ladder(make_repo, selection, expected):
    config = _agentic_sn({"tp": 8, "kv-offloading": "none", "conc-start": 3, "conc-end": 10})
    assert concs(make_repo({"a": config}).build(selection)) == expected


# rule 25 (key globbing; infx globs know only `*`, and a glob matching nothing is a notice)
KEYS = [
    "dsr1-fp4-b200-sglang",
    "dsr1-fp8-mi300x-sglang",
    "dsr1-fp8-h200-trt",
    "gptoss-fp4-b200-vllm",
    "gptoss-fp8-b200-sglang",
]


@pytest.fixture
def keyed_repo(make_repo):
    return make_repo(
        {
            key: entry(
                model_prefix=key.split("-")[0], scenarios={"fixed-seq-len": [fixed({"tp": 8, "conc-list": [4]})]}
            )
            for key in KEYS
        }
    )


@pytest.mark.parametrize(
    "patterns, expected",
    [
        (("*-sglang",), ["dsr1-fp4-b200-sglang", "dsr1-fp8-mi300x-sglang", "gptoss-fp8-b200-sglang"]),
        (
            ("*-sglang", "dsr1*"),
            ["dsr1-fp4-b200-sglang", "dsr1-fp8-mi300x-sglang", "dsr1-fp8-h200-trt", "gptoss-fp8-b200-sglang"],
        ),
        (("dsr1-fp8-h200-trt", "dsr1-fp8-h200-trt", "*trt"), ["dsr1-fp8-h200-trt"]),
        (("*b200*",), ["dsr1-fp4-b200-sglang", "gptoss-fp4-b200-vllm", "gptoss-fp8-b200-sglang"]),
    ],
)
def test_config_key_globs(keyed_repo, patterns, expected):
    assert [r["config-key"] for r in keyed_repo.build(Selection(config_keys=patterns))] == expected


def test_config_key_misses(keyed_repo):
    notices: list[str] = []
    assert keyed_repo.build(Selection(config_keys=("*-b300",)), notices=notices) == []
    assert any("'*-b300' matched no config keys" in n for n in notices)
    with pytest.raises(InfxError, match="does not exist") as caught:
        keyed_repo.build(Selection(config_keys=("?sr1-fp8-mi300x-sglang",)))  # `?` is literal
    assert "dsr1-fp8-mi300x-sglang" in caught.value.diagnostics[0].hint
    result = keyed_repo.cli("--config-key", "dsr1-fp8-mi300x-sglag")
    assert result.returncode == 1 and "Did you mean dsr1-fp8-mi300x-sglang" in result.stderr and result.stdout == ""
    result = keyed_repo.cli("--config-key", "nothing-*")
    assert (
        rows_of(result) == []
        and "infx matrix: notice[matrix-notice]: --config-key pattern 'nothing-*' matched no config keys"
        in result.stderr
    )


def test_the_reference_mains_aggregated_entry_expands_as_the_reference_expands_it(make_repo):
    """The reference's main reads prefill + decode in a `disagg: false` multinode entry (its test
    test_aggregated_multinode_allows_kv_p2p_transfer: MN with disagg false) and expands it like a
    disagg entry with `disagg: false`: both workers as written, pp/dcp-size/pcp-size made explicit."""
    aggregated = mn_entry()
    aggregated["disagg"] = False
    rows = make_repo({MN_KEY: aggregated}).build(evals=EvalMode.NONE)
    (disagg_row,) = make_repo({MN_KEY: mn_entry()}).build(evals=EvalMode.NONE)
    (row,) = rows
    assert row["disagg"] is False and row["kv-p2p-transfer"] == "nixl"
    assert row["prefill"] == {
        "num-worker": 5,
        "tp": 4,
        "ep": 4,
        "dp-attn": True,
        "hardware": "gb200",
        "pp": 1,
        "dcp-size": 1,
        "pcp-size": 1,
    }
    assert row["decode"]["num-worker"] == 1 and row["decode"]["hardware"] == "h100"
    different = {key for key in row if row[key] != disagg_row[key]}
    assert different == {"disagg", "recipe-fingerprint"}
    # Without a transfer too (the reference requires one only for disagg: true).
    del aggregated["kv-p2p-transfer"]
    (bare,) = make_repo({MN_KEY: aggregated}).build(evals=EvalMode.NONE)
    assert "kv-p2p-transfer" not in bare and bare["disagg"] is False
