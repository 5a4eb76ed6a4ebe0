"""Every rule id an infx diagnostic can carry: the area it belongs to, what it checks and the fix.

This is documentation and a checklist, not a lookup: each check still builds its own message
and hint (infx/diagnostics.py). The checks of three areas keep their own lists, which this table
reads instead of repeating: the master-config cross-field rules (:data:`infx.config.rules.RULES`),
the eval folder rules (:data:`infx.results.evals.rules.RULES`) and the accuracy gate's rules
(:data:`infx.results.evalgate.GATE_RULES`). A test scans infx/ for every id a diagnostic can take
and checks this table against it, that every id is asserted by a test, and that docs/rules.md is
``python3 -m infx.rules --markdown``.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass

from .config.rules import RULES as CONFIG_RULES
from .results.evalgate import GATE_RULES
from .results.evals.rules import RULES as EVAL_FOLDER_RULES


@dataclass(frozen=True)
class RuleDoc:
    id: str
    area: str
    checks: str
    fix: str


# area -> its title in docs/rules.md and the doc that describes the area's behaviour
AREAS = {
    "input": ("Files and YAML (every command)", "README.md#commands"),
    "config": ("Master configs and side files (`infx config validate`, `infx matrix`)", "docs/config.md"),
    "matrix": ("Sweep matrix (`infx matrix`)", "docs/matrix.md"),
    "changelog": ("perf-changelog.yaml (`infx changelog validate`, `fix`, `infx plan`)", "docs/changelog.md"),
    "launch": ("Lanes, points and recipes (`infx launch`, `infx lane`)", "docs/launch.md"),
    "results": ("Results and evals (`infx results`)", "docs/results.md"),
    "workflows": ("GitHub (`infx github`, `infx reuse`, `infx plan`, `infx init`)", "docs/workflows.md"),
}

_SCHEMA_FIX = "Correct the value at the location shown; the hint names the accepted form and the schema."

# area -> id -> (what it checks, the fix); the areas' own lists add their checks below
_TABLE: dict[str, dict[str, tuple[str, str]]] = {
    "input": {
        "usage": (
            "the command line names an option, value or file that cannot be used (exit 2).",
            "Follow the hint; `--help` lists the options.",
        ),
        "file-unusable": (
            "a path is not a regular file infx may read or replace (a folder, FIFO, symlink loop, no permission, full "
            "disk).",
            "Name an existing regular file, or a new path in a writable folder.",
        ),
        "file-missing": ("a file to read does not exist.", "Create it or fix the path."),
        "file-unreadable": ("a file exists but cannot be read.", "Fix its permissions or the path."),
        "file-empty": ("a YAML file that must hold a mapping is empty.", "Write the mapping (configs/CONFIGS.md)."),
        "file-not-mapping": (
            "a YAML file's top level is not a mapping.",
            "Write `key: value` entries at the top level.",
        ),
        "yaml-syntax": (
            "the text is not YAML, or a tagged scalar cannot be read.",
            "Fix the syntax at the location, or quote the value.",
        ),
        "yaml-encoding": ("the file is not UTF-8.", "Save the file as UTF-8."),
        "yaml-too-large": (
            "the file, or what its aliases expand to, passes infx's size limit.",
            "Split the file, or stop repeating aliases.",
        ),
        "yaml-too-deep": ("nesting passes infx's depth limit.", "Flatten the structure."),
        "yaml-tag": (
            "an explicit YAML tag other than the standard scalars.",
            "Use plain strings, numbers, booleans, lists and mappings.",
        ),
        "yaml-key": ("a mapping key that is not a plain scalar (a list or mapping as key).", "Use a string key."),
        "yaml-merge": ("a merge key (`<<`) that refers to something other than a mapping.", "Merge only mappings."),
        "yaml-recursive-alias": ("an alias that refers to a node containing it.", "Remove the cycle."),
        "yaml-duplicate-key": ("a key given twice in one mapping.", "Keep one of them."),
        "wrong-type": ("(schema) a value of the wrong type.", _SCHEMA_FIX),
        "missing-field": ("(schema) a required field is absent.", "Add the field."),
        "not-allowed-value": ("(schema) a value outside the allowed choices.", "Use one of the values the hint lists."),
        "out-of-range": ("(schema) a number below its minimum or above its maximum.", _SCHEMA_FIX),
        "empty-value": (
            "(schema) an empty list, string or mapping where one item is needed.",
            "Give at least one item.",
        ),
        "bad-format": ("(schema) a string that does not have the required shape.", _SCHEMA_FIX),
        "unknown-key": (
            "(schema) a key the schema does not define.",
            "Remove it or fix its spelling (the hint suggests the close one).",
        ),
        "schema": ("(schema) any other JSON Schema keyword that fails.", _SCHEMA_FIX),
    },
    "config": {
        "field-not-master": (
            "a field that belongs to a matrix row or another file, written in a master config.",
            "Remove it; the hint says where it belongs.",
        ),
        "key-duplicate-across-files": (
            "a config key defined in two master files.",
            "Rename or remove one; keys are unique across files.",
        ),
        "components-default": (
            "(notice) no configs/components.yaml: the component policy infx ships applies.",
            "Nothing, or `infx config shipped components.yaml > configs/components.yaml` and edit it.",
        ),
        "runner-type-unknown": (
            "`infx matrix --runner-type` names no label of configs/runners.yaml.",
            "Use a label of runners.yaml (the hint lists the close ones).",
        ),
        "config-key-unknown": (
            "a config key (changelog entry or `--config-key`) that no master config defines.",
            "Fix the key or the pattern (the hint suggests the close one).",
        ),
    },
    "matrix": {
        "matrix-derive": (
            "a config whose points cannot be derived (e.g. a recipe whose node arithmetic fails).",
            "Fix the config or recipe the message names.",
        ),
        "matrix-row-schema": (
            "a generated row that breaks infx/schemas/row.schema.json: a bug in infx, not in the config.",
            "Report it with the config.",
        ),
        "matrix-notice": (
            "(notice) what `infx matrix` changed or left out, e.g. a filter that matched nothing.",
            "Nothing, or adjust the filters.",
        ),
    },
    "changelog": {
        "changelog-utf8": ("perf-changelog.yaml is not UTF-8.", "Save it as UTF-8."),
        "changelog-cr": ("a carriage return (Windows line ending) in the changelog.", "Save it with LF line endings."),
        "changelog-tab": ("a TAB in the changelog.", "Replace it with spaces (`infx changelog fix`)."),
        "changelog-nul": ("a NUL byte in the changelog.", "Remove it."),
        "changelog-final-newline": (
            "the changelog does not end with a newline.",
            "End the last line with one newline (`infx changelog fix`).",
        ),
        "changelog-not-list": (
            "the changelog is not a YAML list of entries.",
            "Start every entry with `- config-keys:` at column 1.",
        ),
        "changelog-empty": ("the changelog has no entry to plan.", "Append an entry."),
        "changelog-entry-style": (
            "an appended entry does not start with the line `- config-keys:` (block style).",
            "Write the entry in block style (`infx changelog fix`).",
        ),
        "changelog-separator": (
            "appended entries not separated by exactly one empty line.",
            "One empty line between entries (`infx changelog fix`).",
        ),
        "changelog-trailing-blank": (
            "blank lines after the final appended entry.",
            "End with one newline (`infx changelog fix`).",
        ),
        "changelog-history-bytes": (
            "the appended region changed bytes of historical entries.",
            "Restore the base file's history byte for byte.",
        ),
        "changelog-history-edit": (
            "a historical entry changed other than in its pr-link.",
            "Restore it; add a new entry instead.",
        ),
        "changelog-not-appended": ("a new entry inserted before a historical one.", "Move it to the end."),
        "changelog-removed": (
            "a historical entry removed (a warning for a revert of the change that added it).",
            "Restore it; history is append-only.",
        ),
        "changelog-mixed": (
            "a change that both appends entries and corrects historical pr-links.",
            "Split it into two pull requests.",
        ),
        "changelog-no-entry": (
            "the changelog changed with no appended entry and no pr-link correction.",
            "Restore the base file, or append an entry.",
        ),
        "changelog-reformatted": (
            "(warning) a historical entry reformatted without a change of content.",
            "Keep history byte for byte.",
        ),
        "changelog-nothing-to-sweep": (
            "(notice) the changelog is unchanged and no master-config key changed.",
            "Nothing to do.",
        ),
        "changelog-coverage": (
            "master-config keys this change adds or modifies that no appended entry sweeps.",
            "Append an entry naming them.",
        ),
        "config-key-deleted": (
            "(warning) an entry names a config key this change deletes.",
            "Nothing if the deletion is meant; else restore the key.",
        ),
        "pr-link-correction": (
            "a historical pr-link correction the pr-link policy refuses.",
            "Correct only a placeholder to this PR's canonical link.",
        ),
        "fix-history": (
            "`infx changelog fix` finds history that differs from the merge-base.",
            "Restore history first; fix never rewrites it.",
        ),
        "entry-not-mapping": (
            "an entry that is not a mapping.",
            "Write it as a block: `- config-keys:` then `description:`, `pr-link:`.",
        ),
        "entry-missing-field": ("an entry without config-keys, description or pr-link.", "Add the field."),
        "entry-unknown-field": ("an entry field the changelog does not define.", "Remove it or fix its spelling."),
        "entry-field": (
            "an entry field of the wrong shape (schema infx/schemas/changelog-entry.schema.json).",
            "Write the field as the hint says.",
        ),
        "entry-lax-bool": (
            '(warning) a boolean flag written as a string (`"true"`, `yes`).',
            "Write `true` or `false`.",
        ),
        "entry-no-evals-conflict": ("`no-evals` combined with `evals-only` or `all-evals`.", "Keep one of them."),
        "entry-append-only-evals": (
            "`append-only` combined with an eval selection field.",
            "Drop one; append-only sweeps throughput points only.",
        ),
        "plan-append-only-removes": (
            "an append-only entry whose configs remove or modify existing points.",
            "Only add points, or drop `append-only`.",
        ),
        "plan-append-only-series": (
            "an append-only entry's new point that belongs to no existing series.",
            "Add it to an existing series, or drop `append-only`.",
        ),
        "plan-append-only-empty": (
            "(warning) an append-only entry whose configs add no point.",
            "Add the new points, or drop the entry.",
        ),
        "plan-append-only-scope": (
            "an append-only change that also modifies configs no entry names.",
            "Name them in an entry, or revert the change.",
        ),
        "plan-build": ("the sweep plan of the entries cannot be built.", "Run `infx matrix` on the keys to see why."),
    },
    "launch": {
        "lane-schema": (
            "a lane profile (runners/*.yaml) that breaks infx/schemas/lane.schema.json.",
            "Fix the field the location names.",
        ),
        "lane-placeholder": (
            "a value of a lane profile is still a `<FILL IN: …>` placeholder of the skeleton `infx init` writes.",
            "Replace it with this cluster's fact, the one the placeholder names.",
        ),
        "lane-name-mismatch": ("a profile's `lane:` differs from its file name.", "Rename the file or the lane."),
        "lane-label-duplicate": ("a runner label declared by two lane profiles.", "Give each label to one lane."),
        "lane-label-undeclared": (
            "a lane's runner label is not a label of configs/runners.yaml.",
            "Add it to runners.yaml or fix the label.",
        ),
        "lane-unknown-label": (
            "no lane profile declares the point's runner label (or `LANE`).",
            "Name a lane or one of its labels (the hint lists them).",
        ),
        "lane-route-duplicate": ("two routes of a lane share a name.", "Give every route a unique name."),
        "lane-route-ambiguous": ("two routes match exactly the same points.", "Merge them, or make one more specific."),
        "lane-unknown-pin": (
            "a route names an srt-slurm pin the profile does not define.",
            "Use a pin under srt-slurm.pins.",
        ),
        "lane-unknown-source": (
            "a route names a source `sources:` does not define.",
            "Define the source, or fix its name.",
        ),
        "lane-git-protocol": (
            "a git url whose scheme the lane does not allow.",
            "Use https://, or list the scheme under git-protocols.",
        ),
        "lane-prepare-placeholder": (
            "a prepare command uses a placeholder its step does not provide.",
            "Use only the placeholders the hint lists.",
        ),
        "lane-no-route": (
            "no route of the lane matches the point.",
            "Add a route for the point's scenario, framework and model.",
        ),
        "lane-model-ambiguous": ("several `models:` entries match the point equally.", "Make one entry more specific."),
        "lane-unsupported-model": (
            "the lane has no model entry for the point's model and precision.",
            "Add one under models:, or run on another lane.",
        ),
        "lane-overlay-missing": (
            "a route's overlay does not exist under the recipes folder.",
            "Fix the overlay path or add the file.",
        ),
        "lane-pin": (
            "`infx lane pins --update` cannot write a pin (no `commit:` key).",
            "Add `commit: null` to the pin and update again.",
        ),
        "lane-pin-unresolved": (
            "(warning) a pin without a commit SHA; a launch refuses it.",
            "Run `infx lane pins LANE --update`.",
        ),
        "lane-pin-unrecorded": (
            "`lane pins --check`: a pin without a recorded commit.",
            "Run `infx lane pins LANE --update`.",
        ),
        "lane-pin-mismatch": (
            "`lane pins --check`: a commit-id ref that differs from the recorded commit.",
            "Make ref and commit the same.",
        ),
        "lane-pin-ref-missing": (
            "`lane pins --check`: the pinned tag or branch no longer exists.",
            "Point the pin at an existing ref.",
        ),
        "lane-pin-tag-moved": (
            "`lane pins --check`: a pinned tag now names another commit.",
            "Find out why upstream; pin a new tag.",
        ),
        "lane-pin-branch-moved": (
            "(warning) `lane pins --check`: the pinned branch has moved on.",
            "Validate the new commit, then `--update`.",
        ),
        "lane-pin-unreachable": (
            "`lane pins --check`: the pin's repository cannot be asked.",
            "Check the URL and the network.",
        ),
        "lane-store-client-env": (
            "a role runs a store client without the environment variable the lane's rule requires.",
            "Set it in the role's env.",
        ),
        "lane-service-port": ("two services listen on the same port on the same node.", "Give one another port."),
        "lane-power-framework": (
            "power telemetry for a framework the lane has not validated it for.",
            "Disable telemetry, or validate the framework.",
        ),
        "cache-seed": (
            "`infx lane cache-seed` cannot seed a pin from the given clone or bundle.",
            "Pass a readable clone or bundle holding the pinned commit.",
        ),
        "point-json": (
            "the point file is not a JSON object within infx's limits.",
            "Pass one row of `infx matrix --format json`.",
        ),
        "point-type": ("a point field of the wrong type.", "Pass a row as `infx matrix` writes it."),
        "point-shape": (
            "a point value that reaches a path or command line has the wrong shape.",
            "Use the accepted shape the hint gives.",
        ),
        "point-setting-shape": ("a `settings` entry of the wrong shape.", "Write KEY=<accepted shape>."),
        "point-image": (
            "the point's image is not a container image reference.",
            "Use <registry>/<repo>:<tag>[@sha256:<digest>].",
        ),
        "point-config-file": (
            "the point resolves no CONFIG_FILE (recipe).",
            "Set CONFIG_FILE for the point's model, precision and framework.",
        ),
        "point-agentic-profile": (
            "an agentic point's profile value is not a whole number above 0.",
            "Write it as the matrix does.",
        ),
        "point-recipe-topology": (
            "the point has a role the recipe lacks (or the reverse).",
            "Point CONFIG_FILE at a recipe of the same topology.",
        ),
        "point-recipe-mismatch": (
            "a role's parallelism differs between the point and the recipe.",
            "Make the master config match the recipe.",
        ),
        "point-recipe-nodes": (
            "the point's node count differs from what the recipe allocates.",
            "Regenerate the row from the current recipe.",
        ),
        "env-shape": (
            "an environment variable infx reads has the wrong shape.",
            "Use the accepted shape the hint gives.",
        ),
        "env-runner-name-unused": (
            "(warning) $RUNNER_NAME names a GitHub-hosted runner; the dry run ignores it.",
            "Nothing on a lane runner.",
        ),
        "recipe-missing": ("the point's recipe is not a file.", "Fix CONFIG_FILE, or add the recipe."),
        "recipe-selector": ("a recipe selector (`file:name`) that selects nothing or several.", "Fix the selector."),
        "recipe-deferred": ("(warning) the recipe ships with srt-slurm: its checks run after checkout.", "Nothing."),
        "recipe-source": (
            "a recipe's source that is no source of the lane, nor a full pinned source.",
            "Name a lane source, or give name, url, full commit and dest.",
        ),
        "recipe-source-shape": ("a recipe source field of the wrong shape.", "Use the accepted shape the hint gives."),
        "recipe-sbatch-export": (
            "an eval point's recipe sets `--export` itself.",
            "Remove it; infx sets the eval environment.",
        ),
        "recipe-power-deferred": (
            "a recipe shipped with srt-slurm enables power telemetry, decided before checkout.",
            "Copy the recipe into the repository.",
        ),
        "recipe-image": (
            "the recipe's container is neither the point's image nor a lane alias.",
            "Use the image under test or an alias.",
        ),
        "recipe-model-alias": (
            "the recipe's model path is not the lane's alias for the point's model.",
            "Use the lane's alias.",
        ),
        "recipe-nodes": ("the recipe's resources give no valid node count.", "Fix the recipe's resources."),
        "recipe-dynamo-version": (
            "the recipe pins a dynamo version other than the point's router version.",
            "Make them the same.",
        ),
        "recipe-agentic-benchmark": (
            "an agentic recipe whose benchmark cannot receive the point's profile.",
            "Use a custom benchmark command taking the profile.",
        ),
        "agentic-harness-missing": (
            "the agentic harness the recipe runs is not in the repository.",
            "Add the harness (benchmarks/multi_node/agentic_srt.sh).",
        ),
        "agentic-eval-after-benchmark": (
            "an agentic point asks to run its eval after the benchmark.",
            "Run the eval as its own point.",
        ),
        "srtctl-dry-run": (
            "srt-slurm's own `srtctl dry-run` refuses the recipe.",
            "Fix the route's overlays or the recipe.",
        ),
        "eval-suite-schema": (
            "the eval suite (benchmarks/evals/suite.yaml) breaks its schema.",
            "Fix the field the location names.",
        ),
        "eval-workspace-missing": (
            "a file the eval suite names is missing from its folder.",
            "Add it, or fix the name.",
        ),
        "eval-task-file": (
            "an eval task file whose protocol cannot be read.",
            "State task, num_fewshot and the metrics in the file.",
        ),
        "eval-protocol-mismatch": (
            "the point's eval protocol differs from the suite's.",
            "Regenerate the point with `infx matrix`.",
        ),
    },
    "results": {
        "result-invalid": (
            "a point ran but its artifact is not a valid result (the one validity rule).",
            "Read its logs and rerun it.",
        ),
        "result-failed": (
            "a point's launch produced no result.",
            "Read its launch record and server logs, then rerun it.",
        ),
    },
    "workflows": {
        "plan-json": (
            "the plan file is not JSON, or not a plan (infx/schemas/sweep-plan.schema.json), or a row of it breaks "
            "the row contract.",
            "Pass the plan `infx plan` wrote, unchanged.",
        ),
        "lane-gate-json": (
            "the lane gate file is not JSON within infx's limits.",
            "Pass the JSON `infx github lane-gate --output` wrote.",
        ),
        "plan-row-count": ("more row problems in a plan than are shown.", "Fix the ones shown and run again."),
        "plan-labels-conflict": ("a PR carries two primary sweep labels.", "Keep one (docs/workflows.md, Labels)."),
        "plan-queue-limit": (
            "(warning) a lane's points would not start within GitHub's 24-hour queue.",
            "Add runners, or split the sweep.",
        ),
        "plan-lane-missing": (
            "(warning; a notice under `sweep: {lanes: profiled}`) no lane profile serves a runner label of the plan, "
            "so its points are held: planned, not dispatched.",
            "Add runners/<lane>.yaml with the label in its runner-labels, or set `sweep: {lanes: profiled}` in "
            "configs/infx.yaml.",
        ),
        "plan-lane-excluded": (
            "(notice) a runner label's lane is not in configs/infx.yaml's sweep.lanes, so its points are held.",
            "Add the lane to sweep.lanes to run them.",
        ),
        "settings-lane-unknown": (
            "configs/infx.yaml's sweep.lanes names a lane with no runners/<lane>.yaml.",
            "Name a lane of runners/, or write its profile first (`infx init --lane NAME`).",
        ),
        "plan-reuse-unavailable": (
            "(warning) stored results cannot be looked up; every point runs.",
            "Grant the token `actions: read` and `pull-requests: read`.",
        ),
        "unknown-point": ("point ids that are not in the plan.", "Use the plan of the run the ids came from."),
        "github-api": (
            "GitHub answered with an error status.",
            "The message says what to check (token, permissions, the ref).",
        ),
        "github-permission": ("HTTP 403: the token lacks a permission.", "Grant it in the job's `permissions:`."),
        "github-wait": (
            "a rate limit would need a wait longer than INFX_GITHUB_MAX_WAIT.",
            "Retry later, or use a token with a higher limit.",
        ),
        "github-malformed": (
            "GitHub's answer is not JSON, or cut off, on every try.",
            "Retry later; check GITHUB_API_URL.",
        ),
        "github-artifact": ("an artifact that cannot be downloaded or safely unpacked.", "Rerun the run that made it."),
        "github-untrusted-run": (
            "a run to rerun that is not a sweep run of a trusted branch.",
            "Rerun a sweep run of main or of the PR's own branch.",
        ),
        "github-dispatch-too-large": (
            "the failed points do not fit in one workflow dispatch.",
            "Rerun the whole sweep.",
        ),
        "init-runners": (
            "`infx init`: configs/runners.yaml has no `labels:` mapping.",
            "Write `labels:` with one key per runner label.",
        ),
    },
}

_CONFIG_FIX = "Change the entry as the hint says (configs/CONFIGS.md lists the rules)."
_EVAL_FOLDER_FIX = "Read the point's eval logs and rerun it (`infx github rerun-failed`)."
_GATE_FIXES = {
    "eval-below-threshold": "Find out why the accuracy dropped; lower a floor only in configs/eval-thresholds.yaml "
    "with a reason.",
    "eval-no-metric": "Check the task file's metrics.",
    "eval-no-threshold": "Add a floor for the task to configs/eval-thresholds.yaml.",
    "eval-none": "Collect the eval points' artifacts.",
    "eval-thresholds-default": (
        "Nothing, or `infx config shipped eval-thresholds.yaml > configs/eval-thresholds.yaml` and edit it."
    ),
    "results-json": "Pass the results.json `infx results collect --output` wrote.",
}


def _registry() -> dict[str, RuleDoc]:
    entries = [
        RuleDoc(rule, area, checks, fix) for area, rules in _TABLE.items() for rule, (checks, fix) in rules.items()
    ]
    entries += [
        RuleDoc(
            rule.id, "config", rule.summary + (" (warning)" if rule.severity.value == "warning" else ""), _CONFIG_FIX
        )
        for rule in CONFIG_RULES.values()
    ]
    entries += [RuleDoc(rule, "results", checks, _EVAL_FOLDER_FIX) for rule, checks in EVAL_FOLDER_RULES.items()]
    entries += [RuleDoc(rule, "results", checks, _GATE_FIXES[rule]) for rule, checks in GATE_RULES.items()]
    registry: dict[str, RuleDoc] = {}
    for entry in entries:
        assert entry.id not in registry, f"rule {entry.id} is registered twice"
        assert entry.area in AREAS, f"rule {entry.id}: unknown area {entry.area}"
        registry[entry.id] = entry
    return registry


REGISTRY: dict[str, RuleDoc] = _registry()


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def markdown() -> str:
    """docs/rules.md: one table per area."""
    lines = [
        "# Rules",
        "",
        "Every rule id an infx diagnostic can carry (`file:line:column: error[rule]: message`), by area:",
        "what it checks and the fix. Generated from `infx/rules.py` by `python3 -m infx.rules --markdown`;",
        "a test keeps this file, the code and the tests in step.",
        "",
    ]
    for area, (title, doc) in AREAS.items():
        lines += [
            f"## {title}",
            "",
            f"Behaviour: [{doc}](../{doc}).",
            "",
            "| rule | what it checks | fix |",
            "|---|---|---|",
        ]
        lines += [
            f"| `{e.id}` | {_cell(e.checks)} | {_cell(e.fix)} |"
            for e in sorted(REGISTRY.values(), key=lambda e: e.id)
            if e.area == area
        ]
        lines.append("")
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    if argv != ["--markdown"]:
        print("usage: python3 -m infx.rules --markdown", file=sys.stderr)
        return 2
    sys.stdout.write(markdown())
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
