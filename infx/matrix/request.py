"""`infx matrix` as a library call: the request (which configs, which points, which evals) and the
rows it expands to, with the notices a caller shows."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from ..config import existing_paths, load_config_set
from ..config.atref import judged_against_base
from ..diagnostics import Diagnostic, InfxError, Severity
from ..evalsuite import EvalMode
from . import build_matrix
from .selection import Selection


@dataclass(frozen=True, kw_only=True)
class MatrixRequest:
    """The master configs (none: configs/*-master.yaml), runners.yaml and components.yaml (None: their
    default paths), the filters and the eval mode."""

    masters: tuple[Path, ...] = ()
    runners: Path | None = None
    components: Path | None = None
    selection: Selection = field(default_factory=Selection)
    evals: EvalMode = EvalMode.DEFAULT
    base_ref: str | None = None  # a finding this base already has is a warning, not a refusal

    def check(self) -> None:
        """Contradictory or meaningless filters are usage errors (exit 2), found before any file is read."""
        self.evals.check()
        self.selection.check()


@dataclass(frozen=True, kw_only=True)
class Matrix:
    rows: list[dict]
    notices: list[Diagnostic]  # e.g. a filter that matched nothing, a finding already on the base branch


def expand_matrix(request: MatrixRequest) -> Matrix:
    """The rows the request selects; invalid configs raise InfxError with every config diagnostic
    (never a matrix from invalid data)."""
    paths = existing_paths(list(request.masters) or None, request.runners, request.components)
    # Warnings are shown only with an error, then all of them; the configs' notices are `config validate`'s.
    config_set, report = load_config_set(
        paths=paths, warnings=False, keep_invalid=request.base_ref is not None, notices=False
    )
    if request.base_ref is not None and not report.ok:
        report = judged_against_base(report, paths, request.base_ref)
    if config_set is None or not report.ok:
        raise InfxError(report.sorted())
    notices: list[str] = []
    rows = build_matrix(config_set, selection=request.selection, evals=request.evals, notices=notices)
    notes = [d for d in report.sorted() if not d.is_error]
    notes += [
        Diagnostic("infx matrix", None, None, "matrix-notice", notice, severity=Severity.NOTICE) for notice in notices
    ]
    return Matrix(rows=rows, notices=notes)
