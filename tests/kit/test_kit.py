"""`infx init`: the consumer kit written into a benchmark repository (infx/kit)."""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
import yaml

from infx.kit import (
    ACTIONLINT_PATH,
    FILL_IN,
    HOOK_RUNNER_PATH,
    INFX_ONLY_WORKFLOWS,
    KIT_WORKFLOWS,
    LOCK_PATH,
    actionlint_config,
    eval_suite_files,
    runner_labels,
    slug_from_remote,
)
from testing.cli import run_cli
from testing.gitrepo import git

REPO = Path(__file__).resolve().parents[2]
WORKFLOWS = REPO / ".github" / "workflows"
PIN = "1.2.3"


def wheel(folder: Path, version: str = PIN) -> Path:
    """An infx wheel of ``version`` as far as init and pip download read one (name, metadata, tags)."""
    path = folder / f"infx-{version}-py3-none-any.whl"
    info = f"infx-{version}.dist-info"
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr(f"{info}/METADATA", f"Metadata-Version: 2.1\nName: infx\nVersion: {version}\n")
        archive.writestr(f"{info}/WHEEL", "Wheel-Version: 1.0\nRoot-Is-Purelib: true\nTag: py3-none-any\n")
    return path


@pytest.fixture
def pinned(tmp_path: Path) -> list[str]:
    """init's arguments pinning infx by a wheel (one no package index has)."""
    return ["--wheel", str(wheel(tmp_path))]


@pytest.fixture
def bench(tmp_path: Path) -> Path:
    """A benchmark repository: the bundled configs, recipes and changelog, a GitHub remote, no infx."""
    repo = tmp_path / "bench"
    repo.mkdir()
    for name in ("configs", "benchmarks"):
        shutil.copytree(REPO / name, repo / name)
    shutil.copy(REPO / "perf-changelog.yaml", repo / "perf-changelog.yaml")
    (repo / "configs" / "infx.yaml").unlink()
    shutil.rmtree(repo / "benchmarks" / "evals")  # a repository without an eval suite (the reference has none)
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


def test_the_kit_workflows_are_infx_workflows_installing_the_pinned_wheel(bench: Path, pinned: list[str]):
    """Job by job, each kit workflow is this repository's: the same triggers, permissions and steps,
    except infx's own test suite (left out) and the install steps, which install the repository's
    lock alone, hash-checked: infx's dependencies and infx itself, the wheel shipped in .github/infx/."""
    done = run_cli("init", *pinned, cwd=bench)
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
                    step["run"] = "".join(
                        line.replace(
                            "--require-hashes -r requirements.lock", f"--no-deps --require-hashes -r {LOCK_PATH}"
                        )
                        for line in step["run"].splitlines(keepends=True)
                        if not line.rstrip().endswith("--no-deps .")
                    )
        assert kit == original, name
        assert kit_text.startswith("# Written by `infx init`"), name
    assert (
        installs == 7
    )  # run-sweep's five jobs (setup, report-plan, lane-gate, results, report-results), run-point, pr-checks' validate
    lock = (bench / LOCK_PATH).read_text()
    shipped = bench / ".github" / "infx" / f"infx-{PIN}-py3-none-any.whl"
    digest = hashlib.sha256(shipped.read_bytes()).hexdigest()
    assert lock.startswith((REPO / "requirements.lock").read_text().rstrip("\n"))
    assert lock.endswith(f"\n./.github/infx/{shipped.name} \\\n    --hash=sha256:{digest}\n")
    assert shipped.read_bytes() == Path(pinned[1]).read_bytes()


def test_init_writes_once_and_replaces_only_infx_files_with_force(bench: Path, pinned: list[str], tmp_path: Path):
    first = run_cli("init", *pinned, cwd=bench)
    assert first.returncode == 0, first.stderr
    expected = [f".github/workflows/{name}" for name in KIT_WORKFLOWS] + [
        LOCK_PATH,
        f".github/infx/infx-{PIN}-py3-none-any.whl",
        ACTIONLINT_PATH,
        "configs/infx.yaml",
        "runners/my-lane.yaml",
        ".pre-commit-config.yaml",
        HOOK_RUNNER_PATH,
        *(path for path, _ in eval_suite_files()),
    ]
    assert "benchmarks/evals/suite.yaml" in expected
    assert re.findall(r"(?m)^wrote +(\S+)$", first.stdout) == expected
    assert "Left to do:" in first.stdout and "infx repo check --repo acme/bench" in first.stdout
    assert "Optional: add the repository secret INFX_RUNNERS_TOKEN" in first.stdout
    assert f"the workflows install the wheel .github/infx/infx-{PIN}-py3-none-any.whl" in first.stdout
    assert (bench / "configs" / "infx.yaml").read_text().splitlines()[-1] == "repository: acme/bench"
    declared = yaml.safe_load((bench / ACTIONLINT_PATH).read_text())["self-hosted-runner"]["labels"]
    assert declared == sorted(yaml.safe_load((bench / "configs" / "runners.yaml").read_text())["labels"])
    again = run_cli("init", *pinned, cwd=bench)
    assert re.findall(r"(?m)^unchanged +(\S+)$", again.stdout) == expected and "wrote" not in again.stdout
    # Someone's edits: a workflow (infx's: --force replaces it), the settings and the lane (theirs: never).
    sweep = bench / ".github" / "workflows" / "run-sweep.yml"
    sweep.write_text(sweep.read_text() + "# local edit\n")
    lane = bench / "runners" / "my-lane.yaml"
    lane.write_text("lane: my-lane\n")
    kept = run_cli("init", *pinned, cwd=bench)
    assert kept.returncode == 0
    assert "kept       .github/workflows/run-sweep.yml (exists and differs: --force replaces it)" in kept.stdout
    assert "kept       runners/my-lane.yaml (the repository's own: init never replaces it)" in kept.stdout
    assert ".pre-commit-config.yaml is the repository's own and kept" not in kept.stdout
    assert sweep.read_text().endswith("# local edit\n")
    newer = tmp_path / "newer"
    newer.mkdir()
    # Without --force the lock stays, and so does what it pins: the new wheel is not written beside it.
    held = run_cli("init", "--wheel", str(wheel(newer, "1.3.0")), cwd=bench)
    assert f"kept       {LOCK_PATH} (exists and differs: --force replaces it)" in held.stdout
    assert "kept       .github/infx/infx-1.3.0-py3-none-any.whl (not written:" in held.stdout
    assert not (bench / ".github" / "infx" / "infx-1.3.0-py3-none-any.whl").exists() and "git rm" not in held.stdout
    forced = run_cli("init", "--force", "--wheel", str(wheel(newer, "1.3.0")), cwd=bench)
    assert forced.returncode == 0
    # Every file --force replaces is listed as replaced, and only those.
    assert re.findall(r"(?m)^replaced +(\S+) \((.*?);", forced.stdout) == [
        (".github/workflows/run-sweep.yml", "infx's, and it differed"),
        (LOCK_PATH, "infx's, and it differed"),
    ]
    assert re.findall(r"(?m)^wrote +(\S+)$", forced.stdout) == [".github/infx/infx-1.3.0-py3-none-any.whl"]
    assert "# local edit" not in sweep.read_text() and "infx-1.3.0-py3-none-any.whl" in (bench / LOCK_PATH).read_text()
    assert lane.read_text() == "lane: my-lane\n"
    assert f"`git rm .github/infx/infx-{PIN}-py3-none-any.whl`" in forced.stdout  # the lock no longer pins it


def test_a_repository_workflow_under_a_kit_name_is_kept_and_reported(bench: Path, pinned: list[str]):
    """The repository's own run-sweep.yml (not written by init) is never taken for infx's: init keeps
    it and says, as a to-do, what depends on the name and what to do; --force replaces it, listed."""
    own = bench / ".github" / "workflows" / "run-sweep.yml"
    own.parent.mkdir(parents=True)
    own.write_text("name: Our own sweep\non: push\njobs: {}\n")
    done = run_cli("init", *pinned, cwd=bench)
    assert done.returncode == 0, done.stderr
    assert "kept       .github/workflows/run-sweep.yml (the repository's own workflow, not infx's" in done.stdout
    assert own.read_text().startswith("name: Our own sweep")
    todo = re.search(r"(?m)^  1\. (.*)$", done.stdout).group(1)
    assert todo.startswith(".github/workflows/run-sweep.yml is the repository's own workflow, not infx's")
    assert "git mv .github/workflows/run-sweep.yml .github/workflows/<another name>.yml" in todo
    assert "infx init --force" in todo
    # The kit's sweep-shard.yml is called by run-sweep.yml; a repository's own sweep-shard.yml names its caller.
    shard = bench / ".github" / "workflows" / "sweep-shard.yml"
    shard.write_text("name: Our own shard\non: push\njobs: {}\n")
    again = run_cli("init", *pinned, cwd=bench)
    assert "sweep-shard.yml is the repository's own workflow, not infx's" in again.stdout
    assert "run-sweep.yml would call yours" in again.stdout
    forced = run_cli("init", "--force", *pinned, cwd=bench)
    assert forced.returncode == 0
    assert re.findall(r"(?m)^replaced +(\S+) \((.*?);", forced.stdout) == [
        (".github/workflows/run-sweep.yml", "the repository's own workflow, not infx's"),
        (".github/workflows/sweep-shard.yml", "the repository's own workflow, not infx's"),
    ]
    assert own.read_text().startswith("# Written by `infx init`")


def test_a_repository_pre_commit_configuration_is_kept_with_how_to_add_the_hooks(bench: Path, pinned: list[str]):
    own = bench / ".pre-commit-config.yaml"
    own.write_text("repos: []\n")
    done = run_cli("init", *pinned, cwd=bench)
    assert done.returncode == 0 and own.read_text() == "repos: []\n"
    assert "kept       .pre-commit-config.yaml (the repository's own: init never replaces it)" in done.stdout
    assert ".pre-commit-config.yaml is the repository's own and kept: add infx's hooks" in done.stdout
    assert "`infx-config-validate`, `infx-changelog-gate`" in done.stdout and HOOK_RUNNER_PATH in done.stdout


def test_only_actionlint_refreshes_that_file_alone(bench: Path, pinned: list[str]):
    """`--only actionlint --force`: .github/actionlint.yaml from configs/runners.yaml again, and not
    one other file touched (not even a workflow that differs); no pin needed."""
    assert run_cli("init", *pinned, cwd=bench).returncode == 0
    sweep = bench / ".github" / "workflows" / "run-sweep.yml"
    sweep.write_text(sweep.read_text() + "# local edit\n")
    runners = bench / "configs" / "runners.yaml"
    data = yaml.safe_load(runners.read_text())
    data["labels"]["b300-nv"] = data["labels"][next(iter(data["labels"]))]
    runners.write_text(yaml.safe_dump(data))
    before = {p: p.read_bytes() for p in bench.rglob("*") if p.is_file() and ".git" not in p.parts}
    kept = run_cli("init", "--only", "actionlint", cwd=bench)
    assert kept.returncode == 0 and kept.stdout.splitlines() == [
        f"kept       {ACTIONLINT_PATH} (exists and differs: --force replaces it)"
    ], kept.stdout
    refreshed = run_cli("init", "--only", "actionlint", "--force", cwd=bench)
    assert refreshed.returncode == 0, refreshed.stderr
    assert refreshed.stdout.splitlines() == [
        f"replaced   {ACTIONLINT_PATH} (infx's, and it differed; git has the old one if it was committed)"
    ]
    assert "b300-nv" in yaml.safe_load((bench / ACTIONLINT_PATH).read_text())["self-hosted-runner"]["labels"]
    after = {p: p.read_bytes() for p in bench.rglob("*") if p.is_file() and ".git" not in p.parts}
    assert {p for p in after if after[p] != before.get(p)} == {bench / ACTIONLINT_PATH}


def test_a_pin_that_only_leaves_unwritten_is_refused_not_ignored(bench: Path, pinned: list[str]):
    done = run_cli("init", "--only", "actionlint", *pinned, cwd=bench)
    assert done.returncode == 2 and "--wheel pins infx in the lock, which --only leaves out" in done.stderr, done.stderr
    assert "Add --only lock" in done.stderr and not (bench / ACTIONLINT_PATH).exists()


@pytest.mark.parametrize(
    "argv, message",
    [
        ([], "infx 0.1.dev3+gabcdef0 is not a released version, and no package index has it"),
        (["--pin", "1.2.3; rm -rf /"], "is not a released version (X.Y.Z)"),
        (["--pin", "1.2.3\n"], "is not a released version (X.Y.Z)"),
        (["--pin", PIN, "--lane", "GB300 NV"], "is not a lane name"),
        (["--pin", PIN, "no-such-folder"], "is not a folder"),
        (["--wheel", "infx.zip"], "is not named as an infx wheel (infx-<version>-py3-none-any.whl)"),
        (["--wheel", "infx-1.2.3-py3-none-any.whl"], "no such file"),
        (["--wheel", "perf-changelog.yaml"], "is not named as an infx wheel"),
        (
            ["--wheel", "infx-1.2.3-py3-none-any.whl", "--pin", PIN],
            "--wheel, --build-wheel, --commit and --pin each pin",
        ),
        (["--only", "everything"], "Invalid value for '--only'"),
        (["--commit", "HEAD"], "is not a full commit (40 lowercase hex digits)"),
        (["--commit", "a" * 40 + "\n"], "is not a full commit"),
        (["--commit", "0" * 40], "not a commit of infx's repository"),
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


def test_a_release_pin_records_the_hash_of_the_release_wheel(bench: Path, tmp_path: Path):
    """`--pin X.Y.Z`: the lock names the release with its wheel's SHA-256, downloaded by pip from
    its index (here, no index and a folder standing for it); a release pip cannot find is
    refused, naming the wheel pins instead."""
    index = tmp_path / "index"
    index.mkdir()
    released = wheel(index)
    env = {"PIP_NO_INDEX": "1", "PIP_FIND_LINKS": str(index)}
    done = run_cli("init", "--pin", PIN, "--only", "lock", cwd=bench, env=env)
    assert done.returncode == 0, done.stderr
    digest = hashlib.sha256(released.read_bytes()).hexdigest()
    assert (bench / LOCK_PATH).read_text().endswith(f"\ninfx=={PIN} \\\n    --hash=sha256:{digest}\n")
    assert not list((bench / ".github" / "infx").glob("*.whl"))
    missing = run_cli("init", "--pin", "9.9.9", "--only", "lock", "--force", cwd=bench, env=env)
    assert missing.returncode == 2 and "Traceback" not in missing.stderr
    assert "infx 9.9.9 could not be downloaded to record its hash" in missing.stderr
    assert "--build-wheel" in missing.stderr and f"infx=={PIN}" in (bench / LOCK_PATH).read_text()


def test_a_commit_pin_ships_the_wheel_of_that_commit_and_its_lock(bench: Path):
    """`--commit SHA`: the wheel is built from that commit of infx's repository (not the working
    tree), the lock is that commit's plus the wheel's hash, and says which commit it was."""
    commit = git(REPO, "rev-parse", "HEAD~1")
    done = run_cli("init", "--commit", commit, "--only", "lock", cwd=bench)
    assert done.returncode == 0, done.stderr
    (shipped,) = (bench / ".github" / "infx").glob("infx-*-py3-none-any.whl")
    assert re.fullmatch(r"wrote +\S+\nwrote +\S+\n", done.stdout) and shipped.name in done.stdout
    short = re.search(r"\+g([0-9a-f]+)", shipped.name)
    assert short and commit.startswith(short.group(1))  # setuptools-scm's version names the commit
    with zipfile.ZipFile(shipped) as archive:
        built = archive.read("infx/kit/__init__.py").decode()
    assert built == git(REPO, "show", f"{commit}:infx/kit/__init__.py") + "\n"
    lock = (bench / LOCK_PATH).read_text()
    digest = hashlib.sha256(shipped.read_bytes()).hexdigest()
    assert lock.startswith(git(REPO, "show", f"{commit}:requirements.lock"))
    assert f"built from infx's commit {commit}" in lock and lock.endswith(f"--hash=sha256:{digest}\n")


@pytest.mark.parametrize("kind", ["file", "link"])
def test_a_file_or_link_where_init_needs_a_folder_stops_it_before_any_write(
    bench: Path, pinned: list[str], tmp_path: Path, kind: str
):
    github = bench / ".github"
    if kind == "file":
        github.mkdir()
        (github / "infx").write_text("not a folder\n")
    else:
        (tmp_path / "elsewhere").mkdir()
        github.symlink_to(tmp_path / "elsewhere")
    before = sorted(p.relative_to(bench) for p in bench.rglob("*") if ".git" not in p.parts)
    done = run_cli("init", *pinned, cwd=bench)
    what = ".github/infx is not a folder" if kind == "file" else ".github is a symbolic link"
    assert done.returncode == 2 and what in done.stderr and "Traceback" not in done.stderr, done.stderr
    assert sorted(p.relative_to(bench) for p in bench.rglob("*") if ".git" not in p.parts) == before
    if kind == "link":
        assert not list((tmp_path / "elsewhere").iterdir())  # nothing written through the link


def test_init_refuses_a_wheel_that_is_not_one(bench: Path, tmp_path: Path):
    fake = tmp_path / f"infx-{PIN}-py3-none-any.whl"
    fake.write_text("not a zip\n")
    done = run_cli("init", "--wheel", str(fake), cwd=bench)
    assert done.returncode == 2 and f"not an infx wheel of version {PIN}" in done.stderr, done.stderr
    renamed = wheel(tmp_path / "..", "9.9.9").rename(tmp_path / "infx-1.0.0-py3-none-any.whl")
    done = run_cli("init", "--wheel", str(renamed), cwd=bench)
    assert done.returncode == 2 and "not an infx wheel of version 1.0.0" in done.stderr, done.stderr
    assert not (bench / ".github").exists()


def tool(name: str) -> str:
    path = shutil.which(name)
    if path is None:
        pytest.fail(f"{name} is not installed; `pip install -e '.[lint]'` (as .ci/run does) provides it")
    return path


def test_the_kit_passes_actionlint_and_zizmor_in_the_benchmark_repository(bench: Path, pinned: list[str]):
    assert run_cli("init", *pinned, cwd=bench).returncode == 0
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


def test_the_lane_skeleton_marks_every_fact_to_fill_in(bench: Path, pinned: list[str]):
    """`infx lane validate` rejects the skeleton at its placeholders, each one located (lane-placeholder),
    and nowhere else; filled in, it is a valid lane running the eval suite init wrote."""
    assert run_cli("init", *pinned, "--lane", "b300-nv", cwd=bench).returncode == 0
    lane = bench / "runners" / "b300-nv.yaml"
    text = lane.read_text()
    assert "lane: b300-nv" in text  # its runner label: configs/runners.yaml has no b300-nv, so that is to fill in
    rejected = run_cli("lane", "validate", "b300-nv", cwd=bench)
    assert rejected.returncode == 1
    lines = text.splitlines()
    located = re.findall(r"runners/b300-nv\.yaml:(\d+):(\d+): error\[([a-z-]+)\]", rejected.stderr)
    placeholders = sum(line.count(FILL_IN) for line in lines if not line.lstrip().startswith("#"))
    assert placeholders == 14  # every value the skeleton asks for, the two of each `match:` line included
    assert {rule for *_, rule in located} == {"lane-placeholder"}, rejected.stderr
    assert len(located) == placeholders
    assert all(FILL_IN in lines[int(number) - 1] for number, *_ in located), rejected.stderr
    assert len(set(located)) == len(located)  # two on one line: two columns
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


def test_a_lane_named_after_a_declared_label_runs_on_it(bench: Path, pinned: list[str]):
    assert run_cli("init", *pinned, "--lane", "gb300-nv", cwd=bench).returncode == 0
    assert "runner-labels: [gb300-nv]" in (bench / "runners" / "gb300-nv.yaml").read_text()


def test_without_a_github_remote_the_settings_say_what_to_fill_in(bench: Path, pinned: list[str]):
    git(bench, "remote", "remove", "origin")
    done = run_cli("init", *pinned, cwd=bench)
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
    """The README's pre-commit snippet works as written: it is what `infx init` writes, whichever
    way the lock pins infx (the README says which way applies when)."""
    from infx.kit import pre_commit_config

    section = (REPO / "README.md").read_text().split("## Use in your repository", 1)[1].split("\n## ", 1)[0]
    snippet = re.search(r"```yaml\n(.*?)```", section, re.S).group(1)
    assert snippet == pre_commit_config()
    assert "infx init --build-wheel" in section and "git tag -a v" in section


def test_init_refuses_a_runners_file_without_labels_and_writes_nothing(bench: Path, pinned: list[str]):
    (bench / "configs" / "runners.yaml").write_text("hardware: {}\n")
    before = sorted(p.relative_to(bench) for p in bench.rglob("*") if ".git" not in p.parts)
    done = run_cli("init", *pinned, cwd=bench)
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert "configs/runners.yaml: error[init-runners]: configs/runners.yaml has no `labels:` mapping" in done.stderr
    assert "Write `labels:` with one key per runner label" in done.stderr
    assert sorted(p.relative_to(bench) for p in bench.rglob("*") if ".git" not in p.parts) == before
