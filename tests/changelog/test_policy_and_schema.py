"""The pr-link policy, its generated docs, the entry schema file and the real changelog."""

from __future__ import annotations

import json

import jsonschema
import pytest

from infx.changelog import entry as entry_module
from infx.changelog import policy
from infx.changelog.diff import diff_changelog
from infx.changelog.entry import parse_entry
from infx.yamlio import parse_yaml

from .conftest import PH, SLUG, C, E, K


def test_docs_section_is_generated_from_the_policy():
    text = policy.DOCS_FILE.read_text()
    section = text.split(policy.DOCS_BEGIN, 1)[1].split(policy.DOCS_END, 1)[0].strip("\n")
    assert section == policy.rules_markdown(policy.DOCS_SLUG), (
        "regenerate: python3 -c 'from infx.changelog.policy import write_docs; write_docs()'"
    )


@pytest.mark.parametrize(
    "link",
    [
        "TBD",
        "PLACEHOLDER",
        f"https://github.com/{SLUG}/pull/xxxx",
        f"https://github.com/{SLUG}/pull/YYYY",
        f"https://github.com/{SLUG}/pull/TBD",
        C(41),
        C(42) + "/files",
        "http://github.com/" + SLUG + "/pull/42",
    ],
)
def test_links_the_docs_call_rejected_are_rejected(link):
    rejection = policy.check_new_entry(link, SLUG, 42)
    assert rejection and repr(link) in rejection.message and policy.pr_line(SLUG, 42) in rejection.hint


@pytest.mark.parametrize("link", ["XXX", PH, C(42)])
def test_links_the_docs_call_accepted_are_accepted(link):
    assert policy.check_new_entry(link, SLUG, 42) is None
    assert (policy.check_new_entry(link, SLUG, None) is None) is (link == C(42))


def test_slug_is_a_parameter():
    assert policy.check_new_entry("https://github.com/acme/bench/pull/3", "acme/bench", None) is None
    assert policy.check_new_entry(C(3), "acme/bench", None) is not None


def test_schema_file_is_generated_from_the_field_table():
    assert json.loads(entry_module.SCHEMA_PATH.read_text()) == entry_module.json_schema(), (
        "regenerate: python3 -c 'from infx.changelog.entry import write_schema; write_schema()'"
    )


GOOD = {"config-keys": [K], "description": ["x"], "pr-link": "XXX"}
EXAMPLES = [
    GOOD,
    {**GOOD, "scenario-type": ["agentic-coding"]},
    {**GOOD, "evals-only": "yes"},
    {**GOOD, "eval-min-prefill-ep": 2},
    {**GOOD, "append-only": True},
    {**GOOD, "no-evals": True},
    {**GOOD, "config-keys": []},
    {**GOOD, "description": "x"},
    {**GOOD, "pr-link": 123},
    {**GOOD, "notes": "hi"},
    {**GOOD, "scenario-type": ["agentic"]},
    {**GOOD, "scenario-type": []},
    {**GOOD, "evals-only": 2},
    {**GOOD, "eval-min-prefill-ep": 0},
    {**GOOD, "append-only": True, "evals-only": True},
    {**GOOD, "append-only": True, "eval-min-prefill-ep": 3},
    {k: v for k, v in GOOD.items() if k != "pr-link"},
    {**GOOD, "description": [5]},
]


@pytest.mark.parametrize("data", EXAMPLES, ids=[str(i) for i in range(len(EXAMPLES))])
def test_model_and_published_schema_agree(data):
    entry, problems = parse_entry(data, 1, "f", lambda p: (1, 1))
    schema_ok = jsonschema.Draft202012Validator(entry_module.json_schema()).is_valid(data)
    assert (entry is not None) is schema_ok, problems


def test_settings_file_names_the_repository(repo_root, monkeypatch):
    monkeypatch.delenv("GITHUB_REPOSITORY", raising=False)
    doc, problems = parse_yaml((repo_root / "configs" / "infx.yaml").read_bytes(), "configs/infx.yaml")
    schema = json.loads((repo_root / "infx" / "schemas" / "infx-settings.schema.json").read_text())
    assert not problems and jsonschema.Draft202012Validator(schema).is_valid(doc.data)
    assert policy.resolve_slug(None, repo_root) == ("SemiAnalysisAI/InferenceX", "configs/infx.yaml")
    monkeypatch.setenv("GITHUB_REPOSITORY", "acme/bench")
    assert policy.resolve_slug(None, repo_root)[0] == "acme/bench" and policy.resolve_slug("o/n", repo_root)[0] == "o/n"


# --- the real 772-entry changelog --------------------------------------------------------


def test_real_changelog_parses_and_every_entry_is_valid(corpus):
    raw = (corpus / "perf-changelog.yaml").read_bytes()
    doc, problems = parse_yaml(raw, "perf-changelog.yaml")
    assert not problems and len(doc.data) == 772
    assert raw.count(b"\n- config-keys:") + raw.startswith(b"- config-keys:") == 772
    entries = [parse_entry(item, n + 1, "f", lambda p, n=n: doc.where((n, *p)))[0] for n, item in enumerate(doc.data)]
    assert all(entries)
    links = [e.pr_link for e in entries if not policy.is_canonical(e.pr_link, SLUG)]
    assert sorted(links) == sorted([C(2305) + "/changes", PH])  # the two known historical irregularities


def test_historical_irregularities_do_not_fail_a_pr_that_only_appends(corpus):
    base = (corpus / "perf-changelog.yaml").read_bytes()
    assert b"\n  \n- config-keys" in base  # whitespace-only separators exist in history
    change = diff_changelog(base, base + b"\n" + E(K, PH), file="perf-changelog.yaml", slug=SLUG, pr_number=42)
    assert change.ok and not change.diagnostics and [e.index for e in change.added] == [773]


def test_settings_file_errors_are_located_by_its_schema(tmp_path, monkeypatch):
    """configs/infx.yaml goes through the one schema path: a bad slug or an unknown key is located in the file."""
    from infx.diagnostics import InfxError

    monkeypatch.delenv("GITHUB_REPOSITORY", raising=False)
    (tmp_path / "configs").mkdir()
    (tmp_path / "configs" / "infx.yaml").write_text("# settings\nrepository: not-a-slug\nrepo: a/b\n")
    with pytest.raises(InfxError) as caught:
        policy.resolve_slug(None, tmp_path)
    found = {(d.rule, d.line) for d in caught.value.diagnostics}
    assert found == {("bad-format", 2), ("unknown-key", 3)} and caught.value.exit_code == 2
    assert policy.resolve_slug("o/n", tmp_path) == ("o/n", "--repo")  # the command line wins; the file is not read
