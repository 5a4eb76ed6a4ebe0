from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

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
    recipe = {
        "base": {"name": "r", "roles": {"prefill": {"nodes": 2}, "decode": {"nodes": 4}}},
        "override_wide": {"roles": {"decode": {"nodes": 8}}},
        "zip_override_ladder": {"roles": {"prefill": {"nodes": [2, 4]}}},
    }
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
    recipe = {
        "schema": 2,
        "base": {"name": "r", "roles": {"prefill": {"nodes": 1}}},
        "zip_override_g": {"roles": {"prefill": {"nodes": [2, 4]}}},
    }
    assert select_variant(recipe, "zip_override_g[1]") == {
        "schema": 2,
        "name": "r_g_1",
        "roles": {"prefill": {"nodes": 4}},
    }
    assert select_variant(recipe, "base")["schema"] == 2


def _count(read):
    try:
        return recipe_node_count(read())
    except RecipeError as exc:  # e.g. a recipe that declares no node counts: the same error either way
        return str(exc)


def test_counting_reads_only_the_node_blocks_and_agrees_with_the_full_recipe(corpus: Path):
    """Every corpus recipe and variant: the node count from the pruned text equals the full file's."""
    from infx.recipes import RECIPES_DIR, node_count_text, recipe_for_counting, variant_names
    from infx.yamlio import load_yaml

    compared = 0
    for path in sorted((corpus / RECIPES_DIR).rglob("*.yaml")):
        doc, problems = load_yaml(path)
        if problems:
            continue  # the launcher reports these files; counting reads only the node blocks (below)
        text = path.read_text()
        part = node_count_text(text)
        assert part is not None and len(part) <= len(text), path  # a file of variants only is kept whole
        selectors = variant_names(doc.data) if "base" in doc.data else [None]
        for selector in selectors:
            ref = RecipeRef.parse(
                f"recipes/{path.relative_to(corpus / RECIPES_DIR)}" + (f":{selector}" if selector else "")
            )
            assert _count(lambda: recipe_for_counting(ref, corpus)) == _count(lambda: load_recipe(ref, corpus)[1]), ref  # noqa: B023 - called at once
            compared += 1
    assert compared > 450


@pytest.mark.parametrize(
    "text, pruned",
    [
        ("backend:\n  args: [1, 2]\n  args: [3]\nresources:\n  agg_nodes: 2\n", "resources:\n  agg_nodes: 2\n"),
        (
            "benchmark:\n  type: sa-bench\n  client_dedicated_node: true\n  prompts: [a, b]\n",
            "benchmark:\n  client_dedicated_node: true\n",
        ),
        ("benchmark: {colocate_with_frontend: false}\n", "benchmark: {colocate_with_frontend: false}\n"),
        ("benchmark:\n  type: x\n", "benchmark: {}\n"),
        ("---\nresources: {agg_nodes: 1}\n", None),  # a document marker: the whole file is parsed
        ('"resources":\n  agg_nodes: 1\n', None),  # a quoted key
        ("- a\n- b\n", None),  # not a mapping
    ],
)
def test_node_count_text_keeps_what_counting_reads(text, pruned):
    from infx.recipes import node_count_text

    assert node_count_text(text) == pruned


def test_counting_ignores_a_duplicate_key_in_the_engine_config(tmp_path: Path):
    from infx.recipes import RECIPES_DIR, recipe_for_counting

    recipe = tmp_path / RECIPES_DIR / "dup.yaml"
    recipe.parent.mkdir(parents=True)
    recipe.write_text("backend:\n  x: 1\n  x: 2\nresources:\n  agg_nodes: 3\n")
    ref = RecipeRef.parse("recipes/dup.yaml")
    assert recipe_node_count(recipe_for_counting(ref, tmp_path)) == 3
    with pytest.raises(RecipeError, match="duplicate key"):
        load_recipe(ref, tmp_path)  # the launcher still refuses the file


@given(st.text(alphabet=" \t\r\n#a:-\ufeff", max_size=40))
def test_top_line_scan_keeps_its_rule(text):
    """The fast scan finds the lines the plain rule (a line start, then neither space nor #) finds."""
    import re

    from infx.recipes import _top_line_starts

    assert _top_line_starts(text) == [match.start() for match in re.finditer(r"^[^ \r\n#]", text, re.M)]
