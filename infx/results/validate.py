"""When a point's result is not a result: the rules, each returning a one-line reason.

- a concurrency the point planned has no result file;
- a sa-bench file whose max_concurrency is not the concurrency its name says;
- nothing completed (a fixed-sequence file with `completed` 0, whose statistics the client
  then computes over [0], so a TPOT of 0 means "no request", not "infinitely fast");
- a TPOT of 0 with requests completed (every request produced at most one token);
- an AgentX point whose failed-request rate exceeds the reference's gate, 0.10 (the limit
  itself passes: a rate must be *greater* than the threshold to fail).
"""

from __future__ import annotations

import math
from typing import TypeGuard

AGENTIC_FAILED_REQUEST_THRESHOLD = 0.10  # the reference's AIPERF_FAILED_REQUEST_THRESHOLD
FIXED_REQUIRED = (
    "max_concurrency",
    "completed",
    "total_token_throughput",
    "output_throughput",
    "mean_ttft_ms",
    "median_ttft_ms",
    "median_tpot_ms",
    "median_itl_ms",
    "median_e2el_ms",
)
TPOT_STATISTICS = ("mean_tpot_ms", "median_tpot_ms")  # the ones an interactivity is read from


def _number(value) -> TypeGuard[int | float]:
    return type(value) in (int, float) and math.isfinite(value)


def fixed_seq_problem(raw: dict, conc: int) -> str | None:
    """Why a sa-bench result file (named for concurrency ``conc``) cannot become a row, or None."""
    missing = [key for key in FIXED_REQUIRED if not _number(raw.get(key))]
    if missing:
        return f"the file lacks numeric {', '.join(missing)} (is it a sa-bench --save-result file?)"
    if raw["max_concurrency"] != conc:
        return f"its max_concurrency is {raw['max_concurrency']!r}, but its name says concurrency {conc}"
    if raw["completed"] <= 0:
        return (
            f"no request completed (completed=0 of num_prompts={raw.get('num_prompts', '?')}); its TPOT of 0 "
            "means no data, not a result: every request failed, see the server logs"
        )
    zero = [key for key in TPOT_STATISTICS if raw[key] <= 0]
    if zero:
        return (
            f"{zero[0]} is 0 with {raw['completed']} requests completed: no request produced more than one "
            "output token, so TPOT and interactivity are undefined (is the OSL 1?)"
        )
    return None


def gpu_count_problem(name_match, multinode: bool) -> str | None:
    """A multinode file name must count at least one GPU and one prefill GPU (the divisors)."""
    gpus, ctx = int(name_match["gpus"]), name_match["ctx"]
    if multinode and (gpus <= 0 or (ctx is not None and int(ctx) <= 0)):
        return (
            f"the file name counts {gpus} GPUs and {ctx or gpus} prefill GPUs; per-GPU throughput needs at least one "
            "of each"
        )
    return None


def agentic_failed_rate(aggregate: dict, aiperf: dict | None) -> tuple[float, float] | str:
    """(failed, completed) requests of an AgentX point, or why they cannot be read.

    From aiperf's profile_export_aiperf.json when the artifact has it (the reference gate's
    source: failed = error_request_count.avg, completed = completed_request_count.avg, else
    request_count.avg + failed), else from the aggregate's request accounting."""
    if aiperf is not None:

        def avg(name):
            metric = aiperf.get(name)
            value = metric.get("avg") if isinstance(metric, dict) else None
            return value if _number(value) and value >= 0 else None

        successes, failed, completed = (
            avg("request_count"),
            avg("error_request_count") or 0.0,
            avg("completed_request_count"),
        )
        if successes is None:
            return "profile_export_aiperf.json has no numeric request_count.avg"
        return failed, completed if completed is not None else successes + failed
    accounting = aggregate.get("request_accounting")
    successful = aggregate.get("num_requests_successful")
    if not isinstance(accounting, dict) or not _number(successful):
        return "the aggregate has no request_accounting and num_requests_successful"
    failed = accounting.get("records_error_dropped", 0)
    if not _number(failed) or failed < 0:
        return f"request_accounting.records_error_dropped is {failed!r}, not a count"
    return float(failed), float(successful) + float(failed)


def agentic_problem(
    aggregate: dict, aiperf: dict | None, threshold: float = AGENTIC_FAILED_REQUEST_THRESHOLD
) -> str | None:
    counts = agentic_failed_rate(aggregate, aiperf)
    if isinstance(counts, str):
        return counts
    failed, completed = counts
    if (
        completed <= 0
        or not _number(aggregate.get("num_requests_successful"))
        or aggregate["num_requests_successful"] <= 0
    ):
        return "no request completed (num_requests_successful is 0): the replay produced no data"
    rate = failed / completed
    if rate > threshold:
        return (
            f"failed-request rate {failed:g}/{completed:g} = {rate:.1%} exceeds the AgentX gate of "
            f"{threshold:.0%} (the limit itself passes)"
        )
    return None


def missing_concurrencies(planned: list[int], found: list[int]) -> str | None:
    absent = [conc for conc in planned if conc not in found]
    if not absent:
        return None
    return (
        f"planned concurrenc{'y' if len(absent) == 1 else 'ies'} {', '.join(map(str, absent))} produced no result file"
    )
