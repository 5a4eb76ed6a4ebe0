"""append-only as the reference has it: the real B300 vLLM MTP TP4 change of its history (a
two-commit repository, tests/data/NOTICE.md), the scope rule and the curve key, each case
built from the reference's own tests (utils/test_process_changelog.py, inputs and outcomes)."""

from __future__ import annotations

from dataclasses import replace

import pytest

from infx.changelog.appendonly import curve, delta, scope
from infx.changelog.entry import parse_entry
from infx.changelog.gate import run_gate
from infx.changelog.plan import PlanOptions
from testing.corpus import B300_APPEND_ONLY_BUNDLE, patched_history
from testing.gitrepo import Repo

from .conftest import SLUG

FILE = "perf-changelog.yaml"
KEY = "dsv4-fp4-b300-vllm-agentic-mtp"


def _entry(**fields):
    entry, problems = parse_entry(
        {"config-keys": ["test-config"], "description": ["x"], "pr-link": "XXX", **fields}, 1, FILE, lambda path: (1, 1)
    )
    assert entry is not None, problems
    return entry


APPEND = _entry(**{"append-only": True})


@pytest.fixture(scope="module")
def b300(tmp_path_factory):
    """The reference's PR #2647 as it merged (43996b8dc): base and head, runner labels declared."""
    path = tmp_path_factory.mktemp("b300") / "repo"
    (change,) = patched_history(B300_APPEND_ONLY_BUNDLE, path)
    return Repo(path), change


def _points(result) -> dict:
    return {
        bucket: [(row["config-key"], row["tp"], row["conc"]) for row in rows]
        for bucket, rows in result.plan.buckets.items()
    }


@pytest.mark.parametrize(
    "trim, expected",
    [
        # The reference's planner (process_changelog.py of 843c6254f, run on these two commits):
        (False, [(KEY, 4, 1), (KEY, 4, 2), (KEY, 4, 4), (KEY, 4, 6)]),
        (True, [(KEY, 4, 1)]),  # sweep-enabled trims the delta too: one point, not four
    ],
)
def test_the_real_b300_change_plans_its_delta_as_the_reference(b300, trim, expected):
    repo, change = b300
    result = run_gate(repo.path, change["parent"], change["merge"], slug=SLUG, plan_options=PlanOptions(trim_conc=trim))
    assert result.report.ok, [d for d in result.report.diagnostics if d.is_error]
    assert _points(result) == {"single_node/agentic": expected}
    assert not [d for d in result.report.diagnostics if d.rule.startswith("plan-append-only")]


def test_the_real_b300_change_as_its_pr_gate_sees_it(b300):
    """On the PR the byte contract also refuses the whitespace-only line the entry ends with
    (a defect the reference let through); the plan is the same."""
    repo, change = b300
    result = run_gate(
        repo.path,
        change["parent"],
        change["merge"],
        slug=SLUG,
        pr_number=2647,
        plan_options=PlanOptions(trim_conc=True),
    )
    assert [d.rule for d in result.report.diagnostics if d.is_error] == ["changelog-trailing-blank"]
    assert _points(result) == {"single_node/agentic": [(KEY, 4, 1)]}


def test_an_append_only_change_that_also_changes_an_unnamed_config_is_refused(b300):
    """The reference's scope rule: a change with an append-only entry may not change a config no entry names."""
    repo, change = b300
    master = repo.read(change["merge"], "configs/nvidia-master.yaml").decode()
    other = "dsv4-fp4-b300-vllm:\n  image: "
    assert other in master
    edited = master.replace(other, other + "x", 1)
    head = repo.commit(change["merge"], {"configs/nvidia-master.yaml": edited.encode()}, "also retune another config")
    pushed = run_gate(repo.path, change["parent"], head, slug=SLUG)
    (problem,) = [d for d in pushed.report.diagnostics if d.rule == "plan-append-only-scope"]
    assert "names: dsv4-fp4-b300-vllm;" in problem.message and "never be swept" in problem.message and problem.hint
    assert problem.line is not None
    # A PR run reports the same config once, through its coverage rule.
    pr = run_gate(repo.path, change["parent"], head, slug=SLUG, pr_number=2647)
    assert [d.rule for d in pr.report.diagnostics if d.rule in ("plan-append-only-scope", "changelog-coverage")] == [
        "changelog-coverage"
    ]


# --- the scope rule: the reference's five cases (validate_append_only_scope) -------------------


def _config(scenarios: dict, **header) -> dict:
    return {"test-config": {**header, "scenarios": scenarios}}


def _scope(base, head, entry=APPEND):
    return scope(base, head, [entry], {1: ["test-config"]}, FILE)


def test_scope_defers_changes_inside_the_selected_scenario_to_the_delta():
    base = _config(
        {"agentic-coding": {"duration": 3600, "search-space": [{"tp": 8, "conc-list": [1, 4]}]}}, image="v0.16.0"
    )
    head = _config(
        {"agentic-coding": {"duration": 1800, "search-space": [{"tp": 8, "conc-list": [1, 4, 8]}]}}, image="v0.16.0"
    )
    assert _scope(base, head, _entry(**{"append-only": True, "scenario-type": ["agentic-coding"]})) == []


def test_scope_allows_additive_restructuring_of_the_selected_scenario():
    router_a, router_b = {"name": "router-a", "version": "1"}, {"name": "router-b", "version": "2"}
    base = _config(
        {"fixed-seq-len": [{"isl": 8192, "osl": 1024, "search-space": [{"tp": 4, "conc-list": [1, 4, 8]}]}]},
        image="img",
        router=router_a,
    )
    head = _config(
        {
            "fixed-seq-len": [
                {
                    "isl": 8192,
                    "osl": 1024,
                    "search-space": [
                        {"tp": 4, "conc-list": [1, 4, 8], "router": router_a},
                        {"tp": 8, "conc-list": [12, 16], "router": router_b},
                    ],
                }
            ]
        },
        image="img",
    )
    assert _scope(base, head, _entry(**{"append-only": True, "scenario-type": ["fixed-seq-len"]})) == []


def test_scope_refuses_a_config_wide_change_with_an_unselected_scenario():
    scenarios = {
        "fixed-seq-len": {"search-space": [{"tp": 4, "conc-list": [1]}]},
        "agentic-coding": {"search-space": [{"tp": 4, "conc-list": [1]}]},
    }
    base = _config(scenarios, router={"name": "dynamo-router", "version": "0.8.1"})
    head = _config(scenarios, router={"name": "dynamo-router", "version": "0.8.2"})
    (problem,) = _scope(base, head, _entry(**{"append-only": True, "scenario-type": ["fixed-seq-len"]}))
    assert problem.rule == "plan-append-only-scope" and "config-wide field(s) router" in problem.message
    assert "agentic-coding" in problem.message


def test_scope_refuses_a_change_to_an_unselected_scenario():
    base = _config(
        {
            "fixed-seq-len": {"search-space": [{"tp": 4, "conc-list": [1]}]},
            "agentic-coding": {"search-space": [{"tp": 4, "conc-list": [1]}]},
        }
    )
    head = _config(
        {
            "fixed-seq-len": {"search-space": [{"tp": 4, "conc-list": [1]}]},
            "agentic-coding": {"search-space": [{"tp": 4, "conc-list": [1, 4]}]},
        }
    )
    (problem,) = _scope(base, head, _entry(**{"append-only": True, "scenario-type": ["fixed-seq-len"]}))
    assert "agentic-coding scenario, outside the entry's scope" in problem.message
    # A regular entry of the same change sweeps the other scenario: nothing is left unswept.
    regular = replace(_entry(**{"scenario-type": ["agentic-coding"]}), index=2)  # Entry is frozen
    assert (
        scope(
            base,
            head,
            [_entry(**{"append-only": True, "scenario-type": ["fixed-seq-len"]}), regular],
            {1: ["test-config"], 2: ["test-config"]},
            FILE,
        )
        == []
    )


def test_scope_allows_a_range_rewritten_as_a_list():
    base = _config({"fixed-seq-len": {"search-space": [{"tp": 8, "conc-start": 4, "conc-end": 64}]}}, image="v0.16.0")
    head = _config({"fixed-seq-len": {"search-space": [{"tp": 8, "conc-list": [4, 16, 32, 64]}]}}, image="v0.16.0")
    assert _scope(base, head, _entry(**{"append-only": True, "scenario-type": ["fixed-seq-len"]})) == []


def test_scope_refuses_an_added_scenario_and_a_config_missing_at_the_base():
    base = _config({"fixed-seq-len": {"search-space": []}})
    head = _config({"fixed-seq-len": {"search-space": []}, "agentic-coding": {"search-space": []}})
    (added,) = _scope(base, head)
    assert "adds or removes the scenario agentic-coding" in added.message
    (missing,) = _scope({}, head)
    assert "does not exist at the base" in missing.message


# --- the delta and its curve: the reference's cases (append_only_delta) -------------------------


def _fixed(conc, image="vllm/vllm-openai:v0.16.0", tp=8, duration=None):
    row = {
        "image": image,
        "model": "deepseek-ai/DeepSeek-V4-Pro",
        "model-prefix": "dsv4",
        "precision": "fp4",
        "framework": "vllm",
        "spec-decoding": "mtp",
        "runner": "cluster:b300-nv",
        "isl": 8192,
        "osl": 1024,
        "tp": tp,
        "pp": 1,
        "dcp-size": 1,
        "pcp-size": 1,
        "ep": 8,
        "dp-attn": True,
        "conc": conc,
        "max-model-len": 10240,
        "exp-name": f"dsv4_tp{tp}_conc{conc}",
        "disagg": False,
        "run-eval": False,
    }
    return row | ({"duration": duration} if duration is not None else {})


def _rules(problems) -> list[str]:
    return [p.rule for p in problems if p.is_error]


def test_delta_allows_a_new_parallelism_with_its_points():
    base = [_fixed(1, tp=4), _fixed(4, tp=4), _fixed(8, tp=4)]
    added, problems = delta(base, [*base, _fixed(12, tp=8), _fixed(16, tp=8)], APPEND, FILE)
    assert [(row["tp"], row["conc"]) for row in added] == [(8, 12), (8, 16)] and not problems


def test_delta_allows_any_new_recipe_while_the_old_one_stays():
    base = [_fixed(4, duration=3600)]
    added, problems = delta(base, [*base, _fixed(6, duration=300)], APPEND, FILE)
    assert [(row["duration"], row["conc"]) for row in added] == [(300, 6)] and not problems


def test_delta_deduplicates_new_points():
    added, problems = delta([_fixed(4)], [_fixed(4), _fixed(8), _fixed(8)], APPEND, FILE)
    assert [row["conc"] for row in added] == [8] and not problems


@pytest.mark.parametrize(
    "base, head, rule, says",
    [
        (
            [_fixed(4)],
            [_fixed(4, image="vllm/vllm-openai:v0.16.1"), _fixed(8, image="vllm/vllm-openai:v0.16.1")],
            "plan-append-only-removes",
            "removed or modified",
        ),
        ([_fixed(4, tp=4), _fixed(8, tp=8)], [_fixed(4, tp=4)], "plan-append-only-removes", "removed or modified"),
        ([_fixed(4, duration=3600)], [_fixed(4, duration=300)], "plan-append-only-removes", "removed or modified"),
        ([_fixed(4), _fixed(8)], [_fixed(8), _fixed(12)], "plan-append-only-removes", "[4]"),
        (
            [_fixed(4)],
            [_fixed(4), _fixed(8, image="vllm/vllm-openai:v0.16.1", tp=16)],
            "plan-append-only-series",
            "its image",
        ),
    ],
)
def test_delta_refuses_what_the_reference_refuses(base, head, rule, says):
    _, problems = delta(base, head, APPEND, FILE)
    assert rule in _rules(problems) and any(says in p.message for p in problems)


def _multinode(conc, prefill, decode, hardware=None):
    def worker(count, tp, ep, dpa):
        block = {"num-worker": count, "tp": tp, "pp": 1, "dcp-size": 1, "pcp-size": 1, "ep": ep, "dp-attn": dpa}
        return block | ({"hardware": hardware} if hardware else {})

    return {
        "image": "lmsysorg/sglang:v0.5.7",
        "model": "deepseek-ai/DeepSeek-V4-Pro",
        "model-prefix": "dsv4",
        "precision": "fp4",
        "framework": "dynamo-sglang",
        "runner": "gb300-nv",
        "isl": 8192,
        "osl": 1024,
        "spec-decoding": "none",
        "prefill": worker(*prefill),
        "decode": worker(*decode),
        "conc": conc,
        "max-model-len": 9472,
        "exp-name": "dsv4_8k1k",
        "disagg": True,
        "run-eval": False,
        "kv-p2p-transfer": "nixl",
    }


def test_a_new_topology_on_an_existing_multinode_curve_is_an_addition():
    """The issue's real refusals: a new 1P/4D split and a DEP32 decode at a new concurrency extend the
    curve of the same workers' hardware (the reference keys a curve by hardware, not tp/ep)."""
    base = [_multinode([64], (1, 4, 4, True), (1, 8, 8, True))]
    head = [
        *base,
        _multinode([512], (1, 4, 4, True), (4, 8, 8, True)),
        _multinode([2048], (2, 4, 4, True), (1, 32, 32, True)),
    ]
    added, problems = delta(base, head, APPEND, FILE)
    assert [row["conc"] for row in added] == [[512], [2048]] and not problems
    assert curve(head[1]) == curve(head[2]) == curve(base[0])


def test_other_workers_hardware_is_another_curve():
    base = [_multinode([64], (1, 4, 4, True), (1, 8, 8, True), hardware="gb200")]
    _, problems = delta(
        base, [*base, _multinode([128], (1, 4, 4, True), (1, 8, 8, True), hardware="gb300")], APPEND, FILE
    )
    assert _rules(problems) == ["plan-append-only-series"]


def test_an_agentic_curve_ignores_spec_decoding_and_a_fixed_one_does_not():
    agentic = {"scenario-type": "agentic-coding", "spec-decoding": "mtp", "kv-offloading": "none", "model": "m"}
    assert curve(agentic) == curve({**agentic, "spec-decoding": "none"})
    assert curve(_fixed(4)) != curve({**_fixed(4), "spec-decoding": "none"})
    assert curve({**agentic, "kv-offloading": "dram"}) != curve(agentic)  # offload on/off is its own curve
