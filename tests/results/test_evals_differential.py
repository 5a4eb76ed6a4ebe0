"""Differential: the reference collector's rules, re-implemented here from their description, and
infx's eval collection, on the same lm-eval files, must give the same rows and scores.

The description is the reference note's (InferenceX `utils/collect_eval_results.py` at 843c6254f):
eval folders are the root or a folder one level down holding `meta_env.json`; an lm-eval result is
any JSON there with a top-level `lm_eval_version`; unbatched, the newest file by modification time;
batched, the newest per `_conc<N>` suffix, only the concurrencies of `completed_eval_concs`. Per
task the base metric is the first of `configs[task].metric_list` (default `exact_match`); a filter
named with `strict`/`resolved` gives the strict score, `flex`/`extract` the flexible one; without
filters, `acc` or the base metric. `n_eff` is `n-samples[task].effective`. The row: `hw`
upper-cased, `framework` and `precision` lower-cased, `dp_attention` one value or
`prefill=…,decode=…` when the roles differ, `score` the strict score (`em_strict`) else the
accuracy (`accuracy`). The metric keys are lm-eval's own form, `<metric>,<filter>` and
`<metric>_stderr,<filter>`. Nothing here is the reference's code.

infx places "newest" by the time lm-eval records in the file (its documented difference), so the
copies here give each file the modification time of that recorded time: both rules then agree.
"""

from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path

import pytest

from infx.results.evals.collection import collect_evals
from testing.evalsets import BATCHED, EVALS, FAILED, FLAT, edit_meta, read, results_files, write

REFERENCE_FIELDS = (
    "is_multinode",
    "model_prefix",
    "model",
    "hw",
    "framework",
    "precision",
    "spec_decoding",
    "isl",
    "osl",
    "tp",
    "ep",
    "prefill_tp",
    "prefill_ep",
    "prefill_num_workers",
    "decode_tp",
    "decode_ep",
    "decode_num_workers",
    "conc",
    "dp_attention",
    "prefill_dp_attention",
    "decode_dp_attention",
    "task",
    "em_strict",
    "em_strict_se",
    "em_flexible",
    "em_flexible_se",
    "n_eff",
    "source",
    "score",
    "score_name",
    "score_se",
)


# --- the reference's rules, as described --------------------------------------------------------


def described_folders(root: Path) -> list[Path]:
    own = [root] if (root / "meta_env.json").exists() else []
    return own + sorted(child for child in root.iterdir() if child.is_dir() and (child / "meta_env.json").exists())


def described_results(folder: Path) -> list[Path]:
    found = []
    for path in folder.glob("*.json"):
        if path.name == "meta_env.json":
            continue
        try:
            data = json.loads(path.read_text())
        except ValueError:
            continue
        if isinstance(data, dict) and "lm_eval_version" in data:
            found.append(path)
    return found


def described_task(data: dict, task: str) -> dict:
    values, config = data["results"][task], data.get("configs", {}).get(task, {})
    metrics = config.get("metric_list") or []
    base = metrics[0]["metric"] if metrics else "exact_match"
    strict = strict_se = flexible = flexible_se = accuracy = accuracy_se = None
    filters = config.get("filter_list") or []
    for item in filters:
        name = item["name"]
        if "strict" in name or "resolved" in name:
            strict, strict_se = values.get(f"{base},{name}"), values.get(f"{base}_stderr,{name}")
        elif "flex" in name or "extract" in name:
            flexible, flexible_se = values.get(f"{base},{name}"), values.get(f"{base}_stderr,{name}")
    if not filters:
        if "acc" in values:
            accuracy, accuracy_se = values["acc"], values.get("acc_stderr")
        else:
            strict, strict_se = values.get(base), values.get(f"{base}_stderr")
    if strict is not None:
        score = (strict, "em_strict", strict_se)
    elif accuracy is not None:
        score = (accuracy, "accuracy", accuracy_se)
    else:
        score = (None, None, None)
    return {
        "task": task,
        "em_strict": strict,
        "em_strict_se": strict_se,
        "em_flexible": flexible,
        "em_flexible_se": flexible_se,
        "n_eff": data.get("n-samples", {}).get(task, {}).get("effective"),
        "score": score[0],
        "score_name": score[1],
        "score_se": score[2],
    }


def described_row(meta: dict, conc: int, data: dict, task: str, source: Path) -> dict:
    prefill_dp, decode_dp = str(meta["prefill_dp_attention"]).lower(), str(meta["decode_dp_attention"]).lower()
    if meta["is_multinode"]:
        dp_attention = prefill_dp if prefill_dp == decode_dp else f"prefill={prefill_dp},decode={decode_dp}"
    else:
        dp_attention = str(meta["dp_attention"]).lower()
    return {
        "is_multinode": meta["is_multinode"],
        "model_prefix": meta["infmax_model_prefix"],
        "model": meta["model"],
        "hw": meta["hw"].upper(),
        "framework": meta["framework"].lower(),
        "precision": meta["precision"].lower(),
        "spec_decoding": meta["spec_decoding"],
        "isl": meta["isl"],
        "osl": meta["osl"],
        "tp": meta["tp"],
        "ep": meta["ep"],
        **{
            f"{role}_{name}": meta[f"{role}_{name}"]
            for role in ("prefill", "decode")
            for name in ("tp", "ep", "num_workers")
        },
        "conc": conc,
        "dp_attention": dp_attention,
        "prefill_dp_attention": prefill_dp,
        "decode_dp_attention": decode_dp,
        **described_task(data, task),
        "source": str(source),
    }


def described_collect(root: Path) -> list[dict]:
    rows = []
    for folder in described_folders(root):
        meta = json.loads((folder / "meta_env.json").read_text())
        results = described_results(folder)
        if isinstance(meta.get("eval_concs"), list):
            newest: dict[int, Path] = {}
            for path in results:
                suffix = re.search(r"_conc(\d+)", path.name)
                if suffix is None:
                    continue
                conc = int(suffix.group(1))
                if conc not in newest or path.stat().st_mtime > newest[conc].stat().st_mtime:
                    newest[conc] = path
            picked = [(path, conc) for conc, path in newest.items() if conc in meta["completed_eval_concs"]]
        else:
            picked = [(max(results, key=lambda p: p.stat().st_mtime), meta["conc"])] if results else []
        for path, conc in picked:
            data = json.loads(path.read_text())
            rows += [described_row(meta, conc, data, task, path) for task in data["results"]]
    return rows


# --- the comparison ------------------------------------------------------------------------------


def aligned_copy(names: list[str], root: Path) -> Path:
    """Copies of fixture folders whose result files carry lm-eval's recorded time as their file time."""
    for name in names:
        shutil.copytree(EVALS / name, root / name)
        for path in results_files(root / name):
            recorded = read(path)["date"]
            os.utime(path, (recorded, recorded))
    return root


def infx_rows(root: Path) -> list[dict]:
    return [{name: row.to_json()[name] for name in REFERENCE_FIELDS} for row in collect_evals([root]).rows]


def ordered(rows: list[dict]) -> list[dict]:
    return sorted(rows, key=lambda row: (row["source"], row["task"]))


def test_every_fixture_folder_gives_the_same_rows_and_scores(tmp_path):
    root = aligned_copy([FLAT, BATCHED, FAILED], tmp_path / "evals")
    described = ordered(described_collect(root))
    assert len(described) == 5  # flat 1, batched 2 (a re-run collapsed), batched-failed 2 (64 failed)
    assert ordered(infx_rows(root)) == described


def test_a_single_artifact_downloaded_flat_into_the_root_gives_the_same_rows(tmp_path):
    root = aligned_copy([BATCHED], tmp_path / "download") / BATCHED
    assert ordered(infx_rows(root)) == ordered(described_collect(root)) != []


def test_a_result_file_of_a_concurrency_that_did_not_complete_is_left_out_by_both(tmp_path):
    root = aligned_copy([FAILED], tmp_path / "evals")
    stale = results_files(root / FAILED)[1]
    shutil.copy2(stale, root / FAILED / stale.name.replace("_conc32", "_conc64"))
    described = ordered(described_collect(root))
    assert [row["conc"] for row in described] == [16, 32]
    assert ordered(infx_rows(root)) == described


@pytest.mark.parametrize(
    "meta",
    [
        {
            "is_multinode": False,
            "tp": 8,
            "ep": 8,
            "dp_attention": "true",
            "prefill_tp": 8,
            "prefill_ep": 8,
            "prefill_num_workers": 1,
            "decode_tp": 8,
            "decode_ep": 8,
            "decode_num_workers": 1,
            "prefill_dp_attention": "true",
            "decode_dp_attention": "true",
            "hw": "B200",
            "framework": "SGLang",
            "precision": "FP8",
            "infmax_model_prefix": "dsr1",
            "conc": 64,
        },
        {"prefill_dp_attention": "true", "decode_dp_attention": "true"},  # multinode, the roles agree: one value
    ],
    ids=["single-node", "dp-attention-agrees"],
)
def test_other_topologies_give_the_same_rows(tmp_path, meta):
    root = aligned_copy([FLAT], tmp_path / "evals")
    edit_meta(root / FLAT, **meta)
    assert ordered(infx_rows(root)) == ordered(described_collect(root)) != []


def test_a_task_without_filters_gives_the_same_accuracy_row(tmp_path):
    root = aligned_copy([FLAT], tmp_path / "evals")
    newer = results_files(root / FLAT)[1]
    data = read(newer)
    data["results"]["gpqa_diamond_cot_n_shot"] = {"acc": 0.5, "acc_stderr": 0.035}
    data["configs"]["gpqa_diamond_cot_n_shot"] = {"metric_list": [{"metric": "acc"}]}
    data["n-samples"]["gpqa_diamond_cot_n_shot"] = {"original": 198, "effective": 198}
    stamp = newer.stat().st_mtime
    write(newer, data)
    os.utime(newer, (stamp, stamp))
    described = ordered(described_collect(root))
    assert [(row["task"], row["score_name"]) for row in described] == [
        ("gpqa_diamond_cot_n_shot", "accuracy"),
        ("gsm8k", "em_strict"),
    ]
    assert ordered(infx_rows(root)) == described


def test_a_resolved_filter_counts_as_the_strict_score_for_both(tmp_path):
    root = aligned_copy([FLAT], tmp_path / "evals")
    newer = results_files(root / FLAT)[1]
    data, stamp = read(newer), newer.stat().st_mtime
    data["configs"]["gsm8k"]["filter_list"][0]["name"] = "resolved"  # SWE-bench's filter name
    values = data["results"]["gsm8k"]
    values["exact_match,resolved"] = values.pop("exact_match,strict-match")
    values["exact_match_stderr,resolved"] = values.pop("exact_match_stderr,strict-match")
    write(newer, data)
    os.utime(newer, (stamp, stamp))
    [described] = described_collect(root)
    assert described["em_strict"] == values["exact_match,resolved"] and described["score_name"] == "em_strict"
    assert infx_rows(root) == [described]
