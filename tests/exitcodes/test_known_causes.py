"""The twelve inputs that used to end in exit 70 ("internal error") now end in exit 1 (invalid
input) or 2 (unusable command line or file), each with a located message and no traceback."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from testing.cli import REPO, appended_entry, run_cli, run_infx
from testing.launchkit import git

from .conftest import fill, unprivileged_prefix

CHANGELOG = "perf-changelog.yaml"


def expect(done, code: int, *fragments: str) -> None:
    assert done.problem() is None, (done.problem(), done.stderr[-2000:])
    assert done.code == code, done.stderr[-2000:]
    for fragment in fragments:
        assert fragment in done.stderr + done.stdout, done.stderr[-2000:]


@pytest.mark.parametrize(
    "text, where, accepted",
    [
        ("a: !!bool maybe\n", ":1:4: error[yaml-syntax]: cannot read bool scalar 'maybe'", "true or false"),
        ('a: !!int ""\n', ":1:4: error[yaml-syntax]: cannot read int scalar ''", "an integer"),
        ("a: !!null x\n", ":1:4: error[yaml-syntax]: cannot read null scalar 'x'", "null, ~"),
    ],
)
def test_explicit_yaml_tags_with_bad_values(work, text, where, accepted):
    (work / "configs" / "bad-master.yaml").write_text(text)
    expect(
        run_infx(["config", "validate", "configs/bad-master.yaml"], work),
        1,
        "configs/bad-master.yaml" + where,
        accepted,
    )
    expect(run_infx(["matrix"], work), 1, where)


def _point(tmp_path: Path, row, name="point.json") -> str:
    path = tmp_path / name
    path.write_text(row if isinstance(row, str) else json.dumps(row))
    return str(path)


def dry_run(work: Path, point: str):
    return run_infx(["launch", "--lane", "gb300-nv", "--point", point, "--dry-run"], work)


def test_a_valid_point_still_dry_runs(work, bundled_point, tmp_path):
    expect(dry_run(work, _point(tmp_path, bundled_point)), 0, "route")


def test_an_integer_of_5000_digits_in_a_point(work, tmp_path):
    expect(
        dry_run(work, _point(tmp_path, '{"conc": [' + "7" * 5000 + "]}")), 1, "error[point-json]", "number is too long"
    )


def test_100000_nested_arrays_in_a_point(work, tmp_path):
    expect(
        dry_run(work, _point(tmp_path, "[" * 100_000 + "]" * 100_000)), 1, "error[point-json]", "nested deeper than 200"
    )
    expect(dry_run(work, _point(tmp_path, '{"a": ' + "[" * 300 + "]" * 300 + "}")), 1, "nested deeper than 200")


def test_additional_settings_of_the_wrong_type(work, bundled_point, tmp_path):
    row = json.loads(json.dumps(bundled_point))
    row["prefill"]["additional-settings"] = 5
    path = _point(tmp_path, json.dumps(row, indent=1))
    line = next(n for n, text in enumerate(Path(path).read_text().splitlines(), 1) if '"additional-settings"' in text)
    expect(
        dry_run(work, path),
        1,
        f"{path}:{line}:",
        "error[point-type]: prefill.additional-settings is integer 5; a matrix row has array here",
    )


@pytest.mark.parametrize(
    "config_file", ["recipes/vllm/deepseek-v4", "recipes/" + "x" * 300 + ".yaml", "recipes/" + "d/" * 3000 + "r.yaml"]
)
def test_config_file_naming_a_folder_or_a_name_too_long(work, bundled_point, tmp_path, config_file):
    row = json.loads(json.dumps(bundled_point))
    row["prefill"]["additional-settings"] = [f"CONFIG_FILE={config_file}"]
    expect(dry_run(work, _point(tmp_path, row)), 1, "error[recipe-missing]", "is not a file")


@pytest.mark.parametrize(
    "argv",
    [
        ["config", "validate", "{long}"],
        ["config", "validate", "--runners", "{long}"],
        ["matrix", "--config", "{long}"],
        ["launch", "--lane", "gb300-nv", "--dry-run", "--point", "{long}"],
        ["github", "select-points", "--plan", "{long}", "--points", "x"],
        ["plan", "--changelog", "{long}"],
    ],
)
def test_a_5000_character_path_argument(work, argv):
    long = "a" * 5000
    done = run_infx([part.replace("{long}", long) for part in argv], work)
    expect(done, 2)
    assert len(done.stderr) < 2000  # the name is cut in the message, not printed whole


@pytest.mark.parametrize(
    "argv",
    [
        ["config", "validate", "{loop}"],
        ["matrix", "--config", "{loop}"],
        ["launch", "--lane", "gb300-nv", "--dry-run", "--point", "{loop}"],
        ["github", "select-points", "--plan", "{loop}", "--points", "x"],
    ],
)
def test_a_symlink_loop(work, tmp_path, argv):
    (tmp_path / "loop-a").symlink_to(tmp_path / "loop-b")
    (tmp_path / "loop-b").symlink_to(tmp_path / "loop-a")
    expect(run_infx([part.replace("{loop}", str(tmp_path / "loop-a")) for part in argv], work), 2)


def test_plan_output_naming_a_folder(work, tmp_path):
    expect(run_infx(["plan", "--output", str(tmp_path)], work), 2, "--output", "is a folder, not a regular file")
    assert tmp_path.is_dir()


def test_an_unreadable_changelog(work):
    (work / CHANGELOG).chmod(0)
    prefix = unprivileged_prefix()
    for argv in (["plan"], ["changelog", "fix", "--pr-number", "7", "--repo", "a/b"]):
        done = run_cli(*argv, cwd=work, prefix=prefix, timeout=120)
        assert done.returncode == 2 and "Traceback" not in done.stderr and "internal error" not in done.stderr, (
            done.stderr
        )
        assert f"{CHANGELOG}: error[file-unusable]: cannot use this path: Permission denied" in done.stderr, done.stderr


def test_a_changelog_that_is_a_folder_or_a_fifo(work):
    (work / CHANGELOG).unlink()
    (work / CHANGELOG).mkdir()
    expect(run_infx(["plan"], work), 2)
    expect(run_infx(["changelog", "fix", "--pr-number", "7", "--repo", "a/b"], work), 2)
    (work / CHANGELOG).rmdir()
    os.mkfifo(work / CHANGELOG)  # reading it would block forever
    expect(run_infx(["plan"], work), 2)
    expect(run_infx(["changelog", "fix", "--pr-number", "7", "--repo", "a/b"], work), 2)


def test_fix_in_a_read_only_folder(work):
    before = (work / CHANGELOG).read_bytes() + appended_entry()
    (work / CHANGELOG).write_bytes(before)
    work.chmod(0o555)
    try:
        done = run_cli(
            "changelog", "fix", "--pr-number", "7", "--repo", "a/b", cwd=work, prefix=unprivileged_prefix(), timeout=120
        )
    finally:
        work.chmod(0o755)
    assert done.returncode == 2 and "internal error" not in done.stderr, done.stderr
    assert f"{CHANGELOG}: error[file-unusable]: cannot use this path: Permission denied" in done.stderr
    assert (work / CHANGELOG).read_bytes() == before
    assert sorted(p.name for p in work.iterdir() if p.name.startswith(".perf")) == []


def test_fix_on_a_full_disk(work, full_folder, monkeypatch):
    if full_folder is not None:  # the real thing: the repository on a tmpfs with no space left
        subprocess.run(["git", "clone", "-q", str(work), str(full_folder / "work")], check=True, capture_output=True)
        work = full_folder / "work"
        git("update-ref", "refs/remotes/origin/main", "HEAD", cwd=work)
    else:  # no mount allowed: the disk fills at the write itself
        from infx import fsio

        def no_space(path, directory=False):
            raise OSError(28, "No space left on device")

        monkeypatch.setattr(fsio, "_fsync_path", no_space)
    before = (work / CHANGELOG).read_bytes() + appended_entry()
    (work / CHANGELOG).write_bytes(before)
    if full_folder is not None:
        fill(full_folder)
    done = run_infx(["changelog", "fix", "--pr-number", "7", "--repo", "a/b"], work)
    expect(done, 2, f"{CHANGELOG}: error[file-unusable]: cannot use this path: No space left on device")
    assert (work / CHANGELOG).read_bytes() == before
    assert [p.name for p in work.iterdir() if p.name.endswith(".tmp")] == []


def test_matrix_output_on_a_full_disk(work, full_folder, monkeypatch):
    target = Path("/dev/full") if full_folder is None else full_folder / "matrix.json"
    if full_folder is not None:
        fill(full_folder)
        expect(run_infx(["matrix", "--output", str(target)], work), 2, "No space left on device")
        assert not target.exists() and [p.name for p in full_folder.iterdir() if p.name.endswith(".tmp")] == []
    expect(run_infx(["matrix", "--output", "/dev/full"], work), 2, "is a character device, not a regular file")
    assert Path("/dev/full").is_char_device()


SLOW_VALIDATE = (
    "import os, signal, sys, threading, time\n"
    "import infx.config.request as command  # validate_configs loads the configs through it\n"
    "from infx.cli import main\n"
    "real = command.load_config_set\n"
    "def slow(*args, **kwargs):\n"
    "    for signum in map(int, sys.argv[2:]):\n"
    "        os.kill(os.getpid(), signum)\n"
    "        time.sleep(0.2)\n"
    "    time.sleep(5)\n"
    "    return real(*args, **kwargs)\n"
    "command.load_config_set = slow\n"
    # As a foreground process has it: a job started in the background (`cmd &` in a script) inherits
    # SIGINT ignored, and infx leaves an ignored signal ignored.
    "signal.signal(signal.SIGINT, signal.default_int_handler)\n"
    "main(['config', 'validate', sys.argv[1]])\n"
)


@pytest.mark.parametrize("signals, code", [([15], 143), ([2], 130), ([2, 15], 130), ([15, 2], 143), ([15, 15, 2], 143)])
def test_signals_unwind_a_command_and_the_first_one_sets_the_exit_code(work, signals, code):
    """SIGINT followed by SIGTERM (Ctrl-C, then the runner's cancel) used to end in exit 70."""
    done = subprocess.run(
        [sys.executable, "-c", SLOW_VALIDATE, "configs/nvidia-master.yaml", *map(str, signals)],
        cwd=work,
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(REPO)},
        timeout=60,
    )
    assert done.returncode == code, done.stderr
    assert "internal error" not in done.stderr and "Traceback" not in done.stderr, done.stderr


@pytest.mark.parametrize(
    "text",
    [
        "a: " + "[" * 50_000 + "]" * 50_000 + "\n",
        "- " * 50_000 + "x\n",
        "".join(" " * level + "k:\n" for level in range(2_500)),
    ],
    ids=["flow", "compact", "indented"],
)
def test_yaml_nested_past_what_the_c_composer_survives(work, text):
    """50,000 nested flow sequences overflowed PyYAML's C composer (a segfault, not even exit 70):
    run as a process, so a regression cannot take the test session with it."""
    (work / "configs" / "deep-master.yaml").write_text(text)
    done = run_cli("config", "validate", "configs/deep-master.yaml", cwd=work, timeout=60)
    assert done.returncode == 1 and "error[yaml-too-deep]: nesting is deeper than 200 levels" in done.stderr, (
        done.stderr
    )


def test_a_quoted_number_of_4301_digits_where_another_type_belongs(work):
    """Found by the nightly property run: explaining the type error re-read the string as YAML."""
    text = (
        (work / "configs" / "nvidia-master.yaml")
        .read_text()
        .replace("multinode: true", f'multinode: "{"9" * 4301}"', 1)
    )
    (work / "configs" / "nvidia-master.yaml").write_text(text)
    expect(run_infx(["config", "validate"], work), 1, "multinode must be")


@pytest.mark.parametrize("number", ["18446744073709551616", "1e400", "NaN", "-Infinity"])
def test_numbers_no_consumer_can_take_in_a_point_or_a_plan(work, bundled_point, tmp_path, number):
    """Found by the property run: a plan row with a 4,000-digit tp overflowed the GPU-hour estimate."""
    text = json.dumps(bundled_point).replace('"tp": 4', f'"tp": {number}', 1)
    expect(dry_run(work, _point(tmp_path, text)), 1, "error[point-json]")
    plan = _point(tmp_path, f"[{text}]", "plan.json")
    expect(run_infx(["github", "select-points", "--plan", plan, "--points", "x"], work), 1, "error[plan-json]")


@pytest.mark.parametrize("plan", ["[{}]", "[1]", "ROW-WITHOUT-ISL"])
def test_plans_whose_rows_cannot_be_bucketed(work, bundled_point, tmp_path, plan):
    """Found by the nightly property run: bucketing read a row's isl without asking."""
    if plan == "ROW-WITHOUT-ISL":
        row = dict(bundled_point)
        del row["isl"]
        plan = json.dumps([row])
    path = _point(tmp_path, plan, "plan.json")
    # A row without isl is refused by the row contract before any bucketing (docs/matrix.md).
    expected = "error[missing-field]: row 0" if plan.startswith('[{"') else "error[plan-"
    expect(run_infx(["github", "select-points", "--plan", path, "--points", "x"], work), 1, expected)


def test_a_lane_whose_models_match_alike(work, bundled_point, tmp_path):
    """Found by the nightly property run: two equal `models:` entries escaped as an internal error."""
    import yaml

    profile = yaml.safe_load((REPO / "runners" / "gb300-nv.yaml").read_text())
    profile["models"].append(dict(profile["models"][0]))
    path = tmp_path / "lane.yaml"
    path.write_text(yaml.safe_dump(profile, sort_keys=False))
    done = run_infx(["launch", "--lane", str(path), "--point", _point(tmp_path, bundled_point), "--dry-run"], work)
    expect(done, 1, "error[lane-model-ambiguous]")
