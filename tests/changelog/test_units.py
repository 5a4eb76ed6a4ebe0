"""Rows 54-72 of reference/changelog-workflows.md §7 (the library-level cases), plus the
merge-base case, coverage and keys deleted by the same change — all on real git commits
where a revision is involved."""

from __future__ import annotations

import pytest
import yaml

from infx.changelog.appendonly import delta as append_only_delta
from infx.changelog.diff import diff_changelog
from infx.changelog.entry import parse_entry
from infx.changelog.fix import repair
from infx.changelog.gate import run_gate
from infx.changelog.keys import resolve
from infx.changelog.plan import PlanOptions, plan_rows, plan_sweep, trim_conc
from infx.config import load_config_set
from infx.keyglob import matching_keys
from infx.matrix import EvalMode, Selection, build_matrix

from .conftest import PH, SLUG, C, E, K

FILE = "perf-changelog.yaml"


def block(key: str, link: str) -> str:
    return yaml.safe_dump([{"config-keys": [key], "description": [f"Update {key}"], "pr-link": link}], sort_keys=False)


def judge(base: str, head: str, pr_number=None):
    return diff_changelog(base.encode(), head.encode(), file=FILE, slug=SLUG, pr_number=pr_number)


def rules(change) -> set:
    return {d.rule for d in change.diagnostics if d.is_error}


def test_an_indented_second_entry_is_not_valid_yaml():
    base = block("config-a", C(1))
    head = base + "\n" + block("config-b", PH).replace("- config-keys", "  - config-keys", 1)
    change = judge(base, head, 42)
    assert not change.ok and any(r.startswith("yaml") for r in rules(change))


def test_a_correction_s_pr_number_need_not_equal_the_pr():
    change = judge(block("config-a", "XXX"), block("config-a", C(42)), 99)
    assert change.ok and len(change.corrections) == 1 and not change.added


def test_an_appended_entry_as_rendered_is_accepted():
    base = block("config-a", C(1))
    change = judge(base, base + "\n" + block("config-b", "XXX"), 42)
    assert change.ok and [e.config_keys for e in change.added] == [["config-b"]]


def test_a_correction_with_another_whitespace_change_is_refused():
    base = block("config-a", "XXX")
    head = base.replace("  pr-link: XXX\n", f"  pr-link: {C(42)}\n").replace(
        "  - Update config-a", "  - Update config-a  "
    )
    assert "changelog-history-bytes" in rules(judge(base, head, 42))


def test_fix_rewrites_only_the_appended_placeholder():
    base = block("config-h", "XXX")
    result = repair(base, base + "\n" + block("config-n", "XXX"), 42, SLUG, FILE)
    assert result.text == base + "\n" + block("config-n", C(42))
    assert result.text.startswith(base)  # the historical XXX is kept


def test_fix_rewrites_a_rejected_link_and_says_so():
    # Deliberate difference: the reference's canonicalize raised on TBD; infx offers the fix.
    base = block("config-h", C(1))
    result = repair(base, base + "\n" + block("config-n", "TBD"), 42, SLUG, FILE)
    assert result.text.endswith(f"pr-link: {C(42)}\n") and any("'TBD'" in change for change in result.changes)


def test_a_pr_behind_main_is_judged_on_its_own_append(corpus_repo, BASE):
    """The PR branched from B; main then gained an entry (with a whitespace separator)."""
    base = corpus_repo.git("rev-parse", "HEAD")
    main = corpus_repo.commit(base, {FILE: BASE + b"  \n" + E(K + "-mtp", C(41))}, "main moved on")
    pr = corpus_repo.commit(base, {FILE: BASE + b"\n" + E(K, PH)}, "the PR")
    result = run_gate(corpus_repo.path, main, pr, slug=SLUG, pr_number=42)
    assert result.report.ok, result.report.diagnostics
    assert result.base_commit == base
    assert [e.config_keys for e in result.change.added] == [[K]]
    # Without the merge-base (two-dot against main's tip) main's entry would look deleted: a push
    # comparison of the same commits reports exactly that.
    tip = run_gate(corpus_repo.path, main, pr, slug=SLUG, pr_number=None, with_plan=False)
    assert any(d.rule == "changelog-removed" for d in tip.report.diagnostics)


def test_a_pr_whose_entry_main_already_has_contributes_nothing(corpus_repo, BASE):
    base = corpus_repo.git("rev-parse", "HEAD")
    main = corpus_repo.commit(base, {FILE: BASE + b"\n" + E(K, C(41))}, "main has it")
    pr = corpus_repo.commit(main, {FILE: BASE + b"\n" + E(K, C(41))}, "PR merged main")
    result = run_gate(corpus_repo.path, main, pr, slug=SLUG, pr_number=42)
    # The reference's merge helper refuses it; as a change it adds and modifies nothing, so the
    # gate passes it with the notice that nothing will be swept (issue 23, docs/changelog.md).
    assert result.report.ok
    assert [d.rule for d in result.report.diagnostics if d.rule.startswith("changelog")] == [
        "changelog-nothing-to-sweep"
    ]
    assert result.plan.point_count == 0


def test_wildcard_keys_resolve_in_config_order_without_duplicates():
    entry, _ = parse_entry(
        {"config-keys": ["config-*", "config-a"], "description": ["x"], "pr-link": "XXX"}, 1, FILE, lambda p: (1, 1)
    )
    result = resolve([entry], ["config-b", "config-a", "other"], [], FILE, lambda e, n: (1, 1))
    assert result.keys == ["config-b", "config-a"]
    assert matching_keys("a.c*", ["abc-1", "a.c-1"]) == ["a.c-1"]  # only * is special


def test_trim_conc_keeps_the_lowest_concurrency_of_each_series():
    backend = {"name": "x", "opts": {"a": 1, "b": 2}}
    rows = [
        {"exp-name": "a8", "conc": 8, "kv-offload-backend": backend},
        {"exp-name": "a2", "conc": 2, "kv-offload-backend": dict(backend)},
        {"exp-name": "b4", "conc": 4, "kv-offload-backend": {"name": "y"}},
    ]
    assert [r["conc"] for r in trim_conc(rows)] == [2, 4]


ENTRY, _ = parse_entry(
    {"config-keys": ["k"], "description": ["x"], "pr-link": "XXX", "append-only": True}, 1, FILE, lambda p: (1, 1)
)


def _row(conc, tp=8, image="img:1", multinode=False):
    row = {
        "model": "m",
        "runner": "r",
        "framework": "f",
        "precision": "fp4",
        "isl": 8192,
        "osl": 1024,
        "image": image,
        "config-key": "k",
        "exp-name": f"e{conc}",
    }
    if multinode:
        return {**row, "prefill": {"tp": tp, "ep": 1}, "decode": {"tp": tp, "ep": 1}, "conc": conc}
    return {**row, "tp": tp, "conc": conc}


def test_append_only_plans_the_new_concurrencies_of_a_single_node_series():
    delta, problems = append_only_delta([_row(4), _row(8)], [_row(4), _row(8), _row(12)], ENTRY, FILE)
    assert [r["conc"] for r in delta] == [12] and not problems


def test_append_only_plans_the_new_concurrencies_of_a_multinode_series():
    delta, problems = append_only_delta(
        [_row([8, 16], multinode=True)], [_row([8, 16, 24, 24], multinode=True)], ENTRY, FILE
    )
    assert [r["conc"] for r in delta] == [[24]] and not problems


def test_append_only_may_not_remove_points():
    _, problems = append_only_delta([_row(4), _row(8)], [_row(8), _row(12)], ENTRY, FILE)
    assert [p.rule for p in problems] == ["plan-append-only-removes"] and "[4]" in problems[0].message


def test_append_only_refuses_a_new_topology_with_another_image():
    _, problems = append_only_delta([_row(4)], [_row(4), _row(4, tp=16, image="img:2")], ENTRY, FILE)
    assert [p.rule for p in problems] == ["plan-append-only-series"]


# --- rows 68-72: what the plan asks the matrix for, per entry --------------------------------


@pytest.fixture(scope="module")
def corpus_set(corpus_repo):
    config_set, report = load_config_set(root=corpus_repo.path)
    assert config_set is not None, report.diagnostics
    return config_set


FIXED_KEY, AGENTIC_KEY = K, "dsv4-fp4-b300-vllm-agentic-mtp"


def _entries(*specs):
    entries = []
    for n, spec in enumerate(specs, 1):
        entry, problems = parse_entry({"description": ["x"], "pr-link": "XXX", **spec}, n, FILE, lambda p: (1, 1))
        assert entry is not None, problems
        entries.append(entry)
    return entries


def _plan(config_set, entries, **options):
    keys = list(config_set.entries)
    resolution = resolve(entries, keys, keys, FILE, lambda e, n: (1, 1))
    rows, problems = plan_rows(config_set, entries, resolution, PlanOptions(**options))
    assert not [p for p in problems if p.is_error]
    return rows


def _matrix(config_set, keys, evals, scenarios=()):
    return build_matrix(config_set, Selection(config_keys=tuple(keys), scenario_types=tuple(scenarios)), evals)


def _ids(rows):
    return sorted((r["recipe-fingerprint"], str(r["conc"]), bool(r.get("eval-only"))) for r in rows)


def test_a_regular_entry_plans_throughput_then_default_evals(corpus_set):
    rows = _plan(corpus_set, _entries({"config-keys": [FIXED_KEY]}))
    expected = _matrix(corpus_set, [FIXED_KEY], EvalMode.NONE) + _matrix(corpus_set, [FIXED_KEY], EvalMode.ONLY)
    assert _ids(rows) == _ids(expected)
    assert any(r.get("eval-only") for r in rows) and any(not r.get("run-eval") for r in rows)


def test_an_all_evals_entry_plans_only_all_evals(corpus_set):
    rows = _plan(corpus_set, _entries({"config-keys": [FIXED_KEY], "all-evals": True}))
    assert _ids(rows) == _ids(_matrix(corpus_set, [FIXED_KEY], EvalMode.ONLY | EvalMode.ALL))
    assert rows and all(r.get("eval-only") for r in rows)


@pytest.mark.parametrize(
    "options, modes",
    [
        ({"evals": EvalMode.ONLY}, [EvalMode.ONLY]),
        ({"evals": EvalMode.ALL}, [EvalMode.NONE, EvalMode.ONLY | EvalMode.ALL]),
        ({"evals": EvalMode.ONLY | EvalMode.ALL}, [EvalMode.ONLY | EvalMode.ALL]),
    ],
)
def test_run_wide_modifiers_select_the_eval_modes(corpus_set, options, modes):
    rows = _plan(corpus_set, _entries({"config-keys": [FIXED_KEY]}), **options)
    assert _ids(rows) == _ids([r for mode in modes for r in _matrix(corpus_set, [FIXED_KEY], mode)])


def test_an_all_evals_entry_wins_and_evals_are_planned_once(corpus_set):
    rows = _plan(corpus_set, _entries({"config-keys": [FIXED_KEY]}, {"config-keys": [FIXED_KEY], "all-evals": True}))
    expected = _matrix(corpus_set, [FIXED_KEY], EvalMode.ONLY | EvalMode.ALL) + _matrix(
        corpus_set, [FIXED_KEY], EvalMode.NONE
    )
    assert _ids(rows) == _ids(expected)


def test_disjoint_scenario_filters_each_plan_their_scenario(corpus_set):
    keys = [FIXED_KEY, AGENTIC_KEY]
    rows = _plan(
        corpus_set,
        _entries(
            {"config-keys": keys, "scenario-type": ["fixed-seq-len"]},
            {"config-keys": keys, "scenario-type": ["agentic-coding"]},
        ),
    )
    expected = [
        r
        for scenario in ("fixed-seq-len", "agentic-coding")
        for mode in (EvalMode.NONE, EvalMode.ONLY)
        for r in _matrix(corpus_set, keys, mode, [scenario])
    ]
    assert _ids(rows) == _ids(expected)
    assert {r["config-key"] for r in rows} == set(keys)


def test_a_plan_that_fails_inside_infx_is_plan_build_not_a_traceback(corpus_set):
    # An internal-bug guard: every user problem reaches plan_sweep as an InfxError with its own
    # diagnostics; anything else (here the base revision's configs failing to load with an OSError,
    # hand-made) becomes one plan-build diagnostic naming the cause, and no half-built plan.
    entries = _entries({"config-keys": [AGENTIC_KEY], "append-only": True})
    keys = list(corpus_set.entries)
    resolution = resolve(entries, keys, keys, FILE, lambda e, n: (1, 1))

    def unreadable_base():
        raise OSError(5, "Input/output error")

    plan, problems = plan_sweep(corpus_set, entries, resolution, PlanOptions(), base_loader=unreadable_base)
    (problem,) = problems
    assert plan is None and problem.rule == "plan-build" and problem.is_error and problem.file == FILE
    assert "Input/output error" in problem.message and "infx matrix" in problem.hint


def test_eval_min_prefill_ep_drops_small_prefill_eval_rows(corpus_set):
    evals = build_matrix(corpus_set, Selection(), EvalMode.ONLY)
    key = next(r["config-key"] for r in evals if isinstance(r.get("prefill"), dict))
    minimum = max(r["prefill"]["ep"] for r in evals if r["config-key"] == key and isinstance(r.get("prefill"), dict))
    rows = _plan(corpus_set, _entries({"config-keys": [key], "evals-only": True, "eval-min-prefill-ep": minimum}))
    expected = [
        r
        for r in _matrix(corpus_set, [key], EvalMode.ONLY)
        if not isinstance(r.get("prefill"), dict) or r["prefill"]["ep"] >= minimum
    ]
    assert rows and _ids(rows) == _ids(expected)


# --- coverage and deleted keys ---------------------------------------------------------------


def _master_with(corpus_repo, commit, edit) -> bytes:
    text = corpus_repo.read(commit, "configs/nvidia-master.yaml").decode()
    return edit(text).encode()


def test_coverage_lists_changed_keys_no_appended_entry_sweeps(corpus_repo, BASE):
    base = corpus_repo.git("rev-parse", "HEAD")
    master = _master_with(
        corpus_repo,
        base,
        lambda t: t.replace("dsr1-fp8-h200-sglang:\n", "dsr1-fp8-h200-sglang:\n  # tuned\n", 1).replace(
            "dsr1-fp8-h200-sglang-mtp:\n  image: ", "dsr1-fp8-h200-sglang-mtp:\n  image: x", 1
        ),
    )
    head = corpus_repo.commit(
        base, {"configs/nvidia-master.yaml": master, FILE: BASE + b"\n" + E(K, PH)}, "tune two configs"
    )
    result = run_gate(corpus_repo.path, base, head, slug=SLUG, pr_number=42, with_plan=False)
    (problem,) = [d for d in result.report.diagnostics if d.rule == "changelog-coverage"]
    assert "dsr1-fp8-h200-sglang-mtp" in problem.message and f"{K}," not in problem.message
    assert "    - dsr1-fp8-h200-sglang-mtp" in problem.hint
    covered = corpus_repo.commit(
        base,
        {"configs/nvidia-master.yaml": master, FILE: BASE + b"\n" + E('"dsr1-fp8-h200-sglang*"', PH)},
        "covered by a glob",
    )
    result = run_gate(corpus_repo.path, base, covered, slug=SLUG, pr_number=42, with_plan=False)
    assert not [d for d in result.report.diagnostics if d.rule == "changelog-coverage"]


def test_key_deleted_by_the_same_change_is_a_warning_and_not_swept(corpus_repo, BASE):
    base = corpus_repo.git("rev-parse", "HEAD")
    text = corpus_repo.read(base, "configs/nvidia-master.yaml").decode()
    doomed = "dsr1-fp8-h200-sglang-mtp"
    start = text.index(f"\n{doomed}:\n") + 1
    lines = text[start:].split("\n")
    length = next(
        n for n, line in enumerate(lines[1:], 1) if line and not line.startswith((" ", "#"))
    )  # up to the next key
    master = text[:start] + "\n".join(lines[length:])
    assert f"\n{doomed}:" not in master
    head = corpus_repo.commit(
        base,
        {"configs/nvidia-master.yaml": master.encode(), FILE: BASE + b"\n" + E(K, PH) + b"\n" + E(doomed, PH)},
        "delete a config",
    )
    result = run_gate(corpus_repo.path, base, head, slug=SLUG, pr_number=42)
    assert result.report.ok, result.report.diagnostics
    (deleted,) = [d for d in result.report.diagnostics if d.rule == "config-key-deleted"]
    assert "deleted in this change" in deleted.message and not deleted.is_error
    assert result.resolution.keys == [K] and result.resolution.deleted == [doomed]
    assert {r["config-key"] for rows in result.plan.buckets.values() for r in rows} == {K}


def test_invalid_head_configs_are_reported_with_path_at_commit(corpus_repo, BASE):
    base = corpus_repo.git("rev-parse", "HEAD")
    master = corpus_repo.read(base, "configs/nvidia-master.yaml") + b"\nbroken: [\n"
    head = corpus_repo.commit(
        base, {"configs/nvidia-master.yaml": master, FILE: BASE + b"\n" + E(K, PH)}, "broken config"
    )
    result = run_gate(corpus_repo.path, base, head, slug=SLUG, pr_number=42)
    (problem,) = [d for d in result.report.diagnostics if d.is_error]
    assert problem.file == f"configs/nvidia-master.yaml@{head[:12]}" and problem.rule == "yaml-syntax"
    assert problem.line == master.count(b"\n") + 1  # the unclosed list is reported at the end of the file


def test_fix_file_refuses_bad_utf8_and_writes_nothing(tmp_path):
    from infx.changelog.fix import fix_file

    base = block("config-h", C(1)).encode()
    path = tmp_path / FILE
    path.write_bytes(base + b"\n" + block("config-n", "XXX").encode().replace(b"Update", b"Upd\xffate"))
    before = path.read_bytes()
    result = fix_file(path, base, FILE, 42, SLUG)
    assert (
        result.text is None
        and [d.rule for d in result.diagnostics] == ["changelog-utf8"]
        and path.read_bytes() == before
    )


# --- changes that ask for no sweep ---------------------------------------------------------------


def _without_key(text: str, doomed: str) -> str:
    start = text.index(f"\n{doomed}:\n") + 1
    lines = text[start:].split("\n")
    length = next(n for n, line in enumerate(lines[1:], 1) if line and not line.startswith((" ", "#")))
    return text[:start] + "\n".join(lines[length:])


@pytest.mark.parametrize(
    "name, edit",
    [
        # The kinds of change the reference merged without a changelog entry: removing a config,
        # deprecating one (moved out of the master files), adding a runner node.
        ("configs/nvidia-master.yaml", lambda text: _without_key(text, "dsr1-fp8-h200-sglang-mtp")),
        ("configs/runners.yaml", lambda text: text.replace("  h200:\n", "  h200:\n    - h200-cw_9\n", 1)),
    ],
)
def test_a_pr_that_adds_or_changes_no_master_key_passes_with_nothing_to_sweep(corpus_repo, name, edit):
    base = corpus_repo.git("rev-parse", "HEAD")
    before = corpus_repo.read(base, name).decode()
    after = edit(before)
    assert after != before
    head = corpus_repo.commit(base, {name: after.encode()}, "no sweep asked")
    result = run_gate(corpus_repo.path, base, head, slug=SLUG, pr_number=42)
    assert result.report.ok, [d for d in result.report.diagnostics if d.is_error]
    (notice,) = [d for d in result.report.diagnostics if d.rule == "changelog-nothing-to-sweep"]
    assert notice.severity.value == "notice" and "nothing will be swept" in notice.message
    assert result.plan.point_count == 0


def test_a_pr_that_changes_a_master_key_without_an_entry_is_still_refused(corpus_repo):
    base = corpus_repo.git("rev-parse", "HEAD")
    master = _master_with(
        corpus_repo,
        base,
        lambda t: t.replace("dsr1-fp8-h200-sglang:\n  image: ", "dsr1-fp8-h200-sglang:\n  image: x", 1),
    )
    head = corpus_repo.commit(base, {"configs/nvidia-master.yaml": master}, "retune without an entry")
    result = run_gate(corpus_repo.path, base, head, slug=SLUG, pr_number=42, with_plan=False)
    assert {d.rule for d in result.report.diagnostics if d.is_error} == {"changelog-unchanged", "changelog-coverage"}
    assert not [d for d in result.report.diagnostics if d.rule == "changelog-nothing-to-sweep"]


# --- problems already on the base branch --------------------------------------------------------


@pytest.fixture(scope="module")
def unpatched_repo(tmp_path_factory):
    """The reference corpus exactly as it is: three runner labels used but never declared."""
    import shutil

    from testing.gitrepo import Repo
    from tests.conftest import CORPUS

    root = tmp_path_factory.mktemp("unpatched")
    shutil.copytree(CORPUS / "configs", root / "configs")
    shutil.copy(CORPUS / "perf-changelog.yaml", root / "perf-changelog.yaml")
    return Repo.init(root)


def test_a_defect_already_on_the_base_does_not_block_a_change(unpatched_repo):
    repo = unpatched_repo
    base = repo.git("rev-parse", "HEAD")
    changelog = repo.read(base, FILE)
    head = repo.commit(base, {FILE: changelog + b"\n" + E(K, PH)}, "an ordinary PR")
    result = run_gate(repo.path, base, head, slug=SLUG, pr_number=42)
    assert result.report.ok, [d.message for d in result.report.diagnostics if d.is_error]
    older = [d for d in result.report.diagnostics if d.rule == "runner-unknown"]
    assert len(older) == 8 and all("already on the base branch" in d.message and not d.is_error for d in older)
    assert {row["config-key"] for rows in result.plan.buckets.values() for row in rows} == {K}


def test_a_defect_the_change_introduces_still_blocks_it(unpatched_repo):
    repo = unpatched_repo
    base = repo.git("rev-parse", "HEAD")
    master = repo.read(base, "configs/nvidia-master.yaml").decode()
    line = master.index("  runner: h200\n", master.index(f"\n{K}:\n"))  # the runner of the key the entry names
    edited = master[:line] + "  runner: h200-nowhere\n" + master[line + len("  runner: h200\n") :]
    head = repo.commit(
        base,
        {"configs/nvidia-master.yaml": edited.encode(), FILE: repo.read(base, FILE) + b"\n" + E(K, PH)},
        "new label",
    )
    result = run_gate(repo.path, base, head, slug=SLUG, pr_number=42)
    errors = [d for d in result.report.diagnostics if d.is_error]
    assert [d.rule for d in errors] == ["runner-unknown"] and "h200-nowhere" in errors[0].message
    assert len([d for d in result.report.diagnostics if d.rule == "runner-unknown" and not d.is_error]) == 8


def test_an_older_defect_of_a_config_the_change_sweeps_blocks_it(unpatched_repo):
    """The change names a config whose runner label was never declared: its points cannot be routed."""
    repo = unpatched_repo
    base = repo.git("rev-parse", "HEAD")
    swept = "dsv4-fp4-gb300-dynamo-trt"  # runner gb300-nv, undeclared in the corpus
    head = repo.commit(
        base, {FILE: repo.read(base, FILE) + b"\n" + E(swept, PH)}, "sweep a config with an older defect"
    )
    result = run_gate(repo.path, base, head, slug=SLUG, pr_number=42)
    errors = [d for d in result.report.diagnostics if d.is_error]
    assert [d.rule for d in errors] == ["runner-unknown"] and errors[0].message.startswith(f"{swept}: ")
    assert "this change sweeps the config: fix it here" in errors[0].message and result.plan is None
    assert len([d for d in result.report.diagnostics if d.rule == "runner-unknown" and not d.is_error]) == 7


def test_trimming_runs_a_point_two_configs_share_once():
    """The reference's PR 2605 case: two config keys expand to the same agentic point; the trimmed
    sweep (the reference groups rows without their config) runs it once, in full both are planned."""
    row = {
        "image": "lmsysorg/sglang-rocm:v0.5.17",
        "model": "amd/Qwen3.5-397B-A17B-MXFP4",
        "tp": 4,
        "conc": 1,
        "scenario-type": "agentic-coding",
        "exp-name": "qwen3.5_tp4_conc1",
    }
    rows = [
        {**row, "config-key": "a"},
        {**row, "config-key": "a", "conc": 4, "exp-name": "qwen3.5_tp4_conc4"},
        {**row, "config-key": "b"},
    ]
    assert [(r["config-key"], r["conc"]) for r in trim_conc(rows)] == [("a", 1)]
