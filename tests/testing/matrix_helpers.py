"""Small repositories for matrix tests: master entries and runners.yaml written to a tmp dir.

RUNNERS is the runner fixture of reference/matrix.md §6.2, plus labels for the hardware
keys so every fixture config names a declared label.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import yaml

from infx.config.load import SHIPPED_COMPONENTS
from testing.cli import run_cli
from testing.corpus import CORPUS  # noqa: F401  (re-exported for the matrix tests)

REPO = Path(__file__).resolve().parents[2]

RUNNERS = {
    "labels": {
        "mi300x": ["mi300x-amd_0", "mi300x-amd_1", "mi300x-cr_0"],
        "h200": ["h200-cw_0", "h200-cw_1", "h200-nb_0", "h200-nb_1"],
        "cluster:b300-nv": ["b300-nv_0", "b300-nv_1"],
        "gb200": ["gb200-nv_0"],
        "cluster:mi355x-amds": ["mi355x-amds_0"],
        "cluster:gb200-nv": ["gb200-nv_0"],
        "cluster:h100-dgxc": ["h100-dgxc_0"],
    },
    "hardware": {
        "cluster:b300-nv": {"available-cpu-dram-mib": 2964436, "gpus-per-node": 8},
        "cluster:mi355x-amds": {"available-cpu-dram-mib": 3095781, "gpus-per-node": 8},
        "cluster:gb200-nv": {"available-cpu-dram-mib": 860160, "gpus-per-node": 4},
        "cluster:h100-dgxc": {"available-cpu-dram-mib": 2063837, "gpus-per-node": 8},
    },
}


def entry(model_prefix="dsr1", runner="mi300x", multinode=False, **fields) -> dict:
    base = {
        "image": "img:1",
        "model": f"org/{model_prefix}",
        "model-prefix": model_prefix,
        "precision": "fp8",
        "framework": "sglang",
        "runner": runner,
        "multinode": multinode,
    }
    base.update(fields)
    return base


def fixed(*search, isl=1024, osl=1024) -> dict:
    return {"isl": isl, "osl": osl, "search-space": list(search)}


def sn_entry() -> dict:
    """ "SN" of §6.2: dsr1-fp8-mi300x-sglang, 1k1k and 8k1k, each tp8 conc 4..64."""
    space = {"tp": 8, "conc-start": 4, "conc-end": 64}
    return entry(scenarios={"fixed-seq-len": [fixed(dict(space)), fixed(dict(space), isl=8192)]})


def mn_entry(**search_fields) -> dict:
    """ "MN" of §6.2: a multinode disagg gb200 entry with heterogeneous hardware."""
    search = {
        "conc-list": [2150],
        "prefill": {"num-worker": 5, "tp": 4, "ep": 4, "dp-attn": True, "hardware": "gb200"},
        "decode": {"num-worker": 1, "tp": 8, "ep": 8, "dp-attn": True, "hardware": "h100"},
    }
    search.update(search_fields)
    return entry(
        runner="gb200",
        multinode=True,
        disagg=True,
        precision="fp4",
        framework="dynamo-trt",
        **{"kv-p2p-transfer": "nixl"},
        scenarios={"fixed-seq-len": [fixed(search)]},
    )


class Repo:
    """A repository folder with configs/ (one master file, runners.yaml, components.yaml)."""

    def __init__(self, root: Path, masters: dict, runners: dict | None = None):
        self.root = root
        (root / "configs").mkdir(parents=True, exist_ok=True)
        self.master = root / "configs" / "test-master.yaml"
        self.master.write_text(yaml.safe_dump(masters, sort_keys=False))
        (root / "configs" / "runners.yaml").write_text(yaml.safe_dump(runners or RUNNERS, sort_keys=False))
        shutil.copy(SHIPPED_COMPONENTS, root / "configs" / "components.yaml")

    def config_set(self):
        from infx.config import load_config_set
        from infx.diagnostics import InfxError

        config_set, report = load_config_set([self.master])
        if config_set is None:  # as the CLI does: the config's own diagnostics
            raise InfxError(report.sorted())
        return config_set

    def build(self, selection=None, evals=None, notices=None):
        from infx.matrix import EvalMode, Selection, build_matrix

        return build_matrix(
            self.config_set(),
            selection=selection or Selection(),
            evals=evals if evals is not None else EvalMode.DEFAULT,
            notices=notices,
        )

    def cli(self, *args: str, env: dict | None = None) -> subprocess.CompletedProcess:
        return run_cli("matrix", *args, cwd=self.root, env=env)


def rows_of(result: subprocess.CompletedProcess) -> list[dict]:
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)
