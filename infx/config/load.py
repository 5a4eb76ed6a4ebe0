"""Load master configs, runners.yaml and components.yaml into one ConfigSet."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple

from ..diagnostics import Diagnostic, Report, Severity, UsageError, error
from ..reporoot import repository_root, shown_path
from ..yamlcache import load_yaml_cached
from ..yamldoc import Document
from .normalize import normalize_entry
from .shipped import SHIPPED_POLICIES, copy_hint, print_command

DEFAULT_MASTER_GLOB = "configs/*-master.yaml"
DEFAULT_RUNNERS = "configs/runners.yaml"
DEFAULT_COMPONENTS = "configs/components.yaml"
# The component version policy infx ships: used when a repository has no configs/components.yaml.
SHIPPED_COMPONENTS = SHIPPED_POLICIES["components.yaml"]


@dataclass(kw_only=True)
class ConfigSet:
    """Everything the matrix and the launcher need, as plain data.

    ``entries`` maps each master key to its normalised entry (hyphenated keys as in the
    YAML), in master order: files in the order given, keys in file order.
    """

    entries: dict[str, dict] = field(default_factory=dict)
    sources: dict[str, Document] = field(default_factory=dict)  # master key -> its file
    raw_entries: dict[str, dict] = field(default_factory=dict)  # as written, before normalisation
    runners: dict = field(default_factory=dict)  # {"labels": {...}, "hardware": {...}}
    components: dict = field(default_factory=dict)
    runners_doc: Document | None = None
    components_doc: Document | None = None
    root: Path = Path(".")  # the repository root: the folder that holds configs/ and benchmarks/

    def where(self, key: str, *path) -> tuple[str, tuple[int, int]]:
        """(file, (line, column)) of a path inside the master entry ``key``."""
        doc = self.sources[key]
        return doc.file, doc.where((key, *path))


def default_master_paths(root: Path) -> list[Path]:
    return sorted(root.glob(DEFAULT_MASTER_GLOB))


def _load(path: Path, report: Report, what: str) -> Document | None:
    """Load one YAML file; an empty file or one that is not a mapping is reported here."""
    doc, problems = load_yaml_cached(path, display=str(path))  # read by every command: cached by content
    report.extend(problems)
    if doc is None:
        return None
    if doc.data is None:
        report.add(
            error(
                doc.file,
                (1, 1),
                "file-empty",
                f"the {what} is empty",
                f"The {what} is a YAML mapping; see configs/CONFIGS.md.",
            )
        )
    elif not isinstance(doc.data, dict):
        report.add(
            error(
                doc.file,
                doc.where(()),
                "file-not-mapping",
                f"the {what} must be a mapping, not a {_KIND.get(type(doc.data), type(doc.data).__name__)}",
                "Write `key: value` entries at the top level; see configs/CONFIGS.md.",
            )
        )
    return doc


_KIND = {list: "list", str: "string", int: "number", float: "number", bool: "boolean"}


class ConfigPaths(NamedTuple):
    masters: list[Path]
    runners: Path
    components: Path
    root: Path
    components_shipped: bool = False  # no configs/components.yaml: the policy infx ships

    def missing(self) -> list[Path]:
        return [p for p in (*self.masters, self.runners, self.components) if not p.is_file()]

    def notices(self) -> list[Diagnostic]:
        """What the user should know about the files chosen (said once per command)."""
        if not self.components_shipped:
            return []
        return [
            Diagnostic(
                file=str(self.root / DEFAULT_COMPONENTS),
                line=None,
                column=None,
                rule="components-default",
                message=f"no {DEFAULT_COMPONENTS}: using the component version policy infx ships "
                f"(`{print_command('components.yaml')}` prints it)",
                hint=copy_hint("components.yaml", "the policy"),
                severity=Severity.NOTICE,
            )
        ]


def resolve_paths(
    master_paths: list[Path] | None = None,
    runners_path: Path | None = None,
    components_path: Path | None = None,
    root: Path | None = None,
) -> ConfigPaths:
    """The files a validation reads: given paths, else the defaults under ``root``. Without ``root``,
    the repository root (infx/reporoot.py), its masters shown relative to the working directory."""
    masters = [Path(p) for p in master_paths or ()]
    if root is not None:
        root = Path(root)
        masters = masters or default_master_paths(root)
    else:
        root = repository_root(masters)
        masters = masters or [shown_path(path) for path in default_master_paths(root)]
    components = Path(components_path) if components_path else root / DEFAULT_COMPONENTS
    shipped = not components_path and not components.is_file()
    return ConfigPaths(
        masters,
        Path(runners_path) if runners_path else root / DEFAULT_RUNNERS,
        SHIPPED_COMPONENTS if shipped else components,
        root,
        shipped,
    )


def existing_paths(
    master_paths: list[Path] | None = None,
    runners_path: Path | None = None,
    components_path: Path | None = None,
) -> ConfigPaths:
    """``resolve_paths``, refusing (exit 2) when a file to read is missing or there is no master."""
    paths = resolve_paths(master_paths, runners_path, components_path)
    if not paths.masters:
        raise UsageError(
            f"no master configs: nothing matches {DEFAULT_MASTER_GLOB} under {paths.root}",
            "Run inside the benchmark repository, or name the master config files.",
        )
    missing = paths.missing()
    if missing:
        raise UsageError(
            f"file not found: {', '.join(map(str, missing))}",
            "Check the path; by default infx reads configs/*-master.yaml, configs/runners.yaml and, when present, "
            "configs/components.yaml.",
        )
    return paths


def load_config_set(
    master_paths: list[Path] | None = None,
    runners_path: Path | None = None,
    components_path: Path | None = None,
    root: Path | None = None,
    validate: bool = True,
    paths: ConfigPaths | None = None,
    warnings: bool = True,
    keep_invalid: bool = False,
    notices: bool = True,
) -> tuple[ConfigSet | None, Report]:
    """Load and validate; returns (ConfigSet, report) or (None, report) when invalid.

    ``paths`` (from :func:`existing_paths`) replaces the four path arguments. ``warnings=False``:
    the report of a valid set leaves out the warnings (see ``validate_config_set``); an invalid
    set's report has them all. ``keep_invalid``: the set is returned even when the report has
    errors (its ``entries`` hold the entries that passed the schema), for a caller that judges
    the errors itself (the changelog gate tells a change's own problems from older ones).
    ``notices=False``: without the notices about the files chosen (the shipped component policy),
    which `infx config validate` says; a command that only reads the configs leaves them to it.
    """
    from .validate import validate_config_set  # the rules: a late import (infx/deferred.py)

    paths = paths or resolve_paths(master_paths, runners_path, components_path, root)
    report = Report(paths.notices() if notices else [])
    config_set = ConfigSet(root=paths.root)
    documents = [_load(path, report, "master config") for path in paths.masters]
    config_set.runners_doc = _load(paths.runners, report, "runners file")
    config_set.components_doc = _load(paths.components, report, "components file")
    if config_set.runners_doc is not None and isinstance(config_set.runners_doc.data, dict):
        config_set.runners = config_set.runners_doc.data
    if config_set.components_doc is not None and isinstance(config_set.components_doc.data, dict):
        config_set.components = config_set.components_doc.data

    for doc in documents:
        if doc is None or not isinstance(doc.data, dict):
            continue
        for key, entry in doc.data.items():
            if key in config_set.sources:
                first = config_set.sources[key]
                report.add(
                    error(
                        doc.file,
                        doc.where((key,)),
                        "key-duplicate-across-files",
                        f"config key {key!r} is also defined in {first.file} at line {first.where((key,))[0]}",
                        "Config keys must be unique across all master files; rename one of them.",
                    )
                )
                continue
            config_set.sources[key] = doc
            config_set.raw_entries[key] = entry

    if validate:
        report.extend(validate_config_set(config_set, warnings=warnings or not report.ok))
    else:  # unchecked, but still the one normalised model
        config_set.entries = {
            key: normalize_entry(entry) for key, entry in config_set.raw_entries.items() if isinstance(entry, dict)
        }
    if not report.ok and not keep_invalid:
        return None, report
    return config_set, report
