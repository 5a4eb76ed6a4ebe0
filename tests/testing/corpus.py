"""The reference corpus with its one real defect patched, as a temporary repository.

The defect (undeclared runner labels, see docs/config.md) is patched here in one place so
every test that needs a valid corpus (validation, the 1820-row expansion, the changelog
gate) uses the same data. Nothing else changes: no components.yaml (infx uses the policy
it ships), the aggregated points inside disagg entries stay where they are.
"""

from __future__ import annotations

import shutil
from pathlib import Path

# Third-party data the suite reads, kept in the repository (sources and licences: data/NOTICE.md).
DATA = Path(__file__).resolve().parents[1] / "data"
CORPUS = DATA / "inferencex-2026-08"
HISTORY_BUNDLE = DATA / "inferencex-2026-08-changelog-history.bundle"
SRT_SLURM_BUNDLE = DATA / "srt-slurm" / "nvidia-srt-slurm.bundle"
# The reference generator's rows for the corpus with the runner labels declared (data/NOTICE.md).
REFERENCE_ROWS = DATA / "inferencex-2026-08-reference-rows.json.gz"
# What the reference's planner planned for the last 100 changes of main (data/NOTICE.md).
MAIN100_PLANS = DATA / "inferencex-2026-08-main100-plans.json.gz"
# Eight of the reference's pull requests (merge-base and head) and its planner's verdict on them (data/NOTICE.md).
PULL_REQUESTS_BUNDLE = DATA / "inferencex-2026-08-pull-requests.bundle"
PULL_REQUESTS_FACTS = DATA / "inferencex-2026-08-pull-requests.json"
# The reference's PR #2647 (append-only B300 vLLM MTP TP4 points) as two commits (data/NOTICE.md).
B300_APPEND_ONLY_BUNDLE = DATA / "inferencex-2026-08-b300-append-only.bundle"

# Runner labels the corpus master configs use but its runners.yaml does not declare.
MISSING_RUNNER_LABELS = {
    "gb300-nv": ["gb300-nv_0", "gb300-nv_1", "gb300-nv_2"],
    "h200-dgxc": ["h200-dgxc-slurm_0", "h200-dgxc-slurm_1"],
    "cluster:mi325x-tw": ["mi325x-tw_0"],
}


def patched_corpus(corpus: Path, destination: Path) -> Path:
    """Copy configs, recipes and changelog of the corpus to ``destination`` and declare the runner labels."""
    shutil.copytree(corpus / "configs", destination / "configs")
    shutil.copytree(corpus / "benchmarks", destination / "benchmarks")
    shutil.copy(corpus / "perf-changelog.yaml", destination / "perf-changelog.yaml")
    for path in destination.rglob("*"):
        path.chmod(0o755 if path.is_dir() else 0o644)
    runners = destination / "configs" / "runners.yaml"
    text = runners.read_text()
    extra = "".join(
        f"  {label}:\n" + "".join(f"    - {node}\n" for node in nodes) for label, nodes in MISSING_RUNNER_LABELS.items()
    )
    runners.write_text(text.replace("labels:\n", "labels:\n" + extra, 1))
    return destination


# Older revisions of the history bundle also use `b200-dgxc` without declaring it (the label's
# nodes as the same runners.yaml lists them under cluster:b200-dgxc).
HISTORY_MISSING_RUNNER_LABELS = {**MISSING_RUNNER_LABELS, "b200-dgxc": ["b200-dgxc_00", "b200-dgxc_01"]}
HISTORY_FILES = ("perf-changelog.yaml", "configs/amd-master.yaml", "configs/nvidia-master.yaml", "configs/runners.yaml")


def declare_labels(runners: str, used: set[str]) -> str:
    """runners.yaml text with every used but undeclared history label declared (the one patch)."""
    import yaml

    declared = set((yaml.load(runners, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader)) or {}).get("labels") or {})
    if used <= declared:
        return runners
    extra = "".join(
        f"  {label}:\n" + "".join(f"    - {node}\n" for node in nodes)
        for label, nodes in HISTORY_MISSING_RUNNER_LABELS.items()
        if label in used and label not in declared
    )
    return runners.replace("labels:\n", "labels:\n" + extra, 1) if extra else runners


def patched_history(bundle: Path, destination: Path) -> list[dict]:
    """A history bundle as a repository whose every revision has its runner labels declared.

    Returns the merges, newest first: {"merge", "parent", "real", "subject"} where "real" is the
    reference's commit the pair stands for (named in the subject of its "parent of X" commit).
    The changelog and master configs are the bundle's blobs, byte for byte; only runners.yaml
    changes, and only where a label is used but undeclared. One `git cat-file --batch` reads,
    one `git fast-import` writes (a few hundred revisions in about a second).
    """
    import re
    import subprocess

    subprocess.run(["git", "clone", "-q", str(bundle), str(destination)], check=True, capture_output=True)
    log = subprocess.run(
        ["git", "-C", str(destination), "log", "--topo-order", "--reverse", "--format=%H %P%x00%s%x01"],
        check=True,
        capture_output=True,
    ).stdout.decode()
    commits = []
    for record in filter(None, (r.strip() for r in log.split("\x01"))):
        ids, subject = record.split("\x00")
        commit, *parents = ids.split()
        commits.append((commit, parents, subject))
    reader = subprocess.Popen(
        ["git", "-C", str(destination), "cat-file", "--batch"], stdin=subprocess.PIPE, stdout=subprocess.PIPE
    )

    def read(spec: str) -> tuple[str, bytes]:
        reader.stdin.write(spec.encode() + b"\n")
        reader.stdin.flush()
        header = reader.stdout.readline().split()
        data = reader.stdout.read(int(header[2]))
        reader.stdout.read(1)
        return header[0].decode(), data

    marks = {commit: n for n, (commit, _, _) in enumerate(commits, 1)}
    runner_label = re.compile(rb"^  runner: *['\"]?([^'\"\s#]+)", re.MULTILINE)
    stream = []
    for mark, (commit, parents, subject) in enumerate(commits, 1):
        blobs = {name: read(f"{commit}:{name}") for name in HISTORY_FILES}
        used = {m.decode() for name in HISTORY_FILES[1:3] for m in runner_label.findall(blobs[name][1])}
        runners = blobs["configs/runners.yaml"][1].decode()
        patched = declare_labels(runners, used)
        message = subject.encode()
        stream.append(
            b"commit refs/heads/patched\nmark :%d\ncommitter infx tests <tests@example.invalid> 0 +0000\n" % mark
        )
        stream.append(b"data %d\n%s\n" % (len(message), message))
        stream += [b"from :%d\n" % marks[parents[0]]] if parents else []
        stream.append(b"deleteall\n")
        for name in HISTORY_FILES:
            if name == "configs/runners.yaml" and patched != runners:
                data = patched.encode()
                stream.append(b"M 100644 inline %s\ndata %d\n%s\n" % (name.encode(), len(data), data))
            else:
                stream.append(b"M 100644 %s %s\n" % (blobs[name][0].encode(), name.encode()))
    reader.stdin.close()
    reader.wait()
    exported = destination / ".git" / "infx-marks"
    subprocess.run(
        ["git", "-C", str(destination), "fast-import", "--quiet", f"--export-marks={exported}"],
        input=b"".join(stream),
        check=True,
        capture_output=True,
    )
    mapped = dict(line.split() for line in exported.read_text().splitlines())  # ":1" -> sha
    new = {commit: mapped[f":{n}"] for commit, n in marks.items()}
    subjects = {commit: subject for commit, _, subject in commits}
    parents_of = {commit: parents for commit, parents, _ in commits}
    merges = []
    for commit, _, subject in reversed(commits):
        if subject.startswith("parent of "):
            continue
        parent = parents_of[commit][0]
        merges.append(
            {
                "merge": new[commit],
                "parent": new[parent],
                "real": subjects[parent].removeprefix("parent of "),
                "subject": subject,
            }
        )
    return merges


# Fields infx adds to the reference's rows (docs/matrix.md); eval flags the reference leaves out when false.
INFX_ROW_FIELDS = ("config-key", "recipe-fingerprint", "node-count")
FALSE_BY_DEFAULT = ("run-eval", "eval-only", "eval-all-concs")


def point_digest(bucket: str, row: dict) -> str:
    """A planned point as the replay facts name it (data/NOTICE.md): SHA-256 over its bucket and
    its row with the reference's fields only (infx's own fields left out, eval flags that are
    false and empty worker settings dropped, canonical JSON), the first 16 hex digits."""
    import hashlib
    import json

    core = {key: value for key, value in row.items() if key not in INFX_ROW_FIELDS and key != "recipe-fingerprint"}
    for key in FALSE_BY_DEFAULT:
        if core.get(key) is False:
            del core[key]
    for role in ("prefill", "decode"):
        if isinstance(core.get(role), dict) and core[role].get("additional-settings") == []:
            core[role] = {k: v for k, v in core[role].items() if k != "additional-settings"}
    text = bucket + "\n" + json.dumps(core, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    return hashlib.sha256(text.encode()).hexdigest()[:16]
