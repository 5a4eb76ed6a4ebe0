"""The generated parts of configs/CONFIGS.md: the component version policy and the rule list.

Both come from their single source (the shipped policy infx/config/components.yaml, :data:`rules.RULES`); a test
fails when CONFIGS.md drifts. Regenerate with ``python3 -m infx.config.docs``.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

from ..fsio import atomic_write
from ..yamlio import load_yaml
from .components import policy_markdown
from .load import SHIPPED_COMPONENTS
from .nonmaster import NON_MASTER_FIELDS
from .rules import RULES

REPO = Path(__file__).resolve().parent.parent.parent
CONFIGS_MD = REPO / "configs" / "CONFIGS.md"
COMPONENTS = SHIPPED_COMPONENTS


def rules_markdown() -> str:
    lines = ["| rule | severity | what it checks |", "|---|---|---|"]
    lines += [f"| `{rule.id}` | {rule.severity.value} | {rule.summary} |" for rule in RULES.values()]
    return "\n".join(lines)


def non_master_markdown() -> str:
    return "\n".join(f"- `{name}`: {reason}." for name, reason in NON_MASTER_FIELDS.items())


def components_markdown() -> str:
    doc, problems = load_yaml(COMPONENTS)
    if doc is None:
        raise SystemExit(f"cannot read {COMPONENTS}: {problems[0].message}")
    return policy_markdown(doc.data)


SECTIONS = {"components": components_markdown, "rules": rules_markdown, "non-master-fields": non_master_markdown}
_BLOCK = re.compile(
    r"(<!-- BEGIN generated:(?P<name>[a-z-]+) -->\n)(?P<body>.*?)(<!-- END generated:(?P=name) -->)", re.S
)


def render(text: str) -> str:
    """``text`` with every generated block replaced by its current content."""
    return _BLOCK.sub(lambda m: m.group(1) + SECTIONS[m["name"]]() + "\n" + m.group(4), text)


def main() -> None:
    text = CONFIGS_MD.read_text()
    atomic_write(CONFIGS_MD, render(text))
    print(f"updated {CONFIGS_MD}", file=sys.stderr)


if __name__ == "__main__":
    main()
