"""What srt-slurm's lm-eval stage leaves for an eval point (its job's logs/eval_results/, which
infx launch stages as eval/ in the point artifact), made from the real lm-eval result under
tests/data/results/evals/ (written by lm-eval 0.4.13 against tests/testing/lm_eval_standin.py).
Shared by the results, GitHub and workflow tests."""

from __future__ import annotations

import json
from pathlib import Path

DATA = Path(__file__).resolve().parents[1] / "data" / "results"
EVALS = DATA / "evals"
LM_EVAL_RESULT = EVALS / "flat" / "results_2026-12-01T17-16-46.221782.json"  # the real lm-eval's: 0.9052 / 0.9401
LM_EVAL_SAMPLES = EVALS / "flat" / "samples_gsm8k_2026-12-01T17-16-46.221782.jsonl"


def eval_stage_output(
    row: dict, dest: Path, strict: float | None = None, flexible: float | None = None, failed: tuple[int, ...] = ()
) -> Path:
    """What srt-slurm's eval stage leaves for this point (``logs/eval_results/``, staged as eval/):
    meta_env.json as infx's harness writes it (the point's metadata infx puts in infx-eval.json,
    plus conc, the served model and, for several concurrencies, the batch manifest) and per
    concurrency the real lm-eval result (tests/data/results/evals/flat/, its scores replaced when
    given) and samples, `_conc<N>` before the extension when there are several. ``failed``:
    concurrencies where lm-eval died (no file; listed as failed)."""
    from infx.evalsuite import PointEval
    from infx.launch.evalenv import point_meta
    from infx.points import point_id

    concs = list(PointEval.of_point(row).concs)
    dest.mkdir(parents=True, exist_ok=True)
    meta = {
        **point_meta(row),
        "model": "served-model",
        "conc": concs[0],
        "infx": {
            "point-id": point_id(row),
            "config-key": row.get("config-key"),
            "lane": "gb300-nv",
            "result-key": row.get("result-key"),
        },
    }
    if len(concs) > 1:
        meta.update(
            {
                "eval_concs": concs,
                "completed_eval_concs": [c for c in concs if c not in failed],
                "failed_eval_concs": [c for c in concs if c in failed],
            }
        )
    (dest / "meta_env.json").write_text(json.dumps(meta, indent=2))
    result = json.loads(LM_EVAL_RESULT.read_text())
    task = result["results"]["gsm8k"]
    if strict is not None:
        task["exact_match,strict-match"] = strict
    if flexible is not None:
        task["exact_match,flexible-extract"] = flexible
    for index, conc in enumerate(c for c in concs if c not in failed):
        stamp = f"2026-12-02T10-00-{index:02d}.000000"
        suffix = f"_conc{conc}" if len(concs) > 1 else ""
        (dest / f"results_{stamp}{suffix}.json").write_text(json.dumps({**result, "date": 1.8e9 + index}, indent=1))
        (dest / f"samples_gsm8k_{stamp}{suffix}.jsonl").write_bytes(LM_EVAL_SAMPLES.read_bytes())
    return dest
