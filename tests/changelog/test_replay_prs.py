"""Eight of the reference's real pull requests through infx's PR gate, as they were (merge-base
and head, their configs and changelog unpatched: data/NOTICE.md), against the facts of the
reference's planner (843c6254f) on the same commits.

Where the reference plans a change, infx plans the same points, in full and trimmed mode
(append-only entries adding new prefill/decode splits to existing curves, a point two configs
share). The PRs that ask for no sweep (a deprecation, a removal, a runner node) pass with the
nothing-to-sweep notice; the reference's planner refuses them ("No additions found") but its
gate never ran on them, as they left the changelog alone. Two PRs the reference accepted carry
real defects infx refuses: a stray master key `m`, an image `TBD`.
"""

from __future__ import annotations

import json
import subprocess
from collections import Counter

import pytest

from infx.changelog.gate import run_gate
from infx.changelog.plan import PlanOptions
from testing.corpus import PULL_REQUESTS_BUNDLE, PULL_REQUESTS_FACTS, point_digest

from .conftest import SLUG

FACTS = json.loads(PULL_REQUESTS_FACTS.read_text())["pull-requests"]
NOTHING_TO_SWEEP = {
    2101: "deprecates the gpt-oss configs",
    2439: "adds a runner node",
    2531: "removes outdated configs",
}
SAME_PLAN = {
    2302: "append-only: new prefill/decode splits on an existing curve",
    2605: "a point two configs share",
    2665: "append-only: new aggregated and decode topologies",
}
REAL_DEFECTS = {
    2534: ("changelog-coverage", "key(s) that no appended entry sweeps: m"),
    2212: ("bad-format", "image 'TBD' is not in the accepted form"),
}


@pytest.fixture(scope="module")
def pulls(tmp_path_factory):
    path = tmp_path_factory.mktemp("pulls") / "repo"
    subprocess.run(["git", "init", "-q", str(path)], check=True, capture_output=True)
    subprocess.run(
        ["git", "-C", str(path), "fetch", "-q", str(PULL_REQUESTS_BUNDLE), "refs/heads/*:refs/heads/*"],
        check=True,
        capture_output=True,
    )  # one branch pr-N per pull request: its merge-base, then its head
    return path


def gate(path, number: int, trim: bool = False):
    return run_gate(
        path, f"pr-{number}~1", f"pr-{number}", slug=SLUG, pr_number=number, plan_options=PlanOptions(trim_conc=trim)
    )


def points(result) -> Counter:
    return Counter(point_digest(bucket, row) for bucket, rows in result.plan.buckets.items() for row in rows)


def test_the_facts_cover_every_pull_request_here():
    assert set(map(int, FACTS)) == set(NOTHING_TO_SWEEP) | set(SAME_PLAN) | set(REAL_DEFECTS)


@pytest.mark.parametrize("number", sorted(SAME_PLAN), ids=lambda n: f"#{n}")
def test_infx_plans_what_the_reference_plans(pulls, number):
    facts = FACTS[str(number)]
    assert facts["reference"] == "accepted"
    for mode, trim in (("full", False), ("trimmed", True)):
        result = gate(pulls, number, trim)
        assert result.report.ok, [d.message for d in result.report.diagnostics if d.is_error]
        assert points(result) == Counter(facts[mode]), (number, mode)


@pytest.mark.parametrize("number", sorted(NOTHING_TO_SWEEP), ids=lambda n: f"#{n}")
def test_a_pull_request_asking_for_no_sweep_passes_with_the_notice(pulls, number):
    assert FACTS[str(number)]["reference"].startswith("refused: ValueError: No additions found")
    result = gate(pulls, number)
    assert result.report.ok, [d.message for d in result.report.diagnostics if d.is_error]
    assert "changelog-nothing-to-sweep" in [d.rule for d in result.report.diagnostics]
    assert result.plan.point_count == 0


@pytest.mark.parametrize("number", sorted(REAL_DEFECTS), ids=lambda n: f"#{n}")
def test_a_real_defect_the_reference_let_through_is_refused(pulls, number):
    assert FACTS[str(number)]["reference"] == "accepted"
    rule, says = REAL_DEFECTS[number]
    errors = [d for d in gate(pulls, number).report.diagnostics if d.is_error]
    assert [d.rule for d in errors] == [rule] and says in errors[0].message and errors[0].hint
