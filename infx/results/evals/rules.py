"""Every rule a collected eval folder can break, and the hint each gives (docs/results.md lists them)."""

from __future__ import annotations

# Every rule a collected eval folder can break, with the line docs/results.md gives it.
RULES = {
    "eval-meta-unreadable": "meta_env.json is not a readable, strict JSON object.",
    "eval-meta-field": 'a meta_env.json field has a type the row cannot hold (e.g. tp "eight").',
    "eval-result-unreadable": "a results*.json is not a readable, strict JSON object (NaN, Infinity and duplicate "
    "keys are refused).",
    "eval-result-malformed": "an lm-eval result file whose `results`, task config or metric values are not what "
    "lm-eval writes.",
    "eval-row-schema": "a row the eval-row schema refuses (e.g. a score above 1).",
    "eval-missing": "no lm-eval result: meta_env.json without a result file, an eval point's artifact without "
    "eval/meta_env.json, or (check-evals --plan of an evals-only or all-evals run) a planned eval point without an "
    "eval row.",
    "eval-conc-mismatch": "the folder ran other concurrencies than its point asked for (`eval-conc`, or every `conc` "
    "of an `eval-all-concs` point).",
    "eval-batch-manifest-invalid": "`eval_concs` is present but the three manifest fields are not all lists of "
    "positive whole numbers.",
    "eval-batch-conc-duplicate": "a concurrency is listed twice in `eval_concs` or `completed_eval_concs`.",
    "eval-batch-failed-conc": "`failed_eval_concs` is not empty: lm-eval failed at these concurrencies.",
    "eval-batch-conc-missing": "a concurrency of `eval_concs` is not in `completed_eval_concs`.",
    "eval-batch-conc-unexpected": "`completed_eval_concs` holds a concurrency `eval_concs` does not.",
    "eval-batch-file-unsuffixed": "a result file of a batched eval has no `_conc<N>` suffix.",
    "eval-batch-result-missing": "a concurrency of `eval_concs` has no result file.",
    "eval-batch-result-unexpected": "a result file's concurrency is not in `eval_concs`.",
}

HINTS = {
    "eval-meta-unreadable": "meta_env.json is written by the eval stage; rerun the eval point.",
    "eval-meta-field": "Write the field as the eval stage does: a whole number, true/false or text.",
    "eval-result-unreadable": "A truncated or hand-edited lm-eval result; rerun the eval point.",
    "eval-result-malformed": "Only lm-eval's own result files (results_<date>.json) are read; rerun the eval point.",
    "eval-row-schema": "An lm-eval score is a fraction from 0 to 1; check the task's metric.",
    "eval-missing": "lm-eval wrote no result: read the point's logs (eval stage) and rerun it.",
    "eval-conc-mismatch": "The eval ran at other concurrencies than planned; rerun the point with its EVAL_CONC.",
}
HINTS.update(
    {
        rule: "A batched eval must complete every concurrency it lists, each with one result file; "
        "rerun the point (infx github rerun-failed)."
        for rule in RULES
        if rule.startswith("eval-batch-")
    }
)
