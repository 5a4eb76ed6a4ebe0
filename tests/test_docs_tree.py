"""docs/architecture.md and the README's Layout against the tree: every name they cite exists."""

from __future__ import annotations

import importlib
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ARCHITECTURE = ROOT / "docs" / "architecture.md"
IGNORED_TOP = {"node_modules", "build", "dist"}  # and every hidden folder (.git, .github, .ci, tool caches)


def _resolves(name: str) -> bool:
    """A path in the repository, or a dotted name that imports (a module, or an attribute of one)."""
    if "/" in name or name.endswith((".py", ".yaml", ".json", ".md")):
        path = name.split("#")[0]
        return any(ROOT.glob(path)) if "*" in path else (ROOT / path).exists()
    parts = name.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            target = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        for attribute in parts[cut:]:
            if not hasattr(target, attribute):
                return False
            target = getattr(target, attribute)
        return True
    return False


def _cited(text: str) -> list[str]:
    names = []
    for code in re.findall(r"`([^`\s]+)`", text):
        code = code.removesuffix("(...)").removeprefix("@")
        if code.startswith(("infx.", "infx/", "tests/", "runners/", "configs/", "docs/", ".github/")):
            names.append(code.replace("<lane>", "gb300-nv"))
    return names


def test_every_name_architecture_md_cites_exists():
    names = _cited(ARCHITECTURE.read_text())
    assert len(names) > 40
    missing = [name for name in names if not _resolves(name)]
    assert not missing, f"docs/architecture.md cites names that do not exist: {missing}"


def test_the_check_refuses_a_name_that_does_not_exist():
    assert _resolves("infx.results.artifact.PointArtifact") and _resolves("infx/schemas/lane.schema.json")
    assert not _resolves("infx.results.artifact.PointArtefact") and not _resolves("infx/schemas/plan.schema.json")


def _layout() -> str:
    text = (ROOT / "README.md").read_text()
    found = re.search(r"## Layout\n\n```\n(.*?)```", text, re.DOTALL)
    assert found, "README.md has no Layout block"
    return found.group(1)


def test_readme_layout_lists_every_top_level_folder_and_infx_package():
    layout = _layout()
    folders = sorted(
        p.name
        for p in ROOT.iterdir()
        if p.is_dir() and p.name not in IGNORED_TOP and not p.name.startswith(".") and not p.name.endswith(".egg-info")
    )
    packages = sorted(p.name for p in (ROOT / "infx").iterdir() if p.is_dir() and p.name != "__pycache__")
    assert [f for f in folders if not re.search(rf"^{re.escape(f)}/", layout, re.MULTILINE)] == []
    assert [p for p in packages if f"{p}/" not in layout] == []


def test_every_path_readme_layout_names_exists():
    layout = _layout()
    named = []
    for line in layout.splitlines():
        first = line.split()[0] if line.strip() else ""
        if line.startswith("  ") and not line.startswith("   "):  # an entry under infx/
            named += (
                [f"infx/{token}" for token in line.split("  ")[1].split() if token.endswith(("/", ".py"))]
                if "/    " in line
                else [f"infx/{first}"]
            )
        elif first and not line.startswith(" "):
            named.append(first)
    missing = [name for name in named if not (ROOT / name).exists()]
    assert named and not missing, f"README's Layout names paths that do not exist: {missing}"
