"""What infx's packages and modules say they do to the world outside the process, kept true.

Each package's docstring (``infx/<pkg>/__init__.py``) has a line ``Effects: …`` naming its effects
(network, filesystem, subprocess) or ``none``; a module may have its own, else its package's holds.
A package or module whose claim names no network must not reach the network: neither it nor
anything it imports, at module level or inside a function, transitively, imports a network library
(PyGithub, requests, urllib3, urllib.request, http.client, socket) or an infx module whose own
docstring claims network (the GitHub client package, infx/workflows/github/, above all).
"""

from __future__ import annotations

import ast
import functools
import re
from pathlib import Path

import pytest

from test_imports import PACKAGE, absolute_module, module_files, runtime_nodes

EFFECTS = ("network", "filesystem", "subprocess")
CLAIM = re.compile(rf"^Effects: (none|(?:{'|'.join(EFFECTS)})(?:, (?:{'|'.join(EFFECTS)}))*)\b", re.M)
NETWORK_LIBRARIES = ("github", "requests", "urllib3", "urllib.request", "http.client", "socket")
MODULES = module_files(PACKAGE)


@functools.cache
def own_claim(path: Path) -> frozenset[str] | None:
    """The effects a module's docstring names on its ``Effects:`` line; None when it has none."""
    found = CLAIM.search(ast.get_docstring(ast.parse(path.read_text(), str(path))) or "")
    if found is None:
        return None
    return frozenset() if found.group(1) == "none" else frozenset(found.group(1).split(", "))


def claim(name: str) -> frozenset[str]:
    """The module's own claim, else that of the nearest package holding it."""
    parts = name.split(".")
    for depth in range(len(parts), 0, -1):
        holder = ".".join(parts[:depth])
        if holder in MODULES and (holder == name or MODULES[holder][1]):
            said = own_claim(MODULES[holder][0])
            if said is not None:
                return said
    raise AssertionError(f"{name}: no `Effects:` line in it or in a package holding it")


@functools.cache
def imports_anywhere(name: str) -> set[str]:
    """Every module ``name`` imports (infx's and others', at module level and inside functions;
    not what only annotations import)."""
    path, is_package = MODULES[name]
    found: set[str] = set()
    for node in runtime_nodes(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            module = absolute_module(node, name, is_package)[0]
            found.add(module)
            found.update(f"{module}.{alias.name}" for alias in node.names if f"{module}.{alias.name}" in MODULES)
    return found - {name}


def networked(module: str) -> bool:
    """A network library, or an infx module (not a package: a package's claim sums up its modules)
    whose own docstring claims network."""
    if module in MODULES:
        path, is_package = MODULES[module]
        return not is_package and "network" in (own_claim(path) or ())
    return any(module == library or module.startswith(library + ".") for library in NETWORK_LIBRARIES)


def path_to_network(start: str) -> list[str]:
    """The shortest chain of imports from ``start`` to a network library or a networked infx module; [] when none."""
    chains, seen = [[start]], {start}
    while chains:
        chain = chains.pop(0)
        for module in sorted(imports_anywhere(chain[-1])):
            if networked(module):
                return [*chain, module]
            if module in MODULES and module not in seen:
                seen.add(module)
                chains.append([*chain, module])
    return []


def test_every_package_says_its_effects():
    packages = [name for name, (_, is_package) in MODULES.items() if is_package]
    assert "infx.workflows.github" in packages
    missing = [name for name in packages if own_claim(MODULES[name][0]) is None]
    assert not missing, f"packages whose docstring has no `Effects:` line: {missing}"


@pytest.mark.parametrize("name", sorted(name for name in MODULES if "network" not in claim(name)))
def test_what_claims_no_network_reaches_none(name: str):
    chain = path_to_network(name)
    assert not chain, f"{name} claims no network ({', '.join(sorted(claim(name))) or 'none'}) but " + " -> ".join(chain)


def test_the_gitHub_client_claims_network_and_the_rules_it_applies_do_not():
    assert "network" in claim("infx.workflows.github.client")
    for pure in ("infx.workflows.trust", "infx.workflows.repocheck", "infx.workflows.lanegate"):
        assert claim(pure) == frozenset(), pure
    assert "network" not in claim("infx.workflows.github.archives")


def test_a_claim_of_no_network_that_reaches_it_is_found(tmp_path: Path, monkeypatch):
    package = tmp_path / "infx"
    package.mkdir()
    (package / "__init__.py").write_text('"""x.\n\nEffects: filesystem.\n"""\n')
    (package / "pure.py").write_text('"""p.\n\nEffects: none.\n"""\n\ndef f():\n    from . import helper\n')
    (package / "helper.py").write_text("def g():\n    import urllib.request\n")
    monkeypatch.setattr(__import__(__name__), "MODULES", module_files(package))
    imports_anywhere.cache_clear()
    assert claim("infx.helper") == frozenset({"filesystem"})
    assert path_to_network("infx.pure") == ["infx.pure", "infx.helper", "urllib.request"]
    imports_anywhere.cache_clear()
