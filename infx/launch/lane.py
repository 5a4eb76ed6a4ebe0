"""The lane profile (``runners/<lane>.yaml``): cluster facts and routes as validated data."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, ClassVar

from .. import shapes
from ..config import DEFAULT_RUNNERS
from ..diagnostics import EXIT_USAGE, Diagnostic, InfxError, Report, UsageError, error
from ..evalsuite import load_suite
from ..records import Record, each, read_as, strings
from ..reporoot import shown_path
from ..schema import is_valid, schema_diagnostics
from ..suggest import did_you_mean
from ..yamlio import Document, load_yaml
from .prepare import template_problems
from .slurm import DEFAULT_TIMEOUT, PartitionHealth, Slurm

SRTCTL = "srtctl"  # the lane kind that submits with srtctl apply on Slurm: today every lane's

LANES_DIR = "runners"


# --- the profile's sections, typed --------------------------------------------------------
# Each section is a frozen record (infx/records.py) read once, after schema validation: its
# attribute names are the schema's property names at its POINTER in infx/schemas/lane.schema.json
# with ``_`` for ``-``, and a key the profile leaves out takes the field's default, stated here once.


class _LaneRecord(Record):
    """A section of the profile: its fields are lane.schema.json's at POINTER."""

    SCHEMA: ClassVar[str] = "lane"


def _indexed(cls: type[_LaneRecord]) -> Callable[[Any], Any]:
    """A list of sections, each with its position (``index``)."""
    return lambda items: tuple(cls.from_data(item, index=index) for index, item in enumerate(items))


@dataclass(frozen=True, kw_only=True)
class SlurmSettings(_LaneRecord):
    """``slurm:``, the lane's partition and how infx talks to its controller."""

    POINTER: ClassVar[str] = "properties/slurm"

    partition: str
    gpus_per_node: int = read_as(int)
    default_time_limit: str
    partition_setting: str = ""  # a KEY=VALUE setting of the point that picks the partition instead
    account: str = ""  # "" = the cluster's default account
    poll_seconds: float = read_as(float, default=10.0)  # between job state queries
    command_timeout_seconds: float = read_as(float, default=DEFAULT_TIMEOUT)  # per Slurm command
    # on top of the job's time limit: queue wait, start-up, log collection
    deadline_margin_seconds: float = read_as(float, default=3600.0)


@dataclass(frozen=True)
class Pin(_LaneRecord):
    """One immutable checkout: a repository at a full commit SHA (``commit`` None = unresolved)."""

    POINTER: ClassVar[str] = "properties/srt-slurm/properties/pins/additionalProperties"
    NOT_IN_SCHEMA: ClassVar[frozenset[str]] = frozenset({"name"})

    name: str
    repository: str
    commit: str | None
    ref: str = ""

    def to_json(self) -> dict:
        return {"pin": self.name, "repository": self.repository, "ref": self.ref, "commit": self.commit}


def _pins(data: Mapping[str, Any]) -> dict[str, Pin]:
    return {name: Pin.from_data(spec, name=name) for name, spec in data.items()}


@dataclass(frozen=True)
class SrtSlurmSettings(_LaneRecord):
    """``srt-slurm:``, the pinned srt-slurm checkouts and how srtctl is installed from them."""

    POINTER: ClassVar[str] = "properties/srt-slurm"

    pins: dict[str, Pin] = read_as(_pins)
    pip_args: tuple[str, ...] = read_as(strings, default=())


@dataclass(frozen=True)
class Source(_LaneRecord):
    """An external tree a launch may need, fetched only when a route or recipe names it."""

    POINTER: ClassVar[str] = "$defs/source"
    NOT_IN_SCHEMA: ClassVar[frozenset[str]] = frozenset({"name"})

    name: str
    url: str
    commit: str
    dest: str  # relative to the srt-slurm checkout

    def to_json(self) -> dict:
        return asdict(self)


def _sources(data: Mapping[str, Any]) -> dict[str, Source]:
    return {name: Source.from_data(spec, name=name) for name, spec in data.items()}


@dataclass(frozen=True)
class EvalSettings(_LaneRecord):
    """``evals:``, the eval suite this lane's eval points run."""

    POINTER: ClassVar[str] = "properties/evals"

    suite: str


@dataclass(frozen=True)
class QueueSettings(_LaneRecord):
    """``queue:``, what the plan's queue check counts per point besides its benchmark time."""

    POINTER: ClassVar[str] = "properties/queue"

    point_overhead_minutes: float = read_as(float, default=0.0)


@dataclass(frozen=True)
class PrepareImage(_LaneRecord):
    POINTER: ClassVar[str] = "properties/prepare/properties/images/items"

    image: str
    alias: str = ""


@dataclass(frozen=True)
class PrepareSettings(_LaneRecord):
    """``prepare:``, the argv templates run after checkout and before submit (launch/prepare.py)."""

    POINTER: ClassVar[str] = "properties/prepare"

    images: tuple[PrepareImage, ...] = read_as(each(PrepareImage), default=())
    squash_check: tuple[str, ...] = read_as(strings, default=())
    squash_import: tuple[str, ...] = read_as(strings, default=())
    setup: tuple[str, ...] = read_as(strings, default=())


@dataclass(frozen=True)
class ModelEntry(_LaneRecord):
    """One ``models:`` entry: the weights (alias -> path) for the points its ``match`` selects."""

    POINTER: ClassVar[str] = "properties/models/items"

    match: dict
    alias: str
    path: str


@dataclass(frozen=True)
class StoreClientEnvRule(_LaneRecord):
    POINTER: ClassVar[str] = "properties/rules/properties/store-client-env"

    when_service_type: str
    env: tuple[str, ...] = read_as(strings)
    roles: tuple[str, ...] = read_as(strings, default=())
    service_types: tuple[str, ...] = read_as(strings, default=())


@dataclass(frozen=True)
class DistinctServicePortsRule(_LaneRecord):
    POINTER: ClassVar[str] = "properties/rules/properties/distinct-service-ports"

    service_types: tuple[str, ...] = read_as(strings)


@dataclass(frozen=True)
class LaneRules(_LaneRecord):
    """``rules:``, the lane's own recipe checks (launch/checks.py); None = the rule is off."""

    POINTER: ClassVar[str] = "properties/rules"

    store_client_env: StoreClientEnvRule | None = read_as(StoreClientEnvRule.from_data, default=None)
    distinct_service_ports: DistinctServicePortsRule | None = read_as(DistinctServicePortsRule.from_data, default=None)
    power_frameworks: tuple[str, ...] | None = read_as(strings, default=None)


def _overlays(items: list[dict]) -> tuple[tuple[str, str], ...]:
    return tuple((item["from"], item["to"]) for item in items)


@dataclass(frozen=True, kw_only=True)
class Route(_LaneRecord):
    POINTER: ClassVar[str] = "properties/routes/items"
    NOT_IN_SCHEMA: ClassVar[frozenset[str]] = frozenset({"index"})

    name: str
    match: dict = read_as(dict)
    srt_slurm: str
    overlays: tuple[tuple[str, str], ...] = read_as(_overlays, default=())  # (from, to)
    srt_slurm_recipes: tuple[str, ...] = read_as(strings, default=())
    srtctl_flags: tuple[str, ...] = read_as(strings, default=())
    time_limit: str | None = None
    sources: tuple[str, ...] = read_as(strings, default=())
    index: int = 0  # position in the profile, for locating diagnostics only


@dataclass(frozen=True)
class Lane(_LaneRecord):
    """A validated lane profile. Attributes are the schema's top-level properties (``lane`` is
    ``name``), plus where the profile was read from."""

    POINTER: ClassVar[str] = ""
    NOT_IN_SCHEMA: ClassVar[frozenset[str]] = frozenset({"file", "doc"})
    RENAMED: ClassVar[dict[str, str]] = {"lane": "name"}  # a Lane's `lane` is its name

    name: str
    file: str
    doc: Document = field(compare=False, repr=False)
    runner_labels: tuple[str, ...] = read_as(strings)
    slurm: SlurmSettings = read_as(SlurmSettings.from_data)
    srt_slurm: SrtSlurmSettings = read_as(SrtSlurmSettings.from_data)
    routes: tuple[Route, ...] = read_as(_indexed(Route))
    models: tuple[ModelEntry, ...] = read_as(each(ModelEntry), default=())
    container_mounts: Mapping[str, str] = read_as(dict, default_factory=dict)  # in the profile's order
    squash_dir: str = ""
    evals: EvalSettings | None = read_as(EvalSettings.from_data, default=None)
    queue: QueueSettings = read_as(QueueSettings.from_data, default=QueueSettings())
    # the url schemes git may use for this lane's checkouts
    git_protocols: tuple[str, ...] = read_as(strings, default=shapes.DEFAULT_GIT_PROTOCOLS)
    container_aliases: tuple[str, ...] = read_as(strings, default=())
    prepare: PrepareSettings = read_as(PrepareSettings.from_data, default=PrepareSettings())
    sources: Mapping[str, Source] = read_as(_sources, default_factory=dict)
    rules: LaneRules = read_as(LaneRules.from_data, default=LaneRules())

    @property
    def pins(self) -> dict[str, Pin]:
        return self.srt_slurm.pins

    @property
    def kind(self) -> str:
        """How this lane runs a point: the key of its planner (plan.PLANNERS) and launcher (run.LAUNCHERS).
        Every lane is of the srtctl kind until the profile names one."""
        return SRTCTL

    @property
    def gpus_per_node(self) -> int:
        return self.slurm.gpus_per_node

    def where(self, *path: Any) -> tuple[int, int]:
        return self.doc.where(path)

    def route_where(self, route: Route) -> tuple[int, int]:
        return self.where("routes", route.index)


def read_lane(doc: Document) -> Lane:
    """The typed profile from its schema-valid document (the one place its keys are read)."""
    return Lane.from_data(doc.data, file=doc.file, doc=doc)


# A lane name is a file name under runners/: no separators, no leading dot or dash.
_LANE_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")


@dataclass(frozen=True)
class LaneEntry:
    """One profile as the resolver sees it: its name (the file stem), labels and parsed document.

    Built from the YAML alone, without the schema, so resolving a label costs a parse per
    profile, not a validation (the chosen profile is validated when it is loaded)."""

    name: str
    path: Path
    labels: tuple[str, ...]
    doc: Document | None
    problems: tuple[Diagnostic, ...] = ()

    def label_where(self, label: str) -> tuple[int, int] | None:
        if self.doc is None:
            return None
        raw = self.doc.data.get("runner-labels") if isinstance(self.doc.data, dict) else None
        index = raw.index(label) if isinstance(raw, list) and label in raw else None
        return self.doc.where(("runner-labels",) if index is None else ("runner-labels", index))

    def typed(self) -> Lane | None:
        """The typed profile when its document is schema-valid, else None (`infx lane validate` says why)."""
        return read_lane(self.doc) if self.doc is not None and is_valid("lane", self.doc.data) else None


def display_path(path: Path) -> str:
    """How diagnostics name a profile (infx.reporoot.shown_path)."""
    return str(shown_path(path))


def read_entry(path: Path) -> LaneEntry:
    doc, problems = load_yaml(path, display=display_path(path))
    data = doc.data if doc is not None else None
    raw = data.get("runner-labels") if isinstance(data, dict) else None
    labels = tuple(label for label in raw if isinstance(label, str)) if isinstance(raw, list) else ()
    return LaneEntry(path.stem, path, labels, doc, tuple(problems))


def lane_entries(root: Path) -> list[LaneEntry]:
    """Every ``runners/*.yaml`` profile of the repository, by file name."""
    return [read_entry(path) for path in sorted((root / LANES_DIR).glob("*.yaml"))]


def label_claims(entries: list[LaneEntry]) -> dict[str, list[LaneEntry]]:
    """runner label -> the profiles that declare it (more than one is an error in the profiles)."""
    claims: dict[str, list[LaneEntry]] = {}
    for entry in entries:
        for label in dict.fromkeys(entry.labels):
            claims.setdefault(label, []).append(entry)
    return claims


def duplicate_label_diagnostics(
    entries: list[LaneEntry], concerning: list[LaneEntry] | None = None
) -> list[Diagnostic]:
    """One located error per declaration of a label that two or more profiles declare (only
    labels one of ``concerning`` declares, when given)."""
    diagnostics = []
    wanted = None if concerning is None else {entry.path.resolve() for entry in concerning}
    for label, owners in label_claims(entries).items():
        if len(owners) > 1 and (wanted is None or any(owner.path.resolve() in wanted for owner in owners)):
            for entry in owners:
                others = ", ".join(display_path(other.path) for other in owners if other is not entry)
                diagnostics.append(
                    error(
                        display_path(entry.path),
                        entry.label_where(label),
                        "lane-label-duplicate",
                        f"runner label {label!r} is declared by this profile and by {others}",
                        "A runner label must name exactly one lane: keep it in one profile's runner-labels.",
                    )
                )
    return diagnostics


def _lanes_and_labels(entries: list[LaneEntry]) -> str:
    return (
        "\n".join(f"{entry.name}: {', '.join(entry.labels) or '(no runner-labels)'}" for entry in entries)
        or f"(none: {LANES_DIR}/ has no *.yaml profile)"
    )


def lane_for_label(
    label: str,
    root: Path,
    at: tuple[str, tuple[int, int] | None] = ("<command line>", None),
    unknown: str = "runner label {label!r} names no lane: no {lanes}/*.yaml declares it in runner-labels",
) -> Path:
    """The profile whose ``runner-labels`` declare ``label``; exit 2 when none (located ``at``
    the label's origin: the command line or the point's ``runner``), exit 1 when two do."""
    entries = lane_entries(root)
    owners = label_claims(entries).get(label, [])
    if len(owners) > 1:
        raise InfxError(duplicate_label_diagnostics(owners))
    if owners:
        return owners[0].path
    broken = [problem for entry in entries for problem in entry.problems]
    if broken:  # the label may be declared in a profile that cannot be read
        raise InfxError(broken)
    all_labels = [name for entry in entries for name in (entry.name, *entry.labels)]
    if label in (runner_labels(root) or {}):  # a real label, not a typo: what is missing is its lane
        found, fix = (
            f"; {label!r} is a label of {DEFAULT_RUNNERS}, but no lane profile serves it",
            f"Add a lane profile {LANES_DIR}/<lane>.yaml with {label!r} in its runner-labels (`infx init --lane NAME` "
            "writes a skeleton; `infx plan` holds such points: plan-lane-missing)",
        )
    else:
        found, fix = did_you_mean(label, all_labels), "Add the label to a profile's runner-labels"
    raise InfxError(
        error(
            at[0],
            at[1],
            "lane-unknown-label",
            unknown.format(label=label, lanes=LANES_DIR) + found,
            f"Lanes and their runner labels:\n{_lanes_and_labels(entries)}\n"
            f"{fix}, or pass --lane with a lane name, a label or a profile path.",
        ),
        exit_code=EXIT_USAGE,
    )


def find_lane(
    root: Path,
    selector: str | None = None,
    runner: object = None,
    runner_at: tuple[str, tuple[int, int] | None] = ("<point>", None),
) -> Path:
    """The one lane-resolution rule: the profile path for an explicit ``selector`` (``--lane``:
    a lane name, a profile path, or any runner label a profile declares), else for the point's
    ``runner`` label (found ``runner_at``) through the profiles' ``runner-labels``."""
    if selector:
        if _LANE_NAME.match(selector) and (root / LANES_DIR / f"{selector}.yaml").is_file():
            return root / LANES_DIR / f"{selector}.yaml"
        looks_like_path = selector.endswith((".yaml", ".yml")) or "/" in selector
        if looks_like_path and Path(selector).is_file():
            return Path(selector)
        if looks_like_path:
            raise UsageError(
                f"no lane profile at {selector}",
                "Pass an existing profile path, a lane name or a runner label.",
                file=selector,
            )
        return lane_for_label(
            selector,
            root,
            unknown="--lane {label!r} names no lane: there is no {lanes}/{label}.yaml, "
            "and no {lanes}/*.yaml declares it in runner-labels",
        )
    if not isinstance(runner, str) or not runner:
        raise InfxError(
            error(
                runner_at[0],
                runner_at[1],
                "lane-unknown-label",
                "the point has no runner label to find its lane by",
                "A matrix row carries `runner`; or pass --lane with a lane name, a runner label or a profile path.",
            ),
            exit_code=EXIT_USAGE,
        )
    return lane_for_label(runner, root, runner_at)


SCHEMA_HINT = "`infx config shipped lane.schema.json` prints the accepted keys (docs/launch.md explains them)."
# Hints for schema errors under a path prefix: (key, key, None = any key, ...) -> hint
SCHEMA_HINTS = {
    ("srt-slurm", "pins", None, "repository"): "A pin's repository is a git url: https://<host>/<path> "
    "(file:///<path> only where the lane's git-protocols lists file).",
    (
        "srt-slurm",
        "pins",
        None,
    ): "Every pin records the full 40-hex commit its ref pointed at when the route was validated: "
    "run `infx lane pins LANE --update` to resolve it (git ls-remote), or write the SHA by hand.",
}


def _schema_hint(path: tuple) -> str:
    for prefix, hint in SCHEMA_HINTS.items():
        if len(path) >= len(prefix) and all(key is None or key == part for key, part in zip(prefix, path)):
            return hint
    return SCHEMA_HINT


PLACEHOLDER = "<FILL IN"  # how `infx init`'s lane skeleton marks a fact still to fill in ("<FILL IN: …>")


def _placeholders(node: object, path: tuple = ()) -> list[tuple[tuple, str]]:
    """Every string value of ``node`` still holding a placeholder, with its path (the loader bounds the nesting)."""
    if isinstance(node, dict):
        return [found for key, value in node.items() for found in _placeholders(value, (*path, key))]
    if isinstance(node, list):
        return [found for index, value in enumerate(node) for found in _placeholders(value, (*path, index))]
    return [(path, node)] if isinstance(node, str) and PLACEHOLDER in node else []


def _schema_diagnostics(doc: Document) -> list[Diagnostic]:
    """The placeholders left, each located, then the schema's errors elsewhere (a placeholder is also
    of the wrong type: it is reported once, as what it is)."""
    placeholders = [
        error(
            doc.file,
            doc.where(path),
            "lane-placeholder",
            f"{'.'.join(map(str, path)) or '(top level)'} is still the skeleton's placeholder {value[:160]!r}",
            "Replace it with this cluster's fact, the one the placeholder names (`infx init` wrote it to fill in).",
        )
        for path, value in _placeholders(doc.data)
    ]
    located = {(problem.line, problem.column) for problem in placeholders}
    problems = schema_diagnostics(
        "lane", doc, doc.data, root_label="(top level)", rule="lane-schema", hint=_schema_hint
    )
    return placeholders + [problem for problem in problems if (problem.line, problem.column) not in located]


def _cross_checks(lane: Lane) -> list[Diagnostic]:
    """Rules the schema cannot say: references resolve, names and route keys are unique."""
    diagnostics = []
    seen_names: dict[str, int] = {}
    seen_keys: dict[tuple, str] = {}
    for route in lane.routes:
        where = lane.route_where(route)
        if route.name in seen_names:
            diagnostics.append(
                error(
                    lane.file,
                    where,
                    "lane-route-duplicate",
                    f"route name {route.name!r} is used twice",
                    "Give every route a unique name.",
                )
            )
        seen_names[route.name] = route.index
        key = tuple(sorted(route.match.items()))
        if key in seen_keys:
            diagnostics.append(
                error(
                    lane.file,
                    where,
                    "lane-route-ambiguous",
                    f"routes {seen_keys[key]!r} and {route.name!r} match exactly the same points",
                    "Merge them, or make one more specific (add precision or power).",
                )
            )
        seen_keys[key] = route.name
        if route.srt_slurm not in lane.pins:
            diagnostics.append(
                error(
                    lane.file,
                    lane.where("routes", route.index, "srt-slurm"),
                    "lane-unknown-pin",
                    f"route {route.name!r} names srt-slurm pin {route.srt_slurm!r}, which srt-slurm.pins does not "
                    "define",
                    f"Use one of: {', '.join(sorted(lane.pins))}.",
                )
            )
        for name in route.sources:
            if name not in lane.sources:
                diagnostics.append(
                    error(
                        lane.file,
                        lane.where("routes", route.index, "sources"),
                        "lane-unknown-source",
                        f"route {route.name!r} names source {name!r}, which sources: does not define",
                        f"Define it under sources:, or use one of: {', '.join(sorted(lane.sources)) or '(none)'}.",
                    )
                )
    urls: list[tuple[tuple[str, ...], str, str]]
    urls = [
        (("srt-slurm", "pins", pin.name, "repository"), pin.repository, f"srt-slurm pin {pin.name}")
        for pin in lane.pins.values()
    ]
    urls += [(("sources", source.name, "url"), source.url, f"source {source.name}") for source in lane.sources.values()]
    for path, url, what in urls:
        problem = shapes.url_problem(url, lane.git_protocols, what)
        if problem:
            diagnostics.append(
                error(
                    lane.file,
                    lane.where(*path),
                    "lane-git-protocol",
                    problem,
                    "Use an https:// url, or list the scheme under git-protocols: (file is meant for tests).",
                )
            )
    diagnostics.extend(template_problems(lane.prepare, lane.file, lane.where))
    return diagnostics


def load_lane(selector: str, root: Path) -> Lane:
    """Find (``find_lane``) and load a lane profile: a lane name, a runner label or a path."""
    return load_lane_file(find_lane(root, selector=selector))


def load_lane_file(path: Path) -> Lane:
    """Load and validate one profile; a missing file is a usage error (exit 2), a bad one exit 1."""
    if not path.is_file():
        raise UsageError(
            f"no lane profile at {path}",
            f"Create {LANES_DIR}/<lane>.yaml, or pass --lane with an existing lane name.",
            file=str(path),
        )
    doc, problems = load_yaml(path, display=display_path(path))
    if doc is None:
        raise InfxError(problems)
    diagnostics = _schema_diagnostics(doc)
    if diagnostics:
        raise InfxError(diagnostics)
    lane = read_lane(doc)
    diagnostics = _cross_checks(lane)
    if diagnostics:
        raise InfxError(diagnostics)
    return lane


@dataclass(frozen=True, kw_only=True)
class LaneCheckRequest:
    """``infx lane check``: the lane (a lane name, a runner label or a profile path) of the repository at ``root``."""

    lane: str
    root: Path


@dataclass(frozen=True)
class LaneCheck:
    lane: str
    health: PartitionHealth

    @property
    def ok(self) -> bool:
        return self.health.ok

    def to_json(self) -> dict:
        return {"ok": self.health.ok, "lane": self.lane, **self.health.to_json()}

    def text(self) -> str:
        return f"lane {self.lane}: partition {self.health.partition}: {self.health.summary()}"


def check_lane(request: LaneCheckRequest) -> LaneCheck:
    """Does the lane's Slurm partition have usable nodes (asked with the lane's command timeout)?"""
    profile = load_lane(request.lane, request.root)
    return LaneCheck(profile.name, Slurm.for_lane(profile.slurm).partition_health(profile.slurm.partition))


@dataclass(frozen=True, kw_only=True)
class ValidateRequest:
    """``infx lane validate``: the profiles named (lane names, runner labels or paths; none = every
    ``runners/*.yaml``) of the repository at ``root``."""

    selectors: tuple[str, ...]
    root: Path


def validate_lanes(request: ValidateRequest) -> Report:
    """Each named profile (default: every ``runners/*.yaml``) against the schema and the
    cross-checks, plus the rules over the set: a label names one lane, and a profile under
    ``runners/`` is named after its file."""
    selectors, root = request.selectors, request.root
    entries = lane_entries(root)
    paths = (
        [find_lane(root, selector=selector) for selector in selectors]
        if selectors
        else [entry.path for entry in entries]
    )
    report = Report()
    for path in dict.fromkeys(paths):
        try:
            lane = load_lane_file(path)
        except InfxError as exc:
            report.extend(exc.diagnostics)
            continue
        if lane.evals:  # the suite an eval point of this lane would run, with its harness and task files
            report.extend(load_suite(root, lane.evals.suite)[1])
    # The set rules concern the profiles the resolver sees (runners/*.yaml); a profile
    # elsewhere (a candidate, a test copy) is validated on its own.
    known = {entry.path.resolve(): entry for entry in entries}
    named = [known[path.resolve()] for path in dict.fromkeys(paths) if path.resolve() in known]
    report.extend(duplicate_label_diagnostics(entries, concerning=named))
    report.extend(_undeclared_labels(named, root))
    for entry in named:
        data = entry.doc.data if entry.doc is not None else None
        declared = data.get("lane") if isinstance(data, dict) else None
        if isinstance(declared, str) and declared != entry.name and entry.doc is not None:  # declared: the doc's
            report.add(
                error(
                    display_path(entry.path),
                    entry.doc.where(("lane",)),
                    "lane-name-mismatch",
                    f"the profile says lane: {declared}, but its file name makes it lane {entry.name}",
                    f"A lane is named after its file: rename the file to {LANES_DIR}/{declared}.yaml or set lane: "
                    f"{entry.name}.",
                )
            )
    return report


def _undeclared_labels(entries: list[LaneEntry], root: Path) -> list[Diagnostic]:
    """A runner label configs/runners.yaml does not declare can never be a point's runner: the
    lane would silently serve nothing under that name (a typo, usually)."""
    labels = runner_labels(root)
    if labels is None:  # no usable runners.yaml: `infx config validate` reports that
        return []
    return [
        error(
            display_path(entry.path),
            entry.label_where(label),
            "lane-label-undeclared",
            f"runner label {label!r} is not a label of {DEFAULT_RUNNERS}, so no point can name "
            f"it{did_you_mean(label, labels)}",
            f"Use a label {DEFAULT_RUNNERS} declares, or add it there first.",
        )
        for entry in entries
        for label in entry.labels
        if label not in labels and PLACEHOLDER not in label  # a placeholder is reported as one (lane-placeholder)
    ]


def runner_labels(root: Path) -> dict | None:
    """The labels of the repository's configs/runners.yaml (label -> its runners); None without a usable one."""
    runners, _ = load_yaml(root / DEFAULT_RUNNERS, display=DEFAULT_RUNNERS)
    labels = runners.data.get("labels") if runners is not None and isinstance(runners.data, dict) else None
    return labels if isinstance(labels, dict) else None
