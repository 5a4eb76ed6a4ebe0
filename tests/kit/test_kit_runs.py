"""A benchmark repository adopting infx through `infx init` (no infx source in it) sweeps with
the kit's workflows: every job installs infx from the kit's lock, which pins the session's wheel
shipped in the repository by its hash (`infx init --wheel`)."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

from infx.kit import INSTALL, LOCK_PATH
from infx.points import point_id
from testing.cli import run_cli
from testing.executor import PROJECT, Executor
from testing.gitrepo import git
from testing.runner_python import Runtime, runtime_file

SLUG = "SemiAnalysisAI/InferenceX"  # the bundled changelog's pr-link repository


def kit_repository(tmp_path: Path, runtime: Runtime, origin: str | None = None) -> Path:
    """A benchmark repository (the bundled configs, lanes, recipes and changelog; no infx source)
    after `infx init --wheel` with the session's wheel; committed."""
    repo = tmp_path / "bench"
    repo.mkdir()
    for name in ("configs", "runners", "benchmarks"):
        shutil.copytree(PROJECT / name, repo / name)
    shutil.copy(PROJECT / "perf-changelog.yaml", repo / "perf-changelog.yaml")
    git(repo, "init", "-q", "-b", "main")
    if origin:
        (repo / "configs" / "infx.yaml").unlink()  # init writes it from the remote
        git(repo, "remote", "add", "origin", origin)
    done = run_cli("init", "--wheel", runtime.wheel, cwd=repo)
    assert done.returncode == 0, done.stderr
    assert (repo / ".github" / "infx" / Path(runtime.wheel).name).read_bytes() == Path(runtime.wheel).read_bytes()
    assert not (repo / "infx").exists() and not (repo / "pyproject.toml").exists()
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "Adopt infx")
    return repo


def clean_env() -> dict:
    return {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "INFX_", "PYTHONPATH"))}


def test_a_benchmark_repository_with_the_kit_runs_a_manual_sweep(tmp_path: Path):
    runtime = Runtime.read(runtime_file())
    repo = kit_repository(tmp_path, runtime)
    run = Executor(
        repo,
        tmp_path / "run",
        "workflow_dispatch",
        {"ref": "refs/heads/main"},
        sha=git(repo, "rev-parse", "HEAD"),
        repository=SLUG,
        run_id=9500,
    )
    results = run.run(inputs={"dry-run": True, "no-reuse": True, "config-keys": "dsv4-fp4-gb300-dynamo-sglang"})
    failed = "\n".join(f"== {job.path}\n{job.log[-2000:]}" for job in run.jobs if job.result == "failure")
    assert results["setup"] == "success" and results["sweep"] == "success", failed
    points = [job for job in run.jobs if job.path.endswith("/launch")]
    assert len(points) == 7 and all(job.result == "success" for job in points), failed
    launched = sorted(point_id(point_of(job)) for job in points)
    assert len(set(launched)) == 7
    # Each point job installed infx itself (its own venv), from the kit's lock alone, hash-checked.
    run_point = (repo / ".github" / "workflows" / "run-point.yml").read_text()
    assert run_point.count(f"pip install --quiet {INSTALL}\n") == 1 and "infx==" not in run_point
    assert f"Successfully installed the locked dependencies and infx-{runtime.version}" in run.find("setup")[0].log


def point_of(job) -> dict:
    return json.loads(job.inputs["point"])


def test_the_kits_pre_commit_configuration_runs_infx_from_the_shipped_wheel_offline(tmp_path: Path):
    """A scratch copy of the reference repository adopts this development install of infx
    (`infx init --build-wheel`); its `.pre-commit-config.yaml` (the README shows it), run by the real
    pre-commit with no package index (PIP_NO_INDEX), installs the lock through the hook runner,
    infx from the wheel shipped in .github/infx/, its dependencies from a folder of their wheels,
    every one hash-checked, and runs both hooks, the gate at pre-push against the branch's upstream."""
    repo = patched_corpus(CORPUS, tmp_path / "reference")
    git(repo, "init", "-q", "-b", "main")
    git(repo, "remote", "add", "origin", f"https://github.com/{SLUG}.git")
    version_file = PROJECT / "infx" / "_version.py"  # what an in-place build would rewrite
    before = version_file.read_bytes() if version_file.exists() else None
    done = run_cli("init", "--build-wheel", cwd=repo)
    assert done.returncode == 0, done.stderr
    assert (version_file.read_bytes() if version_file.exists() else None) == before  # the install left as it was
    assert "replaced" not in done.stdout and "kept" not in done.stdout, done.stdout
    (shipped,) = (repo / ".github" / "infx").glob("infx-*-py3-none-any.whl")  # built from this source tree
    version = shipped.name.split("-")[1]
    digest = hashlib.sha256(shipped.read_bytes()).hexdigest()
    assert (repo / LOCK_PATH).read_text().endswith(f"./.github/infx/{shipped.name} \\\n    --hash=sha256:{digest}\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "Adopt infx")
    env = clean_env()
    # The dependencies' wheels, as a wheelhouse beside an offline machine would hold them (from the
    # project's lock: infx is not among them).
    wheelhouse = tmp_path / "wheelhouse"
    downloaded = subprocess.run(
        [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--require-hashes"]
        + ["-r", str(PROJECT / "requirements.lock"), "--dest", str(wheelhouse)],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
    )
    assert downloaded.returncode == 0, downloaded.stderr
    assert not list(wheelhouse.glob("infx-*"))
    bare = tmp_path / "remote.git"
    subprocess.run(["git", "init", "-q", "--bare", str(bare)], check=True)
    git(repo, "remote", "add", "local", str(bare))
    git(repo, "push", "-q", "-u", "local", "main")
    hooks_env = {
        **env,
        "PRE_COMMIT_HOME": str(tmp_path / "pre-commit"),
        "PIP_NO_INDEX": "1",
        "PIP_FIND_LINKS": str(wheelhouse),
    }

    def pre_commit(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run(
            [sys.executable, "-m", "pre_commit", *args],
            cwd=repo,
            capture_output=True,
            text=True,
            env=hooks_env,
            timeout=600,
        )

    assert pre_commit("validate-config").returncode == 0
    ran = pre_commit("run", "--all-files")
    assert ran.returncode == 0 and re.search(r"infx config validate\.+Passed", ran.stdout), ran.stdout + ran.stderr
    made = list((repo / ".git" / "infx-hooks").iterdir())
    assert len(made) == 1 and (made[0] / "bin" / "python").exists()  # one environment per lock, nothing left aside
    installed = subprocess.run(
        [str(made[0] / "bin" / "python"), "-c", "import infx; print(infx.__version__)"],
        cwd=tmp_path,  # not a folder with an infx source
        capture_output=True,
        text=True,
        env=env,
    )
    assert installed.stdout.strip() == version
    (repo / "configs" / "runners.yaml").write_text((repo / "configs" / "runners.yaml").read_text() + "# a comment\n")
    git(repo, "commit", "-qam", "A comment")
    pushed = pre_commit("run", "--hook-stage", "pre-push", "--all-files")
    assert pushed.returncode == 0 and re.search(r"infx changelog gate.*\.+Passed", pushed.stdout), pushed.stdout
    (repo / "perf-changelog.yaml").write_text((repo / "perf-changelog.yaml").read_text() + "- not: [an entry\n")
    git(repo, "commit", "-qam", "A broken changelog")
    broken = pre_commit("run", "--hook-stage", "pre-push", "--all-files")
    assert broken.returncode == 1 and re.search(r"infx changelog gate.*\.+Failed", broken.stdout), broken.stdout
    # A wheel that is not the one the lock pins is refused by pip's hash check, before infx runs.
    shutil.rmtree(made[0])
    shipped.write_bytes(shipped.read_bytes() + b"\0")
    tampered = pre_commit("run", "--all-files")
    assert tampered.returncode == 1 and "DO NOT MATCH THE HASHES" in tampered.stdout + tampered.stderr, tampered.stdout
    assert not list((repo / ".git" / "infx-hooks").iterdir())


# --- a scratch consumer repository: the reference's data and what `infx init` writes -------------------

import gzip  # noqa: E402
import hashlib  # noqa: E402

import pytest  # noqa: E402

from infx.workflows.rerun import artifact_name  # noqa: E402
from testing import github_server  # noqa: E402
from testing.corpus import CORPUS, REFERENCE_ROWS, patched_corpus  # noqa: E402
from testing.executor import JOB_OUTPUTS_LIMIT, RUN_OUTPUTS_LIMIT  # noqa: E402
from testing.github_helpers import result_artifact_files  # noqa: E402
from testing.sweeps import _logs, pr_payload  # noqa: E402

CONSUMER_PR = 41
SWEPT_KEY = "dsv4-fp4-gb300-dynamo-vllm"  # 6 points on gb300-nv, the lane the consumer filled in
DRY_RUN = {"INFX_DRY_RUN": "true"}


def consumer_repository(tmp_path: Path, runtime: Runtime) -> Path:
    """A benchmark repository as a new user makes one: the reference's configs, changelog and recipes
    (tests/data/inferencex-2026-08, its undeclared runner labels declared) and what `infx init`
    writes (`--wheel`: the session's wheel, shipped and hashed; the eval suite), then what init
    leaves to do: the one lane it launches on filled in (the bundled gb300-nv facts). No infx
    source; committed on main."""
    repo = patched_corpus(CORPUS, tmp_path / "consumer")
    git(repo, "init", "-q", "-b", "main")
    git(repo, "remote", "add", "origin", f"https://github.com/{SLUG}.git")
    done = run_cli("init", "--wheel", runtime.wheel, "--lane", "gb300-nv", cwd=repo)
    assert done.returncode == 0 and f"repository: {SLUG}" in (repo / "configs" / "infx.yaml").read_text(), done.stderr
    # Nothing of the reference's was replaced (it has no workflows, settings or eval suite of its own).
    assert "replaced" not in done.stdout and "kept" not in done.stdout, done.stdout
    assert "wrote      benchmarks/evals/suite.yaml" in done.stdout
    shutil.copy(PROJECT / "runners" / "gb300-nv.yaml", repo / "runners" / "gb300-nv.yaml")
    assert not (repo / "infx").exists() and not (repo / "pyproject.toml").exists()
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "Adopt infx")
    return repo


@pytest.fixture
def consumer(tmp_path: Path) -> Path:
    return consumer_repository(tmp_path, Runtime.read(runtime_file()))


@pytest.fixture
def github(monkeypatch):
    owner, name = SLUG.split("/")
    for attribute, value in (("SLUG", SLUG), ("OWNER", owner), ("NAME", name)):
        monkeypatch.setattr(github_server, attribute, value)
    with github_server.LocalGitHub() as gh:
        gh.state.private = True  # permissions enforced on reads as well
        yield gh


ENTRY = (
    f"\n- config-keys:\n    - {SWEPT_KEY}\n  scenario-type:\n    - fixed-seq-len\n  description:\n"
    f'    - "Sweep the GB300 vLLM points again."\n  pr-link: https://github.com/{SLUG}/pull/XXX\n'
)


def open_pull_request(repo: Path, gh) -> str:
    """Branch `pr` with one appended changelog entry; the server knows the pull request. Its head."""
    git(repo, "checkout", "-q", "-b", "pr")
    (repo / "perf-changelog.yaml").write_text((repo / "perf-changelog.yaml").read_text() + ENTRY)
    git(repo, "commit", "-qam", "Sweep the GB300 vLLM points again")
    gh.state.git = repo  # compare and the PR's commits come from the real history
    gh.state.add_pull(CONSUMER_PR, head_ref="pr")
    return git(repo, "rev-parse", "HEAD")


def consumer_pr_run(repo: Path, tmp: Path, gh, run_id: int, only: set[str] | None = None) -> Executor:
    event = pr_payload(repo, "labeled", ["sweep-enabled"], "sweep-enabled", number=CONSUMER_PR)
    gh.state.add_run(run_id, head_branch="pr", event="pull_request", head_sha=event["pull_request"]["head"]["sha"])
    run = Executor(
        repo,
        tmp,
        "pull_request",
        event,
        sha=event["pull_request"]["head"]["sha"],
        ref=f"refs/pull/{CONSUMER_PR}/merge",
        repository=SLUG,
        run_id=run_id,
        github=gh,
        variables=DRY_RUN,
    )
    run.results = run.run(only=only)
    return run


def planned_rows(run: Executor) -> list[dict]:
    return [
        row
        for rows in json.loads((run.artifacts / "sweep-plan" / "plan.json").read_text())["buckets"].values()
        for row in rows
    ]


def launched(run: Executor) -> list[dict]:
    return [point_of(job) for job in run.jobs if job.path.endswith("/launch") and job.result != "skipped"]


def test_a_consumer_repository_runs_a_pr_sweep_and_the_push_that_merges_it(consumer: Path, tmp_path: Path, github):
    """On a private repository, every job's token held to its permissions: the PR's sweep plans and
    launches its points and reports them; once its results are stored and the PR is squash-merged,
    the push to main reuses every point from the PR's final head and republishes them."""
    base = git(consumer, "rev-parse", "HEAD")
    head = open_pull_request(consumer, github)
    pr = consumer_pr_run(consumer, tmp_path / "pr", github, run_id=5101)
    assert pr.results["setup"] == "success" and pr.results["sweep"] == "success", _logs(pr)
    assert pr.results["report-plan"] == pr.results["report-results"] == "success", _logs(pr)
    rows = planned_rows(pr)
    assert (
        rows
        and {row["config-key"] for row in rows} == {SWEPT_KEY}
        and all(len(row["result-key"]) == 64 for row in rows)
    )
    assert sorted(map(point_id, launched(pr))) == sorted(map(point_id, rows))
    assert all(job.result == "success" for job in pr.jobs if job.path.endswith("/launch")), _logs(pr)
    comments = github.state.comments[CONSUMER_PR]
    assert len(comments) == 1 and f"✅ ok: **{len(rows)}**" in comments[0]["body"]
    # What a launching run of those points on the lane would have stored (the launch itself: tests/slurm).
    for row in rows:
        github.state.add_artifact(
            5101, artifact_name(row), files=result_artifact_files(row, row["result-key"], run_id=5101)
        )
    # Squash-merged, the changelog's link naming the pull request.
    git(consumer, "checkout", "-q", "main")
    git(consumer, "merge", "-q", "--squash", "pr")
    changelog = consumer / "perf-changelog.yaml"
    before, _, after = changelog.read_text().rpartition(f"{SLUG}/pull/XXX\n")  # the new entry's link, not history's
    changelog.write_text(f"{before}{SLUG}/pull/{CONSUMER_PR}\n{after}")
    git(consumer, "commit", "-qam", f"Sweep the GB300 vLLM points again (#{CONSUMER_PR})")
    merged = git(consumer, "rev-parse", "HEAD")
    github.state.merge_pull(CONSUMER_PR, merged, head_sha=head)
    github.state.add_run(5102, head_branch="main", event="push", head_sha=merged)
    event = {"ref": "refs/heads/main", "before": base, "after": merged, "head_commit": {"id": merged, "message": "m"}}
    push = Executor(
        consumer,
        tmp_path / "push",
        "push",
        event,
        sha=merged,
        repository=SLUG,
        run_id=5102,
        github=github,
        variables=DRY_RUN,
    )
    push.results = push.run()
    assert push.results["setup"] == "success", _logs(push)
    plan = json.loads((push.artifacts / "sweep-plan" / "plan.json").read_text())
    full = plan["point-count"] + len(plan["reuse"]["reused"])
    assert full >= len(rows) and {item["source-run"] for item in plan["reuse"]["reused"]} == {5101}, plan["reuse"]
    assert sorted(item["result-key"] for item in plan["reuse"]["reused"]) == sorted(row["result-key"] for row in rows)
    assert push.results["republish"] == "success", _logs(push)
    assert sorted(a["name"] for a in github.state.artifacts[5102] if a["name"].startswith("point-")) == sorted(
        artifact_name(row) for row in rows
    )
    assert sorted(map(point_id, launched(push))) == sorted(
        point_id(row) for rows_ in plan["buckets"].values() for row in rows_
    )


def test_a_consumer_setup_job_without_pull_requests_read_says_so(consumer: Path, tmp_path: Path, github):
    """The reuse lookup's trust reads the PR's commits: without `pull-requests: read` (a repository
    that trimmed the kit's permissions), a private repository's GitHub refuses it. Every point then
    runs, and the summary, an annotation and the PR comment name the permission."""
    workflow = consumer / ".github" / "workflows" / "run-sweep.yml"
    marker = "      pull-requests: read # "
    text = workflow.read_text()
    assert text.count(marker) == 1
    workflow.write_text("".join(line for line in text.splitlines(keepends=True) if not line.startswith(marker)))
    git(consumer, "commit", "-qam", "setup without pull-requests: read")
    head = open_pull_request(consumer, github)
    github.state.add_run(5201, head_branch="pr", event="pull_request", head_sha=head)
    first = consumer_pr_run(consumer, tmp_path / "first", github, run_id=5202, only={"setup"})  # the planned rows
    rows = planned_rows(first)
    for row in rows:  # stored by an earlier trusted sweep of the PR's own head
        github.state.add_artifact(
            5201, artifact_name(row), files=result_artifact_files(row, row["result-key"], run_id=5201)
        )
    second = consumer_pr_run(consumer, tmp_path / "second", github, run_id=5203)
    setup = next(job for job in second.jobs if job.path == "setup")
    plan = json.loads((second.artifacts / "sweep-plan" / "plan.json").read_text())
    assert "pull-requests" not in setup.permissions and plan["reuse"]["reused"] == []
    assert sorted(map(point_id, launched(second))) == sorted(map(point_id, rows))
    why = "`pull-requests: read`"
    assert (
        why in plan["reuse"]["notice"] and "HTTP 403 Resource not accessible by integration" in plan["reuse"]["notice"]
    )
    assert "title=plan-reuse-unavailable::" in setup.log and "No reuse" in setup.summary and why in setup.summary
    body = github.state.comments[CONSUMER_PR][0]["body"]
    assert "No reuse" in body and why in body


def test_failed_points_whose_naming_step_never_ran_keep_an_artifact_each(consumer: Path, tmp_path: Path):
    """A point job whose install fails (here: run-point names a lock the repository does not have) never
    runs `Name the point`; its artifact is named in bash from the point, so several such failures in
    one sweep upload one artifact each instead of all but one colliding under `-failed`."""
    workflow = consumer / ".github" / "workflows" / "run-point.yml"
    text = workflow.read_text()
    assert text.count(f"-r {LOCK_PATH}\n") == 1
    workflow.write_text(text.replace(f"-r {LOCK_PATH}\n", "-r .github/infx/no-such.lock\n"))
    git(consumer, "commit", "-qam", "name a lock that does not exist in run-point")
    run = Executor(
        consumer,
        tmp_path / "run",
        "workflow_dispatch",
        {"ref": "refs/heads/main"},
        sha=git(consumer, "rev-parse", "HEAD"),
        repository=SLUG,
        run_id=9501,
    )
    results = run.run(inputs={"dry-run": True, "no-reuse": True, "config-keys": SWEPT_KEY})
    assert results["setup"] == "success" and results["sweep"] == "failure", _logs(run)
    points = [job for job in run.jobs if job.path.endswith("/launch")]
    assert len(points) == 6 and all(job.result == "failure" and "--- Name the point" not in job.log for job in points)
    uploaded = sorted(path.name for path in run.artifacts.iterdir() if path.name.startswith("point-"))
    assert uploaded == sorted(artifact_name(point_of(job), succeeded=False) for job in points)
    for job in points:  # each keeps the point it was, for the record and a rerun
        kept = json.loads((run.artifacts / artifact_name(point_of(job), succeeded=False) / "point.json").read_text())
        assert point_id(kept) == point_id(point_of(job))


def test_a_consumer_dispatch_of_all_1820_reference_points_passes_the_output_limits(consumer: Path, tmp_path: Path):
    """The whole fan-out of a manual dispatch of every point of the reference: the setup job, each
    shard's `load` and matrix, and each point's run-point call with its point, every job's outputs
    within GitHub's 1 MB (UTF-16) and the run's within 50 MB. Each point's own steps are not run
    here (the dry-run launches of the consumer's lane run above and in test_workflow_runs.py)."""
    run = Executor(
        consumer,
        tmp_path / "run",
        "workflow_dispatch",
        {"ref": "refs/heads/main"},
        sha=git(consumer, "rev-parse", "HEAD"),
        repository=SLUG,
        run_id=9502,
    )
    # Every point on the consumer's one lane (the `lane` input): else the plan holds the points of the
    # labels no lane profile serves (infx/launch/lanecheck.py) and only gb300-nv's would fan out.
    results = run.run(
        inputs={"dry-run": True, "no-reuse": True, "lane": "gb300-nv"},
        only={"setup", "sweep", "sweep[*]/load", "sweep[*]/points"},
    )
    assert results["setup"] == "success" and results["sweep"] == "success", _logs(run)
    assert not [job.path for job in run.jobs if job.result == "failure"]
    setup = run.find("setup")[0]
    assert setup.outputs["point-count"] == "1820" and 0 < setup.outputs_size <= JOB_OUTPUTS_LIMIT
    shards = json.loads(setup.outputs["shards"])
    assert any(s["output"] for s in shards) and any(not s["output"] for s in shards)  # some inline, some only as files
    loads = [job for job in run.jobs if re.fullmatch(r"sweep\[\d+\]/load", job.path)]
    assert len([job for job in loads if job.result == "success"]) == sum(1 for s in shards if not s["output"])
    assert all(job.outputs_size <= JOB_OUTPUTS_LIMIT for job in run.jobs) and run.outputs_total <= RUN_OUTPUTS_LIMIT
    points = [
        json.loads(job.inputs["point"]) for job in run.jobs if re.fullmatch(r"sweep\[\d+\]/points\[\d+\]", job.path)
    ]
    assert len(points) == 1820 and len(set(map(point_id, points))) == 1820
    reference = json.loads(gzip.open(REFERENCE_ROWS).read())
    # What infx adds to the reference's row shape (the eval protocol: the consumer has an eval suite).
    added = {"config-key", "recipe-fingerprint", "node-count", "eval-protocol"}

    def canonical(row: dict) -> str:
        return json.dumps({k: v for k, v in row.items() if k not in added}, sort_keys=True)

    assert sorted(map(canonical, points)) == sorted(map(canonical, reference))
