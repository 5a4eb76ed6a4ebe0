"""Shared fixtures: paths to the bundled repository data and the reference corpus."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from testing.corpus import CORPUS

REPO = Path(__file__).resolve().parent.parent
# The repository root a command finds (infx/reporoot.py) is $GITHUB_WORKSPACE when set; when this suite
# runs in a GitHub Actions job that names infx's own checkout. A test that wants a workspace sets it.
os.environ.pop("GITHUB_WORKSPACE", None)
FIXTURES = Path(__file__).resolve().parent / "fixtures"

# The files that take longest (seconds on a quiet 2-core machine), started first so that the
# other files fill the workers around them (pytest-xdist hands out whole files in this order).
LONGEST_FIRST = (
    "slurm/test_real_srtctl.py",  # 300: srtctl venvs from the bundle, a dry run per row, 5 launches
    "slurm/test_faults.py",  # 140: a 60 s infx deadline on real Slurm
    "slurm/test_launch_slurm.py",  # 120: Slurm's 1-minute time limit
    "workflows/test_workflow_runs.py",  # 80
    "slurm/test_eval_sweep.py",  # 60: two evals-only PR sweeps launched on the local Slurm
    "slurm/test_workflow_sweep_faults.py",  # 35
    "workflows/test_token_permissions.py",  # 40
    "changelog/test_replay_plans.py",  # 25: 200 plans of the reference's history
    "workflows/test_api.py",  # 50
    "results/test_lm_eval_live.py",  # 20-40: the real lm-eval, twice, against the stand-in server
    "kit/test_kit_runs.py",  # 40: a benchmark repository's sweep, pre-commit installing the pinned infx
    "workflows/test_output_limits.py",  # 30: 1,820-point setup jobs
    "workflows/test_repo_check.py",  # 25
    "workflows/test_reuse.py",  # 25
    "launch/test_cache_seed.py",  # 20
    "exitcodes/test_properties.py",  # 20
)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    # The nightly tests run only when `-m` names them: `-m nightly` selects them, and any other
    # expression (`-m "not slurm"`) or none leaves them out, as the default run does.
    if "nightly" not in (config.option.markexpr or ""):
        nightly = [item for item in items if item.get_closest_marker("nightly")]
        if nightly:
            config.hook.pytest_deselected(items=nightly)
            items[:] = [item for item in items if not item.get_closest_marker("nightly")]

    def rank(item: pytest.Item) -> int:
        path = item.path.relative_to(REPO / "tests").as_posix()
        return LONGEST_FIRST.index(path) if path in LONGEST_FIRST else len(LONGEST_FIRST)

    items.sort(key=rank)  # stable: collection order within a file and among the rest


@pytest.fixture
def repo_root() -> Path:
    return REPO


@pytest.fixture
def corpus() -> Path:
    if not CORPUS.is_dir():
        pytest.fail(f"the reference corpus is missing at {CORPUS}")
    return CORPUS


@pytest.fixture(scope="session", autouse=True)
def shared_session_folder(tmp_path_factory) -> Path:
    """A folder every pytest-xdist worker of this session shares: the workflow executor builds
    infx's wheel and its environment there once (tests/testing/runner_python.py)."""
    base = tmp_path_factory.getbasetemp()
    root = base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base
    os.environ["INFX_TEST_RUNNER_ROOT"] = str(root)
    return root


@pytest.fixture(scope="session")
def harness_repo(tmp_path_factory) -> Path:
    """This repository's data with the stand-in AgentX harness (tests/testing/launchkit.py, HARNESS): the
    checkout of a benchmark repository whose agentic points can launch. Read only."""
    from testing.launchkit import repository_with_harness

    return repository_with_harness(tmp_path_factory.mktemp("harness-repo") / "repo")
