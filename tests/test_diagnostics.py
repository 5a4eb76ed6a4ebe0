"""The one renderer (infx/diagnostics.py): the verdict first, repeated findings grouped, files
relative to the repository root, and the one rule for findings already on the base branch."""

from __future__ import annotations

import json
from pathlib import Path

from infx.diagnostics import (
    Severity,
    demote_on_base,
    error,
    render_github,
    render_json,
    render_report,
    shown_file,
    verdict,
    warning,
)


def _unknown_runner(root: Path, key: str, label: str, line: int):
    return error(
        str(root / "configs" / "a-master.yaml"),
        (line, 3),
        "runner-unknown",
        f"{key}: runner {label!r} is not a label in runners.yaml",
        f"Add `{label}: [...]` under labels: in configs/runners.yaml.",
    )


def test_a_finding_on_the_base_is_the_same_rule_file_and_message_wherever_its_line_moved(tmp_path):
    head_root, base_root = tmp_path / "head", tmp_path / "base"
    base = [_unknown_runner(base_root, "k1", "gb300-nv", 10)]
    head = [_unknown_runner(head_root, "k1", "gb300-nv", 12), _unknown_runner(head_root, "k2", "h200-x", 40)]
    older, new = demote_on_base(head, head_root, base, base_root)
    assert older.severity is Severity.WARNING and older.message.endswith(
        "(already on the base branch: not introduced by this change)"
    )
    assert new.is_error and new.message == head[1].message  # introduced by the change: untouched


def test_a_warning_the_base_had_stays_a_warning_and_says_so_and_another_file_is_another_finding(tmp_path):
    base = [warning(str(tmp_path / "configs/a-master.yaml"), (1, 1), "w", "k: odd")]
    head = [
        warning(str(tmp_path / "configs/a-master.yaml"), (9, 1), "w", "k: odd"),
        warning(str(tmp_path / "configs/b-master.yaml"), (1, 1), "w", "k: odd"),
    ]
    same, other = demote_on_base(head, tmp_path, base, tmp_path)
    assert same.severity is Severity.WARNING and same.message == "k: odd (already on the base branch)"
    assert other == head[1]


def test_the_verdict_counts_errors_warnings_and_those_on_the_base(tmp_path):
    head = [_unknown_runner(tmp_path, f"k{i}", "gb300-nv", i) for i in range(8)]
    marked = demote_on_base(head, tmp_path, head[:6], tmp_path)
    assert verdict("infx config validate", marked, False) == (
        "infx config validate: invalid — 2 errors, 6 warnings (6 already on the base branch)"
    )
    assert verdict("infx matrix", [], True, "3 points") == "infx matrix: ok; 3 points"


def test_repeated_findings_print_once_with_the_first_places_and_all_of_them_in_json(tmp_path):
    found = [_unknown_runner(tmp_path, f"k{i}", "gb300-nv", 10 * i + 1) for i in range(6)]
    text = render_report("infx config validate", found, False)
    lines = text.splitlines()
    assert lines[0] == "infx config validate: invalid — 6 errors"
    assert sum("error[runner-unknown]" in line for line in lines) == 1
    assert lines[-1] == (
        "    the same at 5 more places: "
        f"{tmp_path}/configs/a-master.yaml:11:3 (k1), {tmp_path}/configs/a-master.yaml:21:3 (k2), "
        f"{tmp_path}/configs/a-master.yaml:31:3 (k3) and 2 more (all of them: --format json)"
    )
    assert len(json.loads(render_json(found, False))["diagnostics"]) == 6
    assert render_github(found).count("::error ") == 6  # annotations: every one (up to GitHub's ten)


def test_an_on_base_finding_is_one_line_without_its_hint(tmp_path):
    long = error(str(tmp_path / "x.yaml"), (4, 1), "r", "k: misfiled point:\n  yaml: here\n", "Move it.")
    [marked] = demote_on_base([long], tmp_path, [long], tmp_path)
    text = render_report("infx plan", [marked], True)
    assert text.splitlines()[1:] == [
        f"{tmp_path}/x.yaml:4:1: warning[r]: k: misfiled point: … (already on the base branch: not introduced by "
        "this change)"
    ]


def test_files_print_relative_to_the_repository_root(tmp_path):
    assert shown_file(str(tmp_path / "configs" / "a.yaml"), tmp_path) == "configs/a.yaml"
    assert shown_file("/elsewhere/a.yaml", tmp_path) == "/elsewhere/a.yaml"
    assert shown_file("configs/a.yaml@0123456789ab", tmp_path) == "configs/a.yaml@0123456789ab"
    assert shown_file("<command line>", tmp_path) == "<command line>"
