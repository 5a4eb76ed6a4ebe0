"""Builders for launcher tests: a workspace with recipes and a lane profile, points, git repos."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[2]
STANDIN = REPO / "tests" / "slurm" / "standin"
IMAGE = "lmsysorg/sglang:v0.5.14-cu130"


def git(*argv, cwd) -> str:
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@t",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@t",
    }
    return subprocess.run(["git", *argv], cwd=cwd, check=True, capture_output=True, text=True, env=env).stdout.strip()


def git_repo(path: Path, files: dict[str, str] | None = None, copy_from: Path | None = None) -> str:
    """A real git repository with one commit; returns the commit SHA."""
    if copy_from:
        shutil.copytree(copy_from, path, ignore=shutil.ignore_patterns("__pycache__"))
    path.mkdir(parents=True, exist_ok=True)
    for name, text in (files or {}).items():
        (path / name).parent.mkdir(parents=True, exist_ok=True)
        (path / name).write_text(text)
    git("init", "-q", ".", cwd=path)
    git("add", "-A", cwd=path)
    git("commit", "-q", "-m", "init", cwd=path)
    return git("rev-parse", "HEAD", cwd=path)


def standin_repo(path: Path) -> str:
    return git_repo(path, copy_from=STANDIN)


def lane_profile(
    pin_url: str,
    pin_commit: str | None,
    partition: str = "testlane",
    sources: dict | None = None,
    routes: list | None = None,
    evals: bool = True,
    **slurm,
) -> dict:
    profile = {
        "lane": "testlane",
        "runner-labels": ["testlane"],
        "git-protocols": ["https", "file"],  # test repositories are local
        "slurm": {
            "partition": partition,
            "partition-setting": "SLURM_PARTITION",
            "account": "",
            "gpus-per-node": 4,
            "default-time-limit": "1:00",
            "poll-seconds": 0.3,
            **slurm,
        },
        "container-aliases": ["dynamo-sglang"],
        "models": [
            {"match": {"model-prefix": "dsv4", "precision": "fp4"}, "alias": "deepseek-v4-pro", "path": "/models/dsv4"}
        ],
        "srt-slurm": {
            "pip-args": ["--no-build-isolation", "--no-index", "--no-deps"],
            "pins": {"standin": {"repository": pin_url, "ref": "main", "commit": pin_commit}},
        },
        "sources": sources or {},
        "rules": {
            "store-client-env": {
                "when-service-type": "mooncake-store",
                "env": ["MOONCAKE_DEVICE"],
                "roles": ["prefill"],
                "service-types": ["mooncake-store"],
            },
            "distinct-service-ports": {"service-types": ["mooncake-store"]},
            "power-frameworks": ["dynamo-sglang"],
        },
        "routes": routes
        or [
            {
                "name": "fixed",
                "match": {"scenario": "fixed-seq-len", "framework": "dynamo-sglang"},
                "srt-slurm": "standin",
                "overlays": [{"from": "test", "to": "recipes/test"}],
                "srt-slurm-recipes": ["recipes/upstream/*"],
            },
            {
                "name": "agentic",
                "match": {"scenario": "agentic-coding", "framework": "dynamo-sglang"},
                "srt-slurm": "standin",
                "overlays": [{"from": "test", "to": "recipes/test"}],
                "srtctl-flags": ["--no-preflight"],
            },
        ],
    }
    if evals:  # the repository's eval suite, which Workspace copies
        profile["evals"] = {"suite": "benchmarks/evals/suite.yaml"}
    return profile


# This repository ships no AgentX harness: the file its agentic recipes run from the workspace
# (/infmax-workspace/benchmarks/multi_node/agentic_srt.sh) belongs to a benchmark repository, whose
# client needs GB300 nodes and aiperf. infx refuses those points here (agentic-harness-missing); the
# tests that plan or launch them use a copy of the repository with the stand-in harness in its place.
HARNESS = "benchmarks/multi_node/agentic_srt.sh"
STANDIN_HARNESS = REPO / "tests" / "slurm" / "standin-harness" / "agentic_srt.sh"
REPOSITORY_DATA = ("configs", "runners", "benchmarks", "perf-changelog.yaml")


def add_harness(root: Path) -> Path:
    """``root`` with the stand-in AgentX harness where the agentic recipes run it."""
    target = root / HARNESS
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy(STANDIN_HARNESS, target)
    return root


def repository_with_harness(destination: Path) -> Path:
    """A copy of this repository's data (configs, lane profiles, recipes, changelog) with the stand-in harness."""
    for name in REPOSITORY_DATA:
        source = REPO / name
        if source.is_dir():
            shutil.copytree(source, destination / name, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            destination.mkdir(parents=True, exist_ok=True)
            shutil.copy(source, destination / name)
    return add_harness(destination)


# A job's benchmark command that leaves a real sa-bench result (the shipped fixture, concurrency 4)
# where srt-slurm's sa-bench writes one: a launch succeeds only with a result collect accepts.
SA_BENCH_RESULT = REPO / "tests" / "data" / "results" / "sa-bench" / "results_concurrency_4_gpus_4.json"
FIXED_RESULT = (
    'd="outputs/$SLURM_JOB_ID/logs/isl_8_osl_8"; mkdir -p "$d"; '
    f'cp {shlex.quote(str(SA_BENCH_RESULT))} "$d/results_concurrency_4_gpus_8.json"; echo benchmark done'
)


def agentic_aggregate(conc: int, successful: int) -> str:
    """The shipped AgentX aggregate at ``conc`` with ``successful`` requests, as JSON text."""
    data = json.loads((REPO / "tests" / "data" / "results" / "agentic" / "aggregate.json").read_text())
    data.update(conc=conc, num_requests_successful=successful)
    return json.dumps(data)


def v1_recipe(command: str = "true", time_limit: str = "1:00", **extra) -> dict:
    """A flat srt-slurm v1 recipe, 1 prefill TP4 + 1 decode TP4, 2 nodes."""
    recipe = {
        "name": "test-recipe",
        "model": {"path": "deepseek-v4-pro", "container": "dynamo-sglang", "precision": "fp4"},
        "slurm": {"time_limit": time_limit},
        "resources": {
            "gpu_type": "gb300",
            "gpus_per_node": 4,
            "prefill_nodes": 1,
            "decode_nodes": 1,
            "prefill_workers": 1,
            "decode_workers": 1,
            "gpus_per_prefill": 4,
            "gpus_per_decode": 4,
        },
        "backend": {
            "type": "sglang",
            "sglang_config": {"prefill": {"tensor-parallel-size": 4}, "decode": {"tensor-parallel-size": 4}},
        },
        "benchmark": {"type": "custom", "command": command},
    }
    recipe.update(extra)
    return recipe


def schema2_recipe(services: list | None = None, prefill_env: dict | None = None) -> dict:
    """A schema-2 recipe in the shape of the Mooncake ladder: stores on decode nodes, dedicated client node."""
    return {
        "schema": 2,
        "name": "mooncake-ladder",
        "model": {"path": "deepseek-v4-pro", "container": "dynamo-sglang", "precision": "fp4"},
        "engine": "sglang",
        "roles": {
            "prefill": {
                "nodes": 1,
                "workers": 1,
                "gpus": 4,
                "env": prefill_env if prefill_env is not None else {"MOONCAKE_DEVICE": "mlx5_0,mlx5_1,mlx5_2,mlx5_3"},
                "args": {"tensor-parallel-size": 4},
            },
            "decode": {"nodes": 1, "workers": 1, "gpus": 4, "env": {}, "args": {"tensor-parallel-size": 4}},
        },
        "services": services
        if services is not None
        else [
            {"name": "mooncake-master", "type": "mooncake-master", "placement": {"node": "infra"}},
            *[store(f"store-{i}", 8800 + i) for i in range(4)],
        ],
        "benchmark": {"type": "custom", "placement": {"node": "dedicated"}, "command": "true"},
    }


def store(name: str, port: int, device: str | None = "mlx5_0") -> dict:
    service = {
        "name": name,
        "type": "mooncake-store",
        "placement": {"node": "decode"},
        "args": ["--port", str(port), "--global-segment-size", "180gb"],
        "readiness": {"port": port, "timeout_seconds": 600},
        "env": {},
    }
    if device:
        service["env"]["MOONCAKE_DEVICE"] = device
    return service


def point(config_file: str = "recipes/test/recipe.yaml", agentic: bool = False, conc=(4,), **overrides) -> dict:
    data = {
        "image": IMAGE,
        "model": "deepseek-ai/DeepSeek-V4-Pro",
        "model-prefix": "dsv4",
        "precision": "fp4",
        "framework": "dynamo-sglang",
        "runner": "testlane",
        "spec-decoding": "none",
        "disagg": True,
        "prefill": {
            "num-worker": 1,
            "tp": 4,
            "ep": 1,
            "dp-attn": False,
            "pp": 1,
            "dcp-size": 1,
            "pcp-size": 1,
            "additional-settings": [f"CONFIG_FILE={config_file}"],
        },
        "decode": {"num-worker": 1, "tp": 4, "ep": 1, "dp-attn": False, "pp": 1, "dcp-size": 1, "pcp-size": 1},
        "conc": list(conc),
        "exp-name": "dsv4_test",
        "recipe-fingerprint": "ab" * 32,
        "config-key": "test-key",
    }
    if agentic:
        data.update(
            {"scenario-type": "agentic-coding", "duration": 60, "kv-offloading": "none", "total-cpu-dram-gb": 0}
        )
    else:
        data.update({"isl": 8, "osl": 8, "max-model-len": 16})
    data.update(overrides)
    return data


class Workspace:
    """A repository checkout as the runner sees it: recipes, a lane profile, a point."""

    def __init__(self, root: Path, profile: dict):
        self.root = root
        (root / "runners").mkdir(parents=True, exist_ok=True)
        shutil.copytree(REPO / "benchmarks" / "evals", root / "benchmarks" / "evals", dirs_exist_ok=True)
        self.write_profile(profile)

    def write_profile(self, profile: dict) -> None:
        (self.root / "runners" / "testlane.yaml").write_text(yaml.safe_dump(profile, sort_keys=False))

    def recipe(self, name: str, data: dict, folder: str = "test") -> str:
        path = self.root / "benchmarks/multi_node/srt-slurm-recipes" / folder / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(yaml.safe_dump(data, sort_keys=False))
        return f"recipes/{folder}/{name}"

    def point(self, data: dict, name: str = "point.json") -> Path:
        path = self.root / name
        path.write_text(json.dumps(data, indent=1))
        return path

    def infx(self, *argv: str, env: dict | None = None, timeout: float = 300, **kwargs) -> subprocess.CompletedProcess:
        from testing.cli import run_cli  # testing.cli imports this module

        return run_cli(
            *argv,
            cwd=self.root,
            env={"GITHUB_WORKSPACE": str(self.root), "INFX_CACHE_DIR": str(self.root / ".cache"), **(env or {})},
            timeout=timeout,
            **kwargs,
        )

    def dry_run(self, point_path: Path, env: dict | None = None) -> tuple[int, dict]:
        done = self.infx(
            "launch", "--lane", "testlane", "--point", str(point_path), "--dry-run", "--format", "json", env=env
        )
        try:
            body = json.loads(done.stdout)
        except ValueError:
            raise AssertionError(f"no JSON (rc {done.returncode}): {done.stdout}\n{done.stderr}") from None
        return done.returncode, body
