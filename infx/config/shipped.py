"""The files infx ships inside its package, by the name a user asks for them: `infx config shipped NAME`
prints one, so a hint never names a path inside an installed package (site-packages)."""

from __future__ import annotations

from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent
SHIPPED_POLICIES = {  # the policy a repository without its own file gets; the file to write it to
    "components.yaml": PACKAGE / "config" / "components.yaml",
    "eval-thresholds.yaml": PACKAGE / "config" / "eval-thresholds.yaml",
}


def shipped_files() -> dict[str, Path]:
    """Every name `infx config shipped` accepts: the two policies and the JSON Schemas."""
    return {**SHIPPED_POLICIES, **{path.name: path for path in sorted((PACKAGE / "schemas").glob("*.schema.json"))}}


def print_command(name: str) -> str:
    """How a hint names a shipped file: the command that prints it."""
    return f"infx config shipped {name}"


def copy_hint(name: str, what: str) -> str:
    """The hint of a notice that the shipped policy applies: how to make it the repository's own."""
    return f"To change {what}: `{print_command(name)} > configs/{name}`, then edit configs/{name}."
