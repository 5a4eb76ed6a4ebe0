"""What part of the matrix a caller asks for: its filters, checked before expansion (the eval mode is
infx.evalsuite.EvalMode)."""

from __future__ import annotations

from dataclasses import dataclass

from ..diagnostics import Diagnostic, InfxError, UsageError, error
from ..keyglob import matching_keys
from ..scenarios import SCENARIO_TYPES, SEQ_NAMES, parse_seq_name
from ..suggest import close_matches

NODE_TYPES = ("single-node", "multi-node")


@dataclass(frozen=True, kw_only=True)
class Selection:
    """Filters over the expanded points; empty tuples and None mean "no filter".

    docs/matrix.md describes each filter and where it differs from the reference.
    """

    config_keys: tuple[str, ...] = ()  # exact keys or globs with `*`, whole-key match
    model_prefixes: tuple[str, ...] = ()  # the entry's `model-prefix`, exact
    frameworks: tuple[str, ...] = ()
    precisions: tuple[str, ...] = ()
    runner_types: tuple[str, ...] = ()  # the entry's `runner` label, exact
    runner_node_filter: str | None = None  # substring of runner node names; rows go to each match
    seq_lens: tuple[str, ...] = ()  # 1k1k, 8k1k or <isl>_<osl>; fixed-seq-len only
    scenario_types: tuple[str, ...] = ()
    node_types: tuple[str, ...] = ()  # single-node, multi-node
    min_conc: int | None = None
    max_conc: int | None = None
    max_tp: int | None = None
    max_ep: int | None = None
    step_size: int = 2

    def __post_init__(self) -> None:
        # A lone string is one value, not a sequence of one-character filters.
        for name in (
            "config_keys",
            "model_prefixes",
            "frameworks",
            "precisions",
            "runner_types",
            "seq_lens",
            "scenario_types",
            "node_types",
        ):
            value = getattr(self, name)
            object.__setattr__(self, name, (value,) if isinstance(value, str) else tuple(value))

    def check(self) -> None:
        """Contradictory or meaningless flags are usage errors (exit 2)."""
        if self.step_size <= 1:
            raise UsageError(
                f"--step-size must be greater than 1 (got {self.step_size})",
                "The ladder multiplies the concurrency by the step; use 2 or more.",
            )
        for name in ("min_conc", "max_conc", "max_tp", "max_ep"):
            value = getattr(self, name)
            if value is not None and value < 1:
                flag = "--" + name.replace("_", "-")
                raise UsageError(f"{flag} must be at least 1 (got {value})", f"No point has a {flag[6:]} below 1.")
        if self.min_conc is not None and self.max_conc is not None and self.min_conc > self.max_conc:
            raise UsageError(f"--min-conc ({self.min_conc}) must be less than or equal to --max-conc ({self.max_conc})")
        for value in self.seq_lens:
            if parse_seq_name(value) is None:
                raise UsageError(
                    f"--seq-lens {value!r} is not a sequence name",
                    f"Use {', '.join(SEQ_NAMES.values())} or <isl>_<osl>, e.g. 2048_1024.",
                )
        for value in self.scenario_types:
            if value not in SCENARIO_TYPES:
                raise UsageError(f"--scenario-type {value!r} is unknown", f"Use one of: {', '.join(SCENARIO_TYPES)}.")
        for value in self.node_types:
            if value not in NODE_TYPES:
                raise UsageError(f"node type {value!r} is unknown", f"Use one of: {', '.join(NODE_TYPES)}.")

    @property
    def seq_pairs(self) -> set[tuple[int, int] | None]:  # None: not a sequence name (__post_init__ refuses those)
        return {parse_seq_name(name) for name in self.seq_lens}

    def conc_allowed(self, conc: int) -> bool:
        return (self.min_conc is None or conc >= self.min_conc) and (self.max_conc is None or conc <= self.max_conc)


def _close(word: str, candidates, what: str) -> str:
    matches = close_matches(word, candidates, n=3, cutoff=0.5)
    return f"Did you mean {', '.join(matches)}?" if matches else f"See the {what} for the names that exist."


def select_keys(patterns: tuple[str, ...], keys: list[str], notices: list[str]) -> list[str]:
    """Master keys the patterns name, in master order, each once; a missing literal key is an error."""
    if not patterns:
        return list(keys)
    wanted: set[str] = set()
    problems: list[Diagnostic] = []
    known = set(keys)
    for pattern in patterns:
        if "*" not in pattern:
            if pattern in known:
                wanted.add(pattern)
            else:
                problems.append(
                    error(
                        "<command line>",
                        None,
                        "config-key-unknown",
                        f"config key {pattern!r} does not exist in the master configs",
                        _close(pattern, keys, "master configs"),
                    )
                )
            continue
        matched = matching_keys(pattern, keys)
        if not matched:
            notices.append(f"--config-key pattern {pattern!r} matched no config keys")
        wanted.update(matched)
    if problems:
        raise InfxError(problems)
    return [key for key in keys if key in wanted]


def check_runner_types(runner_types: tuple[str, ...], labels: dict) -> None:
    problems = [
        error(
            "<command line>",
            None,
            "runner-type-unknown",
            f"invalid runner type {value!r}: it is not a label in runners.yaml",
            _close(value, labels, "labels of runners.yaml"),
        )
        for value in runner_types
        if value not in labels
    ]
    if problems:
        raise InfxError(problems)
