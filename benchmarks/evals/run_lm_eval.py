"""Run lm-evaluation-harness against the served endpoint, as infx's eval points do (docs/launch.md, "Evals").

Called by benchmark_lib.sh inside the serving container, in the workspace srt-slurm mounts at
/infmax-workspace (the working directory). ``run`` installs the pinned lm-eval when the container
has another version, runs every task of the plan once per concurrency (one after the other against
the same engine) and moves lm-eval's ``results_*.json`` and ``samples_*.jsonl`` into the working
directory; with several concurrencies each file gets a ``_conc<N>`` suffix. ``summary`` writes
``meta_env.json`` there: the point's metadata (written by infx into infx-eval.json) plus, for
several concurrencies, ``eval_concs``, ``completed_eval_concs`` and ``failed_eval_concs``.

Standard library only; Python 3.8 or newer (whatever the serving image has).
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

STATE = ".infx-eval-state.json"  # what ``run`` did, for ``summary``
SCRATCH = ".infx-eval"  # lm-eval's own output folders, one per concurrency
RESULT_GLOBS = ("results_*.json", "samples_*.jsonl")


def say(message):
    print("[infx eval] " + message, flush=True)


def read_json(path):
    with open(path, encoding="utf-8") as handle:
        return json.load(handle)


def write_json(path, data):
    """Whole file or nothing: written beside the target, then renamed over it."""
    temporary = str(path) + ".tmp"
    with open(temporary, "w", encoding="utf-8") as handle:
        json.dump(data, handle, indent=2)
        handle.write("\n")
    os.replace(temporary, path)


def parse_concs(text, planned):
    """The concurrencies to run: EVAL_CONC as bench.sh passes it, else the plan's."""
    words = (text or "").split()
    if not words:
        return list(planned)
    concs = []
    for word in words:
        if not word.isdigit() or int(word) < 1:
            raise SystemExit("run_lm_eval: concurrency %r is not a positive whole number" % word)
        if int(word) not in concs:
            concs.append(int(word))
    return concs


def installed_version():
    try:
        from importlib.metadata import PackageNotFoundError, version
    except ImportError:  # Python < 3.8
        return None
    for name in ("lm_eval", "lm-eval"):
        try:
            return version(name)
        except PackageNotFoundError:
            continue
    return None


def ensure_harness(protocol):
    wanted = protocol["lm-eval"]
    found = installed_version()
    if found == wanted:
        return
    if os.environ.get("INFX_EVAL_NO_INSTALL") == "1":
        raise SystemExit("run_lm_eval: lm-eval %s is required, %s is installed, and INFX_EVAL_NO_INSTALL=1" % (wanted, found))
    say("installing lm-eval %s (found %s)" % (wanted, found or "none"))
    subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-cache-dir", "lm-eval[api]==%s" % wanted], check=True)


def lm_eval_argv(plan, port, conc, output):
    protocol = plan["protocol"]
    model = os.environ.get("MODEL_NAME") or plan["meta"]["model"]
    host = os.environ.get("INFX_EVAL_HOST", "localhost")
    model_args = ",".join((
        "model=" + model, "base_url=http://%s:%s/v1/chat/completions" % (host, port), "num_concurrent=%d" % conc,
        "max_retries=5", "timeout=1800", "tokenized_requests=False",
    ))
    argv = [sys.executable, "-m", "lm_eval", "--model", protocol["model"], "--model_args", model_args,
            "--tasks", ",".join(task["task"] for task in protocol["tasks"]),
            "--include_path", str(Path(plan["tasks-dir"]).resolve()), "--log_samples", "--output_path", str(output)]
    if protocol["chat-template"]:
        argv.append("--apply_chat_template")
    limit = os.environ.get("EVAL_LIMIT", "")
    if limit:  # a smoke slice only; a full run never sets it
        argv += ["--limit", limit]
    return argv


def stage(output, conc, batched):
    """Move lm-eval's result and sample files into the working directory; returns their names."""
    moved = []
    for pattern in RESULT_GLOBS:
        for found in sorted(Path(output).rglob(pattern)):
            stem, suffix = found.name.rsplit(".", 1)
            name = "%s_conc%d.%s" % (stem, conc, suffix) if batched else found.name
            target, extra = Path(name), 2
            while target.exists():
                target = Path("%s_%d.%s" % (name.rsplit(".", 1)[0], extra, suffix))
                extra += 1
            shutil.move(str(found), str(target))
            moved.append(target.name)
    return moved


def run(args):
    if not args.port.isdigit():
        raise SystemExit("run_lm_eval: port %r is not a number" % args.port)
    plan = read_json(args.plan)
    concs = parse_concs(args.concs, plan["concs"])
    batched = len(concs) > 1
    ensure_harness(plan["protocol"])
    completed, failed = [], []
    for conc in concs:
        output = Path(SCRATCH) / ("conc%d" % conc)
        if output.exists():
            shutil.rmtree(str(output))
        argv = lm_eval_argv(plan, args.port, conc, output)
        say("concurrency %d: %s" % (conc, " ".join(argv)))
        code = subprocess.run(argv).returncode
        moved = stage(output, conc, batched)
        if code == 0 and any(name.startswith("results_") for name in moved):
            completed.append(conc)
        else:
            say("concurrency %d failed (lm-eval exit %d, %d file(s) kept)" % (conc, code, len(moved)))
            failed.append(conc)
    write_json(STATE, {"concs": concs, "completed": completed, "failed": failed})
    shutil.rmtree(SCRATCH, ignore_errors=True)
    return 1 if failed else 0


def summary(args):
    plan = read_json(args.plan)
    state = read_json(STATE) if os.path.exists(STATE) else {"concs": plan["concs"], "completed": [], "failed": list(plan["concs"])}
    meta = dict(plan["meta"])
    meta["model"] = os.environ.get("MODEL_NAME") or meta["model"]
    meta["conc"] = state["concs"][0]
    if len(state["concs"]) > 1:
        meta.update({"eval_concs": state["concs"], "completed_eval_concs": state["completed"], "failed_eval_concs": state["failed"]})
    meta["infx"] = plan["infx"]
    write_json("meta_env.json", meta)
    say("meta_env.json written (%d of %d concurrencies completed)" % (len(state["completed"]), len(state["concs"])))
    return 0


def main(argv=None):
    parser = argparse.ArgumentParser(prog="run_lm_eval.py")
    commands = parser.add_subparsers(dest="command", required=True)
    run_parser = commands.add_parser("run")
    run_parser.add_argument("--plan", required=True)
    run_parser.add_argument("--port", required=True)
    run_parser.add_argument("--concs", default="")
    summary_parser = commands.add_parser("summary")
    summary_parser.add_argument("--plan", required=True)
    args = parser.parse_args(argv)
    return run(args) if args.command == "run" else summary(args)


if __name__ == "__main__":
    sys.exit(main())
