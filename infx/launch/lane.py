"""The lane profile (``runners/<lane>.yaml``): cluster facts and routes as validated data."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from ..diagnostics import Diagnostic, InfxError, UsageError, error
from ..yamlio import Document, load_yaml
from .prepare import template_problems

SCHEMA_PATH = Path(__file__).resolve().parent.parent / "schemas" / "lane.schema.json"
LANES_DIR = "runners"


@dataclass(frozen=True)
class Pin:
    """One immutable checkout: a repository at a full commit SHA (``commit`` None = unresolved)."""

    name: str
    repository: str
    commit: str | None
    ref: str = ""

    def to_json(self) -> dict:
        return {"pin": self.name, "repository": self.repository, "ref": self.ref, "commit": self.commit}


@dataclass(frozen=True)
class Source:
    """An external tree a launch may need, fetched only when a route or recipe names it."""

    name: str
    url: str
    commit: str
    dest: str  # relative to the srt-slurm checkout

    def to_json(self) -> dict:
        return asdict(self)


@dataclass(frozen=True)
class Route:
    name: str
    match: dict
    srt_slurm: str
    overlays: tuple[tuple[str, str], ...] = ()
    srt_slurm_recipes: tuple[str, ...] = ()
    srtctl_flags: tuple[str, ...] = ()
    time_limit: str | None = None
    sources: tuple[str, ...] = ()
    index: int = 0  # position in the profile, for locating diagnostics only


@dataclass
class Lane:
    name: str
    file: str
    doc: Document
    data: dict
    routes: list[Route]
    pins: dict[str, Pin]
    sources: dict[str, Source]
    rules: dict = field(default_factory=dict)

    @property
    def slurm(self) -> dict:
        return self.data["slurm"]

    @property
    def gpus_per_node(self) -> int:
        return int(self.slurm["gpus-per-node"])

    @property
    def models(self) -> list[dict]:
        return self.data.get("models", [])

    @property
    def prepare(self) -> dict:
        return self.data.get("prepare") or {}

    @property
    def container_aliases(self) -> list[str]:
        return list(self.data.get("container-aliases", []))

    def where(self, *path: Any) -> tuple[int, int]:
        return self.doc.where(path)

    def route_where(self, route: Route) -> tuple[int, int]:
        return self.where("routes", route.index)


def lane_path(name_or_path: str, root: Path) -> Path:
    """``gb300-nv`` -> ``<root>/runners/gb300-nv.yaml``; a path to a .yaml file is used as given."""
    if name_or_path.endswith((".yaml", ".yml")) or "/" in name_or_path:
        return Path(name_or_path)
    return root / LANES_DIR / f"{name_or_path}.yaml"


def lane_from_runner_name(runner_name: str) -> str:
    """``gb300-nv_1`` -> ``gb300-nv`` (the prefix before the last underscore)."""
    head, sep, _ = runner_name.rpartition("_")
    return head if sep else runner_name


def _schema_diagnostics(doc: Document) -> list[Diagnostic]:
    from ..schema import schema_diagnostics  # the one validation path for infx's schemas

    return schema_diagnostics("lane", doc, doc.data, root_label="(top level)", rule="lane-schema",
                              hint="See infx/schemas/lane.schema.json and docs/launch.md for the accepted keys.")


def _cross_checks(lane: Lane) -> list[Diagnostic]:
    """Rules the schema cannot say: references resolve, names and route keys are unique."""
    diagnostics = []
    seen_names: dict[str, int] = {}
    seen_keys: dict[tuple, str] = {}
    for route in lane.routes:
        where = lane.route_where(route)
        if route.name in seen_names:
            diagnostics.append(error(lane.file, where, "lane-route-duplicate", f"route name {route.name!r} is used twice",
                                     "Give every route a unique name."))
        seen_names[route.name] = route.index
        key = tuple(sorted(route.match.items()))
        if key in seen_keys:
            diagnostics.append(error(lane.file, where, "lane-route-ambiguous",
                                     f"routes {seen_keys[key]!r} and {route.name!r} match exactly the same points",
                                     "Merge them, or make one more specific (add precision or power)."))
        seen_keys[key] = route.name
        if route.srt_slurm not in lane.pins:
            diagnostics.append(error(lane.file, lane.where("routes", route.index, "srt-slurm"), "lane-unknown-pin",
                                     f"route {route.name!r} names srt-slurm pin {route.srt_slurm!r}, which srt-slurm.pins does not define",
                                     f"Use one of: {', '.join(sorted(lane.pins))}."))
        for name in route.sources:
            if name not in lane.sources:
                diagnostics.append(error(lane.file, lane.where("routes", route.index, "sources"), "lane-unknown-source",
                                         f"route {route.name!r} names source {name!r}, which sources: does not define",
                                         f"Define it under sources:, or use one of: {', '.join(sorted(lane.sources)) or '(none)'}."))
    diagnostics.extend(template_problems(lane.prepare, lane.file, lane.where))
    return diagnostics


def load_lane(name_or_path: str, root: Path) -> Lane:
    """Load and validate a lane profile; a missing file is a usage error (exit 2), a bad one exit 1."""
    path = lane_path(name_or_path, root)
    if not path.is_file():
        raise UsageError(f"no lane profile at {path}", f"Create {LANES_DIR}/<lane>.yaml, or pass --lane with an existing lane name.",
                         file=str(path))
    doc, problems = load_yaml(path, display=str(path))
    if problems:
        raise InfxError(problems)
    diagnostics = _schema_diagnostics(doc)
    if diagnostics:
        raise InfxError(diagnostics)
    data = doc.data
    pins = {name: Pin(name, spec["repository"], spec["commit"], spec.get("ref", "")) for name, spec in data["srt-slurm"]["pins"].items()}
    sources = {name: Source(name, spec["url"], spec["commit"], spec["dest"]) for name, spec in (data.get("sources") or {}).items()}
    routes = [
        Route(
            name=spec["name"],
            match=dict(spec["match"]),
            srt_slurm=spec["srt-slurm"],
            overlays=tuple((o["from"], o["to"]) for o in spec.get("overlays", [])),
            srt_slurm_recipes=tuple(spec.get("srt-slurm-recipes", [])),
            srtctl_flags=tuple(spec.get("srtctl-flags", [])),
            time_limit=spec.get("time-limit"),
            sources=tuple(spec.get("sources", [])),
            index=index,
        )
        for index, spec in enumerate(data["routes"])
    ]
    lane = Lane(data["lane"], str(path), doc, data, routes, pins, sources, data.get("rules") or {})
    diagnostics = _cross_checks(lane)
    if diagnostics:
        raise InfxError(diagnostics)
    return lane
