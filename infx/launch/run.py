"""Perform a planned launch: fetch, install, submit, wait, collect — with a record of all of it.

Order matters and is the point of this module: nothing is fetched before the plan passed its
checks; a recipe that ships with srt-slurm is checked after checkout but before submission;
logs are tarred and the launch record written on every exit path, including SIGTERM/SIGINT.
"""

from __future__ import annotations

import datetime as dt
import os
import shutil
import signal
import sys
import time
from pathlib import Path

from ..diagnostics import InfxError, render_text
from ..interrupts import Interrupted, raise_interrupted
from . import prepare, results, slurm
from .plan import LaunchPlan, resolve_in_checkout
from .sources import FetchError, cached_checkout, fetch_pinned
from .srtctl import SrtctlError, apply_overlays, install_srtctl, submit, write_yaml

EXIT_FAILED = 1


class LaunchFailed(Exception):
    pass


def _say(message: str) -> None:
    print(f"[infx launch] {message}", file=sys.stderr, flush=True)


class StatusLine:
    """A live line on a terminal; one line per change of state in a CI log."""

    def __init__(self, stream=sys.stderr):
        self.stream = stream
        self.live = stream.isatty()
        self.last = None

    def update(self, job_id: str, state: str, elapsed: float) -> None:
        text = f"job {job_id}: {state}, {int(elapsed) // 60:02d}:{int(elapsed) % 60:02d} elapsed"
        if self.live:
            self.stream.write("\r" + text + " " * 8)
            self.stream.flush()
        elif state != self.last:
            print(f"[infx launch] {text}", file=self.stream, flush=True)
        self.last = state

    def close(self) -> None:
        if self.live and self.last is not None:
            self.stream.write("\n")


def _follow(log: Path, offset: int) -> int:
    if not log.is_file():
        return offset
    with log.open("rb") as handle:
        handle.seek(offset)
        chunk = handle.read()
    if chunk:
        sys.stdout.write(chunk.decode(errors="replace"))
        sys.stdout.flush()
    return offset + len(chunk)


def wait_for_job(job_id: str, log: Path, poll: float) -> slurm.JobState:
    """Stream the job log and show its state until Slurm reports a terminal state."""
    status, offset, start = StatusLine(), 0, time.monotonic()
    try:
        while True:
            state = slurm.job_state(job_id)
            offset = _follow(log, offset)
            status.update(job_id, state.state, time.monotonic() - start)
            if not state.active:
                if state.state == "UNKNOWN" and not log.exists():
                    raise LaunchFailed(f"job {job_id} failed before creating its log file {log}")
                _follow(log, offset)
                return state
            time.sleep(poll)
    finally:
        status.close()


def prepare_checkout(plan: LaunchPlan, workspace: Path, cache: Path, work: Path, record: dict) -> tuple[Path, Path]:
    """Pinned srt-slurm checkout, deferred recipe checks, sources, overlays, config, private srtctl.

    Returns (srtctl, resolved recipe path). Any failure raises LaunchFailed before submission.
    """
    checkout, logs = work / "srt-slurm", work / "logs"
    try:
        cached_checkout("srt-slurm", plan.pin.repository, plan.pin.commit, cache, checkout)
        resolve_in_checkout(plan, checkout)
        for source in plan.sources:
            head = fetch_pinned(source.name, source.url, source.commit, checkout / source.dest)
            record["sources"].append({**source.to_json(), "head": head})
    except InfxError as exc:
        raise LaunchFailed("the recipe shipped with srt-slurm failed its checks:\n" + render_text(exc.diagnostics))
    except FetchError as exc:
        raise LaunchFailed(str(exc))
    resolved = checkout / plan.resolved_path
    try:
        apply_overlays(plan.route.overlays, workspace, checkout)
        write_yaml(resolved, plan.recipe)
        write_yaml(checkout / "srtslurm.yaml", plan.cluster_config(str(checkout), plan.squash_file()))
        srtctl = install_srtctl(checkout, work / "venv", list(plan.lane.data["srt-slurm"].get("pip-args", [])))
    except SrtctlError as exc:
        (logs / "srtctl-install.log").write_text(exc.output)
        raise LaunchFailed(f"{exc}\n{exc.output.strip()[-4000:]}")
    for name, path in (("resolved-recipe.yaml", resolved), ("srtslurm.yaml", checkout / "srtslurm.yaml")):
        shutil.copyfile(path, logs / name)
    return srtctl, resolved


def run_prepare(plan: LaunchPlan, work: Path, checkout: Path, env: dict, record: dict) -> None:
    """The lane's prepare: steps (squash imports, setup) in the checkout; a failing step stops the launch."""
    guard = work / prepare.GUARD.name
    steps = plan.prepare_steps(str(guard))
    if steps:
        shutil.copyfile(prepare.GUARD, guard)  # compute nodes see the launch dir, not necessarily infx itself
    try:
        prepare.run_steps(steps, checkout, env, work / "logs" / "prepare.log", record["prepare"], say=_say)
    except prepare.StepFailed as exc:
        raise LaunchFailed(f"{exc}; its output:\n{exc.output.rstrip()[-prepare.OUTPUT_TAIL:]}")


def launch_point(plan: LaunchPlan, out: Path, workspace: Path, env: dict | None = None) -> int:
    env = dict(os.environ if env is None else env)
    out.mkdir(parents=True, exist_ok=True)
    started = dt.datetime.now(dt.timezone.utc)
    name = results.result_name(plan.point.data, plan.point_id, env)
    # Checkout and venv go to the runner's temp dir when there is one, so artifact uploads of the
    # output dir stay small; the resolved recipe and srtslurm.yaml are copied into the logs.
    work = Path(env.get("RUNNER_TEMP") or out) / ".infx-launch" / f"{plan.point_id}-{started.strftime('%Y%m%dT%H%M%S')}-{os.getpid()}"
    checkout, logs = work / "srt-slurm", work / "logs"
    logs.mkdir(parents=True, exist_ok=True)
    cache = Path(env.get("INFX_CACHE_DIR") or Path.home() / ".cache" / "infx") / "srt-slurm"
    poll = float(plan.lane.slurm.get("poll-seconds", 10))
    record = {
        "lane": plan.lane.name, "point-id": plan.point_id, "point": plan.point.data, "route": plan.route.name,
        "srt-slurm": plan.pin.to_json(),
        "sources": [], "prepare": [], "recipe-source": plan.recipe_source.ref.value, "recipe-fingerprint": None, "resolved-recipe": None,
        "job-name": plan.job_name, "job-id": None, "terminal-state": None, "slurm-exit-code": None, "exit-code": None,
        "result-name": name, "results": [], "message": "", "timings": {"started": started.isoformat()},
    }
    phase_start = time.monotonic()

    def phase(label: str) -> None:
        nonlocal phase_start
        now = time.monotonic()
        record["timings"][label] = round(now - phase_start, 3)
        phase_start = now

    # A second signal is ignored (raise_interrupted), so it cannot cut the cancel and the record short.
    previous = {s: signal.signal(s, raise_interrupted) for s in (signal.SIGTERM, signal.SIGINT)}
    code = EXIT_FAILED
    try:
        if plan.pin.commit is None:
            raise LaunchFailed(f"srt-slurm pin {plan.pin.name} ({plan.pin.repository} {plan.pin.ref}) has no commit SHA in "
                               f"{plan.lane.file}; refusing to launch an unpinned checkout")
        leftovers = slurm.cancel_by_name(plan.job_name)
        if leftovers:
            _say(f"cancelled leftover job(s) named {plan.job_name}: {', '.join(leftovers)}")
        srtctl, resolved = prepare_checkout(plan, workspace, cache, work, record)
        phase("checkout-seconds")
        run_prepare(plan, work, checkout, env, record)
        phase("prepare-seconds")
        record["recipe-fingerprint"], record["resolved-recipe"] = plan.recipe_fingerprint(), str(resolved)
        try:
            submission = submit(srtctl, plan.argv(), checkout, {**env, "RESULT_FILENAME": name, "INFMAX_WORKSPACE": str(out)})
        except SrtctlError as exc:
            (logs / "srtctl-apply.log").write_text(exc.output)
            raise LaunchFailed(f"{exc}; its output:\n{exc.output.rstrip()}")
        (logs / "srtctl-apply.log").write_text(submission.output)
        record["job-id"] = job_id = submission.job_id
        _say(f"submitted job {job_id} ({plan.job_name})")
        phase("submit-seconds")
        state = wait_for_job(job_id, checkout / "outputs" / job_id / "logs" / f"sweep_{job_id}.log", poll)
        phase("run-seconds")
        record["terminal-state"], record["slurm-exit-code"] = state.state, state.exit_code
        if not state.succeeded:
            raise LaunchFailed(f"job {job_id}: {state.message()}")
        job_logs = checkout / "outputs" / job_id / "logs"
        if plan.point.data.get("scenario-type") == "agentic-coding":
            staged = results.check_agentic(out, name, list(plan.point.data.get("conc") or []))
        else:
            staged = results.stage_fixed_seq(job_logs, out, name)
        record["results"] = [p.name for p in staged]
        record["message"] = f"job {job_id} completed; {len(staged)} result file(s)"
        _say(record["message"])
        code = 0
    except Interrupted as exc:
        code = 128 + exc.signum
        record["message"] = f"interrupted by {exc}"
        _say(record["message"] + (f"; cancelling job {record['job-id']}" if record["job-id"] else ""))
        if record["job-id"]:
            state = slurm.cancel_and_wait(record["job-id"])
            record["terminal-state"], record["slurm-exit-code"] = state.state, state.exit_code
    except (LaunchFailed, results.ResultError) as exc:
        record["message"] = str(exc)
        _say(f"FAILED: {exc}")
    finally:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)  # finish collecting even if cancelled again
        try:
            if record["job-id"] and (checkout / "outputs" / record["job-id"] / "logs").is_dir():
                shutil.copytree(checkout / "outputs" / record["job-id"] / "logs", logs / "job", dirs_exist_ok=True)
            results.tar_logs(logs, out)
            if plan.pin.commit is not None:
                slurm.cancel_by_name(plan.job_name)
        finally:
            record["exit-code"] = code
            record["timings"]["finished"] = dt.datetime.now(dt.timezone.utc).isoformat()
            results.write_record(out / f"{name}_launch.json", record)
            for signum, handler in previous.items():
                signal.signal(signum, handler)
    return code
