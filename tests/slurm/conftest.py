"""A real one-node Slurm controller on localhost for the launcher's integration tests.

Session-scoped: munged, slurmctld and slurmd start once (about 2 s) from the installed
Debian binaries, configured entirely inside a temp dir, and stop at the end after asserting
the queue is empty. SLURM_CONF points every Slurm command of the session at it.
In CI (CI=true) missing binaries FAIL the tests; elsewhere they skip.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import time

import pytest

BINARIES = ("munged", "slurmctld", "slurmd", "sbatch", "scontrol", "sinfo", "squeue", "scancel")
PARTITION = "testlane"


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _wait(predicate, timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.2)
    raise RuntimeError(f"timed out waiting for {what}")


def _node_line() -> str:
    first = subprocess.run(["slurmd", "-C"], capture_output=True, text=True, check=True).stdout.splitlines()[0]
    fields = [f for f in first.split() if not f.startswith("UpTime")]
    return " ".join(fields) + " Gres=gpu:4 State=UNKNOWN"


@pytest.fixture(scope="session")
def slurm_cluster(tmp_path_factory):
    missing = [b for b in BINARIES if shutil.which(b) is None]
    if missing:
        message = f"Slurm/munge binaries missing: {', '.join(missing)} (apt-get install -y slurm-wlm munge)"
        if os.environ.get("CI") == "true":
            pytest.fail(message)
        pytest.skip(message)
    base = tmp_path_factory.mktemp("slurm")
    for sub in ("state", "spool", "log", "run", "gpus", "munge"):
        (base / sub).mkdir()
    for index in range(4):
        (base / "gpus" / f"nvidia{index}").write_text("")
    key = base / "munge" / "munge.key"
    key.write_bytes(os.urandom(1024))
    key.chmod(0o400)
    munge_socket = base / "munge" / "munge.socket"
    hostname = socket.gethostname().split(".")[0]
    conf = base / "slurm.conf"
    conf.write_text("\n".join([
        "ClusterName=infxtest",
        f"SlurmctldHost={hostname}",
        "SlurmUser=root", "SlurmdUser=root",
        f"SlurmctldPort={_free_port()}", f"SlurmdPort={_free_port()}",
        "AuthType=auth/munge", "CredType=cred/munge", f"AuthInfo=socket={munge_socket}",
        "ProctrackType=proctrack/linuxproc", "TaskPlugin=task/none",
        "SelectType=select/cons_tres", "SelectTypeParameters=CR_Core",
        "SchedulerType=sched/backfill", "MpiDefault=none",
        "AccountingStorageType=accounting_storage/none", "JobAcctGatherType=jobacct_gather/none",
        "JobCompType=jobcomp/none", "MinJobAge=3600", "ReturnToService=2", "KillWait=2",
        "GresTypes=gpu",
        f"StateSaveLocation={base / 'state'}", f"SlurmdSpoolDir={base / 'spool'}",
        f"SlurmctldPidFile={base / 'run' / 'slurmctld.pid'}", f"SlurmdPidFile={base / 'run' / 'slurmd.pid'}",
        f"SlurmctldLogFile={base / 'log' / 'slurmctld.log'}", f"SlurmdLogFile={base / 'log' / 'slurmd.log'}",
        _node_line(),
        f"PartitionName={PARTITION} Nodes=ALL Default=YES MaxTime=INFINITE State=UP",
        "",
    ]))
    (base / "gres.conf").write_text(f"AutoDetect=off\nName=gpu File={base / 'gpus'}/nvidia[0-3]\n")
    env = {**os.environ, "SLURM_CONF": str(conf)}
    processes = [subprocess.Popen(["munged", "--foreground", "--force", f"--socket={munge_socket}", f"--key-file={key}",
                                   f"--pid-file={base / 'munge' / 'munged.pid'}", f"--log-file={base / 'munge' / 'munged.log'}",
                                   f"--seed-file={base / 'munge' / 'munged.seed'}"],
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)]
    _wait(munge_socket.exists, 10, "munged")
    previous = os.environ.get("SLURM_CONF")
    os.environ["SLURM_CONF"] = str(conf)
    try:
        for daemon in (["slurmctld", "-D", "-i"], ["slurmd", "-D"]):
            processes.append(subprocess.Popen(daemon, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))

        def idle() -> bool:
            done = subprocess.run(["sinfo", "-h", "-o", "%t", "-p", PARTITION], capture_output=True, text=True, env=env)
            return done.stdout.strip() == "idle"

        _wait(idle, 30, "the Slurm node to become idle")
        yield {"conf": conf, "partition": PARTITION, "base": base, "env": env}
        queue = subprocess.run(["squeue", "-h"], capture_output=True, text=True, env=env).stdout.strip()
        assert queue == "", f"jobs left in the queue after the suite:\n{queue}"
    finally:
        for process in reversed(processes):
            process.terminate()
        for process in processes:
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
        if previous is None:
            os.environ.pop("SLURM_CONF", None)
        else:
            os.environ["SLURM_CONF"] = previous
