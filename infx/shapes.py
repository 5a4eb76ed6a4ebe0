"""The shapes of strings that reach a path, a command line, a Slurm script or srt-slurm's config.

One table, :data:`SHAPES`, says what each kind of value may look like. The JSON Schemas
(infx/schemas/*.json) carry the same patterns as ``$defs`` named ``shape-<name>``
(tests/test_shapes.py checks that every copy equals :func:`json_schema`), so `infx config
validate`, the lane loader and the matrix refuse a bad value where it is written; the
launcher asks :func:`problem` and :func:`inside` again for values that do not pass through a
schema (a recipe's ``infx-sources``, $RUNNER_NAME, $RESULT_FILENAME) and for what only the
file system can say (symlinks).

Patterns end with ``$(?!\\n)``: Python's ``$`` also matches before a final newline, and a
newline is exactly what must not reach an ``#SBATCH`` line.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

END = r"$(?!\n)"
# One path component: never "." or "..", never starting with "-" (an option to the next tool).
_COMPONENT = r"(?:[A-Za-z0-9_+@=,][A-Za-z0-9_.+@=,-]*|\.[A-Za-z0-9_+@=,-][A-Za-z0-9_.+@=,-]*|\.\.[A-Za-z0-9_.+@=,-]+)"
_RELATIVE_PATH = rf"{_COMPONENT}(?:/{_COMPONENT})*"
_SELECTOR = r"(?:base|override_[A-Za-z0-9_.-]+|zip_override_[A-Za-z0-9_.-]+\[[0-9]+\])"
_HOST = r"[A-Za-z0-9](?:[A-Za-z0-9.-]*[A-Za-z0-9])?(?::[0-9]{1,5})?"
_URL_PATH = r"(?:/[A-Za-z0-9_.~+@%=,-]+)+/?"


@dataclass(frozen=True)
class Shape:
    name: str
    body: str  # the regex without anchors
    accepted: str  # what is accepted, in words (the schemas' x-accepted; every hint)

    @property
    def pattern(self) -> str:
        return f"^{self.body}{END}"


SHAPES: dict[str, Shape] = {
    shape.name: shape
    for shape in (
        # Names that become a file name, a job name, a tag or a Slurm option value.
        Shape(
            "name",
            r"[A-Za-z0-9][A-Za-z0-9_.+-]{0,199}",
            "1-200 letters, digits and _ . + - (starting with a letter or digit; no spaces, quotes, ; or /)",
        ),
        # Slurm partitions (a comma-separated list is Slurm's own syntax).
        Shape(
            "slurm-partition",
            r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}(?:,[A-Za-z0-9][A-Za-z0-9_.-]{0,63})*",
            "a Slurm partition name (letters, digits, _ . -), or several separated by commas",
        ),
        Shape(
            "slurm-account",
            r"(?:[A-Za-z0-9][A-Za-z0-9_.-]{0,63})?",
            "a Slurm account name (letters, digits, _ . -), or empty for the cluster default",
        ),
        # srtslurm.yaml model_paths key; the recipe's model.path names it. Hugging Face ids have one '/'.
        Shape(
            "model-alias",
            r"[A-Za-z0-9][A-Za-z0-9_.+-]*(?:/[A-Za-z0-9][A-Za-z0-9_.+-]*)?",
            "a model alias: letters, digits, _ . + -, optionally org/name",
        ),
        Shape(
            "relative-path",
            _RELATIVE_PATH,
            "a relative path of letters, digits and _ . + @ = , - (no leading /, no . or .. components, no component "
            "starting with -)",
        ),
        Shape(
            "absolute-path",
            rf"/(?:{_RELATIVE_PATH})?",
            "an absolute path of letters, digits and _ . + @ = , - (no . or .. components)",
        ),
        Shape(
            "config-file",
            rf"{_RELATIVE_PATH}(?::{_SELECTOR})?",
            "recipes/<path>.yaml[:selector] (a relative path inside the recipe tree; selector base, override_<name> "
            "or zip_override_<group>[i])",
        ),
        # Git urls: https everywhere; file:// only where a lane's git-protocols allows it (tests).
        Shape(
            "git-url",
            rf"(?:https://{_HOST}{_URL_PATH}|file://{_URL_PATH})",
            "https://<host>/<path> (or file:///<path> where the lane's git-protocols lists file)",
        ),
        # A git revision a command line names (--base-ref, --head-ref): never an option, a range or a path escape.
        Shape(
            "git-ref",
            r"(?!.*\.\.)[A-Za-z0-9_@][A-Za-z0-9_./@{}^~+-]{0,254}",
            "a branch, tag or commit (e.g. main, origin/main, v0.1.0, HEAD~1, @{upstream}): 1-255 letters, digits "
            "and _ . / @ { } ^ ~ + -, starting with a letter, digit, _ or @, without ..",
        ),
        # A container reference: [registry[:port](/|#)]path[:tag][@sha256:digest]. `#` separates the
        # registry in enroot's syntax (nvcr.io#nvidia/...), which the lane's squash import accepts.
        Shape(
            "image",
            r"(?:[a-z0-9.-]+(?::[0-9]+)?[/#])?"
            r"[a-z0-9]+(?:[._-][a-z0-9]+|__)*(?:/[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*)*"
            r"(?::[A-Za-z0-9_][A-Za-z0-9_.-]{0,127})?(?:@sha256:[0-9a-f]{64})?",
            "<registry>/<repo>:<tag>[@sha256:<digest>] (enroot's <registry>#<repo> is accepted)",
        ),
        # A point's value infx puts in srtctl's environment and in the job's `#SBATCH --export=` line:
        # never a space, a comma (--export's separator), a quote, #, $ or a backslash. (EVAL_CONC, the one
        # value with spaces, is built by infx from whole numbers.)
        Shape(
            "env-value",
            r"[A-Za-z0-9_.:/@+=-]{1,200}",
            "1-200 letters, digits and _ . : / @ + = - (no spaces, commas, quotes, #, $ or backslashes)",
        ),
        Shape("commit", r"[0-9a-f]{40}", "a full 40-hex commit SHA"),
        Shape("sha256", r"sha256:[0-9a-f]{64}", "sha256:<64 hex digits>"),
    )
}

# Launch settings (KEY=VALUE in a worker block's additional-settings) whose value infx uses.
SETTING_SHAPES = {"SLURM_PARTITION": "slurm-partition", "CONFIG_FILE": "config-file", "EVAL_CONFIG_FILE": "config-file"}
# The schemes infx lets git speak; a lane may add more in git-protocols (file, for tests).
DEFAULT_GIT_PROTOCOLS = ("https",)
GIT_PROTOCOLS = ("https", "file")

_COMPILED = {name: re.compile(shape.pattern) for name, shape in SHAPES.items()}


def problem(shape: str, value: Any, what: str) -> str | None:
    """None when ``value`` has ``shape``, else a sentence naming ``what`` and the accepted form."""
    if isinstance(value, str) and _COMPILED[shape].match(value):
        return None
    return f"{what} {value!r} is not {SHAPES[shape].accepted}"


def accepted(shape: str) -> str:
    return SHAPES[shape].accepted


def json_schema(shape: str) -> dict:
    """The ``$defs/shape-<name>`` every schema file carries for ``shape``."""
    return {"type": "string", "pattern": SHAPES[shape].pattern, "x-accepted": SHAPES[shape].accepted}


def setting_schema() -> dict:
    """additional-settings items: KEY=VALUE on one line, with the values infx reads in their shape
    (one if/then/else chain: the keys exclude each other, and the compiled checker has no allOf)."""
    chain: dict = {}
    for key, shape in reversed(SETTING_SHAPES.items()):
        rule = {
            "if": {"pattern": f"^{key}="},
            "then": {"pattern": f"^{key}={SHAPES[shape].body}{END}", "x-accepted": f"{key}=<{SHAPES[shape].accepted}>"},
        }
        if chain:
            rule["else"] = chain
        chain = rule
    return {
        "type": "string",
        "pattern": f"^[A-Za-z_][A-Za-z0-9_]*=[^\\n\\r]*{END}",
        "x-accepted": "KEY=VALUE on one line, with KEY made of letters, digits and underscores",
        **chain,
    }


def schema_defs() -> dict:
    """Every ``$defs`` entry the schema files share with this module."""
    return {**{f"shape-{name}": json_schema(name) for name in SHAPES}, "shape-setting": setting_schema()}


def url_scheme(url: str) -> str:
    return url.partition("://")[0]


def url_problem(url: Any, allowed: tuple[str, ...] | list[str], what: str) -> str | None:
    """A git url's shape and scheme against the protocols a lane allows."""
    found = problem("git-url", url, what)
    if found:
        return found
    if url_scheme(url) not in allowed:
        return (
            f"{what} {url!r} uses {url_scheme(url)}://, which this lane does not allow (git-protocols: "
            f"{', '.join(allowed)})"
        )
    return None


class ShapeError(ValueError):
    """A value that does not have its declared shape."""


class Escape(ShapeError):
    """A path that would leave its root."""


def require(shape: str, value: Any, what: str) -> str:
    """``value`` when it has ``shape``; else :class:`ShapeError` (for code past validation)."""
    found = problem(shape, value, what)
    if found:
        raise ShapeError(found)
    return value


def inside(root: Path, relative: str, what: str) -> Path:
    """``root / relative`` when its shape is a relative path and it stays inside ``root`` with
    every existing symlink followed; else :class:`Escape`. Paths not yet created are fine."""
    found = problem("relative-path", relative, what)
    if found:
        raise Escape(found)
    base = Path(os.path.realpath(root))
    target = Path(os.path.realpath(base / relative))
    if target != base and not target.is_relative_to(base):
        raise Escape(f"{what} {relative!r} resolves to {target}, outside {base} (through a symlink)")
    return base / relative
