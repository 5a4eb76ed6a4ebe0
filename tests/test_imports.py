"""infx's modules import each other without a cycle: the graph of module-level imports (``import``
and ``from`` at the top of each module, relative imports resolved) is acyclic, so every module can
be imported on its own and the order the interpreter loads them in does not matter."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "infx"


def module_files(package: Path) -> dict[str, tuple[Path, bool]]:
    """Module name -> (its file, whether it is a package's __init__)."""
    modules = {}
    for path in package.rglob("*.py"):
        parts = list(path.relative_to(package.parent).with_suffix("").parts)
        is_package = parts[-1] == "__init__"
        modules[".".join(parts[:-1] if is_package else parts)] = (path, is_package)
    return modules


def imported_by(name: str, path: Path, is_package: bool, known: set[str]) -> set[str]:
    """The infx modules ``name`` imports at module level (a package's own __init__ for ``from pkg import x``
    and the submodule ``pkg.x`` when ``x`` is one)."""
    package = name if is_package else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.parse(path.read_text(), str(path)).body:
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names if alias.name in known)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            found.update({module} & known)
            found.update(f"{module}.{alias.name}" for alias in node.names if f"{module}.{alias.name}" in known)
    return found - {name}


def import_graph(package: Path) -> dict[str, set[str]]:
    modules = module_files(package)
    return {name: imported_by(name, path, is_package, set(modules)) for name, (path, is_package) in modules.items()}


def find_cycle(graph: dict[str, set[str]]) -> list[str]:
    """One import cycle as the chain of modules (first == last), or [] when there is none."""
    done: set[str] = set()
    for start in sorted(graph):
        if start in done:
            continue
        path: list[str] = []
        on_path: set[str] = set()
        stack = [(start, iter(sorted(graph[start])))]
        path.append(start)
        on_path.add(start)
        while stack:
            node, rest = stack[-1]
            following = next(rest, None)
            if following is None:
                stack.pop()
                path.pop()
                on_path.discard(node)
                done.add(node)
            elif following in on_path:
                return path[path.index(following):] + [following]
            elif following not in done:
                stack.append((following, iter(sorted(graph[following]))))
                path.append(following)
                on_path.add(following)
    return []


def test_infx_has_no_import_cycle():
    graph = import_graph(PACKAGE)
    assert len(graph) > 100 and "infx.launch.resultkey" in graph["infx.launch.plan"]
    cycle = find_cycle(graph)
    assert not cycle, "import cycle: " + " -> ".join(cycle)


def test_the_walk_resolves_relative_imports_and_finds_a_cycle(tmp_path: Path):
    package = tmp_path / "infx"
    (package / "sub").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "sub" / "__init__.py").write_text("")
    (package / "first.py").write_text("import os\nfrom .sub import second\n")
    (package / "sub" / "second.py").write_text("from ..third import thing\n")
    (package / "third.py").write_text("def f():\n    from . import first\n")  # inside a function: not module level
    graph = import_graph(package)
    assert graph["infx.first"] == {"infx.sub", "infx.sub.second"}
    assert graph["infx.sub.second"] == {"infx.third"}
    assert find_cycle(graph) == []
    (package / "third.py").write_text("from infx import first\n")
    cycle = find_cycle(import_graph(package))
    assert cycle[0] == cycle[-1] and set(cycle) == {"infx.first", "infx.sub.second", "infx.third"}


@pytest.mark.parametrize("chain", [["a", "b", "a"], ["a", "a"]])
def test_find_cycle_names_the_chain(chain: list[str]):
    graph: dict[str, set[str]] = {name: set() for name in chain}
    for before, after in zip(chain, chain[1:], strict=False):
        graph[before].add(after)
    assert set(find_cycle(graph)) == set(chain)
