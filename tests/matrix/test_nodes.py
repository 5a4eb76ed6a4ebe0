"""node-count of multinode rows: num-nodes, the CONFIG_FILE recipe, PREFILL/DECODE_NODES, GPU math
(reference/matrix.md §3.4 and §6.3), and the recipe cache."""

from __future__ import annotations

import copy
import os

import pytest
import yaml

from infx.diagnostics import InfxError
from testing.matrix_helpers import RUNNERS, entry, fixed

RECIPES = "benchmarks/multi_node/srt-slurm-recipes"


def agg_entry(worker: dict, **search):
    return entry(
        runner="gb200",
        multinode=True,
        disagg=False,
        scenarios={"fixed-seq-len": [fixed({"conc-list": [4], "worker": worker, **search}, isl=8192)]},
    )


def disagg_entry(prefill_settings=(), decode_settings=(), prefill_workers=1, decode_workers=1):
    prefill = {"num-worker": prefill_workers, "tp": 4, "ep": 4, "dp-attn": True}
    decode = {"num-worker": decode_workers, "tp": 8, "ep": 8, "dp-attn": True}
    if prefill_settings:
        prefill["additional-settings"] = list(prefill_settings)
    if decode_settings:
        decode["additional-settings"] = list(decode_settings)
    return entry(
        runner="gb200",
        multinode=True,
        disagg=True,
        **{"kv-p2p-transfer": "nixl"},
        scenarios={"fixed-seq-len": [fixed({"conc-list": [4], "prefill": prefill, "decode": decode})]},
    )


def write_recipe(repo, name: str, data: dict | str) -> None:
    path = repo.root / RECIPES / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(data if isinstance(data, str) else yaml.safe_dump(data))


def node_counts(repo, notices=None):
    return [row["node-count"] for row in repo.build(notices=notices)]


def test_aggregated_worker_pair_and_num_nodes(make_repo):
    worker = {
        "num-worker": 2,
        "tp": 8,
        "pp": 2,
        "ep": 1,
        "dp-attn": False,
        "additional-settings": ["CONFIG_FILE=recipes/aggregate.yaml"],
    }
    (row,) = make_repo({"agg": agg_entry(worker, **{"num-nodes": 3})}).build()
    assert row["prefill"] == {**worker, "dcp-size": 1, "pcp-size": 1}
    assert row["decode"] == {"num-worker": 0, "tp": 8, "pp": 2, "dcp-size": 1, "pcp-size": 1, "ep": 1, "dp-attn": False}
    assert (row["node-count"], row["disagg"]) == (3, False)


def test_recipe_counts_win(make_repo):
    repo = make_repo(
        {
            "roles": disagg_entry(["CONFIG_FILE=recipes/a/roles.yaml", "PREFILL_NODES=7", "DECODE_NODES=9"]),
            "colocated": disagg_entry(["CONFIG_FILE=recipes/a/colocate.yaml"]),
            "v1-infra": disagg_entry(["CONFIG_FILE=recipes/a/v1.yaml"]),
            "selector": disagg_entry(["CONFIG_FILE=recipes/a/variants.yaml:override_wide"]),
            "repo-path": disagg_entry([f"CONFIG_FILE={RECIPES}/a/roles.yaml"]),
        }
    )
    write_recipe(repo, "a/roles.yaml", {"schema": 2, "roles": {"prefill": {"nodes": 2}, "decode": {"nodes": 4}}})
    write_recipe(
        repo, "a/colocate.yaml", {"schema": 2, "roles": {"prefill": {"nodes": 2}, "decode": {"nodes": "colocate"}}}
    )
    write_recipe(
        repo,
        "a/v1.yaml",
        {"resources": {"prefill_nodes": 2, "decode_nodes": 1}, "infra": {"etcd_nats_dedicated_node": True}},
    )
    write_recipe(
        repo,
        "a/variants.yaml",
        {"base": {"schema": 2, "roles": {"agg": {"nodes": 3}}}, "override_wide": {"roles": {"agg": {"nodes": 5}}}},
    )
    assert node_counts(repo) == [6, 2, 4, 5, 6]  # v1.yaml: 2 + 1 + the dedicated etcd/nats node


def test_settings_and_gpu_arithmetic(make_repo):
    repo = make_repo(
        {
            "settings": disagg_entry(["PREFILL_NODES=2"], ["DECODE_NODES=1"]),
            "missing-recipe": disagg_entry(["CONFIG_FILE=recipes/not/there.yaml"], prefill_workers=3),
            "gpu-math": disagg_entry(prefill_workers=5, decode_workers=2),
        }
    )
    # gb200 has no hardware entry of its own: its family (cluster:gb200-nv) gives 4 GPUs per node
    assert node_counts(repo) == [3, 3 + 2, 5 + 4]


def test_unreadable_recipe_falls_back_with_a_notice(make_repo):
    repo = make_repo({"dup": disagg_entry(["CONFIG_FILE=recipes/dup.yaml"])})
    write_recipe(repo, "dup.yaml", "resources:\n  agg_nodes: 1\n  agg_nodes: 2\n")
    notices: list[str] = []
    assert node_counts(repo, notices) == [1 + 2]
    assert any("dup.yaml" in n and "duplicate key" in n for n in notices)


def test_node_count_problems_are_located_errors(make_repo):
    conflicting = make_repo({"c": disagg_entry(["CONFIG_FILE=recipes/a.yaml"], ["CONFIG_FILE=recipes/b.yaml"])})
    with pytest.raises(InfxError, match="conflicting CONFIG_FILE") as caught:
        conflicting.build()
    assert caught.value.diagnostics[0].line is not None
    runners = copy.deepcopy(RUNNERS)
    runners["labels"]["cluster:unknown"] = ["unknown_0"]  # a declared label without hardware metadata
    unknown = make_repo(
        {
            "u": entry(
                runner="cluster:unknown",
                multinode=True,
                disagg=True,
                **{"kv-p2p-transfer": "nixl"},
                scenarios={
                    "fixed-seq-len": [
                        fixed(
                            {
                                "conc-list": [4],
                                "prefill": {"num-worker": 1, "tp": 8, "ep": 1, "dp-attn": False},
                                "decode": {"num-worker": 1, "tp": 8, "ep": 1, "dp-attn": False},
                            }
                        )
                    ]
                },
            )
        },
        runners,
    )
    with pytest.raises(InfxError, match="cannot resolve gpus-per-node for 'cluster:unknown'"):
        unknown.build()
    bad_setting = make_repo({"b": disagg_entry(["PREFILL_NODES=two"])})
    with pytest.raises(InfxError, match="PREFILL_NODES"):
        bad_setting.build()


def test_recipe_cache_follows_edits(make_repo):
    repo = make_repo({"r": disagg_entry(["CONFIG_FILE=recipes/r.yaml"])})
    write_recipe(repo, "r.yaml", {"resources": {"agg_nodes": 2}})
    assert node_counts(repo) == [2]
    assert node_counts(repo) == [2]  # from the cache
    path = repo.root / RECIPES / "r.yaml"
    before = path.stat()
    write_recipe(repo, "r.yaml", {"resources": {"agg_nodes": 12}})
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns + 1_000_000))
    assert node_counts(repo) == [12]


def test_recipe_cache_follows_the_counting_code(make_repo, tmp_path):
    """A changed infx/recipes.py counts afresh instead of serving counts of the old code."""
    import json
    import shutil

    from testing.matrix_helpers import REPO

    repo = make_repo({"r": disagg_entry(["CONFIG_FILE=recipes/r.yaml"])})
    write_recipe(repo, "r.yaml", {"resources": {"agg_nodes": 2}})
    code = tmp_path / "code"
    shutil.copytree(REPO / "infx", code / "infx", ignore=shutil.ignore_patterns("__pycache__"))
    cache = {"INFX_CACHE_DIR": str(tmp_path / "cache")}

    def counts():
        result = repo.cli("--format", "json", env={**cache, "PYTHONPATH": str(code)})
        assert result.returncode == 0, result.stderr
        return [row["node-count"] for row in json.loads(result.stdout)]

    assert counts() == [2] and counts() == [2]  # the second from the cache
    with (code / "infx" / "recipes.py").open("a") as module:  # new counting rule: one more node
        module.write(
            "\n_old_count = recipe_node_count\n\n\ndef recipe_node_count(recipe):\n    return _old_count(recipe) + 1\n"
        )
    assert counts() == [3]


def test_an_eval_only_entry_counts_the_recipe_its_launch_uses(make_repo):
    """EVAL_ONLY=true with EVAL_CONFIG_FILE: node-count comes from the eval recipe, the one the
    launcher resolves (infx.recipes.recipe_setting, one rule for both)."""
    repo = make_repo(
        {
            "eval-only": disagg_entry(
                ["CONFIG_FILE=recipes/a/bench.yaml", "EVAL_ONLY=true", "EVAL_CONFIG_FILE=recipes/a/eval.yaml"]
            ),
            "benchmark": disagg_entry(["CONFIG_FILE=recipes/a/bench.yaml", "EVAL_CONFIG_FILE=recipes/a/eval.yaml"]),
        }
    )
    write_recipe(repo, "a/bench.yaml", {"schema": 2, "roles": {"prefill": {"nodes": 2}, "decode": {"nodes": 4}}})
    write_recipe(repo, "a/eval.yaml", {"schema": 2, "roles": {"prefill": {"nodes": 1}, "decode": {"nodes": 1}}})
    assert {row["config-key"]: row["node-count"] for row in repo.build()} == {"eval-only": 2, "benchmark": 6}
