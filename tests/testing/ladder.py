"""The seed change's Mooncake ladder as measured results: its three points' artifact folders and their
collected results, with the figures the change was announced with (baseline and head)."""

from __future__ import annotations

from testing.artifacts import agentic_for, bundled_row, point_folder
from testing.cli import run_cli

LADDER = "dsv4-fp4-gb300-dynamo-sglang-agentic-disagg"
VLLM_DISAGG = "dsv4-fp4-gb300-dynamo-vllm"
# ladder index -> (topology, conc, baseline tput/GPU, head tput/GPU, baseline mean TTFT s, head mean TTFT s)
SEED = {
    0: ("1P1D", 120, 1000.0, 1132.0, 10.0, 7.84),
    2: ("2P1D", 960, 800.0, 947.2, 20.0, 13.86),
    4: ("4P1D", 2400, 600.0, 705.0, 30.0, 18.81),
}
SEED_FIGURES = {
    "1P1D": ("+13.2 %", "\u221221.6 %"),
    "2P1D": ("+18.4 %", "\u221230.7 %"),
    "4P1D": ("+17.5 %", "\u221237.3 %"),
}


def ladder_folders(root, which: str, **overrides) -> None:
    """The seed's three points as `which` ("baseline" or "head") measured them: one artifact folder each under
    `root`."""
    for index, (_, conc, base_tput, head_tput, base_ttft, head_ttft) in SEED.items():
        row = bundled_row(LADDER, index)
        tput, ttft = (base_tput, base_ttft) if which == "baseline" else (head_tput, head_ttft)
        aggregate = agentic_for(
            row,
            conc,
            request_metrics__throughput__per_gpu__total_tput_tps=tput,
            request_metrics__latency__ttft__mean=ttft,
            **overrides,
        )
        point_folder(root, row, {f"{{name}}_conc{conc}.json": aggregate})


def ladder_results(tmp_path, which: str, **overrides) -> str:
    """`ladder_folders` collected into `<tmp_path>/<which>.json`."""
    root = tmp_path / which
    ladder_folders(root, which, **overrides)
    out = tmp_path / f"{which}.json"
    done = run_cli("results", "collect", str(root), "--output", str(out))
    assert done.returncode == 0, done.stderr
    return str(out)
