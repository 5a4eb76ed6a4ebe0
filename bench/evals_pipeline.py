"""Collect + `infx results check-evals` of 2,000 eval rows: whole processes.

Target (issue 20): under 2 s wall for the two together on 2 cores, interpreter start-ups
included. The sweep is generated from the bundled configs' eval rows (`infx matrix
--all-evals`): 1,000 points each with a single-concurrency eval folder (meta_env.json and the
real lm-eval result of tests/data/results/evals/flat/, re-run once: two result files, one row)
and 250 points with a batched eval of four concurrencies (four rows, one of them re-run), each
folder the `eval/` of an eval-only point's artifact as run-point.yml uploads it (its launch
record says the eval it ran). Scores vary per point so some fall below their floor, as in a real
sweep; check-evals then exits 1, which is its verdict, not a failure of the benchmark.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.harness import REPO  # noqa: E402
from bench.harness import timed_process as run

TARGET = 2.0
FLAT_POINTS, BATCHED_POINTS, BATCH = 1_000, 250, (16, 32, 64, 128)
EVALS = REPO / "tests" / "data" / "results" / "evals"


def eval_rows() -> list[dict]:
    done = subprocess.run(
        [sys.executable, "-m", "infx", "matrix", "--all-evals", "--format", "json"],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=True,
        env={"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin"},
    )
    return [row for row in json.loads(done.stdout) if row.get("run-eval")]


def _result(template: dict, strict: float, date: float) -> dict:
    data = json.loads(json.dumps(template))
    data["date"] = date
    task = data["results"]["gsm8k"]
    task["exact_match,strict-match"], task["exact_match,flexible-extract"] = strict, min(1.0, strict + 0.03)
    return data


def generate(root: Path, rows: list[dict]) -> int:
    """The point artifacts under ``root``; returns the number of eval rows they hold."""
    from infx.evalsuite import PointEval
    from infx.points import point_id

    meta = json.loads((EVALS / "flat" / "meta_env.json").read_text())
    template = json.loads(sorted((EVALS / "flat").glob("results_*.json"))[-1].read_text())
    expected = 0
    for n in range(FLAT_POINTS + BATCHED_POINTS):
        batched = n >= FLAT_POINTS
        concs = [c + n for c in BATCH] if batched else [8 + n]  # unique: the point id holds them
        row = {
            **rows[n % len(rows)],
            "conc": concs,
            "eval-only": True,
            **({"eval-all-concs": True} if batched else {"eval-conc": concs[0]}),
        }
        pid = point_id(row)
        folder = root / f"point-{pid}"
        (folder / "eval").mkdir(parents=True)
        name = f"{row.get('exp-name', 'point')}_{pid}"
        record = {
            "lane": "gb300-nv",
            "point-id": pid,
            "point": row,
            "srt-slurm": {"commit": "e4019633" + "0" * 32},
            "job-id": str(1000 + n),
            "terminal-state": "COMPLETED",
            "exit-code": 0,
            "result-name": name,
            "results": [],
            "message": "",
            "run-id": 77,
            "run-attempt": 1,
            "eval": PointEval.of_point(row).to_json(),
        }
        (folder / f"{name}_launch.json").write_text(json.dumps(record))
        strict = 0.88 + (n % 7) / 100  # 0.88 … 0.94: some below the dsv4 floor 0.91
        if batched:
            batch = {"eval_concs": concs, "completed_eval_concs": concs, "failed_eval_concs": []}
            (folder / "eval" / "meta_env.json").write_text(json.dumps({**meta, "conc": concs[0], **batch}))
            for index, conc in enumerate(concs):
                stamp = f"2026-12-01T10-{n % 60:02d}-{index:02d}.000000"
                (folder / "eval" / f"results_{stamp}_conc{conc}.json").write_text(
                    json.dumps(_result(template, strict, 1.8e9 + index))
                )
            (folder / "eval" / f"results_2026-12-01T09-00-00.000000_conc{concs[0]}.json").write_text(
                json.dumps(_result(template, 0.5, 1.7e9))
            )
            expected += len(concs)
        else:
            (folder / "eval" / "meta_env.json").write_text(json.dumps({**meta, "conc": concs[0]}))
            (folder / "eval" / "results_2026-12-01T09-00-00.000000.json").write_text(
                json.dumps(_result(template, 0.5, 1.7e9))
            )
            (folder / "eval" / "results_2026-12-01T10-00-00.000000.json").write_text(
                json.dumps(_result(template, strict, 1.8e9))
            )
            expected += 1
    return expected


def main() -> None:
    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 5
    with tempfile.TemporaryDirectory() as tmp:
        root, output = Path(tmp) / "artifacts", Path(tmp) / "results.json"
        expected = generate(root, eval_rows())
        argv = ["-m", "infx", "results", "collect", str(root), "--output", str(output), "--exit-zero"]
        gate = ["-m", "infx", "results", "check-evals", str(output)]
        totals = []
        for attempt in range(runs + 1):
            walls = [run(argv), run(gate, codes=(0, 1))]
            if attempt:  # the first round warms the disk cache
                totals.append((sum(w for w, _ in walls), sum(c for _, c in walls), walls))
        collected = json.loads(output.read_text())["evals"]
        verdict = subprocess.run(
            [sys.executable, *gate, "--format", "json"],
            cwd=REPO,
            capture_output=True,
            text=True,
            env={"PYTHONPATH": str(REPO), "PATH": "/usr/bin:/bin"},
        )
        checked = json.loads(verdict.stdout)["checked"]
    if len(collected["rows"]) != expected:
        sys.exit(f"collect gave {len(collected['rows'])} eval rows, expected {expected}")
    totals.sort()
    median, cpu, walls = totals[len(totals) // 2]
    below = sum(not v["passed"] for v in checked)
    print(
        f"infx results collect + check-evals, {expected} eval rows from {len(collected['sets'])} eval folders, "
        f"{len(checked)} scores checked ({below} below their floor): median {median:.3f} s wall, {cpu:.3f} s CPU "
        f"(collect {walls[0][0]:.3f}, check-evals {walls[1][0]:.3f} s wall; {runs} runs; load average "
        f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} cores); target < {TARGET:.2f} s: "
        f"{'met' if median < TARGET else 'NOT met'}"
    )
    sys.exit(0 if median < TARGET else 1)


if __name__ == "__main__":
    main()
