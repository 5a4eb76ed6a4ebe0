"""Every rule id infx/ can emit, found by reading its source (the registry test's scanner).

A rule id is what reaches a parameter or field declared ``rule: str`` (or ``rule_id: str``): the
``rule`` of :func:`infx.diagnostics.error`, ``warning`` and ``Diagnostic``, and of every helper or
record that takes one (``history_changed``, ``CheckContext.at_point``, ``EvalProblem``, the config
``@rule`` decorator, …), found by their declarations, not by a list. A string literal there is an
id. Any other expression must be classified in :data:`DYNAMIC` (ids computed from the code's own
tables) or :data:`RELAYS` (a rule copied from a record whose ids are found where it is made);
:func:`scan` reports every expression it cannot classify, so a new shape fails the test.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "infx"
RULE_PARAMETERS = ("rule", "rule_id")
ID_SHAPE = re.compile(r"^[a-z][a-z0-9]*(-[a-z0-9]+)*$")


def _tree(relative: str) -> ast.Module:
    return ast.parse((ROOT / relative).read_text(), relative)


def _tuple_heads(relative: str, function: str | None = None) -> set[str]:
    """String literals that start a tuple in ``relative`` (inside ``function`` when given): the
    ``(rule, message, …)`` findings some checks yield before a caller turns them into diagnostics."""
    tree = _tree(relative)
    roots: list[ast.AST] = [tree]
    if function:
        roots = [node for node in ast.walk(tree) if isinstance(node, ast.FunctionDef) and node.name == function]
        assert roots, f"{relative} has no function {function}"
    found = set()
    for root in roots:
        for node in ast.walk(root):
            if isinstance(node, ast.Tuple) and len(node.elts) >= 2:
                first = node.elts[0]
                if isinstance(first, ast.Tuple) and len(node.elts) >= 3:  # (path, rule, message, hint)
                    first = node.elts[1]
                message = node.elts[node.elts.index(first) + 1] if node.elts.index(first) + 1 < len(node.elts) else None
                says = isinstance(message, ast.JoinedStr) or (
                    isinstance(message, ast.Constant) and " " in str(message.value)
                )
                if (
                    says
                    and isinstance(first, ast.Constant)
                    and isinstance(first.value, str)
                    and ID_SHAPE.match(first.value)
                ):
                    found.add(first.value)
    return found


def _forbidden_characters() -> set[str]:
    from infx.changelog.contract import FORBIDDEN_CHARACTERS

    return {rule for rule, _, _ in FORBIDDEN_CHARACTERS.values()}


def _schema_keywords() -> set[str]:
    from infx.schema import OTHER_KEYWORD, SCHEMA_RULES

    return set(SCHEMA_RULES) | {OTHER_KEYWORD[0]}


def _point_statuses() -> set[str]:
    from infx.results.collect import HINTS

    return {f"result-{status}" for status in HINTS}  # every status but ok has its hint; the f-string below


def _json_documents() -> set[str]:
    """sweepplan.read_json names its rule after the document it reads: `plan file` -> plan-json."""
    whats = set()
    for path in PACKAGE.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.FunctionDef) and node.name == "read_json" and path.name == "sweepplan.py":
                defaults = node.args.defaults
                whats.add(defaults[0].value)  # type: ignore[attr-defined]
            elif (
                isinstance(node, ast.Call)
                and getattr(node.func, "id", getattr(node.func, "attr", None)) == "read_json"
                and len(node.args) > 1
                and isinstance(node.args[1], ast.Constant)
            ):
                whats.add(node.args[1].value)
    return {what.removesuffix(" file").replace(" ", "-") + "-json" for what in whats}


def _row_findings() -> set[str]:
    return _tuple_heads("infx/matrix/rowschema.py") | _schema_keywords()


# (file, line's expression) -> the ids it can take, computed from the code's own tables.
DYNAMIC: dict[tuple[str, str], Callable[[], set[str]]] = {
    ("infx/changelog/contract.py", "rule"): _forbidden_characters,
    ("infx/schema.py", "found_rule"): _schema_keywords,
    ("infx/results/collect.py", "f'result-{p.status}'"): _point_statuses,
    ("infx/results/evals/folder.py", "rule"): lambda: _tuple_heads("infx/results/evals/folder.py", "manifest_problems"),
    ("infx/sweepplan.py", "rule"): lambda: _row_findings() | _json_documents(),
}
# A rule copied from a Diagnostic, an EvalProblem, a _FieldError or a config Rule: its ids are found where that is made.
RELAYS = {"d.rule", "p.rule", "exc.rule", "rule.id"}


@dataclass
class Scan:
    ids: dict[str, set[str]] = field(default_factory=dict)  # id -> "file:line" where it is emitted
    unclassified: list[str] = field(default_factory=list)

    def add(self, rule: str, where: str) -> None:
        if not ID_SHAPE.match(rule):
            self.unclassified.append(f"{where}: {rule!r} is not a rule id's shape")
        self.ids.setdefault(rule, set()).add(where)


@dataclass(frozen=True)
class Sink:
    index: int  # the rule's position among the call's positional arguments
    keyword: str
    required: int  # positional arguments a call must give (tells `problem(node, rule, msg)` from another `problem(x)`)
    method: bool = False  # called as `obj.name(...)` on an object, never as `name(...)` or `module.name(...)`


def _rule_slot(args: ast.arguments, skip_self: bool) -> Sink | None:
    positional = args.posonlyargs + args.args
    if skip_self:
        positional = positional[1:]
    required = len(positional) - len(args.defaults)
    for index, arg in enumerate(positional):
        if arg.arg in RULE_PARAMETERS and _is_text(arg.annotation):
            return Sink(index, arg.arg, required)
    for arg in args.kwonlyargs:
        if arg.arg in RULE_PARAMETERS and _is_text(arg.annotation):
            return Sink(10**6, arg.arg, required)
    return None


def _is_text(annotation: ast.expr | None) -> bool:
    return annotation is not None and "str" in ast.unparse(annotation).split(" | ")


def _record_slot(node: ast.ClassDef) -> Sink | None:
    """A dataclass or NamedTuple with a `rule: str` field."""
    fields = [
        item
        for item in node.body
        if isinstance(item, ast.AnnAssign)
        and isinstance(item.target, ast.Name)
        and not ast.unparse(item.annotation).startswith("ClassVar")  # a class's constant, not a field
    ]
    for index, item in enumerate(fields):
        if item.target.id in RULE_PARAMETERS and _is_text(item.annotation):  # type: ignore[union-attr]
            return Sink(index, item.target.id, sum(1 for f in fields if f.value is None))  # type: ignore[union-attr]
    return None


def sinks(trees: dict[str, ast.Module]) -> dict[str, Sink]:
    """Every function, method, class or record that takes a rule id, by the name it is called by."""
    found: dict[str, Sink] = {}
    methods: set[ast.FunctionDef] = set()
    for tree in trees.values():
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef):
                slot = _record_slot(node)
                for item in node.body:
                    if isinstance(item, ast.FunctionDef):
                        methods.add(item)
                        method = _rule_slot(item.args, skip_self=True)
                        if method and item.name == "__init__":
                            slot = method
                        elif method:
                            found[item.name] = Sink(method.index, method.keyword, method.required, method=True)
                if slot:
                    found[node.name] = slot
    for tree in trees.values():
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef) and node not in methods:
                slot = _rule_slot(node.args, skip_self=False)
                if slot:
                    assert node.name not in found, (
                        f"two callables named {node.name} take a rule id: the scan cannot tell them apart"
                    )
                    found[node.name] = slot
    return found


def _imported(tree: ast.Module) -> set[str]:
    return {
        (alias.asname or alias.name).split(".")[0]
        for node in ast.walk(tree)
        if isinstance(node, (ast.Import, ast.ImportFrom))
        for alias in node.names
    }


def _argument(call: ast.Call, sink: Sink) -> ast.expr | None:
    for keyword in call.keywords:
        if keyword.arg == sink.keyword:
            return keyword.value
    starred = [i for i, arg in enumerate(call.args) if isinstance(arg, ast.Starred)]
    if starred:  # error(*where, 'rule', message, hint): the first text after the unpacked location
        after = [arg for arg in call.args[starred[-1] + 1 :] if isinstance(arg, (ast.Constant, ast.JoinedStr))]
        return after[0] if after else None
    if len(call.args) < sink.required:
        return None  # another function of the same name
    return call.args[sink.index] if sink.index < len(call.args) else None


def _defaults(trees: dict[str, ast.Module], scan: Scan) -> None:
    for relative, tree in trees.items():
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef):
                args = node.args
                pairs = list(
                    zip(
                        (args.posonlyargs + args.args)[len(args.posonlyargs + args.args) - len(args.defaults) :],
                        args.defaults,
                    )
                )
                pairs += [(a, d) for a, d in zip(args.kwonlyargs, args.kw_defaults) if d is not None]
                for arg, default in pairs:
                    if (
                        arg.arg in RULE_PARAMETERS
                        and isinstance(default, ast.Constant)
                        and isinstance(default.value, str)
                    ):
                        scan.add(default.value, f"{relative}:{default.lineno}")


def _classify(expr: ast.expr, relative: str, parameters: set[str], scan: Scan, where: str) -> None:
    if isinstance(expr, ast.Constant) and isinstance(expr.value, str):
        scan.add(expr.value, where)
    elif isinstance(expr, ast.BoolOp):
        for value in expr.values:
            _classify(value, relative, parameters, scan, where)
    elif isinstance(expr, ast.Name) and expr.id in parameters:
        pass  # the enclosing function's own rule parameter: its callers are scanned as sinks
    elif ast.unparse(expr) in RELAYS:
        pass
    elif (relative, ast.unparse(expr)) in DYNAMIC:
        for rule in DYNAMIC[relative, ast.unparse(expr)]():
            scan.add(rule, f"{where} (computed)")
    else:
        scan.unclassified.append(f"{where}: cannot classify the rule argument `{ast.unparse(expr)}`")


def _sink_of(call: ast.Call, known: dict[str, Sink], modules: set[str]) -> Sink | None:
    if isinstance(call.func, ast.Name):
        sink = known.get(call.func.id)
        return sink if sink and not sink.method else None
    if isinstance(call.func, ast.Attribute):
        sink = known.get(call.func.attr)
        on_module = isinstance(call.func.value, ast.Name) and call.func.value.id in modules
        return sink if sink and not (sink.method and on_module) else None
    return None


def _visit(
    node: ast.AST, relative: str, parameters: set[str], known: dict[str, Sink], scan: Scan, modules: set[str]
) -> None:
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        args = node.args
        own = {
            a.arg
            for a in args.posonlyargs + args.args + args.kwonlyargs
            if a.arg in RULE_PARAMETERS and _is_text(a.annotation)
        }
        parameters = parameters | own
    sink = _sink_of(node, known, modules) if isinstance(node, ast.Call) else None
    if sink is not None:
        argument = _argument(node, sink)  # type: ignore[arg-type]
        if argument is not None:
            _classify(argument, relative, parameters, scan, f"{relative}:{node.lineno}")  # type: ignore[attr-defined]
    for child in ast.iter_child_nodes(node):
        _visit(child, relative, parameters, known, scan, modules)


def scan(extra: dict[str, str] | None = None, exclude: tuple[str, ...] = ("infx/rules.py",)) -> Scan:
    """The ids of infx/ (plus ``extra``: relative path -> source, for the scanner's own test)."""
    sources = {str(path.relative_to(ROOT)): path.read_text() for path in sorted(PACKAGE.rglob("*.py"))} | (extra or {})
    trees = {relative: ast.parse(text, relative) for relative, text in sources.items() if relative not in exclude}
    result = Scan()
    known = sinks(trees)
    _defaults(trees, result)
    for relative, tree in trees.items():
        _visit(tree, relative, set(), known, result, _imported(tree))
    return result
