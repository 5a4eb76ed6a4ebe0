"""What ``infx launch --dry-run`` adds to the plan when infx's srt-slurm cache has the pinned commit.

1. A recipe that ships with srt-slurm is read from the cached checkout and resolved and
   checked exactly as a launch does after its checkout (``plan.resolve_in_checkout``).
2. When the cache also has srtctl for that commit (a per-commit venv), the checkout is staged
   as a launch stages it (overlays, resolved recipe, srtslurm.yaml) in a scratch copy and the
   real ``srtctl dry-run`` must accept the recipe; the sbatch script it prints is kept.

Neither needs network or Slurm; without a cache entry the dry run is what ``plan_point`` gives.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from ..diagnostics import InfxError, error
from ..diskcache import cache_home
from ..fsio import atomic_write
from . import cache, evalenv
from .checkout import resolve_in_checkout
from .plan import LaunchPlan
from .srtctl import SrtctlError, dry_run, stage_checkout

OUTPUT_TAIL = 4000
KEPT = ("srtslurm.yaml",)  # besides the script and srtctl's output; the staged copy itself is removed


def dry_run_dir(plan: LaunchPlan, env: dict, out: Path | None) -> Path:
    """Where a dry run stages and keeps its files: where the launch would put its work dir
    ($RUNNER_TEMP, else an explicit --output-dir), else in the cache, never in the workspace."""
    parent = Path(env["RUNNER_TEMP"]) if env.get("RUNNER_TEMP") else out if out else cache_home(env) / "dry-runs"
    return parent / ".infx-launch" / f"{plan.point_id}-dry-run"


def resolve_from_cache(plan: LaunchPlan, env: dict) -> Path | None:
    """Resolve a deferred recipe from the cached checkout of the pin; returns the checkout used."""
    checkout = cache.verified_checkout(cache_home(env), plan.pin.commit)
    if checkout is None:
        return None
    if plan.recipe is None:
        resolve_in_checkout(plan, checkout)  # raises InfxError with located diagnostics
        plan.warnings = [w for w in plan.warnings if w.rule != "recipe-deferred"]
    return checkout


def check_with_srtctl(plan: LaunchPlan, checkout: Path, workspace: Path, env: dict, out: Path | None) -> dict:
    """Run the cached srtctl's dry run on the staged recipe; a rejection is an InfxError."""
    base = cache_home(env)
    problem = cache.srtctl_problem(base, plan.pin.commit)
    if problem is not None:  # missing, incomplete, or not what was installed: never run
        return {"checked": False, "reason": f"{problem} (infx lane cache-seed … --srtctl installs one)"}
    commit = plan.pin.commit
    assert commit is not None  # srtctl_problem refuses a pin without one
    srtctl = cache.srtctl_path(base, commit)
    keep = dry_run_dir(plan, env, out)
    staged = keep / "srt-slurm"
    if keep.exists():
        shutil.rmtree(keep)
    shutil.copytree(checkout, staged, symlinks=True, ignore=shutil.ignore_patterns(".git"))
    eval_workspace = keep / evalenv.WORKSPACE_DIR
    try:
        resolved = stage_checkout(plan, workspace, staged)
        shutil.copyfile(resolved, keep / "resolved-recipe.yaml")
        for name in KEPT:
            shutil.copyfile(staged / name, keep / name)
        if plan.evaluation:  # kept, so what the job would mount can be read
            plan.stage_eval_workspace(workspace, eval_workspace)
        result = dry_run(
            srtctl,
            resolved,
            staged,
            {**env, **plan.environment(str(out or keep), str(eval_workspace), repository=str(workspace))},
        )
    except SrtctlError as exc:
        raise InfxError([error(plan.lane.file, None, "srtctl-dry-run", str(exc), "Fix the route's overlays.")]) from exc
    except evalenv.WorkspaceChanged as exc:
        assert plan.evaluation is not None  # raised only while staging the eval workspace
        raise InfxError(
            [error(plan.evaluation.suite.file, None, "eval-workspace-missing", str(exc), "Run the dry run again.")]
        ) from exc
    finally:
        shutil.rmtree(staged, ignore_errors=True)
    log = keep / "srtctl-dry-run.log"
    atomic_write(log, result.output)
    if result.exit_code != 0:
        raise InfxError(
            [
                error(
                    plan.point.file,
                    plan.point.where(plan.recipe_source.where),
                    "srtctl-dry-run",
                    f"srtctl dry-run ({plan.pin.name} {commit[:12]}) rejected the resolved recipe "
                    f"{plan.resolved_path} (exit {result.exit_code}):\n{result.output.rstrip()[-OUTPUT_TAIL:]}",
                    f"srtctl's whole output: {log}. Fix the recipe so the pinned srtctl accepts it.",
                )
            ]
        )
    body = {
        "checked": True,
        "srtctl": str(srtctl),
        "exit-code": 0,
        "log": str(log),
        "script-path": None,
        "script": None,
    }
    if result.script is not None:
        script = keep / "sbatch_script.sh"
        atomic_write(script, result.script)
        body.update({"script-path": str(script), "script": result.script})
    return body


def enrich(plan: LaunchPlan, workspace: Path, env: dict, out: Path | None) -> dict:
    """The dry-run body: the plan, with cached recipes resolved and the srtctl check when possible."""
    checkout = resolve_from_cache(plan, env)
    body = plan.to_json()
    body["recipe-source"]["checkout"] = str(checkout) if checkout else None
    if checkout is None:
        body["srtctl-dry-run"] = {
            "checked": False,
            "reason": f"{plan.pin.repository} at {plan.pin.commit} is not in {cache_home(env) / cache.CHECKOUTS}",
        }
    else:
        body["srtctl-dry-run"] = check_with_srtctl(plan, checkout, workspace, env, out)
    return body
