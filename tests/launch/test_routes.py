"""Routing is data: most specific first, order-independent, ambiguity is an error."""

import random
from pathlib import Path

import pytest

from infx.diagnostics import InfxError
from infx.launch.lane import load_lane
from infx.launch.route import Ambiguous, matches, most_specific
from infx.scenarios import scenario_type

REPO = Path(__file__).resolve().parents[2]


def facts(point, power=False):
    return {
        "scenario": scenario_type(point),
        "framework": point["framework"],
        "model-prefix": point["model-prefix"],
        "precision": point["precision"],
        "power": power,
    }


def test_every_lane_entry_routes_to_exactly_one_route(lane, points):
    keys = {p["config-key"] for p in points}
    assert (
        len(keys) == 9
    )  # every multinode gb300 entry of configs/nvidia-master.yaml (a5bbb42 left out the vllm-agentic one)
    for point in points:
        route = most_specific(lane.routes, facts(point), lambda r: r.match)
        assert route is not None, point["config-key"]
        # exactly one: the winner is strictly more specific than every other match
        others = [r for r in lane.routes if r is not route and matches(r.match, facts(point))]
        assert all(set(o.match) < set(route.match) for o in others)


def test_route_choice_does_not_depend_on_order(lane, points):
    chosen = {p["config-key"]: most_specific(lane.routes, facts(p), lambda r: r.match).name for p in points}
    shuffled = list(lane.routes)
    for seed in range(5):
        random.Random(seed).shuffle(shuffled)
        assert {p["config-key"]: most_specific(shuffled, facts(p), lambda r: r.match).name for p in points} == chosen


def test_a_specific_agentic_route_beats_the_catch_all(lane):
    trt = most_specific(
        lane.routes,
        {
            "scenario": "agentic-coding",
            "framework": "dynamo-trt",
            "model-prefix": "dsv4",
            "precision": "fp4",
            "power": False,
        },
        lambda r: r.match,
    )
    assert trt.name == "trt-dsv4-agentic" and trt.time_limit == "8:00:00" and lane.pins[trt.srt_slurm].ref == "v1.0.50"
    vllm = most_specific(
        lane.routes,
        {
            "scenario": "agentic-coding",
            "framework": "dynamo-vllm",
            "model-prefix": "dsv4",
            "precision": "fp4",
            "power": False,
        },
        lambda r: r.match,
    )
    assert vllm.name == "vllm-agentic" and lane.pins[vllm.srt_slurm].ref == "v1.0.36"


def test_a_power_recipe_takes_the_power_route(lane):
    base = {"scenario": "fixed-seq-len", "framework": "dynamo-sglang", "model-prefix": "dsv4", "precision": "fp4"}
    assert most_specific(lane.routes, {**base, "power": True}, lambda r: r.match).name == "sglang-dsv4-fixed-power"
    assert most_specific(lane.routes, {**base, "power": False}, lambda r: r.match).name == "sglang-dsv4-fixed"


def test_incomparable_matches_are_ambiguous():
    entries = [{"a": 1, "b": 2}, {"a": 1, "c": 3}]
    with pytest.raises(Ambiguous):
        most_specific(entries, {"a": 1, "b": 2, "c": 3}, lambda e: e)
    assert most_specific(entries + [{"a": 1, "b": 2, "c": 3}], {"a": 1, "b": 2, "c": 3}, lambda e: e) == {
        "a": 1,
        "b": 2,
        "c": 3,
    }


def test_profile_schema_errors_are_located(tmp_path):
    bad = tmp_path / "runners" / "bad.yaml"
    bad.parent.mkdir()
    text = (REPO / "runners/gb300-nv.yaml").read_text().replace("gpus-per-node: 4", "gpus-per-node: four")
    bad.write_text(text.replace("srt-slurm: nvidia-v1.0.36", "srt-slurm: nvidia-v9"))
    with pytest.raises(InfxError) as caught:
        load_lane("bad", tmp_path)
    [d] = caught.value.diagnostics
    assert (
        d.rule == "lane-schema"
        and "gpus-per-node" in d.message
        and d.line == text.splitlines().index("  gpus-per-node: four") + 1
    )


def test_profile_cross_checks(tmp_path):
    bad = tmp_path / "runners" / "bad.yaml"
    bad.parent.mkdir()
    bad.write_text(
        (REPO / "runners/gb300-nv.yaml")
        .read_text()
        .replace("srt-slurm: nvidia-v1.0.36", "srt-slurm: nvidia-v9")
        .replace("name: vllm-dsv4-fixed", "name: vllm-agentic")
    )
    with pytest.raises(InfxError) as caught:
        load_lane("bad", tmp_path)
    assert {d.rule for d in caught.value.diagnostics} == {"lane-unknown-pin", "lane-route-duplicate"}
