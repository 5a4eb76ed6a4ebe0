"""`srtctl apply -f RECIPE --tags T [flags]`: render a batch script from the recipe, call the real sbatch.

The job runs the recipe's benchmark.command (bash) on one node of the test cluster and
writes its log where srt-slurm does: outputs/<job id>/logs/sweep_<job id>.log. As srt-slurm's
custom benchmark does, the recipe's benchmark.env is exported over the job's environment just
before the command; there is no container here, so the path srt-slurm mounts $INFMAX_WORKSPACE
at (/infmax-workspace) is that folder itself, in the command and in those values. As srt-slurm
renders every `sbatch_directives` entry, the recipe's `export` (an eval point's) becomes the job's
`#SBATCH --export=` line; the other directives size a GB300 job (`cpus-per-task: 144`), which the
test cluster's one-node partition cannot hold, so they are left out. The job takes srt-slurm's
eval path from its environment: EVAL_ONLY=true runs only
the lm-eval stage (the job's outcome is the eval's), RUN_EVAL=true runs it after a successful
benchmark (its failure does not fail the job). The stage is srt-slurm's as docs/launch.md
describes it, on the host instead of the serving container: in $INFMAX_WORKSPACE it sources
benchmarks/benchmark_lib.sh, runs `run_eval --framework lm-eval --port <port>` with
EVAL_CONCURRENT_REQUESTS=$EVAL_CONC and `append_lm_eval_summary`, then copies meta_env.json,
results*.json and sample*.jsonl to the job's logs/eval_results/ (lm-eval's output: logs/eval.out).
Where the serving container has lm-eval installed, the stage here takes the lm-eval stand-in of
STANDIN_LM_EVAL (a folder put first on the stage's PYTHONPATH only, so no other process of the
job, and no other test, imports it in place of the real lm-eval).
"""

import argparse
import os
import shlex
import subprocess
import sys
import time
from pathlib import Path

import yaml


def _pause(variable: str, when: str) -> None:
    """Test hook: sleep before/after sbatch, first writing STANDIN_APPLY_MARK so a test knows where apply is."""
    if os.environ.get(variable):
        if os.environ.get("STANDIN_APPLY_MARK"):
            Path(os.environ["STANDIN_APPLY_MARK"]).write_text(when)
        time.sleep(float(os.environ[variable]))


CONTAINER_WORKSPACE = "/infmax-workspace"


def _mapped(text: str) -> str:
    """``text`` as a bash word, with srt-slurm's workspace mount point read as $INFMAX_WORKSPACE."""
    return '"${INFMAX_WORKSPACE}"'.join(shlex.quote(part) if part else "" for part in text.split(CONTAINER_WORKSPACE))


EVAL_STAGE = """eval_stage() {
  ( cd "$INFMAX_WORKSPACE" || exit 1
    source benchmarks/benchmark_lib.sh || exit 1
    if [ -n "${STANDIN_LM_EVAL:-}" ]; then export PYTHONPATH="$STANDIN_LM_EVAL${PYTHONPATH:+:$PYTHONPATH}"; fi
    export EVAL_CONCURRENT_REQUESTS="$EVAL_CONC"
    run_eval --framework lm-eval --port "${STANDIN_FRONTEND_PORT:-8000}" > "$logs/eval.out" 2>&1; code=$?
    append_lm_eval_summary >> "$logs/eval.out" 2>&1
    mkdir -p "$logs/eval_results"
    cp meta_env.json results*.json sample*.jsonl "$logs/eval_results/" 2>/dev/null
    exit $code )
}"""


def main() -> None:
    parser = argparse.ArgumentParser(prog="srtctl")
    sub = parser.add_subparsers(dest="command", required=True)
    apply = sub.add_parser("apply")
    apply.add_argument("-f", "--file", required=True)
    apply.add_argument("--tags", default="")
    apply.add_argument("--no-preflight", action="store_true")
    args = parser.parse_args()
    if os.environ.get("STANDIN_APPLY_FAIL"):
        print(f"error: {os.environ['STANDIN_APPLY_FAIL']}")
        sys.exit(3)
    cluster = yaml.safe_load(Path("srtslurm.yaml").read_text())
    recipe = yaml.safe_load(Path(args.file).read_text())
    time_limit = (recipe.get("slurm") or {}).get("time_limit") or cluster["default_time_limit"]
    benchmark = recipe.get("benchmark") or {}
    command = benchmark.get("command", "true")
    exports = [f"export {name}={_mapped(str(value))}" for name, value in (benchmark.get("env") or {}).items()]
    script = Path("outputs") / f"{recipe['name']}.sbatch"
    script.parent.mkdir(parents=True, exist_ok=True)
    export = (recipe.get("sbatch_directives") or {}).get("export")
    directives = [f"#SBATCH --export={export}"] if export else []
    script.write_text(
        "\n".join(
            [
                "#!/bin/bash",
                f"#SBATCH --job-name={recipe['name']}",
                f"#SBATCH --partition={cluster['default_partition']}",
                f"#SBATCH --time={time_limit}",
                "#SBATCH --nodes=1",
                "#SBATCH --output=/dev/null",
                *directives,
                'logs="$PWD/outputs/$SLURM_JOB_ID/logs"; mkdir -p "$logs"',
                'exec > "$logs/sweep_$SLURM_JOB_ID.log" 2>&1',
                f"echo 'tags={args.tags}'",
                EVAL_STAGE,
                'if [ "${EVAL_ONLY:-false}" = "true" ]; then eval_stage; exit $?; fi',
                "benchmark() {",
                *exports,
                command.replace(CONTAINER_WORKSPACE, "${INFMAX_WORKSPACE}").strip() or "true",
                "}",
                "benchmark; code=$?",
                'if [ "$code" = 0 ] && [ "${RUN_EVAL:-false}" = "true" ]; then eval_stage || echo "eval failed (the '
                'job does not)"; fi',
                "exit $code",
                "",
            ]
        )
    )
    _pause("STANDIN_APPLY_SLEEP_BEFORE", "before")
    print(f"🚀 Submitting: {recipe['name']}")
    done = subprocess.run(["sbatch", str(script)], capture_output=True, text=True)
    if done.returncode != 0:
        print(f"❌ sbatch failed: {done.stderr}")
        sys.exit(done.returncode)
    # What srt-slurm's srtctl does and prints (v1.0.25 … v1.0.50): the job id is the last word of
    # sbatch's "Submitted batch job <id>", then the lines below.
    job_id = done.stdout.strip().split()[-1]
    _pause("STANDIN_APPLY_SLEEP_AFTER", "after")
    log_dir = Path.cwd() / "outputs" / job_id / "logs"
    print(f"✅ Job {job_id} submitted!")
    print(f"📁 Logs: {log_dir}")
    print(f"📋 Monitor: tail -f {log_dir}/sweep_{job_id}.log")
    print(f"📊 Queue: squeue --job {job_id}")


if __name__ == "__main__":
    main()
