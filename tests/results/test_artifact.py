"""The point artifact and its one validity rule (infx/results/artifact.py), its launch record
(infx/launch/record.py), and the isolation of every per-point fault.

Artifacts are built from the bundled configs' rows and the shipped result fixtures
(tests/data/results/), then broken the way real sweeps break them: a truncated upload, a FIFO
or a link to a device where a file should be, a folder, a file of gigabytes, numbers JSON does
not have, a key named twice, a string where a metric belongs, an aggregate claiming another
identity. Every consumer of the rule must agree: collect's verdict and reuse's judge.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from infx.results.artifact import PointArtifact
from infx.results.collect import collect
from infx.workflows.reuse import judge
from testing.artifacts import REPO, agentic_for, bundled_row, point_folder, sa_bench
from testing.cli import run_cli

VLLM_DISAGG = "dsv4-fp4-gb300-dynamo-vllm"
LADDER = "dsv4-fp4-gb300-dynamo-sglang-agentic-disagg"
MULTINODE_4 = "results_concurrency_4_gpus_24_ctx_8_gen_16.json"
KEY = "e" * 64


def staged(conc: int) -> str:
    return f"{{name}}_sa-bench_isl_8192_osl_1024_conc{conc}_gpus_24_ctx_8_gen_16.json"


def fixed_point(root: Path, index: int = 0) -> Path:
    row = bundled_row(VLLM_DISAGG, index, conc=[4], **{"result-key": KEY})
    return point_folder(root, row, {staged(4): sa_bench(MULTINODE_4)})


def agentx_point(root: Path, **changes) -> Path:
    row = bundled_row(LADDER, **{"result-key": KEY})
    return point_folder(root, row, {"{name}_conc120.json": agentic_for(row, 120, **changes)})


def result_of(folder: Path) -> Path:
    return next(p for p in folder.iterdir() if "_conc" in p.name and not p.name.endswith("_launch.json"))


def record_of(folder: Path) -> Path:
    return next(folder.glob("*_launch.json"))


def replace_result(folder: Path, text: str | bytes) -> None:
    path = result_of(folder)
    path.unlink()
    path.write_bytes(text if isinstance(text, bytes) else text.encode())


def edit_json(path: Path, **changes) -> None:
    data = json.loads(path.read_text())
    data.update(changes)
    path.write_text(json.dumps(data))


def _fifo(folder):
    path = result_of(folder)
    path.unlink()
    os.mkfifo(path)


def _link(target):
    def make(folder):
        path = result_of(folder)
        path.unlink()
        path.symlink_to(target)

    return make


def _folder(folder):
    path = result_of(folder)
    path.unlink()
    path.mkdir()


def _huge(folder):
    os.truncate(result_of(folder), (1 << 30) + 1)  # sparse: costs nothing, refused before a byte is read


def _record_fifo(folder):
    record_of(folder).unlink()
    os.mkfifo(folder / "x_launch.json")


def _swap_text(old: str, new: str):
    def make(folder):
        path = result_of(folder)
        text = path.read_text()
        assert old in text, old
        path.write_text(text.replace(old, new, 1))

    return make


# (id, how the fixed-sequence point is broken, the status, a part of the reason)
FIXED_CASES = [
    (
        "truncated",
        lambda f: replace_result(f, result_of(f).read_text()[:200]),
        "invalid",
        "is not strict JSON: not valid JSON",
    ),
    (
        "deep",
        lambda f: replace_result(f, '{"a":' * 100_000 + "1" + "}" * 100_000),
        "invalid",
        "nested deeper than 200 levels",
    ),
    (
        "int-past-float",
        _swap_text('"total_token_throughput": ', '"total_token_throughput": ' + "9" * 400 + ', "x": '),
        "invalid",
        "outside the 64-bit integer range at $.total_token_throughput",
    ),
    (
        "float-past-range",
        _swap_text('"output_throughput": ', '"output_throughput": 1e400, "y": '),
        "invalid",
        "Infinity (or a number beyond the float range, such as 1e400) is not a JSON number at $.output_throughput",
    ),
    (
        "nan",
        _swap_text('"median_ttft_ms": ', '"median_ttft_ms": NaN, "z": '),
        "invalid",
        "NaN is not a JSON number at $.median_ttft_ms",
    ),
    ("infinity", _swap_text('"mean_ttft_ms": ', '"mean_ttft_ms": Infinity, "z": '), "invalid", "Infinity"),
    (
        "duplicate",
        _swap_text('"completed": ', '"completed": 0, "completed": '),
        "invalid",
        'the key "completed" appears twice',
    ),
    ("fifo", _fifo, "invalid", "is a FIFO, not a regular file"),
    ("link-to-device", _link("/dev/zero"), "invalid", "is a symbolic link, not a regular file"),
    (
        "link-to-file",
        _link(REPO / "tests" / "data" / "results" / "sa-bench" / MULTINODE_4),
        "invalid",
        "is a symbolic link",
    ),
    ("folder", _folder, "invalid", "is a folder, not a regular file"),
    ("huge", _huge, "invalid", "larger than the 1,073,741,824 bytes infx reads of it"),
    ("not-utf8", lambda f: replace_result(f, b'{"completed": "\xff"}'), "invalid", "not valid UTF-8"),
    ("lone-surrogate", lambda f: replace_result(f, '{"model_id": "\\ud800"}'), "invalid", "not Unicode text"),
    (
        "string-metric",
        lambda f: edit_json(result_of(f), p99_ttft_ms="fast"),
        "invalid",
        "p99_ttft_ms is 'fast', not a number",
    ),
    (
        "string-required",
        lambda f: edit_json(result_of(f), median_tpot_ms="4.2"),
        "invalid",
        "lacks numeric median_tpot_ms",
    ),
    (
        "statistic-clash",
        lambda f: edit_json(result_of(f), conc_ms=5),
        "invalid",
        "conc_ms would replace the row's own conc",
    ),
    (
        "conc-not-its-name",
        lambda f: edit_json(result_of(f), max_concurrency=8),
        "invalid",
        "its max_concurrency is 8, but its name says concurrency 4",
    ),
    ("not-an-object", lambda f: replace_result(f, "[1, 2]"), "invalid", "is not a JSON object"),
    ("record-fifo", _record_fifo, "invalid", "x_launch.json cannot be read: it is a FIFO"),
    (
        "record-deep",
        lambda f: record_of(f).write_text("[" * 50_000 + "]" * 50_000),
        "invalid",
        "nested deeper than 200",
    ),
    ("record-type", lambda f: edit_json(record_of(f), **{"exit-code": "0"}), "invalid", 'launch record.exit-code: "0"'),
    ("record-unknown-field", lambda f: edit_json(record_of(f), evil=1), "invalid", "'evil' was unexpected"),
    (
        "record-duplicate",
        lambda f: record_of(f).write_text(record_of(f).read_text()[:-1] + ', "exit-code": 1}'),
        "invalid",
        'the key "exit-code" appears twice',
    ),
    (
        "record-failed",
        lambda f: edit_json(record_of(f), **{"exit-code": 1, "message": "job 7: FAILED\nmore"}),
        "failed",
        "job 7: FAILED",
    ),
    ("record-running", lambda f: edit_json(record_of(f), **{"exit-code": None}), "failed", "the launch did not finish"),
    ("no-record", lambda f: record_of(f).unlink(), "failed", "no launch record"),
    ("two-records", lambda f: shutil.copy(record_of(f), f / "another_launch.json"), "failed", "2 launch records"),
    ("missing-result", lambda f: result_of(f).unlink(), "invalid", "planned concurrency 4 produced no result file"),
    ("deep-logs", lambda f: os.makedirs(str(f / "LOGS") + "/d" * 300), "ok", ""),
    ("fifo-in-logs", lambda f: (os.makedirs(f / "LOGS"), os.mkfifo(f / "LOGS" / "pipe")), "ok", ""),
    ("shipped", lambda f: None, "ok", ""),
]

AGENTX_CASES = [
    (
        "nan-throughput",
        {"request_metrics__throughput__per_gpu__total_tput_tps": float("nan")},
        "invalid",
        "NaN is not a JSON number at $.request_metrics.throughput.per_gpu.total_tput_tps",
    ),
    (
        "infinite-throughput",
        {"request_metrics__throughput__per_gpu__total_tput_tps": float("inf")},
        "invalid",
        "Infinity",
    ),
    (
        "string-throughput",
        {"request_metrics__throughput__per_gpu__total_tput_tps": "1200"},
        "invalid",
        "request_metrics.throughput.per_gpu.total_tput_tps is '1200', not a number",
    ),
    (
        "string-interactivity",
        {"request_metrics__latency__e2e_norm_intvty__p90": "fast"},
        "invalid",
        "e2e_norm_intvty.p90 is 'fast'",
    ),
    (
        "not-an-object",
        {"request_metrics__latency": 3},
        "invalid",
        'row.request_metrics.latency: 3 is not of type "object"',
    ),
    ("other-config-key", {"config-key": "someone-elses-key"}, "invalid", "config-key='someone-elses-key'"),
    ("other-run", {"run-id": 1}, "invalid", "run-id=1 (infx: 4242)"),
    (
        "other-point",
        {"point-id": "x", "lane": "elsewhere"},
        "invalid",
        "identity and provenance come only from infx's launch record",
    ),
    ("other-conc", {"conc": 7}, "invalid", "conc=7 (infx: 120)"),
    ("same-identity", {"config-key": LADDER, "conc": 120, "scenario-type": "agentic-coding"}, "ok", ""),
    ("shipped", {}, "ok", ""),
]


def _agree(folder: Path, status: str, part: str) -> None:
    """collect's verdict is ``status`` with ``part`` in its reason, and reuse judges the same."""
    [verdict] = collect([folder]).points
    assert (verdict.status, part in verdict.reason) == (status, True), verdict.reason
    judged = judge(folder, KEY, {})
    assert (judged is None) == (status == "ok"), judged
    if judged is not None:
        assert judged == f"{status}: {verdict.reason}"


@pytest.mark.parametrize("case, breaks, status, part", FIXED_CASES, ids=[c[0] for c in FIXED_CASES])
def test_collect_and_reuse_agree_on_every_sa_bench_artifact(tmp_path, case, breaks, status, part):
    folder = fixed_point(tmp_path)
    breaks(folder)
    _agree(folder, status, part)


def _nonfinite_json(data) -> str:
    return json.dumps(data)  # json.dumps writes NaN and Infinity as Python does: the non-JSON words


@pytest.mark.parametrize("case, changes, status, part", AGENTX_CASES, ids=[c[0] for c in AGENTX_CASES])
def test_collect_and_reuse_agree_on_every_agentx_artifact(tmp_path, case, changes, status, part):
    folder = agentx_point(tmp_path)
    result = result_of(folder)
    data = json.loads(result.read_text())
    for key, value in changes.items():
        target, parts = data, key.split("__")
        for name in parts[:-1]:
            target = target[name]
        target[parts[-1]] = value
    result.write_text(_nonfinite_json(data))
    _agree(folder, status, part)


def test_a_result_key_of_another_point_is_reused_by_nobody(tmp_path):
    folder = fixed_point(tmp_path)
    assert judge(folder, KEY, {}) is None
    assert judge(folder, "f" * 64, {}).startswith(f"invalid: its launch record is for result key '{KEY}'")


def test_the_shipped_fixtures_get_the_verdicts_collect_gives(tmp_path):
    """Every shipped sa-bench file and the AgentX aggregate, as a point of the bundled configs."""
    cases = {
        "results_concurrency_4_gpus_24_ctx_8_gen_16.json": (4, "ok"),
        "results_concurrency_8_gpus_24_ctx_8_gen_16.json": (8, "ok"),
        "results_concurrency_16_gpus_24_ctx_8_gen_16.json": (16, "invalid"),
    }
    for name, (conc, status) in cases.items():
        folder = point_folder(
            tmp_path / name,
            bundled_row(VLLM_DISAGG, conc=[conc], **{"result-key": KEY}),
            {staged(conc): sa_bench(name)},
        )
        _agree(folder, status, "no request completed" if status == "invalid" else "")
    single = {
        k: v
        for k, v in bundled_row(VLLM_DISAGG, **{"result-key": KEY}).items()
        if k not in ("prefill", "decode", "node-count")
    }
    single.update({"tp": 4, "pp": 1, "pcp-size": 1, "ep": 4, "dp-attn": False, "conc": 4, "disagg": False})
    folder = point_folder(
        tmp_path / "single",
        single,
        {"{name}_sa-bench_isl_8192_osl_1024_conc4_gpus_4.json": sa_bench("results_concurrency_4_gpus_4.json")},
    )
    _agree(folder, "ok", "")
    _agree(agentx_point(tmp_path / "agentx"), "ok", "")
    aiperf = agentx_point(tmp_path / "gate")
    (aiperf / "LOGS" / "conc120").mkdir(parents=True)
    shutil.copy(
        REPO / "tests" / "data" / "results" / "agentic" / "profile_export_aiperf.json", aiperf / "LOGS" / "conc120"
    )
    _agree(aiperf, "ok", "")  # 20 failed of 2020: under the gate
    (aiperf / "LOGS" / "conc120" / "profile_export_aiperf.json").write_text('{"request_count": {"avg": NaN}}')
    _agree(
        aiperf,
        "invalid",
        "profile_export_aiperf.json is not strict JSON: NaN is not a JSON number at $.request_count.avg",
    )


def test_one_bad_point_never_costs_the_sweep(tmp_path):
    """Every hostile folder next to good ones: collect exits 1 (never 70, never a hang), writes
    results.json with a verdict per folder and the good points' rows."""
    downloaded = tmp_path / "downloaded"
    good = [fixed_point(downloaded / "good", 1), agentx_point(downloaded / "good-agentx")]
    for n, (case, breaks, _, _) in enumerate(FIXED_CASES):
        breaks(fixed_point(downloaded / case, n % 2))
    folders = sorted(p for group in downloaded.iterdir() for p in group.iterdir())
    done = run_cli("results", "collect", *map(str, folders), "--output", str(tmp_path / "results.json"), timeout=120)
    assert done.returncode == 1, done.stderr
    assert "Traceback" not in done.stderr and "internal error" not in done.stderr
    written = json.loads((tmp_path / "results.json").read_text())
    assert len(written["points"]) == len(folders) == len(FIXED_CASES) + 2
    assert {p["artifact"] for p in written["points"] if p["status"] == "ok"} >= {f.name for f in good}
    assert sum(p["status"] == "ok" for p in written["points"]) == 2 + sum(c[2] == "ok" for c in FIXED_CASES)
    assert len(written["rows"]) == sum(p["rows"] for p in written["points"])


def test_when_every_point_is_bad_results_json_still_says_why(tmp_path):
    folders = []
    for case in ("fifo", "nan", "no-record", "record-deep"):
        breaks = next(c[1] for c in FIXED_CASES if c[0] == case)
        folder = fixed_point(tmp_path / case)
        breaks(folder)
        folders.append(folder)
    done = run_cli(
        "results", "collect", *map(str, folders), "--output", str(tmp_path / "results.json"), "--exit-zero", timeout=60
    )
    assert done.returncode == 0, done.stderr
    written = json.loads((tmp_path / "results.json").read_text())
    assert written["rows"] == [] and [p["status"] for p in written["points"]] == [
        "invalid",
        "invalid",
        "failed",
        "invalid",
    ]
    assert all(p["reasons"] for p in written["points"])


def test_an_unreadable_folder_or_file_is_that_points_verdict(tmp_path):
    """Without read permission (root loses its override through setpriv): the point's verdict."""

    from tests.exitcodes.conftest import unprivileged_prefix

    locked_file, locked_folder, good = (
        fixed_point(tmp_path / "a"),
        fixed_point(tmp_path / "b"),
        fixed_point(tmp_path / "c", 1),
    )
    result_of(locked_file).chmod(0)
    for path in (tmp_path, tmp_path / "a", tmp_path / "b", tmp_path / "c", locked_file, good):
        path.chmod(0o777)
    locked_folder.chmod(0)
    out = tmp_path / "results.json"
    done = run_cli(
        "results",
        "collect",
        locked_file,
        locked_folder,
        good,
        "--output",
        out,
        prefix=unprivileged_prefix(),
        timeout=60,
    )
    locked_folder.chmod(0o755)
    assert done.returncode == 1, done.stderr
    verdicts = {p["artifact"]: p for p in json.loads(out.read_text())["points"]}
    assert verdicts[good.name]["status"] == "ok"
    assert "cannot be read (Permission denied)" in verdicts[locked_file.name]["reasons"][0]
    assert verdicts[locked_folder.name]["reasons"] == ["the folder cannot be read (Permission denied)"]


def test_compare_and_plot_run_on_the_valid_rows(tmp_path):
    """A results file with a row that cannot be compared (a string metric) is read without that
    row, with a notice; one with NaN is no strict JSON, refused as a file (located)."""
    folder = agentx_point(tmp_path / "p")
    done = run_cli("results", "collect", str(folder), "--output", str(tmp_path / "head.json"))
    assert done.returncode == 0, done.stderr
    head = json.loads((tmp_path / "head.json").read_text())
    bad = json.loads(json.dumps(head["rows"][0]))
    bad["request_metrics"]["throughput"]["per_gpu"]["total_tput_tps"] = "lots"
    base = {"rows": [bad, head["rows"][0]], "points": []}
    (tmp_path / "base.json").write_text(json.dumps(base))
    compared = run_cli(
        "results",
        "compare",
        "--head",
        str(tmp_path / "head.json"),
        "--baseline",
        str(tmp_path / "base.json"),
        "--format",
        "json",
        "--fail-on-regression",
    )
    assert compared.returncode == 0, compared.stderr
    data = json.loads(compared.stdout)
    assert data["counts"]["within"] == 1 and len(data["matches"]) == 1
    assert any("row 0 (point " in n and "total_tput_tps is 'lots', not a number" in n for n in data["notices"]), data[
        "notices"
    ]
    plotted = run_cli(
        "results",
        "plot",
        str(tmp_path / "head.json"),
        "--baseline",
        str(tmp_path / "base.json"),
        "--output",
        str(tmp_path / "charts"),
    )
    assert plotted.returncode == 0 and "total_tput_tps is 'lots'" in plotted.stderr
    # A baseline written with NaN (not JSON) is no results file: refused as one, located.
    base["rows"][1]["request_metrics"]["throughput"]["per_gpu"]["total_tput_tps"] = float("nan")
    (tmp_path / "nan.json").write_text(json.dumps({"rows": base["rows"][1:], "points": []}))
    refused = run_cli(
        "results", "compare", "--head", str(tmp_path / "head.json"), "--baseline", str(tmp_path / "nan.json")
    )
    assert refused.returncode == 1 and "error[results-json]" in refused.stderr
    assert "NaN is not a JSON number at $.rows[0].request_metrics.throughput.per_gpu.total_tput_tps" in refused.stderr


def test_a_nan_or_infinite_throughput_is_never_judged(tmp_path):
    """The comparison itself takes only finite numbers: NaN is no value (n/a), never "within";
    a change too large to be a number is n/a, never "improved"."""
    from infx.results.compare import judge as judge_metric
    from infx.results.metrics import METRICS_BY_ID, metric_value

    row = {
        "scenario-type": "agentic-coding",
        "request_metrics": {"throughput": {"per_gpu": {"total_tput_tps": float("nan")}}},
    }
    assert metric_value(row, "tput_per_gpu") is None
    row["request_metrics"]["throughput"]["per_gpu"]["total_tput_tps"] = float("inf")
    assert metric_value(row, "tput_per_gpu") is None
    change = judge_metric(METRICS_BY_ID["tput_per_gpu"], 5e-324, 1e308, 0.05)
    assert (change.change, change.judgement) == (None, "within")


def test_the_artifact_lists_eval_and_log_files_without_reading_them(tmp_path):
    folder = fixed_point(tmp_path)
    (folder / "eval" / "gsm8k").mkdir(parents=True)
    (folder / "eval" / "gsm8k" / "results.json").write_text("{not read}")
    (folder / "LOGS").mkdir()
    (folder / "LOGS" / "sweep_1.log").write_text("log")
    (folder / "multinode_server_logs.tar.gz").write_bytes(b"\x1f\x8b")
    (folder / "LOGS" / "secret").symlink_to("/etc/hostname")
    artifact = PointArtifact.read(folder)
    staged = sorted(
        f"eval/{p.name}" for p in (folder / "eval").iterdir() if p.is_file()
    )  # the eval stage's files of this eval point
    assert [p.split("/")[1].split("_")[0] for p in staged] == ["meta", "results", "samples"]
    assert [e.name for e in artifact.evals] == [
        "eval/gsm8k/results.json",
        *staged,
    ]  # listed; a subfolder's file is never read
    assert [e.name for e in artifact.logs] == ["LOGS/sweep_1.log", "multinode_server_logs.tar.gz"]
    assert artifact.skipped == ("LOGS/secret: a symbolic link, not followed or opened",)
    assert artifact.verdict().ok


def test_names_that_are_not_utf8_reach_results_json_as_text(tmp_path):
    """A folder and a result file named in bytes that are not UTF-8: the verdict and the rows
    carry them as text ("?"), so results.json is written and compare reads it back."""
    good = fixed_point(tmp_path / "downloaded")
    renamed = os.fsencode(good.parent) + b"/point-\xff\xfe"
    os.rename(good, renamed)
    os.rename(
        os.fsencode(result_of(Path(os.fsdecode(renamed)))),
        renamed + b"/RF\xff_sa-bench_conc4_gpus_24_ctx_8_gen_16.json",
    )
    done = run_cli("results", "collect", str(tmp_path / "downloaded"), "--output", str(tmp_path / "results.json"))
    assert done.returncode == 0, done.stderr
    written = json.loads((tmp_path / "results.json").read_text(encoding="utf-8"))
    assert written["points"][0]["artifact"] == "point-??" and written["rows"][0]["result-file"].startswith(
        "RF?_sa-bench"
    )
    compared = run_cli(
        "results", "compare", "--head", str(tmp_path / "results.json"), "--baseline", str(tmp_path / "results.json")
    )
    assert compared.returncode == 0, compared.stderr
