"""The point (infx/points.py ``Point``): read once from a row that passed its schema, it answers
what readers ask (id, concurrencies, runner, scenario, agentic, eval, GPU-hours, result key) as the
row functions do, and writes the row back byte for byte, key order kept."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from dataclasses import FrozenInstanceError, fields
from pathlib import Path

import pytest

from infx.diagnostics import InfxError
from infx.matrix.rowschema import row_findings
from infx.points import Point, concurrencies, gpu_hours, point_id, required_row_fields
from infx.scenarios import is_agentic, scenario_type
from infx.sweepplan import SweepPlan

REPO = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def rows() -> list[dict]:
    """The bundled matrix's rows (multinode, fixed-seq-len and agentic) and one single-node row."""
    done = subprocess.run(
        [sys.executable, "-m", "infx", "matrix", "--format", "json"],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=120,
        check=True,
    )
    matrix = json.loads(done.stdout)
    single = {
        key: value
        for key, value in matrix[0].items()
        if key not in ("prefill", "decode", "node-count", "kv-p2p-transfer")
    }
    single.update({"isl": 1024, "osl": 1024, "tp": 8, "pp": 1, "dcp-size": 1, "pcp-size": 1, "ep": 8})
    single.update({"dp-attn": False, "conc": 16, "disagg": False, "max-model-len": 2248})
    single.pop("eval-conc", None)
    single.pop("eval-all-concs", None)
    found = [row for row in [*matrix, single] if row_findings(row)]
    assert not found, row_findings(found[0])
    return [*matrix, single]


def test_a_point_writes_its_row_back_byte_for_byte(rows):
    for row in rows:
        point = Point.from_row(row)
        assert json.dumps(point.row()) == json.dumps(row)
        assert point.row() is not point.row()  # a new dict: a caller may change its copy


def test_a_point_answers_as_the_row_functions_do(rows):
    for row in rows:
        point = Point.from_row(row)
        assert point.id == point_id(row)
        assert point.concurrencies == tuple(concurrencies(row))
        assert point.runner == row["runner"] and point.config_key == row["config-key"]
        assert point.scenario == scenario_type(row) and point.agentic == is_agentic(row)
        assert point.gpu_hours == gpu_hours(row)
        assert point.asks_eval == (row["run-eval"] or row.get("eval-only") is True)
        assert point.result_key is None and point.model_prefix == row["model-prefix"]
    assert {Point.from_row(row).agentic for row in rows} == {True, False}
    assert any(Point.from_row(row).prefill is None for row in rows)  # the single-node row


def test_a_result_key_is_set_in_place_or_written_last(rows):
    row = rows[0]
    point = Point.from_row(row)
    keyed = point.with_result_key("k" * 64)
    assert keyed.result_key == "k" * 64 and point.result_key is None
    assert json.dumps(keyed.row()) == json.dumps({**row, "result-key": "k" * 64})
    moved = {"result-key": "old", **row}
    again = Point.from_row(moved).with_result_key("new")
    assert json.dumps(again.row()) == json.dumps({**moved, "result-key": "new"})
    with pytest.raises(FrozenInstanceError):
        point.runner = "other"  # type: ignore[misc]


def test_the_fields_every_row_has_are_the_points_required_ones():
    required = {spec.name for spec in fields(Point) if spec.default is spec.default_factory}  # both MISSING
    assert required == {Point.attribute(name) for name in required_row_fields()}


def test_a_point_file_and_point_json_read_into_a_point(rows, tmp_path):
    path = tmp_path / "point.json"
    path.write_text(json.dumps(rows[0]))
    assert Point.read(str(path)) == Point.from_row(rows[0])
    assert Point.read(None, {"POINT_JSON": json.dumps(rows[1])}).row() == rows[1]
    path.write_text(json.dumps({key: value for key, value in rows[0].items() if key != "runner"}))
    with pytest.raises(InfxError, match="the point has no runner"):
        Point.read(str(path))


def test_the_plans_rows_read_into_points(rows):
    plan = SweepPlan.from_json(rows[:5])
    assert tuple(point.row() for point in plan.points) == tuple(plan.rows)
    assert Point.from_rows(plan.rows) == plan.points


PACKAGE = Path(__file__).resolve().parent.parent / "infx"


# --- a row's fields are read through Point ------------------------------------------------------------

# The modules that read and write the row itself: the matrix builds it from the master configs (whose
# keys share its names), Point reads it once, the worker and scenario notations read its sections.
ROW_MODULES = ("infx.matrix", "infx.config", "infx.points", "infx.workers", "infx.scenarios")
# Readers still indexing a row dict by its field names, and how often (issue 30: each moves onto Point;
# a count may only fall, and a module that reaches 0 leaves the table).
NOT_YET_ON_POINT = {
    "infx.changelog.appendonly": 8,
    "infx.changelog.entry": 1,
    "infx.changelog.plan": 3,
    "infx.commands.launch": 5,
    "infx.evalsuite": 7,
    "infx.launch.agentic": 2,
    "infx.launch.checks": 2,
    "infx.launch.evalenv": 14,
    "infx.launch.plan": 3,
    "infx.launch.planrules": 6,
    "infx.launch.record": 1,
    "infx.launch.staging": 2,
    "infx.results.accuracy": 1,
    "infx.results.collect": 1,
    "infx.results.compare": 4,
    "infx.results.evalgate": 2,
    "infx.results.evals.rows": 7,
    "infx.results.plot": 1,
    "infx.results.rows": 24,
    "infx.workflows.baseline": 2,
    "infx.workflows.report": 8,
    "infx.workflows.rerun": 1,
    "infx.workflows.reuse": 2,
}


def row_field_names() -> set[str]:
    """Every hyphenated field name the row schema declares, at any depth."""
    names: set[str] = set()

    def walk(node: object) -> None:
        if isinstance(node, dict):
            names.update(node.get("properties", {}))
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(json.loads((PACKAGE / "schemas" / "row.schema.json").read_text()))
    return {name for name in names if "-" in name}


def row_field_reads(path: Path, names: set[str]) -> int:
    """How often a module indexes a mapping by one of ``names`` (``x["name"]``, ``.get/.pop/.setdefault("name")``)."""
    count = 0
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        key = None
        if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant):
            key = node.slice.value
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in ("get", "pop", "setdefault")
            and node.args
            and isinstance(node.args[0], ast.Constant)
        ):
            key = node.args[0].value
        count += key in names
    return count


def test_outside_the_row_modules_a_row_is_read_through_point():
    names = row_field_names()
    assert {"config-key", "recipe-fingerprint", "num-worker"} <= names
    found = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        module = ".".join(("infx", *path.relative_to(PACKAGE).with_suffix("").parts)).removesuffix(".__init__")
        if any(module == m or module.startswith(m + ".") for m in ROW_MODULES):
            continue
        if reads := row_field_reads(path, names):
            found[module] = reads
    grown = {m: n for m, n in found.items() if n > NOT_YET_ON_POINT.get(m, 0)}
    assert not grown, f"row fields indexed outside Point (read them as Point attributes): {grown}"
    done = sorted(m for m in NOT_YET_ON_POINT if found.get(m, 0) < NOT_YET_ON_POINT[m])
    assert not done, f"fewer row reads than NOT_YET_ON_POINT says: lower or drop {done}"


def test_a_row_read_by_its_field_name_is_counted(tmp_path: Path):
    module = tmp_path / "reader.py"
    module.write_text(
        'def f(row, other):\n    return row["config-key"], row.get("exp-name"), other["name"], row.pop("x")\n'
    )
    assert row_field_reads(module, {"config-key", "exp-name"}) == 2
