"""Every rule has a negative fixture that triggers exactly it and a positive one that passes.

tests/fixtures/negative/<rule>.yaml must produce diagnostics of rule <rule> and of no
other rule; tests/fixtures/positive/<rule>.yaml must produce no error and no <rule>.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from infx.config import load_config_set
from infx.config.load import SHIPPED_COMPONENTS as COMPONENTS
from infx.config.rules import RULES
from infx.diagnostics import Severity
from infx.schema import SCHEMA_RULES

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
RUNNERS = FIXTURES / "runners.yaml"

LOADER_RULES = ["key-duplicate-across-files", "file-empty", "file-not-mapping", "yaml-syntax", "yaml-duplicate-key"]
ALL_RULES = sorted(set(RULES) | set(SCHEMA_RULES) | set(LOADER_RULES))
# A negative fixture that needs a second file to show its problem.
COMPANIONS = {"key-duplicate-across-files": FIXTURES / "positive" / "key-duplicate-across-files.yaml"}


def validate(*paths: Path):
    _, report = load_config_set(list(paths), RUNNERS, COMPONENTS)
    return report


def test_every_fixture_names_a_rule():
    names = {p.stem for p in FIXTURES.glob("*/*.yaml")}
    assert names <= set(ALL_RULES), f"fixtures for unknown rules: {names - set(ALL_RULES)}"


@pytest.mark.parametrize("rule", ALL_RULES)
def test_negative_fixture_triggers_only_its_rule(rule):
    path = FIXTURES / "negative" / f"{rule}.yaml"
    assert path.is_file(), f"rule {rule} has no negative fixture"
    companion = [COMPANIONS[rule]] if rule in COMPANIONS else []
    report = validate(*companion, path)
    found = {d.rule for d in report.diagnostics}
    assert found == {rule}, "\n".join(f"{d.rule}: {d.message}" for d in report.diagnostics)
    for d in report.diagnostics:
        assert d.file == str(path) and d.line is not None, d
        assert d.message
    warns_only = rule in RULES and RULES[rule].severity is Severity.WARNING
    assert report.ok == warns_only


@pytest.mark.parametrize("rule", sorted(set(RULES) | set(SCHEMA_RULES)))
def test_positive_fixture_passes(rule):
    path = FIXTURES / "positive" / f"{rule}.yaml"
    assert path.is_file(), f"rule {rule} has no positive fixture"
    report = validate(path)
    assert report.ok, "\n".join(f"{d.rule}: {d.message}" for d in report.diagnostics)
    assert not [d for d in report.diagnostics if d.rule == rule]
