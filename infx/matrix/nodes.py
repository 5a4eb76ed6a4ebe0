"""``node-count`` of a multinode point: num-nodes, else its recipe, else settings, else GPU math.

Reading ~250 srt-slurm recipes costs more than the rest of the matrix together, so the
count of each (recipe file, selector) is kept in a small JSON cache keyed by the file's
path, size and modification time (nanoseconds): an edited or checked-out recipe gets a
new key. The whole cache belongs to one version of the counting code (a digest of
infx/recipes.py and the YAML reader it uses): changed code counts afresh.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

from .. import recipes as _recipes
from ..diskcache import read_cached, write_cached
from ..recipes import RecipeError, RecipeRef, recipe_for_counting, recipe_node_count, recipe_ref_of
from ..workers import gpu_nodes, replica_gpus, settings_dict
from .derive import DeriveError

CACHE_FILE = "recipe-node-counts-v3.json"  # {"code": digest of the counting code, "counts": {key: count}}
CACHE_ENTRIES = 4096  # the newest entries kept: a few checkouts of ~500 recipes
# The modules whose behaviour decides a count, by file: a count from the cache imports neither's
# dependencies (the YAML reader's PyYAML).
COUNTING_CODE = (Path(_recipes.__file__), Path(_recipes.__file__).with_name("yamlio.py"))


def counting_code_digest() -> str:
    digest = hashlib.sha256()
    for source in COUNTING_CODE:
        digest.update(source.read_bytes())
    return digest.hexdigest()[:16]


class RecipeNodeCounts:
    """Node counts of recipes, remembered across runs by file path, size, mtime and selector
    for one version of the counting code."""

    def __init__(self, root: Path):
        self.root = root
        self.saved: dict[str, int | str] = {}  # key -> node count, or the RecipeError message
        self.dirty = False
        self.code = counting_code_digest()
        try:
            saved = json.loads(read_cached(CACHE_FILE) or b"{}")
        except ValueError:
            saved = None
        if isinstance(saved, dict) and saved.get("code") == self.code and isinstance(saved.get("counts"), dict):
            self.saved = saved["counts"]

    def count(self, ref: RecipeRef) -> int | None:
        """Nodes the recipe allocates; None when the file is absent. Raises RecipeError."""
        path = ref.repo_path(self.root)
        try:
            stat = path.stat()
        except OSError:
            return None
        key = f"{os.path.abspath(path)}:{stat.st_size}:{stat.st_mtime_ns}:{ref.selector or ''}"
        if key not in self.saved:
            try:
                self.saved[key] = recipe_node_count(recipe_for_counting(ref, self.root))
            except (RecipeError, ValueError, TypeError) as exc:  # odd node fields are ValueError/TypeError
                self.saved[key] = str(exc)
            self.dirty = True
        result = self.saved[key]
        if isinstance(result, str):
            raise RecipeError(result)
        return result

    def save(self) -> None:
        if self.dirty:
            newest = dict(list(self.saved.items())[-CACHE_ENTRIES:])
            write_cached(CACHE_FILE, json.dumps({"code": self.code, "counts": newest}, allow_nan=False).encode())
            self.dirty = False


def _setting_nodes(prefill: dict, decode: dict, name: str) -> int | None:
    values = settings_dict(prefill.get("additional-settings")).get(name, []) + settings_dict(
        decode.get("additional-settings")
    ).get(name, [])
    distinct = set(values)
    if not distinct:
        return None
    if len(distinct) > 1 or not next(iter(distinct)).isdigit() or int(next(iter(distinct))) <= 0:
        raise DeriveError(
            f"{name} is set to {sorted(distinct)}; expected one positive integer",
            f"Write {name}=<nodes> once.",
            ("prefill", "additional-settings"),
        )
    return int(next(iter(distinct)))


def node_count(
    search: dict,
    prefill: dict,
    decode: dict,
    runner: str,
    gpus_per_node,
    recipes: RecipeNodeCounts,
    warnings: list[str],
) -> int:
    """Slurm nodes a multinode point allocates (recipes count their dedicated infra node)."""
    if search.get("num-nodes"):  # an aggregated worker: entry states its nodes
        return int(search["num-nodes"])
    try:
        ref = recipe_ref_of(prefill, decode)
    except RecipeError as exc:
        raise DeriveError(str(exc), exc.hint, ("prefill", "additional-settings")) from None
    if ref is not None:
        try:
            nodes = recipes.count(ref)
        except RecipeError as exc:
            # The launcher refuses this recipe loudly; the matrix only needs a node estimate.
            warnings.append(f"node-count for CONFIG_FILE={ref.value} falls back to settings / GPU arithmetic: {exc}")
            nodes = None
        if nodes is not None:
            return nodes
    total = 0
    for worker, setting in ((prefill, "PREFILL_NODES"), (decode, "DECODE_NODES")):
        explicit = _setting_nodes(prefill, decode, setting)
        if explicit is not None:
            total += explicit
        elif worker.get("num-worker", 0) > 0:
            label = worker.get("hardware") or runner
            total += gpu_nodes(worker["num-worker"], replica_gpus(worker), gpus_per_node(label))
    if total < 1:
        raise DeriveError(
            "cannot derive node-count: no recipe, no PREFILL_NODES/DECODE_NODES and no workers",
            "Give the workers num-worker ≥ 1, or name a recipe with CONFIG_FILE=.",
        )
    return total
