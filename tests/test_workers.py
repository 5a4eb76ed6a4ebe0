"""infx/workers.py: the one notation of a topology, the same whether the plan or the results name it."""

from __future__ import annotations

from infx.results.collect import collect
from infx.results.rowlabels import topology
from infx.sweepplan import SweepPlan
from infx.workers import Parallelism, row_topology, topology_label
from infx.workflows.planning import plan_table
from testing.artifacts import bundled_row, point_folder, sa_bench

RAW = "{name}_sa-bench_isl_8192_osl_1024_conc4_gpus_24_ctx_8_gen_16.json"


def test_the_notation():
    assert topology_label(Parallelism(8, 8, dp_attention=True)) == "tp8 ep8 dpa"
    assert topology_label(Parallelism(8, 1, pp=2)) == "tp8 ep1 pp2"
    assert (
        topology_label(prefill=Parallelism(8, 8, dp_attention=True), decode=Parallelism(16, 16), workers=(3, 1))
        == "3P1D · P tp8 ep8 dpa · D tp16 ep16"
    )


def test_a_planned_point_and_its_result_row_name_one_topology(tmp_path):
    planned = {**bundled_row("dsv4-fp4-gb300-dynamo-vllm", 0), "conc": [4]}
    point_folder(tmp_path, planned, {RAW: sa_bench("results_concurrency_4_gpus_24_ctx_8_gen_16.json")})
    [row] = collect([tmp_path]).rows
    assert row_topology(planned) == topology(row) == "1P6D · P tp4 ep4 dpa · D tp4 ep1"
    assert f"  {row_topology(planned)}  " in plan_table(SweepPlan.from_json([planned]))  # the plan's table too
