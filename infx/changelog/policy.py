"""The pr-link policy: the ONLY place that says which links an entry may carry.

The validator, the fixer and docs/changelog.md (see :func:`rules_markdown`) all read it
from here. The repository slug is a parameter, resolved by :func:`resolve_slug` (which reads
$GITHUB_REPOSITORY and configs/infx.yaml); :func:`write_docs` rewrites docs/changelog.md's section.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

from ..diagnostics import EXIT_USAGE, InfxError, UsageError
from ..fsio import atomic_write
from ..schema import load_schema
from ..settings import SETTINGS_FILE, SETTINGS_SCHEMA, read_settings

PLACEHOLDER = "XXX"


def canonical_link(slug: str, pr_number: int | str) -> str:
    return f"https://github.com/{slug}/pull/{pr_number}"


def placeholders(slug: str) -> tuple[str, str]:
    return PLACEHOLDER, canonical_link(slug, PLACEHOLDER)


def is_canonical(link: str, slug: str) -> bool:
    return re.fullmatch(re.escape(f"https://github.com/{slug}/pull/") + r"[0-9]+", link) is not None


def pr_line(slug: str, pr_number: int | None) -> str:
    """The exact line an author should write."""
    return f"  pr-link: {canonical_link(slug, pr_number if pr_number is not None else '<N>')}"


@dataclass(frozen=True, kw_only=True)
class Rejection:
    message: str
    hint: str


def accepted_for_new_entry(slug: str, pr_number: int | None) -> list[str]:
    """Every link a newly added entry may carry on this kind of run."""
    if pr_number is None:  # a push to main: the PR is merged, its number is known
        return [canonical_link(slug, "<N>")]
    return [*placeholders(slug), canonical_link(slug, pr_number)]


def check_new_entry(link: str, slug: str, pr_number: int | None) -> Rejection | None:
    """None when ``link`` is acceptable for an entry added by this change."""
    if pr_number is None:
        if is_canonical(link, slug):
            return None
        return Rejection(
            message=f"pr-link {link!r} of the new entry is not a canonical link; on main only "
            f"'{canonical_link(slug, '<N>')}' (digits) is accepted",
            hint=f"The merge is swept anyway; correct the link in a pr-link-only PR:\n{pr_line(slug, None)}",
        )
    if link in placeholders(slug) or link == canonical_link(slug, pr_number):
        return None
    accepted = ", ".join(repr(a) for a in accepted_for_new_entry(slug, pr_number))
    return Rejection(
        message=f"pr-link {link!r} of the new entry is not accepted on PR #{pr_number}; accepted: {accepted}",
        hint=f"Write:\n{pr_line(slug, pr_number)}\nor run `infx changelog fix --pr-number {pr_number}`.",
    )


def check_correction(old: str, new: str, slug: str) -> Rejection | None:
    """A historical entry may change its pr-link only to a canonical link."""
    if is_canonical(new, slug):
        return None
    return Rejection(
        message=f"pr-link correction from {old!r} to {new!r} is not canonical; a historical pr-link may only be "
        f"corrected to '{canonical_link(slug, '<N>')}' (digits)",
        hint=f"Write the PR that made the entry:\n{pr_line(slug, None)}",
    )


MIX_RULE = (
    "historical pr-link corrections and new entries are in the same change; do not mix them",
    "Put the pr-link correction in its own PR.",
)


def is_slug(value: str) -> bool:
    """OWNER/NAME, in the shape configs/infx.yaml's schema gives ``repository`` (one rule)."""
    return re.search(load_schema(SETTINGS_SCHEMA)["properties"]["repository"]["pattern"], value) is not None


def resolve_slug(cli_value: str | None, root: Path) -> tuple[str, str]:
    """(slug, where it came from): --repo > $GITHUB_REPOSITORY > configs/infx.yaml.

    The one reading of the repository slug (the changelog commands and ``infx github``), and of
    configs/infx.yaml's `repository` (infx.settings reads the file, checked against its schema, whose
    pattern is also the shape --repo and $GITHUB_REPOSITORY must have).
    """
    candidates = [(cli_value, "--repo"), (os.environ.get("GITHUB_REPOSITORY"), "GITHUB_REPOSITORY")]
    if not any(value for value, _ in candidates):
        doc, problems = read_settings(root, display=str(root / SETTINGS_FILE))
        if problems:
            raise InfxError(problems, exit_code=EXIT_USAGE)  # the settings file is unusable
        if doc is not None and isinstance(doc.data, dict):
            candidates.append((doc.data.get("repository"), SETTINGS_FILE))
    for value, source in candidates:
        if value:
            if not isinstance(value, str) or not is_slug(value):
                raise UsageError(
                    f"{source} gives {value!r}, which is not an OWNER/NAME repository slug",
                    "Use the form SemiAnalysisAI/InferenceX.",
                )
            return value, source
    raise UsageError(
        "no repository slug: pass --repo OWNER/NAME, set GITHUB_REPOSITORY or add "
        f"`repository: OWNER/NAME` to {SETTINGS_FILE}"
    )


def rules_markdown(slug: str = "<owner>/<repo>") -> str:
    """The pr-link rules as docs/changelog.md states them (a test keeps the doc in step)."""
    example = 42
    return "\n".join(
        [
            f"- Canonical link: `{canonical_link(slug, '<digits>')}`, exactly (no `http://`, no trailing `/files` or "
            "`/changes`, no other repository).",
            f"- A new entry on a PR run (`--pr-number N`) may use `{PLACEHOLDER}`, "
            f"`{canonical_link(slug, PLACEHOLDER)}`, or the canonical link of PR N itself.",
            "  Anything else (`TBD`, `PLACEHOLDER`, `pull/xxxx`, `pull/YYYY`, another PR's number) is rejected.",
            "  `infx changelog fix --pr-number N` rewrites every placeholder or rejected link of an appended entry to "
            "PR N's canonical link.",
            "- A new entry on a push run (a merge on main) should carry a canonical link; another link is a warning: "
            "the merge is swept, and a later PR corrects the link.",
            "- A historical entry may change only its pr-link, only to a canonical link, and never in the same change "
            "as new entries.",
            "- Every rejection names the link found, lists what is accepted and gives the line to write, e.g. "
            f"`{pr_line(slug, example).strip()}`.",
        ]
    )


DOCS_FILE = Path(__file__).resolve().parents[2] / "docs" / "changelog.md"
DOCS_BEGIN = "<!-- BEGIN pr-link rules: generated from infx/changelog/policy.py, do not edit -->"
DOCS_END = "<!-- END pr-link rules -->"
DOCS_SLUG = "SemiAnalysisAI/InferenceX"


def write_docs() -> None:
    """Regenerate the pr-link section of docs/changelog.md from this module."""
    text = DOCS_FILE.read_text()
    head, rest = text.split(DOCS_BEGIN, 1)
    _, tail = rest.split(DOCS_END, 1)
    atomic_write(DOCS_FILE, f"{head}{DOCS_BEGIN}\n{rules_markdown(DOCS_SLUG)}\n{DOCS_END}{tail}")
