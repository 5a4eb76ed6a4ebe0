"""The harness in the workspace, run as srt-slurm's lm-eval stage runs it.

srt-slurm's own ``scripts/lm-eval/bench.sh`` (read from the bundle at every pinned commit; its only
change here is ``/logs``, the container mount of the job's log folder, pointing at a temp folder)
runs with bash in a workspace infx staged, sources our ``benchmark_lib.sh`` and calls it as in the
job. lm-eval itself is the stand-in at the process boundary (``python3 -m lm_eval``: no model
server and no data sets here): it records its argv and writes files in lm-eval's output layout.
"""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from infx.launch.lane import load_lane
from infx.launch.plan import plan_point
from infx.launch.pointfile import load_point
from testing.corpus import SRT_SLURM_BUNDLE
from testing.launchkit import Workspace, lane_profile, point, v1_recipe

PINS = {
    "v1.0.25": "3435776cd6db4c14f8b771ff7a3976deb62fe133",
    "v1.0.36": "cb651682117df129162cd276cf567ec70dc57b36",
    "v1.0.50": "e4019633c9e2bc25f38c44b81edf52bb0504d937",
    "sa-submission-q2-2026": "deb1dfd9934398664f92d194169c183e009da83b",
    "aflowers/gb200-dsv4-recipes": "758becd9d18dcab1fb722abc1875d73ee81a20cb",
}

STANDIN = """
import json, os, sys
from pathlib import Path
args = sys.argv[1:]
def value(flag):
    return args[args.index(flag) + 1]
with open(os.environ["STANDIN_ARGV_LOG"], "a") as log:
    log.write(json.dumps(args) + "\\n")
model_args = dict(item.split("=", 1) for item in value("--model_args").split(","))
conc = model_args["num_concurrent"]
folder = Path(value("--output_path")) / model_args["model"].replace("/", "__")
folder.mkdir(parents=True, exist_ok=True)
tasks = value("--tasks").split(",")
(folder / "results_2026-12-01T10-00-00.000001.json").write_text(json.dumps(
    {"lm_eval_version": "0.4.13", "results": {t: {"exact_match,strict-match": 0.9} for t in tasks},
     "concurrency": conc}))
for task in tasks:
    (folder / f"samples_{task}_2026-12-01T10-00-00.000001.jsonl").write_text(json.dumps({"doc_id": 0}) + "\\n")
sys.exit(1 if os.environ.get("STANDIN_FAIL_CONC") == conc else 0)
"""


@pytest.fixture(scope="module")
def bench_scripts(tmp_path_factory):
    """srt-slurm's lm-eval bench.sh at each pinned commit, with /logs mapped into a temp folder."""
    base = tmp_path_factory.mktemp("bench")
    found = {}
    for ref, commit in PINS.items():
        text = (
            subprocess.run(
                [
                    "git",
                    "--git-dir",
                    str(base / "repo"),
                    "show",
                    f"{commit}:src/srtctl/benchmarks/scripts/lm-eval/bench.sh",
                ],
                capture_output=True,
                text=True,
            ).stdout
            if (base / "repo").exists()
            else None
        )
        if text is None:
            subprocess.run(
                ["git", "clone", "--bare", "-q", str(SRT_SLURM_BUNDLE), str(base / "repo")],
                check=True,
                capture_output=True,
            )
            text = subprocess.run(
                [
                    "git",
                    "--git-dir",
                    str(base / "repo"),
                    "show",
                    f"{commit}:src/srtctl/benchmarks/scripts/lm-eval/bench.sh",
                ],
                capture_output=True,
                text=True,
                check=True,
            ).stdout
        found[ref] = text
    return found


@pytest.fixture
def staged(tmp_path):
    ws = Workspace(tmp_path / "repo", lane_profile("file:///nonexistent", "a" * 40))
    ws.recipe("recipe.yaml", v1_recipe())
    path = ws.point(point(conc=(16, 32), **{"run-eval": True, "eval-only": True, "eval-all-concs": True}))
    plan = plan_point(load_lane("testlane", ws.root), load_point(str(path), {}), ws.root, env={})
    workspace = plan.stage_eval_workspace(ws.root, tmp_path / "infmax-workspace")
    standin = tmp_path / "standin"
    (standin / "lm_eval").mkdir(parents=True)
    (standin / "lm_eval" / "__init__.py").write_text("")
    (standin / "lm_eval" / "__main__.py").write_text(STANDIN)
    (standin / "lm_eval-0.4.13.dist-info").mkdir()  # the installed version the runner asks importlib.metadata for
    (standin / "lm_eval-0.4.13.dist-info" / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: lm_eval\nVersion: 0.4.13\n"
    )
    return plan, workspace, standin


def run_bench(script: str, workspace: Path, standin: Path, tmp_path: Path, **env) -> subprocess.CompletedProcess:
    logs = tmp_path / "logs"
    path = tmp_path / "bench.sh"
    path.write_text(script.replace("/logs/", f"{logs}/"))
    environment = {
        "PATH": os.environ["PATH"],
        "PYTHONPATH": str(standin),
        "STANDIN_ARGV_LOG": str(tmp_path / "argv.log"),
        "MODEL_NAME": "served-dsv4",
        "EVAL_CONC": "16 32",
        "INFX_EVAL_NO_INSTALL": "1",
        **env,
    }
    # the container's python3 is the one that runs the harness; here the test's own interpreter
    (tmp_path / "bin").mkdir(exist_ok=True)
    (tmp_path / "bin" / "python3").unlink(missing_ok=True)
    (tmp_path / "bin" / "python3").symlink_to(sys.executable)
    environment["PATH"] = f"{tmp_path / 'bin'}{os.pathsep}{environment['PATH']}"
    return subprocess.run(
        ["bash", str(path), "http://localhost:8123", str(workspace)],
        capture_output=True,
        text=True,
        env=environment,
        timeout=120,
    )


@pytest.mark.parametrize("ref", list(PINS))
def test_srt_slurms_lm_eval_stage_runs_the_harness_and_collects_its_files(bench_scripts, staged, tmp_path, ref):
    plan, workspace, standin = staged
    done = run_bench(bench_scripts[ref], workspace, standin, tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    collected = sorted(p.name for p in (tmp_path / "logs" / "eval_results").iterdir())
    assert collected == [
        "meta_env.json",
        "results_2026-12-01T10-00-00.000001_conc16.json",
        "results_2026-12-01T10-00-00.000001_conc32.json",
        "samples_gsm8k_2026-12-01T10-00-00.000001_conc16.jsonl",
        "samples_gsm8k_2026-12-01T10-00-00.000001_conc32.jsonl",
    ]
    meta = json.loads((tmp_path / "logs" / "eval_results" / "meta_env.json").read_text())
    assert (meta["conc"], meta["eval_concs"], meta["completed_eval_concs"], meta["failed_eval_concs"]) == (
        16,
        [16, 32],
        [16, 32],
        [],
    )
    assert meta["model"] == "served-dsv4" and meta["is_multinode"] is True and meta["infmax_model_prefix"] == "dsv4"
    assert (meta["prefill_tp"], meta["decode_num_workers"], meta["isl"], meta["hw"]) == (4, 1, "8", "testlane")
    assert meta["infx"] == {
        "point-id": plan.point_id,
        "config-key": "test-key",
        "lane": "testlane",
        "result-key": plan.result_key(),
    }
    calls = [json.loads(line) for line in (tmp_path / "argv.log").read_text().splitlines()]
    assert len(calls) == 2  # one lm-eval run per concurrency, in order
    for conc, argv in zip((16, 32), calls):
        assert argv[:4] == [
            "--model",
            "local-chat-completions",
            "--model_args",
            f"model=served-dsv4,base_url=http://localhost:8123/v1/chat/completions,num_concurrent={conc},"
            "max_retries=5,timeout=1800,tokenized_requests=False",
        ]
        assert (
            argv[argv.index("--tasks") + 1] == "gsm8k" and "--apply_chat_template" in argv and "--log_samples" in argv
        )  # GPQA: opt-in
        assert Path(argv[argv.index("--include_path") + 1]) == (workspace / "benchmarks" / "evals").resolve()
        assert "--limit" not in argv


def test_a_failed_concurrency_is_recorded_and_fails_the_stage_after_the_files_are_collected(
    bench_scripts, staged, tmp_path
):
    _, workspace, standin = staged
    done = run_bench(bench_scripts["v1.0.50"], workspace, standin, tmp_path, STANDIN_FAIL_CONC="32")
    assert done.returncode != 0 and "lm-eval evaluation failed" in done.stdout
    meta = json.loads((tmp_path / "logs" / "eval_results" / "meta_env.json").read_text())
    assert (meta["completed_eval_concs"], meta["failed_eval_concs"]) == ([16], [32])
    assert (tmp_path / "logs" / "eval_results" / "results_2026-12-01T10-00-00.000001_conc16.json").is_file()


def test_one_concurrency_keeps_lm_evals_file_names_and_a_smoke_limit_is_passed_on(bench_scripts, staged, tmp_path):
    _, workspace, standin = staged
    done = run_bench(bench_scripts["v1.0.25"], workspace, standin, tmp_path, EVAL_CONC="64", EVAL_LIMIT="5")
    assert done.returncode == 0, done.stdout + done.stderr
    names = sorted(p.name for p in (tmp_path / "logs" / "eval_results").iterdir())
    assert "results_2026-12-01T10-00-00.000001.json" in names and not any("_conc" in n for n in names)
    meta = json.loads((tmp_path / "logs" / "eval_results" / "meta_env.json").read_text())
    assert meta["conc"] == 64 and "eval_concs" not in meta
    [argv] = [json.loads(line) for line in (tmp_path / "argv.log").read_text().splitlines()]
    assert argv[argv.index("--limit") + 1] == "5"


def test_the_pinned_harness_version_is_required_when_installing_is_off(bench_scripts, staged, tmp_path):
    _, workspace, standin = staged
    metadata = standin / "lm_eval-0.4.13.dist-info" / "METADATA"
    metadata.write_text(metadata.read_text().replace("0.4.13", "0.4.2"))
    done = run_bench(bench_scripts["v1.0.50"], workspace, standin, tmp_path)
    assert done.returncode != 0 and "lm-eval 0.4.13 is required, 0.4.2 is installed" in done.stdout + done.stderr
    assert not (tmp_path / "argv.log").exists()
