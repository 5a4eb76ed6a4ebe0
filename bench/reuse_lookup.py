"""The reuse lookup of `infx reuse select --github` for 500 keyed points with 20 stored results
each, against the local GitHub server (tests/testing/github_server.py): the API requests it makes,
and the wall time of the whole process (interpreter start, the 500 result keys, the lookup, and
the 500 downloads, extractions and judgements).

The stored results are 20 sweeps of main (push runs), each with one valid `point-<key>` artifact
per point: 10,000 artifacts, listed newest first. Requests, with T artifacts in the repository
(here 10,000), K keys, R distinct runs and C distinct commits among the candidates tried, B
distinct pull-request branches among them (sweeps of main only) and D downloads:

    1 (the repository) + ⌈T/100⌉ (the whole artifact list; by name when ⌈T/100⌉ − 1 > K)
      + R (a run's facts) + C (main's reach of its commit) + B (merged PRs of a branch)
      + D (the API's redirect) [+ D blob-storage requests, not API requests]

The newest candidate of every key is valid, so D = K = 500 and R = C = 1: 603 API requests.
A second case makes the newest candidate of every key invalid (its launch failed), so the
next one is judged: D = 1,000, R = C = 2: 1,104 API requests.

Then a dispatch of all 1,820 points of the reference's size after a sweep of main stored each of
them once (T = 1,820): with no budget the whole lookup costs 1 + 19 + 1 + 1 + 1,820 = 1,842 API
requests, more than the 1,000 an hour all GITHUB_TOKENs of a repository share; with the setup
job's GITHUB_TOKEN the lookup stops while its reserve is left (infx/workflows/reuse.py,
budget_refusal: a tenth of the budget, and two requests per reused point a sweep of main
republishes), reuses what it reached and runs the rest.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))

from bench.harness import REPO  # noqa: E402

POINTS, STORED = 500, 20
ALL_POINTS = 1820  # the reference's points
MAIN_SHA = "1" * 40
JOB_TOKEN_PERMISSIONS = {"contents": "read", "actions": "read", "pull-requests": "read"}  # run-sweep's setup job


def keyed_rows(count: int = POINTS) -> tuple[list[dict], list[str]]:
    """``count`` distinct points of the bundled gb300 rows (each row along a concurrency ladder), with their result
    keys."""
    from bench.gb300_points import gb300_points
    from infx.launch.plan import keys_for_rows
    from infx.workflows.reuse import lane_resolver

    base = gb300_points(REPO)
    rows, keys, conc = [], [], 1
    while len(rows) < count:
        candidates = [{**row, "conc": [conc]} for row in base]
        found = keys_for_rows(candidates, REPO, lane_resolver(REPO))
        for index, row in enumerate(candidates):
            key = found[index][0]
            if key and key not in keys and len(rows) < count:
                rows.append(row)
                keys.append(key)
        conc += 1
    return rows, keys


def store(server, rows: list[dict], keys: list[str], newest_invalid: bool, stored: int = STORED) -> None:
    from infx.workflows.reuse import result_artifact_name
    from testing.github_helpers import result_artifact_files
    from testing.github_server import zip_of

    server.state.on_main.add(MAIN_SHA)
    for n in range(stored):
        run_id = 1000 + n
        server.state.add_run(run_id, head_sha=MAIN_SHA)
        failed = newest_invalid and n == stored - 1
        for row, key in zip(rows, keys):
            files = result_artifact_files(row, key, run_id=run_id, exit_code=1 if failed else 0)
            server.state.add_artifact(run_id, result_artifact_name(key), blob=zip_of(files))


def lookup(
    server, plan: Path, download: Path, token: str = "ghs_bench", points: int = POINTS
) -> tuple[float, int, int, dict]:
    """(wall seconds, API requests, blob requests, the decision) of one `infx reuse select --github`;
    every point must be reused (``points``; -1: any number)."""
    before = len(server.state.requests)
    server.state.budgets.clear()  # each run starts a fresh hour
    env = {
        "PATH": "/usr/bin:/bin",
        "PYTHONPATH": str(REPO),
        "GITHUB_TOKEN": token,
        "GITHUB_API_URL": server.url,
        "GITHUB_REPOSITORY": "acme/bench",
        "HOME": os.environ.get("HOME", "/tmp"),
    }
    start = time.perf_counter()
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "infx",
            "reuse",
            "select",
            "--plan",
            str(plan),
            "--github",
            "--download",
            str(download),
            "--format",
            "json",
        ],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
    )
    wall = time.perf_counter() - start
    if done.returncode != 0:
        sys.exit(f"infx reuse select exited {done.returncode}: {done.stderr[-2000:]}")
    decision = json.loads(done.stdout)
    if points >= 0 and len(decision["reused"]) != points:
        reasons = decision["dispatch-reasons"]
        sys.exit(f"not every point was reused: {len(reasons)} dispatched, e.g. {list(reasons.items())[:2]}")
    made = server.state.requests[before:]
    return wall, sum(r.host == "api" for r in made), sum(r.host == "blob" for r in made), decision


def main() -> None:
    from testing.github_server import LocalGitHub

    runs = int(sys.argv[1]) if len(sys.argv) > 1 else 3
    load = f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores"
    rows, keys = keyed_rows()
    with tempfile.TemporaryDirectory() as tmp:
        plan = Path(tmp) / "plan.json"
        plan.write_text(json.dumps(rows))
        for newest_invalid in (False, True):
            with LocalGitHub() as server:
                store(server, rows, keys, newest_invalid)
                results = [lookup(server, plan, Path(tmp) / f"dl-{newest_invalid}-{n}") for n in range(runs)]
            walls = [wall for wall, _, _, _ in results]
            _, api_requests, blob_requests, _ = results[0]
            case = (
                "the newest of each key invalid, the next one reused"
                if newest_invalid
                else "the newest of each key reused"
            )
            print(
                f"reuse lookup, {POINTS} keys x {STORED} stored results ({POINTS * STORED} artifacts), {case}: "
                f"{api_requests} API requests (+ {blob_requests} to blob storage); wall median "
                f"{statistics.median(walls):.2f} s (min {min(walls):.2f}, max {max(walls):.2f}, {runs} runs; {load})"
            )
        rows, keys = keyed_rows(ALL_POINTS)
        plan.write_text(json.dumps(rows))
        with LocalGitHub() as server:
            store(server, rows, keys, False, stored=1)
            server.state.hourly_limits["other"] = 10**6  # no budget: what the whole lookup costs
            wall, api_requests, blob_requests, _ = lookup(server, plan, Path(tmp) / "dl-all", points=ALL_POINTS)
            print(
                f"reuse lookup, {ALL_POINTS} keys x 1 stored result, no budget: {api_requests} API requests (+ "
                f"{blob_requests} to blob storage), every point reused; wall {wall:.2f} s ({load})"
            )
            limit = server.state.hourly_limits["GITHUB_TOKEN"]
            token = server.state.grant_token(JOB_TOKEN_PERMISSIONS)
            wall, api_requests, _, decision = lookup(server, plan, Path(tmp) / "dl-job", token=token, points=-1)
            print(
                f"reuse lookup, {ALL_POINTS} keys x 1 stored result, the setup job's GITHUB_TOKEN ({limit:,} an hour "
                f"for the repository): {api_requests} API requests, {len(decision['reused'])} points reused, "
                f"{len(decision['dispatch'])} run; wall {wall:.2f} s. {decision.get('notice', '')}"
            )


if __name__ == "__main__":
    main()
