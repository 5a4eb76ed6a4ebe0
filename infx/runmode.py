"""A sweep plan's run mode: whether its points launch, and how the sweep is cut and ordered.

The plan carries it (infx/sweepplan.py, `mode` in plan.json); the label table
(infx/workflows/labels.py) resolves it from a run's trigger. Pure data: no files, no network.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

from .evalsuite import EvalMode


@dataclass(frozen=True, kw_only=True)
class Mode:
    dispatch: bool = False
    trim_conc: bool = False
    canary: bool = False
    fail_fast: bool = False
    evals_only: bool = False
    all_evals: bool = False
    agentx_fast: bool = False
    reuse: bool = True
    primary_label: str | None = None
    why: tuple[str, ...] = field(default=(), compare=False)  # the rows that applied, for the summary

    @property
    def evals(self) -> EvalMode:
        """The eval choice the evals-only and all-evals labels make."""
        return EvalMode.of(evals_only=self.evals_only, all_evals=self.all_evals)

    def to_json(self) -> dict:
        data = {key.replace("_", "-"): value for key, value in asdict(self).items() if key != "why"}
        return {**data, "why": list(self.why)}

    @classmethod
    def from_json(cls, data: dict) -> Mode:
        fields = {key.replace("-", "_"): value for key, value in data.items() if key != "why"}
        return cls(**fields, why=tuple(data.get("why", ())))
