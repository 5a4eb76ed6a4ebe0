"""Negative tests for rule ids no other test asserted: each input triggers its diagnostic, located."""

from __future__ import annotations

from pathlib import Path

from infx.changelog import contract, diff
from infx.changelog.entry import parse_entry
from infx.yamlio import parse_yaml
from testing.cli import run_cli

ROOT = Path(__file__).resolve().parent.parent
SLUG = "SemiAnalysisAI/InferenceX"


def _rules(problems) -> list[str]:
    return [d.rule for d in problems]


def test_a_mapping_as_a_yaml_key_is_yaml_key():
    doc, problems = parse_yaml("? [a, b]\n: 1\n", "k.yaml")
    assert doc is None and _rules(problems) == ["yaml-key"] and problems[0].line == 1


def test_a_merge_of_a_scalar_is_yaml_merge():
    doc, problems = parse_yaml("base: &x 1\nchild:\n  <<: *x\n", "m.yaml")
    # located at the node merged (the anchored scalar)
    assert doc is None and _rules(problems) == ["yaml-merge"] and (problems[0].line, problems[0].column) == (1, 7)


def test_a_nul_byte_in_the_changelog_is_changelog_nul():
    problems = contract.file_checks("- config-keys: [a]\n\0\n", "perf-changelog.yaml")
    assert _rules(problems) == ["changelog-nul"] and (problems[0].line, problems[0].column) == (2, 1)


def test_a_changelog_that_is_a_mapping_is_changelog_not_list():
    change = diff.diff_changelog(b"", b"config-keys: [a]\n", file="perf-changelog.yaml", slug=SLUG, pr_number=1)
    assert "changelog-not-list" in _rules(change.diagnostics)


def _where(path: tuple) -> tuple[int, int]:
    return (7, 1 + len(path))


def test_an_entry_that_is_a_list_is_entry_not_mapping():
    entry, problems = parse_entry(["config-keys"], 3, "perf-changelog.yaml", _where)
    assert entry is None and _rules(problems) == ["entry-not-mapping"] and problems[0].line == 7


def test_no_evals_with_evals_only_is_entry_no_evals_conflict():
    data = {
        "config-keys": ["dsv4-fp4-gb300-dynamo-sglang"],
        "description": ["x"],
        "pr-link": f"https://github.com/{SLUG}/pull/1",
        "no-evals": True,
        "evals-only": True,
    }
    _, problems = parse_entry(data, 1, "perf-changelog.yaml", _where)
    assert "entry-no-evals-conflict" in _rules(problems)


def test_an_unknown_runner_type_is_runner_type_unknown():
    done = run_cli("matrix", "--runner-type", "gb301", "--format", "json", cwd=ROOT)
    assert done.returncode == 1 and "error[runner-type-unknown]" in done.stderr and "Traceback" not in done.stderr
