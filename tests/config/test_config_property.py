"""Random mutations of valid configs never crash the validator, and jsonschema-rs agrees with jsonschema."""

from __future__ import annotations

import copy
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator

from infx.config.load import SHIPPED_COMPONENTS, ConfigSet
from infx.config.validate import validate_config_set
from infx.diagnostics import Diagnostic
from infx.schema import field_names, is_valid, load_schema
from infx.yamlio import Document, load_yaml

REPO = Path(__file__).resolve().parent.parent.parent
FIXTURES = REPO / "tests" / "fixtures"


def _data(path: Path):
    doc, problems = load_yaml(path)
    assert not problems
    return doc.data


SEEDS = [
    entry
    for path in [*sorted((FIXTURES / "positive").glob("*.yaml")), REPO / "configs" / "nvidia-master.yaml"]
    for entry in _data(path).values()
]
RUNNERS = _data(FIXTURES / "runners.yaml")
COMPONENTS = _data(SHIPPED_COMPONENTS)
SCHEMA = load_schema("master")
ENTRY_VALIDATOR = Draft202012Validator(
    {"$schema": SCHEMA["$schema"], "$defs": SCHEMA["$defs"], "$ref": "#/$defs/entry"}
)


KEYS = st.one_of(
    st.sampled_from(sorted(field_names(SCHEMA)) + ["duration", "conc_list"]), st.text(max_size=8), st.integers(-2, 2)
)
SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-3, 20),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from(
        ["none", "dram", "nvme", "mtp", "mooncake", "hicache", "image:x/y:1", "cluster:gb300-nv", "b200", "A=1", ""]
    ),
    st.text(max_size=6),
)
SAME_TYPE = {
    bool: st.booleans(),
    int: st.integers(0, 20),
    float: st.floats(0, 1.5),
    str: st.sampled_from(
        [
            "none",
            "dram",
            "nvme",
            "mtp",
            "mooncake",
            "lmcache",
            "hicache",
            "image:x/y:1",
            "cluster:gb300-nv",
            "b200",
            "gb300-nv",
            "v1.2",
        ]
    ),
}
VALUES = st.recursive(
    SCALARS,
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(KEYS, inner, max_size=3)),
    max_leaves=6,
)


def _containers(node, path=()):
    yield path, node
    children = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else ()
    for key, child in children:
        yield from _containers(child, path + (key,))


@st.composite
def mutated_entries(draw):
    entry = copy.deepcopy(draw(st.sampled_from(SEEDS)))
    for _ in range(draw(st.integers(1, 3))):
        places = [(path, node) for path, node in _containers(entry) if isinstance(node, (dict, list)) and node]
        if not places:
            break
        _, node = draw(st.sampled_from(places))
        key = draw(st.sampled_from(list(node) if isinstance(node, dict) else list(range(len(node)))))
        action = draw(st.sampled_from(["replace", "delete", "add", "zero", "same-type", "same-type", "move"]))
        if action == "same-type":  # keeps the schema happy more often, so the cross-field rules run
            node[key] = draw(SAME_TYPE.get(type(node[key]), VALUES))
        elif action == "move" and isinstance(node, dict):  # a field at another level of the entry
            target = draw(st.sampled_from([n for _, n in _containers(entry) if isinstance(n, dict)]))
            target[key] = node.pop(key)
        elif action == "replace":
            node[key] = draw(VALUES)
        elif action == "delete":
            del node[key]
        elif action == "add" and isinstance(node, dict):
            node[draw(KEYS)] = draw(VALUES)
        elif action == "add":
            node.append(draw(VALUES))
        else:
            node[key] = 0
    return entry


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(entry=mutated_entries(), key=st.one_of(st.sampled_from(["k", "k*", "dsv4-x"]), st.integers(0, 3)))
def test_mutations_give_diagnostics_never_exceptions(entry, key):
    doc = Document("m.yaml", {key: entry}, {})
    config_set = ConfigSet(
        runners=RUNNERS,
        components=COMPONENTS,
        runners_doc=Document("r.yaml", RUNNERS),
        components_doc=Document("c.yaml", COMPONENTS),
    )
    config_set.sources[key] = doc
    config_set.raw_entries[key] = entry
    diagnostics = validate_config_set(config_set)
    assert all(isinstance(d, Diagnostic) and d.rule and d.message for d in diagnostics)
    schema_ok = is_valid("master", entry, "#/$defs/entry")
    assert schema_ok == ENTRY_VALIDATOR.is_valid(entry)
    assert (key in config_set.entries) == schema_ok
