"""`infx init`: the consumer kit written into a benchmark repository (infx/kit)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from infx.kit import (
    ACTIONLINT_PATH,
    FILL_IN,
    INFX_ONLY_WORKFLOWS,
    KIT_WORKFLOWS,
    LOCK_PATH,
    actionlint_config,
    runner_labels,
    slug_from_remote,
)
from testing.cli import run_cli

REPO = Path(__file__).resolve().parents[2]
WORKFLOWS = REPO / ".github" / "workflows"
PIN = "1.2.3"


def git(repo: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-c", "user.email=ci@example.invalid", "-c", "user.name=ci", *args],
        cwd=repo,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()


@pytest.fixture
def bench(tmp_path: Path) -> Path:
    """A benchmark repository: the bundled configs, recipes and changelog, a GitHub remote, no infx."""
    repo = tmp_path / "bench"
    repo.mkdir()
    for name in ("configs", "benchmarks"):
        shutil.copytree(REPO / name, repo / name)
    shutil.copy(REPO / "perf-changelog.yaml", repo / "perf-changelog.yaml")
    (repo / "configs" / "infx.yaml").unlink()
    git(repo, "init", "-q", "-b", "main")
    git(repo, "remote", "add", "origin", "git@github.com:acme/bench.git")
    return repo


def load(text: str) -> dict:
    data = yaml.safe_load(text)
    data["on"] = data.pop(True, data.get("on"))
    return data


def test_every_workflow_is_either_in_the_kit_or_infx_only():
    assert sorted(KIT_WORKFLOWS + INFX_ONLY_WORKFLOWS) == sorted(p.name for p in WORKFLOWS.glob("*.yml"))
    assert not set(KIT_WORKFLOWS) & set(INFX_ONLY_WORKFLOWS)


def test_the_kit_workflows_are_infx_workflows_installing_the_pinned_release(bench: Path):
    """Job by job, each kit workflow is this repository's: the same triggers, permissions and steps,
    except infx's own test suite (left out) and the install steps, which install the released
    infx pinned, with the lock kept in .github/infx/."""
    done = run_cli("init", "--pin", PIN, cwd=bench)
    assert done.returncode == 0, done.stderr
    installs = 0
    for name in KIT_WORKFLOWS:
        original = load((WORKFLOWS / name).read_text())
        kit_text = (bench / ".github" / "workflows" / name).read_text()
        kit = load(kit_text)
        assert "--no-deps ." not in kit_text and "-r requirements.lock" not in kit_text
        if name == "pr-checks.yml":
            assert "tests" in original["jobs"] and "tests" not in kit["jobs"] and ".ci/run" not in kit_text
            original["jobs"].pop("tests")
        for job in original["jobs"].values():
            for step in job.get("steps", []):
                if "pip install" in step.get("run", ""):
                    installs += 1
                    step["run"] = (
                        step["run"]
                        .replace("-r requirements.lock", f"-r {LOCK_PATH}")
                        .replace("--no-deps .", f'--no-deps "infx=={PIN}"')
                    )
        assert kit == original, name
    assert (
        installs == 7
    )  # run-sweep's five jobs (setup, report-plan, lane-gate, results, report-results), run-point, pr-checks' validate
    assert (bench / LOCK_PATH).read_bytes() == (REPO / "requirements.lock").read_bytes()


def test_init_writes_once_and_replaces_only_infx_files_with_force(bench: Path):
    first = run_cli("init", "--pin", PIN, cwd=bench)
    assert first.returncode == 0, first.stderr
    expected = [f".github/workflows/{name}" for name in KIT_WORKFLOWS] + [
        LOCK_PATH,
        ACTIONLINT_PATH,
        "configs/infx.yaml",
        "runners/my-lane.yaml",
        ".pre-commit-config.yaml",
    ]
    assert re.findall(r"(?m)^wrote +(\S+)$", first.stdout) == expected
    assert "Left to do:" in first.stdout and "infx repo check --repo acme/bench" in first.stdout
    assert "Optional: add the repository secret INFX_RUNNERS_TOKEN" in first.stdout
    assert (bench / "configs" / "infx.yaml").read_text().splitlines()[-1] == "repository: acme/bench"
    declared = yaml.safe_load((bench / ACTIONLINT_PATH).read_text())["self-hosted-runner"]["labels"]
    assert declared == sorted(yaml.safe_load((bench / "configs" / "runners.yaml").read_text())["labels"])
    again = run_cli("init", "--pin", PIN, cwd=bench)
    assert re.findall(r"(?m)^unchanged +(\S+)$", again.stdout) == expected and "wrote" not in again.stdout
    # Someone's edits: a workflow (infx's: --force replaces it), the settings and the lane (theirs: never).
    sweep = bench / ".github" / "workflows" / "run-sweep.yml"
    sweep.write_text(sweep.read_text() + "# local edit\n")
    lane = bench / "runners" / "my-lane.yaml"
    lane.write_text("lane: my-lane\n")
    kept = run_cli("init", "--pin", PIN, cwd=bench)
    assert kept.returncode == 0
    assert "kept       .github/workflows/run-sweep.yml (exists and differs: --force replaces it)" in kept.stdout
    assert "kept       runners/my-lane.yaml (the repository's own: init never replaces it)" in kept.stdout
    assert sweep.read_text().endswith("# local edit\n")
    forced = run_cli("init", "--force", "--pin", "1.3.0", cwd=bench)
    assert forced.returncode == 0
    assert '--no-deps "infx==1.3.0"' in sweep.read_text() and "# local edit" not in sweep.read_text()
    assert lane.read_text() == "lane: my-lane\n"


@pytest.mark.parametrize(
    "argv, message",
    [
        ([], "infx 0.1.dev3+gabcdef0 is not a released version"),
        (["--pin", "1.2.3; rm -rf /"], "is not a version"),
        (["--pin", PIN, "--lane", "GB300 NV"], "is not a lane name"),
        (["--pin", PIN, "no-such-folder"], "is not a folder"),
    ],
)
def test_init_refuses_what_it_cannot_install_and_writes_nothing(bench: Path, argv: list[str], message: str):
    before = sorted(p.relative_to(bench) for p in bench.rglob("*") if ".git" not in p.parts)
    # This infx as a development build (what a checkout without a release tag is) runs `infx init ARGV`.
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys, infx; infx.__version__ = '0.1.dev3+gabcdef0'; "
            "from infx.cli import main; main(['init', *sys.argv[1:]])",
            *argv,
        ],
        cwd=bench,
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    assert done.returncode == 2 and message in done.stderr and "Traceback" not in done.stderr
    assert sorted(p.relative_to(bench) for p in bench.rglob("*") if ".git" not in p.parts) == before


def tool(name: str) -> str:
    path = shutil.which(name)
    if path is None:
        pytest.fail(f"{name} is not installed; `pip install -e '.[lint]'` (as .ci/run does) provides it")
    return path


def test_the_kit_passes_actionlint_and_zizmor_in_the_benchmark_repository(bench: Path):
    assert run_cli("init", "--pin", PIN, cwd=bench).returncode == 0
    linted = subprocess.run(
        [tool("actionlint"), "-no-color", "-oneline", "-shellcheck", shutil.which("shellcheck") or ""],
        cwd=bench,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert linted.returncode == 0 and not linted.stdout.strip(), linted.stdout + linted.stderr
    audited = subprocess.run(
        [tool("zizmor"), "--offline", "--format", "json", "--no-progress", str(bench / ".github" / "workflows")],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "NO_COLOR": "1"},
    )
    assert audited.returncode == 0 and audited.stdout.strip() == "[]", audited.stdout + audited.stderr


def test_the_lane_skeleton_marks_every_fact_to_fill_in(bench: Path):
    """`infx lane validate` rejects the skeleton at FILL IN lines only; filled in, it is a valid lane."""
    assert run_cli("init", "--pin", PIN, "--lane", "b300-nv", cwd=bench).returncode == 0
    lane = bench / "runners" / "b300-nv.yaml"
    text = lane.read_text()
    assert "lane: b300-nv" in text  # its runner label: configs/runners.yaml has no b300-nv, so that is to fill in
    rejected = run_cli("lane", "validate", "b300-nv", cwd=bench)
    assert rejected.returncode == 1
    lines = text.splitlines()
    located = [int(m) for m in re.findall(r"runners/b300-nv\.yaml:(\d+):\d+: error", rejected.stderr)]
    assert len(located) >= 6 and all(FILL_IN in lines[number - 1] for number in located), rejected.stderr
    facts = {
        "the Slurm partition the points run in": "batch",
        "GPUs per node, a number": "4",
        "a Slurm time limit such as 4:00:00": '"4:00:00"',
        "a model-prefix of your master configs": "dsv4",
        "its precision": "fp4",
        "the model alias the recipes name": "deepseek-v4-pro",
        "absolute path of the weights on the cluster": "/models/DeepSeek-V4-Pro",
        "the srt-slurm git repository URL": "https://github.com/NVIDIA/srt-slurm.git",
        "the tag or branch to use": "v1.0.25",
        "the full 40-hex commit of that ref": "3435776cd6db4c14f8b771ff7a3976deb62fe133",
        "a route name": "sglang-fixed",
        "fixed-seq-len or agentic-coding": "fixed-seq-len",
        "a framework of your master configs": "dynamo-sglang",
        "the configs/runners.yaml labels of this lane's runners": "b300",
    }
    filled = "".join(
        line if line.startswith("#") else re.sub(r'"<FILL IN: ([^>]*)>"', lambda m: facts[m.group(1)], line)
        for line in text.splitlines(keepends=True)
    )
    assert all(FILL_IN not in line for line in filled.splitlines() if not line.startswith("#"))
    lane.write_text(filled)
    accepted = run_cli("lane", "validate", "b300-nv", cwd=bench)
    assert accepted.returncode == 0, accepted.stderr


def test_a_lane_named_after_a_declared_label_runs_on_it(bench: Path):
    assert run_cli("init", "--pin", PIN, "--lane", "gb300-nv", cwd=bench).returncode == 0
    assert "runner-labels: [gb300-nv]" in (bench / "runners" / "gb300-nv.yaml").read_text()


def test_without_a_github_remote_the_settings_say_what_to_fill_in(bench: Path):
    git(bench, "remote", "remove", "origin")
    done = run_cli("init", "--pin", PIN, cwd=bench)
    assert done.returncode == 0
    assert FILL_IN in (bench / "configs" / "infx.yaml").read_text()
    assert "Set `repository: OWNER/NAME` in configs/infx.yaml" in done.stdout
    assert run_cli("config", "validate", cwd=bench).returncode == 0, "the settings file stays valid while unfilled"


@pytest.mark.parametrize(
    "url, slug",
    [
        ("https://github.com/acme/bench.git", "acme/bench"),
        ("https://github.com/acme/bench", "acme/bench"),
        ("git@github.com:acme/bench.git", "acme/bench"),
        ("ssh://git@github.com/acme/bench.git", "acme/bench"),
        ("https://gitlab.com/acme/bench.git", None),
        ("https://github.com/acme", None),
        (None, None),
        ("https://github.com/acme/bench;rm.git", None),
    ],
)
def test_the_repository_slug_comes_from_a_github_remote(url, slug):
    assert slug_from_remote(url) == slug


def test_this_repository_actionlint_config_is_the_generated_one():
    assert (REPO / ACTIONLINT_PATH).read_text() == actionlint_config(runner_labels(REPO))


def test_the_readme_snippet_is_the_pre_commit_configuration_init_writes():
    """The README's pre-commit snippet works as written: it is what `infx init` writes for the
    release the README names, whose tag the README says how to create."""
    from infx.kit import RELEASE_VERSION, pre_commit_config

    section = (REPO / "README.md").read_text().split("## Use in your repository", 1)[1].split("\n## ", 1)[0]
    snippet = re.search(r"```yaml\n(.*?)```", section, re.S).group(1)
    version = re.search(r'"infx==([^"]+)"', snippet).group(1)
    assert RELEASE_VERSION.match(version) and snippet == pre_commit_config(version)
    assert f"git tag -a v{version}" in section and f"pip install infx=={version}" in section


def test_init_refuses_a_runners_file_without_labels_and_writes_nothing(bench: Path):
    (bench / "configs" / "runners.yaml").write_text("hardware: {}\n")
    before = sorted(p.relative_to(bench) for p in bench.rglob("*") if ".git" not in p.parts)
    done = run_cli("init", "--pin", PIN, cwd=bench)
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert "configs/runners.yaml: error[init-runners]: configs/runners.yaml has no `labels:` mapping" in done.stderr
    assert "Write `labels:` with one key per runner label" in done.stderr
    assert sorted(p.relative_to(bench) for p in bench.rglob("*") if ".git" not in p.parts) == before
