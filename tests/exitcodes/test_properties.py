"""Property-based: every command over hostile input ends in exit 0, 1 or 2, prints no traceback
and no internal error, and does not hang.

Each property runs twice: with CI's example counts in the default run, and with many more
under the `nightly` marker (`python3 -m pytest -m nightly tests/exitcodes`); any run
whose `-m` does not name `nightly` leaves them out (tests/conftest.py). Commands run in-process
through infx's real entry point.
"""

from __future__ import annotations

import functools
import json
import os
import re
import subprocess
from dataclasses import dataclass
from pathlib import Path

import click
import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from infx.cli import COMMANDS, cli
from testing.cli import REPO, appended_entry, bundled_repository, run_infx
from testing.hostile import (
    ARGV_TEXT,
    ODD_PLACEMENTS,
    OddFiles,
    faults_by_request,
    hostile_archive,
    json_text,
    place_odd,
    result_json_text,
    yaml_text,
)
from testing.launchkit import git

from .conftest import fill

NIGHTLY_FACTOR = 20  # nightly runs this many times CI's examples
CI_EXAMPLES: dict[str, int] = {}  # property -> CI's example count (README.md states the total)
CHANGELOG = "perf-changelog.yaml"


def properties(ci_examples: int):
    """Register ``check(fixtures..., data)`` as two tests: CI's (``ci_examples``, the same
    examples on every run, so a landing never depends on the draw) and the nightly one
    (NIGHTLY_FACTOR times as many, freshly drawn each time)."""
    common = dict(
        deadline=None,
        suppress_health_check=[
            HealthCheck.too_slow,
            HealthCheck.function_scoped_fixture,
            HealthCheck.data_too_large,
            HealthCheck.large_base_example,
        ],
    )

    def decorate(check):
        CI_EXAMPLES[check.__name__] = ci_examples

        def variant(examples: int, derandomize: bool):
            @functools.wraps(check)
            def test(*args, **kwargs):
                return check(*args, **kwargs)

            return settings(max_examples=examples, derandomize=derandomize, **common)(given(data=st.data())(test))

        return variant(ci_examples, True), pytest.mark.nightly(variant(ci_examples * NIGHTLY_FACTOR, False))

    return decorate


def assert_contract(done, argv) -> None:
    problem = done.problem()
    assert problem is None, f"infx {' '.join(a[:80] for a in argv)}: {problem}\n{done.stderr[-3000:]}"


@pytest.fixture(scope="module")
def repo(tmp_path_factory) -> Path:
    return bundled_repository(tmp_path_factory.mktemp("properties"))


@pytest.fixture(scope="module")
def odd(tmp_path_factory) -> OddFiles:
    """Odd paths, and where root may mount them, paths on a read-only and on a full file system
    (a read-only mount binds root too; elsewhere test_known_causes drops the privilege instead)."""
    files = OddFiles(tmp_path_factory.mktemp("odd"))
    mounts = []
    try:
        for name, options in (("read-only", "ro,size=1m"), ("full", "size=64k")):
            folder = files.folder / name
            folder.mkdir()
            if (
                subprocess.run(
                    ["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(folder)], capture_output=True
                ).returncode
                == 0
            ):
                mounts.append(folder)
                if name == "full":
                    (folder / "existing.json").write_text("{}")
                    fill(folder)
                files.paths += [str(folder / "new.json"), str(folder / "existing.json"), str(folder / "new-folder")]
        yield files
    finally:
        for folder in mounts:
            subprocess.run(["umount", "-l", str(folder)], capture_output=True)


@pytest.fixture(scope="module")
def rows(repo) -> list[dict]:
    done = run_infx(["matrix", "--config", "configs/nvidia-master.yaml"], repo)
    assert done.code == 0, done.stderr
    return json.loads(done.stdout)


MASTER = yaml.safe_load((REPO / "configs" / "nvidia-master.yaml").read_text())
ENTRY_KEY = next(iter(MASTER))
ONE_ENTRY = {ENTRY_KEY: MASTER[ENTRY_KEY]}
BASE_CHANGELOG = (REPO / CHANGELOG).read_bytes()
APPENDED = yaml.safe_load(appended_entry().decode())


# --- configs: config validate and matrix -------------------------------------------------


def _config_case(repo: Path, text: str) -> str:
    """A master config of ``text``; removed by the next case (and the `clean` fixture)."""
    (repo / "configs" / "hostile-master.yaml").write_text(text, encoding="utf-8", errors="surrogatepass")
    return "configs/hostile-master.yaml"


@pytest.fixture(autouse=True)
def clean(repo):
    yield
    (repo / "configs" / "hostile-master.yaml").unlink(missing_ok=True)
    __import__("shutil").rmtree(repo / "hostile-points", ignore_errors=True)


def _config_validate(repo, data):
    text, fmt = data.draw(yaml_text(ONE_ENTRY)), data.draw(st.sampled_from(["text", "json", "github"]))
    argv = ["config", "validate", _config_case(repo, text), "--format", fmt]
    assert_contract(run_infx(argv, repo), argv)


test_config_validate, test_config_validate_nightly = properties(150)(_config_validate)


def _matrix(repo, odd, data):
    text, fmt = data.draw(yaml_text(ONE_ENTRY)), data.draw(st.sampled_from(["json", "table", "github"]))
    argv = ["matrix", "--config", _config_case(repo, text), "--format", fmt]
    env = {}
    if fmt == "github":  # the files GitHub names, as odd as the runner makes them
        paths = st.one_of(odd.strategy(), st.just(str(repo / "outputs")))
        env = {
            "GITHUB_OUTPUT": data.draw(paths),
            "GITHUB_STEP_SUMMARY": data.draw(paths),
            "RUNNER_TEMP": data.draw(paths),
        }
    assert_contract(run_infx(argv, repo, env=env), argv)


test_matrix, test_matrix_nightly = properties(60)(_matrix)


def _config_side_files(repo, odd, data):
    which = data.draw(st.sampled_from(["--runners", "--components", "--config"]))
    path = data.draw(st.one_of(odd.strategy(), st.just("configs/hostile-side.yaml")))
    if path == "configs/hostile-side.yaml":
        source = {
            "--runners": REPO / "configs" / "runners.yaml",
            "--components": REPO / "infx" / "config" / "components.yaml",
            "--config": REPO / "configs" / "nvidia-master.yaml",
        }[which]  # components: the shipped policy
        document = yaml.safe_load(source.read_text())
        (repo / path).write_text(data.draw(yaml_text(document)), encoding="utf-8", errors="surrogatepass")
    command = data.draw(st.sampled_from([["config", "validate"], ["matrix"]]))
    argv = [*command, which, path] if which != "--config" or command == ["matrix"] else [*command, path]
    assert_contract(run_infx(argv, repo), argv)


test_config_side_files, test_config_side_files_nightly = properties(60)(_config_side_files)


# --- the changelog: validate, fix, plan --------------------------------------------------


def _entry_text(data) -> bytes:
    kind = data.draw(st.sampled_from(["yaml", "bytes"]))
    if kind == "bytes":
        return data.draw(
            st.sampled_from(
                [
                    b"\t- x",
                    b"\r\n- a\r\n",
                    b"\x00",
                    b"\xff\xfe",
                    b"- config-keys: !!int ''\n",
                    b"- pr-link: XXX\n" * 3,
                    b"\n\n\n",
                    b"- " + b"[" * 5000,
                ]
            )
        )
    return ("\n" + data.draw(yaml_text([APPENDED[0]]))).encode("utf-8", errors="surrogatepass")


def _head_commit(repo: Path, content: bytes) -> str:
    blob = (
        subprocess.run(
            ["git", "-C", str(repo), "hash-object", "-w", "--stdin"], input=content, capture_output=True, check=True
        )
        .stdout.decode()
        .strip()
    )
    index = repo / ".git" / "hostile-index"
    env = {**os.environ, "GIT_INDEX_FILE": str(index)}
    subprocess.run(["git", "-C", str(repo), "read-tree", "origin/main"], env=env, check=True, capture_output=True)
    subprocess.run(
        ["git", "-C", str(repo), "update-index", "--add", "--cacheinfo", f"100644,{blob},{CHANGELOG}"],
        env=env,
        check=True,
    )
    tree = subprocess.run(
        ["git", "-C", str(repo), "write-tree"], env=env, capture_output=True, check=True, text=True
    ).stdout.strip()
    return git("commit-tree", tree, "-p", "origin/main", "-m", "hostile", cwd=repo)


def _changelog_validate(repo, data):
    head = _head_commit(repo, BASE_CHANGELOG + _entry_text(data))
    argv = [
        "changelog",
        "validate",
        "--base-ref",
        "origin/main",
        "--head-ref",
        head,
        "--repo",
        "acme/bench",
        "--format",
        data.draw(st.sampled_from(["text", "json", "github"])),
    ]
    argv += data.draw(st.sampled_from([[], ["--pr-number", "7"], ["--trim-conc"], ["--evals-only", "--all-evals"]]))
    assert_contract(run_infx(argv, repo), argv)


test_changelog_validate, test_changelog_validate_nightly = properties(25)(_changelog_validate)


def _changelog_fix_and_plan(repo, data):
    changelog = repo / CHANGELOG
    changelog.write_bytes(BASE_CHANGELOG + _entry_text(data))
    argv = [
        "changelog",
        "fix",
        "--pr-number",
        "7",
        "--repo",
        "acme/bench",
        "--format",
        data.draw(st.sampled_from(["text", "json"])),
    ]
    before = changelog.read_bytes()
    done = run_infx(argv, repo)
    assert_contract(done, argv)
    after = changelog.read_bytes()
    if after != before:  # written only when the result passes the gate it was fixed for
        assert done.code == 0, done.stderr
        from infx.changelog.diff import diff_changelog

        remaining = diff_changelog(BASE_CHANGELOG, after, file=CHANGELOG, slug="acme/bench", pr_number=7).diagnostics
        assert not [d for d in remaining if d.is_error and d.rule != "changelog-unchanged"], remaining
    assert not [p.name for p in repo.iterdir() if p.name.endswith(".tmp")]
    plan = ["plan", "--format", data.draw(st.sampled_from(["table", "json"]))]
    assert_contract(run_infx(plan, repo), plan)


test_changelog_fix_and_plan, test_changelog_fix_and_plan_nightly = properties(25)(_changelog_fix_and_plan)


# --- point JSON and lane profiles: launch --dry-run and github point-id ----------------------


def _launch_dry_run(repo, rows, data):
    gb300 = [row for row in rows if row["runner"] == "gb300-nv"]
    text = data.draw(json_text(data.draw(st.sampled_from(gb300))))
    where = data.draw(st.sampled_from(["file", "env"]))
    point = repo / "hostile-point.json"
    point.write_text(text, encoding="utf-8", errors="surrogatepass")
    argv = ["launch", "--lane", "gb300-nv", "--dry-run", "--format", data.draw(st.sampled_from(["text", "json"]))]
    # An environment variable is bytes: no NUL, and text that is not UTF-8 arrives as surrogate escapes.
    env = (
        {"POINT_JSON": text.replace("\x00", "").encode("utf-8", "surrogatepass").decode("utf-8", "surrogateescape")}
        if where == "env"
        else {}
    )
    argv += [] if where == "env" else ["--point", str(point)]
    assert_contract(run_infx(argv, repo, env=env), argv)
    identify = ["github", "point-id", "--point", str(point)]
    assert_contract(run_infx(identify, repo), identify)


test_launch_dry_run, test_launch_dry_run_nightly = properties(150)(_launch_dry_run)


LANE = yaml.safe_load((REPO / "runners" / "gb300-nv.yaml").read_text())


def _lane_profile(repo, rows, data):
    """A hostile lane profile (`--lane PATH`) with a real point."""
    profile = repo / "hostile-lane.yaml"
    profile.write_text(data.draw(yaml_text(LANE)), encoding="utf-8", errors="surrogatepass")
    point = repo / "valid-point.json"
    point.write_text(json.dumps(data.draw(st.sampled_from([row for row in rows if row["runner"] == "gb300-nv"]))))
    argv = [
        "launch",
        "--lane",
        str(profile),
        "--point",
        str(point),
        "--dry-run",
        "--format",
        data.draw(st.sampled_from(["text", "json"])),
    ]
    assert_contract(run_infx(argv, repo), argv)


test_lane_profile, test_lane_profile_nightly = properties(60)(_lane_profile)


# --- plan JSON: github select-points and github report -----------------------------------


def _plan_text(data, rows) -> str:
    shape = data.draw(st.sampled_from(["rows", "buckets"]))
    sample = data.draw(st.lists(st.sampled_from(rows), min_size=1, max_size=4))
    document = sample if shape == "rows" else {"buckets": {"multi-node/gb300-nv": sample}, "point-count": len(sample)}
    return data.draw(json_text(document))


def _select_points(repo, rows, odd, data):
    from infx.points import point_id

    plan = repo / "hostile-plan.json"
    plan.write_text(_plan_text(data, rows), encoding="utf-8", errors="surrogatepass")
    known = st.sampled_from([point_id(r) for r in rows])
    ids = data.draw(
        st.one_of(
            st.lists(known, min_size=1, max_size=3), st.lists(st.one_of(known, ARGV_TEXT), min_size=1, max_size=3)
        )
    )
    argv = ["github", "select-points", "--plan", str(plan), "--points", " ".join(ids)]
    fmt = data.draw(st.sampled_from(["json", "github"]))
    env = {}
    if fmt == "github":
        argv += [
            "--format",
            "github",
            "--shard-dir",
            data.draw(st.one_of(odd.strategy(), st.just(str(repo / "shards")))),
        ]
        env = {"GITHUB_OUTPUT": data.draw(st.one_of(odd.strategy(), st.just(str(repo / "outputs"))))}
    if data.draw(st.booleans()):
        argv += ["--output", data.draw(st.one_of(odd.strategy(), st.just(str(repo / "selected.json"))))]
    assert_contract(run_infx(argv, repo, env=env), argv)


test_select_points, test_select_points_nightly = properties(100)(_select_points)


@pytest.fixture(scope="module")
def local_github():
    from testing.github_server import LocalGitHub

    with LocalGitHub() as server:
        server.state.add_pull(7)
        yield server


def _report(repo, rows, local_github, data):
    plan = repo / "hostile-plan.json"
    plan.write_text(_plan_text(data, rows), encoding="utf-8", errors="surrogatepass")
    argv = ["github", "report", "--pr", "7", "--plan", str(plan), "--repo", "acme/bench"]
    env = {"GITHUB_TOKEN": "test-token", "GITHUB_API_URL": local_github.url, "INFX_GITHUB_MAX_WAIT": "0"}
    assert_contract(run_infx(argv, repo, env=env), argv)


test_report, test_report_nightly = properties(30)(_report)


# --- a sweep's results: collect, compare, plot and reuse's judge ------------------------------------

RESULT_DATA = REPO / "tests" / "data" / "results"
SA_BENCH = json.loads((RESULT_DATA / "sa-bench" / "results_concurrency_4_gpus_24_ctx_8_gen_16.json").read_text())
AGGREGATE = json.loads((RESULT_DATA / "agentic" / "aggregate.json").read_text())
AIPERF = json.loads((RESULT_DATA / "agentic" / "profile_export_aiperf.json").read_text())
RESULT_KEY = "e" * 64


def _point_artifact(folder: Path, row: dict) -> dict[str, tuple[Path, dict]]:
    """A valid point artifact of a bundled row, as infx launch leaves it: {part: (path, document)}."""
    from infx.points import point_id
    from infx.results.rows import point_parallelism

    pid, conc = point_id(row), row["conc"][0]
    name = f"{row.get('exp-name', 'point')}_{pid}"
    folder.mkdir(parents=True)
    if row.get("scenario-type") == "agentic-coding":
        result = (folder / f"{name}_conc{conc}.json", {**AGGREGATE, **point_parallelism(row), "conc": conc})
    else:
        gpus = "gpus_24_ctx_8_gen_16" if "prefill" in row else f"gpus_{row.get('tp', 1)}"
        result = (
            folder / f"{name}_sa-bench_isl_{row.get('isl')}_osl_{row.get('osl')}_conc{conc}_{gpus}.json",
            {**SA_BENCH, "max_concurrency": conc},
        )
    record = {
        "lane": "gb300-nv",
        "point-id": pid,
        "point": row,
        "srt-slurm": {"commit": "e4019633" + "0" * 32},
        "result-key": RESULT_KEY,
        "job-id": "77",
        "terminal-state": "COMPLETED",
        "exit-code": 0,
        "result-name": name,
        "results": [result[0].name],
        "message": "job 77 completed",
        "run-id": 4242,
        "run-attempt": 1,
        "timings": {"finished": "2026-11-30T10:00:00+00:00"},
    }
    parts = {"record": (folder / f"{name}_launch.json", record), "result": result}
    if row.get("scenario-type") == "agentic-coding":
        (folder / "LOGS" / f"conc{conc}").mkdir(parents=True)
        parts["aiperf"] = (folder / "LOGS" / f"conc{conc}" / "profile_export_aiperf.json", AIPERF)
    for path, document in parts.values():
        path.write_text(json.dumps(document))
    return parts


def _results_pipeline(repo, rows, odd, data):
    """Two points of a sweep, one with a hostile result file, launch record or aiperf aggregate
    (text, numbers JSON does not have, a duplicate key, or a FIFO, a link to a device or host
    file, a folder, a sparse file of a GiB): collect writes results.json with both verdicts,
    reuse's judge agrees with collect, compare and plot run on what is valid."""
    import shutil

    from infx.results.artifact import PointArtifact
    from infx.workflows.reuse import judge

    root = repo / "hostile-points"
    shutil.rmtree(root, ignore_errors=True)
    chosen = [
        dict(row, conc=[concurrencies_of(row)[0]])
        for row in data.draw(st.lists(st.sampled_from(rows), min_size=2, max_size=2))
    ]
    hostile = _point_artifact(root / "downloaded" / "point-hostile", chosen[0])
    _point_artifact(root / "downloaded" / "point-good", chosen[1])
    part = data.draw(st.sampled_from(sorted(hostile)))
    path, document = hostile[part]
    if data.draw(st.integers(0, 3)) == 0:
        place_odd(path, data.draw(st.sampled_from(ODD_PLACEMENTS)), repo / "perf-changelog.yaml")
    else:
        path.write_text(data.draw(result_json_text(document)), encoding="utf-8", errors="surrogatepass")
    results = root / "results.json"
    argv = ["results", "collect", str(root / "downloaded"), "--output", str(results)] + data.draw(
        st.sampled_from([[], ["--exit-zero"]])
    )
    assert_contract(run_infx(argv, repo), argv)
    verdicts = {p["artifact"]: p for p in json.loads(results.read_text())["points"]}  # always written, every verdict
    assert sorted(verdicts) == ["point-good", "point-hostile"]
    for name, verdict in verdicts.items():
        artifact = PointArtifact.read(root / "downloaded" / name)
        keyed = artifact.record is not None and artifact.record.result_key == RESULT_KEY
        judged = judge(root / "downloaded" / name, RESULT_KEY, chosen[0])
        assert (judged is None) == (verdict["status"] == "ok" and keyed), (name, verdict, judged)
    for argv in (
        [
            "results",
            "compare",
            "--head",
            str(results),
            "--baseline",
            str(results),
            "--format",
            "json",
            "--fail-on-regression",
        ],
        ["results", "compare", "--head", str(root / "downloaded"), "--baseline", str(results)],
        ["results", "plot", str(results), "--baseline", str(root / "downloaded"), "--output", str(root / "charts")],
    ):
        done = run_infx(argv, repo)
        assert_contract(done, argv)
        assert done.code == 0, (argv, done.stderr[-2000:])


def concurrencies_of(row: dict) -> list:
    from infx.points import concurrencies

    return concurrencies(row)


test_results_pipeline, test_results_pipeline_nightly = properties(60)(_results_pipeline)


def _results_files(repo, rows, odd, data):
    """A hostile results file (a mutated real one, or an odd path) given to compare and plot."""
    import shutil

    root = repo / "hostile-points"
    shutil.rmtree(root, ignore_errors=True)
    _point_artifact(root / "downloaded" / "point-good", dict(rows[0], conc=[concurrencies_of(rows[0])[0]]))
    real = root / "real.json"
    done = run_infx(["results", "collect", str(root / "downloaded"), "--output", str(real)], repo)
    assert done.code == 0, done.stderr
    hostile = root / "hostile.json"
    if data.draw(st.integers(0, 3)) == 0:
        place_odd(hostile, data.draw(st.sampled_from(ODD_PLACEMENTS)), real)
    else:
        hostile.write_text(
            data.draw(result_json_text(json.loads(real.read_text()))), encoding="utf-8", errors="surrogatepass"
        )
    for argv in (
        [
            "results",
            "compare",
            "--head",
            str(real),
            "--baseline",
            str(hostile),
            "--format",
            data.draw(st.sampled_from(["json", "markdown"])),
        ],
        ["results", "compare", "--head", str(hostile), "--baseline", str(real)],
        ["results", "plot", str(hostile), "--output", str(root / "charts")],
    ):
        assert_contract(run_infx(argv, repo), argv)


test_results_files, test_results_files_nightly = properties(40)(_results_files)


# --- GitHub on a bad day: hostile answers and archives for reuse, report, rerun and the baseline --------------

GITHUB_ENV = {"GITHUB_TOKEN": "ghs_hostile", "INFX_GITHUB_MAX_WAIT": "2"}  # any wait past 2 s ends the command


@dataclass(repr=False)  # a failing example prints the drawn faults, not the whole world
class World:
    """A local GitHub holding what the commands look for, and how to put it back after an example."""

    server: object
    rows: list[dict]
    blobs: dict
    files: dict  # artifact id -> the files of its real archive
    folder: Path

    def reset(self) -> None:
        state = self.server.state
        with state.lock:
            state.requests.clear()
            state.mutations.clear()
            state.faults.clear()
            state.blobs.clear()
            state.blobs.update(self.blobs)
            state.comments[7] = []
            state.dispatches.clear()

    def prepare(self, data, artifact_ids: list[int]) -> None:
        """Hostile archives for some of ``artifact_ids`` and hostile answers to some requests."""
        self.reset()
        for aid in data.draw(st.lists(st.sampled_from(artifact_ids), max_size=2, unique=True)):
            self.server.state.blobs[aid] = data.draw(hostile_archive(self.files[aid]))
        self.server.state.mutations.update(data.draw(faults_by_request()))

    def env(self) -> dict:
        return {**GITHUB_ENV, "GITHUB_API_URL": self.server.url, "RUNNER_TEMP": str(self.folder)}


@pytest.fixture(scope="module")
def world(repo, rows, tmp_path_factory):
    """Main's sweeps storing valid results of three gb300 points under their real keys (the
    reuse lookup's candidates), a sweep run with its plan and point artifacts (report, rerun),
    and a successful main sweep with `sweep-results` (the baseline lookup)."""
    from infx.launch.plan import keys_for_rows
    from infx.workflows.baseline import RESULTS_ARTIFACT
    from infx.workflows.rerun import artifact_name
    from infx.workflows.reuse import lane_resolver, result_artifact_name
    from testing.github_helpers import result_artifact_files
    from testing.github_server import LocalGitHub
    from testing.ladder import ladder_results

    folder = tmp_path_factory.mktemp("github-world")
    gb300 = [row for row in rows if row["runner"] == "gb300-nv"][:3]
    keys = keys_for_rows(gb300, repo, lane_resolver(repo))
    with LocalGitHub() as server:
        state = server.state
        state.on_main.add("1" * 40)
        state.add_pull(7)
        files = {}
        for index, row in enumerate(gb300):
            key = keys[index][0]
            assert key, keys[index]
            for run_id in (100 + index, 200 + index):  # two candidates per key
                state.add_run(run_id, head_sha="1" * 40)
                artifact = result_artifact_files(row, key, run_id=run_id)
                files[state.add_artifact(run_id, result_artifact_name(key), files=artifact)["id"]] = artifact
        state.add_run(4242, head_branch="main")
        plan = {"plan.json": json.dumps(gb300)}
        files[state.add_artifact(4242, "sweep-plan", files=plan)["id"]] = plan
        state.add_artifact(4242, artifact_name(gb300[0]))
        state.add_artifact(4242, artifact_name(gb300[1], succeeded=False))
        state.runs[4242]["conclusion"] = "success"
        head = Path(ladder_results(folder, "head"))
        baseline = {"results.json": Path(ladder_results(folder, "baseline")).read_text()}
        files[state.add_artifact(4242, RESULTS_ARTIFACT, files=baseline)["id"]] = baseline
        plan_path = folder / "plan.json"
        plan_path.write_text(json.dumps(gb300))
        world = World(server, gb300, dict(state.blobs), files, folder)
        world.plan_path, world.head = plan_path, head
        yield world


def _ids(world: World, *names: str) -> list[int]:
    return [
        a["id"]
        for artifacts in world.server.state.artifacts.values()
        for a in artifacts
        if any(a["name"].startswith(n) for n in names) and a["id"] in world.files
    ]


def test_the_github_world_reaches_every_call_when_nothing_is_hostile(repo, world):
    """Without a hostile answer each command goes all the way: so the properties below reach
    the listing, trust, downloads and extraction, the comment, the dispatch and the baseline."""
    world.reset()
    done = run_infx(
        ["plan", "--rows", str(world.plan_path), "--reuse-github", "--repo", "acme/bench", "--format", "json"],
        repo,
        env=world.env(),
    )
    assert done.code == 0 and len(json.loads(done.stdout)["reuse"]["reused"]) == len(world.rows), done.stderr
    assert world.server.state.count("GET", r"/blob-storage/.*") == len(world.rows)
    report = run_infx(
        ["github", "report", "--pr", "7", "--plan", str(world.plan_path), "--run-id", "4242", "--repo", "acme/bench"],
        repo,
        env=world.env(),
    )
    assert report.code == 0 and len(world.server.state.comments[7]) == 1, report.stderr
    rerun = run_infx(["github", "rerun-failed", "--run-id", "4242", "--repo", "acme/bench"], repo, env=world.env())
    assert rerun.code == 0 and len(world.server.state.dispatches) == 1, rerun.stderr
    compare = run_infx(
        ["results", "compare", "--head", str(world.head), "--repo", "acme/bench", "--format", "json"],
        repo,
        env=world.env(),
    )
    assert compare.code == 0 and json.loads(compare.stdout)["baseline"]["runs"][0]["run-id"] == 4242, compare.stderr


def _plan_reuse_github(repo, world, data):
    """`infx plan --reuse-github` always produces a plan: whatever GitHub answers, whatever an
    archive holds, the points whose stored result cannot be had are dispatched."""
    world.prepare(data, _ids(world, "point-"))
    argv = ["plan", "--rows", str(world.plan_path), "--reuse-github", "--repo", "acme/bench", "--format", "json"]
    done = run_infx(argv, repo, env=world.env())
    assert_contract(done, argv)
    assert done.code == 0, done.stderr[-2000:]
    plan = json.loads(done.stdout)
    assert len(plan["reuse"]["reused"]) + plan["point-count"] == len(world.rows)


test_plan_reuse_github, test_plan_reuse_github_nightly = properties(20)(_plan_reuse_github)


def _report_run(repo, world, data):
    world.prepare(data, _ids(world, "point-"))
    argv = ["github", "report", "--pr", "7", "--plan", str(world.plan_path), "--run-id", "4242", "--repo", "acme/bench"]
    assert_contract(run_infx(argv, repo, env=world.env()), argv)


test_report_run, test_report_run_nightly = properties(15)(_report_run)


def _rerun_failed(repo, world, data):
    world.prepare(data, _ids(world, "sweep-plan"))
    argv = ["github", "rerun-failed", "--run-id", "4242", "--repo", "acme/bench"]
    assert_contract(run_infx(argv, repo, env=world.env()), argv)


test_rerun_failed, test_rerun_failed_nightly = properties(15)(_rerun_failed)


def _baseline_lookup(repo, world, data):
    world.prepare(data, _ids(world, "sweep-results"))
    argv = ["results", "compare", "--head", str(world.head), "--repo", "acme/bench", "--format", "json"]
    assert_contract(run_infx(argv, repo, env=world.env()), argv)


test_baseline_lookup, test_baseline_lookup_nightly = properties(15)(_baseline_lookup)


# --- every option of every command, by its click type ---------------------------------------

# Commands that reach only files (a real launch, lane check, and the GitHub verbs other than
# the plan readers need a cluster or the API; their file-reading options are covered above).
OFFLINE = [
    ("config", "validate"),
    ("matrix",),
    ("changelog", "validate"),
    ("changelog", "fix"),
    ("plan",),
    ("launch",),
    ("github", "select-points"),
    ("github", "point-id"),
    ("results", "check-evals"),
]


def _command(path: tuple[str, ...]) -> click.Command:
    command: click.Command = cli
    ctx = click.Context(cli)
    for name in path:
        command = command.get_command(ctx, name)
    return command


def _value(param: click.Parameter, odd: OddFiles):
    kind = param.type
    if isinstance(kind, click.Choice):
        return st.one_of(st.sampled_from(list(kind.choices)), ARGV_TEXT)
    if isinstance(kind, (click.types.IntParamType, click.types.FloatParamType)):
        return st.one_of(
            st.integers(-(2**70), 2**70).map(str),
            st.sampled_from(["", "0", "-1", "1e3", "nan", "inf", "0x10", "٣", "9" * 5000, " 4", "4 "]),
            ARGV_TEXT,
        )
    if isinstance(kind, click.Path) or kind.name in ("file", "path", "directory"):
        return st.one_of(odd.strategy(), ARGV_TEXT)
    return ARGV_TEXT


def _every_option(repo, odd, data):
    path = data.draw(st.sampled_from(OFFLINE))
    command = _command(path)
    argv = list(path)
    for param in command.params:
        if not data.draw(st.integers(0, 2)) == 0 and not param.required:
            continue
        if isinstance(param, click.Argument):
            argv += [data.draw(_value(param, odd)) for _ in range(data.draw(st.integers(0, 2)))]
        elif param.is_flag:
            argv.append(param.opts[0])
        else:
            argv += [param.opts[0], data.draw(_value(param, odd))]
    if path == ("launch",):
        argv.append("--dry-run")  # a real launch would submit to Slurm
    argv = data.draw(st.sampled_from([[], ["--write-through-symlinks"]])) + argv  # and the root's own option
    assert_contract(run_infx(argv, repo), argv)


test_every_option, test_every_option_nightly = properties(300)(_every_option)


def test_the_offline_list_names_real_commands():
    assert {path[0] for path in OFFLINE} <= set(COMMANDS)
    for path in OFFLINE:
        assert isinstance(_command(path), click.Command)


def test_the_readme_states_how_many_hostile_inputs_ci_and_nightly_run():
    text = " ".join((REPO / "README.md").read_text().split())
    stated = re.search(r"run (\d+) hostile inputs there; .*? runs (\d+) times as many", text)
    assert stated, "README.md no longer says how many hostile inputs the exit-code tests run"
    assert (int(stated[1]), int(stated[2])) == (sum(CI_EXAMPLES.values()), NIGHTLY_FACTOR)
