"""``infx lane pins``: are the srt-slurm pins of a lane profile still what their refs name?

``run_pins`` asks each pin's repository (``git ls-remote``) what its ref points at now, with git called exactly as the
checkout calls it (:mod:`infx.launch.sources`: argv only, no system or user config, no prompts or helpers, only the
lane's ``git-protocols``) and a time limit. A tag that moved is an error (the pinned content changed under the same
name); a branch that moved is a warning that says how far (a blobless fetch of the branch counts the commits); a ref
that is gone or a repository that cannot be reached is an error. ``update_pins`` writes the refs' commits into the
profile, rewriting only the commit values (every other byte, comments and layout included, stays), atomically, and only
when no pin has an error.

The profile is read as YAML, not through the lane schema: a profile whose pins have no commit
yet is exactly what ``--update`` is for.
"""

from __future__ import annotations

import copy
import re
import subprocess
import tempfile
from dataclasses import dataclass, replace
from pathlib import Path

import yaml

from .. import shapes
from ..diagnostics import InfxError, Report, error, warning
from ..fsio import atomic_write
from ..yamlio import Document, load_yaml, parse_yaml
from .lane import display_path, find_lane
from .sources import _git as sources_git  # the one way infx talks to a remote

PINS_PATH = ("srt-slurm", "pins")
# A ref as git-check-ref-format accepts it, narrowed: no leading '-', no '..', '@{', '^', '~',
# ':', '?', '*', '[', '\\', spaces or control characters.
REF = re.compile(r"^(?!-)(?!.*\.\.)(?!.*@\{)(?!.*//)[A-Za-z0-9._/+@-]+(?<![./])$")
REMOTE_TIMEOUT = 120  # seconds per git call; an unreachable host must not hang a job


@dataclass(frozen=True)
class PinStatus:
    """One pin, what it records, what its ref names now, and the verdict."""

    name: str
    repository: str
    ref: str
    recorded: str | None
    kind: str | None = None  # "tag" | "branch" | "commit" | None (not found)
    remote: str | None = None
    status: str = "unknown"  # current | moved | unrecorded | tag-moved | mismatch | ref-missing | unreachable | invalid
    detail: str = ""

    def to_json(self) -> dict:
        return {
            "pin": self.name,
            "repository": self.repository,
            "ref": self.ref,
            "kind": self.kind,
            "recorded": self.recorded,
            "remote": self.remote,
            "status": self.status,
            "detail": self.detail,
        }


@dataclass
class PinsReport:
    file: str
    pins: list[PinStatus]
    report: Report
    updated: list[PinStatus]

    def to_json(self) -> dict:
        return {
            "ok": self.report.ok,
            "file": self.file,
            "pins": [p.to_json() for p in self.pins],
            "updated": [p.name for p in self.updated],
            "diagnostics": [d.to_json() for d in self.report.sorted()],
        }


def _read(path: Path) -> tuple[Document, list[PinStatus], tuple[str, ...], Report]:
    doc, problems = load_yaml(path, display=display_path(path))
    if doc is None:
        raise InfxError(problems)
    report = Report()
    data = doc.data if isinstance(doc.data, dict) else {}
    pins = (data.get("srt-slurm") or {}).get("pins") if isinstance(data.get("srt-slurm"), dict) else None
    if not isinstance(pins, dict) or not pins:
        raise InfxError(
            error(
                doc.file,
                doc.where(PINS_PATH),
                "lane-pin",
                "the profile has no srt-slurm.pins mapping",
                "A lane profile names its srt-slurm checkouts under srt-slurm.pins (docs/launch.md).",
            )
        )
    protocols = data.get("git-protocols") or shapes.DEFAULT_GIT_PROTOCOLS
    if not (isinstance(protocols, list) and all(p in shapes.GIT_PROTOCOLS for p in protocols)):
        protocols = shapes.DEFAULT_GIT_PROTOCOLS  # `infx lane validate` reports a bad git-protocols
    statuses = []
    for name, spec in pins.items():
        where = doc.where((*PINS_PATH, name))
        spec = spec if isinstance(spec, dict) else {}
        repository, ref, commit = spec.get("repository"), spec.get("ref"), spec.get("commit")
        problem = shapes.url_problem(repository, tuple(protocols), f"pin {name}: repository")
        if problem is None and not (isinstance(ref, str) and REF.match(ref)):
            problem = f"pin {name}: ref {ref!r} is not a branch, tag or commit name"
        if problem is None and commit is not None:
            problem = shapes.problem("commit", commit, f"pin {name}: commit")
        status = PinStatus(str(name), str(repository), str(ref), commit if isinstance(commit, str) else None)
        if problem:
            report.add(
                error(
                    doc.file,
                    where,
                    "lane-pin",
                    problem,
                    "Each pin is {repository: URL, ref: tag|branch|commit, commit: 40-hex}; "
                    "a scheme other than https needs the lane's git-protocols.",
                )
            )
            status = replace(status, status="invalid")
        statuses.append(status)
    return doc, statuses, tuple(protocols), report


def _is_commit(value: str) -> bool:
    return shapes.problem("commit", value, "") is None


def _patterns(ref: str) -> list[str]:
    if ref.startswith("refs/"):
        return [ref, f"{ref}^{{}}"]
    return [f"refs/tags/{ref}", f"refs/tags/{ref}^{{}}", f"refs/heads/{ref}"]


def _git(argv: list[str], protocols: tuple[str, ...], cwd: Path | None = None) -> tuple[int, str, str]:
    try:
        done = sources_git(*argv, cwd=cwd, protocols=protocols, timeout=REMOTE_TIMEOUT)
    except subprocess.TimeoutExpired:
        return 124, "", f"no answer within {REMOTE_TIMEOUT} s"
    except FileNotFoundError:
        return 127, "", "git is not installed or not on PATH"
    return done.returncode, done.stdout, done.stderr


def _first_line(text: str) -> str:
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    return lines[0] if lines else "no output"


def _resolve(pin: PinStatus, refs: dict[str, str]) -> PinStatus:
    """Which ref the pin's name means (a tag before a branch, as git rev-parse reads it) and its commit."""
    candidates = (
        (("tag", pin.ref) if pin.ref.startswith("refs/tags/") else ("branch", pin.ref),)
        if pin.ref.startswith("refs/")
        else (("tag", f"refs/tags/{pin.ref}"), ("branch", f"refs/heads/{pin.ref}"))
    )
    for kind, name in candidates:
        if name in refs:
            return replace(pin, kind=kind, remote=refs.get(f"{name}^{{}}", refs[name]))  # an annotated tag: its commit
    return pin


def _branch_distance(pin: PinStatus, protocols: tuple[str, ...], scratch: Path) -> str:
    """How far the branch moved from the recorded commit, from a blobless fetch of the branch."""
    repo = scratch / f"distance-{pin.name}"
    code, _, err = _git(["init", "-q", "--bare", "--template=", str(repo)], protocols)
    branch = pin.ref if pin.ref.startswith("refs/") else f"refs/heads/{pin.ref}"
    if code == 0:
        code, _, err = _git(
            ["fetch", "-q", "--no-tags", "--filter=blob:none", "--", pin.repository, f"+{branch}:refs/pin"],
            protocols,
            cwd=repo,
        )
    if code != 0:
        return f"moved from {pin.recorded} to {pin.remote} (how far is unknown: git fetch failed: {_first_line(err)})"
    # Membership in the branch's commit list, not `cat-file -e`: a blobless fetch makes the
    # remote a promisor, and asking for a missing object would fetch it lazily.
    _, history, _ = _git(["rev-list", "refs/pin"], protocols, cwd=repo)
    if pin.recorded not in history.split():
        return (
            f"moved from {pin.recorded} to {pin.remote}, and the recorded commit is no longer in the branch's history "
            "(the branch was rewritten or force-pushed)"
        )
    _, count, _ = _git(["rev-list", "--count", f"{pin.recorded}..{pin.remote}"], protocols, cwd=repo)
    return (
        f"is {count.strip()} commit{'s' if count.strip() != '1' else ''} ahead of the recorded {pin.recorded} (now "
        f"{pin.remote})"
    )


def _query(statuses: list[PinStatus], protocols: tuple[str, ...]) -> list[PinStatus]:
    """One ls-remote per repository, asking only for the refs its pins name."""
    by_repository: dict[str, list[PinStatus]] = {}
    for pin in statuses:
        if pin.status != "invalid" and not _is_commit(pin.ref):
            by_repository.setdefault(pin.repository, []).append(pin)
    answers: dict[str, tuple[dict[str, str] | None, str]] = {}
    for repository, pins in by_repository.items():
        patterns = list(dict.fromkeys(p for pin in pins for p in _patterns(pin.ref)))
        code, out, err = _git(["ls-remote", "--", repository, *patterns], protocols)
        refs = (
            {name: sha for sha, _, name in (line.partition("\t") for line in out.splitlines()) if name}
            if code == 0
            else None
        )
        answers[repository] = (refs, _first_line(err))
    resolved = []
    for pin in statuses:
        if pin.status == "invalid":
            resolved.append(pin)
        elif _is_commit(pin.ref):  # a commit is its own pin: nothing to ask
            resolved.append(replace(pin, kind="commit", remote=pin.ref))
        else:
            refs, why = answers[pin.repository]
            resolved.append(replace(pin, status="unreachable", detail=why) if refs is None else _resolve(pin, refs))
    return resolved


def _verdicts(
    pins: list[PinStatus], doc: Document, report: Report, protocols: tuple[str, ...], scratch: Path, updating: bool
) -> list[PinStatus]:
    judged = []
    for pin in pins:
        where = doc.where((*PINS_PATH, pin.name, "commit"))
        label = f"pin {pin.name} ({pin.repository} {pin.ref})"
        if pin.status == "invalid":
            judged.append(pin)
            continue
        if pin.status == "unreachable":
            report.add(
                error(
                    doc.file,
                    where,
                    "lane-pin-unreachable",
                    f"{label}: cannot ask the repository: {pin.detail}",
                    "Check the repository URL and that this machine can reach it; nothing was changed.",
                )
            )
        elif pin.remote is None:
            pin = replace(pin, status="ref-missing")
            report.add(
                error(
                    doc.file,
                    where,
                    "lane-pin-ref-missing",
                    f"{label}: the repository has no tag or branch {pin.ref!r}",
                    "The ref was deleted or renamed: point the pin at an existing tag or branch (or a commit id).",
                )
            )
        elif pin.recorded == pin.remote:
            pin = replace(pin, status="current")
        elif pin.recorded is None:
            pin = replace(pin, status="unrecorded", detail=f"{pin.kind} {pin.ref} is at {pin.remote}")
            if not updating:
                report.add(
                    error(
                        doc.file,
                        where,
                        "lane-pin-unrecorded",
                        f"{label}: no commit recorded; the {pin.kind} is at {pin.remote}",
                        "Run `infx lane pins LANE --update` to write it.",
                    )
                )
        elif pin.kind == "commit":
            pin = replace(pin, status="mismatch", detail=f"ref is the commit {pin.ref}, commit records {pin.recorded}")
            report.add(
                error(
                    doc.file,
                    where,
                    "lane-pin-mismatch",
                    f"{label}: the ref is a commit id that differs from the recorded commit {pin.recorded}",
                    "Make ref and commit the same commit id, or name the tag or branch the commit came from.",
                )
            )
        elif pin.kind == "tag":
            pin = replace(pin, status="tag-moved", detail=f"recorded {pin.recorded}, the tag now names {pin.remote}")
            report.add(
                error(
                    doc.file,
                    where,
                    "lane-pin-tag-moved",
                    f"{label}: the tag moved: the recorded commit is {pin.recorded}, the tag now names {pin.remote}",
                    "A tag should never move: find out why upstream. Pin a new tag, or, once the new commit is "
                    "validated, write it here by hand; --update does not follow a moved tag.",
                )
            )
        else:
            pin = replace(pin, status="moved", detail=_branch_distance(pin, protocols, scratch))
            if not updating:
                report.add(
                    warning(
                        doc.file,
                        where,
                        "lane-pin-branch-moved",
                        f"{label}: the branch {pin.detail}",
                        "The pinned commit still launches as recorded. To follow the branch, validate the route "
                        "on the new commit and run `infx lane pins LANE --update`.",
                    )
                )
        judged.append(pin)
    return judged


def _commit_spans(text: str) -> dict[str, tuple[int, int, str, int]]:
    """pin name -> (start, end, quote style, mapping end) of each pin's commit value in ``text``
    (character offsets; start == end == -1 when the pin has no commit key)."""
    root = yaml.compose(text, Loader=yaml.SafeLoader)  # the pure-Python composer: its marks are character offsets
    assert root is not None  # a profile _read loaded: one document with the pins mapping
    node = root
    for key in PINS_PATH:
        node = next(value for k, value in node.value if k.value == key)
    spans = {}
    for key_node, pin_node in node.value:
        commit = next((value for k, value in pin_node.value if k.value == "commit"), None)
        if commit is None:
            spans[key_node.value] = (-1, -1, "", pin_node.end_mark.index)
        else:
            spans[key_node.value] = (
                commit.start_mark.index,
                commit.end_mark.index,
                commit.style or "",
                pin_node.end_mark.index,
            )
    return spans


def rewrite_commits(text: str, commits: dict[str, str], file: str = "<profile>") -> str:
    """``text`` with the commit value of each named pin replaced; not one other byte changes."""
    spans = _commit_spans(text)
    edits = []
    for name, sha in commits.items():
        start, end, style, mapping_end = spans[name]
        value = f"{style}{sha}{style}" if style in ("'", '"') else sha
        if start < 0:  # no commit key: add one, flow style `{..., commit: SHA}` or a block line
            if text[mapping_end - 1] == "}":
                edits.append((mapping_end - 1, mapping_end - 1, f", commit: {value}"))
            else:
                raise InfxError(
                    error(
                        file,
                        None,
                        "lane-pin",
                        f"pin {name} has no commit: key to update",
                        f"Add `commit: null` to pin {name} and run --update again.",
                    )
                )
        elif start == end:  # `commit:` with no value
            edits.append((start, end, f" {value}" if text[start - 1] == ":" else value))
        else:
            edits.append((start, end, value))
    for start, end, value in sorted(edits, reverse=True):
        text = text[:start] + value + text[end:]
    return text


def _expected(data: dict, commits: dict[str, str]) -> dict:
    expected = copy.deepcopy(data)
    for name, sha in commits.items():
        expected["srt-slurm"]["pins"][name]["commit"] = sha
    return expected


@dataclass(frozen=True, kw_only=True)
class PinsRequest:
    """``infx lane pins``: the lane (a name, a runner label or a profile path) of the repository
    at ``root``; ``update`` writes the commits the refs name now, else they are only checked."""

    lane: str
    root: Path
    update: bool


def pin_lane(request: PinsRequest) -> PinsReport:
    return run_pins(find_lane(request.root, selector=request.lane), update=request.update)


def run_pins(path: Path, update: bool) -> PinsReport:
    """``--check`` (update False) or ``--update`` of the pins of the profile at ``path``."""
    doc, statuses, protocols, report = _read(path)
    with tempfile.TemporaryDirectory(prefix="infx-pins-") as scratch:
        pins = _verdicts(_query(statuses, protocols), doc, report, protocols, Path(scratch), update)
    updated = []
    if update and report.ok:
        updated = [pin for pin in pins if pin.status in ("unrecorded", "moved")]
        if updated:
            text = path.read_bytes().decode("utf-8")
            commits = {
                pin.name: pin.remote for pin in updated if pin.remote is not None
            }  # unrecorded, moved: remote known
            new_text = rewrite_commits(text, commits, doc.file)
            new_doc, problems = parse_yaml(new_text, doc.file)
            if new_doc is None or new_doc.data != _expected(
                doc.data, commits
            ):  # a rewrite that changed anything else is a bug
                raise RuntimeError(f"rewriting the commits of {doc.file} would change more than the commit values")
            atomic_write(path, new_text)
    return PinsReport(doc.file, pins, report, updated)


def summary_lines(result: PinsReport, update: bool) -> list[str]:
    """One line per pin for the text output."""
    lines = []
    for pin in result.pins:
        short = (pin.recorded or "none")[:12]
        state = {
            "current": "current",
            "moved": f"branch moved: {pin.detail}",
            "unrecorded": f"no commit recorded; {pin.detail}",
            "tag-moved": f"tag moved: {pin.detail}",
            "mismatch": pin.detail,
            "ref-missing": "ref not found",
            "unreachable": "repository unreachable",
            "invalid": "invalid pin",
        }.get(pin.status, pin.status)
        if pin in result.updated:
            state = f"updated {short} -> {pin.remote}"
        lines.append(f"{pin.name:<32} {pin.ref} ({pin.kind or '?'}) @ {short}  {state}")
    if update and not result.report.ok:
        lines.append(f"nothing written to {result.file}: fix the errors above first")
    return lines
