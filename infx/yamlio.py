"""Strict YAML loading with a line and column for every node.

PyYAML composes the node graph (with its C parser when available); infx then builds plain
Python data from the nodes itself so that it can reject duplicate keys (naming both
places), refuse alias bombs and recursive aliases, and remember where every key and list
item sits. Scalars follow YAML 1.1 as PyYAML's safe loader does (``2_063_837`` is an int),
except that timestamps stay strings so every document can be written back as JSON.
"""

from __future__ import annotations

import gc
import os
import re
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import yaml

from .diagnostics import Diagnostic, error
from .fsio import read_bytes
from .yamldoc import Document, Path_

try:  # The C composer is about 10x faster on the 320 KB master config.
    from yaml import CSafeLoader as _BaseLoader
except ImportError:  # pragma: no cover - depends on how PyYAML was built
    from yaml import SafeLoader as _BaseLoader  # type: ignore[assignment]  # the same interface, in Python

_PLAIN_TAGS: dict[str, str] = {}
_SCALAR_NODE = yaml.ScalarNode


class _Loader(_BaseLoader):
    """Remembers the implicit tag of each plain scalar text: configs repeat the same keys
    and values thousands of times, and PyYAML resolves every one with regexes in Python.

    It has no path resolvers (``yaml.add_path_resolver`` elsewhere cannot change how infx reads
    a file), so PyYAML's bookkeeping for them, two Python calls per node, is skipped."""

    yaml_path_resolvers: dict = {}

    def descend_resolver(self, current_node, current_index):
        return None

    def ascend_resolver(self):
        return None

    def resolve(self, kind, value, implicit):
        if kind is _SCALAR_NODE and implicit[0]:
            tag = _PLAIN_TAGS.get(value)
            if tag is None:
                tag = _PLAIN_TAGS[value] = super().resolve(kind, value, implicit)
            return tag
        return super().resolve(kind, value, implicit)


# An anchor (`&name`) where a node may start; '&' inside words, URLs and "A & B" is not one.
# The pattern starts with its literal '&' (what comes before is a look-behind), so the regex
# engine skips to each '&' instead of trying every position: 0.1 ms instead of 9 ms on the masters.
_ANCHOR = re.compile(r"&(?<![^\s\[\{,:]&)[^\s\[\]\{\},]")

MAX_BYTES = 16 * 1024 * 1024
MAX_NODES = 1_000_000  # nodes built after alias expansion; a "billion laughs" stops here
MAX_DEPTH = 200
# What libyaml says when a document passes its own nesting limit (1,000 levels), before infx counts.
LIBYAML_DEPTH_LIMIT = "exceeded maximum nesting depth"

_constructor = yaml.constructor.SafeConstructor()
_TAG = "tag:yaml.org,2002:"
_STR = _TAG + "str"
_SCALARS = {
    _TAG + "str": lambda node: node.value,
    _TAG + "int": lambda node: (
        int(node.value) if node.value.isdigit() and node.value[0] != "0" else _constructor.construct_yaml_int(node)
    ),  # plain decimals directly; PyYAML handles signs, '_', 0x, 0o and YAML 1.1 octal
    _TAG + "float": _constructor.construct_yaml_float,
    _TAG + "bool": _constructor.construct_yaml_bool,
    _TAG + "null": lambda node: None,
    _TAG + "timestamp": lambda node: node.value,
}
# What an explicitly tagged scalar (`!!bool maybe`, `!!int ""`) may hold: PyYAML's constructors
# trust the tag and fail with KeyError/IndexError (or, for null, accept anything) otherwise.
_ACCEPTED = {
    _TAG + "bool": "true or false (YAML 1.1 also: yes, no, on, off)",
    _TAG + "int": "an integer of at most 4,300 digits (decimal, 0x hex, 0o octal, 0b binary)",
    _TAG + "float": "a number such as 1.5, 1e3, .inf or .nan",
    _TAG + "null": "null, ~ or nothing",
}
_EXPLICIT_SHAPES = {
    tag: regexp
    for resolvers in yaml.resolver.Resolver.yaml_implicit_resolvers.values()
    for tag, regexp in resolvers
    if tag in (_TAG + "bool", _TAG + "null")
}
MAX_INT_BITS = 14_000  # about 4,200 decimal digits: Python's limit for turning an int into text is 4,300
SHOWN_SCALAR = 60  # characters of an offending scalar quoted in a message


def _shown(value: str) -> str:
    return repr(value if len(value) <= SHOWN_SCALAR else value[:SHOWN_SCALAR] + "…")


class _Problem(Exception):
    def __init__(self, diagnostic: Diagnostic):
        self.diagnostic = diagnostic


def _mark(node: yaml.Node | yaml.Event) -> tuple[int, int]:
    mark = node.start_mark
    assert mark is not None  # the parser marks every node and event
    return mark.line + 1, mark.column + 1


class _Builder:
    def __init__(self, file: str):
        self.file = file
        self.marks: dict[Path_, tuple[int, int]] = {}
        self.nodes_built = 0
        self.active: set[int] = set()

    def problem(self, node: yaml.Node, rule: str, message: str, hint: str = "") -> _Problem:
        return _Problem(error(self.file, _mark(node), rule, message, hint))

    def build(self, node: yaml.Node, path: Path_, depth: int = 0) -> Any:
        self.nodes_built += 1
        if self.nodes_built > MAX_NODES:
            raise self.problem(
                node,
                "yaml-too-large",
                f"the document expands to more than {MAX_NODES:,} nodes (aliases repeated too often)",
                "Write the data out without anchors/aliases; infx refuses alias bombs.",
            )
        if depth > MAX_DEPTH:
            raise self.problem(node, "yaml-too-deep", f"nesting is deeper than {MAX_DEPTH} levels")
        if isinstance(node, yaml.ScalarNode):
            construct = _SCALARS.get(node.tag)
            if construct is None:
                raise self.problem(
                    node,
                    "yaml-tag",
                    f"unsupported YAML tag {node.tag!r}",
                    "Use plain strings, numbers, booleans, lists and mappings.",
                )
            shape = _EXPLICIT_SHAPES.get(node.tag)
            try:
                if shape is not None and not shape.match(node.value):
                    raise KeyError(node.value)
                value = construct(node)
                if (
                    type(value) is int and value.bit_length() > MAX_INT_BITS
                ):  # 0x… has no digit limit, but printing it does
                    raise ValueError("more than 4,300 decimal digits")
                return value
            except (ValueError, KeyError, IndexError, TypeError, yaml.YAMLError) as exc:
                accepted = _ACCEPTED.get(node.tag)
                if not isinstance(exc, ValueError) or isinstance(exc, yaml.YAMLError):
                    reason = f"not {'an' if node.tag.endswith('int') else 'a'} {node.tag.removeprefix(_TAG)}"
                else:
                    reason = str(exc) if len(str(exc)) <= 2 * SHOWN_SCALAR else "too long to be read as one"
                raise self.problem(
                    node,
                    "yaml-syntax",
                    f"cannot read {node.tag.removeprefix(_TAG)} scalar {_shown(node.value)}: {reason}",
                    f"Write {accepted}, or quote the value to make it a string." if accepted else "",
                ) from exc
        if id(node) in self.active:
            raise self.problem(node, "yaml-recursive-alias", "an alias refers to a node that contains it")
        self.active.add(id(node))
        try:
            if isinstance(node, yaml.SequenceNode):
                if node.tag != _TAG + "seq":
                    raise self.problem(node, "yaml-tag", f"unsupported YAML tag {node.tag!r}")
                items = []
                marks = self.marks
                for index, child in enumerate(node.value):
                    child_path = path + (index,)
                    mark = child.start_mark
                    marks[child_path] = (mark.line + 1, mark.column + 1)
                    if (
                        child.tag == _STR
                        and depth < MAX_DEPTH
                        and self.nodes_built < MAX_NODES
                        and type(child) is _SCALAR_NODE
                    ):
                        self.nodes_built += 1  # build()'s count and checks, then a plain string is its text
                        items.append(child.value)
                    else:
                        items.append(self.build(child, child_path, depth + 1))
                return items
            if node.tag != _TAG + "map":
                raise self.problem(node, "yaml-tag", f"unsupported YAML tag {node.tag!r}")
            return self.build_mapping(node, path, depth)
        finally:
            self.active.discard(id(node))

    def build_mapping(self, node: yaml.Node, path: Path_, depth: int) -> dict:  # a node tagged map
        result: dict = {}
        seen: dict[Any, yaml.Node] = {}
        merged: list[yaml.Node] = []
        marks = self.marks
        # A plain string (most keys and many values) is its text: build()'s node count and
        # limits are kept inline, and anything else, or a limit reached, goes through build().
        for key_node, value_node in node.value:
            if (
                key_node.tag == _STR
                and depth < MAX_DEPTH
                and self.nodes_built < MAX_NODES
                and type(key_node) is _SCALAR_NODE
            ):
                self.nodes_built += 1
                key = key_node.value
            else:
                if key_node.tag == _TAG + "merge":
                    merged.append(value_node)
                    continue
                if not isinstance(key_node, yaml.ScalarNode):
                    raise self.problem(key_node, "yaml-key", "mapping keys must be plain scalars")
                key = self.build(key_node, path, depth + 1)
            if key in seen:
                first_line, first_col = _mark(seen[key])
                raise self.problem(
                    key_node,
                    "yaml-duplicate-key",
                    f"duplicate key {key!r}; it is first defined at line {first_line}, column {first_col}",
                    "Keep one of the two definitions; YAML readers silently keep only the last one.",
                )
            seen[key] = key_node
            child_path = path + (key,)
            mark = key_node.start_mark
            marks[child_path] = (mark.line + 1, mark.column + 1)
            if (
                value_node.tag == _STR
                and depth < MAX_DEPTH
                and self.nodes_built < MAX_NODES
                and type(value_node) is _SCALAR_NODE
            ):
                self.nodes_built += 1
                result[key] = value_node.value
            else:
                result[key] = self.build(value_node, child_path, depth + 1)
        for source in merged:  # YAML merge keys: explicit keys win
            sources = source.value if isinstance(source, yaml.SequenceNode) else [source]
            for sub in sources:
                value = self.build(sub, path, depth + 1)
                if not isinstance(value, dict):
                    raise self.problem(sub, "yaml-merge", "a merge key (<<) must refer to a mapping")
                for key, item in value.items():
                    result.setdefault(key, item)
        return result


def _syntax_diagnostic(file: str, text: str, exc: yaml.YAMLError) -> Diagnostic:
    mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
    where = (mark.line + 1, mark.column + 1) if mark is not None else None
    problem = getattr(exc, "problem", None) or str(exc)
    context = getattr(exc, "context", None)
    message = f"{context}, {problem}" if context else str(problem)
    hint = "Fix the YAML syntax at this position."
    if LIBYAML_DEPTH_LIMIT in str(problem):  # libyaml's own limit (PyYAML 6.0.4 on) lies past MAX_DEPTH
        return error(file, where, "yaml-too-deep", f"nesting is deeper than {MAX_DEPTH} levels")
    if mark is not None and text[mark.index : mark.index + 1] == "\t":
        message = "a tab character; YAML does not allow tabs for indentation"
        hint = "Replace the tab with spaces."
    return error(file, where, "yaml-syntax", f"invalid YAML: {message}", hint)


def _expanded_size(root: yaml.Node, limit: int) -> int | None:
    """Node count after alias expansion, or None past ``limit``; raises ValueError on a cycle."""
    sizes: dict[int, int] = {}
    active: set[int] = set()

    def size(node: yaml.Node) -> int:
        known = sizes.get(id(node))
        if known is not None:
            return known
        if isinstance(node, yaml.ScalarNode):
            return 1
        if id(node) in active:
            raise ValueError("recursive alias")
        active.add(id(node))
        children = node.value if isinstance(node, yaml.SequenceNode) else [n for pair in node.value for n in pair]
        total = 1
        for child in children:
            total += size(child)
            if total > limit:
                break
        active.discard(id(node))
        sizes[id(node)] = total
        return total

    total = size(root)
    return None if total > limit else total


# PyYAML's C composer recurses without Python's recursion check: 50,000 nested `[` overflow the
# C stack (a segfault). Nesting that deep is refused from the event stream, which is flat.
COMPOSE_SAFE_DEPTH = 10_000  # 20,000 levels compose fine; half of that keeps a margin
INDENT_BOUND = 2_000  # indentation assumed for every line unless one is indented deeper
_DEEP_INDENT = "\n" + " " * INDENT_BOUND
_COMPACT = re.compile(r"(?:[-?][ \t]+){2,}")  # `- - - x`: nesting within one line
# Without one of these the (slower) findall finds nothing; two searches that start with a
# literal are five times faster than one that starts with a character class.
_COMPACT_PAIRS = (re.compile(r"-[ \t]+[-?]"), re.compile(r"\?[ \t]+[-?]"))


def _depth_bound(text: str) -> int:
    """An upper bound of the nesting depth, cheap for real files: every flow bracket, two block
    levels per indentation column (a mapping and its sequence share one), and compact nesting."""
    if _DEEP_INDENT in text or text.startswith(_DEEP_INDENT[1:]):
        return COMPOSE_SAFE_DEPTH + 1
    flow = text.count("[") + text.count("{")
    compact = (
        max(map(len, _COMPACT.findall(text)), default=0) if any(pair.search(text) for pair in _COMPACT_PAIRS) else 0
    )
    return flow + 2 * (INDENT_BOUND + 1) + compact + 2


def _too_deep(text: str, file: str) -> Diagnostic | None:
    if _depth_bound(text) <= COMPOSE_SAFE_DEPTH:
        return None
    depth = 0
    try:
        for event in yaml.parse(text, Loader=_BaseLoader):
            if isinstance(event, (yaml.SequenceStartEvent, yaml.MappingStartEvent)):
                depth += 1
                if depth > MAX_DEPTH:
                    return error(file, _mark(event), "yaml-too-deep", f"nesting is deeper than {MAX_DEPTH} levels")
            elif isinstance(event, (yaml.SequenceEndEvent, yaml.MappingEndEvent)):
                depth -= 1
    except yaml.YAMLError:
        return None  # compose reports the syntax error at its position
    return None


@contextmanager
def _collector_paused():
    """Python's cycle collector off while a document is composed and built: the node graph
    and the data grow by hundreds of thousands of containers, which the collector would scan
    over and over (about a third of a master config's parse) to find no garbage. Cycles a
    recursive alias makes are collected once it is back on."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def parse_yaml(text: str | bytes, file: str) -> tuple[Document | None, list[Diagnostic]]:
    """Parse one YAML document. Returns (document, []) or (None, [diagnostic])."""
    with _collector_paused():
        return _parse_yaml(text, file)


def _file_too_large(file: str, size: int) -> tuple[None, list[Diagnostic]]:
    return None, [error(file, None, "yaml-too-large", f"the file is {size:,} bytes; the limit is {MAX_BYTES:,}")]


def _parse_yaml(text: str | bytes, file: str) -> tuple[Document | None, list[Diagnostic]]:
    if isinstance(text, bytes):
        if len(text) > MAX_BYTES:
            return _file_too_large(file, len(text))
        try:
            text = text.decode("utf-8")
        except UnicodeDecodeError as exc:
            line = exc.object[: exc.start].count(b"\n") + 1  # the bytes being decoded (text)
            return None, [
                error(
                    file,
                    (line, None),
                    "yaml-encoding",
                    f"the file is not valid UTF-8 ({exc.reason} at byte {exc.start})",
                    "Save the file as UTF-8.",
                )
            ]
    elif len(text) > MAX_BYTES:
        return None, [
            error(file, None, "yaml-too-large", f"the document is {len(text):,} characters; the limit is {MAX_BYTES:,}")
        ]
    text = text.removeprefix("\ufeff")
    too_deep = _too_deep(text, file)
    if too_deep is not None:
        return None, [too_deep]
    try:
        root = yaml.compose(text, Loader=_Loader)
    except yaml.YAMLError as exc:
        return None, [_syntax_diagnostic(file, text, exc)]
    if root is None:
        return Document(file, None, {(): (1, 1)}), []
    try:  # without an anchor there are no aliases, so nothing can expand (the builder counts anyway)
        if _ANCHOR.search(text) and _expanded_size(root, MAX_NODES) is None:
            return None, [
                error(
                    file,
                    _mark(root),
                    "yaml-too-large",
                    f"the document expands to more than {MAX_NODES:,} nodes (aliases repeated too often)",
                    "Write the data out without anchors/aliases; infx refuses alias bombs.",
                )
            ]
    except ValueError:
        pass  # the builder reports the recursive alias at its position
    except RecursionError:
        return None, [error(file, _mark(root), "yaml-too-deep", "the document is nested too deeply")]
    builder = _Builder(file)
    builder.marks[()] = _mark(root)
    try:
        data = builder.build(root, ())
    except _Problem as problem:
        return None, [problem.diagnostic]
    except RecursionError:
        return None, [error(file, _mark(root), "yaml-too-deep", "the document is nested too deeply")]
    return Document(file, data, builder.marks), []


def load_yaml(path: str | Path, display: str | None = None) -> tuple[Document | None, list[Diagnostic]]:
    """Read and parse a file. A missing or unreadable file is reported, never raised."""
    name = display or str(path)
    try:
        raw = read_bytes(path, limit=MAX_BYTES)  # a regular file only: a FIFO or device is refused, not read
        if len(raw) > MAX_BYTES:  # read no further than the limit, and say the file's real size
            return _file_too_large(name, os.stat(path).st_size)
    except FileNotFoundError:
        return None, [error(name, None, "file-missing", "the file does not exist")]
    except OSError as exc:
        return None, [error(name, None, "file-unreadable", f"cannot read the file: {exc.strerror}")]
    except ValueError as exc:  # a NUL byte in the name
        return None, [error(name, None, "file-unreadable", f"cannot read the file: {exc}")]
    return parse_yaml(raw, name)
