"""The commands as real processes in real repositories: exit codes, formats, fix, plan."""

from __future__ import annotations

import json
import subprocess

import pytest

from testing.cli import run_cli
from testing.gitrepo import Repo
from testing.lanes import write_lane_profile

from .conftest import PH, SLUG, C, E, K

FILE = "perf-changelog.yaml"


@pytest.fixture
def work(corpus_repo, tmp_path) -> Repo:
    """A clone of the corpus repository whose working tree a test may change."""
    clone = tmp_path / "work"
    subprocess.run(["git", "clone", "-q", str(corpus_repo.path), str(clone)], check=True)
    return Repo(clone)


def _commit_worktree(repo: Repo, message: str) -> str:
    repo.git("commit", "-q", "-am", message)
    return repo.git("rev-parse", "HEAD")


def validate_pr(work: Repo, pr: int, *extra: str, **kwargs):
    """`infx changelog validate` of pull request ``pr``: HEAD against origin/main, in ``work``."""
    return run_cli(
        "changelog",
        "validate",
        "--base-ref",
        "origin/main",
        "--head-ref",
        "HEAD",
        "--pr-number",
        str(pr),
        *extra,
        cwd=work.path,
        **kwargs,
    )


def test_validate_accepts_one_appended_entry_and_reports_json(work, BASE):
    (work.path / FILE).write_bytes(BASE + b"\n" + E(K, PH))
    _commit_worktree(work, "append")
    done = validate_pr(work, 42, "--format", "json")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert report["ok"] and report["mode"] == "pr" and report["added-entries"] == [773]
    assert report["resolved-keys"] == [K] and report["point-count"] > 0


def test_validate_reports_every_problem_at_once(work, BASE):
    entry = b'- config-keys:\n    - no-such-key\n  description:\n    - "a\tb"\n  pr-link: TBD\n'
    (work.path / FILE).write_bytes(BASE + b"\n\n" + entry + b"\n")
    _commit_worktree(work, "broken append")
    done = validate_pr(work, 42)
    assert done.returncode == 1
    for rule in ("changelog-tab", "changelog-separator", "changelog-trailing-blank", "pr-link", "config-key-unknown"):
        assert f"[{rule}]" in done.stderr, done.stderr
    assert f"pr-link: {C(42)}" in done.stderr and "Traceback" not in done.stderr


def test_github_format_annotates(work, BASE):
    (work.path / FILE).write_bytes(BASE + b"\n" + E(K, "PLACEHOLDER"))
    _commit_worktree(work, "placeholder")
    done = validate_pr(work, 7, "--format", "github")
    assert done.returncode == 1
    line = BASE.count(b"\n") + 6
    assert f"::error file={FILE},line={line},col=3,title=pr-link::" in done.stdout


@pytest.mark.parametrize(
    "args, reason",
    [
        (["--base-ref", "no-such-branch", "--head-ref", "HEAD"], "does not exist"),
        (["--base-ref", "HEAD", "--head-ref", "HEAD", "--changelog", "/etc/passwd"], "outside the repository"),
        (["--base-ref", "HEAD", "--head-ref", "HEAD", "--repo", "not a slug"], "OWNER/NAME"),
    ],
)
def test_usage_errors_exit_2(work, args, reason):
    done = run_cli("changelog", "validate", *args, cwd=work.path)
    assert done.returncode == 2 and reason in done.stderr and "Traceback" not in done.stderr


def test_repo_slug_precedence(work, BASE):
    (work.path / FILE).write_bytes(BASE + b"\n" + E(K, "https://github.com/acme/bench/pull/5"))
    _commit_worktree(work, "acme link")
    assert validate_pr(work, 5).returncode == 1  # configs/infx.yaml names SemiAnalysisAI/InferenceX
    assert validate_pr(work, 5, env={"GITHUB_REPOSITORY": "acme/bench"}).returncode == 0
    assert validate_pr(work, 5, "--repo", "other/repo", env={"GITHUB_REPOSITORY": "acme/bench"}).returncode == 1


def test_fix_repairs_the_appended_region_atomically_and_then_validates(work, BASE):
    messy = f'- config-keys:\n\t- {K}\n  description:\n    - "x"   \n  pr-link: https://github.com/{SLUG}/pull/PLACEHOLDER\r\n'
    (work.path / FILE).write_bytes(BASE + b"  \n\n" + messy.encode() + b"\n\n" + E(K + "-mtp", "XXX") + b"\n\n")
    done = run_cli("changelog", "fix", "--pr-number", "42", "--base-ref", "origin/main", cwd=work.path)
    text = (work.path / FILE).read_bytes()
    assert text.startswith(BASE)
    assert text[len(BASE) :] == b"\n" + E(K, C(42)).replace(b'"Synthetic"', b'"x"') + b"\n" + E(K + "-mtp", C(42))
    assert done.returncode == 0, done.stderr
    assert "TAB" in done.stderr and "PLACEHOLDER" in done.stderr
    _commit_worktree(work, "fixed")
    assert validate_pr(work, 42).returncode == 0


def test_fix_refuses_history_changes_and_writes_nothing(work, BASE):
    broken = BASE.replace(b"6-7% uplift", b"6-8% uplift") + b"\n" + E(K, "XXX")
    (work.path / FILE).write_bytes(broken)
    done = run_cli("changelog", "fix", "--pr-number", "42", "--base-ref", "origin/main", cwd=work.path)
    assert done.returncode == 1 and "[fix-history]" in done.stderr and "line 5" in done.stderr
    assert (work.path / FILE).read_bytes() == broken
    assert not [p for p in work.path.iterdir() if p.name.startswith(f".{FILE}")]  # no temporary left behind


def test_plan_without_refs_prints_the_newest_entry_as_a_table(work, BASE):
    (work.path / FILE).write_bytes(BASE + b"\n" + E(K, PH))
    done = run_cli("plan", cwd=work.path)
    assert done.returncode == 0, done.stderr
    assert f"entry 773: {K}" in done.stdout and "single_node/8k1k:" in done.stdout and "config-key" in done.stdout


def test_plan_json_and_github_shards(work, BASE, tmp_path):
    (work.path / FILE).write_bytes(BASE + b"\n" + E('"dsr1-fp8-h200-sglang*"', PH))
    write_lane_profile(work.path, "h200-test", ["h200"])  # every point has a lane: the shards hold them all
    work.git("add", "runners")
    _commit_worktree(work, "glob")
    args = ["plan", "--base-ref", "origin/main", "--head-ref", "HEAD", "--pr-number", "42"]
    plan = json.loads(run_cli(*args, cwd=work.path).stdout)
    meta = plan["changelog_metadata"]
    assert [(item["label"], item["lane"], item["status"]) for item in plan["lanes"]["labels"]] == [
        ("h200", "h200-test", "served")
    ]
    assert (
        meta["resolved-keys"] == [K, K + "-mtp"] and meta["pr-link"] == C(42) and meta["entries"][0]["position"] == 773
    )
    assert plan["point-count"] == sum(len(rows) for rows in plan["buckets"].values())
    output, summary, shards = tmp_path / "out", tmp_path / "summary", tmp_path / "shards"
    done = run_cli(
        *args,
        "--format",
        "github",
        "--shard-dir",
        str(shards),
        cwd=work.path,
        env={"GITHUB_OUTPUT": str(output), "GITHUB_STEP_SUMMARY": str(summary)},
    )
    assert done.returncode == 0, done.stderr
    text = output.read_text()
    assert "point-count" in text and "shards<<" in text
    shard_rows = [row for path in sorted(shards.glob("shard-*.json")) for row in json.loads(path.read_text())]
    assert sorted(json.dumps(r, sort_keys=True) for r in shard_rows) == sorted(
        json.dumps(r, sort_keys=True) for rows in plan["buckets"].values() for r in rows
    )
    assert summary.read_text()


def test_push_run_plans_a_mid_file_entry(work, BASE):
    head = BASE.replace(b"- config-keys:\n    - gptoss*\n", E(K, C(500)) + b"\n- config-keys:\n    - gptoss*\n", 1)
    (work.path / FILE).write_bytes(head)
    _commit_worktree(work, "merged behind main")
    done = run_cli("plan", "--base-ref", "HEAD~1", "--head-ref", "HEAD", cwd=work.path)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["changelog_metadata"]["resolved-keys"] == [K]


def test_plan_of_a_changelog_with_no_entry_is_changelog_empty(work):
    (work.path / FILE).write_bytes(b"[]\n")
    done = run_cli("plan", cwd=work.path)
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert (
        f"{FILE}:1:1: error[changelog-empty]: the changelog has no entry to plan" in done.stderr
        and "Append an entry" in done.stderr
    )


def test_push_run_warns_about_a_reformatted_historical_entry(work, BASE):
    # entry 1's second description line, single- instead of double-quoted: the same content, other bytes
    head = BASE.replace(
        b'    - "6-7% uplift for llama for 6/8 configs"\n', b"    - '6-7% uplift for llama for 6/8 configs'\n", 1
    )
    assert head != BASE
    (work.path / FILE).write_bytes(head)
    _commit_worktree(work, "requote history")
    done = run_cli("changelog", "validate", "--base-ref", "HEAD~1", "--head-ref", "HEAD", cwd=work.path)
    assert done.returncode == 0, done.stderr  # a push run reports, it does not refuse
    assert (
        f"{FILE}:1:1: warning[changelog-reformatted]: historical entry 1 " in done.stderr
        and "byte-for-byte" in done.stderr
    )


def test_the_gate_and_fix_requests_work_without_the_command_line(work, BASE, monkeypatch):
    from infx.changelog.fix import FixRequest, fix_changelog
    from infx.changelog.gate import GateRequest, validate_changelog

    monkeypatch.delenv("GITHUB_REPOSITORY", raising=False)
    (work.path / FILE).write_bytes(BASE + b"\n" + E(K, "XXX") + b"\n\n")
    fixed = fix_changelog(
        FixRequest(pr_number=42, base_ref="origin/main", repo_slug=SLUG), cwd=work.path / "configs"
    )  # any folder of the repository
    assert fixed.written and fixed.file == FILE and (work.path / FILE).read_bytes() == BASE + b"\n" + E(K, C(42))
    _commit_worktree(work, "append")
    result = validate_changelog(
        GateRequest(base_ref="origin/main", head_ref="HEAD", pr_number=42, repo_slug=SLUG), cwd=work.path
    )
    assert result.report.ok and result.change is not None and result.change.added_indexes == [773]
    assert result.plan and result.plan.point_count > 0
