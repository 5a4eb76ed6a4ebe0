from pathlib import Path

import pytest

from infx.recipes import RecipeError, RecipeRef, deep_merge, load_recipe, recipe_node_count, select_variant, zip_variant


def test_deep_merge_semantics():
    base = {"a": {"x": 1, "y": [1, 2]}, "b": 1, "c": 3}
    assert deep_merge(base, {"a": {"y": [9]}, "b": None}) == {"a": {"x": 1, "y": [9]}, "c": 3}


def test_zip_broadcast_and_errors():
    group = {"name": ["a", "b", "c"], "resources": {"decode_nodes": [2, 4, 6], "gpus": 4, "x": [7]}}
    assert zip_variant(group, 2, "g") == {"name": "c", "resources": {"decode_nodes": 6, "gpus": 4, "x": 7}}
    with pytest.raises(RecipeError, match="out of range"):
        zip_variant(group, 3, "g")
    with pytest.raises(RecipeError, match="unequal lengths"):
        zip_variant({"a": [1, 2], "b": [1, 2, 3]}, 0, "g")


def test_selectors_name_variants():
    recipe = {"base": {"name": "r", "roles": {"prefill": {"nodes": 2}, "decode": {"nodes": 4}}},
              "override_wide": {"roles": {"decode": {"nodes": 8}}},
              "zip_override_ladder": {"roles": {"prefill": {"nodes": [2, 4]}}}}
    assert select_variant(recipe, "override_wide")["name"] == "r_wide"
    assert recipe_node_count(select_variant(recipe, "override_wide")) == 10
    variant = select_variant(recipe, "zip_override_ladder[1]")
    assert variant["name"] == "r_ladder_1" and recipe_node_count(variant) == 8
    with pytest.raises(RecipeError, match="unknown recipe selector"):
        select_variant(recipe, "override_missing")
    with pytest.raises(RecipeError, match="names none"):
        select_variant(recipe, None)


def test_node_count_includes_dedicated_node(corpus: Path):
    ref = RecipeRef.parse("recipes/sglang/deepseek-v4/agentic/disagg-gb300-2p1d-dep8-tp4-c80-mtp-kvoffload.yaml")
    _, recipe = load_recipe(ref, corpus)
    assert recipe_node_count(recipe) == 4  # 2 prefill + 1 decode + 1 etcd/nats node
    assert recipe_node_count({"roles": {"prefill": {"nodes": 2}, "decode": {"nodes": "colocate"}}}) == 2
    with pytest.raises(RecipeError, match="must specify nodes"):
        recipe_node_count({"roles": {"prefill": {"nodes": 2}, "decode": {}}})


def test_file_level_keys_beside_base_apply_to_every_variant():
    recipe = {"schema": 2, "base": {"name": "r", "roles": {"prefill": {"nodes": 1}}},
              "zip_override_g": {"roles": {"prefill": {"nodes": [2, 4]}}}}
    assert select_variant(recipe, "zip_override_g[1]") == {"schema": 2, "name": "r_g_1", "roles": {"prefill": {"nodes": 4}}}
    assert select_variant(recipe, "base")["schema"] == 2
