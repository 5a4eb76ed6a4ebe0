"""The workflows are product code: lint them for real and run their logic over events.

- actionlint (with shellcheck when present) and zizmor --offline must report nothing;
  planting a known injection must make both complain (so the checks can fail).
- The job graph of run-sweep.yml is evaluated with the real `if:` expressions for pull
  request, push and dispatch events; the two-level fan-out is simulated end to end with
  the real `matrix:`/`with:` expressions and must run every planned row exactly once.
- Structure: permissions, SHA pins, no expression inside `run:`, fork PRs never reach a
  self-hosted runner, concurrency never cancels a run on main.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from collections import Counter
from pathlib import Path

import pytest
import yaml

from workflow_expressions import Context, condition, expressions_in, render

REPO = Path(__file__).resolve().parents[2]
WORKFLOWS = REPO / ".github" / "workflows"
SLUG = "acme/bench"
SHA_PIN = re.compile(r"^[\w.-]+/[\w.-]+(/[\w./-]+)?@[0-9a-f]{40}$")
LOCAL_USES = ("./", "$/")
MAX_MATRIX = 256


def load(name: str) -> dict:
    data = yaml.safe_load((WORKFLOWS / name).read_text())
    data["on"] = data.pop(True, data.get("on"))  # PyYAML reads the key `on` as true
    return data


def all_workflows() -> dict[str, dict]:
    return {p.name: load(p.name) for p in sorted(WORKFLOWS.glob("*.yml"))}


def steps_of(workflow: dict):
    for job_name, job in workflow["jobs"].items():
        for step in job.get("steps", []):
            yield job_name, step


# --- events ------------------------------------------------------------------------------


def pr_event(action="synchronize", labels=(), label=None, fork=False, draft=False, number=7) -> dict:
    return {
        "event_name": "pull_request",
        "repository": SLUG,
        "run_id": "9001",
        "sha": "c" * 40,
        "event": {
            "action": action,
            "label": {"name": label} if label else None,
            "pull_request": {
                "number": number,
                "draft": draft,
                "labels": [{"name": name} for name in labels],
                "head": {"repo": {"full_name": "stranger/bench" if fork else SLUG}, "sha": "d" * 40},
                "base": {"sha": "b" * 40},
            },
        },
    }


def push_event() -> dict:
    return {"event_name": "push", "repository": SLUG, "run_id": "9002", "sha": "c" * 40,
            "ref": "refs/heads/main", "event": {"before": "a" * 40}}


def dispatch_event() -> dict:
    return {"event_name": "workflow_dispatch", "repository": SLUG, "run_id": "9003", "sha": "c" * 40,
            "ref": "refs/heads/main", "event": {}}


DISPATCH_INPUTS = {"config-keys": "dsv4-*", "filters": "", "lane": "", "dry-run": False,
                   "rerun-of": "", "points": "", "launch-id": ""}


def inputs_for(github: dict, **overrides) -> dict:
    return {**DISPATCH_INPUTS, **overrides} if github["event_name"] == "workflow_dispatch" else {}


# --- the job graph -----------------------------------------------------------------------


def run_graph(workflow: dict, github: dict, inputs: dict, outputs: dict[str, dict], fail: set[str] = frozenset()) -> dict[str, str]:
    """Each job's result under GitHub's rules: a job runs when its `if:` holds given the
    results of its needs (skipped jobs skip their dependants unless a status function says
    otherwise); a job that runs succeeds unless listed in `fail`."""
    results: dict[str, str] = {}
    pending = dict(workflow["jobs"])
    while pending:
        for name, job in list(pending.items()):
            needs = job.get("needs", [])
            needs = [needs] if isinstance(needs, str) else needs
            if any(n not in results for n in needs):
                continue
            need_results = {n: results[n] for n in needs}
            ctx = Context(
                values={"github": github, "inputs": inputs, "vars": {},
                        "needs": {n: {"result": r, "outputs": outputs.get(n, {}) if r == "success" else {}}
                                  for n, r in need_results.items()}},
                needs_ok=all(r == "success" for r in need_results.values()),
                needs_failed=any(r == "failure" for r in need_results.values()),
            )
            runs = condition(job.get("if"), ctx)
            results[name] = ("failure" if name in fail else "success") if runs else "skipped"
            del pending[name]
    return results


SWEEP = "run-sweep.yml"
PLANNED = {"shards": json.dumps([{"id": "multi_node/agentic#0", "bucket": "multi_node/agentic", "index": 0,
                                  "rows": 1, "output": "shard-0", "file": None}]),
           "point-count": "1"}


@pytest.mark.parametrize(
    "github, expected",
    [
        # An unlabelled PR gets its plan posted but runs no point.
        (pr_event(), {"setup": "success", "report-plan": "success", "sweep": "skipped", "report-results": "skipped"}),
        (pr_event(action="opened"), {"setup": "success", "report-plan": "success", "sweep": "skipped"}),
        # The sweep label: on a push to the PR and when the label is added.
        (pr_event(labels=["sweep-enabled"]), {"setup": "success", "sweep": "success", "report-results": "success"}),
        (pr_event(action="labeled", labels=["sweep-enabled"], label="sweep-enabled"),
         {"setup": "success", "report-plan": "success", "sweep": "success", "report-results": "success"}),
        # Any other label changes nothing, even on a labelled PR.
        (pr_event(action="labeled", labels=["sweep-enabled", "documentation"], label="documentation"),
         {"setup": "skipped", "report-plan": "skipped", "sweep": "skipped", "report-results": "skipped"}),
        # Forks and drafts never reach the lanes.
        (pr_event(labels=["sweep-enabled"], fork=True),
         {"setup": "skipped", "report-plan": "skipped", "sweep": "skipped", "report-results": "skipped"}),
        (pr_event(labels=["sweep-enabled"], draft=True), {"setup": "skipped", "sweep": "skipped"}),
        # Main and manual runs sweep, and never talk to a PR.
        (push_event(), {"setup": "success", "report-plan": "skipped", "sweep": "success", "report-results": "skipped"}),
        (dispatch_event(), {"setup": "success", "report-plan": "skipped", "sweep": "success", "report-results": "skipped"}),
    ],
)
def test_job_graph_per_event(github, expected):
    results = run_graph(load(SWEEP), github, inputs_for(github), {"setup": PLANNED})
    assert {job: results[job] for job in expected} == expected


def test_empty_plan_and_failed_setup_run_no_point():
    empty = {"setup": {"shards": "[]", "point-count": "0"}}
    assert run_graph(load(SWEEP), push_event(), {}, empty)["sweep"] == "skipped"
    failed = run_graph(load(SWEEP), pr_event(labels=["sweep-enabled"]), {}, {"setup": PLANNED}, fail={"setup"})
    assert failed["sweep"] == failed["report-plan"] == failed["report-results"] == "skipped"


def test_outcomes_are_reported_even_when_points_fail():
    results = run_graph(load(SWEEP), pr_event(labels=["sweep-enabled"]), {}, {"setup": PLANNED}, fail={"sweep"})
    assert results["report-results"] == "success"


def step_runs(workflow: dict, job: str, step_name: str, github: dict, inputs: dict) -> bool:
    step = next(s for s in workflow["jobs"][job]["steps"] if s.get("name") == step_name)
    return condition(step.get("if"), Context(values={"github": github, "inputs": inputs}))


def test_main_branch_changelog_gate_and_rerun_download_steps():
    sweep = load(SWEEP)
    gate, fetch = "Gate the changelog (main-branch policy)", "Fetch the plan of the run being rerun"
    assert step_runs(sweep, "setup", gate, push_event(), {})
    assert not step_runs(sweep, "setup", gate, pr_event(), {})
    assert not step_runs(sweep, "setup", gate, dispatch_event(), DISPATCH_INPUTS)
    assert step_runs(sweep, "setup", fetch, dispatch_event(), {**DISPATCH_INPUTS, "rerun-of": "77"})
    assert not step_runs(sweep, "setup", fetch, dispatch_event(), DISPATCH_INPUTS)
    assert not step_runs(sweep, "setup", fetch, push_event(), {})
    gate_step = next(s for s in sweep["jobs"]["setup"]["steps"] if s.get("name") == gate)
    assert "--pr-number" not in gate_step["run"], "the push gate must apply the main-branch pr-link policy"


# --- concurrency -------------------------------------------------------------------------


def concurrency(github: dict) -> tuple[str, bool]:
    spec = load(SWEEP)["concurrency"]
    ctx = Context(values={"github": github, "inputs": {}})
    return render(spec["group"], ctx), bool(render(spec["cancel-in-progress"], ctx))


def test_concurrency_cancels_superseded_pr_sweeps_only():
    first, second = concurrency(pr_event()), concurrency(pr_event(labels=["sweep-enabled"]))
    assert first == second and first[1] is True
    labelled = concurrency(pr_event(action="labeled", label="sweep-enabled"))
    assert labelled == first
    other_pr = concurrency(pr_event(number=8))
    assert other_pr[0] != first[0]
    noise = concurrency(pr_event(action="labeled", label="documentation"))
    assert noise[0] != first[0], "an unrelated label event must not cancel the PR's sweep"
    main_a, main_b = concurrency(push_event()), concurrency({**push_event(), "run_id": "9100"})
    assert main_a[1] is False and main_b[1] is False
    assert main_a[0] != main_b[0], "runs on main never share a group, so none waits on or cancels another"
    assert concurrency(dispatch_event())[1] is False


# --- the two-level fan-out ----------------------------------------------------------------


def planned_rows(count: int, prefix: str) -> list[dict]:
    return [{"config-key": f"{prefix}-key", "recipe-fingerprint": f"{prefix}{i:06d}".ljust(64, "0"),
             "conc": [i + 1] if i % 2 else i + 1, "runner": "gb300-nv",
             "scenario-type": "agentic-coding" if i % 3 == 0 else "fixed-seq-len"} for i in range(count)]


def shard_plan() -> tuple[list[dict], dict, dict[str, list[dict]], list[dict]]:
    """Shards as the contract describes them: 66 inline shards (two past the outputs the
    setup job declares), one spilled to a file, one full 256-row shard."""
    all_rows, shards, step_outputs, files = [], [], {}, {}
    layout = [("multi_node/8k1k", 256, "inline")] + [(f"single_node/s{k}", 3, "inline") for k in range(65)] + [
        ("multi_node/agentic", 40, "file")]
    for k, (bucket, count, where) in enumerate(layout):
        rows = planned_rows(count, f"{k:03d}")
        all_rows.extend(rows)
        files[f"shard-{k}.json"] = rows
        descriptor = {"id": f"{bucket}#0", "bucket": bucket, "index": 0, "rows": count,
                      "output": f"shard-{k}" if where == "inline" else None,
                      "file": f"shard-{k}.json" if where == "file" else None}
        if where == "inline":
            step_outputs[f"shard-{k}"] = json.dumps(rows, separators=(",", ":"))
        shards.append(descriptor)
    step_outputs["shards"] = json.dumps(shards)
    step_outputs["point-count"] = str(len(all_rows))
    return shards, step_outputs, files, all_rows


def test_fan_out_runs_every_planned_row_exactly_once_and_no_matrix_passes_256():
    sweep, shard_wf, point_wf = load(SWEEP), load("sweep-shard.yml"), load("run-point.yml")
    shards, step_outputs, files, all_rows = shard_plan()
    github = push_event()

    # The setup job's declared outputs, evaluated from its plan step's outputs.
    setup = sweep["jobs"]["setup"]
    ctx = Context(values={"steps": {"plan": {"outputs": step_outputs}}})
    job_outputs = {name: render(expr, ctx) for name, expr in setup["outputs"].items()}
    assert json.loads(job_outputs["shards"]) == shards

    sweep_job = sweep["jobs"]["sweep"]
    needs = {"setup": {"result": "success", "outputs": job_outputs}}
    level1 = render(sweep_job["strategy"]["matrix"]["shard"], Context(values={"needs": needs}))
    assert len(level1) <= MAX_MATRIX and level1 == shards
    launched: list[dict] = []
    via_file = 0
    for shard in level1:
        ctx = Context(values={"needs": needs, "matrix": {"shard": shard}, "inputs": {}, "github": github})
        shard_inputs = {k: render(v, ctx) for k, v in sweep_job["with"].items()}
        load_job = shard_wf["jobs"]["load"]
        load_outputs = {}
        load_runs = condition(load_job.get("if"), Context(values={"inputs": shard_inputs}))
        if load_runs:  # the load job reads the shard's file from the plan artifact
            via_file += 1
            load_outputs = {"rows": json.dumps(files[shard_inputs["shard-file"]])}
        points_job = shard_wf["jobs"]["points"]
        level2_needs = {"load": {"result": "success" if load_runs else "skipped", "outputs": load_outputs}}
        ctx2 = Context(values={"inputs": shard_inputs, "needs": level2_needs},
                       needs_ok=load_runs)
        assert condition(points_job.get("if"), ctx2)
        rows = render(points_job["strategy"]["matrix"]["point"], ctx2)
        assert len(rows) <= MAX_MATRIX
        for row in rows:
            ctx3 = Context(values={"inputs": shard_inputs, "matrix": {"point": row}})
            point_inputs = {k: render(v, ctx3) for k, v in points_job["with"].items()}
            assert set(point_inputs) <= set(point_wf["on"]["workflow_call"]["inputs"])
            launched.append(json.loads(point_inputs["point"]))
    assert via_file == 3, "two shards past the declared outputs and the spilled shard load from files"
    key = lambda r: json.dumps(r, sort_keys=True)  # noqa: E731
    assert Counter(map(key, launched)) == Counter(map(key, all_rows))


def test_setup_declares_contiguous_inline_shard_outputs():
    outputs = load(SWEEP)["jobs"]["setup"]["outputs"]
    shard_names = sorted((n for n in outputs if n.startswith("shard-")), key=lambda n: int(n.split("-")[1]))
    assert shard_names == [f"shard-{k}" for k in range(len(shard_names))] and len(shard_names) >= 32
    for name in shard_names:
        assert outputs[name] == f"${{{{ steps.plan.outputs.{name} }}}}"


# --- the per-point job -------------------------------------------------------------------


def point_job_value(key: str, point: dict, **inputs) -> object:
    job = load("run-point.yml")["jobs"]["launch"]
    values = {"point": json.dumps(point), "lane": "", "dry-run": False, **inputs}
    return render(job[key], Context(values={"inputs": values}))


def test_point_runs_on_its_lane_with_a_timeout_by_scenario():
    fixed = {"runner": "gb300-nv", "scenario-type": "fixed-seq-len", "conc": [4, 8], "config-key": "k"}
    agentic = {**fixed, "scenario-type": "agentic-coding", "conc": 120}
    assert point_job_value("runs-on", fixed) == "gb300-nv"
    assert point_job_value("runs-on", fixed, lane="gb300-nv-canary") == "gb300-nv-canary"
    assert point_job_value("runs-on", fixed, **{"dry-run": True}) == "ubuntu-latest"
    assert point_job_value("timeout-minutes", fixed) == 480
    assert point_job_value("timeout-minutes", agentic) == 780
    assert point_job_value("timeout-minutes", agentic, **{"dry-run": True}) == 20
    assert point_job_value("name", fixed) == "k c4x8"
    assert point_job_value("name", agentic) == "k c120"


def test_point_reaches_infx_only_through_the_environment():
    job = load("run-point.yml")["jobs"]["launch"]
    assert job["env"]["POINT_JSON"] == "${{ inputs.point }}"
    lane = lambda **inputs: render(job["env"]["LANE"], Context(values={"inputs": {  # noqa: E731
        "point": json.dumps({"runner": "gb300-nv"}), "lane": "", **inputs}}))
    assert lane() == "gb300-nv" and lane(lane="gb300-nv-canary") == "gb300-nv-canary"
    launch = next(s for s in job["steps"] if s.get("id") == "launch")
    assert "infx launch" in launch["run"] and "POINT_JSON" not in launch["run"]
    upload = next(s for s in job["steps"] if "upload-artifact" in s.get("uses", ""))
    cleanup = next(s for s in job["steps"] if "scancel" in s.get("run", ""))
    assert upload["if"] == "always()" and cleanup["if"].startswith("always()")
    # The artifact name carries the outcome that reruns and the PR report read.
    name = lambda outcome: render(upload["with"]["name"], Context(values={  # noqa: E731
        "steps": {"point": {"outputs": {"id": "0123456789abcdef-c4"}}, "launch": {"outcome": outcome}}}))
    assert name("success") == "point-0123456789abcdef-c4"
    assert name("failure") == name("cancelled") == "point-0123456789abcdef-c4-failed"


def test_fork_pull_requests_never_reach_a_self_hosted_runner():
    job = load("run-point.yml")["jobs"]["launch"]
    assert not condition(job["if"], Context(values={"github": pr_event(fork=True)}))
    assert condition(job["if"], Context(values={"github": pr_event()}))
    assert condition(job["if"], Context(values={"github": push_event()}))
    # Only run-point.yml chooses a runner from data; every other job is GitHub-hosted.
    for name, workflow in all_workflows().items():
        for job_name, job in workflow["jobs"].items():
            if "runs-on" in job and name != "run-point.yml":
                assert job["runs-on"] == "ubuntu-latest", (name, job_name)
        assert "pull_request_target" not in workflow["on"], name


# --- security structure --------------------------------------------------------------------


ALLOWED_WRITES = {("run-sweep.yml", "report-plan"): {"pull-requests"}, ("run-sweep.yml", "report-results"): {"pull-requests"}}


def test_least_privilege_permissions():
    for name, workflow in all_workflows().items():
        assert workflow["permissions"] == {}, f"{name}: the top level must grant nothing"
        for job_name, job in workflow["jobs"].items():
            assert "permissions" in job, f"{name}:{job_name} must say what it needs"
            writes = {scope for scope, level in job["permissions"].items() if level == "write"}
            assert writes <= ALLOWED_WRITES.get((name, job_name), set()), (name, job_name, writes)
            assert "secrets" not in job or job["secrets"] != "inherit", (name, job_name)


def test_every_action_is_pinned_by_commit_sha_with_its_version():
    seen = 0
    for path in sorted(WORKFLOWS.glob("*.yml")):
        for number, line in enumerate(path.read_text().splitlines(), 1):
            match = re.match(r"^\s*(?:-\s+)?uses:\s*(\S+)(.*)$", line)
            if not match:
                continue
            target, rest = match.groups()
            if target.startswith(LOCAL_USES):
                continue
            seen += 1
            assert SHA_PIN.match(target), f"{path.name}:{number}: {target} is not pinned to a full commit SHA"
            assert re.search(r"#\s*v\d+(\.\d+)*", rest), f"{path.name}:{number}: name the pinned version in a comment"
    assert seen >= 4


def test_checkouts_do_not_persist_the_token():
    for name, workflow in all_workflows().items():
        for job_name, step in steps_of(workflow):
            if "actions/checkout@" in step.get("uses", ""):
                assert step.get("with", {}).get("persist-credentials") is False, (name, job_name)


def test_no_expression_inside_any_run_script():
    for name, workflow in all_workflows().items():
        for job_name, step in steps_of(workflow):
            if "run" in step:
                assert not expressions_in(step["run"]), f"{name}:{job_name}:{step.get('name')}: pass values via env"


def test_untrusted_event_text_only_reaches_env_or_conditions():
    """Event fields a PR author controls (titles, bodies, branch names) appear nowhere."""
    untrusted = re.compile(r"github\.event\.(pull_request\.(title|body|head\.ref|head\.label)|head_commit|commits|comment|review|issue)"
                           r"|github\.head_ref")
    for path in sorted(WORKFLOWS.glob("*.yml")):
        for expr in expressions_in(path.read_text()):
            assert not untrusted.search(expr), f"{path.name}: {expr}"


def test_actionlint_declares_every_runner_label_of_runners_yaml():
    declared = set(yaml.safe_load((REPO / ".github" / "actionlint.yaml").read_text())["self-hosted-runner"]["labels"])
    labels = set(yaml.safe_load((REPO / "configs" / "runners.yaml").read_text())["labels"])
    assert labels <= declared, sorted(labels - declared)


# --- the real linters ----------------------------------------------------------------------


def tool(name: str) -> str:
    path = shutil.which(name)
    if path is None:
        pytest.fail(f"{name} is not installed; `pip install -e '.[lint]'` (as .ci/run does) provides it")
    return path


def actionlint(root: Path) -> subprocess.CompletedProcess:
    argv = [tool("actionlint"), "-no-color", "-oneline", "-shellcheck", shutil.which("shellcheck") or ""]
    return subprocess.run(argv, cwd=root, capture_output=True, text=True, timeout=120)


def zizmor(root: Path) -> subprocess.CompletedProcess:
    argv = [tool("zizmor"), "--offline", "--format", "json", "--no-progress", str(root / ".github" / "workflows")]
    return subprocess.run(argv, cwd=root, capture_output=True, text=True, timeout=120,
                          env={**os.environ, "NO_COLOR": "1"})


def test_actionlint_is_clean():
    result = actionlint(REPO)
    assert result.returncode == 0 and not result.stdout.strip(), result.stdout + result.stderr


def test_zizmor_finds_nothing():
    result = zizmor(REPO)
    assert result.returncode == 0, result.stdout + result.stderr
    assert json.loads(result.stdout) == []


def test_both_linters_catch_a_planted_injection(tmp_path):
    shutil.copytree(REPO / ".github", tmp_path / ".github")
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)  # actionlint finds the project by its repository
    target = tmp_path / ".github" / "workflows" / "pr-checks.yml"
    text = target.read_text().replace(
        "run: infx config validate --format github",
        'run: echo "${{ github.event.pull_request.title }}"',
    )
    target.write_text(text)
    linted = actionlint(tmp_path)
    assert linted.returncode != 0 and "github.event.pull_request.title" in linted.stdout
    audited = zizmor(tmp_path)
    assert audited.returncode != 0
    assert "template-injection" in {finding["ident"] for finding in json.loads(audited.stdout)}


# --- names the GitHub commands rely on -------------------------------------------------------


def dispatch_title(inputs: dict) -> str:
    return render(load(SWEEP)["run-name"], Context(values={"github": dispatch_event(), "inputs": inputs}))


def test_a_rerun_title_carries_its_launch_marker():
    from infx.workflows.rerun import launch_marker

    inputs = {**DISPATCH_INPUTS, "rerun-of": "4242", "points": "a b", "launch-id": "0123456789abcdef"}
    assert launch_marker("0123456789abcdef") in dispatch_title(inputs)
    assert "launch" not in dispatch_title(DISPATCH_INPUTS)


def test_artifact_names_agree_with_the_point_workflow(tmp_path):
    import sys

    from infx.workflows.rerun import artifact_name
    from infx.points import point_id

    point = {"config-key": "k", "recipe-fingerprint": "f" * 64, "conc": [120], "runner": "gb300-nv"}
    result = subprocess.run([sys.executable, "-m", "infx", "github", "point-id", "--format", "github"],
                            capture_output=True, text=True, cwd=REPO,
                            env={**os.environ, "PYTHONPATH": str(REPO), "POINT_JSON": json.dumps(point),
                                 "GITHUB_OUTPUT": str(tmp_path / "out")})
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == point_id(point)
    outputs = (tmp_path / "out").read_text()
    assert f"\n{point_id(point)}\n" in outputs
    upload = next(s for s in load("run-point.yml")["jobs"]["launch"]["steps"] if "upload-artifact" in s.get("uses", ""))
    for outcome, succeeded in (("success", True), ("failure", False)):
        ctx = Context(values={"steps": {"point": {"outputs": {"id": point_id(point)}}, "launch": {"outcome": outcome}}})
        assert render(upload["with"]["name"], ctx) == artifact_name(point, succeeded)


# --- the setup and load scripts, run for real -------------------------------------------------


def step_script(workflow: str, job: str, step_id: str) -> str:
    return next(s for s in load(workflow)["jobs"][job]["steps"] if s.get("id") == step_id)["run"]


def run_step(script: str, tmp_path: Path, env: dict) -> subprocess.CompletedProcess:
    """Run a workflow's `run:` script as the runner does (bash -e), with `infx` on PATH."""
    import sys

    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    shim = bin_dir / "infx"
    shim.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m infx "$@"\n')
    shim.chmod(0o755)
    base = {k: v for k, v in os.environ.items() if not k.startswith(("GITHUB_", "RUNNER_"))}
    full_env = {**base, "PATH": f"{bin_dir}:{os.environ['PATH']}", "PYTHONPATH": str(REPO),
                "RUNNER_TEMP": str(tmp_path), "GITHUB_OUTPUT": str(tmp_path / "outputs"), **env}
    return subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", script], cwd=REPO,
                          env=full_env, capture_output=True, text=True, timeout=180)


def read_outputs(path: Path) -> dict[str, str]:
    outputs, lines = {}, path.read_text().splitlines()
    i = 0
    while i < len(lines):
        name, delimiter = lines[i].split("<<", 1)
        end = lines.index(delimiter, i + 1)
        outputs[name] = "\n".join(lines[i + 1:end])
        i = end + 1
    return outputs


def test_manual_dispatch_setup_builds_shards_and_a_rerun_selects_from_them(tmp_path):
    from infx.points import point_id

    plan_script = step_script(SWEEP, "setup", "plan")
    dispatch = {"EVENT_NAME": "workflow_dispatch", "CONFIG_KEYS": "dsv4-*-gb300-*", "FILTERS": "--max-conc 512",
                "RERUN_OF": "", "POINTS": ""}
    result = run_step(plan_script, tmp_path, dispatch)
    assert result.returncode == 0, result.stderr
    outputs = read_outputs(tmp_path / "outputs")
    shards = json.loads(outputs["shards"])
    plan = json.loads((tmp_path / "plan.json").read_text())
    assert int(outputs["point-count"]) == len(plan) > 0 and all(max(r["conc"] if isinstance(r["conc"], list) else [r["conc"]]) <= 512 for r in plan)
    shard_rows = [row for d in shards for row in json.loads((tmp_path / "infx-shards" / d["file"]).read_text())]
    assert [point_id(r) for r in shard_rows] == [point_id(r) for r in plan]

    # Level 2 reads a shard from its file exactly as an inline output would carry it.
    first = shards[0]
    (tmp_path / "sweep-plan").mkdir()
    shutil.copytree(tmp_path / "infx-shards", tmp_path / "sweep-plan" / "infx-shards")
    (tmp_path / "outputs").write_text("")
    loaded = run_step(step_script("sweep-shard.yml", "load", "rows"), tmp_path, {"SHARD_FILE": first["file"]})
    assert loaded.returncode == 0, loaded.stderr
    assert json.loads(read_outputs(tmp_path / "outputs")["rows"]) == json.loads(outputs[first["output"]])

    # A rerun of two of those points: the setup selects exactly them from the earlier plan.
    (tmp_path / "rerun-plan").mkdir()
    shutil.copy(tmp_path / "plan.json", tmp_path / "rerun-plan" / "plan.json")
    wanted = sorted({point_id(plan[0]), point_id(plan[-1])})
    (tmp_path / "outputs").write_text("")
    rerun = run_step(plan_script, tmp_path, {**dispatch, "RERUN_OF": "4242", "POINTS": " ".join(wanted)})
    assert rerun.returncode == 0, rerun.stderr
    assert sorted(point_id(r) for r in json.loads((tmp_path / "plan.json").read_text())) == wanted
    assert read_outputs(tmp_path / "outputs")["point-count"] == str(len(wanted))


def test_dispatch_inputs_reach_infx_as_words_never_as_shell(tmp_path):
    hostile = {"EVENT_NAME": "workflow_dispatch", "CONFIG_KEYS": "$(touch pwned) `touch pwned2` no-such-key*",
               "FILTERS": "; touch pwned3", "RERUN_OF": "", "POINTS": ""}
    result = run_step(step_script(SWEEP, "setup", "plan"), tmp_path, hostile)
    assert result.returncode != 0  # infx, not the shell, refuses the words
    assert not any((REPO / name).exists() or (tmp_path / name).exists() for name in ("pwned", "pwned2", "pwned3"))
    shard_file = run_step(step_script("sweep-shard.yml", "load", "rows"), tmp_path, {"SHARD_FILE": "../../etc/passwd"})
    assert shard_file.returncode != 0 and "unexpected shard file name" in shard_file.stdout
