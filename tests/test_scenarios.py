"""infx/scenarios.py is the one table of scenario names: every scenario and sequence the bundled
configs, the reference corpus and the lane profiles use is in it, and the JSON Schemas list the same
scenarios."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest
import yaml

from infx.matrix.buckets import bucket_of
from infx.scenarios import (
    AGENTIC,
    FIXED,
    SCENARIO_TYPES,
    SEQ_NAMES,
    is_agentic,
    parse_seq_name,
    scenario_label,
    scenario_type,
    seq_name,
)
from testing.corpus import CORPUS, REFERENCE_ROWS

REPO = Path(__file__).resolve().parent.parent
SCHEMAS = REPO / "infx" / "schemas"
REPOSITORIES = [pytest.param(REPO, id="bundled"), pytest.param(CORPUS, id="reference corpus")]


def _schema(name: str) -> dict:
    return json.loads((SCHEMAS / f"{name}.schema.json").read_text())


def _masters(root: Path) -> list[dict]:
    return [yaml.safe_load(path.read_text()) for path in sorted((root / "configs").glob("*-master.yaml"))]


@pytest.mark.parametrize("root", REPOSITORIES)
def test_every_scenario_and_sequence_a_master_config_uses_is_in_the_table(root):
    kinds, pairs = set(), set()
    for master in _masters(root):
        for entry in master.values():
            kinds |= set(entry["scenarios"])
            pairs |= {(item["isl"], item["osl"]) for item in entry["scenarios"].get(FIXED, [])}
    assert kinds == set(SCENARIO_TYPES), kinds  # both are used, nothing else
    assert pairs and pairs <= set(SEQ_NAMES), pairs - set(SEQ_NAMES)


@pytest.mark.parametrize("root", REPOSITORIES)
def test_every_scenario_a_changelog_entry_names_is_in_the_table(root):
    named = {
        kind
        for entry in yaml.safe_load((root / "perf-changelog.yaml").read_text())
        for kind in entry.get("scenario-type", [])
    }
    assert named == set(SCENARIO_TYPES), named


def test_every_scenario_a_lane_route_matches_is_in_the_table():
    routes = [
        route
        for path in sorted((REPO / "runners").glob("*.yaml"))
        for route in yaml.safe_load(path.read_text())["routes"]
    ]
    assert routes and {route["match"]["scenario"] for route in routes} <= set(SCENARIO_TYPES)


def test_the_reference_rows_scenarios_and_sequences_are_the_tables():
    rows = json.loads(gzip.decompress(REFERENCE_ROWS.read_bytes()))
    assert {scenario_type(row) for row in rows} == set(SCENARIO_TYPES)
    assert {row.get("scenario-type") for row in rows} == {None, AGENTIC}  # the reference marks only AgentX rows
    fixed = [row for row in rows if not is_agentic(row)]
    assert {(row["isl"], row["osl"]) for row in fixed} <= set(SEQ_NAMES)
    # the bucket a fixed row lands in is named by the table (single_node/8k1k, multi_node/1k1k, ...)
    assert {bucket_of(row).split("/")[1] for row in fixed} == set(SEQ_NAMES.values())


def test_the_schemas_list_exactly_the_tables_scenarios():
    master = _schema("master")["$defs"]["scenarios"]["properties"]
    assert list(master) == list(SCENARIO_TYPES)
    route = _schema("lane")
    found = []

    def walk(node):
        if isinstance(node, dict):
            if isinstance(node.get("scenario"), dict) and "enum" in node["scenario"]:
                found.append(node["scenario"]["enum"])
            for child in node.values():
                walk(child)
        elif isinstance(node, list):
            for child in node:
                walk(child)

    walk(route)
    assert found == [list(SCENARIO_TYPES)]
    assert _schema("result-row")["properties"]["scenario-type"]["enum"] == list(SCENARIO_TYPES)
    entry = _schema("changelog-entry")["properties"]["scenario-type"]
    assert entry["items"]["enum"] == list(SCENARIO_TYPES)


@pytest.mark.parametrize("pair, name", [((1024, 1024), "1k1k"), ((8192, 1024), "8k1k"), ((2048, 1024), "2048_1024")])
def test_a_sequence_name_reads_back_as_its_pair(pair, name):
    assert seq_name(*pair) == name and parse_seq_name(name) == pair


@pytest.mark.parametrize("name", ["", "8k", "0_1024", "1024_", "_1024", "a_b", "1k1k "])
def test_what_is_no_sequence_name_is_refused(name):
    assert parse_seq_name(name) is None


@pytest.mark.parametrize(
    "row, label",
    [
        ({"isl": 8192, "osl": 1024}, "8k/1k"),
        ({"isl": 1000, "osl": 1024}, "1000/1k"),
        ({"scenario-type": AGENTIC}, AGENTIC),
        ({"scenario-type": FIXED, "isl": 1024, "osl": 1024}, "1k/1k"),
    ],
)
def test_a_comparison_labels_a_scenario_by_its_sequence_or_as_agentic(row, label):
    assert scenario_label(row) == label
