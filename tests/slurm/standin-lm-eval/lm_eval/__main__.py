"""`python3 -m lm_eval ...` in a job of the tests' Slurm cluster: the stand-in at the process boundary
for lm-evaluation-harness, which needs a served model and the task's data set (neither is here).

It answers as lm-eval 0.4.13 does for infx's harness (benchmarks/evals/run_lm_eval.py): it reads the
arguments the harness passes (--model_args with the served model's name, --tasks, --output_path,
--log_samples) and writes, under <output_path>/<model with / as __>/, `results_<time>.json` and one
`samples_<task>_<time>.jsonl` per task. The files are the real lm-eval's (tests/data/results/evals/
flat/, written by lm-eval 0.4.13 against tests/testing/lm_eval_standin.py), with the date of this run
and, when STANDIN_EVAL_STRICT / STANDIN_EVAL_FLEXIBLE are set, those exact-match scores.
STANDIN_EVAL_FAIL_CONC: at this concurrency (num_concurrent) lm-eval fails, writing nothing.
"""

import datetime
import json
import os
import sys
import time
from pathlib import Path

FIXTURES = Path(__file__).resolve().parents[3] / "data" / "results" / "evals" / "flat"
RESULT, SAMPLES = "results_2026-12-01T17-16-46.221782.json", "samples_gsm8k_2026-12-01T17-16-46.221782.jsonl"


def value(args, flag):
    return args[args.index(flag) + 1]


def main(args):
    model_args = dict(item.split("=", 1) for item in value(args, "--model_args").split(","))
    if os.environ.get("STANDIN_EVAL_FAIL_CONC") == model_args["num_concurrent"]:
        print("lm-eval stand-in: the engine died at concurrency " + model_args["num_concurrent"], file=sys.stderr)
        return 1
    folder = Path(value(args, "--output_path")) / model_args["model"].replace("/", "__")
    folder.mkdir(parents=True, exist_ok=True)
    stamp = datetime.datetime.now().strftime("%Y-%m-%dT%H-%M-%S.%f")
    result = json.loads((FIXTURES / RESULT).read_text())
    result["date"] = time.time()
    for task in value(args, "--tasks").split(","):
        scores = result["results"].setdefault(task, dict(result["results"]["gsm8k"]))
        for metric, variable in (
            ("exact_match,strict-match", "STANDIN_EVAL_STRICT"),
            ("exact_match,flexible-extract", "STANDIN_EVAL_FLEXIBLE"),
        ):
            if os.environ.get(variable):
                scores[metric] = float(os.environ[variable])
        if "--log_samples" in args:
            (folder / f"samples_{task}_{stamp}.jsonl").write_bytes((FIXTURES / SAMPLES).read_bytes())
    (folder / f"results_{stamp}.json").write_text(json.dumps(result, indent=2))
    print(
        f"lm-eval stand-in: {len(result['results'])} task(s) at concurrency {model_args['num_concurrent']} -> {folder}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
