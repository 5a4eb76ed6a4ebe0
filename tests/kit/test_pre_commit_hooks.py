"""The pre-commit hooks: run real commands, on the right files, at the right stage."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import yaml

from testing.cli import run_cli

REPO = Path(__file__).resolve().parents[2]
HOOKS = {hook["id"]: hook for hook in yaml.safe_load((REPO / ".pre-commit-hooks.yaml").read_text())}


def test_hook_entries_are_infx_commands_with_known_flags():
    assert set(HOOKS) == {"infx-config-validate", "infx-changelog-gate"}
    for hook in HOOKS.values():
        argv = shlex.split(hook["entry"])
        assert argv[0] == "infx" and hook["language"] == "python" and hook["pass_filenames"] is False
        # click rejects an unknown flag before it honours --help, so this checks the flags too.
        result = run_cli(*argv[1:], "--help")
        assert result.returncode == 0, (hook["id"], result.stderr)


def test_hooks_fire_on_the_files_they_check():
    config, gate = (re.compile(HOOKS[name]["files"]) for name in ("infx-config-validate", "infx-changelog-gate"))
    for path in ("configs/nvidia-master.yaml", "configs/runners.yaml", "configs/components.yaml"):
        assert config.search(path) and gate.search(path)
    assert gate.search("perf-changelog.yaml") and not config.search("perf-changelog.yaml")
    assert not config.search("docs/configs.yaml") and not gate.search("README.md")
    assert HOOKS["infx-changelog-gate"]["stages"] == ["pre-push"]
    assert "@{upstream}" in HOOKS["infx-changelog-gate"]["entry"]


def test_the_config_hook_passes_on_the_bundled_configs():
    result = run_cli(*shlex.split(HOOKS["infx-config-validate"]["entry"])[1:])
    assert result.returncode == 0, result.stderr
