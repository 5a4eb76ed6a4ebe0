"""GitHub Actions outputs: heredoc safety, sharding within GitHub's limits, the summary cap."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from infx.workflows.actions import (
    JOB_OUTPUTS_LIMIT,
    MAX_SHARD_ROWS,
    OUTPUT_BUDGET,
    SUMMARY_LIMIT_BYTES,
    format_outputs,
    github_size,
    heredoc_delimiter,
    outputs_size,
    render_step_summary,
    write_sharded_outputs,
    write_step_summary,
)
from testing.cli import run_cli  # noqa: E402
from testing.github_helpers import parse_outputs  # noqa: E402
from testing.matrix_helpers import Repo, entry, fixed  # noqa: E402


@settings(max_examples=200, deadline=None)
@given(
    st.dictionaries(
        st.from_regex(r"[a-z][a-z0-9-]{0,10}", fullmatch=True),
        st.lists(st.text(max_size=20) | st.sampled_from(["infx_EOF_", "\n", "<<", "EOF"]), max_size=12).map("".join),
        max_size=5,
    )
)
def test_outputs_round_trip(outputs):
    assert parse_outputs(format_outputs(outputs)) == outputs


def test_delimiter_never_occurs_in_the_payload():
    tokens = iter(["aa", "aa", "bb"])
    payload = "rows ... infx_EOF_aa ... more"
    assert heredoc_delimiter(payload, token=lambda n: next(tokens)) == "infx_EOF_bb"
    hostile = json.dumps([{"exp-name": "x\ninfx_EOF_aa\nshards<<y"}])
    text = format_outputs({"shard-0": hostile})
    delimiter = text.split("\n", 1)[0].partition("<<")[2]
    assert delimiter not in hostile and parse_outputs(text) == {"shard-0": hostile}


@pytest.fixture(scope="module")
def big_repo(tmp_path_factory):
    """A synthetic config of 1,120 points: 10 single-node keys × 2 runners-free ladders + agentic rows."""
    masters = {}
    for index in range(10):
        masters[f"model{index}-fp8-mi300x-sglang"] = entry(
            model_prefix=f"model{index}",
            scenarios={
                "fixed-seq-len": [
                    fixed(*({"tp": tp, "conc-list": list(range(1, 29))} for tp in (1, 2)), isl=8192),
                    fixed({"tp": 8, "conc-list": list(range(1, 29))}, isl=2048),
                ]
            },
        )
    masters["agentic-b300"] = entry(
        runner="cluster:b300-nv",
        scenarios={
            "agentic-coding": [
                {
                    "dram-utilization": 0.8,
                    "search-space": [{"tp": 8, "kv-offloading": "none", "conc-list": list(range(1, 281))}],
                }
            ]
        },
    )
    return Repo(tmp_path_factory.mktemp("big"), masters)


def test_synthetic_matrix_shards_within_limits(big_repo, tmp_path):
    rows = big_repo.build()
    assert len(rows) == 10 * 3 * 28 + 280 == 1120
    outputs_file, shard_dir = tmp_path / "github_output", tmp_path / "shards"
    outputs_file.write_text("earlier=1\n")  # the runner's file may hold other outputs already
    from infx.matrix import bucketize

    shards = write_sharded_outputs(bucketize(rows), outputs_file, shard_dir)
    outputs = parse_outputs(outputs_file.read_text().split("\n", 1)[1])
    assert json.loads(outputs["shards"]) == shards and outputs["point-count"] == "1120"
    assert [s["id"] for s in shards] == [
        "single_node/8k1k#0",
        "single_node/8k1k#1",
        "single_node/8k1k#2",
        "single_node/2048_1024#0",
        "single_node/2048_1024#1",
        "single_node/agentic#0",
        "single_node/agentic#1",
    ]
    union = []
    for k, descriptor in enumerate(shards):
        from_file = json.loads((shard_dir / descriptor["file"]).read_text())
        assert 0 < len(from_file) == descriptor["rows"] <= MAX_SHARD_ROWS
        if descriptor["output"]:
            assert json.loads(outputs[descriptor["output"]]) == from_file and descriptor["output"] == f"shard-{k}"
        union.extend(from_file)
    assert union == [row for bucket in bucketize(rows).values() for row in bucket]
    assert sorted(map(json.dumps, union)) == sorted(map(json.dumps, rows))
    assert outputs_size(outputs) <= OUTPUT_BUDGET < JOB_OUTPUTS_LIMIT


def test_oversized_shards_go_to_files(big_repo, tmp_path):
    from infx.matrix import bucketize

    rows = big_repo.build()
    shards = write_sharded_outputs(bucketize(rows), tmp_path / "out", tmp_path / "shards", output_budget=150_000)
    outputs = parse_outputs((tmp_path / "out").read_text())
    inline = [s for s in shards if s["output"]]
    assert inline and len(inline) < len(shards)
    assert all(s["file"] and (tmp_path / "shards" / s["file"]).is_file() for s in shards)
    assert outputs_size(outputs) <= 150_000
    assert set(outputs) == {"shards", "point-count"} | {s["output"] for s in inline}


def test_github_counts_outputs_in_utf16():
    """Two bytes per UTF-16 code unit: ASCII costs twice its UTF-8 size, an emoji (a surrogate
    pair) four bytes though Python counts it as one character."""
    assert [github_size(text) for text in ("a", "é", "模", "😀", "")] == [2, 2, 2, 4, 0]
    assert outputs_size({"shard-0": "[]", "point-count": "0"}) == 2 * len("shard-0[]point-count0")


def reference_rows(non_ascii: bool = False) -> list[dict]:
    """The reference's 1,820 rows; non_ascii: every model name made emoji- and CJK-heavy."""
    import gzip

    rows = json.loads(
        gzip.open(Path(__file__).resolve().parents[1] / "data" / "inferencex-2026-08-reference-rows.json.gz").read()
    )
    if non_ascii:
        rows = [{**row, "model": f"{row['model']}-模型推理-{'😀' * 40}"} for row in rows]
    return rows


@pytest.mark.parametrize("non_ascii", [False, True])
def test_all_outputs_of_a_plan_of_the_reference_stay_within_the_job_limit(tmp_path, non_ascii):
    """1,820 points are about 1.9 MB of outputs as GitHub counts them: the shards that do not fit
    travel only as files, and everything the job outputs (shards, their list, the mode outputs)
    stays within the budget."""
    from infx.matrix import bucketize

    rows = reference_rows(non_ascii)
    assert len(rows) == 1820
    buckets = bucketize(rows)
    canary = json.dumps([rows[0]], ensure_ascii=False)
    other = {"dispatch": "true", "canary": canary, "lanes": json.dumps(sorted({r["runner"] for r in rows}))}
    shards = write_sharded_outputs(buckets, tmp_path / "out", tmp_path / "shards", other_outputs=other)
    outputs = parse_outputs((tmp_path / "out").read_text())
    as_github_counts = sum(len((name + value).encode("utf-16-le")) for name, value in outputs.items())
    assert outputs_size(outputs) == as_github_counts <= OUTPUT_BUDGET
    assert {k: outputs[k] for k in other} == other and outputs["point-count"] == "1820"
    assert (
        sum(github_size(json.dumps(row, ensure_ascii=False, separators=(",", ":"))) for row in rows) > JOB_OUTPUTS_LIMIT
    )
    inline = [s for s in shards if s["output"]]
    assert inline and len(inline) < len(shards), "the shards past the budget travel only in the artifact"
    union = [row for s in shards for row in json.loads((tmp_path / "shards" / s["file"]).read_text())]
    assert sorted(map(json.dumps, union)) == sorted(map(json.dumps, rows))
    # Inline is as much as fits: the next shard would have passed the budget.
    first_file = next(s for s in shards if not s["output"])
    payload = (tmp_path / "shards" / first_file["file"]).read_text()
    assert outputs_size(outputs) + outputs_size({f"shard-{shards.index(first_file)}": payload}) > OUTPUT_BUDGET


def test_step_summary_stays_under_the_cap(tmp_path):
    rows = [
        {
            "config-key": "k" * 180 + str(i),
            "runner": "r|" * 50,
            "conc": i,
            "exp-name": "e\n" * 80,
            "run-eval": False,
            "tp": 8,
        }
        for i in range(20_000)
    ]
    buckets = {f"bucket-{i}": rows[i * 10 : (i + 1) * 10] for i in range(2000)}
    text = render_step_summary(buckets, table_rows=20_000)
    assert len(text.encode()) < SUMMARY_LIMIT_BYTES
    summary = tmp_path / "summary.md"
    written = write_step_summary(summary, {"single_node/8k1k": rows[:30]})
    assert summary.read_text() == written
    assert "**30 points**" in written and "| single_node/8k1k | 30 | 1 |" in written
    assert written.count("\n| single_node/8k1k | k") == 25  # the first rows, as a table
    assert "GPU-hours" in written and "| 120.0 |" in written  # 30 × 8 GPUs × 1800 s


def test_cli_github_format(big_repo, tmp_path):
    outputs_file, summary = tmp_path / "out", tmp_path / "summary.md"
    result = run_cli(
        "matrix",
        "--format",
        "github",
        "--no-evals",
        cwd=big_repo.root,
        env={"GITHUB_OUTPUT": str(outputs_file), "GITHUB_STEP_SUMMARY": str(summary), "RUNNER_TEMP": str(tmp_path)},
    )
    assert result.returncode == 0, result.stderr
    outputs = parse_outputs(outputs_file.read_text())
    shards = json.loads(outputs["shards"])
    assert outputs["point-count"] == "1120" and len(shards) == 7
    assert all((tmp_path / "infx-shards" / s["file"]).is_file() for s in shards)
    assert "1120 points" in summary.read_text()
    result = run_cli(
        "matrix", "--format", "github", cwd=big_repo.root, env={"GITHUB_OUTPUT": None, "RUNNER_TEMP": None}
    )
    assert result.returncode == 2 and "GITHUB_OUTPUT" in result.stderr


def test_github_notices_cannot_inject_workflow_commands(big_repo, tmp_path):
    result = run_cli(
        "matrix",
        "--format",
        "github",
        "--config-key",
        "zz*\n::error::injected%0A",
        cwd=big_repo.root,
        env={"GITHUB_OUTPUT": str(tmp_path / "out"), "RUNNER_TEMP": str(tmp_path)},
    )
    assert result.returncode == 0, result.stderr
    assert not any(line.startswith("::error") for line in result.stdout.splitlines())
    assert "::notice" in result.stdout and "matched no config keys" in result.stdout
    assert parse_outputs((tmp_path / "out").read_text())["point-count"] == "0"
