"""Writes that lose nothing: synced, never half-written, no temporary file left behind (a killed
run's is cleaned by the next write), `fix` writes only a passing result, and an --output never
replaces a device node, FIFO, folder or (unless asked) a symbolic link."""

from __future__ import annotations

import json
import os
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from infx import fsio
from infx.interrupts import Interrupted
from testing.cli import REPO, appended_entry, run_infx

CHANGELOG = "perf-changelog.yaml"
ENV = {**os.environ, "PYTHONPATH": str(REPO)}


def temporaries(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.endswith(".tmp"))


def test_an_atomic_write_syncs_the_file_and_then_its_folder(tmp_path, monkeypatch):
    synced = []
    real = os.fsync

    def recording(descriptor):
        info = os.fstat(descriptor)
        synced.append((stat.S_ISDIR(info.st_mode), info.st_ino))
        real(descriptor)

    monkeypatch.setattr(os, "fsync", recording)
    target = tmp_path / "out.json"
    fsio.atomic_write(target, "{}")
    assert synced == [(False, target.stat().st_ino), (True, tmp_path.stat().st_ino)]


@pytest.mark.parametrize(
    "interruption", [RuntimeError("bug"), Interrupted(signal.SIGTERM), KeyboardInterrupt(), OSError(28, "full")]
)
def test_the_temporary_is_removed_on_every_exit_that_runs_code(tmp_path, interruption):
    target = tmp_path / "a.json"
    target.write_text("old")
    with pytest.raises(type(interruption)):
        with fsio.replacing(target) as temporary:
            temporary.write_text("half")
            raise interruption
    assert target.read_text() == "old" and temporaries(tmp_path) == []


WRITER = (
    "import sys, time\n"
    "from infx import fsio, interrupts\n"
    "interrupts.install()\n"
    "with fsio.replacing(sys.argv[1]) as temporary:\n"
    "    temporary.write_text('half')\n"
    "    print(temporary, flush=True)\n"
    "    time.sleep(60)\n"
)


def _writer_inside_replacing(target: Path) -> tuple[subprocess.Popen, Path]:
    process = subprocess.Popen(
        [sys.executable, "-c", WRITER, str(target)], env=ENV, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    temporary = Path(process.stdout.readline().strip())
    assert temporary.is_file()
    return process, temporary


def test_sigterm_during_a_write_removes_the_temporary_and_keeps_the_file(tmp_path):
    target = tmp_path / "a.json"
    target.write_text("old")
    process, temporary = _writer_inside_replacing(target)
    process.send_signal(signal.SIGTERM)
    assert process.wait(timeout=30) != 0
    assert "infx.interrupts.Interrupted: SIGTERM" in process.stderr.read()  # unwound by the exception, not killed
    assert not temporary.exists() and target.read_text() == "old"


def test_a_killed_runs_temporary_is_removed_by_the_next_write_of_that_file(tmp_path):
    target = tmp_path / "a.json"
    target.write_text("old")
    alive, live_temporary = _writer_inside_replacing(target)  # another writer, still running: its file is kept
    process, left = _writer_inside_replacing(target)
    process.kill()  # SIGKILL: no code runs, the temporary stays
    process.wait(timeout=30)
    legacy = tmp_path / f".{target.name}.k3x9q2zb.tmp"  # mkstemp's name before infx recorded the pid
    legacy.write_text("older half")
    other = tmp_path / ".b.json.1.tmp"
    other.write_text("not ours")
    lookalike = tmp_path / f".{target.name}.notes.tmp"  # not a name mkstemp makes
    lookalike.write_text("someone's")
    try:
        assert left.exists() and legacy.exists()
        fsio.atomic_write(target, "new")
        assert target.read_text() == "new"
        assert not left.exists() and not legacy.exists()
        assert live_temporary.exists() and other.exists() and lookalike.exists()
    finally:
        alive.kill()
        alive.wait(timeout=30)


def test_sigkill_during_changelog_fix_leaves_no_temporary_after_the_next_run(work):
    """A fix killed mid-write leaves `.perf-changelog.yaml.<pid>.*.tmp`; the next fix removes it."""
    (work / CHANGELOG).write_bytes((work / CHANGELOG).read_bytes() + appended_entry())
    # The real command, stopped at the point of its write by a breakpoint at the process boundary:
    # the syscall that syncs the temporary blocks on a FIFO nobody writes to.
    stall = (
        "import os, sys\n"
        "from infx import fsio\n"
        "real = fsio._fsync_path\n"
        "def stalled(path, directory=False):\n"
        "    print('writing', flush=True)\n"
        "    os.read(os.open(sys.argv[1], os.O_RDONLY), 1)\n"
        "fsio._fsync_path = stalled\n"
        "from infx.cli import main\n"
        "main(['changelog', 'fix', '--pr-number', '7', '--repo', 'a/b'])\n"
    )
    gate = work.parent / "gate"
    os.mkfifo(gate)
    process = subprocess.Popen(
        [sys.executable, "-c", stall, str(gate)], cwd=work, env=ENV, stdout=subprocess.PIPE, text=True
    )
    assert process.stdout.readline().strip() == "writing"
    left = temporaries(work)
    assert len(left) == 1 and left[0].startswith(f".{CHANGELOG}.{process.pid}.")
    before = (work / CHANGELOG).read_bytes()
    process.kill()
    process.wait(timeout=30)
    assert (work / CHANGELOG).read_bytes() == before  # the killed run changed nothing
    done = run_infx(["changelog", "fix", "--pr-number", "7", "--repo", "a/b"], work)
    assert done.code == 0, done.stderr
    assert temporaries(work) == [] and b"pull/7" in (work / CHANGELOG).read_bytes()


def test_fix_writes_nothing_when_the_repaired_file_would_still_fail(work):
    broken = (work / CHANGELOG).read_bytes() + b'\n- config-keys: 5\n  description:\n    - "x"\n  pr-link: XXX\n'
    (work / CHANGELOG).write_bytes(broken)
    done = run_infx(["changelog", "fix", "--pr-number", "7", "--repo", "a/b"], work)
    assert done.code == 1 and done.problem() is None, done.stderr
    assert "left unchanged" in done.stderr and "not written: pr-link 'XXX'" in done.stderr
    assert (work / CHANGELOG).read_bytes() == broken and temporaries(work) == []
    as_json = run_infx(["changelog", "fix", "--pr-number", "7", "--repo", "a/b", "--format", "json"], work)
    assert json.loads(as_json.stdout)["written"] is False


def test_fix_writes_a_result_that_passes(work):
    (work / CHANGELOG).write_bytes((work / CHANGELOG).read_bytes() + appended_entry())
    done = run_infx(["changelog", "fix", "--pr-number", "7", "--repo", "a/b", "--format", "json"], work)
    assert done.code == 0 and json.loads(done.stdout)["written"] is True


OUTPUT_COMMANDS = [
    ["matrix", "--config", "configs/nvidia-master.yaml", "--output", "{out}"],
    ["plan", "--format", "json", "--output", "{out}"],
    ["github", "select-points", "--plan", "{plan}", "--points", "{id}", "--output", "{out}"],
]


@pytest.fixture
def plan_file(work, tmp_path) -> tuple[Path, str]:
    done = run_infx(["matrix", "--config", "configs/nvidia-master.yaml"], work)
    rows = json.loads(done.stdout)
    path = tmp_path / "plan.json"
    path.write_text(json.dumps(rows))
    from infx.points import point_id

    return path, point_id(rows[0])


def _argv(template, out, plan_file):
    plan, pid = plan_file
    return [part.replace("{out}", str(out)).replace("{plan}", str(plan)).replace("{id}", pid) for part in template]


@pytest.mark.parametrize("template", OUTPUT_COMMANDS, ids=["matrix", "plan", "select-points"])
def test_every_output_refuses_what_is_not_a_regular_file(work, tmp_path, plan_file, template):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    folder = tmp_path / "folder"
    folder.mkdir()
    for target, kind in (
        ("/dev/full", "a character device"),
        ("/dev/null", "a character device"),
        (fifo, "a FIFO"),
        (folder, "a folder"),
    ):
        done = run_infx(_argv(template, target, plan_file), work)
        assert done.code == 2 and f"is {kind}, not a regular file" in done.stderr, done.stderr
    assert Path("/dev/full").is_char_device() and Path("/dev/null").is_char_device()
    assert stat.S_ISFIFO(fifo.stat().st_mode) and folder.is_dir() and list(folder.iterdir()) == []


@pytest.mark.parametrize("template", OUTPUT_COMMANDS, ids=["matrix", "plan", "select-points"])
def test_an_output_writes_through_a_symlink_only_when_asked(work, tmp_path, plan_file, template):
    target = tmp_path / "real.json"
    target.write_text("old")
    link = tmp_path / "link.json"
    link.symlink_to(target)
    refused = run_infx(_argv(template, link, plan_file), work)
    assert refused.code == 2 and "is a symbolic link" in refused.stderr and "--write-through-symlinks" in refused.stderr
    assert target.read_text() == "old"
    done = run_infx(["--write-through-symlinks", *_argv(template, link, plan_file)], work)
    assert done.code == 0, done.stderr
    assert link.is_symlink() and json.loads(target.read_text())
    new = run_infx(_argv(template, tmp_path / "new.json", plan_file), work)  # a new path, and an existing regular file
    again = run_infx(_argv(template, tmp_path / "new.json", plan_file), work)
    assert new.code == again.code == 0 and json.loads((tmp_path / "new.json").read_text())


def test_a_symlink_loop_is_refused_even_when_writing_through_links(tmp_path):
    (tmp_path / "a").symlink_to(tmp_path / "b")
    (tmp_path / "b").symlink_to(tmp_path / "a")
    with pytest.raises(fsio.UnusablePath):
        fsio.write_target(tmp_path / "a", through_symlink=True)
    with pytest.raises(fsio.UnusablePath):
        fsio.atomic_write(tmp_path / "a", "x")


def test_reads_refuse_what_would_block_or_never_end(tmp_path):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    started = time.monotonic()
    for path in (fifo, "/dev/zero", tmp_path):
        with pytest.raises(OSError):
            fsio.read_bytes(path)
    assert time.monotonic() - started < 5
    (tmp_path / "f").write_bytes(b"12345")
    assert fsio.read_bytes(tmp_path / "f") == b"12345" and fsio.read_bytes(tmp_path / "f", limit=2) == b"123"


def test_a_fifo_planted_in_the_cache_is_a_miss_not_a_hang(tmp_path, monkeypatch):
    from infx import diskcache

    monkeypatch.setenv("INFX_CACHE_DIR", str(tmp_path))
    monkeypatch.delenv("INFX_NO_CACHE", raising=False)
    os.mkfifo(tmp_path / "entry")
    assert diskcache.read_cached("entry") is None
    diskcache.write_cached("entry", b"fresh")  # refused: a FIFO is not replaced
    assert stat.S_ISFIFO((tmp_path / "entry").stat().st_mode)
    diskcache.write_cached("other", b"fresh")
    assert diskcache.read_cached("other") == b"fresh"


@pytest.mark.parametrize("variable", ["GITHUB_OUTPUT", "GITHUB_STEP_SUMMARY"])
def test_github_outputs_that_are_a_fifo_or_a_device_are_refused_not_waited_on(work, tmp_path, variable):
    """$GITHUB_OUTPUT naming a FIFO blocked `infx matrix --format github` forever."""
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    outputs = tmp_path / "outputs"
    for target, kind in ((fifo, "a FIFO"), ("/dev/full", "a character device")):
        env = {
            "GITHUB_OUTPUT": str(outputs),
            "GITHUB_STEP_SUMMARY": str(tmp_path / "summary.md"),
            "RUNNER_TEMP": str(tmp_path),
            variable: str(target),
        }
        done = run_infx(
            ["matrix", "--config", "configs/nvidia-master.yaml", "--format", "github"], work, env=env, timeout=20
        )
        assert done.code == 2 and f"is {kind}, not a regular file" in done.stderr, done.stderr
    env = {
        "GITHUB_OUTPUT": str(outputs),
        "GITHUB_STEP_SUMMARY": str(tmp_path / "summary.md"),
        "RUNNER_TEMP": str(tmp_path),
    }
    assert run_infx(["matrix", "--config", "configs/nvidia-master.yaml", "--format", "github"], work, env=env).code == 0
    assert "shards<<" in outputs.read_text() and (tmp_path / "summary.md").read_text()
