"""infx's imports: no cycle, at the top of each module, late only where infx/deferred.py says.

The graph of imports (``import`` and ``from``, relative imports resolved) is acyclic, counting the
imports inside functions too, so every module can be imported on its own and the order the
interpreter loads them in does not matter. An import inside a function is one infx/deferred.py
declares (a measured start-up cost); the commands that need neither PyGithub nor matplotlib never
load them."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

import pytest

from infx.deferred import DEFERRED, deferred_importers

PACKAGE = Path(__file__).resolve().parent.parent / "infx"
REPO = PACKAGE.parent


def module_files(package: Path) -> dict[str, tuple[Path, bool]]:
    """Module name -> (its file, whether it is a package's __init__)."""
    modules = {}
    for path in package.rglob("*.py"):
        parts = list(path.relative_to(package.parent).with_suffix("").parts)
        is_package = parts[-1] == "__init__"
        modules[".".join(parts[:-1] if is_package else parts)] = (path, is_package)
    return modules


def absolute_module(node: ast.Import | ast.ImportFrom, name: str, is_package: bool) -> list[str]:
    """The modules an import statement of module ``name`` names, relative imports resolved."""
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    if not node.level:
        return [node.module or ""]
    package = name if is_package else name.rpartition(".")[0]
    base = package.split(".")[: len(package.split(".")) - (node.level - 1)]
    return [".".join(base + ([node.module] if node.module else []))]


def runtime_nodes(tree: ast.AST):
    """Every node that can run: all of them except what an ``if TYPE_CHECKING:`` block holds (annotations
    only, never imported at run time, so a type-only reference back is no cycle)."""
    for child in ast.iter_child_nodes(tree):
        if isinstance(child, ast.If) and isinstance(child.test, ast.Name) and child.test.id == "TYPE_CHECKING":
            yield from (node for orelse in child.orelse for node in [orelse, *runtime_nodes(orelse)])
            continue
        yield child
        yield from runtime_nodes(child)


def imported_by(
    name: str, path: Path, is_package: bool, known: set[str], inside_functions: bool = False, annotations: bool = False
) -> set[str]:
    """The infx modules ``name`` imports at module level (a package's own __init__ for ``from pkg import x``
    and the submodule ``pkg.x`` when ``x`` is one); with ``inside_functions``, those imported anywhere it can
    run; with ``annotations`` too, also those an ``if TYPE_CHECKING:`` block imports."""
    tree = ast.parse(path.read_text(), str(path))
    found: set[str] = set()
    nodes = ast.walk(tree) if annotations else runtime_nodes(tree) if inside_functions else tree.body
    for node in nodes:
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names if alias.name in known)
        elif isinstance(node, ast.ImportFrom):
            module = absolute_module(node, name, is_package)[0]
            found.update({module} & known)
            found.update(f"{module}.{alias.name}" for alias in node.names if f"{module}.{alias.name}" in known)
    return found - {name}


def import_graph(package: Path, inside_functions: bool = False, annotations: bool = False) -> dict[str, set[str]]:
    modules = module_files(package)
    return {
        name: imported_by(name, path, is_package, set(modules), inside_functions, annotations)
        for name, (path, is_package) in modules.items()
    }


# The layers of infx, lowest first: a module imports only from its own layer or a lower one (docs/architecture.md,
# "The shape of the code"). A package is one layer; infx's top-level modules are the shared layer at the bottom,
# except those named here.
LAYERS = (
    "shared",
    "config",
    "matrix",
    "sweepplan",
    "launch",
    "results",
    "changelog",
    "workflows",
    "kit",
    "rules",
    "commands",
    "cli",
)
TOP_LEVEL_LAYERS = {"infx.sweepplan": "sweepplan", "infx.rules": "rules", "infx.cli": "cli", "infx.__main__": "cli"}


def layer_of(module: str) -> str:
    parts = module.split(".")
    if module in TOP_LEVEL_LAYERS:
        return TOP_LEVEL_LAYERS[module]
    return parts[1] if len(parts) > 2 or (len(parts) == 2 and parts[1] in LAYERS) else "shared"


def upward_imports(graph: dict[str, set[str]]) -> list[str]:
    """Every import from a lower layer to a higher one, as `importer (layer) -> imported (layer)`."""
    rank = {name: n for n, name in enumerate(LAYERS)}
    return sorted(
        f"{importer} ({layer_of(importer)}) -> {module} ({layer_of(module)})"
        for importer, modules in graph.items()
        for module in modules
        if rank[layer_of(module)] > rank[layer_of(importer)]
    )


def late_imports(package: Path) -> list[tuple[str, str, int]]:
    """(importing module, imported module, line) of every import inside a function."""
    found = []
    for name, (path, is_package) in module_files(package).items():

        def visit(node: ast.AST, in_function: bool) -> None:
            for child in ast.iter_child_nodes(node):
                if in_function and isinstance(child, (ast.Import, ast.ImportFrom)):
                    found.extend((name, module, child.lineno) for module in absolute_module(child, name, is_package))  # noqa: B023
                visit(child, in_function or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)))

        visit(ast.parse(path.read_text(), str(path)), False)
    return sorted(found)


def undeclared(imports: list[tuple[str, str, int]], declared: dict[str, tuple[str, ...]]) -> list[str]:
    """The late imports no entry of ``declared`` (module -> its late importers) allows."""

    def allowed(importer: str, module: str) -> bool:
        return any(
            (module == name or module.startswith(name + ".")) and importer in importers
            for name, importers in declared.items()
        )

    return [
        f"{importer}:{line} imports {module}" for importer, module, line in imports if not allowed(importer, module)
    ]


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
                return path[path.index(following) :] + [following]
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


def test_infx_has_no_import_cycle_counting_the_imports_inside_functions():
    graph = import_graph(PACKAGE, inside_functions=True)
    assert "infx.config.validate" in graph["infx.config.load"]  # a late import, counted
    cycle = find_cycle(graph)
    assert not cycle, "import cycle: " + " -> ".join(cycle)


def test_infx_has_no_import_cycle_counting_annotation_only_imports():
    """An import under ``if TYPE_CHECKING:`` never runs, but a circle of them is still two modules that each
    need the other to be read: none either."""
    graph = import_graph(PACKAGE, annotations=True)
    cycle = find_cycle(graph)
    assert not cycle, "import cycle (annotation-only imports counted): " + " -> ".join(cycle)


def test_every_module_is_in_a_known_layer():
    assert {layer_of(name) for name in module_files(PACKAGE)} <= set(LAYERS)


# The one module still to move (issue 30): the comparison looks its baseline up on GitHub and renders
# the report's Markdown itself. Moving that step to infx/workflows/ empties this; no other may join it.
NOT_YET_ONE_WAY = (
    "infx.results.compare (results) -> infx.workflows.baseline (workflows)",
    "infx.results.compare (results) -> infx.workflows.github.client (workflows)",
    "infx.results.compare (results) -> infx.workflows.report (workflows)",
)


def test_no_module_imports_from_a_higher_layer():
    """Imports anywhere in a module count: at the top, inside functions and annotation-only ones."""
    problems = upward_imports(import_graph(PACKAGE, annotations=True))
    assert problems == list(NOT_YET_ONE_WAY), "imports from a lower layer to a higher one:\n" + "\n".join(
        sorted(set(problems) ^ set(NOT_YET_ONE_WAY))
    )


def test_an_import_up_the_layers_is_reported(tmp_path: Path):
    package = tmp_path / "infx"
    for folder in ("config", "workflows"):
        (package / folder).mkdir(parents=True)
        (package / folder / "__init__.py").write_text("")
    (package / "__init__.py").write_text("")
    (package / "fsio.py").write_text("")
    (package / "config" / "load.py").write_text(
        "from typing import TYPE_CHECKING\nfrom .. import fsio\nif TYPE_CHECKING:\n    from ..workflows import api\n"
    )
    (package / "workflows" / "api.py").write_text("from ..config import load\n")
    graph = import_graph(package, annotations=True)
    assert upward_imports(graph) == [
        "infx.config.load (config) -> infx.workflows (workflows)",
        "infx.config.load (config) -> infx.workflows.api (workflows)",
    ]
    assert upward_imports(import_graph(package)) == []  # the annotation-only import is the one going up
    assert set(find_cycle(graph)) == {"infx.config.load", "infx.workflows.api"}


def test_every_import_inside_a_function_is_declared_in_infx_deferred():
    found = late_imports(PACKAGE)
    assert ("infx.results.plot", "matplotlib.figure") in {(importer, module) for importer, module, _ in found}
    problems = undeclared(found, deferred_importers())
    assert not problems, (
        "imports inside functions that infx/deferred.py does not declare (move them to the top "
        "of the module, or measure their cost with bench/startup.py and declare them):\n" + "\n".join(problems)
    )


def test_every_late_import_infx_deferred_declares_is_made():
    made = {(importer, module) for importer, module, _ in late_imports(PACKAGE)}
    for entry in DEFERRED:
        assert entry.cost_ms > 0 and entry.why
        for importer in entry.importers:
            assert any(
                who == importer and (module == entry.module or module.startswith(entry.module + "."))
                for who, module in made
            ), f"{importer} no longer imports {entry.module} late: drop it from DEFERRED"


def test_a_late_import_the_table_does_not_declare_is_reported(tmp_path: Path):
    package = tmp_path / "infx"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "plot.py").write_text(
        "import os\n\ndef draw():\n    import matplotlib.figure\n    from . import helper\n"
    )
    (package / "helper.py").write_text("")
    found = late_imports(package)
    assert found == [("infx.plot", "infx", 5), ("infx.plot", "matplotlib.figure", 4)]
    assert undeclared(found, {"matplotlib": ("infx.plot",), "infx": ("infx.plot",)}) == []
    assert undeclared(found, {"matplotlib": ("infx.other",)}) == [
        "infx.plot:5 imports infx",
        "infx.plot:4 imports matplotlib.figure",
    ]


LOADED = """
import sys
from infx.cli import main
try:
    main(sys.argv[1:])
except SystemExit as exc:
    code = exc.code
print(f"exit {code}; loaded:", *sorted(name for name in ("github", "requests", "matplotlib") if name in sys.modules))
"""


@pytest.mark.parametrize("argv", [["--help"], ["config", "validate"], ["matrix", "--format", "json"]], ids=" ".join)
def test_commands_that_do_not_talk_to_github_or_draw_load_neither_pygithub_nor_matplotlib(
    argv: list[str], tmp_path: Path
):
    done = subprocess.run(
        [sys.executable, "-c", LOADED, *argv],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "PYTHONPATH": str(REPO), "INFX_CACHE_DIR": str(tmp_path)},
    )
    assert done.stdout.splitlines()[-1] == "exit 0; loaded:", done.stdout[-300:] + done.stderr[-300:]


def test_a_command_that_talks_to_github_loads_pygithub_when_it_connects():
    code = (
        "import sys; from infx.workflows.github import client; assert 'github' not in sys.modules; "
        "client.connect(client.Settings(token='t', base_url='http://127.0.0.1:9')); print('github' in sys.modules)"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        cwd=REPO,
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    assert done.stdout.strip() == "True", done.stderr[-500:]


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
    everywhere = find_cycle(import_graph(package, inside_functions=True))
    assert set(everywhere) == {"infx.first", "infx.sub.second", "infx.third"}
    (package / "third.py").write_text("from infx import first\n")
    cycle = find_cycle(import_graph(package))
    assert cycle[0] == cycle[-1] and set(cycle) == {"infx.first", "infx.sub.second", "infx.third"}


@pytest.mark.parametrize("chain", [["a", "b", "a"], ["a", "a"]])
def test_find_cycle_names_the_chain(chain: list[str]):
    graph: dict[str, set[str]] = {name: set() for name in chain}
    for before, after in zip(chain, chain[1:], strict=False):
        graph[before].add(after)
    assert set(find_cycle(graph)) == set(chain)
