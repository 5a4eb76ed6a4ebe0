"""`--base-ref`: a finding the base branch already has is a warning saying so, one the change
introduced stays an error; in `infx config validate` and `infx matrix`, on the reference corpus as
it is (eight runner labels its runners.yaml never declares), in real git repositories."""

from __future__ import annotations

import json
import re
import shutil

import pytest

from testing.cli import run_cli
from testing.corpus import CORPUS, MISSING_RUNNER_LABELS
from testing.gitrepo import Repo

UNDECLARED = 8  # the corpus's runner-unknown findings: three labels at eight keys
ON_BASE = "already on the base branch"
NVIDIA = "configs/nvidia-master.yaml"


@pytest.fixture
def corpus_repo(tmp_path) -> Repo:
    """The reference corpus, unpatched, committed on main; the working tree is the change under test."""
    root = tmp_path / "repo"
    shutil.copytree(CORPUS / "configs", root / "configs")
    shutil.copy(CORPUS / "perf-changelog.yaml", root / "perf-changelog.yaml")
    return Repo.init(root)


def _validate(repo: Repo, *argv: str):
    return run_cli("config", "validate", *argv, cwd=repo.path, env={"GITHUB_WORKSPACE": ""})


def test_without_a_base_the_older_defect_is_an_error(corpus_repo):
    done = _validate(corpus_repo)
    assert done.returncode == 1
    assert done.stderr.splitlines()[0] == f"infx config validate: invalid — {UNDECLARED} errors, 2 warnings"


def test_a_defect_already_on_the_base_is_a_warning_saying_so(corpus_repo):
    nvidia = corpus_repo.path / NVIDIA
    nvidia.write_text("# a comment: every finding's line moves\n\n" + nvidia.read_text())
    done = _validate(corpus_repo, "--base-ref", "main", "--format", "json")
    assert done.returncode == 0, done.stdout
    found = [d for d in json.loads(done.stdout)["diagnostics"] if d["rule"] == "runner-unknown"]
    assert len(found) == UNDECLARED and all(d["severity"] == "warning" and ON_BASE in d["message"] for d in found)
    assert {d["message"].split("'")[1] for d in found} == set(MISSING_RUNNER_LABELS)
    text = _validate(corpus_repo, "--base-ref", "main")
    assert text.returncode == 0
    assert text.stderr.splitlines()[0] == (
        f"infx config validate: ok — {UNDECLARED + 2} warnings ({UNDECLARED + 2} already on the base branch)"
    )


def test_a_defect_the_change_introduces_stays_an_error(corpus_repo):
    nvidia = corpus_repo.path / NVIDIA
    text = nvidia.read_text()
    at = text.index("  runner: h200\n", text.index("\ndsr1-fp8-h200-sglang:\n"))
    nvidia.write_text(text[:at] + "  runner: h200-nowhere\n" + text[at + len("  runner: h200\n") :])
    done = _validate(corpus_repo, "--base-ref", "main")
    assert done.returncode == 1
    lines = done.stderr.splitlines()
    assert lines[0] == (
        f"infx config validate: invalid — 1 error, {UNDECLARED + 2} warnings "
        f"({UNDECLARED + 2} already on the base branch)"
    )
    [error] = [line for line in lines if ": error[" in line]
    assert error.startswith(f"{NVIDIA}:") and "h200-nowhere" in error and ON_BASE not in error


def test_repeated_findings_print_once_with_their_count_and_places(corpus_repo):
    done = _validate(corpus_repo)
    lines = done.stderr.splitlines()
    gb300 = [line for line in lines if "runner 'gb300-nv' is not a label" in line]
    assert len(gb300) == 1  # four keys, said once
    following = lines[lines.index(gb300[0]) + 2]  # after its hint
    assert re.fullmatch(
        r"    the same at 3 more places: (configs/nvidia-master\.yaml:\d+:3 \([a-z0-9-]+\)(, )?){3}", following
    )
    body = json.loads(_validate(corpus_repo, "--format", "json").stdout)  # JSON lists every one
    assert sum("'gb300-nv'" in d["message"] for d in body["diagnostics"]) == 4


def test_matrix_builds_when_the_only_errors_are_on_the_base(corpus_repo):
    env = {"GITHUB_WORKSPACE": ""}
    refused = run_cli("matrix", cwd=corpus_repo.path, env=env)
    assert refused.returncode == 1 and refused.stdout == ""
    assert refused.stderr.startswith(f"infx matrix: invalid — {UNDECLARED} errors")
    done = run_cli("matrix", "--base-ref", "main", cwd=corpus_repo.path, env=env)
    assert done.returncode == 0, done.stderr
    assert done.stderr.splitlines()[0].startswith(f"infx matrix: ok — {UNDECLARED + 2} warnings")
    rows = json.loads(done.stdout)
    assert {row["runner"] for row in rows} >= set(MISSING_RUNNER_LABELS)  # their points are still rows


@pytest.mark.parametrize("ref", ["-x", "main..HEAD", "ma\nin", "a" * 300])
def test_a_base_ref_of_the_wrong_shape_is_refused_before_any_file_is_read(tmp_path, ref):
    for command in (("config", "validate"), ("matrix",)):
        done = run_cli(*command, "--base-ref", ref, cwd=tmp_path)  # no configs here: the shape is checked first
        assert done.returncode == 2 and "Traceback" not in done.stderr
        assert "is not a usable git ref: pass a branch, tag or commit" in done.stderr


def test_a_base_ref_that_names_nothing_exits_2(corpus_repo):
    done = _validate(corpus_repo, "--base-ref", "no-such-branch")
    assert done.returncode == 2 and "does not exist" in done.stderr and "Traceback" not in done.stderr
