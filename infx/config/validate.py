"""Validation of a loaded ConfigSet: JSON Schema first, then the cross-field rules.

runners.yaml and components.yaml are checked against their schemas; each master entry is
checked against the master schema and then by every rule of :data:`rules.RULES`. Rules
that need well-typed data run only on entries that passed the schema. Entries that pass
the schema are normalised into ``config_set.entries``.
"""

from __future__ import annotations

from ..diagnostics import Diagnostic, Severity
from ..schema import schema_diagnostics
from ..yamldoc import Document
from .components import backends, unknown_backends
from .nonmaster import NON_MASTER_FIELDS
from .normalize import normalize_entry
from .rules import RULES, EntryContext, Rule


def _side_file(doc: Document | None, name: str, diagnostics: list[Diagnostic]) -> bool:
    """Schema-check runners.yaml or components.yaml; True when it is usable."""
    if doc is None or not isinstance(doc.data, dict):
        return False  # unreadable, empty or not a mapping: already reported by the loader
    found = schema_diagnostics(name, doc, doc.data)
    diagnostics.extend(found)
    return not found


def validate_config_set(config_set, warnings: bool = True) -> list[Diagnostic]:
    """Every problem at once. Fills ``config_set.entries`` with normalised entries.

    ``warnings=False`` is for a caller that shows the diagnostics only when there is an error
    (``infx matrix``): the warning rules then run only once an error is found, so what it shows
    is the same, and a valid config set does not pay for warnings no one reads (an aggregated
    point inside a disagg entry renders its own entry as YAML, and locating it reads every position).
    """
    diagnostics: list[Diagnostic] = []
    runners = config_set.runners if _side_file(config_set.runners_doc, "runners", diagnostics) else {}
    components_ok = _side_file(config_set.components_doc, "components", diagnostics)
    known_backends = backends(config_set.components) if components_ok else None
    unknown = unknown_backends(config_set.components) if components_ok else "warning"
    deferred: list[tuple] = []

    for key, entry in config_set.raw_entries.items():
        doc = config_set.sources[key]
        prefix = f"{key}: "
        schema_errors = schema_diagnostics(
            "master",
            doc,
            entry,
            base=(key,),
            pointer="#/$defs/entry",
            prefix=prefix,
            root_label="the entry",
            special_keys=NON_MASTER_FIELDS,
        )
        diagnostics.extend(schema_errors)
        context = EntryContext(
            key=key,
            entry=entry,
            labels=runners.get("labels", {}),
            hardware=runners.get("hardware", {}),
            backends=known_backends,
            unknown_backends=unknown,
        )
        for rule in RULES.values():
            if rule.needs_schema and schema_errors:
                continue
            if not warnings and rule.severity_for(context) is Severity.WARNING:
                deferred.append((rule, context, doc, prefix))
                continue
            diagnostics.extend(_findings(rule, context, doc, prefix))
        if not schema_errors:
            config_set.entries[key] = normalize_entry(entry)
    if deferred and any(d.is_error for d in diagnostics):
        for found in deferred:
            diagnostics.extend(_findings(*found))
    return diagnostics


def _findings(rule: Rule, context: EntryContext, doc: Document, prefix: str) -> list[Diagnostic]:
    found = []
    for path, message, hint in rule.check(context):
        line, column = doc.where((context.key, *path))
        found.append(
            Diagnostic(
                file=doc.file,
                line=line,
                column=column,
                rule=rule.id,
                message=prefix + message,
                hint=hint,
                severity=rule.severity_for(context),
            )
        )
    return found
