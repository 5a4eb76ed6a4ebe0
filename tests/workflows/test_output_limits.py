"""Job outputs as GitHub counts them: UTF-16, at most 1 MB per job and 50 MB per run.

The executor fails a job past the limit ("Maximum object size exceeded"), so run-sweep.yml is
dispatched here with all 1,820 points of the reference corpus, in plain ASCII and with
non-ASCII-heavy configs, through the whole fan-out: every job's outputs stay within the limits and
every point reaches its run-point call (inline or, past infx's budget, through the plan
artifact's shard files and the shard's `load` job).
"""

from __future__ import annotations

import gzip
import json
import re
from pathlib import Path

import pytest

from infx.points import point_id
from testing.corpus import REFERENCE_ROWS
from testing.executor import JOB_OUTPUTS_LIMIT, RUN_OUTPUTS_LIMIT, Executor
from testing.reference_sweep import NON_ASCII, commit, corpus_repository


def one_job_workflow(repo: Path, script: str) -> None:
    repo.mkdir(parents=True, exist_ok=True)
    lines = "".join(f"          {line}\n" for line in script.splitlines())
    (repo / "job.yml").write_text(
        "name: outputs\non:\n  workflow_dispatch:\n    inputs: {}\npermissions: {}\njobs:\n"
        "  big:\n    runs-on: ubuntu-latest\n    permissions: {}\n    outputs:\n      value: ${{ "
        "steps.write.outputs.value }}\n"
        "    steps:\n      - id: write\n        run: |\n"
        + lines
        + "  after:\n    needs: big\n    runs-on: ubuntu-latest\n    permissions: {}\n    steps:\n      - run: echo "
        "ran\n"
    )


@pytest.mark.parametrize(
    "characters, fails",
    [
        ("a" * 499_990, False),  # 999,980 bytes in UTF-16 with the name: just within
        ("a" * 500_010, True),  # 0.5 MB of UTF-8, but past 1 MB as GitHub counts
        ("😀" * 250_010, True),  # 250,010 Python characters, 1,000,040 bytes in UTF-16
    ],
    ids=["ascii-within", "ascii-past", "emoji-past"],
)
def test_the_executor_fails_a_job_whose_outputs_pass_the_limit(tmp_path: Path, characters: str, fails: bool):
    repo = tmp_path / "repo"
    one_job_workflow(
        repo,
        "python3 -c \"import os, sys; open(os.environ['GITHUB_OUTPUT'], 'a').write('value<<EOF\\n' + "
        "open('value.txt', encoding='utf-8').read() + '\\nEOF\\n')\"",
    )
    (repo / "value.txt").write_text(characters, encoding="utf-8")
    sha = commit(repo)
    run = Executor(repo, tmp_path / "run", "workflow_dispatch", {}, sha=sha)
    results = run.run("job.yml")
    big = run.find("big")[0]
    assert big.outputs_size == len(("value" + characters).encode("utf-16-le"))
    if fails:
        assert results == {"big": "failure", "after": "skipped"} and "Maximum object size exceeded" in big.log
        assert big.outputs == {}
    else:
        assert results == {"big": "success", "after": "success"}, big.log
    assert JOB_OUTPUTS_LIMIT == 1_000_000 and RUN_OUTPUTS_LIMIT == 50_000_000


@pytest.mark.parametrize("non_ascii", [False, True], ids=["ascii", "non-ascii"])
def test_a_dispatch_of_all_1820_reference_points_passes_the_output_limits(tmp_path: Path, non_ascii: bool):
    repo, sha = corpus_repository(tmp_path, non_ascii)
    run = Executor(repo, tmp_path / "run", "workflow_dispatch", {}, sha=sha, repository="acme/bench")
    # The whole fan-out: setup, each shard's load and matrix, each point's run-point call (its own steps
    # are not run here: they have no outputs, and 1,820 launch plans would take minutes).
    results = run.run(
        inputs={"config-keys": "", "no-reuse": True, "dry-run": True},
        only={"setup", "sweep", "sweep[*]/load", "sweep[*]/points"},
    )
    setup = run.find("setup")[0]
    assert results["setup"] == "success" and results["sweep"] == "success", setup.log[-3000:]
    assert 0 < setup.outputs_size <= JOB_OUTPUTS_LIMIT
    assert not [job.path for job in run.jobs if job.result == "failure"]
    assert all(job.outputs_size <= JOB_OUTPUTS_LIMIT for job in run.jobs) and run.outputs_total <= RUN_OUTPUTS_LIMIT
    called = [
        json.loads(job.inputs["point"]) for job in run.jobs if re.fullmatch(r"sweep\[\d+\]/points\[\d+\]", job.path)
    ]
    planned = json.loads((run.artifacts / "sweep-plan" / "plan.json").read_text(encoding="utf-8"))["buckets"]
    assert sorted(map(point_id, called)) == sorted(point_id(row) for rows in planned.values() for row in rows)
    outputs = setup.outputs
    assert outputs["point-count"] == "1820" and outputs["dispatch"] == "true"
    shards = json.loads(outputs["shards"])
    inline = [s for s in shards if s["output"]]
    assert inline and len(inline) < len(shards), "1,820 points do not fit a job's outputs: some shards are files only"
    rows = []
    for descriptor in shards:
        from_file = json.loads(
            (run.artifacts / "sweep-plan" / "infx-shards" / descriptor["file"]).read_text(encoding="utf-8")
        )
        if descriptor["output"]:
            assert json.loads(outputs[descriptor["output"]]) == from_file
        rows.extend(from_file)
    assert len(rows) == 1820
    reference = json.loads(gzip.open(REFERENCE_ROWS).read())
    if non_ascii:
        assert all(row["model"].endswith(NON_ASCII) for row in rows)
        reference = [{**row, "model": row["model"] + NON_ASCII} for row in reference]
    # What infx adds to the reference's row shape (eval-protocol: the repository has infx's source,
    # eval suite included).
    added = {"config-key", "recipe-fingerprint", "node-count", "eval-protocol"}

    def canonical(row: dict) -> str:
        return json.dumps({k: v for k, v in row.items() if k not in added}, sort_keys=True)

    assert sorted(map(canonical, rows)) == sorted(map(canonical, reference))
    assert len(set(map(point_id, rows))) == 1820
    # The same outputs counted as UTF-8 would have looked smaller for ASCII, larger for CJK: the
    # executor's count is GitHub's, not either of those.
    utf8 = sum(len((name + value).encode()) for name, value in outputs.items())
    assert (utf8 < setup.outputs_size) if not non_ascii else (utf8 != setup.outputs_size)
