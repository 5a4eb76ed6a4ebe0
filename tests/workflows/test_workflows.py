"""The workflows are product code: lint them for real and run their logic over events.

- actionlint (with shellcheck when present) and zizmor --offline must report nothing;
  planting a known injection must make both complain (so the checks can fail).
- Single expressions of the workflows (concurrency, the per-point job's runner, timeout,
  name, environment and artifact name, the run name) evaluated by GitHub's own evaluator
  (executor.Engine); whole runs are in test_workflow_runs.py.
- Structure: permissions, SHA pins, no expression inside `run:`, fork PRs never reach a
  self-hosted runner, concurrency never cancels a run on main.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

from testing.cli import run_cli
from testing.executor import WORKFLOWS, Engine, load, read_command_file, run_as_runner, run_step

REPO = Path(__file__).resolve().parents[2]
SLUG = "acme/bench"
SHA_PIN = re.compile(r"^[\w.-]+/[\w.-]+(/[\w./-]+)?@[0-9a-f]{40}$")
LOCAL_USES = ("./", "$/")
MAX_MATRIX = 256


def all_workflows() -> dict[str, dict]:
    return {p.name: load(p.name) for p in sorted(WORKFLOWS.glob("*.yml"))}


def steps_of(workflow: dict):
    for job_name, job in workflow["jobs"].items():
        for step in job.get("steps", []):
            yield job_name, step


# --- GitHub's evaluator over single expressions --------------------------------------------------

EXPRESSION = re.compile(r"\$\{\{(.*?)\}\}", re.S)


def expressions_in(text: str) -> list[str]:
    return [m.strip() for m in EXPRESSION.findall(text)]


@pytest.fixture(scope="module")
def engine():
    engine = Engine()
    yield engine
    engine.close()


def parsed(engine: Engine, name: str) -> dict:
    return engine.parse(WORKFLOWS / name)


def pr_event(action="synchronize", labels=(), label=None, fork=False, number=7) -> dict:
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
                "draft": False,
                "labels": [{"name": n} for n in labels],
                "head": {"repo": {"full_name": "stranger/bench" if fork else SLUG}, "sha": "d" * 40},
                "base": {"sha": "b" * 40},
            },
        },
    }


def push_event(run_id="9002") -> dict:
    return {
        "event_name": "push",
        "repository": SLUG,
        "run_id": run_id,
        "sha": "c" * 40,
        "ref": "refs/heads/main",
        "event": {"before": "a" * 40},
    }


def dispatch_event() -> dict:
    return {
        "event_name": "workflow_dispatch",
        "repository": SLUG,
        "run_id": "9003",
        "sha": "c" * 40,
        "ref": "refs/heads/main",
        "event": {},
    }


DISPATCH_INPUTS = {
    "config-keys": "dsv4-*",
    "filters": "",
    "lane": "",
    "dry-run": False,
    "rerun-of": "",
    "points": "",
    "launch-id": "",
}
SWEEP = "run-sweep.yml"


def test_main_branch_gate_applies_the_main_branch_policy():
    gate_step = next(
        s for s in load(SWEEP)["jobs"]["setup"]["steps"] if s.get("name") == "Gate the changelog (main-branch policy)"
    )
    assert "--pr-number" not in gate_step["run"], "the push gate must apply the main-branch pr-link policy"


def test_the_workflow_label_list_is_the_label_table():
    from infx.workflows.labels import LABELS

    text = (WORKFLOWS / SWEEP).read_text()
    lists = re.findall(r"fromJSON\('(\[.*?\])'\)", text)
    assert len(lists) == 2 and all(json.loads(found) == list(LABELS) for found in lists)


# --- concurrency -------------------------------------------------------------------------


def test_concurrency_cancels_superseded_pr_sweeps_only(engine):
    spec = parsed(engine, SWEEP)["concurrency"]

    def concurrency(github: dict) -> tuple[str, bool]:
        value = engine.value(spec, {"github": github, "inputs": {}})
        return value["group"], value["cancel-in-progress"]

    first, second = concurrency(pr_event()), concurrency(pr_event(labels=["sweep-enabled"]))
    assert first == second and first[1] is True
    for action in ("labeled", "unlabeled"):
        assert concurrency(pr_event(action=action, label="full-sweep-enabled")) == first
    other_pr = concurrency(pr_event(number=8))
    assert other_pr[0] != first[0]
    noise = concurrency(pr_event(action="labeled", label="documentation"))
    assert noise[0] != first[0], "an unrelated label event must not cancel the PR's sweep"
    main_a, main_b = concurrency(push_event()), concurrency(push_event(run_id="9100"))
    assert main_a[1] is False and main_b[1] is False
    assert main_a[0] != main_b[0], "runs on main never share a group, so none waits on or cancels another"
    assert concurrency(dispatch_event())[1] is False


# --- results are never lost: uploads, the results steps, republishing ------------------------------------


STATUSES = {"failed": {"failure": True}, "cancelled": {"cancelled": True}, "succeeded": {"success": True}}


def test_every_upload_of_results_runs_whatever_happened_before_it(engine):
    """A point's artifact and the sweep's results.json are uploaded on failure and on cancel too
    (`always()`): a compare or plot that failed, or a cancel, never costs the sweep its results."""
    uploads = [
        (name, job, step)
        for name, job in (("run-point.yml", "launch"), (SWEEP, "results"))
        for step in parsed(engine, name)["jobs"][job]["steps"]
        if "upload-artifact" in step.get("uses", "")
    ]
    assert len(uploads) == 2
    for name, job, step in uploads:
        for status in STATUSES.values():
            assert engine.condition(step.get("if"), {"steps": {}, "inputs": {"dry-run": False}}, status), (
                name,
                job,
                status,
            )


def test_compare_and_plot_run_on_their_own_once_collect_wrote_results(engine):
    steps = {s.get("id") or s.get("name"): s for s in parsed(engine, SWEEP)["jobs"]["results"]["steps"]}

    def runs(step: str, collect: str, compare: str, status: dict) -> bool:
        context = {"steps": {"collect": {"outcome": collect}, "compare": {"outcome": compare}}}
        return engine.condition(steps[step].get("if"), context, status)

    assert runs("compare", "success", "", STATUSES["succeeded"]) and runs(
        "plot", "success", "failure", STATUSES["failed"]
    )
    assert not runs("plot", "failure", "skipped", STATUSES["failed"]) and not runs(
        "Summarise", "success", "failure", STATUSES["failed"]
    )
    assert runs("Summarise", "success", "success", STATUSES["failed"])  # the plot failed: the table still lands


def test_only_a_sweep_of_main_republishes_its_reused_points(engine):
    job = parsed(engine, SWEEP)["jobs"]["republish"]
    needs = {
        "setup": {
            "result": "success",
            "outputs": {"republish": json.dumps([[{"name": "point-" + "a" * 64, "run": 5}]])},
        }
    }
    status = STATUSES["succeeded"]
    assert engine.condition(job["if"], {"github": push_event(), "needs": needs}, status)
    assert engine.condition(job["if"], {"github": dispatch_event(), "needs": needs}, status)
    assert not engine.condition(job["if"], {"github": pr_event(), "needs": needs}, status)
    assert not engine.condition(
        job["if"], {"github": {**dispatch_event(), "ref": "refs/heads/feature"}, "needs": needs}, status
    )
    empty = {"setup": {"result": "success", "outputs": {"republish": "[]"}}}
    assert not engine.condition(job["if"], {"github": push_event(), "needs": empty}, status)
    level2 = parsed(engine, "republish.yml")["jobs"]["point"]
    [download, upload] = level2["steps"]
    point = {"name": "point-" + "a" * 64, "run": 5}
    assert (
        engine.value(
            download["with"], {"matrix": {"point": point}, "github": {"token": "t"}, "runner": {"temp": "/t"}}
        )["run-id"]
        == 5
    )
    assert engine.value(upload["with"], {"matrix": {"point": point}, "runner": {"temp": "/t"}})["name"] == point["name"]


# --- the per-point job -------------------------------------------------------------------


def point_job(engine: Engine) -> dict:
    return parsed(engine, "run-point.yml")["jobs"]["launch"]


def test_point_runs_on_its_lane_with_a_timeout_by_scenario(engine):
    def point_job_value(key: str, point: dict, **inputs) -> object:
        values = {"point": json.dumps(point), "lane": "", "dry-run": False, "skip-lanes": "[]", **inputs}
        return engine.value(point_job(engine)[key], {"inputs": values})

    fixed = {"runner": "gb300-nv", "scenario-type": "fixed-seq-len", "conc": [4, 8], "config-key": "k"}
    agentic = {**fixed, "scenario-type": "agentic-coding", "conc": 120}
    # Every self-hosted runner carries `self-hosted` besides its own labels: a job asks for both.
    assert point_job_value("runs-on", fixed) == ["self-hosted", "gb300-nv"]
    assert point_job_value("runs-on", fixed, lane="gb300-nv-canary") == ["self-hosted", "gb300-nv-canary"]
    assert point_job_value("runs-on", {**fixed, "runner": 'x", "ubuntu-latest'}) == [
        "self-hosted",
        'x", "ubuntu-latest',
    ]
    assert point_job_value("runs-on", fixed, **{"dry-run": True}) == "ubuntu-latest"
    assert point_job_value("timeout-minutes", fixed) == 480
    assert point_job_value("timeout-minutes", agentic) == 780
    assert point_job_value("timeout-minutes", agentic, **{"dry-run": True}) == 20
    assert point_job_value("name", fixed) == "k c4x8"
    assert point_job_value("name", agentic) == "k c120"


def test_point_reaches_infx_only_through_the_environment(engine):
    job = load("run-point.yml")["jobs"]["launch"]
    assert job["env"]["POINT_JSON"] == "${{ inputs.point }}"

    def lane(**inputs):
        context = {"inputs": {"point": json.dumps({"runner": "gb300-nv"}), "lane": "", **inputs}}
        return engine.value(point_job(engine)["env"]["LANE"], context)

    assert lane() == "gb300-nv" and lane(lane="gb300-nv-canary") == "gb300-nv-canary"
    launch = next(s for s in job["steps"] if s.get("id") == "launch")
    assert "infx launch" in launch["run"] and "POINT_JSON" not in launch["run"]
    upload = next(s for s in job["steps"] if "upload-artifact" in s.get("uses", ""))
    cleanup = next(s for s in job["steps"] if "scancel" in s.get("run", ""))
    assert upload["if"] == "always()" and cleanup["if"].startswith("always()")
    # The artifact name carries the outcome that reruns and the PR report read.
    naming = next(s for s in point_job(engine)["steps"] if s.get("id") == "artifact")
    assert (
        naming["if"] == "always()"
        and "upload-artifact"
        in job["steps"][job["steps"].index(next(s for s in job["steps"] if s.get("id") == "artifact")) + 1]["uses"]
    )

    def outcome(launch, results="success"):
        steps = {"launch": {"outcome": launch}, "results": {"outcome": results}}
        return engine.value(naming["env"]["OUTCOME"], {"steps": steps})

    assert outcome("success") == "" and outcome("success", "skipped") == ""
    assert (
        outcome("failure") == outcome("cancelled") == outcome("skipped") == outcome("success", "failure") == "-failed"
    )


def test_fork_pull_requests_and_down_lanes_never_reach_a_self_hosted_runner(engine):
    condition = point_job(engine)["if"]
    inputs = {"point": json.dumps({"runner": "gb300-nv"}), "lane": "", "skip-lanes": "[]"}

    def runs(github, **more):
        return engine.condition(condition, {"github": github, "inputs": {**inputs, **more}}, {"success": True})

    assert not runs(pr_event(fork=True))
    assert runs(pr_event()) and runs(push_event())
    assert not runs(push_event(), **{"skip-lanes": '["gb300-nv"]'})
    assert runs(push_event(), **{"skip-lanes": '["gb300-nv"]', "lane": "other-lane"})
    # Only run-point.yml chooses a runner from data; every other job is GitHub-hosted.
    for name, workflow in all_workflows().items():
        for job_name, job in workflow["jobs"].items():
            if "runs-on" in job and (name, job_name) not in SELF_HOSTED:
                assert job["runs-on"] == "ubuntu-latest", (name, job_name)
        assert "pull_request_target" not in workflow["on"], name


# --- security structure --------------------------------------------------------------------


# The one job that runs on a lane's own runner: each point (the lane gate reads the runners through
# the API from a GitHub-hosted job, so nothing else ever waits for a lane's runner).
SELF_HOSTED = {("run-point.yml", "launch")}
ALLOWED_WRITES = {
    ("run-sweep.yml", "report-plan"): {"pull-requests"},
    ("run-sweep.yml", "report-results"): {"pull-requests"},
    # A release: the GitHub release of the tag, and PyPI's trusted publishing (tests/test_release.py).
    ("release.yml", "github-release"): {"contents"},
    ("release.yml", "pypi"): {"id-token"},
}


def test_least_privilege_permissions():
    for name, workflow in all_workflows().items():
        assert workflow["permissions"] == {}, f"{name}: the top level must grant nothing"
        for job_name, job in workflow["jobs"].items():
            assert "permissions" in job, f"{name}:{job_name} must say what it needs"
            writes = {scope for scope, level in job["permissions"].items() if level == "write"}
            assert writes <= ALLOWED_WRITES.get((name, job_name), set()), (name, job_name, writes)
            assert "secrets" not in job or job["secrets"] != "inherit", (name, job_name)


def _secret_uses(node, where: tuple = ()):
    """(path, text) of every value that reads the secrets context, anywhere in a workflow."""
    if isinstance(node, dict):
        for key, value in node.items():
            yield from _secret_uses(value, where + (key,))
    elif isinstance(node, list):
        for index, value in enumerate(node):
            yield from _secret_uses(value, where + (index,))
    elif isinstance(node, str) and "secrets." in node:
        yield where, node


def test_the_hugging_face_token_reaches_only_the_launch_step():
    """The sweep's secrets each land in one step's environment, never `secrets: inherit`, a job's env
    or a script: a gated eval data set's token (benchmarks/evals/suite.yaml), passed by name through
    each reusable workflow to the launch step, and the lane gate's runners token, read by its one step
    on a GitHub-hosted runner."""
    uses = {name: list(_secret_uses(workflow["jobs"])) for name, workflow in all_workflows().items()}
    gate = load("run-sweep.yml")["jobs"]["lane-gate"]
    gate_step = next(i for i, step in enumerate(gate["steps"]) if step.get("id") == "gate")
    runners_token = (
        ("lane-gate", "steps", gate_step, "env", "INFX_RUNNERS_TOKEN"),
        "${{ secrets.INFX_RUNNERS_TOKEN }}",
    )
    hf_uses = [use for use in uses["run-sweep.yml"] if use != runners_token]
    assert len(hf_uses) == len(uses["run-sweep.yml"]) - 1 and gate["runs-on"] == "ubuntu-latest"
    assert {where[0] for where, _ in hf_uses} == {"canary", "sweep"} and all(
        where[1:] == ("secrets", "hf-token") and text == "${{ secrets.HF_TOKEN }}" for where, text in hf_uses
    )
    assert uses["sweep-shard.yml"] == [(("points", "secrets", "hf-token"), "${{ secrets.hf-token }}")]
    launch = load("run-point.yml")["jobs"]["launch"]
    index = next(i for i, step in enumerate(launch["steps"]) if step.get("id") == "launch")
    assert uses["run-point.yml"] == [(("launch", "steps", index, "env", "HF_TOKEN"), "${{ secrets.hf-token }}")]
    assert load("run-point.yml")["on"]["workflow_call"]["secrets"] == {
        "hf-token": {
            "description": load("run-point.yml")["on"]["workflow_call"]["secrets"]["hf-token"]["description"],
            "required": False,
        }
    }
    others = {name for name, found in uses.items() if found} - {"run-sweep.yml", "sweep-shard.yml", "run-point.yml"}
    assert others == set(), others  # no other workflow reads a secret (a release publishes with trusted publishing)


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


def test_the_docs_list_exactly_the_pinned_actions():
    """docs/workflows.md's pin table is checked against the workflows, so it cannot go stale."""
    pins = set()
    for path in sorted(WORKFLOWS.glob("*.yml")):
        pins |= set(re.findall(r"uses:\s*([\w.-]+/[\w.-]+)@([0-9a-f]{40})\s*#\s*(v[\d.]+)", path.read_text()))
    documented = set(
        re.findall(
            r"^\s*\| ([\w.-]+/[\w.-]+) \| (v[\d.]+) \| `([0-9a-f]{40})` \|$",
            (REPO / "docs" / "workflows.md").read_text(),
            re.M,
        )
    )
    assert pins and {(action, version, sha) for action, sha, version in pins} == documented


def test_the_docs_permission_table_is_every_job_s_permissions():
    """docs/workflows.md's permission table names every job of every workflow once, with exactly
    the `permissions:` it asks for, so which job gets what cannot go stale."""
    text = (REPO / "docs" / "workflows.md").read_text()
    table = text[text.index("| jobs (workflow: job) | permissions | why |") :]
    table = table[: table.index("\n\n")]
    documented: dict[str, dict] = {}
    for jobs, permissions in re.findall(r"^\s*\| (`[^|]+`) \| (`[^|]+`) \|", table, re.M):
        for job in re.findall(r"`([\w-]+: [\w-]+)`", jobs):
            assert job not in documented, f"{job} is listed twice"
            documented[job] = dict(re.findall(r"`([\w-]+): (read|write)`", permissions))
    actual = {
        f"{name.removesuffix('.yml')}: {job_name}": job.get("permissions")
        for name, workflow in all_workflows().items()
        for job_name, job in workflow["jobs"].items()
    }
    assert documented == actual


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
    untrusted = re.compile(
        r"github\.event\.(pull_request\.(title|body|head\.ref|head\.label)|head_commit|commits|comment|review|issue)"
        r"|github\.head_ref"
    )
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
    return subprocess.run(
        argv, cwd=root, capture_output=True, text=True, timeout=120, env={**os.environ, "NO_COLOR": "1"}
    )


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
        'run: infx config validate --base-ref "$BASE_SHA" --format github',
        'run: echo "${{ github.event.pull_request.title }}"',
    )
    target.write_text(text)
    linted = actionlint(tmp_path)
    assert linted.returncode != 0 and "github.event.pull_request.title" in linted.stdout
    audited = zizmor(tmp_path)
    assert audited.returncode != 0
    assert "template-injection" in {finding["ident"] for finding in json.loads(audited.stdout)}


# --- names the GitHub commands rely on -------------------------------------------------------


def test_a_rerun_title_carries_its_launch_marker(engine):
    from infx.workflows.markers import launch_marker

    def dispatch_title(inputs: dict) -> str:
        return engine.value(parsed(engine, SWEEP)["run-name"], {"github": dispatch_event(), "inputs": inputs})

    inputs = {**DISPATCH_INPUTS, "rerun-of": "4242", "points": "a b", "launch-id": "0123456789abcdef"}
    assert launch_marker("0123456789abcdef") in dispatch_title(inputs)
    assert "launch" not in dispatch_title(DISPATCH_INPUTS)


def test_artifact_names_agree_with_the_point_workflow(tmp_path, engine):
    """infx names a point's artifact (`infx github point-id`); when that step never ran, the workflow
    computes the same name in bash from the point, so failed points never share one name."""

    from infx.points import point_id
    from infx.workflows.rerun import artifact_name

    naming = next(s for s in load("run-point.yml")["jobs"]["launch"]["steps"] if s.get("id") == "artifact")["run"]
    planned = {"config-key": "k", "recipe-fingerprint": "f" * 64, "conc": [120, 240], "runner": "gb300-nv"}
    for index, point in enumerate(
        (planned, {**planned, "result-key": "a" * 64}, {**planned, "conc": 64})
    ):  # keyed or not; single-node
        out = tmp_path / f"out-{index}"
        result = run_cli(
            "github", "point-id", "--format", "github", env={"POINT_JSON": json.dumps(point), "GITHUB_OUTPUT": str(out)}
        )
        assert result.returncode == 0, result.stderr
        assert result.stdout.strip() == point_id(point)
        outputs = read_command_file(out.read_text())
        assert outputs == {"id": point_id(point), "artifact": artifact_name(point)}
        for named in (outputs["artifact"], ""):  # infx named it, or `Name the point` never ran
            for suffix, succeeded in (("", True), ("-failed", False)):
                temp = tmp_path / f"runner-{index}-{bool(named)}-{succeeded}"
                temp.mkdir()
                (temp / "outputs").write_text("")
                done = run_as_runner(
                    naming,
                    temp,
                    {
                        "NAMED": named,
                        "OUTCOME": suffix,
                        "POINT_JSON": json.dumps(point),
                        "GITHUB_OUTPUT": str(temp / "outputs"),
                    },
                )
                assert done.returncode == 0, done.stderr
                assert read_command_file((temp / "outputs").read_text())["name"] == artifact_name(point, succeeded)
                # Nothing was launched here: the artifact keeps the point.
                assert json.loads((temp / "point" / "point.json").read_text()) == point
    assert artifact_name({**planned, "result-key": "a" * 64}) == "point-" + "a" * 64
    # A point whose fields would make no artifact name still gets a name of its own.
    temp = tmp_path / "hostile"
    temp.mkdir()
    (temp / "outputs").write_text("")
    hostile = {**planned, "recipe-fingerprint": "../../x y"}
    done = run_as_runner(
        naming,
        temp,
        {"NAMED": "", "OUTCOME": "-failed", "POINT_JSON": json.dumps(hostile), "GITHUB_OUTPUT": str(temp / "outputs")},
    )
    name = read_command_file((temp / "outputs").read_text())["name"]
    assert done.returncode == 0 and re.fullmatch(r"point-unnamed-[0-9a-f]{16}-failed", name), (name, done.stderr)


# --- the setup and load scripts, run for real -------------------------------------------------


def step_script(workflow: str, job: str, step_id: str) -> str:
    return next(s for s in load(workflow)["jobs"][job]["steps"] if s.get("id") == step_id)["run"]


def read_outputs(path: Path) -> dict[str, str]:
    return read_command_file(path.read_text())


def test_manual_dispatch_setup_builds_shards_and_a_rerun_selects_from_them(tmp_path):
    from infx.points import point_id

    plan_script = step_script(SWEEP, "setup", "plan")
    dispatch = {
        "EVENT_NAME": "workflow_dispatch",
        "CONFIG_KEYS": "dsv4-*-gb300-*",
        "FILTERS": "--max-conc 512",
        "RERUN_OF": "",
        "POINTS": "",
    }
    result = run_step(plan_script, tmp_path, dispatch)
    assert result.returncode == 0, result.stderr
    outputs = read_outputs(tmp_path / "outputs")
    shards = json.loads(outputs["shards"])
    document = json.loads((tmp_path / "plan.json").read_text())
    assert document["mode"]["dispatch"] is True and document["canary"] is None
    plan = [row for rows in document["buckets"].values() for row in rows]
    assert int(outputs["point-count"]) == len(plan) > 0 and all(
        max(r["conc"] if isinstance(r["conc"], list) else [r["conc"]]) <= 512 for r in plan
    )
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
    selected = json.loads((tmp_path / "plan.json").read_text())["buckets"]
    assert sorted(point_id(r) for rows in selected.values() for r in rows) == wanted
    assert read_outputs(tmp_path / "outputs")["point-count"] == str(len(wanted))


def test_dispatch_inputs_reach_infx_as_words_never_as_shell(tmp_path):
    hostile = {
        "EVENT_NAME": "workflow_dispatch",
        "CONFIG_KEYS": "$(touch pwned) `touch pwned2` no-such-key*",
        "FILTERS": "; touch pwned3",
        "RERUN_OF": "",
        "POINTS": "",
    }
    result = run_step(step_script(SWEEP, "setup", "plan"), tmp_path, hostile)
    assert result.returncode != 0  # infx, not the shell, refuses the words
    assert not any((REPO / name).exists() or (tmp_path / name).exists() for name in ("pwned", "pwned2", "pwned3"))
    shard_file = run_step(step_script("sweep-shard.yml", "load", "rows"), tmp_path, {"SHARD_FILE": "../../etc/passwd"})
    assert shard_file.returncode != 0 and "unexpected shard file name" in shard_file.stdout
