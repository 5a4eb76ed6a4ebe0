"""configs/CONFIGS.md documents every schema field, its examples validate, its generated parts are current."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from infx.config import load_config_set
from infx.config.docs import CONFIGS_MD, render
from infx.config.load import SHIPPED_COMPONENTS
from infx.schema import field_names, load_schema, schema_diagnostics
from infx.yamlio import parse_yaml

REPO = Path(__file__).resolve().parent.parent.parent
TEXT = CONFIGS_MD.read_text()
EXAMPLES = re.findall(r"```yaml\n(.*?)```", TEXT, re.S)


@pytest.mark.parametrize("name", ["master", "runners", "components"])
def test_every_schema_field_is_documented(name):
    fields = field_names(load_schema(name))
    assert fields, "the schema lists no fields"
    undocumented = sorted(f for f in fields if f"`{f}`" not in TEXT)
    assert not undocumented, f"fields of {name}.schema.json missing from CONFIGS.md: {undocumented}"


def test_generated_sections_are_current():
    assert render(TEXT) == TEXT, "run `python3 -m infx.config.docs` to regenerate configs/CONFIGS.md"


def test_there_are_examples_of_every_file_kind():
    kinds = {("labels" in e) + 2 * ("kv-offload-backends" in e) for e in EXAMPLES}
    assert kinds == {0, 1, 2}


@pytest.mark.parametrize("index", range(len(EXAMPLES)))
def test_yaml_example_validates(index, tmp_path):
    text = EXAMPLES[index]
    doc, problems = parse_yaml(text, f"CONFIGS.md example {index}")
    assert not problems, problems
    side = {"labels": "runners", "kv-offload-backends": "components"}
    for top, schema in side.items():
        if top in doc.data:
            assert schema_diagnostics(schema, doc, doc.data) == []
            return
    path = tmp_path / "example-master.yaml"
    path.write_text(text)
    config_set, report = load_config_set([path], REPO / "configs" / "runners.yaml", SHIPPED_COMPONENTS)
    assert report.ok and not report.diagnostics, [d.message for d in report.diagnostics]
