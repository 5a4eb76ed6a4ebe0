#!/usr/bin/env bash
# infx's harness entry point for srt-slurm's lm-eval stage (docs/launch.md, "Evals").
#
# `infx launch` copies this file to <workspace>/benchmarks/benchmark_lib.sh. srt-slurm's
# benchmarks/scripts/lm-eval/bench.sh (the same file at every pinned commit) runs in the serving
# container with the workspace mounted at /infmax-workspace: it cds there, sources this file, calls
# `run_eval --framework lm-eval --port <frontend port>`, then `append_lm_eval_summary`, and copies
# meta_env.json, results*.json and sample*.jsonl from the workspace to /logs/eval_results/.
# Both functions hand over to run_lm_eval.py beside the task files; what to run comes from
# infx-eval.json, which infx writes into the workspace from the point and benchmarks/evals/suite.yaml.

_INFX_WORKSPACE="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
_INFX_EVAL_RUNNER="${_INFX_WORKSPACE}/benchmarks/evals/run_lm_eval.py"
_INFX_EVAL_PLAN="${_INFX_WORKSPACE}/infx-eval.json"

run_eval() {
    local port="" framework="lm-eval"
    while [ "$#" -gt 0 ]; do
        case "$1" in
            --port) port="${2:-}"; shift 2 ;;
            --framework) framework="${2:-}"; shift 2 ;;
            *) echo "run_eval: unknown argument '$1' (accepted: --framework lm-eval --port N)" >&2; return 2 ;;
        esac
    done
    if [ "$framework" != "lm-eval" ]; then
        echo "run_eval: framework '$framework' is not lm-eval, the only one infx's workspace provides" >&2
        return 2
    fi
    # bench.sh exports EVAL_CONCURRENT_REQUESTS from EVAL_CONC: one value, or several separated by spaces.
    python3 "$_INFX_EVAL_RUNNER" run --plan "$_INFX_EVAL_PLAN" --port "$port" --concs "${EVAL_CONCURRENT_REQUESTS:-}"
}

append_lm_eval_summary() {
    python3 "$_INFX_EVAL_RUNNER" summary --plan "$_INFX_EVAL_PLAN"
}
