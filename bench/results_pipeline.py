"""`infx results collect` + `compare` + `plot` of a generated 500-point sweep: whole processes.

Target (issue 12): under 3 s wall for the three commands together on 2 cores, interpreter
start-ups included. The sweep is generated from the bundled configs' rows (every config key
and scenario the project ships), each row repeated along a concurrency ladder until there
are 500 points, each point an artifact folder as run-point.yml uploads it: a launch record
and one result file per concurrency (sa-bench files for fixed sequence lengths, AgentX
aggregates otherwise), with throughputs and latencies that vary with concurrency. The
baseline is a second sweep of the same points, already collected (as the report job
downloads it).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.harness import REPO, timed_process  # noqa: E402

TARGET = 3.0
POINTS = 500
SA_BENCH = REPO / "tests" / "data" / "results" / "sa-bench" / "results_concurrency_4_gpus_24_ctx_8_gen_16.json"
AGGREGATE = REPO / "tests" / "data" / "results" / "agentic" / "aggregate.json"


def bundled_rows() -> list[dict]:
    done = subprocess.run(
        [sys.executable, "-m", "infx", "matrix", "--format", "json"],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=True,
        env={"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin"},
    )
    return json.loads(done.stdout)


def generate_sweep(root: Path, rows: list[dict], scale: float = 1.0) -> list[Path]:
    """POINTS artifact folders under `root`, cycling through `rows`; `scale` shifts throughput (a baseline vs a
    head)."""
    from infx.points import point_id
    from infx.results.rows import point_parallelism

    raw_fixed, raw_agentic = json.loads(SA_BENCH.read_text()), json.loads(AGGREGATE.read_text())
    folders = []
    for n in range(POINTS):
        base = rows[n % len(rows)]
        conc = 4 + n  # unique: rows of one topology share a fingerprint, so the point id needs the concurrency
        row = {**base, "conc": [conc]}
        pid = point_id(row)
        name = f"{row.get('exp-name', 'point')}_{pid}"
        folder = root / f"point-{pid}"
        folder.mkdir(parents=True)
        shape = 1.0 / (1 + conc / 64)  # interactivity falls and throughput rises with concurrency
        if row.get("scenario-type") == "agentic-coding":
            data = json.loads(json.dumps(raw_agentic)) | point_parallelism(row) | {"conc": conc}
            data["request_metrics"]["throughput"]["per_gpu"]["total_tput_tps"] = 2000 * scale * (1 - shape)
            data["request_metrics"]["latency"]["e2e_norm_intvty"]["p90"] = 60 * shape
            files = {f"{name}_conc{conc}.json": data}
        else:
            data = dict(
                raw_fixed,
                max_concurrency=conc,
                total_token_throughput=50000 * scale * (1 - shape),
                output_throughput=9000 * scale * (1 - shape),
                median_tpot_ms=4 / shape,
                mean_tpot_ms=4.2 / shape,
            )
            files = {
                f"{name}_sa-bench_isl_{row.get('isl')}_osl_{row.get('osl')}_conc{conc}_gpus_24_ctx_8_gen_16.json": data
            }
        record = {
            "lane": "gb300-nv",
            "point-id": pid,
            "point": row,
            "srt-slurm": {"commit": "e4019633" + "0" * 32},
            "job-id": str(1000 + n),
            "terminal-state": "COMPLETED",
            "exit-code": 0,
            "result-name": name,
            "results": list(files),
            "message": "",
            "run-id": 77,
            "run-attempt": 1,
        }
        for file_name, content in files.items():
            (folder / file_name).write_text(json.dumps(content))
        (folder / f"{name}_launch.json").write_text(json.dumps(record))
        folders.append(folder)
    return folders


def run(argv: list[str]) -> tuple[float, float]:
    """(wall seconds, CPU seconds) of one infx process. HOME and the cache folders pass through:
    matplotlib keeps its font cache there (a runner has one)."""
    return timed_process(["-m", "infx", *argv], keep=("HOME", "XDG_CACHE_HOME", "INFX_CACHE_DIR", "MPLCONFIGDIR"))


def main() -> None:
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 3
    rows = bundled_rows()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        generate_sweep(root / "head", rows)
        generate_sweep(root / "base", rows, scale=0.9)
        run(["results", "collect", str(root / "base"), "--output", str(root / "base.json")])
        totals = []
        for attempt in range(runs + 1):
            walls = [
                run(["results", "collect", str(root / "head"), "--output", str(root / "head.json")]),
                run(
                    [
                        "results",
                        "compare",
                        "--baseline",
                        str(root / "base.json"),
                        "--head",
                        str(root / "head.json"),
                        "--format",
                        "json",
                        "--output",
                        str(root / "comparison.json"),
                    ]
                ),
                run(
                    [
                        "results",
                        "plot",
                        str(root / "head.json"),
                        "--baseline",
                        str(root / "base.json"),
                        "--output",
                        str(root / f"charts-{attempt}"),
                    ]
                ),
            ]
            if attempt:  # the first round warms the disk cache and the compiled-schema cache
                totals.append((sum(w for w, _ in walls), sum(c for _, c in walls), walls))
        charts = len(list((root / "charts-1").glob("*.png")))
    totals.sort()
    median, cpu, walls = totals[len(totals) // 2]
    print(
        f"infx results collect + compare + plot, {POINTS} points, {charts} charts: median {median:.3f} s wall, "
        f"{cpu:.3f} s CPU (collect {walls[0][0]:.3f}, compare {walls[1][0]:.3f}, plot {walls[2][0]:.3f} s wall; "
        f"{runs} runs; load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores); "
        f"target < {TARGET:.2f} s: {'met' if median < TARGET else 'NOT met'}"
    )
    sys.exit(0 if median < TARGET else 1)


if __name__ == "__main__":
    main()
