"""Eval folders -> eval rows (infx/results/evals/) on files the real lm-eval wrote.

The folders under tests/data/results/evals/ come from lm-eval 0.4.13 run against the stand-in
server of tests/testing/lm_eval_standin.py, which answers by a fixed policy, so every score is
known: evalsets.py lists them. Faults are made by editing copies of those folders.
"""

from __future__ import annotations

import json
import os
import shutil
from dataclasses import FrozenInstanceError, fields

import pytest

from infx.results.evals.collection import collect_evals, find_eval_sets
from infx.results.evals.folder import read_eval_set
from infx.results.evals.rows import EvalCollection, EvalProtocol, EvalRow
from infx.results.evals.rules import RULES
from infx.schema import is_valid, load_schema
from testing.artifacts import bundled_row
from testing.evalsets import (
    BATCHED,
    BATCHED_SCORES,
    EVALS,
    FAILED,
    FAILED_SCORES,
    FLAT,
    FLAT_NEWER,
    FLAT_OLDER,
    copy_set,
    edit_meta,
    eval_point,
    read,
    results_files,
    write,
)

VLLM_DISAGG = "dsv4-fp4-gb300-dynamo-vllm"  # the bundled row meta_env.json describes


def scores(evals) -> dict:
    return {row.conc: (row.em_strict, row.em_flexible) for row in evals.rows}


def rules(found) -> list[str]:
    return [p.rule for p in found.problems]


def test_a_flat_folder_rerun_gives_one_row_from_the_newest_result():
    found = read_eval_set(EVALS / FLAT)
    assert rules(found) == []
    [row] = found.rows
    assert (row.em_strict, row.em_flexible) == FLAT_NEWER  # not the first attempt's 0.7817
    assert round(row.em_strict, 4) == 0.9052 and round(row.em_flexible, 4) == 0.9401
    assert (row.score, row.score_name, row.score_se) == (row.em_strict, "em_strict", row.em_strict_se)
    assert 0 < row.em_strict_se < 0.01 and row.n_eff == 1319 and row.task == "gsm8k" and row.conc == 192
    # The reference's row fields from meta_env.json: upper-cased hw, lower-cased framework, one dp-attention text.
    assert (row.model_prefix, row.model, row.hw, row.framework, row.precision) == (
        "dsv4",
        "deepseek-ai/DeepSeek-V4-Pro",
        "GB300",
        "dynamo-vllm",
        "fp4",
    )
    assert (row.is_multinode, row.isl, row.osl, row.tp, row.ep) == (True, 8192, 1024, 4, 4)
    assert (
        row.prefill_tp,
        row.prefill_ep,
        row.prefill_num_workers,
        row.decode_tp,
        row.decode_ep,
        row.decode_num_workers,
    ) == (4, 4, 1, 4, 1, 6)
    assert (row.dp_attention, row.prefill_dp_attention, row.decode_dp_attention) == (
        "prefill=true,decode=false",
        "true",
        "false",
    )
    assert row.protocol == EvalProtocol("0.4.13", 5, 64, 0.0, True, True, None)
    assert row.source == str(EVALS / FLAT / results_files(EVALS / FLAT)[1].name)
    assert [(r.used, r.conc) for r in found.results] == [(False, None), (True, None)]
    assert row.point_id is None and row.config_key is None  # a folder on its own: no point known


def test_newest_is_the_time_lm_eval_recorded_not_the_file_time(tmp_path):
    folder = copy_set(FLAT, tmp_path / "flat")
    older, newer = results_files(folder)
    os.utime(newer, (1_000, 1_000))  # a checkout or download leaves arbitrary file times
    os.utime(older, (2_000_000_000, 2_000_000_000))
    assert scores(collect_evals([folder])) == {192: FLAT_NEWER}
    # A result without lm-eval's `date` is placed by its file time.
    for path in (older, newer):
        write(path, {k: v for k, v in read(path).items() if k != "date"})
    os.utime(newer, (1_000, 1_000))
    os.utime(older, (2_000_000_000, 2_000_000_000))
    assert scores(collect_evals([folder])) == {192: FLAT_OLDER}


def test_a_batched_folder_gives_the_newest_file_per_concurrency():
    found = read_eval_set(EVALS / BATCHED)
    assert rules(found) == [] and found.batched and found.eval_concs == (16, 32)
    assert scores(found) == BATCHED_SCORES  # 16 was run twice: 0.85 first, 0.91 the re-run
    assert [(r.conc, r.used) for r in found.results] == [(16, False), (16, True), (32, True)]
    assert all(row.protocol.limit == 100 and row.n_eff == 100 for row in found.rows)


def test_a_failed_concurrency_gives_no_row_and_three_manifest_problems():
    found = read_eval_set(EVALS / FAILED)
    assert scores(found) == FAILED_SCORES
    assert rules(found) == ["eval-batch-failed-conc", "eval-batch-conc-missing", "eval-batch-result-missing"]
    assert all(p.file.endswith("batched-failed/meta_env.json") and "64" in p.message for p in found.problems)


def test_only_completed_concurrencies_give_rows(tmp_path):
    folder = copy_set(FAILED, tmp_path / "set")
    stale = results_files(folder)[1]
    shutil.copy(stale, folder / stale.name.replace("_conc32", "_conc64"))  # a file for the failed concurrency
    found = read_eval_set(folder)
    assert scores(found) == FAILED_SCORES
    assert [(r.conc, r.used) for r in found.results if r.conc == 64] == [(64, False)]
    assert rules(found) == ["eval-batch-failed-conc", "eval-batch-conc-missing"]  # the file exists now


def _suffixed_copy(folder, conc: int) -> None:
    source = results_files(folder)[-1]
    shutil.copy(source, folder / f"results_2026-12-02T00-00-00.000000_conc{conc}.json")


@pytest.mark.parametrize(
    "change, expected",
    [
        (lambda f: edit_meta(f, eval_concs=[16, 16, 32]), ["eval-batch-conc-duplicate"]),
        (lambda f: edit_meta(f, completed_eval_concs=[16, 32, 32]), ["eval-batch-conc-duplicate"]),
        (lambda f: edit_meta(f, completed_eval_concs=[16, 32, 48]), ["eval-batch-conc-unexpected"]),
        (lambda f: edit_meta(f, completed_eval_concs=[16]), ["eval-batch-conc-missing"]),
        (lambda f: edit_meta(f, failed_eval_concs=[32]), ["eval-batch-failed-conc"]),
        (lambda f: shutil.copy(results_files(f)[0], f / "results_rerun.json"), ["eval-batch-file-unsuffixed"]),
        (lambda f: _suffixed_copy(f, 48), ["eval-batch-result-unexpected"]),
        (lambda f: [p.unlink() for p in results_files(f) if "_conc32" in p.name], ["eval-batch-result-missing"]),
        (lambda f: edit_meta(f, eval_concs="16 32"), ["eval-batch-manifest-invalid"]),
        (lambda f: edit_meta(f, failed_eval_concs=...), ["eval-batch-manifest-invalid"]),
        (lambda f: edit_meta(f, eval_concs=[0, 16, 32]), ["eval-batch-manifest-invalid"]),
        (lambda f: edit_meta(f, completed_eval_concs=[16, True]), ["eval-batch-manifest-invalid"]),
    ],
    ids=[
        "duplicate-expected",
        "duplicate-completed",
        "unexpected-completed",
        "not-completed",
        "failed",
        "unsuffixed-file",
        "unexpected-file",
        "missing-file",
        "string-list",
        "no-failed-list",
        "zero",
        "boolean",
    ],
)
def test_each_batch_manifest_inconsistency_is_its_own_rule(tmp_path, change, expected):
    folder = copy_set(BATCHED, tmp_path / "set")
    change(folder)
    found = read_eval_set(folder)
    assert rules(found) == expected
    assert set(expected) <= RULES.keys()
    if expected == ["eval-batch-manifest-invalid"]:
        assert found.rows == ()  # which concurrencies completed cannot be told: no rows rather than a guess


def test_eval_folders_are_found_at_the_root_one_level_down_and_in_point_artifacts(tmp_path):
    row = bundled_row(VLLM_DISAGG)  # eval-conc 192, the flat folder's concurrency
    eval_point(tmp_path / "artifacts", FLAT, row)
    copy_set(BATCHED, tmp_path / "artifacts" / "loose")
    found = dict(find_eval_sets([tmp_path / "artifacts"]))
    assert sorted(p.relative_to(tmp_path).as_posix() for p in found) == [
        "artifacts/loose",
        f"artifacts/point-{row_id(row)}/eval",
    ]
    # The point folder itself, and the eval folder given directly, find the same folder.
    point = tmp_path / "artifacts" / f"point-{row_id(row)}"
    assert list(dict(find_eval_sets([point]))) == list(dict(find_eval_sets([point / "eval"]))) == [point / "eval"]
    assert find_eval_sets([tmp_path / "artifacts" / "loose"])[0][0] == tmp_path / "artifacts" / "loose"


def row_id(row: dict) -> str:
    from infx.points import point_id

    return point_id(row)


def test_rows_of_a_point_artifact_carry_its_identity_and_provenance(tmp_path):
    row = bundled_row(VLLM_DISAGG, **{"result-key": "a" * 64})
    artifact = eval_point(tmp_path, FLAT, row, run_id=987)
    collected = collect_evals([tmp_path])
    [found] = collected.sets
    [eval_row] = found.rows
    assert rules(found) == []
    assert (eval_row.config_key, eval_row.point_id, eval_row.result_key) == (VLLM_DISAGG, row_id(row), "a" * 64)
    assert (eval_row.run_id, eval_row.run_attempt, eval_row.lane, eval_row.artifact) == (
        987,
        1,
        "gb300-nv",
        artifact.name,
    )
    assert (found.config_key, found.point_id) == (VLLM_DISAGG, row_id(row))


def test_an_eval_at_other_concurrencies_than_its_point_asked_for_is_refused(tmp_path):
    asked = bundled_row(VLLM_DISAGG, **{"eval-conc": 64})
    eval_point(tmp_path / "a", FLAT, asked)
    assert rules(collect_evals([tmp_path / "a"]).sets[0]) == ["eval-conc-mismatch"]
    every = bundled_row(VLLM_DISAGG, conc=[16, 32], **{"eval-all-concs": True})
    eval_point(tmp_path / "b", BATCHED, every)
    assert rules(collect_evals([tmp_path / "b"]).sets[0]) == []
    more = bundled_row(VLLM_DISAGG, conc=[16, 32, 64], **{"eval-all-concs": True})
    eval_point(tmp_path / "c", BATCHED, more)
    [found] = collect_evals([tmp_path / "c"]).sets
    assert rules(found) == ["eval-conc-mismatch"] and "64" in found.problems[0].message
    assert scores(found) == BATCHED_SCORES  # what ran is still reported


def test_a_model_prefix_lost_from_meta_env_comes_from_the_point(tmp_path):
    artifact = eval_point(tmp_path, FLAT, bundled_row(VLLM_DISAGG))
    edit_meta(artifact / "eval", infmax_model_prefix=...)
    [row] = collect_evals([tmp_path]).rows
    assert row.model_prefix == "dsv4"
    [alone] = read_eval_set(artifact / "eval").rows  # without its point, the reference's "unknown"
    assert alone.model_prefix == "unknown"


def test_missing_meta_fields_take_the_reference_defaults(tmp_path):
    folder = copy_set(FLAT, tmp_path / "set")
    write(folder / "meta_env.json", {})
    [row] = read_eval_set(folder).rows
    assert (row.model_prefix, row.hw, row.framework, row.precision, row.spec_decoding) == (
        "unknown",
        "UNKNOWN",
        "unknown",
        "unknown",
        "unknown",
    )
    assert (row.is_multinode, row.isl, row.osl, row.conc, row.tp, row.ep) == (False, 0, 0, 0, 1, 1)
    assert (row.prefill_num_workers, row.decode_tp, row.dp_attention, row.decode_dp_attention) == (1, 1, "none", "none")
    assert row.model == "deepseek-ai/DeepSeek-V4-Pro"  # lm-eval's model name comes first


def test_single_node_meta_keeps_its_own_dp_attention_and_exported_strings_are_read(tmp_path):
    folder = copy_set(FLAT, tmp_path / "set")
    write(
        folder / "meta_env.json",
        {
            "is_multinode": "False",
            "tp": "8",
            "ep": "8",
            "conc": "64",
            "dp_attention": "True",
            "hw": "b200",
            "framework": "SGLang",
            "precision": "FP8",
            "infmax_model_prefix": "dsr1",
        },
    )
    [row] = read_eval_set(folder).rows
    assert (row.is_multinode, row.tp, row.ep, row.conc, row.prefill_tp, row.decode_ep) == (False, 8, 8, 64, 8, 8)
    assert (row.dp_attention, row.prefill_dp_attention, row.hw, row.framework, row.precision) == (
        "true",
        "true",
        "B200",
        "sglang",
        "fp8",
    )


def on_data(change):
    """A text edit that changes the parsed JSON instead."""

    def edit(text: str) -> str:
        data = json.loads(text)
        change(data)
        return json.dumps(data)

    return edit


@pytest.mark.parametrize(
    "edit, rule",
    [
        (lambda text: text.replace('"date": ', '"date": NaN, "x": '), "eval-result-unreadable"),
        (
            lambda text: text.replace(
                '"exact_match,strict-match": 0.9', '"exact_match,strict-match": Infinity, "y": 0.9'
            ),
            "eval-result-unreadable",
        ),
        (
            lambda text: text.replace('"lm_eval_version": ', '"lm_eval_version": "0", "lm_eval_version": '),
            "eval-result-unreadable",
        ),
        (lambda text: text[: len(text) // 2], "eval-result-unreadable"),
        (
            on_data(lambda d: d["results"]["gsm8k"].update({"exact_match,strict-match": "0.9052"})),
            "eval-result-malformed",
        ),
        (on_data(lambda d: d["results"]["gsm8k"].update({"exact_match,strict-match": 1.9})), "eval-row-schema"),
        (on_data(lambda d: d.update(results=[d["results"]])), "eval-result-malformed"),
        (on_data(lambda d: d["configs"]["gsm8k"].update(filter_list="strict-match")), "eval-result-malformed"),
    ],
    ids=[
        "nan",
        "infinity",
        "duplicate-key",
        "truncated",
        "score-text",
        "score-above-1",
        "results-list",
        "filters-text",
    ],
)
def test_a_result_that_is_not_strictly_lm_eval_output_is_a_problem_not_a_row(tmp_path, edit, rule):
    folder = copy_set(FLAT, tmp_path / "set")
    older, newer = results_files(folder)
    older.unlink()
    text = newer.read_text()
    changed = edit(text)
    assert changed != text
    newer.write_text(changed)
    found = read_eval_set(folder)
    assert found.rows == () and rules(found) == [rule]
    assert found.problems[0].file == str(newer) and rule in RULES


def test_a_standard_error_lm_eval_could_not_compute_is_none(tmp_path):
    folder = copy_set(FLAT, tmp_path / "set")
    newer = results_files(folder)[1]
    data = read(newer)
    data["results"]["gsm8k"]["exact_match_stderr,strict-match"] = "N/A"  # what lm-eval writes for one sample
    write(newer, data)
    [row] = read_eval_set(folder).rows
    assert row.em_strict_se is None and row.score_se is None and row.em_flexible_se is not None


@pytest.mark.parametrize(
    "meta, rule",
    [
        ('{"tp": "eight"}', "eval-meta-field"),
        ('{"is_multinode": "yes"}', "eval-meta-field"),
        ('{"hw": 300}', "eval-meta-field"),
        ('{"tp": 4.0}', "eval-meta-field"),
        ('{"conc": NaN}', "eval-meta-unreadable"),
        ("[1, 2]", "eval-meta-unreadable"),
        ('{"tp": 1, "tp": 2}', "eval-meta-unreadable"),
    ],
)
def test_meta_env_values_the_row_cannot_hold_are_problems(tmp_path, meta, rule):
    folder = copy_set(FLAT, tmp_path / "set")
    (folder / "meta_env.json").write_text(meta)
    found = read_eval_set(folder)
    assert rules(found) == [rule]
    if rule == "eval-meta-field":
        assert found.rows == ()


def test_a_folder_without_an_lm_eval_result_is_eval_missing(tmp_path):
    folder = copy_set(FLAT, tmp_path / "set")
    for path in results_files(folder):
        path.unlink()
    (folder / "notes.json").write_text('{"not": "lm-eval"}')  # other JSON is passed over
    found = read_eval_set(folder)
    assert rules(found) == ["eval-missing"] and found.rows == ()


def test_a_task_without_filters_gives_accuracy_and_lm_eval_0_4_metric_names_are_read(tmp_path):
    folder = copy_set(FLAT, tmp_path / "set")
    older, newer = results_files(folder)
    data = read(newer)
    del data["configs"]["gsm8k"]["filter_list"]
    data["results"]["gsm8k"] = {"acc,none": 0.75, "acc_stderr,none": 0.01}
    write(newer, data)
    [row] = read_eval_set(folder).rows
    assert (row.score, row.score_name, row.score_se, row.em_strict, row.em_flexible) == (
        0.75,
        "accuracy",
        0.01,
        None,
        None,
    )
    data["results"]["gsm8k"] = {"exact_match,none": 0.5, "exact_match_stderr,none": 0.02}
    write(newer, data)
    [row] = read_eval_set(folder).rows
    assert (row.score, row.score_name, row.em_strict, row.em_strict_se) == (0.5, "em_strict", 0.5, 0.02)


# --- the typed record and its schema --------------------------------------------------------


def test_the_record_and_the_schema_name_the_same_fields():
    schema = load_schema("eval-row")["$defs"]
    names = [EvalRow.json_name(item.name) for item in fields(EvalRow)]
    assert names == list(schema["row"]["properties"]) and set(names) == set(schema["row"]["required"])
    protocol = [EvalProtocol.json_name(item.name) for item in fields(EvalProtocol)]
    assert protocol == list(schema["protocol"]["properties"]) == schema["protocol"]["required"]


def test_every_fixture_row_passes_the_schema_and_reads_back_unchanged():
    collected = collect_evals([EVALS])
    assert len(collected.rows) == 5 and len(collected.sets) == 3
    section = json.loads(json.dumps(collected.to_json()))
    assert is_valid("eval-row", section, "#/$defs/evals")
    assert all(is_valid("eval-row", row) for row in section["rows"])
    again = EvalCollection.from_json(section)
    assert again == collected and again.to_json() == section
    assert EvalRow.from_data(section["rows"][0]) == collected.rows[0]
    with pytest.raises(FrozenInstanceError):
        collected.rows[0].conc = 1  # frozen


# --- hostile files ----------------------------------------------------------------------------


from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from testing.hostile import json_text  # noqa: E402


@settings(
    max_examples=80,
    derandomize=True,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture, HealthCheck.data_too_large],
)
@given(data=st.data())
def test_hostile_meta_and_results_give_problems_never_an_exception(tmp_path_factory, data):
    folder = copy_set(BATCHED, tmp_path_factory.mktemp("hostile") / "set")
    target = data.draw(st.sampled_from([folder / "meta_env.json", *results_files(folder)]))
    target.write_text(data.draw(json_text(read(target))), encoding="utf-8", errors="surrogatepass")
    found = read_eval_set(folder)
    assert {p.rule for p in found.problems} <= RULES.keys()
    assert all(is_valid("eval-row", row.to_json()) for row in found.rows)
    assert is_valid("eval-row", json.loads(json.dumps(EvalCollection((found,)).to_json())), "#/$defs/evals")
