from hypothesis import given
from hypothesis import strategies as st

from infx.yamlio import MAX_NODES, parse_yaml


def rules(text):
    doc, problems = parse_yaml(text, "f.yaml")
    return [p.rule for p in problems]


def test_positions_point_at_keys_and_items():
    doc, problems = parse_yaml("a:\n  b:\n    - x\n    - y: 1\n", "f.yaml")
    assert problems == []
    assert doc.where(("a", "b")) == (2, 3)
    assert doc.where(("a", "b", 1, "y")) == (4, 7)
    assert doc.where(("a", "b", 1, "missing")) == (4, 7)  # nearest located ancestor


def test_duplicate_key_names_both_places():
    doc, problems = parse_yaml("a: 1\nb: 2\na: 3\n", "f.yaml")
    assert doc is None
    assert problems[0].rule == "yaml-duplicate-key"
    assert (problems[0].line, problems[0].column) == (3, 1)
    assert "line 1" in problems[0].message


def test_yaml11_underscore_integers():
    doc, _ = parse_yaml("mib: 2_063_837\n", "f.yaml")
    assert doc.data == {"mib": 2063837}


def test_tab_is_located_with_fix():
    _, problems = parse_yaml("a:\n\t- 1\n", "f.yaml")
    assert problems[0].rule == "yaml-syntax" and problems[0].line == 2
    assert "tab" in problems[0].message and "spaces" in problems[0].hint


def test_alias_bomb_refused_before_expansion():
    lines = ["a: &a [x, x, x, x, x, x, x, x, x, x]"]
    for i in range(1, 8):
        prev, name = chr(96 + i), chr(97 + i)
        lines.append(f"{name}: &{name} [" + ", ".join([f"*{prev}"] * 10) + "]")
    _, problems = parse_yaml("\n".join(lines) + "\n", "f.yaml")
    assert problems[0].rule == "yaml-too-large"
    assert f"{MAX_NODES:,}" in problems[0].message


def test_recursive_alias_and_unknown_tag_and_encoding():
    assert rules("a: &a [*a]\n") == ["yaml-recursive-alias"]
    assert rules("a: !!python/object:os.system x\n") == ["yaml-tag"]
    assert parse_yaml(b"a: \xff\n", "f.yaml")[1][0].rule == "yaml-encoding"


def test_empty_and_timestamps():
    doc, problems = parse_yaml("", "f.yaml")
    assert doc.data is None and problems == []
    doc, _ = parse_yaml("d: 2026-08-21\n", "f.yaml")
    assert doc.data == {"d": "2026-08-21"}


def test_the_cycle_collector_is_left_as_it_was():
    """parse_yaml pauses Python's cycle collector while it builds; it restores the state it
    found, after a clean document and after each kind of problem."""
    import gc

    assert gc.isenabled()
    for text in ("a: [1, 2]\n", "a: &x [*x]\n", "a: 1\na: 2\n", "a: [\n", b"\xff"):
        parse_yaml(text, "f.yaml")
        assert gc.isenabled(), text
    gc.disable()
    try:
        parse_yaml("a: [1, 2]\n", "f.yaml")
        assert not gc.isenabled()
    finally:
        gc.enable()


# The shape rules the fast patterns of yamlio must keep, written the plain (slow) way.
_ANCHOR_RULE = r"(?:^|[\s\[\{,:])&[^\s\[\]\{\},]"  # '&' where a node may start, then a name character
_COMPACT_PAIR_RULE = r"[-?][ \t]+[-?]"  # two block indicators nested on one line


@given(st.text(alphabet="&-? \t\n\r[]{},:ax\u00a0\u2003", max_size=40))
def test_fast_anchor_and_compact_scans_keep_their_rules(text):
    import re

    from infx import yamlio

    assert bool(yamlio._ANCHOR.search(text)) == bool(re.search(_ANCHOR_RULE, text, re.M))
    assert any(pair.search(text) for pair in yamlio._COMPACT_PAIRS) == bool(re.search(_COMPACT_PAIR_RULE, text))


def _marks_of(node, path=()):
    """Every position the loader must report, from PyYAML's own node graph: each key, each item."""
    import yaml

    marks = {}
    if isinstance(node, yaml.MappingNode):
        for key, value in node.value:
            marks[path + (key.value,)] = (key.start_mark.line + 1, key.start_mark.column + 1)
            marks.update(_marks_of(value, path + (key.value,)))
    elif isinstance(node, yaml.SequenceNode):
        for index, item in enumerate(node.value):
            marks[path + (index,)] = (item.start_mark.line + 1, item.start_mark.column + 1)
            marks.update(_marks_of(item, path + (index,)))
    return marks


def test_positions_of_the_corpus_are_pyyamls(corpus):
    """Guards the builder's inline path for plain strings: every key and item where PyYAML puts it."""
    import yaml

    for name in ("nvidia-master.yaml", "amd-master.yaml", "runners.yaml"):
        text = (corpus / "configs" / name).read_text()
        doc, problems = parse_yaml(text, name)
        assert not problems
        expected = _marks_of(yaml.compose(text, Loader=yaml.SafeLoader))
        assert {path: mark for path, mark in doc.marks.items() if path} == expected


def test_the_node_limit_counts_plain_strings_too(monkeypatch):
    from infx import yamlio

    monkeypatch.setattr(yamlio, "MAX_NODES", 10)
    text = "".join(f"k{i}: v{i}\n" for i in range(8))  # the root, then key and value of each entry
    _, problems = parse_yaml(text, "f.yaml")
    assert [(p.rule, p.line, p.column) for p in problems] == [("yaml-too-large", 5, 5)]  # node 11: the fifth value
    _, problems = parse_yaml("- a\n" * 12, "f.yaml")
    assert [(p.rule, p.line, p.column) for p in problems] == [("yaml-too-large", 10, 3)]  # node 11: the tenth item
    assert parse_yaml("".join(f"k{i}: v{i}\n" for i in range(4)), "f.yaml")[1] == []


def test_path_resolvers_registered_elsewhere_do_not_change_the_reader():
    """infx's loader has no path resolvers (so skips PyYAML's per-node bookkeeping for them);
    one another library registers on PyYAML's loaders neither retags nor breaks its reading."""
    import yaml

    from infx.yamlio import _BaseLoader

    had = "yaml_path_resolvers" in vars(_BaseLoader)
    saved = _BaseLoader.yaml_path_resolvers
    yaml.add_path_resolver("!custom", ["a"], dict, Loader=_BaseLoader)
    try:
        assert yaml.compose("a: {b: 1}\n", Loader=_BaseLoader).value[0][1].tag == "!custom"  # PyYAML's loader retags
        doc, problems = parse_yaml("a: {b: 1}\nc: [x]\n", "f.yaml")
        assert problems == [] and doc.data == {"a": {"b": 1}, "c": ["x"]}
        assert doc.where(("a", "b")) == (1, 5) and doc.where(("c", 0)) == (2, 5)
    finally:
        if had:
            _BaseLoader.yaml_path_resolvers = saved
        else:
            del _BaseLoader.yaml_path_resolvers
