"""`infx config validate` as a real process: exit codes, formats, bad input never a traceback."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from infx.config.load import SHIPPED_COMPONENTS
from testing.cli import run_cli

REPO = Path(__file__).resolve().parent.parent.parent
FIXTURES = REPO / "tests" / "fixtures"
GOOD = FIXTURES / "positive" / "unknown-key.yaml"
SIDE = ["--runners", str(FIXTURES / "runners.yaml"), "--components", str(SHIPPED_COMPONENTS)]


def test_default_files_from_the_repository_root():
    done = run_cli("config", "validate")
    assert done.returncode == 0, done.stderr
    verdict, notice, hint = done.stderr.strip().splitlines()  # no configs/components.yaml here: the shipped policy
    assert verdict == "infx config validate: ok"  # the verdict first
    assert notice.startswith(
        "configs/components.yaml: notice[components-default]: no configs/components.yaml: using the component "
        "version policy infx ships (`infx config shipped components.yaml` prints it)"
    )
    # the hint names a command an installed infx has, not a path inside its package
    assert "`infx config shipped components.yaml > configs/components.yaml`" in hint and "infx/config" not in hint


def test_the_shipped_policy_the_hint_names_prints_byte_for_byte():
    done = run_cli("config", "shipped", "components.yaml")
    assert done.returncode == 0 and done.stdout == SHIPPED_COMPONENTS.read_text()


def test_valid_file_exits_0_and_json_says_ok():
    done = run_cli("config", "validate", GOOD, *SIDE, "--format", "json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == {"ok": True, "diagnostics": []}


def test_invalid_file_exits_1_with_located_json():
    bad = FIXTURES / "negative" / "unknown-key.yaml"
    done = run_cli("config", "validate", bad, *SIDE, "--format", "json")
    assert done.returncode == 1
    body = json.loads(done.stdout)
    assert body["ok"] is False
    first = body["diagnostics"][0]
    # named relative to the repository root, as in every command
    shown = bad.relative_to(REPO).as_posix()
    assert (first["file"], first["line"], first["column"], first["rule"]) == (shown, 11, 3, "unknown-key")
    assert "did you mean 'multinode'" in first["message"]


BAD_ENTRY = """k{i}:
  image: lmsysorg/sglang:v0.5.14
  model: deepseek-ai/DeepSeek-R1-0528
  model-prefix: dsr1
  precision: fp8
  framework: sglang
  runner: b200
  multinode: false
  scenarios:
    fixed-seq-len:
    - {{ isl: 1024, osl: 1024, search-space: [{{ tp: 0, conc-list: [4] }}] }}
"""


def test_github_format_annotates_and_caps_at_ten(tmp_path):
    path = tmp_path / "many-master.yaml"
    path.write_text("".join(BAD_ENTRY.format(i=i) for i in range(12)))
    done = run_cli("config", "validate", path, *SIDE, "--format", "github")
    assert done.returncode == 1
    annotations = [line for line in done.stdout.splitlines() if line.startswith("::error ")]
    assert len(annotations) == 10
    assert annotations[0].startswith(
        f"::error file={path},line="
    )  # outside the repository: as given and "title=out-of-range::" in annotations[0]
    assert "::notice title=infx::12 errors in all" in done.stdout


@pytest.mark.parametrize(
    "text, rule",
    [
        ("a: [1, 2\n", "yaml-syntax"),
        ("a:\n\tb: 1\n", "yaml-syntax"),
        ("a: 1\na: 2\n", "yaml-duplicate-key"),
        ("", "file-empty"),
        ("- a\n- b\n", "file-not-mapping"),
        ("k:\n  image: 3\n", "wrong-type"),
        ("k:\n  imgae: x\n", "unknown-key"),
        ("k: just a string\n", "wrong-type"),
    ],
)
def test_bad_input_is_a_located_diagnostic_not_a_traceback(tmp_path, text, rule):
    path = tmp_path / "bad-master.yaml"
    path.write_text(text)
    done = run_cli("config", "validate", path, *SIDE)
    assert done.returncode == 1
    assert "Traceback" not in done.stderr and "internal error" not in done.stderr
    assert f"error[{rule}]" in done.stderr
    verdict, located = done.stderr.splitlines()[:2]
    assert re.fullmatch(r"infx config validate: invalid — \d+ errors?", verdict) and located.startswith(f"{path}:")


def test_missing_file_on_the_command_line_exits_2(tmp_path):
    done = run_cli("config", "validate", tmp_path / "nope-master.yaml", *SIDE)
    assert done.returncode == 2
    assert "file not found" in done.stderr and "nope-master.yaml" in done.stderr


def test_missing_default_files_exit_2(tmp_path):
    done = run_cli("config", "validate", cwd=tmp_path)
    assert done.returncode == 2 and "configs/*-master.yaml" in done.stderr
    (tmp_path / "configs").mkdir()
    shutil.copy(REPO / "configs" / "nvidia-master.yaml", tmp_path / "configs")
    done = run_cli("config", "validate", cwd=tmp_path)
    assert done.returncode == 2
    assert "runners.yaml" in done.stderr and "components.yaml" in done.stderr


def test_a_validate_request_reports_what_the_command_prints():
    from infx.config import ValidateRequest, validate_configs
    from infx.diagnostics import UsageError, render

    bad = FIXTURES / "negative" / "agentic-cluster-runner.yaml"
    request = ValidateRequest(masters=(bad,), runners=FIXTURES / "runners.yaml", components=SHIPPED_COMPONENTS)
    report = validate_configs(request)
    printed = run_cli("config", "validate", bad, *SIDE, "--format", "json")
    assert not report.ok and printed.returncode == report.exit_code == 1
    assert json.loads(render(report.sorted(), "json", report.ok)) == json.loads(printed.stdout)
    assert validate_configs(
        ValidateRequest(masters=(GOOD,), runners=FIXTURES / "runners.yaml", components=SHIPPED_COMPONENTS)
    ).ok
    with pytest.raises(UsageError, match="file not found"):
        validate_configs(ValidateRequest(masters=(FIXTURES / "no-such-master.yaml",)))
