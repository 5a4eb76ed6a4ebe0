"""What a launch hands srtctl: the environment (and, for an eval point, the workspace) srt-slurm reads.

srt-slurm's lm-eval stage is the same at every commit the gb300-nv lane pins (v1.0.25, v1.0.36,
v1.0.50, sa-submission-q2-2026, aflowers/gb200-dsv4-recipes): ``cli/do_sweep.py`` reads
``EVAL_ONLY`` (skip the benchmark stage, wait for the model, run lm-eval) or ``RUN_EVAL`` (lm-eval
after the benchmark) from its own environment, hands :data:`FORWARDED` plus ``EVAL_CONC`` and
``MODEL_NAME`` (the served model's name) to ``benchmarks/scripts/lm-eval/bench.sh``, which runs in
the serving container on the head node with ``$INFMAX_WORKSPACE`` mounted at ``/infmax-workspace``
(``core/runtime.py``), cds there, sources ``benchmarks/benchmark_lib.sh``, calls ``run_eval
--framework lm-eval --port <frontend port>`` and ``append_lm_eval_summary``, and copies
``meta_env.json``, ``results*.json`` and ``sample*.jsonl`` from the workspace to
``/logs/eval_results/`` (the job's ``outputs/<job id>/logs/eval_results/`` in the checkout).

An eval point's variables reach the job twice, from one record: in srtctl's environment (which
sbatch passes on, as the reference launcher relies on) and in the resolved recipe's
``sbatch_directives.export`` (``#SBATCH --export=ALL,...`` in the script srt-slurm renders at every
pin), so the job takes the eval path whatever the submitting shell exports, and ``srtctl dry-run``
shows it.
"""

from __future__ import annotations

import hashlib
import shutil
from dataclasses import dataclass
from pathlib import Path

from .. import shapes
from ..diagnostics import Diagnostic, error, warning
from ..evalsuite import MAX_FILE_BYTES, PROTOCOL_FIELD, EvalKind, EvalSuite, PointEval, load_suite
from ..fsio import atomic_write, read_bytes
from ..jsonfast import canonical

# Every variable do_sweep.py passes from its environment to the lm-eval stage (identical list at
# every pinned commit); EVAL_CONC is read on its own, MODEL_NAME is set by srt-slurm itself.
FORWARDED = (
    "RUN_EVAL",
    "EVAL_ONLY",
    "IS_MULTINODE",
    "FRAMEWORK",
    "PRECISION",
    "MODEL_PREFIX",
    "RUNNER_TYPE",
    "RESULT_FILENAME",
    "SPEC_DECODING",
    "ISL",
    "OSL",
    "MODEL",
    "MODEL_PATH",
    "MAX_MODEL_LEN",
    "EVAL_MAX_MODEL_LEN",
    "PREFILL_TP",
    "PREFILL_EP",
    "PREFILL_DP_ATTN",
    "PREFILL_NUM_WORKERS",
    "DECODE_TP",
    "DECODE_EP",
    "DECODE_DP_ATTN",
    "DECODE_NUM_WORKERS",
)
# Forwarded but never set by infx: MODEL_PATH is the lane's host path of the weights (inside the
# container they are /model, and the harness asks the server by MODEL_NAME); EVAL_MAX_MODEL_LEN
# sizes the reference's output budget, which the protocol's max-gen-tokens fixes here.
NOT_SET = ("MODEL_PATH", "EVAL_MAX_MODEL_LEN")

WORKSPACE_DIR = "infmax-workspace"  # in the launch's work dir, beside the srt-slurm checkout
WORKSPACE_ENTRY = "benchmarks/benchmark_lib.sh"  # the path bench.sh sources inside the workspace
WORKSPACE_EVALS = (
    "benchmarks/evals"  # the suite's other files (runner, tasks, helpers), where benchmark_lib.sh finds them
)
PLAN_FILE = "infx-eval.json"  # what the harness reads: the protocol and the point's metadata
PLAN_FORMAT = "infx-eval-plan/1"
DRY_RUN_WORKSPACE = f"<launch dir>/{WORKSPACE_DIR}"
DRY_RUN_OUTPUT = "<output dir>"
EVAL_RESULTS = "eval_results"  # bench.sh's /logs/eval_results/, i.e. outputs/<job id>/logs/eval_results/


def _flag(value: bool) -> str:
    return "true" if value else "false"


def _worker(role: str, block: dict) -> list[tuple[str, object, tuple]]:
    """PREFILL_*/DECODE_* from a worker block of the point."""
    prefix = role.upper()
    return [
        (f"{prefix}_TP", block.get("tp"), (role, "tp")),
        (f"{prefix}_EP", block.get("ep"), (role, "ep")),
        (f"{prefix}_DP_ATTN", _flag(bool(block.get("dp-attn"))), (role, "dp-attn")),
        (f"{prefix}_NUM_WORKERS", block.get("num-worker"), (role, "num-worker")),
    ]


def eval_variables(point: dict, choice: PointEval) -> list[tuple[str, object, tuple]]:
    """(name, value, where in the point) of every variable srt-slurm's eval stage reads from the job."""
    multinode = isinstance(point.get("prefill"), dict)
    found: list[tuple[str, object, tuple]] = [
        ("RUN_EVAL", "true", ("run-eval",)),
        ("EVAL_ONLY", _flag(choice.kind is EvalKind.ONLY), ("eval-only",)),
        ("EVAL_CONC", choice.conc_text, ("eval-conc",) if "eval-conc" in point else ("conc",)),
        ("IS_MULTINODE", _flag(multinode), ("prefill",)),
        ("FRAMEWORK", point.get("framework"), ("framework",)),
        ("PRECISION", point.get("precision"), ("precision",)),
        ("MODEL_PREFIX", point.get("model-prefix"), ("model-prefix",)),
        ("RUNNER_TYPE", point.get("runner"), ("runner",)),
        ("SPEC_DECODING", point.get("spec-decoding", "none"), ("spec-decoding",)),
        ("ISL", point.get("isl", 0), ("isl",)),  # an agentic point has none: 0, as the reference passes it
        ("OSL", point.get("osl", 0), ("osl",)),
        ("MODEL", point.get("model"), ("model",)),
    ]
    if "max-model-len" in point:
        found.append(("MAX_MODEL_LEN", point["max-model-len"], ("max-model-len",)))
    if multinode:
        for role in ("prefill", "decode"):
            if isinstance(point.get(role), dict):
                found += _worker(role, point[role])
    return found


def variable_problems(point_file: str, where, found: list[tuple[str, object, tuple]]) -> list[Diagnostic]:
    """Each value in the env-value shape (it reaches an environment and an #SBATCH line), located at its field."""
    problems = []
    for name, value, path in found:
        if name == "EVAL_CONC":  # built by infx from the row's whole-number concurrencies
            continue
        text = (
            value
            if isinstance(value, str)
            else str(value)
            if isinstance(value, int) and not isinstance(value, bool)
            else None
        )
        problem = (
            shapes.problem("env-value", text, f"{name} (from {'.'.join(map(str, path))})")
            if text is not None
            else f"{name} (from {'.'.join(map(str, path))}) would be {value!r}; srt-slurm's eval stage needs a "
            "string or a whole number"
        )
        if problem:
            problems.append(
                error(point_file, where(path), "point-shape", problem, f"Accepted: {shapes.accepted('env-value')}.")
            )
    return problems


def export_directive(variables: dict[str, str]) -> str:
    """``sbatch --export`` value: ALL (the submitting environment) plus these; a value with spaces is quoted,
    which sbatch's parser of ``#SBATCH`` lines removes (checked against the real Slurm in tests)."""
    return ",".join(
        ["ALL", *(f'{name}="{value}"' if " " in value else f"{name}={value}" for name, value in variables.items())]
    )


@dataclass(frozen=True)
class EvalLaunch:
    """An eval point's launch: its choice, the lane's suite and the job variables from the point."""

    choice: PointEval
    suite: EvalSuite
    variables: tuple[tuple[str, str], ...]

    @property
    def protocol(self) -> dict:
        return self.suite.protocol()

    def to_json(self) -> dict:
        return {
            **self.choice.to_json(),
            "protocol": self.protocol,
            "suite": self.suite.file,
            "workspace": {
                "entry-point": WORKSPACE_ENTRY,
                "plan": PLAN_FILE,
                "files": [f.path for f in self.suite.files()],
            },
            "outputs": f"outputs/<job id>/logs/{EVAL_RESULTS}/ in the srt-slurm checkout (LOGS/job/{EVAL_RESULTS}/ "
            "in the output dir)",
        }


def plan_eval(
    point, lane, root: Path, choice: PointEval, settings_where: dict
) -> tuple[EvalLaunch | None, list[Diagnostic]]:
    """The eval launch of a point that runs an eval, or located problems (nothing is written)."""
    data = point.data
    at = point.where(
        ("eval-only",)
        if "eval-only" in data
        else ("run-eval",)
        if "run-eval" in data
        else settings_where.get("EVAL_ONLY", ())
    )
    suite_path = lane.evals.suite if lane.evals else None
    if suite_path is None:
        return None, [
            error(
                point.file,
                at,
                "eval-workspace-missing",
                f"the point runs an eval ({choice.kind.value}), but lane {lane.name} names no eval suite",
                f"Add `evals: {{suite: benchmarks/evals/suite.yaml}}` to {lane.file}, or launch the point without "
                "run-eval.",
            )
        ]
    found = eval_variables(data, choice)
    problems = variable_problems(point.file, point.where, found)
    if not choice.concs:
        problems.append(
            error(
                point.file,
                point.where(("conc",)),
                "point-shape",
                "the eval point has no concurrency for EVAL_CONC",
                "A matrix row lists its concurrencies in conc (and eval-conc for one of them).",
            )
        )
    suite, suite_problems = load_suite(root, suite_path)
    problems += suite_problems
    if suite is not None and PROTOCOL_FIELD in data and data[PROTOCOL_FIELD] != suite.protocol():
        recorded = data[PROTOCOL_FIELD]
        problems.append(
            error(
                point.file,
                point.where((PROTOCOL_FIELD,)),
                "eval-protocol-mismatch",
                "the point records eval protocol "
                f"{recorded.get('sha256') if isinstance(recorded, dict) else recorded!r}, but {suite_path} (lane "
                f"{lane.name}) now gives {suite.protocol()['sha256']}: it would run something else",
                "Plan the point again from this commit (infx matrix / infx plan), so what it records is what runs.",
            )
        )
    if problems or suite is None:
        return None, problems
    return EvalLaunch(choice, suite, tuple((name, str(value)) for name, value, _ in found)), []


SECRET_HINT = (
    "Give the launch step that variable (run-sweep.yml hands the repository secret HF_TOKEN to run-point.yml's launch "
    "step as its `hf-token` secret), or set `enabled: false` on the task in {suite}."
)


def secret_problems(evaluation: EvalLaunch, env: dict, dry_run: bool = False) -> list[Diagnostic]:
    """`eval-secret-missing`, located at the task in the suite, for each variable an enabled task
    needs from the launching runner (``requires-env``) that ``env`` lacks or has empty: the job
    would fail fetching the task's data after its engine started. A warning in a dry run (which
    submits nothing). Only names are read and said, never a value."""
    make = warning if dry_run else error
    return [
        make(
            evaluation.suite.file,
            task.where,
            "eval-secret-missing",
            f"task {task.task} needs ${name} in the launch's environment, and it is unset or empty",
            SECRET_HINT.format(suite=evaluation.suite.file),
        )
        for name, task in evaluation.suite.required_env
        if not env.get(name)
    ]


def point_meta(point: dict) -> dict:
    """meta_env.json's fields that come from the point (the reference's names and types); the harness adds
    conc, the served model's name and, for several concurrencies, the batch arrays."""
    prefill, decode = point.get("prefill"), point.get("decode")
    multinode = isinstance(prefill, dict)
    first = prefill if isinstance(prefill, dict) else point  # multinode: the prefill workers
    meta = {
        "is_multinode": multinode,
        "framework": point.get("framework"),
        "precision": point.get("precision"),
        "spec_decoding": point.get("spec-decoding", "none"),
        "tp": first.get("tp", 1),
        "pp": first.get("pp", 1),
        "dcp_size": first.get("dcp-size", 1),
        "pcp_size": first.get("pcp-size", 1),
        "ep": first.get("ep", 1),
        "dp_attention": bool(first.get("dp-attn", False)),
    }
    for role, block in (("prefill", prefill if multinode else point), ("decode", decode if multinode else point)):
        block = block if isinstance(block, dict) else {}
        meta.update(
            {
                f"{role}_tp": block.get("tp", 1),
                f"{role}_pp": block.get("pp", 1),
                f"{role}_dcp_size": block.get("dcp-size", 1),
                f"{role}_pcp_size": block.get("pcp-size", 1),
                f"{role}_ep": block.get("ep", 1),
                f"{role}_dp_attention": bool(block.get("dp-attn", False)),
                f"{role}_num_workers": block.get("num-worker", 1),
            }
        )
    meta.update(
        {
            "model": point.get("model"),
            "infmax_model_prefix": point.get("model-prefix"),
            "hw": point.get("runner"),
            "isl": str(point.get("isl", 0)),
            "osl": str(point.get("osl", 0)),
        }
    )
    return meta


class WorkspaceChanged(RuntimeError):
    """A suite file changed between planning and staging."""


def stage_workspace(evaluation: EvalLaunch, root: Path, dest: Path, point: dict, identity: dict) -> Path:
    """Write the workspace srt-slurm's lm-eval stage mounts: the entry point at benchmarks/benchmark_lib.sh,
    the suite's other files under benchmarks/evals/, and infx-eval.json. Each copy must hash to what
    the plan recorded (a file edited since is :class:`WorkspaceChanged`)."""
    if dest.exists():
        shutil.rmtree(dest)
    folder = Path(evaluation.suite.file).parent
    for item in evaluation.suite.files():
        inside = Path(item.path).relative_to(folder)
        target = dest / (WORKSPACE_ENTRY if item is evaluation.suite.entry_point else Path(WORKSPACE_EVALS) / inside)
        target.parent.mkdir(parents=True, exist_ok=True)
        content = read_bytes(root / item.path, limit=MAX_FILE_BYTES)
        if hashlib.sha256(content).hexdigest() != item.sha256:
            raise WorkspaceChanged(f"{item.path} changed since the launch was planned (SHA-256 {item.sha256[:12]}…)")
        atomic_write(target, content)
    plan = {
        "format": PLAN_FORMAT,
        "protocol": evaluation.protocol,
        "tasks-dir": WORKSPACE_EVALS,
        "concs": list(evaluation.choice.concs),
        "meta": point_meta(point),
        "infx": identity,
    }
    atomic_write(dest / PLAN_FILE, canonical(plan).decode() + "\n")
    return dest
