"""The lane's preparation steps (``prepare:`` in the profile), run after checkout and install, before submit.

Every step is an argv template from the profile, never a shell string. For each image (the
point's, then the lane's extra ones) a ``squash-check`` runs first; only when it fails does
``squash-import`` run. On the gb300-nv lane both go through squash_guard.py: a squash file
counts only when it hashes to the SHA-256 recorded when it was imported for this exact image,
and the import re-checks under the squash's lock, so concurrent launches neither import twice
nor delete a fresh file. Then
``setup`` runs in the srt-slurm checkout. A failing import or setup stops the launch.
"""

from __future__ import annotations

import re
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from ..diagnostics import Diagnostic, error


class ExtraImage(Protocol):
    """An image the lane imports besides the point's (``prepare.images`` of the profile)."""

    @property
    def image(self) -> str: ...

    @property
    def alias(self) -> str: ...


class PrepareTemplates(Protocol):
    """What the steps are planned from: the profile's ``prepare:`` section, as lane.py reads it
    (``infx.launch.lane.PrepareSettings``; lane.py imports this module, so it is named here by shape)."""

    @property
    def images(self) -> tuple[ExtraImage, ...]: ...

    @property
    def squash_check(self) -> tuple[str, ...]: ...

    @property
    def squash_import(self) -> tuple[str, ...]: ...

    @property
    def setup(self) -> tuple[str, ...]: ...


GUARD = Path(__file__).with_name("squash_guard.py")
PLACEHOLDER = re.compile(r"\{([a-z-]*)\}")
IMAGE_FIELDS = ("partition", "image", "squash", "lock", "guard")
# template key -> the placeholders it may use
TEMPLATES = {"squash-check": IMAGE_FIELDS, "squash-import": IMAGE_FIELDS, "setup": ("partition",)}
OUTPUT_TAIL = 4000  # characters of a step's output kept in messages and the launch record


def squash_file(squash_dir: str, image: str) -> str:
    """``<squash-dir>/<image with each of / : @ # replaced by _>.sqsh``."""
    return str(Path(squash_dir or ".") / (re.sub(r"[/:@#]", "_", image) + ".sqsh"))


def template(prepare: PrepareTemplates, key: str) -> tuple[str, ...]:
    """The argv template ``key`` of TEMPLATES (empty when the profile has none)."""
    return getattr(prepare, key.replace("-", "_"))


def template_problems(prepare: PrepareTemplates, file: str, where) -> list[Diagnostic]:
    """Placeholders a template may not use (``where(*path)`` locates a profile key)."""
    diagnostics = []
    for key, allowed in TEMPLATES.items():
        for index, arg in enumerate(template(prepare, key)):
            for name in PLACEHOLDER.findall(arg):
                if name not in allowed:
                    diagnostics.append(
                        error(
                            file,
                            where("prepare", key, index),
                            "lane-prepare-placeholder",
                            f"prepare.{key}[{index}] uses {{{name}}}, which {key} does not provide",
                            f"Use only: {', '.join('{' + a + '}' for a in allowed)}.",
                        )
                    )
    return diagnostics


def _render(argv: tuple[str, ...], values: dict) -> tuple[str, ...]:
    return tuple(PLACEHOLDER.sub(lambda m: values[m[1]], arg) for arg in argv)


@dataclass(frozen=True)
class Step:
    name: str
    argv: tuple[str, ...]
    skip_if_ok: str | None = None  # name of the check whose success makes this step unnecessary
    is_check: bool = False  # a failing check is an answer, not a failure

    def to_json(self) -> dict:
        return {"name": self.name, "argv": list(self.argv), "skip-if-ok": self.skip_if_ok}


def images(prepare: PrepareTemplates, point_image: str) -> list[str]:
    """The point's image first, then the lane's extra ones, each once."""
    extra = [item.image for item in prepare.images]
    return list(dict.fromkeys([point_image, *extra] if prepare.squash_import else []))


def plan_steps(prepare: PrepareTemplates, squash_dir: str, partition: str, point_image: str, guard: str) -> list[Step]:
    steps = []
    for image in images(prepare, point_image):
        squash = squash_file(squash_dir, image)
        values = {"partition": partition, "image": image, "squash": squash, "lock": squash + ".lock", "guard": guard}
        check = Step(f"squash-check {image}", _render(prepare.squash_check, values), is_check=True)
        steps += [check, Step(f"squash-import {image}", _render(prepare.squash_import, values), skip_if_ok=check.name)]
    if prepare.setup:
        steps.append(Step("setup", _render(prepare.setup, {"partition": partition})))
    return steps


def _run(argv: list[str], cwd: Path, env: dict) -> tuple[int, str]:
    """Exit code and output (stdout and stderr interleaved); a missing program is exit 127."""
    try:
        process = subprocess.Popen(
            argv, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, errors="replace"
        )
    except OSError as exc:
        return 127, str(exc)
    try:
        output, _ = process.communicate()
    except BaseException:
        # Interrupted: SIGTERM first, so srun can cancel its job step itself.
        process.terminate()
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        raise
    return process.returncode, output


class StepFailed(RuntimeError):
    def __init__(self, step: Step, code: int, output: str):
        super().__init__(f"prepare step {step.name!r} exited {code}: {' '.join(step.argv)}")
        self.output = output


def run_steps(steps: list[Step], cwd: Path, env: dict, log: Path, record: list, say=print) -> None:
    """Run the steps in order, each entry (exit code, seconds, outcome) appended to ``record``
    as it ends and its output appended to ``log``; raises StepFailed at the first failure."""
    passed: set[str] = set()
    for step in steps:
        entry = {**step.to_json(), "exit-code": None, "seconds": 0.0, "outcome": "skipped"}
        record.append(entry)
        if step.skip_if_ok in passed:
            say(f"{step.name}: skipped, {step.skip_if_ok} passed")
            continue
        say(f"{step.name}: {' '.join(step.argv)}")
        start = time.monotonic()
        try:
            code, output = _run(list(step.argv), cwd, env)
        except BaseException:  # SIGTERM/SIGINT while the step ran; the record says so
            entry.update({"seconds": round(time.monotonic() - start, 3), "outcome": "interrupted"})
            raise
        entry.update(
            {
                "exit-code": code,
                "seconds": round(time.monotonic() - start, 3),
                "output": output[-OUTPUT_TAIL:],
                "outcome": "passed" if code == 0 else ("missing or invalid" if step.is_check else "failed"),
            }
        )
        with log.open("a") as handle:
            handle.write(f"$ {' '.join(step.argv)}\n{output}[exit {code}]\n\n")
        if code == 0:
            passed.add(step.name)
        elif not step.is_check:
            raise StepFailed(step, code, output)
