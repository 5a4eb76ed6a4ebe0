"""Record what infx's commands print and write, and compare a later version against the record.

    python3 bench/recorded_commands.py record DIR [--code CODE_DIR]
    python3 bench/recorded_commands.py compare DIR [--code CODE_DIR]

A refactor keeps every output byte for byte: this runs a fixed list of commands (every `--help`
text, and the commands of the main job on the bundled configs: validate, matrix, plan, changelog,
lane, launch --dry-run, point ids, reuse, collect, compare, summary, check-evals, init) in a fresh
clone of this repository, and keeps for each its exit code, stdout, stderr and the files it wrote.
`record` also keeps the inputs it generated (points, a plan, a sweep's artifacts), so `compare`
feeds the new version exactly the same files. `--code` runs the infx package found in CODE_DIR
(e.g. `git worktree add /tmp/before <commit>`), default this checkout's. Paths of the run's
temporary folders are written as `<CLONE>` and `<INPUTS>`.
"""

from __future__ import annotations

import argparse
import difflib
import hashlib
import json
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from bench.launch_dry_run import BUNDLE  # noqa: E402

# Rows that exercise each kind of point: a multinode fixed-seq-len one, an agentic one, an eval one.
POINT_SAMPLE = 6


def infx_command(code: Path, *args: str) -> list[str]:
    return [
        sys.executable,
        "-c",
        "import sys; sys.path.insert(0, sys.argv.pop(1)); from infx.cli import main; main()",
        str(code),
        *args,
    ]


def environment(inputs: Path) -> dict[str, str]:
    return {
        "PATH": "/usr/local/bin:/usr/bin:/bin",
        "HOME": str(inputs / "home"),
        "INFX_CACHE_DIR": str(inputs / "cache"),
        "LANG": "C.UTF-8",
        "COLUMNS": "80",
        "TZ": "UTC",
    }


def run(code: Path, clone: Path, inputs: Path, args: list[str], extra_env: dict | None = None) -> dict:
    done = subprocess.run(
        infx_command(code, *args),
        cwd=clone,
        env=environment(inputs) | (extra_env or {}),
        capture_output=True,
        check=False,
    )
    return {"exit": done.returncode, "stdout": done.stdout, "stderr": done.stderr}


def help_commands(code: Path, clone: Path, inputs: Path) -> list[list[str]]:
    """Every `--help`: the group's, each command's, each subcommand's (read from the Commands sections)."""
    found, queue = [], [[]]
    while queue:
        prefix = queue.pop(0)
        found.append([*prefix, "--help"])
        text = run(code, clone, inputs, [*prefix, "--help"])["stdout"].decode()
        if "Commands:" in text:
            section = text.split("Commands:", 1)[1]
            queue.extend([*prefix, match] for match in re.findall(r"^  (\S+)", section, re.MULTILINE))
    return found


def make_inputs(code: Path, clone: Path, inputs: Path) -> None:
    """The files the commands read besides the clone: sample points, a plan, a sweep of artifacts, its rows."""
    from bench.results_pipeline import generate_sweep

    subprocess.run(
        infx_command(code, "lane", "cache-seed", "gb300-nv", "--from", str(BUNDLE)),
        cwd=clone,
        env=environment(inputs),
        check=True,
        stdout=subprocess.DEVNULL,
    )
    rows = json.loads(run(code, clone, inputs, ["matrix", "--format", "json"])["stdout"])
    step = max(1, len(rows) // POINT_SAMPLE)
    (inputs / "points").mkdir()
    for n, row in enumerate(rows[::step][:POINT_SAMPLE]):
        (inputs / "points" / f"point-{n}.json").write_text(json.dumps(row))
    plan = run(code, clone, inputs, ["plan", "--format", "json"])["stdout"]
    (inputs / "plan.json").write_bytes(plan)
    ids = []
    for n, row in enumerate(row for bucket in json.loads(plan)["buckets"].values() for row in bucket):
        path = inputs / f"plan-row-{n}.json"
        path.write_text(json.dumps(row))
        ids.append(run(code, clone, inputs, ["github", "point-id", "--point", str(path)])["stdout"].decode().strip())
        path.unlink()
    (inputs / "plan-ids.txt").write_text("\n".join(ids))
    for side, scale in (("head", 1.0), ("baseline", 0.97)):
        generate_sweep(inputs / side, rows, scale)


def planned_ids(inputs: Path) -> str:
    """Every other point id of the plan (the ids `infx github point-id` printed for its rows)."""
    return " ".join((inputs / "plan-ids.txt").read_text().split()[::2])


def recorded(code: Path, clone: Path, inputs: Path) -> list[tuple[str, list[str], dict]]:
    """(name, arguments, extra environment) of every recorded command."""
    points = sorted((inputs / "points").glob("*.json"))
    out = inputs / "out"
    commands: list[tuple[str, list[str], dict]] = [
        (" ".join(args), args, {}) for args in help_commands(code, clone, inputs)
    ]
    for fmt in ("text", "json", "github"):
        commands.append((f"config validate {fmt}", ["config", "validate", "--format", fmt], {}))
        commands.append(
            (
                f"changelog validate {fmt}",
                ["changelog", "validate", "--base-ref", "HEAD~1", "--head-ref", "HEAD", "--format", fmt],
                {},
            )
        )
    commands += [
        ("config shipped", ["config", "shipped", "components.yaml"], {}),
        ("matrix json", ["matrix", "--format", "json"], {}),
        (
            "matrix github",
            ["matrix", "--format", "github", "--shard-dir", str(out / "shards")],
            {"GITHUB_OUTPUT": str(out / "matrix-output")},
        ),
        ("matrix table", ["matrix", "--format", "table"], {}),
        ("plan text", ["plan"], {}),
        ("plan json", ["plan", "--format", "json"], {}),
        ("plan github", ["plan", "--format", "github"], {"GITHUB_OUTPUT": str(out / "plan-output")}),
        ("lane validate", ["lane", "validate"], {}),
        ("lane pins check", ["lane", "pins", "gb300-nv", "--check"], {}),
        (
            "select-points unknown",
            ["github", "select-points", "--plan", str(inputs / "plan.json"), "--points", "none-c1"],
            {},
        ),
        (
            "select-points",
            ["github", "select-points", "--plan", str(inputs / "plan.json"), "--points", planned_ids(inputs)],
            {},
        ),
        (
            "reuse select",
            [
                "reuse",
                "select",
                "--plan",
                str(inputs / "plan.json"),
                "--artifacts",
                str(inputs / "head"),
                "--format",
                "table",
            ],
            {},
        ),
        ("collect head", ["results", "collect", str(inputs / "head"), "--output", str(out / "head.json")], {}),
        (
            "collect baseline",
            ["results", "collect", str(inputs / "baseline"), "--output", str(out / "baseline.json")],
            {},
        ),
        ("collect table", ["results", "collect", str(inputs / "head"), "--format", "table"], {}),
        (
            "compare markdown",
            ["results", "compare", "--head", str(out / "head.json"), "--baseline", str(out / "baseline.json")],
            {},
        ),
        (
            "compare json",
            [
                "results",
                "compare",
                "--head",
                str(out / "head.json"),
                "--baseline",
                str(out / "baseline.json"),
                "--format",
                "json",
                "--output",
                str(out / "comparison.json"),
            ],
            {},
        ),
        ("summary", ["results", "summary", "--comparison", str(out / "comparison.json")], {}),
        ("check-evals", ["results", "check-evals", str(out / "head.json"), "--plan", str(inputs / "plan.json")], {}),
        ("init", ["init", "--only", "workflows"], {}),
    ]
    for point in points:
        for fmt in ("text", "json"):
            commands.append(
                (
                    f"launch dry-run {point.stem} {fmt}",
                    [
                        "launch",
                        "--point",
                        str(point),
                        "--dry-run",
                        "--format",
                        fmt,
                        "--output-dir",
                        str(out / f"launch-{point.stem}-{fmt}"),
                    ],
                    {},
                )
            )
        commands.append((f"point-id {point.stem}", ["github", "point-id", "--point", str(point)], {}))
    return commands


DELIMITER = re.compile(rb"infx_EOF_[0-9a-f]+")  # a $GITHUB_OUTPUT heredoc's delimiter is random on purpose


def written(folder: Path) -> dict[str, str]:
    """What a command wrote: every file under ``folder``, its path -> sha256 (heredoc delimiters blanked)."""
    return {
        str(path.relative_to(folder)): hashlib.sha256(DELIMITER.sub(b"infx_EOF", path.read_bytes())).hexdigest()
        for path in sorted(folder.rglob("*"))
        if path.is_file()
    }


def record_all(code: Path, store: Path, fresh_inputs: bool) -> dict[str, dict]:
    with tempfile.TemporaryDirectory() as tmp:
        clone = Path(tmp) / "clone"
        subprocess.run(["git", "clone", "-q", str(REPO), str(clone)], check=True)
        inputs = store / "inputs"
        if fresh_inputs:
            shutil.rmtree(inputs, ignore_errors=True)
            inputs.mkdir(parents=True)
            make_inputs(code, clone, inputs)
        shutil.rmtree(inputs / "out", ignore_errors=True)
        commits = {
            ref: subprocess.run(
                ["git", "-C", str(clone), "rev-parse", ref], capture_output=True, text=True, check=True
            ).stdout.strip()
            for ref in ("HEAD", "HEAD~1")
        }
        results = {}
        for name, args, extra in recorded(code, clone, inputs):
            (inputs / "out").mkdir(exist_ok=True)
            before = set(written(clone)) | set(written(inputs / "out"))
            outcome = run(code, clone, inputs, args, extra)
            files = {k: v for k, v in (written(clone) | written(inputs / "out")).items() if k not in before}
            text = {key: outcome[key].decode(errors="replace") for key in ("stdout", "stderr")}
            for key in text:
                text[key] = text[key].replace(str(clone), "<CLONE>").replace(str(inputs), "<INPUTS>")
                for ref, sha in commits.items():  # the clone's commits are the checkout's, not the version's
                    text[key] = text[key].replace(sha, ref)
            results[name] = {"exit": outcome["exit"], **text, "files": files}
            subprocess.run(["git", "-C", str(clone), "checkout", "-q", "."], check=True)
            subprocess.run(["git", "-C", str(clone), "clean", "-qfdx"], check=True)
        return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("action", choices=("record", "compare"))
    parser.add_argument("store", type=Path)
    parser.add_argument("--code", type=Path, default=REPO)
    args = parser.parse_args()
    store = args.store.resolve()
    if args.action == "record":
        results = record_all(args.code.resolve(), store, fresh_inputs=True)
        (store / "outputs.json").write_text(json.dumps(results, indent=1, sort_keys=True))
        print(f"recorded {len(results)} commands in {store}")
        return
    before = json.loads((store / "outputs.json").read_text())
    after = record_all(args.code.resolve(), store, fresh_inputs=False)
    changed = 0
    for name in sorted(set(before) | set(after)):
        old, new = before.get(name), after.get(name)
        if old == new:
            continue
        changed += 1
        print(f"--- {name}")
        for key in ("exit", "stdout", "stderr", "files"):
            if (old or {}).get(key) != (new or {}).get(key):
                a = (
                    json.dumps((old or {}).get(key), indent=1).splitlines()
                    if key in ("exit", "files")
                    else str((old or {}).get(key)).splitlines()
                )
                b = (
                    json.dumps((new or {}).get(key), indent=1).splitlines()
                    if key in ("exit", "files")
                    else str((new or {}).get(key)).splitlines()
                )
                print("\n".join(list(difflib.unified_diff(a, b, f"before {key}", f"after {key}", lineterm=""))[:40]))
    print(f"{len(after)} commands, {changed} changed")
    sys.exit(1 if changed else 0)


if __name__ == "__main__":
    main()
