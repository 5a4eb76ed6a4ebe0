"""docs/launch.md lists every rule id the launcher can emit, so docs and code cannot drift apart."""

import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def test_every_launch_rule_is_documented():
    code = "\n".join(p.read_text() for p in (REPO / "infx" / "launch").glob("*.py"))
    rules = set(re.findall(r'"((?:point|recipe|lane|agentic)-[a-z-]+)",', code))  # rule ids are passed positionally
    docs = (REPO / "docs" / "launch.md").read_text()
    missing = sorted(rule for rule in rules if f"`{rule}`" not in docs)
    assert missing == []
    assert len(rules) >= 20
