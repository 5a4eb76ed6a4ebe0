"""Rows, plans and a CLI runner shared by the GitHub tests."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

from infx.points import point_id
from testing.github_server import SLUG

REPO = Path(__file__).resolve().parents[2]


def row(n: int, conc=None, multinode: bool = False) -> dict:
    """A matrix row with the fields the report and reruns read; a valid row of the row contract."""
    fingerprint = hashlib.sha256(f"topology-{n}".encode()).hexdigest()
    base = {
        "image": "lmsysorg/sglang:x",
        "model": "deepseek-ai/DeepSeek-V4-Pro",
        "model-prefix": "dsv4",
        "precision": "fp4",
        "framework": "dynamo-sglang",
        "runner": "gb300-nv",
        "isl": 8192,
        "osl": 1024,
        "spec-decoding": "none",
        "max-model-len": 9472,
        "exp-name": "dsv4_8k1k",
        "run-eval": False,
        "config-key": f"dsv4-fp4-gb300-key{n % 3}",
        "recipe-fingerprint": fingerprint,
    }
    if multinode:
        worker = {
            "num-worker": 1,
            "tp": 8,
            "pp": 1,
            "dcp-size": 1,
            "pcp-size": 1,
            "ep": 8,
            "dp-attn": True,
            "additional-settings": [],
        }
        return {
            **base,
            "prefill": worker,
            "decode": {**worker, "tp": 16, "ep": 16},
            "node-count": 7,
            "disagg": True,
            "kv-p2p-transfer": "nixl",
            "conc": conc if conc is not None else [120],
        }
    return {
        **base,
        "tp": 4,
        "pp": 1,
        "dcp-size": 1,
        "pcp-size": 1,
        "ep": 1,
        "dp-attn": False,
        "disagg": False,
        "conc": conc if conc is not None else 64,
    }


def rows(count: int) -> list[dict]:
    return [row(n, multinode=n % 2 == 0) for n in range(count)]


def write_plan(path: Path, plan_rows: list[dict]) -> Path:
    path.write_text(json.dumps(plan_rows))
    return path


def env_for(server, **extra) -> dict:
    """What infx reads to call the local GitHub server (tests/testing/github_server.py) as SLUG."""
    return {"GITHUB_TOKEN": "ghs_test", "GITHUB_API_URL": server.url, "GITHUB_REPOSITORY": SLUG, **extra}


RESULT_DATA = REPO / "tests" / "data" / "results"


def result_files(row: dict, name: str) -> dict[str, str]:
    """The result files of a point that ran well: the shipped sa-bench and AgentX fixtures
    (tests/data/results), at the point's concurrencies and with its topology, named as infx
    launch stages them."""
    from infx.results.rows import point_parallelism

    concs = row["conc"] if isinstance(row["conc"], list) else [row["conc"]]
    if row.get("scenario-type") == "agentic-coding":
        aggregate = json.loads((RESULT_DATA / "agentic" / "aggregate.json").read_text())
        return {f"{name}_conc{c}.json": json.dumps({**aggregate, **point_parallelism(row), "conc": c}) for c in concs}
    raw = json.loads((RESULT_DATA / "sa-bench" / "results_concurrency_4_gpus_4.json").read_text())
    gpus = row["node-count"] * 4 if "prefill" in row else row.get("tp", 1) * row.get("pp", 1)
    return {
        f"{name}_dsv4_isl_8192_osl_1024_conc{c}_gpus_{gpus}.json": json.dumps({**raw, "max_concurrency": c})
        for c in concs
    }


def result_artifact_files(
    row: dict,
    key: str,
    exit_code: int = 0,
    run_id: int = 1,
    finished: str = "2026-11-30T10:00:00+00:00",
    drop_conc: bool = False,
    eval_results: bool = True,
    eval_score: float | None = None,
) -> dict[str, str]:
    """What run-point uploads for one point: the launch record and the staged result files, as
    infx launch writes them (the launch itself runs on the real local Slurm in tests/slurm). An
    eval point's record says so (`eval`) and, with ``eval_results``, its eval/ holds what the eval
    stage leaves (the real lm-eval result, both scores ``eval_score`` when given); an eval-only
    point has no throughput files."""
    import tempfile

    from infx.evalsuite import EvalKind, PointEval
    from testing.evalstage import eval_stage_output

    name = f"{row['exp-name']}_{point_id(row)}"
    choice = PointEval.of_point(row)
    files = result_files(row, name) if exit_code == 0 and choice.kind is not EvalKind.ONLY else {}
    if drop_conc:
        files = dict(list(files.items())[:-1])
    if choice.runs and eval_results and exit_code == 0:
        with tempfile.TemporaryDirectory() as tmp:
            folder = eval_stage_output(row, Path(tmp) / "eval", strict=eval_score, flexible=eval_score)
            files.update({f"eval/{p.name}": p.read_text() for p in sorted(folder.iterdir())})
    record = {
        "lane": "gb300-nv",
        "point-id": point_id(row),
        "point": row,
        "result-key": key,
        "exit-code": exit_code,
        "terminal-state": "COMPLETED" if exit_code == 0 else "FAILED",
        "message": "",
        "results": sorted(files),
        "eval": choice.to_json() if choice.runs else None,
        "run-id": run_id,
        "timings": {"started": finished, "finished": finished},
    }
    return {f"{name}_launch.json": json.dumps(record), **files}


def parse_outputs(text: str) -> dict[str, str]:
    """Read a $GITHUB_OUTPUT file the way the runner does (heredoc blocks only)."""
    outputs, lines, index = {}, text.split("\n"), 0
    while index < len(lines) and lines[index]:
        name, _, delimiter = lines[index].partition("<<")
        end = lines.index(delimiter, index + 1)
        outputs[name] = "\n".join(lines[index + 1 : end])
        index = end + 1
    return outputs
