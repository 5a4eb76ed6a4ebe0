"""``node-count`` of a multinode point: num-nodes, else its recipe, else settings, else GPU math.

Reading ~250 srt-slurm recipes costs more than the rest of the matrix together, so the
count of each (recipe content, selector) is kept in a small JSON cache keyed by the
SHA-256 of the file's bytes: an edited recipe is a new key, never a stale answer.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from pathlib import Path

from ..recipes import RecipeError, RecipeRef, gpu_nodes, load_recipe, recipe_node_count, recipe_ref_of, settings_dict
from .derive import DeriveError, gpus_per_node, replica_gpus

CACHE_VERSION = 1
ROLE_NODE_SETTINGS = (("prefill", "PREFILL_NODES"), ("decode", "DECODE_NODES"))


def cache_path() -> Path | None:
    if os.environ.get("INFX_NO_CACHE"):
        return None
    base = os.environ.get("INFX_CACHE_DIR") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache"), "infx")
    return Path(base) / "recipe-node-counts.json"


class RecipeNodeCounts:
    """Node counts of recipes, remembered across runs by file content."""

    def __init__(self, root: Path):
        self.root = root
        self.path = cache_path()
        self.memory: dict[str, int | None] = {}
        self.saved: dict[str, int] = {}
        self.dirty = False
        if self.path and self.path.is_file():
            try:
                data = json.loads(self.path.read_text())
                if data.get("version") == CACHE_VERSION:
                    self.saved = dict(data.get("counts", {}))
            except (OSError, ValueError, AttributeError):
                self.saved = {}

    def count(self, ref: RecipeRef) -> int | None:
        """Nodes the recipe allocates; None when the file is absent. Raises RecipeError."""
        path = ref.repo_path(self.root)
        try:
            content = path.read_bytes()
        except OSError:
            return None
        key = f"{hashlib.sha256(content).hexdigest()}:{ref.selector or ''}"
        if key in self.saved:
            return self.saved[key]
        _, recipe = load_recipe(ref, self.root)
        nodes = recipe_node_count(recipe)
        self.saved[key] = nodes
        self.dirty = True
        return nodes

    def save(self) -> None:
        """Best effort: a cache that cannot be written only costs time."""
        if not (self.dirty and self.path):
            return
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=self.path.parent, prefix=".counts-")
            with os.fdopen(fd, "w") as handle:
                json.dump({"version": CACHE_VERSION, "counts": self.saved}, handle)
            os.replace(tmp, self.path)
            self.dirty = False
        except OSError:
            pass


def _setting_nodes(prefill: dict, decode: dict, name: str) -> int | None:
    values = settings_dict(prefill.get("additional-settings")).get(name, []) + settings_dict(
        decode.get("additional-settings")).get(name, [])
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


def node_count(search: dict, prefill: dict, decode: dict, runner: str, runners: dict,
               recipes: RecipeNodeCounts, warnings: list[str]) -> int:
    """Slurm nodes a multinode point allocates (recipes count their dedicated infra node)."""
    if "worker" in search and search.get("num-nodes"):
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
            warnings.append(f"recipe {ref.value}: {exc}; node-count falls back to settings / GPU arithmetic")
            nodes = None
        if nodes is not None:
            return nodes
    total = 0
    for role, setting in ROLE_NODE_SETTINGS:
        worker = prefill if role == "prefill" else decode
        explicit = _setting_nodes(prefill, decode, setting)
        if explicit is not None:
            total += explicit
        elif worker.get("num-worker", 0) > 0:
            label = worker.get("hardware") or runner
            total += gpu_nodes(worker["num-worker"], replica_gpus(worker), gpus_per_node(runners, label))
    return total
