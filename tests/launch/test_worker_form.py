"""The launcher reads the one worker form of infx/workers.py: an aggregated point is prefill +
decode(num-worker 0), and its prefill block is what the recipe's agg role must match."""

from infx.launch.checks import CheckContext, check_roles, point_roles
from infx.workers import is_aggregated


def context(point, recipe):
    return CheckContext(
        point=point,
        recipe=recipe,
        lane=None,
        model=None,
        power=False,
        recipe_file="recipe.yaml",
        recipe_where=lambda path: None,
        point_file="point.json",
        point_where=lambda path: (len(path), 1),
    )


def agg_recipe(tp, workers=1):
    return {"schema": 2, "engine": "vllm", "roles": {"agg": {"workers": workers, "args": {"tensor-parallel-size": tp}}}}


def test_bundled_aggregated_points_check_their_prefill_block_as_the_agg_role(points):
    aggregated = [p for p in points if is_aggregated(p)]
    assert aggregated, "configs/nvidia-master.yaml ships aggregated gb300 points"
    for point in aggregated:
        assert point_roles(point) == {"agg": point["prefill"]}
        prefill = point["prefill"]
        agreeing = agg_recipe(prefill["tp"], prefill["num-worker"])
        if not prefill.get("dp-attn") and prefill.get("ep", 1) == 1:
            assert list(check_roles(context(point, agreeing))) == []
        wrong = list(check_roles(context(point, agg_recipe(prefill["tp"] * 2, prefill["num-worker"]))))
        assert [d.rule for d in wrong] == ["point-recipe-mismatch"]
        assert "agg tp is" in wrong[0].message
        assert wrong[0].line == 2  # located at ("prefill", "tp"): the block the point carries


def test_an_aggregated_point_against_a_disaggregated_recipe_is_a_topology_error(points):
    point = next(p for p in points if is_aggregated(p))
    disagg = {"schema": 2, "engine": "vllm", "roles": {"prefill": {"workers": 1}, "decode": {"workers": 1}}}
    (diagnostic,) = check_roles(context(point, disagg))
    assert diagnostic.rule == "point-recipe-topology" and "agg role" in diagnostic.message
    assert diagnostic.line == 1  # ("prefill",)


def test_a_disaggregated_point_keeps_its_two_roles(points):
    point = next(p for p in points if not is_aggregated(p))
    assert point_roles(point) == {"prefill": point["prefill"], "decode": point["decode"]}
