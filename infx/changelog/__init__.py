"""perf-changelog.yaml: the entry model, the pr-link policy, the byte contract, the diff
of two revisions, key resolution and coverage, the fixer and the sweep plan."""

CHANGELOG = "perf-changelog.yaml"
