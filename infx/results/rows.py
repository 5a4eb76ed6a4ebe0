"""One result file -> one row in the reference's aggregate-row shape, plus infx's own fields.

Per-GPU throughput divides as the reference does:

| | single node | multinode |
|---|---|---|
| GPUs | tp x pp x pcp | prefill + decode GPUs from the file name (`_ctx_P_gen_D`; none: G and 0) |
| `tput_per_gpu` | total / GPUs | total / (prefill + decode) |
| `output_tput_per_gpu` | output / GPUs | output / decode (total GPUs when decode is 0) |
| `input_tput_per_gpu` | (total - output) / GPUs | (total - output) / prefill |

Every `*_ms` key becomes the key without `_ms`, in seconds; every TPOT statistic also yields
`*_intvty` = 1000 / TPOT(ms), tokens/s per user (the reference's std_intvty quirk included,
so its consumers read the rows unchanged). AgentX aggregates are already rows; infx adds
only its own (hyphenated) identity and provenance fields, which come from its launch record
alone (``IDENTITY_FIELDS``).
"""

from __future__ import annotations

import re

from ..launch.record import LaunchRecord
from ..scenarios import AGENTIC, FIXED

FIXED_FILE = re.compile(
    r"(?:^|_)conc(?:urrency_)?(?P<conc>\d+)_gpus_(?P<gpus>\d+)(?:_ctx_(?P<ctx>\d+)_gen_(?P<gen>\d+))?\.json$"
)
# infx's identity and provenance of a row: written from its launch record and the file's name
# only. A result file that carries one of them with another value is refused (artifact.py).
IDENTITY_FIELDS = (
    "config-key",
    "point-id",
    "recipe-fingerprint",
    "result-key",
    "scenario-type",
    "lane",
    "run-id",
    "run-attempt",
    "srt-slurm-commit",
    "job-id",
    "terminal-state",
    "artifact",
    "result-file",
    "conc",
)


class RowRefused(ValueError):
    """A result file whose fields would replace the row's own: why, in words."""


def _flag(value) -> str:
    """The reference writes dp-attention flags as the strings its environment carried."""
    return "true" if value is True else "false" if value is False else str(value)


def identity(record: LaunchRecord, artifact: str, result_file: str, conc: int) -> dict:
    """infx's own fields: which point, from which run, on which lane and srt-slurm, how the job
    ended, and the concurrency (from the result file's name, which infx staged)."""
    point = record.point
    job = record.job_id
    fields = {
        "config-key": point.get("config-key"),
        "point-id": record.point_id,
        "recipe-fingerprint": point.get("recipe-fingerprint"),
        "scenario-type": AGENTIC if record.agentic else FIXED,
        "lane": record.lane,
        "run-id": record.run_id,
        "run-attempt": record.run_attempt,
        "srt-slurm-commit": record.srt_slurm_commit,
        "job-id": str(job) if job is not None else None,
        "terminal-state": record.terminal_state,
        "artifact": artifact,
        "result-file": result_file,
    }
    if point.get("result-key") or record.result_key:
        fields["result-key"] = point.get("result-key") or record.result_key
    return {**fields, "conc": conc}


def reference_common(point: dict) -> dict:
    """The fields process_result.py takes from the job's environment, here from the point itself."""
    common = {
        "hw": str(point.get("runner", "")).removeprefix("cluster:"),
        "image": point.get("image"),
        "infmax_model_prefix": point.get("model-prefix"),
        "framework": point.get("framework"),
        "precision": point.get("precision"),
        "spec_decoding": point.get("spec-decoding", "none"),
        "disagg": bool(point.get("disagg", False)),
        "recipe_fingerprint": point.get("recipe-fingerprint", ""),
    }
    if isinstance(point.get("router"), dict):
        common["router"] = point["router"]
    if point.get("kv-p2p-transfer"):
        common["kv_p2p_transfer"] = point["kv-p2p-transfer"]
    return common


def convert_units(raw: dict) -> dict:
    """`*_ms` -> seconds without the suffix; every TPOT statistic also -> `*_intvty` (1000 / ms)."""
    converted = {}
    for key, value in raw.items():
        if not key.endswith("ms") or type(value) not in (int, float):
            continue
        name = key[:-3] if key.endswith("_ms") else key[:-2]
        converted[name] = value / 1000
        if "tpot" in key and value > 0:
            converted[name.replace("tpot", "intvty")] = 1000 / value
    return converted


def unit_problem(raw: dict) -> str | None:
    """A `*_ms` statistic that is not a number (a string where a latency belongs): refused, not
    left out as n/a. null is a statistic the client did not compute, left out."""
    for key, value in raw.items():
        if key.endswith("_ms") and value is not None and type(value) not in (int, float):
            return f"{key} is {_shown(value)}, not a number"
    return None


def _shown(value) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:60] + "…"


def point_parallelism(point: dict, prefill_gpus: int | None = None, decode_gpus: int | None = None) -> dict:
    """The reference's parallelism fields for a point (tp, ep, dp_attention..., per role when multinode). Multinode GPU
    counts come from the sa-bench file name when given, else from workers x tp x pp x pcp per role (as the AgentX
    aggregation counts them); with no decode GPUs the decode parallelism is written as the reference does."""
    prefill, decode = point.get("prefill"), point.get("decode")
    if not (isinstance(prefill, dict) and isinstance(decode, dict)):
        return {
            "is_multinode": False,
            "tp": point.get("tp"),
            "pp": point.get("pp", 1),
            "dcp_size": point.get("dcp-size", 1),
            "pcp_size": point.get("pcp-size", 1),
            "ep": point.get("ep"),
            "dp_attention": _flag(point.get("dp-attn")),
        }

    def gpus(role: dict) -> int:
        return (
            int(role.get("num-worker", 1))
            * int(role.get("tp", 1))
            * int(role.get("pp", 1))
            * int(role.get("pcp-size", 1))
        )

    prefill_gpus = gpus(prefill) if prefill_gpus is None else prefill_gpus
    decode_gpus = gpus(decode) if decode_gpus is None else decode_gpus
    has_decode = decode_gpus > 0
    return {
        "is_multinode": True,
        "prefill_tp": prefill.get("tp"),
        "prefill_pp": prefill.get("pp", 1),
        "prefill_dcp_size": prefill.get("dcp-size", 1),
        "prefill_pcp_size": prefill.get("pcp-size", 1),
        "prefill_ep": prefill.get("ep"),
        "prefill_dp_attention": _flag(prefill.get("dp-attn")),
        "prefill_num_workers": prefill.get("num-worker"),
        "decode_tp": decode.get("tp") if has_decode else 0,
        "decode_pp": decode.get("pp", 1) if has_decode else 1,
        "decode_dcp_size": decode.get("dcp-size", 1) if has_decode else 1,
        "decode_pcp_size": decode.get("pcp-size", 1) if has_decode else 1,
        "decode_ep": decode.get("ep") if has_decode else 0,
        "decode_dp_attention": _flag(decode.get("dp-attn")),
        "decode_num_workers": decode.get("num-worker"),
        "num_prefill_gpu": prefill_gpus,
        "num_decode_gpu": decode_gpus,
    }


def fixed_seq_row(point: dict, raw: dict, match: re.Match) -> dict:
    """The reference's row of a sa-bench file (without infx's fields). A converted statistic
    never replaces a field the row already has: ValueError names it."""
    total, output = float(raw["total_token_throughput"]), float(raw["output_throughput"])
    row = {
        **reference_common(point),
        "conc": int(raw["max_concurrency"]),
        "model": raw.get("model_id") or point.get("model"),
        "isl": int(point.get("isl") or 0),
        "osl": int(point.get("osl") or 0),
    }
    if isinstance(point.get("prefill"), dict):
        gpus = int(match["gpus"])
        prefill_gpus, decode_gpus = (int(match["ctx"]), int(match["gen"])) if match["ctx"] else (gpus, 0)
        row |= point_parallelism(point, prefill_gpus, decode_gpus)
        row |= {
            "tput_per_gpu": total / (prefill_gpus + decode_gpus),
            "output_tput_per_gpu": output / (decode_gpus if decode_gpus > 0 else prefill_gpus + decode_gpus),
            "input_tput_per_gpu": (total - output) / prefill_gpus,
        }
    else:
        count = int(point.get("tp", 1)) * int(point.get("pp", 1)) * int(point.get("pcp-size", 1))
        row |= point_parallelism(point)
        row |= {
            "tput_per_gpu": total / count,
            "output_tput_per_gpu": output / count,
            "input_tput_per_gpu": (total - output) / count,
        }
    converted = convert_units(raw)
    clash = sorted((converted.keys() & row.keys()) | (converted.keys() & set(IDENTITY_FIELDS)))
    if clash:
        raise RowRefused(
            f"its statistic(s) {', '.join(f'{k}_ms' for k in clash)} would replace the row's own {', '.join(clash)}"
        )
    return row | converted


def agentic_row(point: dict, raw: dict) -> dict:
    """The aggregate as written (the reference's AgentX row); fields it lacks, from the point.
    infx's identity fields are then set over it (identity_clash refuses one that disagrees)."""
    return {**reference_common(point), "model": point.get("model"), **point_parallelism(point), **raw}


def identity_clash(raw: dict, own: dict) -> str | None:
    """A result file that carries one of infx's identity fields with another value than infx's
    own is refused: identity comes only from the launch record (the same value is no clash)."""
    clashes = [key for key in IDENTITY_FIELDS if key in raw and raw[key] != own.get(key)]
    if not clashes:
        return None
    shown = ", ".join(f"{key}={_shown(raw[key])} (infx: {_shown(own.get(key))})" for key in clashes[:3])
    return (
        f"it carries infx's own field(s) {shown} with another value; identity and provenance come only from infx's "
        "launch record"
    )
