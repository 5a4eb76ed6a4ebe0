"""Per-point artifact folders -> result rows in the reference's aggregate-row shape, plus a
verdict per point.

A folder is what run-point.yml uploads: the launch record `<name>_launch.json` (the point,
the lane, the srt-slurm pin, the Slurm job and how it ended) and the staged result files,
`<name>_<dir>_conc<C>_gpus_<G>[_ctx_<P>_gen_<D>].json` (sa-bench, fixed sequence lengths) or
`<name>_conc<C>.json` (AgentX aggregates). Per-GPU throughput divides as the reference does:

| | single node | multinode |
|---|---|---|
| GPUs | tp x pp x pcp | prefill + decode GPUs from the file name (`_ctx_P_gen_D`; none: G and 0) |
| `tput_per_gpu` | total / GPUs | total / (prefill + decode) |
| `output_tput_per_gpu` | output / GPUs | output / decode (total GPUs when decode is 0) |
| `input_tput_per_gpu` | (total - output) / GPUs | (total - output) / prefill |

Every `*_ms` key becomes the key without `_ms`, in seconds; every TPOT statistic also yields
`*_intvty` = 1000 / TPOT(ms), tokens/s per user (the reference's std_intvty quirk included,
so its consumers read the rows unchanged). AgentX aggregates are already rows; infx adds
only its own (hyphenated) identity and provenance fields.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path

from ..diagnostics import Diagnostic, error
from ..points import concurrencies
from . import validate
from .schema import result_row_problem

LAUNCH_RECORD_SUFFIX = "_launch.json"
FIXED_FILE = re.compile(r"(?:^|_)conc(?:urrency_)?(?P<conc>\d+)_gpus_(?P<gpus>\d+)(?:_ctx_(?P<ctx>\d+)_gen_(?P<gen>\d+))?\.json$")
AGENTIC = "agentic-coding"
FIXED = "fixed-seq-len"
OK, INVALID, FAILED = "ok", "invalid", "failed"
AIPERF_AGGREGATE = "profile_export_aiperf.json"


@dataclass
class PointVerdict:
    """What became of one point: ok, invalid (a result that is not one) or failed (no result)."""

    artifact: str
    status: str
    reasons: list[str] = field(default_factory=list)
    point_id: str | None = None
    config_key: str | None = None
    conc: list[int] = field(default_factory=list)
    rows: int = 0

    def to_json(self) -> dict:
        return {"artifact": self.artifact, "status": self.status, "reasons": self.reasons, "point-id": self.point_id,
                "config-key": self.config_key, "conc": self.conc, "rows": self.rows}

    @classmethod
    def from_json(cls, data: dict) -> "PointVerdict":
        return cls(data["artifact"], data["status"], list(data.get("reasons") or []), data.get("point-id"),
                   data.get("config-key"), list(data.get("conc") or []), int(data.get("rows") or 0))

    @property
    def reason(self) -> str:
        """One line: the reasons joined."""
        return "; ".join(self.reasons).replace("\n", " ")


@dataclass
class Collected:
    rows: list[dict] = field(default_factory=list)
    points: list[PointVerdict] = field(default_factory=list)

    @property
    def diagnostics(self) -> list[Diagnostic]:
        return [error(p.artifact, None, f"result-{p.status}",
                      f"point {p.point_id or '?'} ({p.config_key or 'unknown config key'}): {p.reason}",
                      HINTS[p.status]) for p in self.points if p.status != OK]

    def to_json(self) -> dict:
        return {"rows": self.rows, "points": [p.to_json() for p in self.points]}


HINTS = {
    INVALID: "The point ran but its result cannot be used; rerun it (infx github rerun-failed) after reading its logs.",
    FAILED: "The launch did not produce a result; its launch record and multinode_server_logs.tar.gz say why.",
}


def _concs(point: dict) -> list[int]:
    """The point's concurrencies that are integers (a launch record is read as it was written)."""
    return [int(c) for c in concurrencies(point) if isinstance(c, int) and not isinstance(c, bool)]


def _flag(value) -> str:
    """The reference writes dp-attention flags as the strings its environment carried."""
    return "true" if value is True else "false" if value is False else str(value)


def _read_json(path: Path) -> dict | str:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        return f"{path.name} is not readable JSON ({exc})"
    return data if isinstance(data, dict) else f"{path.name} is not a JSON object"


def identity(record: dict, point: dict, artifact: str, result_file: str) -> dict:
    """infx's own fields: which point, from which run, on which lane and srt-slurm, how the job ended."""
    pin = record.get("srt-slurm") if isinstance(record.get("srt-slurm"), dict) else {}
    job = record.get("job-id")
    fields = {
        "config-key": point.get("config-key"), "point-id": record.get("point-id"),
        "recipe-fingerprint": point.get("recipe-fingerprint"),
        "scenario-type": AGENTIC if point.get("scenario-type") == AGENTIC else FIXED,
        "lane": record.get("lane"), "run-id": record.get("run-id"), "run-attempt": record.get("run-attempt"),
        "srt-slurm-commit": pin.get("commit"), "job-id": str(job) if job is not None else None,
        "terminal-state": record.get("terminal-state"), "artifact": artifact, "result-file": result_file,
    }
    if point.get("result-key") or record.get("result-key"):
        fields["result-key"] = point.get("result-key") or record.get("result-key")
    return fields


def reference_common(point: dict) -> dict:
    """The fields process_result.py takes from the job's environment, here from the point itself."""
    common = {
        "hw": str(point.get("runner", "")).removeprefix("cluster:"), "image": point.get("image"),
        "infmax_model_prefix": point.get("model-prefix"), "framework": point.get("framework"),
        "precision": point.get("precision"), "spec_decoding": point.get("spec-decoding", "none"),
        "disagg": bool(point.get("disagg", False)), "recipe_fingerprint": point.get("recipe-fingerprint", ""),
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


def point_topology(point: dict, prefill_gpus: int | None = None, decode_gpus: int | None = None) -> dict:
    """The reference's topology fields for a point. Multinode GPU counts come from the sa-bench
    file name when given, else from workers x tp x pp x pcp per role (as the AgentX aggregation
    counts them); with no decode GPUs the decode parallelism is written as the reference does."""
    prefill, decode = point.get("prefill"), point.get("decode")
    if not (isinstance(prefill, dict) and isinstance(decode, dict)):
        return {"is_multinode": False, "tp": point.get("tp"), "pp": point.get("pp", 1), "dcp_size": point.get("dcp-size", 1),
                "pcp_size": point.get("pcp-size", 1), "ep": point.get("ep"), "dp_attention": _flag(point.get("dp-attn"))}

    def gpus(role: dict) -> int:
        return int(role.get("num-worker", 1)) * int(role.get("tp", 1)) * int(role.get("pp", 1)) * int(role.get("pcp-size", 1))

    prefill_gpus = gpus(prefill) if prefill_gpus is None else prefill_gpus
    decode_gpus = gpus(decode) if decode_gpus is None else decode_gpus
    has_decode = decode_gpus > 0
    return {
        "is_multinode": True,
        "prefill_tp": prefill.get("tp"), "prefill_pp": prefill.get("pp", 1), "prefill_dcp_size": prefill.get("dcp-size", 1),
        "prefill_pcp_size": prefill.get("pcp-size", 1), "prefill_ep": prefill.get("ep"),
        "prefill_dp_attention": _flag(prefill.get("dp-attn")), "prefill_num_workers": prefill.get("num-worker"),
        "decode_tp": decode.get("tp") if has_decode else 0, "decode_pp": decode.get("pp", 1) if has_decode else 1,
        "decode_dcp_size": decode.get("dcp-size", 1) if has_decode else 1,
        "decode_pcp_size": decode.get("pcp-size", 1) if has_decode else 1,
        "decode_ep": decode.get("ep") if has_decode else 0, "decode_dp_attention": _flag(decode.get("dp-attn")),
        "decode_num_workers": decode.get("num-worker"), "num_prefill_gpu": prefill_gpus, "num_decode_gpu": decode_gpus,
    }


def fixed_seq_row(point: dict, raw: dict, match: re.Match) -> dict:
    total, output = float(raw["total_token_throughput"]), float(raw["output_throughput"])
    row = {**reference_common(point), "conc": int(raw["max_concurrency"]), "model": raw.get("model_id") or point.get("model"),
           "isl": int(point.get("isl") or 0), "osl": int(point.get("osl") or 0)}
    if isinstance(point.get("prefill"), dict):
        gpus = int(match["gpus"])
        prefill_gpus, decode_gpus = (int(match["ctx"]), int(match["gen"])) if match["ctx"] else (gpus, 0)
        row |= point_topology(point, prefill_gpus, decode_gpus)
        row |= {"tput_per_gpu": total / (prefill_gpus + decode_gpus),
                "output_tput_per_gpu": output / (decode_gpus if decode_gpus > 0 else prefill_gpus + decode_gpus),
                "input_tput_per_gpu": (total - output) / prefill_gpus}
    else:
        count = int(point.get("tp", 1)) * int(point.get("pp", 1)) * int(point.get("pcp-size", 1))
        row |= point_topology(point)
        row |= {"tput_per_gpu": total / count, "output_tput_per_gpu": output / count, "input_tput_per_gpu": (total - output) / count}
    return row | convert_units(raw)


def agentic_row(point: dict, raw: dict, conc: int) -> dict:
    """The aggregate as written (the reference's AgentX row); fields it lacks, from the point."""
    return {**reference_common(point), "model": point.get("model"), **point_topology(point), **raw, "conc": raw.get("conc") or conc}


def find_launch_record(folder: Path) -> Path | str:
    records = sorted(folder.glob(f"*{LAUNCH_RECORD_SUFFIX}"))
    if not records:
        return f"no launch record (*{LAUNCH_RECORD_SUFFIX}): the launch never ran, or the artifact is incomplete"
    if len(records) > 1:
        return f"{len(records)} launch records ({', '.join(r.name for r in records)}); one artifact holds one point"
    return records[0]


def _aiperf_for(folder: Path, conc: int, planned: list[int]) -> dict | None:
    """aiperf's own aggregate for this concurrency when the artifact's logs hold it unambiguously."""
    found = sorted(folder.glob(f"LOGS/**/{AIPERF_AGGREGATE}"))
    tagged = [p for p in found if re.search(rf"(?:^|[^0-9])(?:conc|c){conc}(?:[^0-9]|$)", str(p.relative_to(folder)))]
    pick = tagged[0] if len(tagged) == 1 else found[0] if len(found) == 1 and len(planned) == 1 else None
    data = _read_json(pick) if pick else None
    return data if isinstance(data, dict) else None


def collect_point(folder: Path) -> tuple[list[dict], PointVerdict]:
    verdict = PointVerdict(folder.name, OK)
    where = find_launch_record(folder)
    if isinstance(where, str):
        verdict.status, verdict.reasons = FAILED, [where]
        return [], verdict
    record = _read_json(where)
    if isinstance(record, str) or not isinstance(record.get("point"), dict):
        verdict.status, verdict.reasons = INVALID, [record if isinstance(record, str) else f"{where.name} carries no point"]
        return [], verdict
    point = record["point"]
    verdict.point_id, verdict.config_key, verdict.conc = record.get("point-id"), point.get("config-key"), _concs(point)
    if record.get("exit-code") != 0:
        message = str(record.get("message") or "the launch did not finish").strip().splitlines()
        verdict.status, verdict.reasons = FAILED, [message[0] if message else "the launch did not finish"]
        return [], verdict
    name = record.get("result-name") or where.name[: -len(LAUNCH_RECORD_SUFFIX)]
    agentic = point.get("scenario-type") == AGENTIC
    rows, found, reasons = [], [], []
    for path in sorted(folder.glob("*.json")):
        if path == where:
            continue
        if agentic:
            match = re.fullmatch(rf"{re.escape(name)}_conc(\d+)\.json", path.name)
        else:
            match = FIXED_FILE.search(path.name)
        if not match:
            continue
        raw = _read_json(path)
        if isinstance(raw, str):
            reasons.append(raw)
            continue
        if agentic:
            conc = int(match.group(1))
            problem = validate.agentic_problem(raw, _aiperf_for(folder, conc, verdict.conc))
            row = None if problem else agentic_row(point, raw, conc)
        else:
            problem = validate.fixed_seq_problem(raw) or validate.gpu_count_problem(match, isinstance(point.get("prefill"), dict))
            conc = int(raw["max_concurrency"]) if problem is None else int(match["conc"])
            row = None if problem else fixed_seq_row(point, raw, match)
        found.append(conc)
        if problem:
            reasons.append(f"concurrency {conc}: {problem}")
            continue
        row = identity(record, point, folder.name, path.name) | row
        schema_problem = result_row_problem(row)
        if schema_problem:
            reasons.append(f"concurrency {conc}: {path.name} gives a row the schema refuses: {schema_problem}")
            continue
        rows.append(row)
    missing = validate.missing_concurrencies(verdict.conc, found)
    if missing:
        reasons.insert(0, missing)
    if reasons:
        verdict.status, verdict.reasons = INVALID, reasons
        return [], verdict
    verdict.rows = len(rows)
    return rows, verdict


def is_artifact_folder(folder: Path) -> bool:
    return folder.is_dir() and any(folder.glob(f"*{LAUNCH_RECORD_SUFFIX}"))


def expand_folders(paths: list[Path]) -> list[Path]:
    """Each argument is a point's folder, or a folder of downloaded point folders (what
    actions/download-artifact writes: one subfolder per artifact)."""
    folders = []
    for path in paths:
        if is_artifact_folder(path) or not path.is_dir():
            folders.append(path)
            continue
        children = sorted(p for p in path.iterdir() if p.is_dir())
        if children:
            folders.extend(children)
        elif any(path.iterdir()):  # a point's folder without a launch record: reported as failed
            folders.append(path)
        # an empty folder (no artifact was downloaded) holds no point
    return folders


def collect(paths: list[Path]) -> Collected:
    result = Collected()
    for folder in expand_folders(paths):
        try:
            rows, verdict = collect_point(folder)
        except (ValueError, TypeError, KeyError, AttributeError, ZeroDivisionError) as exc:
            # A hand-edited or foreign launch record: say so instead of failing the whole collection.
            rows, verdict = [], PointVerdict(folder.name, INVALID, [f"the launch record or a result file is malformed "
                                                                     f"({type(exc).__name__}: {exc})"])
        result.rows.extend(rows)
        result.points.append(verdict)
    return result
