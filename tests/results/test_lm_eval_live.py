"""The real lm-evaluation-harness against the stand-in server, end to end: lm-eval writes its
result files, they are staged as the eval stage stages them, infx collects and gates them.

lm-eval (`pip install -e '.[evals]'`, as .ci/run does; its API models need no torch) runs as its own
process, as on the lane; `INFX_LM_EVAL_PYTHON` names another interpreter that has it. The stand-in
(tests/testing/lm_eval_standin.py) answers by a fixed policy, so the scores are known exactly.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import pytest

from infx.results.evals.collection import collect_evals
from testing.cli import run_cli
from testing.evalsets import results_json
from testing.lm_eval_standin import META, ChatHandler, Policy, run_lm_eval, staged, standin_server, write_task

PYTHON = os.environ.get("INFX_LM_EVAL_PYTHON", sys.executable)
QUESTIONS = 40


@pytest.fixture(scope="module")
def harness() -> str:
    done = subprocess.run([PYTHON, "-c", "import lm_eval; print(lm_eval.__version__)"], capture_output=True, text=True)
    if done.returncode != 0:
        pytest.fail(
            f"lm-eval is not installed for {PYTHON}: pip install -e '.[evals]' (or set "
            f"INFX_LM_EVAL_PYTHON)\n{done.stderr[-500:]}"
        )
    return done.stdout.strip()


def test_lm_eval_scores_what_the_stand_in_answered_and_a_dead_engine_leaves_no_result(tmp_path, harness):
    task = write_task(tmp_path / "task", QUESTIONS)
    folder = tmp_path / "artifact" / "eval"
    folder.mkdir(parents=True)
    completed, failed = [], []
    with standin_server() as server:
        for conc, policy in ((4, Policy(34, 4)), (8, Policy(0, fail=True))):  # 34/40 strict, 38/40 flexible; then gone
            ChatHandler.policy = policy
            out = tmp_path / f"out{conc}"
            done = run_lm_eval(server.server_address[1], task, out, conc, tmp_path, python=PYTHON)
            if done.returncode != 0:  # what the eval stage records as a failed concurrency
                failed.append(conc)
                assert not list(out.glob("*/results_*.json")), "lm-eval left a result after failing"
                continue
            results, samples = staged(out)
            shutil.copy(results, folder / f"{results.stem}_conc{conc}.json")
            for sample in samples:
                shutil.copy(sample, folder / f"{sample.stem}_conc{conc}.jsonl")
            completed.append(conc)
    assert (completed, failed) == ([4], [8])
    (folder / "meta_env.json").write_text(
        json.dumps(
            {**META, "conc": 4, "eval_concs": [4, 8], "completed_eval_concs": completed, "failed_eval_concs": failed}
        )
    )
    evals = collect_evals([tmp_path / "artifact"])
    [row] = evals.rows
    assert (row.conc, row.task, row.em_strict, row.em_flexible, row.n_eff) == (4, "gsm8k", 34 / 40, 38 / 40, 40)
    assert row.protocol.lm_eval_version == harness and row.protocol.n_shot == 5 and row.protocol.chat_template
    assert [p.rule for p in evals.problems] == [
        "eval-batch-failed-conc",
        "eval-batch-conc-missing",
        "eval-batch-result-missing",
    ]
    # The gate: 0.85 is below the dsv4 floor, and the failed concurrency is reported too.
    done = run_cli(
        "results", "check-evals", str(results_json(tmp_path / "results.json", evals.to_json())), "--format", "json"
    )
    report = json.loads(done.stdout)
    assert done.returncode == 1
    assert sorted(d["rule"] for d in report["diagnostics"] if d["severity"] == "error") == [
        "eval-batch-conc-missing",
        "eval-batch-failed-conc",
        "eval-batch-result-missing",
        "eval-below-threshold",
    ]
    assert [(v["metric"], v["passed"]) for v in report["checked"]] == [("em_strict", False), ("em_flexible", True)]
