"""infx.evalsuite.EvalMode is the one type of the eval choice: the matrix flags, a changelog entry's
fields and the PR labels all read into it, and each reading means what the docs say."""

from __future__ import annotations

import pytest

from infx.changelog.entry import parse_entry
from infx.diagnostics import UsageError
from infx.evalsuite import EvalMode
from infx.workflows.labels import resolve_mode

ONLY_ALL = EvalMode.ONLY | EvalMode.ALL


@pytest.mark.parametrize(
    "fields, mode",
    [
        ({}, EvalMode.DEFAULT),
        ({"no-evals": True}, EvalMode.NONE),
        ({"evals-only": True}, EvalMode.ONLY),
        ({"all-evals": True}, EvalMode.ALL),
        ({"evals-only": True, "all-evals": True}, ONLY_ALL),
    ],
)
def test_a_changelog_entrys_eval_fields_read_into_one_mode(fields, mode):
    entry, problems = parse_entry(
        {"config-keys": ["k"], "description": ["x"], "pr-link": "XXX", **fields},
        1,
        "perf-changelog.yaml",
        lambda path: (1, 1),
    )
    assert entry is not None, problems
    assert entry.evals == mode


@pytest.mark.parametrize(
    "labels, mode",
    [
        ([], EvalMode.DEFAULT),
        (["evals-only"], EvalMode.ONLY),
        (["all-evals"], EvalMode.ALL),
        (["evals-only", "all-evals", "sweep-enabled"], ONLY_ALL),
    ],
)
def test_the_pr_labels_read_into_the_same_mode(labels, mode):
    resolved, problems = resolve_mode("pull_request", labels)
    assert not problems and resolved.evals == mode


@pytest.mark.parametrize(
    "flags, mode",
    [
        ({}, EvalMode.DEFAULT),
        ({"no_evals": True}, EvalMode.NONE),
        ({"evals_only": True}, EvalMode.ONLY),
        ({"all_evals": True}, EvalMode.ALL),
    ],
)
def test_the_matrix_flags_read_into_the_same_mode(flags, mode):
    assert EvalMode.of(**flags) == mode


@pytest.mark.parametrize(
    "mode, evals_only",
    [(EvalMode.DEFAULT, False), (EvalMode.NONE, False), (EvalMode.ONLY, True), (EvalMode.ALL, True), (ONLY_ALL, True)],
)
def test_only_and_all_ask_for_eval_rows_only(mode, evals_only):
    assert mode.evals_only is evals_only


@pytest.mark.parametrize("mode", [EvalMode.NONE | EvalMode.ONLY, EvalMode.NONE | EvalMode.ALL])
def test_no_evals_with_an_eval_mode_is_a_usage_error(mode):
    with pytest.raises(UsageError, match="cannot be combined with --no-evals"):
        mode.check()
