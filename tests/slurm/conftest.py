"""A real one-node Slurm controller on localhost for the launcher's integration tests.

Session-scoped: munged, slurmctld and slurmd start once per pytest-xdist worker that needs
them (about 2 s) from the installed Debian binaries, configured entirely inside the worker's
temp dir on free ports, and stop at the end after asserting the queue is empty. SLURM_CONF
points every Slurm command of the worker at its own controller.
In CI (CI=true) missing binaries FAIL the tests; elsewhere they skip.

Partition ``testlane`` is the machine itself (one node). Partition ``gb300local`` has
MULTI_NODES nodes shaped like GB300 nodes as srt-slurm's batch scripts ask for them (144 CPUs,
4 GPUs each): Slurm's multiple-slurmd mode, one ``slurmd -N <node>`` per node on this host, each
with its own port (``NodeHostname`` = this host); ``SlurmdParameters=config_overrides`` makes
each slurmd report the configured shape, not the hardware's; their prolog creates the
directory of the job's --output file (see the comment at ``prolog``). Their daemons start only for the
tests that ask for ``slurm_multinode``, so a real srtctl job needing up to 18 nodes is scheduled and
started by real Slurm (its steps run on this host).
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
MULTI_PARTITION = "gb300local"
MULTI_NODES = [f"gb{index:02d}" for index in range(1, 19)]  # the bundled points need 1 to 18 nodes


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


def _hostlist(names: list[str]) -> str:
    return f"gb[{names[0][2:]}-{names[-1][2:]}]"


def _multi_node_lines(hostname: str) -> list[str]:
    return [
        f"NodeName={name} NodeHostname={hostname} Port={_free_port()} CPUs=144 Boards=1 SocketsPerBoard=1 "
        "CoresPerSocket=144 ThreadsPerCore=1 RealMemory=1000 Gres=gpu:4 State=UNKNOWN"
        for name in MULTI_NODES
    ]


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
    # The site prolog of the GB300-shaped nodes creates the directory of the job's --output file
    # before the batch script starts. srt-slurm's batch scripts write to
    # outputs/<job id>/logs/sweep_<job id>.log; the sa-submission and aflowers branches never create
    # that directory, and v1.0.x create it only after sbatch returned, while this Slurm (22.05)
    # does not create it either: on an idle node the job would fail without a log.
    conf = base / "slurm.conf"
    prolog = base / "prolog.sh"
    prolog.write_text(
        "\n".join(
            [
                "#!/bin/sh",
                f"export SLURM_CONF={conf} PATH=/usr/local/bin:/usr/bin:/bin",
                'case "$SLURMD_NODENAME" in ' + MULTI_NODES[0][:2] + "*) ;; *) exit 0;; esac",
                'out=$(scontrol show job -o "$SLURM_JOB_ID" | sed -n "s/.* StdOut=\\([^ ]*\\).*/\\1/p")',
                'case "$out" in /*) mkdir -p "$(dirname "$out")";; esac',
                "exit 0",
                "",
            ]
        )
    )
    prolog.chmod(0o755)
    conf.write_text(
        "\n".join(
            [
                "ClusterName=infxtest",
                f"SlurmctldHost={hostname}",
                "SlurmUser=root",
                "SlurmdUser=root",
                f"SlurmctldPort={_free_port()}",
                f"SlurmdPort={_free_port()}",
                "AuthType=auth/munge",
                "CredType=cred/munge",
                f"AuthInfo=socket={munge_socket}",
                "ProctrackType=proctrack/linuxproc",
                "TaskPlugin=task/none",
                "SlurmdParameters=config_overrides",
                "SelectType=select/cons_tres",
                "SelectTypeParameters=CR_Core",
                "SchedulerType=sched/backfill",
                "MpiDefault=none",
                "AccountingStorageType=accounting_storage/none",
                "JobAcctGatherType=jobacct_gather/none",
                "JobCompType=jobcomp/none",
                "MinJobAge=3600",
                "ReturnToService=2",
                # KillWait: the time between a cancel's SIGTERM and SIGKILL; a job that ignores SIGTERM holds a
                # cancel that long (test_faults holds one until the test releases it); every other job ends on SIGTERM.
                "KillWait=30",
                "GresTypes=gpu",
                f"Prolog={prolog}",
                f"StateSaveLocation={base / 'state'}",
                f"SlurmdSpoolDir={base / 'spool' / '%n'}",
                f"SlurmctldPidFile={base / 'run' / 'slurmctld.pid'}",
                f"SlurmdPidFile={base / 'run' / 'slurmd-%n.pid'}",
                f"SlurmctldLogFile={base / 'log' / 'slurmctld.log'}",
                f"SlurmdLogFile={base / 'log' / 'slurmd-%n.log'}",
                _node_line(),
                *_multi_node_lines(hostname),
                f"PartitionName={PARTITION} Nodes={hostname} Default=YES MaxTime=INFINITE State=UP",
                f"PartitionName={MULTI_PARTITION} Nodes={_hostlist(MULTI_NODES)} MaxTime=INFINITE State=UP",
                "",
            ]
        )
    )
    (base / "gres.conf").write_text(f"AutoDetect=off\nName=gpu File={base / 'gpus'}/nvidia[0-3]\n")
    env = {**os.environ, "SLURM_CONF": str(conf)}
    processes = [
        subprocess.Popen(
            [
                "munged",
                "--foreground",
                "--force",
                f"--socket={munge_socket}",
                f"--key-file={key}",
                f"--pid-file={base / 'munge' / 'munged.pid'}",
                f"--log-file={base / 'munge' / 'munged.log'}",
                f"--seed-file={base / 'munge' / 'munged.seed'}",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
    ]
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
        _stop(list(reversed(processes)))
        if previous is None:
            os.environ.pop("SLURM_CONF", None)
        else:
            os.environ["SLURM_CONF"] = previous


def _stop(processes: list[subprocess.Popen]) -> None:
    """Terminate daemons in the given order, then wait for each (killed after 10 s)."""
    for process in processes:
        process.terminate()
    for process in processes:
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()


def _partition_states(partition: str, env: dict) -> list[str]:
    done = subprocess.run(["sinfo", "-h", "-N", "-o", "%t", "-p", partition], capture_output=True, text=True, env=env)
    return done.stdout.split()


@pytest.fixture(scope="session")
def slurm_multinode(slurm_cluster):
    """Start one slurmd per node of partition gb300local and wait until all are idle."""
    env = slurm_cluster["env"]
    processes = [
        subprocess.Popen(["slurmd", "-D", "-N", name], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        for name in MULTI_NODES
    ]
    try:
        _wait(
            lambda: _partition_states(MULTI_PARTITION, env) == ["idle"] * len(MULTI_NODES),
            60,
            f"the {len(MULTI_NODES)} nodes of {MULTI_PARTITION} to become idle",
        )
        yield {**slurm_cluster, "partition": MULTI_PARTITION, "nodes": list(MULTI_NODES)}
    finally:
        _stop(processes)


@pytest.fixture(scope="session")
def srtctl_cache(tmp_path_factory):
    """infx's cache seeded from the srt-slurm bundle, with the real srtctl installed per pinned NVIDIA commit.

    Exactly what a runner without network does (`infx lane cache-seed gb300-nv --from BUNDLE
    --srtctl`); pip fetches srtctl's dependencies from PyPI (about 20 s a commit, once a session).
    """
    import json
    from pathlib import Path

    from testing.cli import run_cli
    from testing.corpus import SRT_SLURM_BUNDLE

    repo = Path(__file__).resolve().parents[2]
    base = tmp_path_factory.mktemp("infx-cache")
    env = {"INFX_CACHE_DIR": str(base), "GITHUB_WORKSPACE": str(repo)}
    done = run_cli(
        "lane",
        "cache-seed",
        "gb300-nv",
        "--from",
        SRT_SLURM_BUNDLE,
        "--srtctl",
        "--format",
        "json",
        cwd=repo,
        env=env,
        timeout=1800,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    pins = {p["pin"]: p for p in json.loads(done.stdout)["pins"]}
    return {"base": base, "pins": pins}
