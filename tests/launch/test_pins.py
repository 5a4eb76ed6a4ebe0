"""`infx lane pins --check/--update` against real local bare repositories (file:// URLs only).

The bundled profile's pins point at github.com; nothing here asks the network. The tests use
a copy of runners/gb300-nv.yaml whose NVIDIA repository URL is a bare clone of the srt-slurm
bundle (exactly the pinned refs). The SemiAnalysisAI and power-producer forks are not
available here, so the copy leaves their two pins out.
"""

import json
import re

import pytest

from testing.cli import run_cli
from testing.corpus import SRT_SLURM_BUNDLE
from testing.launchkit import REPO, git

NVIDIA = "https://github.com/NVIDIA/srt-slurm.git"
BUNDLED = (REPO / "runners" / "gb300-nv.yaml").read_text()
PIN_LINE = re.compile(r"^    (\S+): \{repository: \"([^\"]+)\", ref: ([^,]+), commit: ([0-9a-f]{40})\}$", re.M)
PINS = {m.group(1): (m.group(2), m.group(3), m.group(4)) for m in PIN_LINE.finditer(BUNDLED)}
NVIDIA_PINS = {name: (ref, sha) for name, (url, ref, sha) in PINS.items() if url == NVIDIA}


def test_every_bundled_pin_is_a_full_commit_and_the_bundle_holds_the_nvidia_ones():
    assert len(PINS) == 7 and len(NVIDIA_PINS) == 5
    heads = dict(
        line.split()[::-1] for line in git("bundle", "list-heads", str(SRT_SLURM_BUNDLE), cwd=REPO).splitlines()
    )
    for ref, sha in NVIDIA_PINS.values():
        kind = "tags" if ref.startswith("v") else "heads"
        assert heads[f"refs/{kind}/{ref}"] == sha


@pytest.fixture(scope="session")
def pristine(tmp_path_factory):
    bare = tmp_path_factory.mktemp("srt-slurm") / "nvidia.git"
    git("clone", "-q", "--bare", str(SRT_SLURM_BUNDLE), str(bare), cwd=bare.parent)
    return bare


@pytest.fixture
def remote(pristine, tmp_path):
    """A fresh bare repository with exactly the bundle's refs, for one test to move."""
    bare = tmp_path / "nvidia.git"
    git("clone", "-q", "--bare", str(pristine), str(bare), cwd=tmp_path)
    return bare


def copy_profile(tmp_path, remote, text=BUNDLED):
    """The bundled profile with the NVIDIA pins on ``remote`` (file://, which the lane then allows)."""
    text = text.replace(NVIDIA, remote.as_uri()).replace("\nslurm:\n", "\ngit-protocols: [https, file]\n\nslurm:\n", 1)
    lines = [
        line for line in text.splitlines(keepends=True) if not re.match(r"^    (sa-schema2|power-producer): ", line)
    ]
    path = tmp_path / "lane.yaml"
    path.write_text("".join(lines))
    return path


def pins(path, *argv, env=None):
    return run_cli("lane", "pins", path, *argv, cwd=path.parent, env=env, timeout=120)


def statuses(done):
    return {p["pin"]: p["status"] for p in json.loads(done.stdout)["pins"]}


def line_of(path, name):
    return next(i + 1 for i, line in enumerate(path.read_text().splitlines()) if line.startswith(f"    {name}:"))


def advance(bare, branch, times=1):
    head = git("rev-parse", f"refs/heads/{branch}", cwd=bare)
    for n in range(times):
        head = git("commit-tree", f"{head}^{{tree}}", "-p", head, "-m", f"advance {n}", cwd=bare)
    git("update-ref", f"refs/heads/{branch}", head, cwd=bare)
    return head


def test_a_copy_pointing_at_the_bundle_has_every_pin_current(remote, tmp_path):
    path = copy_profile(tmp_path, remote)
    before = path.read_bytes()
    done = pins(path, "--check", "--format", "json")
    assert done.returncode == 0, done.stderr
    assert statuses(done) == {name: "current" for name in NVIDIA_PINS}
    assert {p["pin"]: p["kind"] for p in json.loads(done.stdout)["pins"]} == {
        name: "tag" if ref.startswith("v") else "branch" for name, (ref, _) in NVIDIA_PINS.items()
    }
    done = pins(path, "--update")
    assert done.returncode == 0 and path.read_bytes() == before and done.stdout.count("current") == 5


def test_an_advanced_branch_warns_how_far_and_update_rewrites_only_its_commit(remote, tmp_path):
    path = copy_profile(tmp_path, remote)
    name, (ref, old) = next((n, v) for n, v in NVIDIA_PINS.items() if v[0] == "sa-submission-q2-2026")
    new = advance(remote, ref, times=3)
    done = pins(path, "--check")
    assert done.returncode == 0
    assert f"{path.name}:{line_of(path, name)}:" in done.stderr and "warning[lane-pin-branch-moved]" in done.stderr
    assert f"is 3 commits ahead of the recorded {old} (now {new})" in done.stderr
    before = path.read_text()
    done = pins(path, "--update", "--format", "json")
    assert done.returncode == 0 and json.loads(done.stdout)["updated"] == [name]
    assert path.read_text() == before.replace(f"commit: {old}", f"commit: {new}") != before
    assert statuses(pins(path, "--check", "--format", "json")) == {n: "current" for n in NVIDIA_PINS}


def test_a_rewritten_branch_says_the_recorded_commit_left_its_history(remote, tmp_path):
    path = copy_profile(tmp_path, remote)
    orphan = git("commit-tree", "refs/heads/aflowers/gb200-dsv4-recipes^{tree}", "-m", "rewritten", cwd=remote)
    git("update-ref", "refs/heads/aflowers/gb200-dsv4-recipes", orphan, cwd=remote)
    done = pins(path, "--check")
    assert done.returncode == 0 and "no longer in the branch's history" in done.stderr


@pytest.mark.parametrize("case", ["tag moved", "ref deleted", "unreachable", "commit mismatch"])
def test_failures_are_located_exit_1_and_write_nothing(remote, tmp_path, case):
    path = copy_profile(tmp_path, remote)
    ref, sha = NVIDIA_PINS["nvidia-v1.0.36"]
    rule = {
        "tag moved": "lane-pin-tag-moved",
        "ref deleted": "lane-pin-ref-missing",
        "unreachable": "lane-pin-unreachable",
        "commit mismatch": "lane-pin-mismatch",
    }[case]
    if case == "commit mismatch":  # the ref is another commit id than the one recorded
        other = NVIDIA_PINS["nvidia-v1.0.50"][1]
        path.write_text(path.read_text().replace(f"ref: {ref}, commit: {sha}", f"ref: {other}, commit: {sha}"))
        expected = f"the ref is a commit id that differs from the recorded commit {sha}"
        failing = {"nvidia-v1.0.36"}
    elif case == "tag moved":
        git("update-ref", f"refs/tags/{ref}", NVIDIA_PINS["nvidia-v1.0.50"][1], cwd=remote)
        expected = f"the tag moved: the recorded commit is {sha}, the tag now names {NVIDIA_PINS['nvidia-v1.0.50'][1]}"
        failing = {"nvidia-v1.0.36"}
    elif case == "ref deleted":
        git("update-ref", "-d", f"refs/tags/{ref}", cwd=remote)
        expected = f"the repository has no tag or branch '{ref}'"
        failing = {"nvidia-v1.0.36"}
    else:
        path.write_text(path.read_text().replace(remote.as_uri(), (tmp_path / "gone.git").as_uri()))
        expected = "cannot ask the repository: fatal:"
        failing = set(NVIDIA_PINS)
    advance(remote, "sa-submission-q2-2026")  # a pin --update would rewrite if nothing failed
    before, mtime = path.read_bytes(), path.stat().st_mtime_ns
    for mode in ("--check", "--update"):
        done = pins(path, mode)
        assert done.returncode == 1, (mode, done.stdout, done.stderr)
        assert f"{path.name}:{line_of(path, 'nvidia-v1.0.36')}:" in done.stderr and f"error[{rule}]" in done.stderr
        assert expected in done.stderr and done.stderr.count(f"error[{rule}]") == len(failing)
        assert path.read_bytes() == before and path.stat().st_mtime_ns == mtime
    assert "nothing written" in done.stdout
    assert list(tmp_path.glob(".lane.yaml.*")) == []  # no temporary file left behind either


def test_a_pin_without_a_recorded_commit_fails_the_check_located_with_the_command_that_writes_it(remote, tmp_path):
    path = copy_profile(tmp_path, remote)
    ref, sha = NVIDIA_PINS["nvidia-v1.0.36"]
    path.write_text(path.read_text().replace(f"ref: {ref}, commit: {sha}", f"ref: {ref}, commit: null"))
    before = path.read_bytes()
    done = pins(path, "--check")
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert done.stderr.count("error[") == 1 and f"{path.name}:{line_of(path, 'nvidia-v1.0.36')}:" in done.stderr
    assert (
        f"error[lane-pin-unrecorded]: pin nvidia-v1.0.36 ({remote.as_uri()} {ref}): no commit recorded; the tag is at "
        f"{sha}" in done.stderr
    )
    assert "Run `infx lane pins LANE --update`" in done.stderr and path.read_bytes() == before


def fill(template, **values):
    for key, value in values.items():
        template = template.replace(f"@{key}@", value)
    return template


def test_update_fills_missing_commits_keeping_every_other_byte(remote, tmp_path):
    url = remote.as_uri()
    (ref25, sha25), (ref36, sha36), (ref50, sha50) = (
        NVIDIA_PINS["nvidia-v1.0.25"],
        NVIDIA_PINS["nvidia-v1.0.36"],
        NVIDIA_PINS["nvidia-v1.0.50"],
    )
    branch, old_branch_sha = NVIDIA_PINS["nvidia-sa-submission-q2-2026"]
    template = (
        "# a hand-written profile: comments, odd spacing and styles stay as they are\n"
        "lane: x   # trailing comment\n"
        "git-protocols: [file]\n"
        "srt-slurm:\n"
        "  pins:\n"
        f'    flow-null: {{repository: "{url}", ref: {ref25},   commit: @A@}}   # keep me\n'
        "    block-tilde:\n"
        f"      repository: '{url}'\n"
        "      commit: @B@  # the SHA goes here\n"
        f'      ref: "{ref36}"\n'
        "    block-empty:\n"
        f"      repository: {url}\n"
        f"      ref: {ref50}\n"
        "      commit:@C@\n"
        f'    flow-missing: {{repository: "{url}", ref: {ref25}@D@}}\n'
        f'    quoted-branch: {{repository: "{url}", ref: {branch}, commit: "@E@"}}\n'
        "routes: []  # end\n"
    )
    path = tmp_path / "lane.yaml"
    path.write_text(fill(template, A="null", B="~", C="", D="", E=old_branch_sha))
    new_branch_sha = advance(remote, branch)
    done = pins(path, "--check", "--format", "json")
    assert done.returncode == 1 and statuses(done)["flow-null"] == "unrecorded"
    assert statuses(done)["quoted-branch"] == "moved"
    done = pins(path, "--update")
    assert done.returncode == 0, done.stderr
    assert path.read_text() == fill(template, A=sha25, B=sha36, C=f" {sha50}", D=f", commit: {sha25}", E=new_branch_sha)
    assert statuses(pins(path, "--check", "--format", "json")) == dict.fromkeys(
        ["flow-null", "block-tilde", "block-empty", "flow-missing", "quoted-branch"], "current"
    )


def test_git_runs_without_the_users_config_or_prompts(remote, tmp_path):
    path = copy_profile(tmp_path, remote)
    home = tmp_path / "home"
    home.mkdir()
    # A user config that would send every request elsewhere: infx must not read it.
    config = home / ".gitconfig"
    config.write_text(f'[url "{(tmp_path / "elsewhere.git").as_uri()}"]\n\tinsteadOf = {remote.as_uri()}\n')
    done = pins(
        path, "--check", env={"HOME": str(home), "GIT_CONFIG_GLOBAL": str(config), "XDG_CONFIG_HOME": str(home)}
    )
    assert done.returncode == 0, done.stderr
    # A transport that runs a command, or a URL that is an option, never reaches git.
    for url in ("ext::sh -c touch% pwned", "--upload-pack=touch pwned"):
        path.write_text(copy_profile(tmp_path, remote).read_text().replace(remote.as_uri(), url, 1))
        done = pins(path, "--check")
        assert (
            done.returncode == 1
            and "error[lane-pin]" in done.stderr
            and f"repository {url!r} is not https://" in done.stderr
        )
    # file:// only where the lane's git-protocols lists it.
    path.write_text(copy_profile(tmp_path, remote).read_text().replace("git-protocols: [https, file]\n", ""))
    done = pins(path, "--check")
    assert done.returncode == 1 and "which this lane does not allow" in done.stderr
    assert not list(tmp_path.rglob("pwned"))


def test_usage_errors(remote, tmp_path):
    path = copy_profile(tmp_path, remote)
    assert pins(path).returncode == 2
    assert pins(path, "--check", "--update").returncode == 2
    done = pins(tmp_path / "nowhere.yaml", "--check")
    assert done.returncode == 2 and "no lane profile at" in done.stderr
