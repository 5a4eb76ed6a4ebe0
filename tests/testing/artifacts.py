"""Per-point artifact folders as run-point.yml uploads them, built from real matrix rows of the
bundled configs and the result fixtures under tests/data/results/."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path

from testing.cli import run_cli
from testing.evalstage import eval_stage_output

REPO = Path(__file__).resolve().parents[2]
DATA = REPO / "tests" / "data" / "results"
SA_BENCH = DATA / "sa-bench"
AGENTIC = DATA / "agentic"
SRT_COMMIT = "e4019633" + "0" * 32


@cache
def bundled_rows(config_key: str) -> tuple[str, ...]:
    """The rows `infx matrix` builds for a config key of the bundled configs (as JSON texts)."""
    done = run_cli("matrix", "--config-key", config_key, "--format", "json")
    assert done.returncode == 0, done.stderr
    return tuple(json.dumps(row) for row in json.loads(done.stdout))


def bundled_row(config_key: str, index: int = 0, **changes) -> dict:
    row = json.loads(bundled_rows(config_key)[index])
    row.update(changes)
    return row


def sa_bench(name: str, **changes) -> dict:
    data = json.loads((SA_BENCH / name).read_text())
    data.update(changes)
    return data


def agentic(name: str = "aggregate.json", **changes) -> dict:
    data = json.loads((AGENTIC / name).read_text())
    for key, value in changes.items():
        target = data
        parts = key.split("__")
        for part in parts[:-1]:
            target = target[part]
        target[parts[-1]] = value
    return data


def launched_eval(row: dict) -> dict | None:
    """The launch record's `eval` for a row, as infx launch writes it (kind and concurrencies; the
    protocol and suite too in a real record), or None for a throughput point."""
    from infx.evalsuite import PointEval

    choice = PointEval.of_point(row)
    return choice.to_json() if choice.runs else None


def point_folder(
    root: Path,
    row: dict,
    files: dict[str, dict],
    exit_code: int = 0,
    message: str = "",
    run_id: int | None = 4242,
    name: str | None = None,
    run_attempt: int = 1,
    eval_results: bool = True,
) -> Path:
    """`point-<id>/` holding `<name>_launch.json` and the result files, as infx launch leaves them;
    an eval point's record says so (`eval`) and, with ``eval_results``, its eval/ holds what the
    eval stage leaves (eval_stage_output)."""
    from infx.points import point_id

    pid = point_id(row)
    folder = root / f"point-{pid}{'' if exit_code == 0 else '-failed'}"
    folder.mkdir(parents=True)
    name = name or f"{row.get('exp-name', 'point')}_{pid}"
    record = {
        "lane": "gb300-nv",
        "point-id": pid,
        "point": row,
        "route": "default",
        "srt-slurm": {
            "pin": "v1.0.50",
            "repository": "https://github.com/NVIDIA/srt-slurm",
            "ref": "v1.0.50",
            "commit": SRT_COMMIT,
        },
        "job-id": "1234" if exit_code == 0 else None,
        "terminal-state": "COMPLETED" if exit_code == 0 else None,
        "exit-code": exit_code,
        "result-name": name,
        "results": [],
        "message": message,
        "eval": launched_eval(row),
        "run-id": run_id,
        "run-attempt": run_attempt if run_id else None,
    }
    if row.get("result-key"):  # a planned point: infx launch records its key
        record["result-key"] = row["result-key"]
    for file_name, content in files.items():
        (folder / file_name.replace("{name}", name)).write_text(json.dumps(content))
        record["results"].append(file_name.replace("{name}", name))
    if record["eval"] and eval_results and exit_code == 0:
        eval_stage_output(row, folder / "eval")
        record["results"] += sorted(f"eval/{p.name}" for p in (folder / "eval").iterdir())
    (folder / f"{name}_launch.json").write_text(json.dumps(record))
    return folder


def agentic_for(row: dict, conc: int, **changes) -> dict:
    """The AgentX aggregate fixture with the point's own topology and concurrency (as the job
    that ran the point would have written it)."""
    from infx.results.rows import point_parallelism

    data = agentic(**changes)
    data.update(point_parallelism(row))
    data["conc"] = conc
    return data
