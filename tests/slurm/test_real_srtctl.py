"""The real srtctl of every pinned NVIDIA srt-slurm commit: dry runs of every bundled row, real launches.

srtctl is installed from tests/data/srt-slurm/nvidia-srt-slurm.bundle into infx's cache by
`infx lane cache-seed --srtctl` (fixture ``srtctl_cache``). Routes pinned to repositories not
in the bundle (sa-schema2, power-producer) keep the stand-in srtctl (tests/slurm/standin).
"""

from __future__ import annotations

import copy
import json
import os
import re
import shutil
import subprocess
import tarfile
from pathlib import Path

import pytest
import yaml

from testing.cli import run_cli
from testing.corpus import SRT_SLURM_BUNDLE
from testing.launchkit import REPO, add_harness

NVIDIA_PINS = (
    "nvidia-v1.0.25",
    "nvidia-v1.0.36",
    "nvidia-v1.0.50",
    "nvidia-sa-submission-q2-2026",
    "nvidia-gb200-dsv4-recipes",
)
STANDIN_BIN = REPO / "tests" / "slurm" / "standin-bin"


def infx(
    *argv: str, cache: Path, root: Path = REPO, env: dict | None = None, timeout: float = 600
) -> subprocess.CompletedProcess:
    return run_cli(
        *argv,
        cwd=root,
        env={"INFX_CACHE_DIR": str(cache), "GITHUB_WORKSPACE": str(root), **(env or {})},
        timeout=timeout,
    )


def dry_run(point: dict, cache: Path, tmp: Path, lane: str = "gb300-nv", root: Path = REPO, fmt: str = "json"):
    path = tmp / "point.json"
    path.write_text(json.dumps(point))
    done = infx(
        "launch",
        "--lane",
        lane,
        "--point",
        str(path),
        "--dry-run",
        "--format",
        fmt,
        "--output-dir",
        str(tmp),
        cache=cache,
        root=root,
    )
    return done, (json.loads(done.stdout) if fmt == "json" else None)


@pytest.fixture(scope="module")
def gb300_rows(harness_repo):
    """Every bundled row and its plan, in a checkout with an AgentX harness for the agentic recipes
    (this repository has none and refuses them: tests/launch/test_agentic_launch.py)."""
    from bench.gb300_points import gb300_points
    from infx.launch.lane import load_lane
    from infx.launch.plan import plan_point
    from infx.launch.pointfile import PointFile

    lane = load_lane("gb300-nv", REPO)
    return [(row, plan_point(lane, PointFile(data=row, file="row.json"), harness_repo)) for row in gb300_points(REPO)]


@pytest.fixture(scope="module")
def row_dry_runs(srtctl_cache, gb300_rows, harness_repo, tmp_path_factory) -> list:
    """`infx launch --dry-run` of every bundled row (the dry run and its JSON body), once for the
    tests that read them: a dry run with the real srtctl costs seconds."""
    out = tmp_path_factory.mktemp("row-dry-runs")
    return [dry_run(row, srtctl_cache["base"], out, root=harness_repo) for row, _ in gb300_rows]


def test_the_real_srtctl_accepts_the_resolved_recipe_of_every_row_on_an_nvidia_pin(
    srtctl_cache, gb300_rows, row_dry_runs
):
    assert all(srtctl_cache["pins"][name]["srtctl"] for name in NVIDIA_PINS)
    checked: dict[str, int] = {}
    for (row, plan), (done, body) in zip(gb300_rows, row_dry_runs):
        assert done.returncode == 0, (row["config-key"], body, done.stderr)
        check = body["srtctl-dry-run"]
        if plan.pin.name not in NVIDIA_PINS:  # sa-schema2, power-producer: not in the bundle, stand-in only
            assert check["checked"] is False and "is not in" in check["reason"]
            continue
        assert (
            check["checked"]
            and check["exit-code"] == 0
            and check["srtctl"] == srtctl_cache["pins"][plan.pin.name]["srtctl"]
        )
        script = check["script"]
        # the script srtctl rendered is the job infx would submit: its name, nodes and partition
        assert f"#SBATCH --job-name={body['job-name']}\n" in script, row["config-key"]
        assert f"#SBATCH --nodes={row['node-count']}\n" in script, (row["config-key"], row["node-count"])
        assert f"#SBATCH --partition={body['partition']}\n" in script and script.startswith("#!/bin/bash\n")
        assert Path(check["script-path"]).read_text() == script
        kept = Path(check["script-path"]).parent
        assert yaml.safe_load((kept / "resolved-recipe.yaml").read_text()) == body["recipe"]
        assert yaml.safe_load((kept / "srtslurm.yaml").read_text())["model_paths"] == {
            body["model"]["alias"]: body["model"]["path"]
        }
        checked[plan.pin.name] = checked.get(plan.pin.name, 0) + 1
    # every NVIDIA pin is exercised, by the 61 bundled rows on NVIDIA routes
    assert set(checked) == set(NVIDIA_PINS) and sum(checked.values()) == 61, checked


def test_text_dry_run_names_the_kept_script_outside_the_workspace(srtctl_cache, gb300_rows, tmp_path, harness_repo):
    row, _ = next((r, p) for r, p in gb300_rows if p.pin.name == "nvidia-v1.0.50")
    path = tmp_path / "point.json"
    path.write_text(json.dumps(row))
    done = infx(
        "launch", "--lane", "gb300-nv", "--point", str(path), "--dry-run", cache=srtctl_cache["base"], root=harness_repo
    )  # no --output-dir
    assert done.returncode == 0, done.stderr
    [line] = [line for line in done.stdout.splitlines() if line.startswith("srtctl ")]
    script = Path(re.search(r"sbatch script: (\S+);", line).group(1))
    assert "dry-run accepted" in line and script.is_file() and "#SBATCH --nodes=" in script.read_text()
    assert script.is_relative_to(srtctl_cache["base"] / "dry-runs") and not (harness_repo / ".infx-launch").exists()


def test_a_recipe_the_real_srtctl_rejects_fails_the_dry_run_with_its_message(srtctl_cache, gb300_rows, tmp_path):
    row, plan = next(
        (r, p) for r, p in gb300_rows if p.pin.name == "nvidia-v1.0.36" and p.recipe_source.origin == "workspace"
    )
    root = tmp_path / "ws"
    for folder in ("runners", "benchmarks"):
        shutil.copytree(REPO / folder, root / folder)
    add_harness(root)
    recipe_path = root / Path(plan.recipe_source.path).relative_to(plan.root)
    data = yaml.safe_load(recipe_path.read_text())
    (data["base"] if "base" in data else data)["resources"]["bogus_key"] = (
        1  # infx ignores it; srtctl's schema does not
    )
    recipe_path.write_text(yaml.safe_dump(data, sort_keys=False))
    done, body = dry_run(row, srtctl_cache["base"], tmp_path, root=root)
    assert done.returncode == 1 and not body["ok"], body
    [diag] = body["diagnostics"]
    assert diag["rule"] == "srtctl-dry-run" and "bogus_key" in diag["message"] and "Unknown field" in diag["message"]


def benchmark_env_table(log: str) -> dict[str, str]:
    """The rows of scope `benchmark` in the environment table `srtctl dry-run` prints: the variables
    srt-slurm exports for the benchmark command of the job it renders."""
    rows = re.findall(r"│ *benchmark *│ *([A-Z_][A-Z0-9_]*) *│ *(.*?) *│", log)
    return dict(rows)


def test_the_real_srtctl_renders_the_agentx_fast_profile_for_every_agentic_row(
    srtctl_cache, gb300_rows, row_dry_runs, tmp_path, harness_repo
):
    """Under the agentx-fast label (its plan step, infx.changelog.plan.agentx_fast) every agentic row on
    an NVIDIA pin reaches srtctl with DURATION 1200 and one warm-up request per lane in the benchmark's
    environment; the canonical row (its dry run from ``row_dry_runs``) with 3600 and the harness's own warm-up."""
    from infx.changelog.plan import agentx_fast
    from infx.sweepplan import SweepPlan

    agentic = [
        (row, ran)
        for (row, plan), ran in zip(gb300_rows, row_dry_runs)
        if row.get("scenario-type") == "agentic-coding" and plan.pin.name in NVIDIA_PINS
    ]
    rows = [row for row, _ in agentic]
    fast_rows = agentx_fast(SweepPlan({"agentic": rows})).buckets["agentic"]
    assert len(rows) == 16  # vllm-agentic (v1.0.36) 10, trt-dsv4-agentic (v1.0.50) 6
    pins = set()
    for (normal, normal_run), fast in zip(agentic, fast_rows):
        fast_run = dry_run(fast, srtctl_cache["base"], tmp_path, root=harness_repo)
        for row, (done, body), duration, warmup in ((fast, fast_run, "1200", "1"), (normal, normal_run, "3600", None)):
            assert done.returncode == 0 and body["srtctl-dry-run"]["checked"], (row["config-key"], body, done.stderr)
            table = benchmark_env_table(Path(body["srtctl-dry-run"]["log"]).read_text())
            assert table["DURATION"] == duration and table.get("AIPERF_WARMUP_REQUESTS_PER_LANE") == warmup, (
                row["config-key"],
                table,
            )
            assert table["CONC"] == str(row["conc"][0])
            pins.add(body["srt-slurm"]["pin"])
    assert pins == {"nvidia-v1.0.36", "nvidia-v1.0.50"}


def test_every_agentic_pin_exports_benchmark_env_last_and_mounts_the_workspace(srtctl_cache):
    """The srt-slurm source infx relies on for agentic points, at each pin an agentic route uses: the
    custom benchmark's environment is the recipe's benchmark.env, exported after the job's and the
    recipe's own environment, and $INFMAX_WORKSPACE is mounted at /infmax-workspace."""
    for pin in ("nvidia-v1.0.36", "nvidia-v1.0.50"):
        checkout = Path(srtctl_cache["pins"][pin]["path"])
        custom = (checkout / "src/srtctl/benchmarks/custom.py").read_text()
        assert "return dict(config.benchmark.env)" in custom and '["bash", "-lc", config.benchmark.command]' in custom
        stage = (checkout / "src/srtctl/cli/mixins/benchmark_stage.py").read_text()
        assert (
            "env_to_set = self._get_benchmark_env(runner)\n        env_to_set.update(runner.get_environment(" in stage
        )
        runtime = (checkout / "src/srtctl/core/runtime.py").read_text()
        assert 'os.environ.get("INFMAX_WORKSPACE")' in runtime and 'Path("/infmax-workspace")' in runtime


@pytest.mark.parametrize("plant", ["srtctl", "pth"])
def test_a_planted_srtctl_in_the_cache_is_never_run_and_the_venv_is_rebuilt(
    srtctl_cache, gb300_rows, tmp_path, plant, harness_repo
):
    """Another job on the runner writes into infx's cache: a replaced bin/srtctl, or a .pth file
    (run by Python at start-up) in the venv's site-packages. The venv no longer matches the content
    hash recorded when it was built, so nothing of it runs; cache-seed --srtctl rebuilds it."""
    from infx.launch.cache import VENVS, cached_srtctl, srtctl_problem

    row, plan = next((r, p) for r, p in gb300_rows if p.pin.name == "nvidia-v1.0.50")
    base, commit = srtctl_cache["base"], plan.pin.commit
    venv = base / VENVS / commit
    assert cached_srtctl(base, commit) == venv / "bin" / "srtctl"
    witness = tmp_path / "planted-ran"
    if plant == "srtctl":
        (venv / "bin" / "srtctl").write_text(f"#!/bin/sh\ntouch {witness}\nexit 0\n")
    else:
        [site] = list((venv / "lib").glob("python3*/site-packages"))
        (site / "zz-planted.pth").write_text(f"import pathlib; pathlib.Path({str(witness)!r}).touch()\n")
    assert cached_srtctl(base, commit) is None and "content hash" in srtctl_problem(base, commit)
    done, body = dry_run(row, base, tmp_path, root=harness_repo)
    assert done.returncode == 0 and body["srtctl-dry-run"]["checked"] is False, body
    assert "content hash" in body["srtctl-dry-run"]["reason"] and not witness.exists()
    seeded = infx(
        "lane",
        "cache-seed",
        "gb300-nv",
        "--from",
        str(SRT_SLURM_BUNDLE),
        "--pin",
        "nvidia-v1.0.50",
        "--srtctl",
        "--format",
        "json",
        cache=base,
        timeout=1800,
    )
    assert seeded.returncode == 0, seeded.stdout + seeded.stderr
    assert cached_srtctl(base, commit) == venv / "bin" / "srtctl" and srtctl_problem(base, commit) is None
    (tmp_path / "again").mkdir()
    again, body = dry_run(row, base, tmp_path / "again", root=harness_repo)
    assert again.returncode == 0 and body["srtctl-dry-run"]["checked"] and not witness.exists(), body


# --- eval points: the real srtctl of every pin renders the eval path --------------------------


@pytest.fixture(scope="module")
def gb300_eval_rows():
    from bench.gb300_points import gb300_eval_points
    from infx.launch.lane import load_lane
    from infx.launch.plan import plan_point
    from infx.launch.pointfile import PointFile

    lane = load_lane("gb300-nv", REPO)
    return [(row, plan_point(lane, PointFile(data=row, file="row.json"), REPO)) for row in gb300_eval_points(REPO)]


def exported(line: str) -> dict:
    """The variables of an ``#SBATCH --export=ALL,K=V,K="V W"`` line (infx never writes a comma in a value)."""
    assert line.startswith("#SBATCH --export=ALL,"), line
    pairs = [item.split("=", 1) for item in line.removeprefix("#SBATCH --export=ALL,").split(",")]
    return {name: value.removeprefix('"').removesuffix('"') for name, value in pairs}


def test_the_eval_rows_cover_every_nvidia_pin(gb300_eval_rows):
    pins = {plan.pin.name for _, plan in gb300_eval_rows}
    assert set(NVIDIA_PINS) <= pins
    assert (
        sum(1 for row, _ in gb300_eval_rows if not row.get("eval-only")) == 39
    )  # `infx matrix` marks 39 of the 68 rows


def bare_recipe(plan) -> str:
    """The resolved recipe as srtctl's schema sees it, without what only names the job (`name`) and the
    job's `#SBATCH` directives (an eval point's `export`, which srtctl renders as it is)."""
    return json.dumps({k: v for k, v in plan.recipe.items() if k not in ("name", "sbatch_directives")}, sort_keys=True)


def resolved(plan, srtctl_cache):
    """The plan with its recipe resolved, also a recipe that ships with srt-slurm (from the pin's seeded checkout)."""
    from infx.launch.checkout import resolve_in_checkout

    resolve_in_checkout(plan, Path(srtctl_cache["pins"][plan.pin.name]["path"]))
    return plan


@pytest.mark.parametrize("pin", NVIDIA_PINS)
def test_the_real_srtctl_takes_the_eval_path_for_every_bundled_eval_row(
    srtctl_cache, gb300_rows, gb300_eval_rows, tmp_path, pin
):
    """Every bundled eval row of this pin takes srt-slurm's eval path.

    What srtctl receives for an eval row is its recipe plus `sbatch_directives.export`. The recipe
    part: every eval row's resolved recipe (without `name` and `sbatch_directives`) is one the real
    srtctl of the same pin dry-runs in the throughput test above (a row with none there gets its own
    dry run here). The export part: one real `srtctl dry-run` per pin and eval kind shows srtctl
    renders the directive as it is, before the orchestrator starts; for every row, in process, the
    directive is exactly its plan's eval variables and its workspace is staged with its
    concurrencies and protocol. One dry run per distinct recipe, pin and kind instead of one per
    row: a dry run costs seconds, the rows differ only in the values checked here."""
    from infx.launch.evalenv import DRY_RUN_OUTPUT, DRY_RUN_WORKSPACE, export_directive

    checkout = Path(srtctl_cache["pins"][pin]["path"])
    # srt-slurm's lm-eval stage at this commit: what infx's environment and workspace are built for
    bench = (checkout / "src/srtctl/benchmarks/scripts/lm-eval/bench.sh").read_text()
    assert 'source "${INFMAX_WORKSPACE}/benchmarks/benchmark_lib.sh"' in bench
    assert (
        "run_eval --framework lm-eval" in bench and "append_lm_eval_summary" in bench and "/logs/eval_results" in bench
    )
    sweep = (checkout / "src/srtctl/cli/do_sweep.py").read_text()
    assert 'os.environ.get("EVAL_ONLY", "false")' in sweep and 'os.environ.get("RUN_EVAL", "false")' in sweep
    assert all(f'"{name}",' in sweep for name in __import__("infx.launch.evalenv", fromlist=["FORWARDED"]).FORWARDED)
    runtime = (checkout / "src/srtctl/core/runtime.py").read_text()
    assert 'os.environ.get("INFMAX_WORKSPACE")' in runtime and '"/infmax-workspace"' in runtime
    rows = [(row, resolved(plan, srtctl_cache)) for row, plan in gb300_eval_rows if plan.pin.name == pin]
    assert rows
    accepted = {bare_recipe(resolved(plan, srtctl_cache)) for _, plan in gb300_rows if plan.pin.name == pin}
    dry_runs: dict = {}  # (kind) or (recipe): the row the real srtctl dry-runs for it
    for row, plan in rows:
        concs = row["conc"] if row.get("eval-all-concs") else [row.get("eval-conc", max(row["conc"]))]
        variables = dict(plan.evaluation.variables)
        assert variables["RUN_EVAL"] == "true" and variables["EVAL_ONLY"] == (
            "true" if row.get("eval-only") else "false"
        )
        assert variables["EVAL_CONC"] == " ".join(map(str, concs))
        assert variables["IS_MULTINODE"] == "true" and variables["PREFILL_TP"] == str(row["prefill"]["tp"])
        assert plan.recipe["sbatch_directives"]["export"] == export_directive(variables), row["config-key"]
        environment = plan.environment(DRY_RUN_OUTPUT, DRY_RUN_WORKSPACE)
        assert {k: v for k, v in environment.items() if k not in ("RESULT_FILENAME", "INFMAX_WORKSPACE")} == variables
        assert environment["INFMAX_WORKSPACE"] == "<launch dir>/infmax-workspace"
        workspace = plan.stage_eval_workspace(REPO, tmp_path / "workspaces" / plan.point_id)
        staged = json.loads((workspace / "infx-eval.json").read_text())
        assert staged["concs"] == concs and staged["protocol"] == row["eval-protocol"] == plan.evaluation.protocol
        dry_runs.setdefault(("kind", plan.evaluation.choice.kind), row)
        if bare_recipe(plan) not in accepted:
            dry_runs.setdefault(("recipe", bare_recipe(plan)), row)
    for row in dry_runs.values():
        done, body = dry_run(row, srtctl_cache["base"], tmp_path)
        assert done.returncode == 0, (row["config-key"], body, done.stderr[-2000:])
        check = body["srtctl-dry-run"]
        assert check["checked"] and check["srtctl"] == srtctl_cache["pins"][pin]["srtctl"]
        script = check["script"]
        [line] = [line for line in script.splitlines() if line.startswith("#SBATCH --export=")]
        assert line == "#SBATCH --export=" + body["recipe"]["sbatch_directives"]["export"]  # as it is
        variables = {k: v for k, v in body["environment"].items() if k not in ("RESULT_FILENAME", "INFMAX_WORKSPACE")}
        assert exported(line) == variables, row["config-key"]
        # sbatch applies the directive to the job before the orchestrator (do_sweep) starts and reads EVAL_ONLY
        assert script.index(line) < script.index("srtctl.cli.do_sweep")
        workspace = Path(check["script-path"]).parent / "infmax-workspace"
        assert (workspace / "benchmarks" / "benchmark_lib.sh").is_file() and (
            workspace / "benchmarks/evals/gsm8k.yaml"
        ).is_file()
    assert {key[1] for key in dry_runs if key[0] == "kind"} == {plan.evaluation.choice.kind for _, plan in rows}


@pytest.mark.slurm
def test_the_export_line_gives_the_job_the_eval_environment_on_the_real_slurm(
    srtctl_cache, slurm_cluster, gb300_eval_rows, tmp_path
):
    """The directive infx writes, as the real srtctl renders it, read by the real sbatch: an EVAL_CONC list
    keeps its spaces, and the directive wins over what the submitting shell exports."""
    row, _ = next((r, p) for r, p in gb300_eval_rows if p.pin.name == "nvidia-v1.0.50" and r.get("eval-only"))
    row = {**row, "conc": [16, 32, 64], "eval-all-concs": True}
    row.pop("eval-conc", None)
    done, body = dry_run(row, srtctl_cache["base"], tmp_path)
    assert done.returncode == 0, done.stderr[-2000:]
    [line] = [line for line in body["srtctl-dry-run"]["script"].splitlines() if line.startswith("#SBATCH --export=")]
    assert ',EVAL_CONC="16 32 64",' in line
    out = tmp_path / "job.env"
    script = tmp_path / "job.sh"
    script.write_text(
        "\n".join(
            [
                "#!/bin/bash",
                f"#SBATCH --partition={slurm_cluster['partition']}",
                "#SBATCH --job-name=infx-export-test",
                f"#SBATCH --output={tmp_path / 'job.log'}",
                line,
                f"env -0 > {out}.tmp && mv {out}.tmp {out}",
                "",
            ]
        )
    )
    env = {**os.environ, "EVAL_ONLY": "false", "EVAL_CONC": "1", "SUBMITTER_ONLY": "kept"}
    submitted = subprocess.run(
        ["sbatch", "--parsable", str(script)], capture_output=True, text=True, env=env, timeout=60
    )
    assert submitted.returncode == 0, submitted.stderr
    import time

    deadline = time.monotonic() + 120
    while not out.exists() and time.monotonic() < deadline:
        time.sleep(0.2)
    job_env = dict(item.split("=", 1) for item in out.read_bytes().decode().split("\0") if "=" in item)
    expected = {k: v for k, v in body["environment"].items() if k not in ("RESULT_FILENAME", "INFMAX_WORKSPACE")}
    assert {k: job_env.get(k) for k in expected} == expected
    assert job_env["EVAL_CONC"] == "16 32 64" and job_env["EVAL_ONLY"] == "true" and job_env["SUBMITTER_ONLY"] == "kept"
    deadline = time.monotonic() + 60
    while squeue() and time.monotonic() < deadline:
        time.sleep(0.2)


# --- real launches on the local Slurm --------------------------------------------------------


def local_profile(tmp: Path, partition: str) -> Path:
    """runners/gb300-nv.yaml with partition, paths and pins' repositories pointed at local things."""
    from testing.corpus import SRT_SLURM_BUNDLE

    profile = copy.deepcopy(yaml.safe_load((REPO / "runners" / "gb300-nv.yaml").read_text()))
    profile["lane"] = "gb300-local"
    # one local partition: a point's SLURM_PARTITION=batch_3 (trt agentic) names a partition of the real cluster
    profile["slurm"].update(
        {"partition": partition, "partition-setting": "LOCAL_TEST_PARTITION", "account": "", "poll-seconds": 0.5}
    )
    mounts = {}
    for host, inside in profile["container-mounts"].items():
        local = tmp / "host" / Path(host).name
        local.mkdir(parents=True)
        mounts[str(local)] = inside
    profile["container-mounts"] = mounts
    profile["squash-dir"] = str(tmp / "squash")
    (tmp / "squash").mkdir()
    for model in profile["models"]:
        model["path"] = str(tmp / "models" / Path(model["path"]).name)
        Path(model["path"]).mkdir(parents=True, exist_ok=True)
    # `make setup` downloads nats/etcd/uv: the offline stand-in writes programs in their place
    profile["prepare"]["setup"] = [str(STANDIN_BIN / "srt-slurm-offline-setup"), "ARCH=aarch64"]
    profile["git-protocols"] = ["https", "file"]  # a pin's repository is a url; file:// only where the lane allows it
    for pin in profile["srt-slurm"]["pins"].values():
        pin["repository"] = SRT_SLURM_BUNDLE.as_uri()  # only read on a cache miss; the cache is seeded
    path = tmp / "gb300-local.yaml"
    path.write_text(yaml.safe_dump(profile, sort_keys=False))
    return path


def one_row_per_nvidia_route(gb300_rows) -> list:
    """The bundled row with the fewest nodes of each NVIDIA route (the first of those)."""
    chosen: dict[str, tuple] = {}
    for row, plan in gb300_rows:
        if plan.pin.name in NVIDIA_PINS:
            best = chosen.get(plan.route.name)
            if best is None or row["node-count"] < best[0]["node-count"]:
                chosen[plan.route.name] = (row, plan)
    return list(chosen.values())


def squeue() -> str:
    return subprocess.run(["squeue", "-h"], capture_output=True, text=True).stdout.strip()


@pytest.mark.slurm
def test_one_real_launch_per_nvidia_route_reaches_a_terminal_state_on_the_local_slurm(
    srtctl_cache, slurm_multinode, gb300_rows, tmp_path, harness_repo
):
    profile = local_profile(tmp_path, slurm_multinode["partition"])
    rows = one_row_per_nvidia_route(gb300_rows)
    assert {plan.route.name for _, plan in rows} == {
        "vllm-dsv4-fixed",
        "trt-dsv4-fixed",
        "sglang-dsv4-fixed",
        "vllm-agentic",
        "trt-dsv4-agentic",
    }
    for row, plan in rows:
        out, temp = tmp_path / plan.route.name / "out", tmp_path / plan.route.name / "temp"
        temp.mkdir(parents=True)
        point = tmp_path / plan.route.name / "point.json"
        point.write_text(json.dumps(row))
        # the job inherits this environment: srt-slurm's batch script pip-installs dynamo wheels on the
        # head node; keep it (and uv) off the network, as the rest of the tests are
        env = {
            "PATH": f"{STANDIN_BIN}{os.pathsep}{os.environ['PATH']}",
            "STANDIN_ENROOT_LOG": str(tmp_path / "enroot.log"),
            "RUNNER_TEMP": str(temp),
            "PIP_NO_INDEX": "1",
            "UV_OFFLINE": "1",
        }
        done = infx(
            "launch",
            "--lane",
            str(profile),
            "--point",
            str(point),
            "--output-dir",
            str(out),
            cache=srtctl_cache["base"],
            env=env,
            root=harness_repo,
        )
        [record_path] = out.glob("*_launch.json")
        record = json.loads(record_path.read_text())
        job = record["job-id"]
        context = (plan.route.name, done.stderr[-3000:], record["message"])
        # the real srtctl submitted through the real sbatch and infx read the id from its output
        assert job and job.isdigit(), context
        apply_log = (out / "LOGS" / "srtctl-apply.log").read_text()
        assert f"✅ Job {job} submitted!" in apply_log
        assert record["srtctl"] == srtctl_cache["pins"][plan.pin.name]["srtctl"]
        assert record["srt-slurm"]["commit"] == plan.pin.commit and record["srt-slurm"]["pin"] == plan.pin.name
        # Slurm ran it on as many nodes as the point asks for; it failed where a GB300 node would start the orchestrator
        shown = subprocess.run(["scontrol", "show", "job", "-o", job], capture_output=True, text=True).stdout
        assert f"NumNodes={row['node-count']} " in shown and f"Partition={slurm_multinode['partition']} " in shown, (
            shown
        )
        assert record["terminal-state"] == "FAILED" and record["slurm-exit-code"] != "0:0", context
        assert done.returncode == 1 and record["exit-code"] == 1 and f"job {job}" in record["message"]
        with tarfile.open(out / "multinode_server_logs.tar.gz") as tar:
            names = set(tar.getnames())
            assert f"./job/sweep_{job}.log" in names, (plan.route.name, sorted(names))
            sweep = tar.extractfile(f"./job/sweep_{job}.log").read().decode()
        assert {"./srtctl-apply.log", "./resolved-recipe.yaml", "./srtslurm.yaml", "./prepare.log"} <= names
        assert f"Job ID: {job}" in sweep  # srt-slurm's own batch script ran
        assert squeue() == "", squeue()
