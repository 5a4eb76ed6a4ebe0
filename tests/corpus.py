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
DATA = Path(__file__).resolve().parent / "data"
CORPUS = DATA / "inferencex-2026-08"
HISTORY_BUNDLE = DATA / "inferencex-2026-08-changelog-history.bundle"
SRT_SLURM_BUNDLE = DATA / "srt-slurm" / "nvidia-srt-slurm.bundle"
# The reference generator's rows for the corpus with the runner labels declared (data/NOTICE.md).
REFERENCE_ROWS = DATA / "inferencex-2026-08-reference-rows.json.gz"

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
    extra = "".join(f"  {label}:\n" + "".join(f"    - {node}\n" for node in nodes)
                    for label, nodes in HISTORY_MISSING_RUNNER_LABELS.items() if label in used and label not in declared)
    return runners.replace("labels:\n", "labels:\n" + extra, 1) if extra else runners


def patched_history(bundle: Path, destination: Path) -> list[dict]:
    """The history bundle as a repository whose every revision has its runner labels declared.

    Returns the merges, newest first: {"merge", "parent", "real", "subject"} where "real" is the
    reference's commit the pair stands for (named in the subject of its "parent of X" commit).
    Commits are written with git plumbing (one tree per revision, parents mapped), so the
    changelog and master configs are byte-identical to the bundle's.
    """
    import re
    import subprocess

    import yaml

    def git(*args: str, input: bytes | None = None) -> str:
        done = subprocess.run(["git", "-C", str(destination), *args], input=input, capture_output=True, check=True)
        return done.stdout.decode().strip()

    subprocess.run(["git", "clone", "-q", str(bundle), str(destination)], check=True, capture_output=True)
    log = git("log", "--topo-order", "--reverse", "--format=%H %P%x00%s%x01")
    env_loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    mapped: dict[str, str] = {}
    subjects: dict[str, str] = {}
    patched_blobs: dict[str, str] = {}
    for record in filter(None, (r.strip() for r in log.split("\x01"))):
        ids, subject = record.split("\x00")
        commit, *parents = ids.split()
        subjects[commit] = subject
        tree = {name: git("rev-parse", f"{commit}:{name}") for name in HISTORY_FILES}
        used = {entry["runner"] for name in HISTORY_FILES[1:3]
                for entry in (yaml.load(git("cat-file", "blob", tree[name]), Loader=env_loader) or {}).values()}
        key = (tree["configs/runners.yaml"], tuple(sorted(used)))
        if key not in patched_blobs:
            text = subprocess.run(["git", "-C", str(destination), "cat-file", "blob", tree["configs/runners.yaml"]],
                                  capture_output=True, check=True).stdout.decode()
            patched = declare_labels(text, used)
            patched_blobs[key] = git("hash-object", "-w", "--stdin", input=patched.encode()) if patched != text else key[0]
        tree["configs/runners.yaml"] = patched_blobs[key]
        listing = "".join(f"100644 blob {blob}\t{name.split('/')[-1]}\n" for name, blob in tree.items() if "/" in name)
        configs = git("mktree", input=listing.encode())
        top = f"100644 blob {tree['perf-changelog.yaml']}\tperf-changelog.yaml\n040000 tree {configs}\tconfigs\n"
        root = git("mktree", input=top.encode())
        args = [arg for parent in parents for arg in ("-p", mapped[parent])]
        mapped[commit] = git("commit-tree", root, *args, "-m", subject)
    git("update-ref", "refs/heads/patched", mapped[commit])
    merges = []
    for original, new in reversed(list(mapped.items())):
        subject = subjects[original]
        if subject.startswith("parent of "):
            continue
        parent = git("rev-parse", f"{original}^")
        real = re.sub(r"^parent of ", "", subjects[parent])
        merges.append({"merge": new, "parent": mapped[parent], "real": real, "subject": subject})
    return merges
