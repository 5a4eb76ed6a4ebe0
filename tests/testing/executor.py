"""A small executor of this repository's workflows, for the tests.

GitHub's own parser and evaluator (`@actions/workflow-parser`, `@actions/expressions`, run
by engine/engine.mjs) read the workflow and evaluate every `if`, `runs-on`, `env`, `with`,
`strategy`, `outputs`, `concurrency` and `run-name`. This module only walks the jobs in
`needs` order, expands matrices, calls reusable workflows with their evaluated inputs and
runs every `run:` step in bash in the workspace (a git repository), with the runner's
files (GITHUB_OUTPUT, GITHUB_ENV, GITHUB_PATH, GITHUB_STEP_SUMMARY, RUNNER_TEMP).

What stands in for GitHub, and only that:
- `uses:` actions: checkout checks the event's commit out in the workspace, upload/download-
  artifact copy to and from a local folder and register the artifact, zipped, with the local
  GitHub server of tests/testing/github_server.py (which the API calls of the steps reach); a
  download with `run-id` fetches another run's artifact from that server; setup-python does
  nothing;
- the runner's `python` (runner_python.py): each job starts with a Python on which nothing is
  installed; its `pip install --require-hashes -r requirements.lock` and `pip install --no-deps .`
  (or `infx==VERSION`) install the wheel this test session built once from the project, with the
  locked dependencies, and only then is `infx` there (`python -m venv` makes another, empty one).
Each job's evaluated outputs are measured as GitHub counts them (UTF-16): past 1 MB per job or
50 MB per run the job fails with "Maximum object size exceeded" and hands on no outputs.
Each job gets a GITHUB_TOKEN of its own (`github.token`, `secrets.GITHUB_TOKEN`), minted by the
local GitHub server with exactly the job's evaluated `permissions:` (the job's, else the
workflow's, else GitHub's restricted default; in a called workflow never more than its caller's
job had), so every API call a step makes is held to them.
A simulated clock (hours) orders the jobs as GitHub would run them: a job starts when the last of
its `needs` finished and runs for `durations` (by job path pattern; 0 otherwise); a job whose
`runs-on` names a label of `offline` (a lane whose self-hosted runners are all offline) waits in
the queue for GitHub's 24 hours and fails ("exceeded the maximum execution time while awaiting a
runner"), without running a step.
Jobs run in `needs` order; the instances of a matrix without fail-fast run side by side (at
most one script per core at a time), those of a fail-fast matrix one after another, so
none starts after a failure.
"""

from __future__ import annotations

import fnmatch
import io
import itertools
import json
import os
import re
import shutil
import subprocess
import sys
import threading
import time
import zipfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from testing.runner_python import make_environment, runtime_file

PROJECT = Path(__file__).resolve().parents[2]
# GitHub's limits on job outputs: "a maximum of 1 MB per job. The total of all outputs in a
# workflow run can be a maximum of 50 MB. Size is approximated based on UTF-16 encoding."
# Past them the job fails with "Maximum object size exceeded".
JOB_OUTPUTS_LIMIT = 1_000_000
RUN_OUTPUTS_LIMIT = 50_000_000
# GitHub: "Each job for self-hosted runners can be queued for a maximum of 24 hours. If a self-hosted
# runner does not start executing the job within this limit, the job is terminated and fails to complete."
QUEUE_LIMIT_HOURS = 24.0
QUEUE_TIMEOUT = "The job has exceeded the maximum execution time while awaiting a runner for 24h0m0s"
# The GITHUB_TOKEN's scopes (a workflow's `permissions:`), and GitHub's default when no
# `permissions:` applies: the repository's restricted default, contents and packages read.
TOKEN_SCOPES = (
    "actions",
    "attestations",
    "checks",
    "contents",
    "deployments",
    "discussions",
    "id-token",
    "issues",
    "models",
    "packages",
    "pages",
    "pull-requests",
    "repository-projects",
    "security-events",
    "statuses",
)
RESTRICTED_DEFAULT = {"contents": "read", "packages": "read"}
LEVELS = ("none", "read", "write")
WORKFLOWS = PROJECT / ".github" / "workflows"
ENGINE = Path(__file__).resolve().parent / "engine" / "engine.mjs"
LOCAL_PREFIXES = ("./", "$/")


class Engine:
    """GitHub's parser and evaluator in one long-lived node process (JSON lines)."""

    def __init__(self):
        node = shutil.which("node")
        if node is None or not (PROJECT / "node_modules" / "@actions" / "workflow-parser").is_dir():
            raise RuntimeError(
                "node and the npm packages are needed: run `npm ci` at the repository root (.ci/run does)"
            )
        self.process = subprocess.Popen([node, str(ENGINE)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        self.parsed: dict[Path, dict] = {}
        self.lock = threading.Lock()  # one request at a time on the pipe

    def ask(self, request: dict):
        if "context" in request:  # only the contexts the expression names: a job's `needs` can hold megabytes
            request = {
                **request,
                "context": {
                    name: value
                    for name, value in request["context"].items()
                    if re.search(rf"\b{re.escape(name)}\b", request["expr"])
                },
            }
        with self.lock:
            self.process.stdin.write(json.dumps(request) + "\n")
            self.process.stdin.flush()
            answer = json.loads(self.process.stdout.readline())
        if "error" in answer:
            raise RuntimeError(f"engine: {answer['error']}\nrequest: {json.dumps(request)[:2000]}")
        return answer

    def parse(self, path: Path) -> dict:
        if path not in self.parsed:
            answer = self.ask({"op": "parse", "file": str(path)})
            if answer["errors"]:
                raise RuntimeError(f"{path}: GitHub's parser refuses it: {answer['errors']}")
            self.parsed[path] = answer["tree"]
        return self.parsed[path]

    def value(self, node, context: dict, status: dict | None = None):
        """A workflow value with every expression in it evaluated."""
        if isinstance(node, dict) and set(node) == {"$expr"}:
            return self.ask(
                {"op": "eval", "expr": node["$expr"], "context": context, "status": status or {"success": True}}
            )["value"]
        if isinstance(node, dict):
            return {key: self.value(item, context, status) for key, item in node.items()}
        if isinstance(node, list):
            return [self.value(item, context, status) for item in node]
        return node

    def condition(self, node, context: dict, status: dict) -> bool:
        expr = node["$expr"] if isinstance(node, dict) else "" if node is None else str(node)
        return self.ask({"op": "cond", "expr": expr, "context": context, "status": status})["value"]

    def close(self):
        self.process.stdin.close()
        self.process.wait(timeout=10)


@dataclass
class Job:
    """One job (or matrix instance) as it ran."""

    path: str  # e.g. sweep[3]/points[0]/launch
    workflow: str
    result: str  # success | failure | skipped | cancelled
    runs_on: object = None
    inputs: dict = field(default_factory=dict)
    matrix: dict | None = None
    outputs: dict = field(default_factory=dict)
    summary: str = ""
    log: str = ""
    outputs_size: int = 0  # as GitHub counts them: UTF-16 bytes of every output's name and value
    runner_name: str = (
        "test-runner-0"  # each job gets a runner of its own, as on GitHub (launches name Slurm jobs after it)
    )
    permissions: dict = field(default_factory=dict)  # what its GITHUB_TOKEN carries (scope -> read | write)
    token: str = ""
    started_at: float = 0.0  # the simulated clock, in hours
    finished_at: float = 0.0


class Executor:
    def __init__(
        self,
        workspace: Path,
        tmp: Path,
        event_name: str,
        event: dict,
        *,
        sha: str,
        ref: str = "refs/heads/main",
        repository: str = "acme/bench",
        run_id: int = 9001,
        github=None,
        env: dict | None = None,
        variables: dict | None = None,
        secrets: dict | None = None,
        offline: set[str] | None = None,
        durations: dict[str, float] | None = None,
    ):
        self.workspace, self.tmp = workspace, tmp
        self.artifacts = tmp / "artifacts"
        self.artifacts.mkdir(parents=True)
        self.server = github  # tests/testing/github_server.LocalGitHub, or None
        self.github = {
            "event_name": event_name,
            "event": event,
            "sha": sha,
            "ref": ref,
            "repository": repository,
            "repository_owner": repository.split("/")[0],
            "run_id": str(run_id),
            "run_attempt": "1",
            "token": "test-token",
            "workspace": str(workspace),
            "server_url": "https://github.com",
            "api_url": github.url if github else "https://api.github.com",
            "actor": "octocat",
            "job": "",
            "action": "",
        }
        self.extra_env = env or {}
        self.vars = variables or {}
        self.secrets = secrets or {}  # the repository's secrets (a secret that is not set reads as '')
        self.offline = set(offline or ())
        self.durations = durations or {}
        self.finished: dict[str, float] = {}  # job path -> when it finished (simulated hours)
        self._tokens = itertools.count(1)
        self.engine = Engine()
        self.jobs: list[Job] = []
        self.runtime = runtime_file()  # infx's wheel and locked dependencies, built once per test session
        self.run_name = self.concurrency = None
        self.outputs_total = 0  # of the whole run, against RUN_OUTPUTS_LIMIT
        self.only: set[str] | None = None
        self.scripts = threading.Semaphore(os.cpu_count() or 2)  # scripts running at once
        self.checkout_lock = threading.Lock()  # the shared workspace and the server's fixtures
        self.runner_numbers = itertools.count(1)

    # --- the workflow level -----------------------------------------------------------------

    def run(
        self,
        workflow: str = ".github/workflows/run-sweep.yml",
        inputs: dict | None = None,
        only: set[str] | None = None,
    ) -> dict[str, str]:
        """Run the triggered workflow; returns each top-level job's result. ``only``: run just the jobs
        whose path matches one of these patterns (`*` within one path segment, e.g. `sweep[*]/points`;
        the others end as "skipped" with their inputs recorded), e.g. a very large sweep's fan-out
        without each point's own steps."""
        self.only = only
        tree = self.engine.parse(self.workspace / workflow)
        if self.github["event_name"] == "workflow_dispatch":
            inputs = self._with_defaults((tree["on"]["workflow_dispatch"] or {}).get("inputs") or {}, inputs or {})
        else:
            inputs = {}
        context = {"github": self.github, "inputs": inputs, "vars": self.vars, "secrets": self.secrets}
        self.run_name = self.engine.value(tree.get("run-name"), context)
        if "concurrency" in tree:
            self.concurrency = self.engine.value(tree["concurrency"], context)
        try:
            return self.run_jobs(workflow, tree, inputs, prefix="", secrets=self.secrets)
        finally:
            self.engine.close()

    def run_called(self, workflow: str, inputs: dict) -> dict[str, str]:
        """Run a reusable workflow on its own, as a `workflow_call` with these inputs."""
        tree = self.engine.parse(self.workspace / workflow)
        inputs = self._with_defaults((tree["on"]["workflow_call"] or {}).get("inputs") or {}, inputs)
        try:
            return self.run_jobs(workflow, tree, inputs, prefix="", secrets=self.secrets)
        finally:
            self.engine.close()

    @staticmethod
    def _with_defaults(declared: dict, given: dict) -> dict:
        unknown = set(given) - set(declared)
        if unknown:
            raise RuntimeError(f"inputs not declared by the workflow: {sorted(unknown)}")
        return {
            name: given.get(name, spec.get("default", "" if spec.get("type", "string") == "string" else None))
            for name, spec in declared.items()
        }

    def run_jobs(
        self,
        workflow: str,
        tree: dict,
        inputs: dict,
        prefix: str,
        secrets: dict | None = None,
        at: float = 0.0,
        cap: dict | None = None,
    ) -> dict[str, str]:
        """Run a workflow's jobs, the first starting at ``at`` (simulated hours), with the ``secrets`` its
        caller passes; ``cap``: the calling job's token permissions (a called workflow), which no job
        of it may exceed."""
        results: dict[str, str] = {}
        outputs: dict[str, dict] = {}
        pending = dict(tree["jobs"])
        while pending:
            ready = [name for name, job in pending.items() if all(n in results for n in _needs(job))]
            if not ready:
                raise RuntimeError(f"{workflow}: a `needs` cycle or an unknown job among {sorted(pending)}")
            for name in ready:
                job = pending.pop(name)
                needs = {n: {"result": results[n], "outputs": outputs.get(n, {})} for n in _needs(job)}
                context = {
                    "github": self.github,
                    "inputs": inputs,
                    "vars": self.vars,
                    "needs": needs,
                    "secrets": secrets or {},
                }
                status = {
                    "success": all(r == "success" for r in map(results.get, _needs(job))),
                    "failure": any(r == "failure" for r in map(results.get, _needs(job))),
                }
                path = f"{prefix}{name}"
                start = max([at] + [self.finished[f"{prefix}{n}"] for n in _needs(job)])
                if (
                    self.only is not None and not any(_path_glob(pattern).fullmatch(path) for pattern in self.only)
                ) or not self.engine.condition(job.get("if"), context, status):
                    results[name] = "skipped"
                    self.jobs.append(Job(path, workflow, "skipped", inputs=inputs, started_at=start, finished_at=start))
                    self.finished[path] = start
                    continue
                permissions = token_permissions(
                    job.get("permissions", tree.get("permissions")), cap, called=bool(prefix)
                )
                results[name], outputs[name], self.finished[path] = self.run_matrix(
                    workflow, name, job, context, path, start, permissions
                )
        return results

    def run_matrix(
        self,
        workflow: str,
        name: str,
        job: dict,
        context: dict,
        path: str,
        at: float = 0.0,
        permissions: dict | None = None,
    ) -> tuple[str, dict, float]:
        strategy = self.engine.value(job.get("strategy") or {}, context)
        combos = _combinations(strategy.get("matrix"))
        fail_fast = strategy.get("fail-fast", True) is not False
        permissions = dict(RESTRICTED_DEFAULT) if permissions is None else permissions

        def instance(index: int, matrix) -> tuple[str, dict, float]:
            job_path = f"{path}[{index}]" if matrix is not None else path
            job_context = {
                **context,
                "matrix": matrix or {},
                "strategy": {
                    "fail-fast": fail_fast,
                    "job-index": index,
                    "job-total": len(combos),
                    "max-parallel": len(combos),
                },
            }
            if "uses" in job:
                return self.call(workflow, job, job_context, job_path, at, permissions)
            return self.run_steps(workflow, job, job_context, job_path, matrix, at, permissions)

        finished: list[tuple[str, dict, float]] = []
        if fail_fast or len(combos) == 1:
            for index, matrix in enumerate(combos):
                if any(result == "failure" for result, _, _ in finished):
                    finished.append(("cancelled", {}, at))
                    self.jobs.append(
                        Job(f"{path}[{index}]", workflow, "cancelled", matrix=matrix, started_at=at, finished_at=at)
                    )
                else:
                    finished.append(instance(index, matrix))
        else:
            with ThreadPoolExecutor(max_workers=min(len(combos), 8)) as pool:
                finished = list(pool.map(instance, range(len(combos)), combos))
        results = [result for result, _, _ in finished]
        outputs = next((o for _, o, _ in reversed(finished) if o), {})  # as on GitHub, one instance's outputs win
        overall = "failure" if "failure" in results else "cancelled" if "cancelled" in results else "success"
        return overall, outputs, max([at] + [end for _, _, end in finished])

    def call(
        self, workflow: str, job: dict, context: dict, path: str, at: float = 0.0, permissions: dict | None = None
    ) -> tuple[str, dict, float]:
        """A reusable workflow (`uses: ./.github/workflows/…` or `$/…`) with its evaluated inputs."""
        ref = job["uses"]
        if not ref.startswith(LOCAL_PREFIXES):
            raise RuntimeError(f"{workflow}: only local reusable workflows run here, not {ref}")
        called = ref.split("/", 1)[1]
        tree = self.engine.parse(self.workspace / called)
        given = self.engine.value(job.get("with") or {}, context)
        inputs = self._with_defaults((tree["on"]["workflow_call"] or {}).get("inputs") or {}, given)
        # As GitHub: a called workflow sees only the secrets its caller passes by name, and only
        # those it declares (`secrets: inherit` is refused by this repository's rules: test_workflows).
        if job.get("secrets") == "inherit":
            raise RuntimeError(f"{workflow}: `secrets: inherit` in {path}")
        passed = {k: _env_text(v) for k, v in self.engine.value(job.get("secrets") or {}, context).items()}
        declared = (tree["on"]["workflow_call"] or {}).get("secrets") or {}
        if set(passed) - set(declared):
            raise RuntimeError(f"{called}: secrets not declared by the workflow: {sorted(set(passed) - set(declared))}")
        record = Job(
            path,
            workflow,
            "success",
            inputs=inputs,
            matrix=context.get("matrix") or None,
            permissions=dict(permissions or {}),
            started_at=at,
        )
        self.jobs.append(record)
        results = self.run_jobs(called, tree, inputs, prefix=f"{path}/", secrets=passed, at=at, cap=permissions)
        record.result = "failure" if "failure" in results.values() else "success"
        record.finished_at = max([at] + [self.finished[f"{path}/{name}"] for name in tree["jobs"]])
        return record.result, {}, record.finished_at

    # --- one job's steps --------------------------------------------------------------------

    def run_steps(
        self,
        workflow: str,
        job: dict,
        context: dict,
        path: str,
        matrix,
        at: float = 0.0,
        permissions: dict | None = None,
    ) -> tuple[str, dict, float]:
        temp = self.tmp / "runner" / path.replace("/", "__")
        temp.mkdir(parents=True)
        permissions = dict(RESTRICTED_DEFAULT) if permissions is None else permissions
        token = (
            self.server.state.grant_token(permissions) if self.server is not None else f"ghs_local{next(self._tokens)}"
        )
        with self.checkout_lock:
            runner_name = f"test-runner-{next(self.runner_numbers)}"
        record = Job(
            path,
            workflow,
            "success",
            runs_on=self.engine.value(job.get("runs-on"), context),
            matrix=matrix,
            inputs=context["inputs"],
            runner_name=runner_name,
            permissions=dict(permissions),
            token=token,
            started_at=at,
        )
        self.jobs.append(record)
        labels = [record.runs_on] if isinstance(record.runs_on, str) else list(record.runs_on or [])
        if self.offline.intersection(labels):  # no runner picks it up: GitHub's queue limit ends it
            record.result, record.finished_at = "failure", at + QUEUE_LIMIT_HOURS
            record.log = f"{QUEUE_TIMEOUT} (runs-on {labels}: every runner with these labels is offline)\n"
            return record.result, {}, record.finished_at
        record.finished_at = at + next(
            (hours for pattern, hours in self.durations.items() if fnmatch.fnmatchcase(path, pattern)), 0.0
        )
        context = {
            **context,
            "github": {**context["github"], "token": token},
            "secrets": {**context.get("secrets", {}), "GITHUB_TOKEN": token},
            "runner": {"temp": str(temp), "os": "Linux", "arch": "X64", "name": runner_name},
            "job": {"status": "success"},
            "steps": {},
        }
        env = {k: _env_text(v) for k, v in self.engine.value(job.get("env") or {}, context).items()}
        extra_path: list[str] = [
            str(make_environment(temp.parent / f"{temp.name}.python", self.runtime))
        ]  # the job's Python
        failed = False
        for index, step in enumerate(job.get("steps", [])):
            step_id = step.get("id", f"__step{index}")
            step_context = {**context, "env": env}
            if not self.engine.condition(step.get("if"), step_context, {"success": not failed, "failure": failed}):
                context["steps"][step_id] = {"outputs": {}, "outcome": "skipped", "conclusion": "skipped"}
                continue
            step_env = {
                **env,
                **{k: _env_text(v) for k, v in self.engine.value(step.get("env") or {}, step_context).items()},
            }
            if "run" in step:
                outcome, outputs, exported, paths = self.run_script(step, index, step_env, temp, record, extra_path)
                env.update(exported)
                extra_path = paths + extra_path
            else:
                outcome, outputs = self.run_action(step, step_context, temp, record), {}
            context["steps"][step_id] = {"outputs": outputs, "outcome": outcome, "conclusion": outcome}
            if outcome == "failure":
                failed = True
                context["job"] = {"status": "failure"}
        record.result = "failure" if failed else "success"
        record.outputs = {k: _env_text(v) for k, v in self.engine.value(job.get("outputs") or {}, context).items()}
        record.outputs_size = sum(
            len((name + value).encode("utf-16-le", "surrogatepass")) for name, value in record.outputs.items()
        )
        with self.checkout_lock:
            self.outputs_total += record.outputs_size
            run_total = self.outputs_total
        if record.outputs_size > JOB_OUTPUTS_LIMIT or run_total > RUN_OUTPUTS_LIMIT:
            record.log += (
                f"Error: Maximum object size exceeded (job outputs {record.outputs_size:,} bytes as UTF-16, "
                f"limit {JOB_OUTPUTS_LIMIT:,}; run {run_total:,}, limit {RUN_OUTPUTS_LIMIT:,})\n"
            )
            record.result, record.outputs = "failure", {}
        return record.result, record.outputs, record.finished_at

    def run_script(self, step: dict, index: int, env: dict, temp: Path, record: Job, extra_path: list[str]):
        if isinstance(step["run"], dict):
            raise RuntimeError(f"{record.path}: an expression inside a `run:` script: {step['run']}")
        files = {
            name: temp.parent / f"{temp.name}.{name.lower()}-{index}"
            for name in ("GITHUB_OUTPUT", "GITHUB_ENV", "GITHUB_PATH", "GITHUB_STEP_SUMMARY")
        }
        for file in files.values():
            file.write_text("")
        runner_env = {
            **_base_env(),
            **self.extra_env,
            "CI": "true",
            "GITHUB_ACTIONS": "true",
            "RUNNER_TEMP": str(temp),
            "RUNNER_NAME": record.runner_name,
            "GITHUB_WORKSPACE": str(self.workspace),
            "GITHUB_REPOSITORY": self.github["repository"],
            "GITHUB_RUN_ID": self.github["run_id"],
            "GITHUB_EVENT_NAME": self.github["event_name"],
            "GITHUB_SHA": self.github["sha"],
            "GITHUB_API_URL": self.github["api_url"],
            "PATH": os.pathsep.join(extra_path + [_runner_image_path()]),
            **{k: str(v) for k, v in files.items()},
        }
        with self.scripts:
            done = subprocess.run(
                ["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", step["run"]],
                cwd=self.workspace,
                env={**runner_env, **env},
                capture_output=True,
                text=True,
                timeout=300,
            )
        record.log += (
            f"--- {step.get('name', step.get('id', 'run'))} (exit {done.returncode})\n{done.stdout}{done.stderr}"
        )
        record.summary += files["GITHUB_STEP_SUMMARY"].read_text()
        outputs = read_command_file(files["GITHUB_OUTPUT"].read_text())
        exported = read_command_file(files["GITHUB_ENV"].read_text())
        paths = [line for line in files["GITHUB_PATH"].read_text().splitlines() if line]
        return ("success" if done.returncode == 0 else "failure"), outputs, exported, paths

    def run_action(self, step: dict, context: dict, temp: Path, record: Job) -> str:
        action = step["uses"].split("@", 1)[0]
        given = self.engine.value(step.get("with") or {}, context)
        if action == "actions/checkout":  # every job shares the one workspace, at the event's commit
            with self.checkout_lock:
                head = subprocess.run(
                    ["git", "rev-parse", "HEAD"], cwd=self.workspace, capture_output=True, text=True
                ).stdout.strip()
                if head != self.github["sha"]:
                    subprocess.run(
                        ["git", "checkout", "-q", "--force", "--detach", self.github["sha"]],
                        cwd=self.workspace,
                        check=True,
                    )
            return "success"
        if action == "actions/setup-python":
            return "success"
        if action == "actions/upload-artifact":
            return self.upload(given, record)
        if action == "actions/download-artifact":
            return self.download(given, record)
        raise RuntimeError(f"{record.path}: no local stand-in for the action {action}")

    def upload(self, given: dict, record: Job) -> str:
        name = given["name"]
        paths = [Path(line.strip()) for line in str(given["path"]).splitlines() if line.strip()]
        present = [p for p in paths if p.exists()]
        target = self.artifacts / name
        if target.exists():
            if str(given.get("overwrite", "false")).lower() != "true":
                record.log += f"upload-artifact: an artifact named {name} already exists\n"
                return "failure"
            shutil.rmtree(target)
        if not present:
            record.log += f"upload-artifact {name}: no files at {paths}\n"
            return "failure" if given.get("if-no-files-found", "warn") == "error" else "success"
        root = (
            present[0]
            if len(present) == 1 and present[0].is_dir()
            else Path(os.path.commonpath([p.parent for p in present]))
        )
        for source in present:
            destination = target / source.relative_to(root) if source != root else target
            if source.is_dir():
                shutil.copytree(source, destination, dirs_exist_ok=True)
            else:
                destination.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy(source, destination)
        if self.server is not None:
            files = {
                path.relative_to(target).as_posix(): path.read_bytes()
                for path in sorted(target.rglob("*"))
                if path.is_file()
            }
            with self.checkout_lock, self.server.state.lock:
                run_id = int(self.github["run_id"])
                listed = self.server.state.artifacts.setdefault(run_id, [])
                listed[:] = [a for a in listed if a["name"] != name]  # overwrite: the old one is deleted
                self.server.state.add_artifact(run_id, name, files=files)
        return "success"

    def download(self, given: dict, record: Job) -> str:
        destination = Path(given.get("path") or self.workspace)
        if given.get("run-id"):
            return self.download_from_server(given, destination, record)
        if "name" in given:
            source = self.artifacts / given["name"]
            if not source.is_dir():
                record.log += f"download-artifact: no artifact named {given['name']}\n"
                return "failure"
            shutil.copytree(source, destination, dirs_exist_ok=True)
            return "success"
        for source in sorted(self.artifacts.iterdir()):
            if fnmatch.fnmatchcase(source.name, given.get("pattern", "*")):
                into = destination if given.get("merge-multiple") else destination / source.name
                shutil.copytree(source, into, dirs_exist_ok=True)
        return "success"

    def download_from_server(self, given: dict, destination: Path, record: Job) -> str:
        """Another run's artifact, by name, from the local GitHub server (as the action fetches it
        through the API with `github-token`: the run's artifact list, then the archive, two requests
        held to that token's permissions and hourly budget)."""
        if self.server is None or "name" not in given:
            raise RuntimeError(f"{record.path}: a download by run-id needs the local GitHub server and a name")
        token = str(given.get("github-token") or "")
        slug = self.github["repository"]
        for path in (
            f"/repos/{slug}/actions/runs/{given['run-id']}/artifacts",
            f"/repos/{slug}/actions/artifacts/0/zip",
        ):
            with self.server.state.lock:
                _, refusal = self.server.state.rate_limit(token, time.time())
                refusal = refusal or self.server.state.permission_refusal("GET", path, token)
            if refusal is not None:
                record.log += f"download-artifact: GET {path}: HTTP {refusal[0]} {refusal[2]['message']}\n"
                return "failure"
        with self.server.state.lock:
            listed = self.server.state.artifacts.get(int(given["run-id"]), [])
            artifact = next((a for a in listed if a["name"] == given["name"] and not a["expired"]), None)
            blob = self.server.state.blobs.get(artifact["id"]) if artifact else None
        if blob is None:
            record.log += f"download-artifact: run {given['run-id']} has no artifact named {given['name']}\n"
            return "failure"
        with zipfile.ZipFile(io.BytesIO(blob)) as archive:
            archive.extractall(destination)
        return "success"

    # --- what the tests read -----------------------------------------------------------------

    def find(self, pattern: str) -> list[Job]:
        return [job for job in self.jobs if fnmatch.fnmatchcase(job.path, pattern)]


def run_as_runner(script: str, temp: Path, env: dict, timeout: float = 300) -> subprocess.CompletedProcess:
    """One `run:` script outside a whole run, as the runner runs it (bash -eo pipefail in the
    project, RUNNER_TEMP=temp), with `infx` on PATH and no GITHUB_/RUNNER_ variable but ``env``'s."""
    bin_dir = temp / "bin"
    bin_dir.mkdir(parents=True, exist_ok=True)
    (bin_dir / "infx").write_text(f'#!/bin/sh\nexec "{sys.executable}" -m infx "$@"\n')
    (bin_dir / "infx").chmod(0o755)
    base = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "RUNNER_"))}
    runner = {
        **base,
        "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}",
        "PYTHONPATH": str(PROJECT),
        "RUNNER_TEMP": str(temp),
    }
    return subprocess.run(
        ["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", script],
        cwd=PROJECT,
        env={**runner, **env},
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def run_step(script: str, tmp_path: Path, env: dict) -> subprocess.CompletedProcess:
    """Run a workflow's `run:` script as the runner does, its outputs to ``tmp_path/outputs``."""
    return run_as_runner(script, tmp_path, {"GITHUB_OUTPUT": str(tmp_path / "outputs"), **env}, timeout=180)


def load(name: str) -> dict:
    data = yaml.safe_load((WORKFLOWS / name).read_text())
    data["on"] = data.pop(True, data.get("on"))  # PyYAML reads the key `on` as true
    return data


def _path_glob(pattern: str) -> re.Pattern:
    """A job-path pattern: `*` matches within one segment (no `/`); everything else is literal."""
    return re.compile(re.escape(pattern).replace(r"\*", "[^/]*"))


def token_permissions(declared, cap: dict | None, called: bool) -> dict[str, str]:
    """What a job's GITHUB_TOKEN carries: its declared `permissions:` (a mapping, `read-all`,
    `write-all`, or `{}` for nothing), else, in a called workflow, its caller's, else GitHub's
    restricted default; never more than ``cap`` (GitHub: a called workflow's permissions "can be
    only downgraded (not elevated)")."""
    if declared is None:
        granted = dict(cap) if called and cap is not None else dict(RESTRICTED_DEFAULT)
    elif declared in ("read-all", "write-all"):
        level = declared.split("-")[0]
        granted = {scope: level for scope in TOKEN_SCOPES if not (scope == "id-token" and level == "read")}
    else:
        granted = {scope: level for scope, level in dict(declared).items() if level in ("read", "write")}
    if cap is not None:
        granted = {scope: min(level, cap.get(scope, "none"), key=LEVELS.index) for scope, level in granted.items()}
    return {scope: level for scope, level in granted.items() if level != "none"}


def _needs(job: dict) -> list[str]:
    needs = job.get("needs", [])
    return [needs] if isinstance(needs, str) else list(needs)


def _combinations(matrix) -> list[dict | None]:
    if not matrix:
        return [None]
    keys = [k for k in matrix if k not in ("include", "exclude")]
    if set(matrix) - set(keys):
        raise RuntimeError("matrix include/exclude are not used by these workflows, so not implemented")
    return [dict(zip(keys, values)) for values in itertools.product(*(matrix[k] for k in keys))]


def _env_text(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return ""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return value if isinstance(value, str) else json.dumps(value)


def _runner_image_path() -> str:
    """This machine's PATH less the folders that hold an `infx` (the runner image has none: a job
    gets infx only by installing it)."""
    folders = os.environ["PATH"].split(os.pathsep)
    return os.pathsep.join(folder for folder in folders if not (Path(folder) / "infx").exists())


def _base_env() -> dict:
    """The test process's environment without what a runner would not have (infx importable from
    the project through PYTHONPATH included: a job's infx is the one it installed)."""
    return {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("GITHUB_", "RUNNER_", "INFX_GITHUB", "GH_")) and k != "PYTHONPATH"
    }


def read_command_file(text: str) -> dict[str, str]:
    """GITHUB_OUTPUT / GITHUB_ENV: `name=value` lines and `name<<DELIMITER` blocks."""
    values, lines, i = {}, text.splitlines(), 0
    while i < len(lines):
        line = lines[i]
        if "<<" in line and ("=" not in line or line.index("<<") < line.index("=")):
            name, delimiter = line.split("<<", 1)
            end = lines.index(delimiter, i + 1)
            values[name] = "\n".join(lines[i + 1 : end])
            i = end + 1
        elif "=" in line:
            name, value = line.split("=", 1)
            values[name] = value
            i += 1
        else:
            i += 1
    return values


# --- which runs GitHub starts, and which of them concurrency cancels ---------------------------

# GitHub's default activity types of pull_request when a workflow lists none.
DEFAULT_PULL_REQUEST_TYPES = ("opened", "synchronize", "reopened")


def triggers(tree: dict, event_name: str, payload: dict, changed_paths: list[str]) -> bool:
    """Whether GitHub starts the workflow (its parsed ``tree``) for this event.

    As GitHub documents the filters: the activity ``types`` (pull_request's default set when
    absent), ``branches`` (the PR's base branch, the pushed branch) and ``paths`` (a run needs at
    least one changed file matching a pattern; `**` crosses folders, `*` does not).
    """
    on = tree.get("on") or {}
    if event_name not in on:
        return False
    spec = on[event_name] or {}
    if event_name == "pull_request" and payload.get("action") not in spec.get("types", DEFAULT_PULL_REQUEST_TYPES):
        return False
    branch = (
        payload["pull_request"]["base"]["ref"]
        if event_name == "pull_request"
        else payload.get("ref", "").removeprefix("refs/heads/")
    )
    if "branches" in spec and not any(fnmatch.fnmatchcase(branch, pattern) for pattern in spec["branches"]):
        return False
    if "paths" in spec and not any(_path_matches(path, pattern) for path in changed_paths for pattern in spec["paths"]):
        return False
    return True


def _path_matches(path: str, pattern: str) -> bool:
    regex = re.escape(pattern).replace(r"\*\*", "\0").replace(r"\*", "[^/]*").replace("\0", ".*")
    return re.fullmatch(regex, path) is not None


def surviving_runs(engine: Engine, tree: dict, runs: list[dict]) -> list[dict]:
    """The runs (``{"github": context, ...}`` in the order GitHub started them) that no later run of
    the same concurrency group cancels. Events sent together (a PR created with labels sends
    `opened` and one `labeled` per label within a second) start runs that are still in progress
    when the next one arrives, so with ``cancel-in-progress`` only the last of a group runs to the end."""
    concurrency = tree.get("concurrency")
    if concurrency is None:
        return runs
    groups = []
    for run in runs:
        value = engine.value(concurrency, {"github": run["github"], "inputs": {}, "vars": {}})
        group, cancel = (
            (value, False) if isinstance(value, str) else (value["group"], value.get("cancel-in-progress", False))
        )
        groups.append((group, cancel))
    survivors = []
    for index, run in enumerate(runs):
        later = [cancel for group, cancel in groups[index + 1 :] if group == groups[index][0]]
        if not any(later):  # a later run of the same group with cancel-in-progress cancels this one
            survivors.append(run)
    return survivors
