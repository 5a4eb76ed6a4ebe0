"""The README's Quick start: exactly two commands, and the first works on a fresh clone."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import tomllib
import venv
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def quick_start_commands() -> list[str]:
    text = (REPO / "README.md").read_text()
    section = text.split("## Quick start", 1)[1].split("\n## ", 1)[0]
    return [block.strip() for block in re.findall(r"```sh\n(.*?)```", section, flags=re.S)]


def test_quick_start_has_exactly_two_commands_and_the_second_is_ci():
    commands = quick_start_commands()
    assert len(commands) == 2 and all("\n" not in c for c in commands)
    assert commands[1] == "bash .ci/run"
    ci = (REPO / ".ci" / "run").read_text().strip().splitlines()
    assert ci[-1] == "python3 -m pytest -q"  # the test command the README names
    assert "`python3 -m pytest -q`" in (REPO / "README.md").read_text()


def test_ci_runs_ruff_and_mypy_before_the_tests_and_the_lint_extra_pins_them():
    """A lint finding fails CI: .ci/run stops at the first failing command (set -e) and lints first."""
    ci = (REPO / ".ci" / "run").read_text().splitlines()
    assert "set -euo pipefail" in ci
    lint = ["python3 -m ruff check infx tests bench", "python3 -m mypy infx"]
    assert all(command in ci for command in lint)
    assert max(ci.index(command) for command in lint) < ci.index("python3 -m pytest -q")
    extra = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["optional-dependencies"]["lint"]
    assert {name.split("==")[0] for name in extra if "==" in name} >= {"ruff", "mypy"}
    readme = (REPO / "README.md").read_text()
    assert all(f"`{command}`" in readme for command in lint)


def test_main_job_on_a_fresh_clone(tmp_path: Path):
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", str(REPO), str(clone)], check=True)
    env_dir = tmp_path / "venv"
    venv.EnvBuilder(system_site_packages=True, with_pip=True).create(env_dir)
    tools = {"python3": str(env_dir / "bin" / "python3"), "infx": str(env_dir / "bin" / "infx")}
    environment = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "GITHUB_REPOSITORY")}
    environment["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
    outputs = []
    # The command is a chain of simple commands; run each as an argv list, in order.
    for part in quick_start_commands()[0].split("&&"):
        argv = shlex.split(part)
        argv[0] = tools.get(argv[0], argv[0])
        done = subprocess.run(argv, cwd=clone, env=environment, capture_output=True, text=True, timeout=600)
        assert done.returncode == 0, f"{part!r} failed:\n{done.stdout}\n{done.stderr}"
        outputs.append(done.stdout + done.stderr)
    assert outputs[1].splitlines()[0] == "infx config validate: ok"  # the verdict first
    # the shipped-policy notice: said by config validate, not again by plan (docs/config.md)
    assert "notice[components-default]" in outputs[1] and "notice[components-default]" not in outputs[2]
    plan = outputs[2]
    assert "dsv4-fp4-gb300-dynamo-sglang-agentic-disagg" in plan
    header = next(line.split() for line in plan.splitlines() if line.split()[:1] == ["config-key"])
    ladder = [line.split() for line in plan.splitlines() if "_kvdram-mooncake" in line and "false" in line.split()]
    # Cells are single words but topology ("P1x tp8 ep8 / D1x tp16 ep16"): count from the end.
    conc = header.index("conc") - len(header)
    assert [row[conc] for row in ladder] == ["120", "480", "960", "1440", "2400"]
    assert {row[header.index("lane")] for row in ladder} == {"gb300-nv"}
    assert [row[header.index("node-count") - len(header)] for row in ladder] == ["7", "7", "9", "11", "13"]
