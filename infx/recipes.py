"""srt-slurm recipes: find the file a point names, select one variant, count its nodes.

A point names its recipe with a ``CONFIG_FILE=<path>[:<selector>]`` setting; an eval-only
run that also gives ``EVAL_CONFIG_FILE`` uses that one (:func:`recipe_setting`). Selectors
follow srt-slurm: ``base``, ``override_<name>`` and ``zip_override_<group>[i]`` over a file
with a top-level ``base:``. Selection is a deep merge (dicts recurse, lists and scalars
replace, ``null`` deletes); in a zip override every list is one column of variants, a
list of length one is broadcast, and lists of other unequal lengths are an error.

Pure functions over plain data: the matrix uses them for ``node-count``, the launcher to
materialise the one flat recipe it submits.
"""

from __future__ import annotations

import copy
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .evalsuite import eval_only as is_eval_only
from .workers import workers_settings
from .yamldoc import Document

RECIPES_DIR = "benchmarks/multi_node/srt-slurm-recipes"
CONFIG_FILE_KEY = "CONFIG_FILE"
EVAL_CONFIG_FILE_KEY = "EVAL_CONFIG_FILE"
_ZIP_SELECTOR = re.compile(r"^zip_override_(?P<group>[A-Za-z0-9_.-]+)\[(?P<index>\d+)\]$")
_OVERRIDE_SELECTOR = re.compile(r"^override_(?P<name>[A-Za-z0-9_.-]+)$")


class RecipeError(ValueError):
    """A recipe that cannot be used as named; ``hint`` says how to fix it."""

    def __init__(self, message: str, hint: str = ""):
        super().__init__(message)
        self.hint = hint


@dataclass(frozen=True)
class RecipeRef:
    """A parsed ``CONFIG_FILE`` value."""

    value: str  # as written, e.g. recipes/sglang/x.yaml:zip_override_ladder[2]
    path: str  # recipes/sglang/x.yaml
    selector: str | None  # zip_override_ladder[2]

    @classmethod
    def parse(cls, value: str) -> RecipeRef:
        path, sep, selector = value.partition(":")
        return cls(value, path, selector if sep else None)

    def tree_path(self) -> str:
        """The path inside the recipe tree (``recipes/`` and the full prefix both map to it)."""
        if self.path.startswith(RECIPES_DIR + "/"):
            return self.path.removeprefix(RECIPES_DIR + "/")
        return self.path.removeprefix("recipes/")

    def repo_path(self, root: Path) -> Path:
        """Where the recipe lives in this repository."""
        return root / RECIPES_DIR / self.tree_path()


def recipe_setting(settings: dict[str, list[str]], eval_only: Any = False) -> tuple[str, list[str]]:
    """Which setting names a point's recipe, and its distinct values (in order).

    ``CONFIG_FILE``; but an eval-only run (the row's ``eval-only`` or an ``EVAL_ONLY=true``
    setting: :func:`infx.evalsuite.eval_only`) that gives a non-empty ``EVAL_CONFIG_FILE`` uses
    that recipe, as the reference's runner scripts do. The one rule for the matrix's node count and the launcher.
    """
    key = (
        EVAL_CONFIG_FILE_KEY
        if is_eval_only(eval_only, settings) and any(settings.get(EVAL_CONFIG_FILE_KEY, []))
        else CONFIG_FILE_KEY
    )
    return key, list(dict.fromkeys(settings.get(key, [])))


def recipe_ref_of(*worker_blocks: dict | None, eval_only: Any = False) -> RecipeRef | None:
    """The recipe named by a point's worker blocks (:func:`recipe_setting`); all mentions must agree."""
    key, distinct = recipe_setting(workers_settings(*worker_blocks), eval_only)
    if not distinct:
        return None
    if len(distinct) > 1:
        raise RecipeError(
            f"conflicting {key} settings: {', '.join(distinct)}",
            "Name the recipe once (on prefill, or on the aggregated worker).",
        )
    return RecipeRef.parse(distinct[0])


def deep_merge(base: Any, override: Any) -> Any:
    """srt-slurm merge: dicts recurse, lists and scalars replace, None deletes."""
    if not isinstance(base, dict) or not isinstance(override, dict):
        return copy.deepcopy(override)
    merged = copy.deepcopy(base)
    for key, value in override.items():
        if value is None:
            merged.pop(key, None)
        elif isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = deep_merge(merged[key], value)
        else:
            merged[key] = copy.deepcopy(value)
    return merged


def _zip_width(node: Any, path: str, widths: dict[str, int]) -> None:
    if isinstance(node, dict):
        for key, value in node.items():
            _zip_width(value, f"{path}.{key}" if path else str(key), widths)
    elif isinstance(node, list):
        widths[path] = len(node)


def _zip_pick(node: Any, index: int) -> Any:
    if isinstance(node, dict):
        return {key: _zip_pick(value, index) for key, value in node.items()}
    if isinstance(node, list):
        return copy.deepcopy(node[0] if len(node) == 1 else node[index])
    return copy.deepcopy(node)


def zip_variant(group: dict, index: int, group_name: str) -> dict:
    """Column ``index`` of a zip override group."""
    widths: dict[str, int] = {}
    _zip_width(group, "", widths)
    real = {path: width for path, width in widths.items() if width != 1}
    distinct = sorted(set(real.values()))
    if len(distinct) > 1:
        listing = ", ".join(f"{path} ({width})" for path, width in sorted(real.items()))
        raise RecipeError(
            f"zip_override_{group_name} has lists of unequal lengths: {listing}",
            "Every list in a zip override is one column of variants; give them all the same length (a length-1 list "
            "is broadcast).",
        )
    width = distinct[0] if distinct else 1
    if index >= width:
        raise RecipeError(
            f"zip_override_{group_name}[{index}] is out of range: the group has {width} variant(s) (indexes "
            f"0..{width - 1})",
            f"Use an index from 0 to {width - 1}.",
        )
    return _zip_pick(group, index)


def variant_names(recipe: dict) -> list[str]:
    """Every selector a recipe file offers."""
    if "base" not in recipe:
        return []
    names = ["base"]
    for key, value in recipe.items():
        if key.startswith("zip_override_") and isinstance(value, dict):
            widths: dict[str, int] = {}
            _zip_width(value, "", widths)
            width = max([w for w in widths.values() if w != 1] or [1])
            names.extend(f"{key}[{i}]" for i in range(width))
        elif key.startswith("override_"):
            names.append(key)
    return names


def _is_variant_key(key: str) -> bool:
    return key == "base" or key.startswith(("override_", "zip_override_"))


def select_variant(recipe: Any, selector: str | None) -> dict:
    """The one flat recipe a selector picks out of a recipe file."""
    if not isinstance(recipe, dict):
        raise RecipeError("the recipe file is not a mapping", "An srt-slurm recipe is a YAML mapping.")
    if "base" not in recipe:
        if selector:
            raise RecipeError(
                f"selector {selector!r} given, but the recipe has no top-level 'base:' and so no variants",
                "Drop the ':selector' part of CONFIG_FILE, or give the recipe a base: and overrides.",
            )
        return copy.deepcopy(recipe)
    # File-level keys beside base: (e.g. `schema: 2`) apply to every variant.
    file_level = {key: value for key, value in recipe.items() if not _is_variant_key(key)}
    base = deep_merge(file_level, recipe["base"] if isinstance(recipe["base"], dict) else {})
    if not selector:
        raise RecipeError(
            "the recipe has variants (a top-level 'base:') but CONFIG_FILE names none",
            f"Append one of :{', :'.join(variant_names(recipe))} to CONFIG_FILE.",
        )
    base_name = str(base.get("name", "recipe"))
    if selector == "base":
        return copy.deepcopy(base)
    match = _OVERRIDE_SELECTOR.match(selector)
    if match and selector in recipe:
        override = recipe[selector] or {}
        merged = deep_merge(base, override)
        if "name" not in override:
            merged["name"] = f"{base_name}_{match['name']}"
        return merged
    match = _ZIP_SELECTOR.match(selector)
    if match and f"zip_override_{match['group']}" in recipe:
        group = recipe[f"zip_override_{match['group']}"] or {}
        variant = zip_variant(group, int(match["index"]), match["group"])
        merged = deep_merge(base, variant)
        if "name" not in group:
            merged["name"] = f"{base_name}_{match['group']}_{match['index']}"
        return merged
    raise RecipeError(
        f"unknown recipe selector {selector!r}",
        f"This recipe offers: {', '.join(variant_names(recipe))}.",
    )


def load_recipe(ref: RecipeRef, root: Path) -> tuple[Document, dict]:
    """Read the recipe file and select the variant; raises RecipeError."""
    path = ref.repo_path(root)
    from .yamlio import load_yaml  # PyYAML only when a recipe is read (a warm matrix reads none)

    doc, problems = load_yaml(path, display=str(path))
    if doc is None:  # a document, or the problems that kept it from loading
        raise RecipeError(f"cannot read recipe {ref.path}: {problems[0].message}", problems[0].hint)
    return doc, select_variant(doc.data, ref.selector)


# Top-level keys a node count reads (recipe_node_count), and of some only these children.
NODE_COUNT_KEYS = frozenset({"roles", "resources", "services", "infra", "frontend", "benchmark", "schema", "name"})
NODE_COUNT_CHILDREN = {
    "benchmark": frozenset({"client_dedicated_node", "placement", "colocate_with_frontend"}),
    "frontend": frozenset({"dedicated_node", "placement"}),
    "infra": frozenset({"etcd_nats_dedicated_node"}),
}
_PLAIN_KEY = re.compile(r"( *)([A-Za-z0-9_][A-Za-z0-9_.-]*)[ \t]*:(?:[ \t]|$)", re.M)


# The newline before an unindented line: starting with a literal, the scan jumps from newline
# to newline (five times faster than ``^[^ \r\n#]`` under re.M, which tries every position).
_BEFORE_TOP_LINE = re.compile(r"\n(?=[^ \r\n#])")


def _top_line_starts(text: str) -> list[int]:
    """Where each line that starts with neither a space nor ``#`` begins."""
    first = [0] if text[:1] and text[0] not in " \r\n#" else []
    return first + [match.end() for match in _BEFORE_TOP_LINE.finditer(text)]


def _top_blocks(text: str) -> list[tuple[str, str]] | None:
    """``_blocks(text, 0)``, scanning for unindented lines with one regex (recipes are large)."""
    starts = _top_line_starts(text)
    head = text[: starts[0] if starts else len(text)]
    if not all(line.lstrip(" ").startswith("#") or not line.strip() for line in head.splitlines()):
        return None  # indented content before the first key
    blocks = []
    for index, start in enumerate(starts):
        match = _PLAIN_KEY.match(text, start)
        if match is None or match.group(1):
            return None
        blocks.append((match.group(2), text[start : starts[index + 1] if index + 1 < len(starts) else len(text)]))
    return blocks


def _blocks(text: str, indent: int) -> list[tuple[str, str]] | None:
    """(key, text) of each block-mapping entry of ``text`` at ``indent`` spaces; None when the
    lines are not plain ``key:`` entries at that indentation (then the caller parses it all)."""
    blocks: list[tuple[str, str]] = []
    key, start = None, 0
    position = 0
    for line in text.splitlines(keepends=True):
        stripped = line.lstrip(" ")
        if stripped.strip() and not stripped.startswith("#") and len(line) - len(stripped) <= indent:
            match = _PLAIN_KEY.match(line)
            if match is None or len(match.group(1)) != indent:
                return None
            if key is not None:
                blocks.append((key, text[start:position]))
            key, start = match.group(2), position
        elif key is None and stripped.strip() and not stripped.startswith("#"):
            return None  # content before the first key
        position += len(line)
    if key is not None:
        blocks.append((key, text[start:]))
    return blocks


def _child_indent(block: str) -> int | None:
    for line in block.splitlines()[1:]:
        stripped = line.lstrip(" ")
        if stripped.strip() and not stripped.startswith("#"):
            return len(line) - len(stripped)
    return None


def node_count_text(text: str) -> str | None:
    """The part of a recipe a node count reads: the top-level blocks of NODE_COUNT_KEYS (of
    some, only the children it reads) and the variant blocks (``base``, overrides) whole.

    Most of a recipe is engine configuration the count never looks at; parsing only this part
    is several times cheaper. None when the text is not a plain block mapping of plain keys
    (a document marker, a list, a quoted or complex key): then the whole file is parsed.
    """
    blocks = _top_blocks(text)
    if blocks is None:
        return None
    kept = []
    for key, block in blocks:
        if key in NODE_COUNT_CHILDREN and "\n" in block.rstrip("\n"):
            head, _, body = block.partition("\n")
            indent = _child_indent(block)
            children = _blocks(body, indent) if indent else None
            if children is None:  # not a plain mapping of plain keys (a flow mapping, a list): keep it whole
                kept.append(block)
                continue
            wanted = [child for name, child in children if name in NODE_COUNT_CHILDREN[key]]
            kept.append(head + (" {}\n" if not wanted else "\n") + "".join(wanted))
        elif key in NODE_COUNT_KEYS or _is_variant_key(key):
            kept.append(block)
    return "".join(part if part.endswith("\n") else part + "\n" for part in kept)


def recipe_for_counting(ref: RecipeRef, root: Path) -> dict:
    """The selected variant with only the blocks a node count reads; raises RecipeError.

    Through the same strict loader as the launcher's, on the node-count blocks alone; if those
    cannot be read on their own (an alias into a dropped block, an odd layout), the whole file.
    Problems outside these blocks are the launcher's to report (``load_recipe``).
    """
    path = ref.repo_path(root)
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        text = None
    part = node_count_text(text) if text is not None else None
    if part is not None:
        from .yamlio import parse_yaml  # PyYAML only when a recipe is read

        doc, problems = parse_yaml(part, str(path))
        if doc is not None and (doc.data is None or isinstance(doc.data, dict)):
            data = doc.data or {}
            # a file without variants is its own recipe; the count only reads it, so no copy
            return data if "base" not in data and not ref.selector else select_variant(data, ref.selector)
    return load_recipe(ref, root)[1]


# --- node arithmetic ---------------------------------------------------------------------


def nested(node: Any, *keys: Any) -> Any:
    """``node[k1][k2]…``, or None where a level is missing or not a mapping."""
    for key in keys:
        if not isinstance(node, dict):
            return None
        node = node.get(key)
    return node


def _dedicated_extra_nodes(recipe: dict) -> int:
    """Extra nodes the job reserves beside its workers: the infra node (etcd/nats, the Mooncake
    master), a dedicated frontend, a dedicated benchmark client.

    They share one node unless ``benchmark.colocate_with_frontend`` is false.
    """
    services = got if isinstance(got := recipe.get("services"), list) else []
    infra = nested(recipe, "infra", "etcd_nats_dedicated_node") is True or any(
        isinstance(s, dict) and nested(s, "placement", "node") == "dedicated" for s in services
    )
    frontend = (
        nested(recipe, "frontend", "dedicated_node") is True
        or nested(recipe, "frontend", "placement", "node") == "dedicated"
    )
    client = (
        nested(recipe, "benchmark", "client_dedicated_node") is True
        or nested(recipe, "benchmark", "placement", "node") == "dedicated"
    )
    wanted = sum((infra, frontend, client))
    if wanted and nested(recipe, "benchmark", "colocate_with_frontend") is not False:
        return 1
    return wanted


def _role_nodes(role_name: str, role: Any) -> int:
    if not isinstance(role, dict) or "nodes" not in role:
        raise RecipeError(
            f"role {role_name!r} must specify nodes", "Give the role `nodes: <count>` or `nodes: colocate`."
        )
    nodes = role["nodes"]
    if nodes == "colocate":
        return 0
    if isinstance(nodes, bool) or not isinstance(nodes, int) or nodes < 0:
        raise RecipeError(f"role {role_name!r} has nodes {nodes!r}; expected a count or 'colocate'")
    return nodes


def recipe_node_count(recipe: dict) -> int:
    """Total Slurm nodes a flat recipe allocates, including a dedicated infra node."""
    roles = recipe.get("roles")
    resources = got if isinstance(got := recipe.get("resources"), dict) else {}
    if isinstance(roles, dict):  # srt-slurm schema 2
        if "agg" in roles:
            serving = _role_nodes("agg", roles["agg"])
        else:
            serving = sum(_role_nodes(name, roles.get(name)) for name in ("prefill", "decode"))
    elif "agg_nodes" in resources:
        serving = int(resources["agg_nodes"])
    elif "prefill_nodes" in resources and "decode_nodes" in resources:
        serving = int(resources["prefill_nodes"]) + int(resources["decode_nodes"])
    else:
        raise RecipeError(
            "the recipe declares no node counts",
            "Schema 2 recipes give roles.<role>.nodes; v1 recipes give resources.agg_nodes or prefill_nodes + "
            "decode_nodes.",
        )
    return serving + _dedicated_extra_nodes(recipe)
