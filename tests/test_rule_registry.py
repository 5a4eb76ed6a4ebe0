"""The rule registry (infx/rules.py) against the code, the tests and docs/rules.md."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from infx.rules import AREAS, REGISTRY, markdown
from testing import rulescan

ROOT = Path(__file__).resolve().parent.parent
TESTS = ROOT / "tests"
SCANNER_FILES = {
    TESTS / "test_rule_registry.py",
    TESTS / "testing" / "rulescan.py",
}  # by path: tests/matrix/test_rules.py is scanned


def test_the_scan_classifies_every_rule_argument():
    assert rulescan.scan().unclassified == []


def test_every_rule_the_code_emits_is_registered():
    emitted = rulescan.scan().ids
    missing = {rule: sorted(where) for rule, where in emitted.items() if rule not in REGISTRY}
    assert not missing, f"rule ids with no entry in infx/rules.py: {missing}"


def test_every_registered_rule_is_emitted():
    dead = sorted(set(REGISTRY) - set(rulescan.scan().ids))
    assert not dead, f"infx/rules.py lists ids no code emits: {dead}"


def test_the_scan_finds_a_new_rule_and_refuses_an_unknown_shape():
    # A literal id at a helper's `rule: str` parameter is found; a computed one no table explains is reported.
    probe = (
        'from .diagnostics import error\n\n\ndef at(where, rule: str):\n    return error("f", where, rule, "m")\n\n\n'
        'def probe(kind):\n    return [at(None, "probe-new-rule"), error("f", None, f"probe-{kind}", "m")]\n'
    )
    found = rulescan.scan({"infx/_scan_probe.py": probe})
    assert "probe-new-rule" in found.ids
    assert any("_scan_probe.py" in line and "probe-{kind}" in line for line in found.unclassified)


def _test_texts() -> dict[str, str]:
    files = [
        p
        for p in TESTS.rglob("*")
        if p.is_file()
        and p.suffix in (".py", ".yaml", ".yml", ".json")
        and p not in SCANNER_FILES
        and "data" not in p.relative_to(TESTS).parts
    ]
    return {str(p.relative_to(ROOT)): p.read_text(errors="replace") for p in files}


def test_every_rule_is_asserted_by_a_test():
    texts = _test_texts()
    untested = [
        rule
        for rule in sorted(REGISTRY)
        if not any(re.search(rf"(?<![a-z0-9-]){re.escape(rule)}(?![a-z0-9-])", text) for text in texts.values())
    ]
    assert not untested, f"rule ids no test under tests/ names: {untested}"


def test_every_rule_has_one_area_and_a_doc_line():
    for entry in REGISTRY.values():
        assert entry.area in AREAS and entry.checks.strip() and entry.fix.strip(), entry


def test_docs_rules_md_is_generated_from_the_registry():
    assert (ROOT / "docs" / "rules.md").read_text() == markdown(), (
        "regenerate: python3 -m infx.rules --markdown > docs/rules.md"
    )


def test_the_markdown_command_prints_the_doc():
    done = subprocess.run(
        [sys.executable, "-m", "infx.rules", "--markdown"], cwd=ROOT, capture_output=True, text=True, check=False
    )
    assert done.returncode == 0 and done.stdout == markdown()
    assert all(f"`{rule}`" in done.stdout for rule in REGISTRY)


AREA_DOCS = ("config", "launch", "results", "changelog", "matrix", "workflows")


def test_readme_and_area_docs_link_the_rules():
    assert "docs/rules.md" in (ROOT / "README.md").read_text()
    unlinked = [name for name in AREA_DOCS if "](rules.md)" not in (ROOT / "docs" / f"{name}.md").read_text()]
    assert not unlinked, f"docs that discuss diagnostics without linking docs/rules.md: {unlinked}"
