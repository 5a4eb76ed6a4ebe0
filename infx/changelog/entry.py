"""The changelog entry: one table of fields from which the validator, the model and the
published JSON Schema (``infx/schemas/changelog-entry.schema.json``) are all derived."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from ..diagnostics import Diagnostic, error, warning
from ..evalsuite import EvalMode
from ..fsio import atomic_write
from ..scenarios import SCENARIO_TYPES
from ..schema import KEYWORDS, OTHER_KEYWORD, dotted, schema_errors

SCHEMA_PATH = Path(__file__).resolve().parent.parent / "schemas" / "changelog-entry.schema.json"

# Spellings a YAML author may use for a boolean (the reference's lax parsing accepted them);
# infx accepts them with a warning asking for true/false.
LAX_TRUE = ("yes", "true", "on", "y", "t", "1", 1)
LAX_FALSE = ("no", "false", "off", "n", "f", "0", 0)

# field -> (kind, required, description). kind: strings | bool | int>=1 | scenarios | string
FIELDS: dict[str, tuple[str, bool, str]] = {
    "config-keys": ("strings", True, "Master-config keys to sweep; `*` matches any run of characters."),
    "description": ("strings", True, "What changed and why, one list item per line."),
    "pr-link": (
        "string",
        True,
        "The pull request: https://github.com/<owner>/<repo>/pull/<number> (XXX while the PR is open).",
    ),
    "evals-only": ("bool", False, "Run only the default eval subset, no throughput points."),
    "all-evals": ("bool", False, "Run every eval point, no throughput points."),
    "no-evals": ("bool", False, "Run throughput points only, no evals."),
    "append-only": ("bool", False, "Run only the points that are new relative to the merge-base configs."),
    "eval-min-prefill-ep": (
        "int>=1",
        False,
        "Drop multinode eval points whose prefill expert-parallel size is below this.",
    ),
    "scenario-type": ("scenarios", False, "Restrict the entry to these scenarios (default: both)."),
}
EVAL_FIELDS = ("evals-only", "all-evals", "no-evals", "eval-min-prefill-ep")


@dataclass(frozen=True, kw_only=True)
class Entry:
    """One validated changelog entry and where it sits."""

    index: int  # 1-based position in the file
    line: int  # line of its `- ` marker
    config_keys: list[str]
    description: list[str]
    pr_link: str
    evals_only: bool = False
    all_evals: bool = False
    no_evals: bool = False
    append_only: bool = False
    eval_min_prefill_ep: int | None = None
    scenario_types: tuple[str, ...] = SCENARIO_TYPES
    key_positions: list[tuple[int, int]] = field(default_factory=list, repr=False)  # (line, column) per config key
    data: dict = field(default_factory=dict, repr=False)

    @property
    def evals(self) -> EvalMode:
        """The eval choice the entry's evals-only / all-evals / no-evals fields make."""
        return EvalMode.of(no_evals=self.no_evals, evals_only=self.evals_only, all_evals=self.all_evals)

    def metadata(self) -> dict:
        """The entry as the plan's changelog_metadata lists it (defaults written out)."""
        return {
            "config-keys": self.config_keys,
            "description": self.description,
            "pr-link": self.pr_link,
            "evals-only": self.evals_only,
            "all-evals": self.all_evals,
            "no-evals": self.no_evals,
            "append-only": self.append_only,
            "eval-min-prefill-ep": self.eval_min_prefill_ep,
            "scenario-type": list(self.scenario_types),
        }


def _json_schema_of(kind: str) -> dict:
    schemas: dict[str, dict] = {
        "strings": {"type": "array", "minItems": 1, "items": {"type": "string"}},
        "string": {"type": "string"},
        "bool": {
            "anyOf": [{"type": "boolean"}, {"enum": [v for v in LAX_TRUE + LAX_FALSE if v not in (0, 1)] + [0, 1]}],
            "x-accepted": "true or false",
        },
        "int>=1": {"type": "integer", "minimum": 1},
        "scenarios": {"type": "array", "minItems": 1, "items": {"enum": list(SCENARIO_TYPES)}},
    }
    return schemas[kind]


def json_schema() -> dict:
    """The published schema, generated from FIELDS (a test keeps the file in step)."""
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": "https://infx.invalid/schemas/changelog-entry.schema.json",
        "title": "perf-changelog.yaml entry",
        "type": "object",
        "additionalProperties": False,
        "required": [name for name, (_, required, _) in FIELDS.items() if required],
        "properties": {
            name: {**_json_schema_of(kind), "description": text} for name, (kind, _, text) in FIELDS.items()
        },
        "not": {
            "required": ["append-only"],
            "properties": {"append-only": {"const": True}},
            "anyOf": [{"required": [name]} for name in EVAL_FIELDS],
        },
    }


def write_schema() -> None:
    atomic_write(SCHEMA_PATH, json.dumps(json_schema(), indent=2, allow_nan=False) + "\n")


def _schema_problems(data: dict, index: int, file: str, where) -> list[Diagnostic]:
    """The entry against the published schema (infx/schema.py, the one validation path), in the entry's words."""
    problems = []
    for err in schema_errors("changelog-entry", data):
        if err.keyword == "not":
            continue  # append-only with eval fields: the entry-append-only-evals rule names the fields
        if err.keyword == "additionalProperties" and not err.path:
            problems += [
                error(
                    file,
                    where((name,)),
                    "entry-unknown-field",
                    f"entry {index} has the unknown field {name!r}; accepted fields: {', '.join(FIELDS)}",
                    "Remove it or fix its spelling; notes belong in `description`.",
                )
                for name in data
                if name not in FIELDS
            ]
        elif err.keyword == "required" and not err.path:
            problems += [
                error(
                    file,
                    where(()),
                    "entry-missing-field",
                    f"entry {index} has no `{name}`",
                    f"Add `  {name}:` to the entry ({FIELDS[name][2]})",
                )
                for name in err.value
                if name not in data
            ]
        else:
            _, explain = KEYWORDS.get(err.keyword, OTHER_KEYWORD)
            name = err.path[0]
            for extra, message, _ in explain(err, f"`{dotted(err.path)}`"):
                problems.append(
                    error(file, where(err.path + extra), "entry-field", f"entry {index}: {message}", FIELDS[name][2])
                )
    return list(dict.fromkeys(problems))


def _convert(kind: str, value, name: str):
    """(value as the model holds it, lax warning text or None) of a schema-valid field."""
    if kind == "bool" and not isinstance(value, bool):
        truth = (value.lower() if isinstance(value, str) else value) in LAX_TRUE
        return truth, f"`{name}: {value!r}` is read as {str(truth).lower()}; write `{name}: {str(truth).lower()}`"
    if kind == "scenarios":
        return tuple(dict.fromkeys(value)), None
    return value, None


def parse_entry(data, index: int, file: str, where) -> tuple[Entry | None, list[Diagnostic]]:
    """Validate one parsed entry. ``where(path)`` gives (line, column) of a path inside it."""
    problems: list[Diagnostic] = []
    if not isinstance(data, dict):
        return None, [
            error(
                file,
                where(()),
                "entry-not-mapping",
                f"entry {index} must be a mapping with config-keys, description and pr-link; found "
                f"{type(data).__name__}",
                "Write it as a block: `- config-keys:` then `  description:` and `  pr-link:`.",
            )
        ]
    problems = _schema_problems(data, index, file, where)
    if problems:
        return None, problems
    values = {}
    for name, (kind, _, _) in FIELDS.items():
        if name in data:
            values[name], lax = _convert(kind, data[name], name)
            if lax:
                problems.append(warning(file, where((name,)), "entry-lax-bool", f"entry {index}: {lax}"))
    if values.get("no-evals") and (values.get("evals-only") or values.get("all-evals")):
        problems.append(
            error(
                file,
                where(("no-evals",)),
                "entry-no-evals-conflict",
                f"entry {index}: no-evals cannot be combined with evals-only or all-evals",
                "Keep one of them: no-evals runs throughput only, evals-only/all-evals run evals only.",
            )
        )
    if values.get("append-only"):
        combined = [name for name in EVAL_FIELDS if name in data]
        if combined:
            problems.append(
                error(
                    file,
                    where((combined[0],)),
                    "entry-append-only-evals",
                    f"entry {index}: append-only cannot be combined with eval selection fields ({', '.join(combined)})",
                    "An append-only entry runs only new throughput points; put eval changes in a separate entry of a "
                    "later PR.",
                )
            )
    if any(p.is_error for p in problems):
        return None, problems
    entry = Entry(
        index=index,
        line=where(())[0],
        config_keys=values["config-keys"],
        description=values["description"],
        pr_link=values["pr-link"],
        evals_only=values.get("evals-only", False),
        all_evals=values.get("all-evals", False),
        no_evals=values.get("no-evals", False),
        append_only=values.get("append-only", False),
        eval_min_prefill_ep=values.get("eval-min-prefill-ep"),
        scenario_types=values.get("scenario-type", SCENARIO_TYPES),
        key_positions=[where(("config-keys", n)) for n in range(len(values["config-keys"]))],
        data=data,
    )
    return entry, problems
