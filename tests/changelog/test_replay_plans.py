"""The reference's last 100 changes of main, planned by infx and by the reference.

Each change X of the history bundle (its parent -> X, as a push to main sees it) is planned by
`run_gate` in full and in trimmed (`sweep-enabled`) mode, on the bundle's configs and changelog
with the runner labels the reference used but never declared declared (tests/testing/corpus.py, the one
patch). The expected points are facts: what the reference's own planner (utils/process_changelog.py
of 843c6254f, run on the same two commits, with and without --trim-conc) planned, one digest per
point (tests/data/NOTICE.md). Every change must plan, to exactly those points.
"""

from __future__ import annotations

import gzip
import json
from collections import Counter

import pytest

from infx.changelog.gate import run_gate
from infx.changelog.plan import PlanOptions
from testing.corpus import HISTORY_BUNDLE, MAIN100_PLANS, patched_history, point_digest

from .conftest import SLUG


@pytest.fixture(scope="module")
def history(tmp_path_factory):
    path = tmp_path_factory.mktemp("history") / "patched"
    merges = patched_history(HISTORY_BUNDLE, path)
    return path, {m["real"]: m for m in merges}


def expected_changes() -> list[dict]:
    return json.loads(gzip.decompress(MAIN100_PLANS.read_bytes()))["changes"]


def test_infx_plans_the_last_100_changes_of_main_as_the_reference(history):
    path, merges = history
    changes = expected_changes()
    assert len(changes) == 100 and [c["commit"] for c in changes] == [m["real"] for m in list(merges.values())[:100]]
    differences = []
    for change in changes:
        merge = merges[change["commit"]]
        for mode, trim in (("full", False), ("trimmed", True)):
            result = run_gate(
                path, merge["parent"], merge["merge"], slug=SLUG, plan_options=PlanOptions(trim_conc=trim)
            )
            errors = [f"{d.rule}: {d.message[:160]}" for d in result.report.diagnostics if d.is_error]
            assert not errors, (change["commit"], mode, errors)
            # infx's bucket names are the reference's (`single_node/8k1k`, `multinode_evals`, ...)
            found = Counter(point_digest(bucket, row) for bucket, rows in result.plan.buckets.items() for row in rows)
            wanted = Counter(change[mode])
            if found != wanted:
                differences.append(
                    (change["commit"], mode, sum((wanted - found).values()), sum((found - wanted).values()))
                )
    assert differences == [], "(change, mode, points only the reference plans, points only infx plans)"
    assert sum(len(c["full"]) for c in changes) == 1505 and sum(len(c["trimmed"]) for c in changes) == 851
