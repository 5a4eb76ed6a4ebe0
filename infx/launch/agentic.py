"""What an agentic (AgentX) point's benchmark stage gets from a launch: its profile parameters and
the workspace its harness runs from.

Read from srt-slurm's source at the commits the agentic routes pin (v1.0.36, v1.0.50; sa-schema2
is not in the test bundle and follows the same recipe form): a recipe's ``benchmark.type: custom``
runs ``bash -lc <benchmark.command>`` in the job's container on the benchmark node
(``benchmarks/custom.py``); that step gets the job's environment, then the recipe's top-level
``environment``, then ``benchmark.env`` exported last (``cli/mixins/benchmark_stage.py``), so a value
in ``benchmark.env`` wins over anything srtctl's caller or the recipe says elsewhere.
``core/runtime.py`` mounts ``$INFMAX_WORKSPACE`` ("the InferenceX checkout", srt-slurm's docs) at
``/infmax-workspace``, at every pinned commit.

The agentic recipes run the benchmark repository's own AgentX harness from that mount
(``bash /infmax-workspace/benchmarks/multi_node/agentic_srt.sh``), which reads the profile's length
from ``DURATION`` and the warm-up requests per trajectory lane from ``AIPERF_WARMUP_REQUESTS_PER_LANE``
(its default: 10), and writes each concurrency's aggregate to
``/infmax-workspace/<RESULT_FILENAME>_conc<N>.json``. So for a point whose benchmark stage runs:

- the point's ``duration``, ``warmup-requests-per-lane`` and concurrencies go into the resolved
  recipe's ``benchmark.env``, replacing what the recipe says, and the identity the harness checks
  before it starts where the recipe leaves it out (:data:`BENCHMARK_ENV`);
- ``$INFMAX_WORKSPACE`` is the repository checkout, and every ``/infmax-workspace/...`` file the
  command names must be a file of it (checked before anything is fetched or submitted);
- the aggregates it writes there are moved into the output folder after the job.
"""

from __future__ import annotations

import os
import shlex
import stat
from dataclasses import dataclass
from pathlib import Path

from .. import shapes
from ..diagnostics import Diagnostic, error
from ..fsio import copy_regular
from ..scenarios import is_agentic

CONTAINER_WORKSPACE = "/infmax-workspace"  # where srt-slurm mounts $INFMAX_WORKSPACE, at every pinned commit
DRY_RUN_REPOSITORY = "<repository>"  # the checkout a launch runs in ($GITHUB_WORKSPACE)
# The harness's own switch to a 1,200 s profile with one warm-up request per lane: a recipe that
# turns it on would silently replace the point's values (the agentx-fast label sets them instead).
FAST_SWITCH = "AIPERF_EXPERIMENTAL_FAST"


def _concs(data: dict) -> list:
    conc = data.get("conc")
    return conc if isinstance(conc, list) else [conc]


# What the harness reads, from the point, into benchmark.env: (variable, point field, value, replaces).
# What runs and is reported (the profile, the concurrencies) replaces what the recipe says; the
# identity the harness checks before it starts fills in only what the recipe leaves out (a recipe
# may name the served model its own way).
BENCHMARK_ENV = (
    ("DURATION", "duration", lambda d: d.get("duration"), True),
    ("AIPERF_WARMUP_REQUESTS_PER_LANE", "warmup-requests-per-lane", lambda d: d.get("warmup-requests-per-lane"), True),
    ("CONC", "conc", lambda d: (_concs(d) or [None])[0], True),
    ("CONC_LIST", "conc", lambda d: " ".join(str(c) for c in _concs(d)), True),
    ("MODEL", "model", lambda d: d.get("model"), False),
    ("MODEL_PREFIX", "model-prefix", lambda d: d.get("model-prefix"), False),
    ("FRAMEWORK", "framework", lambda d: d.get("framework"), False),
    ("PRECISION", "precision", lambda d: d.get("precision"), False),
)
WHOLE = ("duration", "warmup-requests-per-lane")  # fields whose value is a count of seconds or requests


@dataclass(frozen=True)
class AgenticBenchmark:
    """An agentic point's benchmark stage as the launch sets it up."""

    variables: tuple[tuple[str, str, bool], ...]  # (name, value, replaces the recipe's) for benchmark.env
    harness: tuple[str, ...] = ()  # the repository files the benchmark command runs (relative paths)

    def to_json(self) -> dict:
        return {
            "benchmark-env": {name: value for name, value, _ in self.variables},
            "replaces": [name for name, _, replaces in self.variables if replaces],
            "harness": list(self.harness),
            "workspace": f"{DRY_RUN_REPOSITORY} (mounted at {CONTAINER_WORKSPACE})",
            "aggregates": f"{CONTAINER_WORKSPACE}/<result name>_conc<N>.json, moved into the output dir after the job",
        }


def _whole(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value > 0


def plan_profile(point, runs_benchmark: bool) -> tuple[tuple[tuple[str, str, bool], ...] | None, list[Diagnostic]]:
    """The benchmark.env values an agentic point's benchmark stage gets, or None when it runs no AgentX
    benchmark (another scenario, or an eval-only point); located problems for a value that cannot be one."""
    data = point.data
    if not is_agentic(data) or not runs_benchmark:
        return None, []
    found, problems, refused = [], [], set()
    if "duration" not in data:
        problems.append(
            error(
                point.file,
                point.where(("scenario-type",)),
                "point-agentic-profile",
                "the agentic point has no duration: the length of its AgentX profile",
                "A matrix row carries duration (3600, or 1200 under the agentx-fast label); plan the point again.",
            )
        )
    for name, field, read, replaces in BENCHMARK_ENV:
        value = read(data)
        if value is None and field != "conc" or field in refused:  # CONC and CONC_LIST read one field: one problem
            continue
        if field in WHOLE or field == "conc":
            concs = _concs(data)
            bad = (not concs or any(not _whole(v) for v in concs)) if field == "conc" else not _whole(value)
            if bad:
                problems.append(
                    error(
                        point.file,
                        point.where((field,)),
                        "point-agentic-profile",
                        f"{field} is {data.get(field)!r}; the benchmark takes whole numbers above 0 ({name})",
                        f"Write {field} as the matrix does (positive integers).",
                    )
                )
                refused.add(field)
                continue
            text = str(value)
        elif problem := shapes.problem("env-value", value, f"{field} ({name})"):
            problems.append(
                error(
                    point.file,
                    point.where((field,)),
                    "point-shape",
                    problem,
                    f"Accepted: {shapes.accepted('env-value')}.",
                )
            )
            refused.add(field)
            continue
        else:
            text = value
        if (name, text, replaces) not in found:
            found.append((name, text, replaces))
    return (tuple(found), []) if not problems else (None, problems)


def harness_paths(command: str) -> list[str]:
    """The ``/infmax-workspace/...`` paths a benchmark command names, relative to the workspace."""
    prefix = CONTAINER_WORKSPACE + "/"
    return [word[len(prefix) :] for word in shlex.split(command) if word.startswith(prefix)]


def apply_to_recipe(
    recipe: dict,
    variables: tuple[tuple[str, str, bool], ...],
    root: Path,
    recipe_file: str,
    where,
) -> tuple[AgenticBenchmark | None, list[Diagnostic]]:
    """Write ``variables`` into ``recipe["benchmark"]["env"]`` (those that replace, and those the recipe
    leaves out) and check the recipe can take them and that the repository holds the harness its command
    runs. ``where(path)`` locates a key of the recipe."""
    bench = recipe.get("benchmark")
    hint = (
        "An agentic recipe runs the benchmark repository's AgentX harness as benchmark.type: custom with a "
        "command (srt-slurm exports benchmark.env for it at every pinned commit)."
    )
    if not isinstance(bench, dict) or bench.get("type") != "custom" or not isinstance(bench.get("command"), str):
        at = (
            ("benchmark", "type")
            if isinstance(bench, dict) and "type" in bench
            else ("benchmark",)
            if isinstance(bench, dict)
            else ()
        )
        what = (
            "no benchmark block"
            if not isinstance(bench, dict)
            else f"benchmark.type {bench.get('type')!r}"
            if bench.get("type") != "custom"
            else "no benchmark.command"
        )
        return None, [
            error(
                recipe_file,
                where(at),
                "recipe-agentic-benchmark",
                f"the recipe has {what}: srt-slurm gives the point's profile "
                f"({', '.join(n for n, _, r in variables if r)}) only to a custom benchmark's command",
                hint,
            )
        ]
    env = bench.get("env")
    if env is not None and not isinstance(env, dict):
        return None, [
            error(
                recipe_file,
                where(("benchmark", "env")),
                "recipe-agentic-benchmark",
                f"benchmark.env is {type(env).__name__}, not a mapping of variables",
                hint,
            )
        ]
    problems = []
    if env and str(env.get(FAST_SWITCH, "0")) != "0":
        problems.append(
            error(
                recipe_file,
                where(("benchmark", "env", FAST_SWITCH)),
                "recipe-agentic-benchmark",
                f"benchmark.env sets {FAST_SWITCH}={env[FAST_SWITCH]}, which makes the harness replace the point's "
                "duration and warm-up with its own",
                f"Remove {FAST_SWITCH} from the recipe; the agentx-fast label plans fast points with their own values.",
            )
        )
    try:
        paths = harness_paths(bench["command"])
    except ValueError as exc:  # unbalanced quotes: bash would refuse it too
        return None, problems + [
            error(
                recipe_file,
                where(("benchmark", "command")),
                "recipe-agentic-benchmark",
                f"benchmark.command cannot be read as shell words ({exc})",
                hint,
            )
        ]
    for relative in paths:
        problem: str | None
        try:
            target = shapes.inside(root, relative, f"{CONTAINER_WORKSPACE}/{relative}")
        except shapes.Escape as exc:
            problem = str(exc)
        else:
            problem = (
                None
                if target.is_file()
                else f"benchmark.command runs {CONTAINER_WORKSPACE}/{relative}, but the repository has no file "
                f"{relative}"
            )
        if problem:
            problems.append(
                error(
                    recipe_file,
                    where(("benchmark", "command")),
                    "agentic-harness-missing",
                    f"{problem}; srt-slurm mounts the repository checkout at {CONTAINER_WORKSPACE}, so the job "
                    "would fail when its benchmark starts, after the model loaded",
                    f"Add the AgentX harness to the repository at {relative}, or point benchmark.command at the "
                    "harness the repository has.",
                )
            )
    if problems:
        return None, problems
    given = {name: value for name, value, replaces in variables if replaces or name not in (env or {})}
    recipe["benchmark"] = {**bench, "env": {**(env or {}), **given}}  # a new block: the variant is shared
    return AgenticBenchmark(tuple(v for v in variables if v[0] in given), tuple(paths)), []


def aggregate_names(name: str, concs: list) -> list[str]:
    """The files the harness writes into the workspace: one aggregate per concurrency."""
    return [f"{name}_conc{conc}.json" for conc in concs]


def clear_stale(workspace: Path, out: Path, name: str, concs: list) -> list[str]:
    """Remove aggregates an earlier launch of this point left in the repository checkout (the job
    writes there), so only this job's can be staged; a line per file removed."""
    removed: list[str] = []
    if workspace.resolve() == out.resolve():
        return removed
    for file_name in aggregate_names(name, concs):
        path = workspace / file_name
        try:
            os.unlink(path)  # a link is removed, never what it points to
        except FileNotFoundError:
            continue
        except OSError as exc:
            removed.append(
                f"{file_name}: a stale aggregate could not be removed from the workspace ({exc.strerror or exc})"
            )
            continue
        removed.append(f"{file_name}: an earlier launch's aggregate, removed from the workspace before submission")
    return removed


def stage_aggregates(workspace: Path, out: Path, name: str, concs: list) -> list[str]:
    """Move the aggregates the job wrote into the workspace to the output folder. Only regular files
    are copied (never through a link, never from a FIFO); a line for each thing left out."""
    skipped: list[str] = []
    if workspace.resolve() == out.resolve():
        return skipped
    for file_name in aggregate_names(name, concs):
        source = workspace / file_name
        try:
            mode = os.lstat(source).st_mode
        except OSError:
            continue  # not written: the verdict names the missing concurrency
        if not stat.S_ISREG(mode):
            skipped.append(f"{file_name}: not a regular file in the workspace, not followed or staged")
            continue
        try:
            copy_regular(source, out / file_name)
            os.unlink(source)
        except OSError as exc:
            skipped.append(f"{file_name}: not staged from the workspace ({exc.strerror or exc})")
    return skipped
