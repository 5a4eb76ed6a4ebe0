"""Staging a launch's outputs (infx/launch/staging.py): nothing is followed, opened or left in the
output folder that is not a regular file or a folder, because actions/upload-artifact follows
symbolic links and would upload the runner host's files. The launch itself, with a job planting
these in its logs, runs on the real local Slurm (tests/slurm/test_faults.py)."""

from __future__ import annotations

import os
import stat
import tarfile
from pathlib import Path

from infx.launch import staging
from testing.launchkit import SA_BENCH_RESULT

SECRET = "a file of the runner host"


def hostile_logs(root: Path) -> tuple[Path, Path]:
    """A job's logs holding a result, and next to it links to a host file and to a device, a FIFO,
    a device node (root may make one; otherwise the link to /dev/zero stands for it), and a
    result file that is a link."""
    logs, secret = root / "logs", root / "secret.txt"
    secret.write_text(SECRET)
    results_dir = logs / "sa-bench_isl_8192_osl_1024"
    results_dir.mkdir(parents=True)
    (results_dir / "results_concurrency_4_gpus_4.json").write_bytes(SA_BENCH_RESULT.read_bytes())
    (results_dir / "results_concurrency_8_gpus_4.json").symlink_to(secret)
    (logs / "host-file").symlink_to(secret)
    (logs / "zeros").symlink_to("/dev/zero")
    os.mkfifo(logs / "pipe")
    (logs / "linked-folder").symlink_to(root)
    if os.geteuid() == 0:
        os.mknod(logs / "null-device", stat.S_IFCHR | 0o600, os.makedev(1, 3))
    return logs, secret


def uploadable(out: Path) -> list[Path]:
    return [p for p in out.rglob("*") if p.is_symlink() or not (p.is_file() or p.is_dir())]


def test_staging_takes_regular_result_files_only(tmp_path):
    logs, _ = hostile_logs(tmp_path)
    out = tmp_path / "out"
    out.mkdir()
    staged, skipped = staging.stage_fixed_seq(logs, out, "RF")
    assert [p.name for p in staged] == ["RF_sa-bench_isl_8192_osl_1024_conc4_gpus_4.json"]
    assert staged[0].read_bytes() == SA_BENCH_RESULT.read_bytes()
    assert skipped == [
        "logs/sa-bench_isl_8192_osl_1024/results_concurrency_8_gpus_4.json: a symbolic link, not followed or staged"
    ]
    assert uploadable(out) == []
    assert staging.stage_fixed_seq(tmp_path / "secret.txt", out, "RF") == ([], [])  # not a folder: nothing
    (tmp_path / "logs-link").symlink_to(logs)
    assert staging.stage_fixed_seq(tmp_path / "logs-link", out, "RF") == ([], [])  # a link to logs is not entered


def test_the_tarball_and_the_logs_copy_hold_no_link_fifo_or_device(tmp_path):
    logs, _ = hostile_logs(tmp_path)
    out = tmp_path / "out"
    out.mkdir()
    tarball, skipped = staging.tar_logs(logs, out)
    names = {line.split(":")[0] for line in skipped}
    assert names >= {
        "host-file",
        "zeros",
        "pipe",
        "linked-folder",
        "sa-bench_isl_8192_osl_1024/results_concurrency_8_gpus_4.json",
    }
    assert ("null-device" in names) == (os.geteuid() == 0)
    with tarfile.open(tarball) as tar:
        members = tar.getmembers()
        assert all(m.isfile() or m.isdir() for m in members)
        assert sorted(m.name for m in members if m.isfile()) == [
            "./sa-bench_isl_8192_osl_1024/results_concurrency_4_gpus_4.json"
        ]
        assert SECRET.encode() not in b"".join(tar.extractfile(m).read() for m in members if m.isfile())
    assert sorted(str(p.relative_to(out / "LOGS")) for p in (out / "LOGS").rglob("*")) == [
        "sa-bench_isl_8192_osl_1024",
        "sa-bench_isl_8192_osl_1024/results_concurrency_4_gpus_4.json",
    ]
    assert uploadable(out) == []


def test_the_output_is_cleared_of_what_the_job_linked_into_it(tmp_path):
    out, secret = tmp_path / "out", tmp_path / "secret.txt"
    secret.write_text(SECRET)
    (out / "sub").mkdir(parents=True)
    (out / "RF_conc4.json").symlink_to(secret)
    (out / "sub" / "leak").symlink_to("/etc")
    os.mkfifo(out / "pipe")
    (out / "kept.json").write_text("{}")
    (out / ".infx-launch" / "venv" / "bin").mkdir(parents=True)
    (out / ".infx-launch" / "venv" / "bin" / "python").symlink_to("/usr/bin/python3")  # the launch's own work folder
    removed = staging.clear_output(out)
    assert sorted(line.split(":")[0] for line in removed) == ["RF_conc4.json", "pipe", "sub/leak"]
    assert secret.read_text() == SECRET and (out / "kept.json").is_file()  # a link is removed, never its target
    assert uploadable(out) == [out / ".infx-launch" / "venv" / "bin" / "python"]
    assert staging.check_agentic(out, "RF", [4]) == []
