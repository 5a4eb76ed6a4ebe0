"""The imports infx makes inside a function instead of at the top of its module: the one list.

Every other import is at the top of its module (tests/test_imports.py checks both: each import
inside a function is one of these, and each of these is still made). A module is imported late
only where its start-up cost was measured (`python3 bench/startup.py`, the milliseconds of CPU it
adds to a process that already holds what its importers load) and a command that does not need it
would otherwise pay for it. The commands themselves are the other late point: infx/cli.py loads
a command's module only when that command runs (its COMMANDS table).

Effects: none (a table).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Deferred:
    module: str  # imported late, with its submodules
    importers: tuple[str, ...]  # the infx modules that import it inside a function
    cost_ms: int  # measured start-up cost (bench/startup.py), rounded
    why: str
    probe: str = ""  # what the benchmark imports to measure the cost, when not ``module`` itself


_GITHUB = "infx.workflows.github."  # the GitHub client package (infx/workflows/github/)
_PYGITHUB_IMPORTERS = tuple(
    _GITHUB + name for name in ("artifacts", "client", "comments", "failures", "repository", "retry")
)
# Modules a warm `infx matrix` loads (its YAML read from the cache) that parse YAML only on a miss.
_WARM_MATRIX_READERS = ("infx.yamlcache", "infx.points", "infx.recipes", "infx.schema")

DEFERRED = (
    Deferred(
        "github",
        _PYGITHUB_IMPORTERS,
        280,
        "PyGithub, with requests and urllib3: only the commands that talk to GitHub load it, inside the one client",
    ),
    Deferred(
        "requests",
        (_GITHUB + "client", _GITHUB + "failures"),
        150,
        "loaded with PyGithub, for the artifact downloads' session",
    ),
    Deferred("urllib3", (_GITHUB + "failures", _GITHUB + "retry"), 45, "loaded with PyGithub, for infx's retry rule"),
    Deferred("http.client", (_GITHUB + "failures",), 15, "loaded with PyGithub (a cut-off answer's exception)"),
    Deferred(
        "matplotlib",
        ("infx.results.plot",),
        370,
        "the charts of `infx results plot`; `results collect` and `compare` load the same module without drawing",
        "matplotlib.backends.backend_agg",
    ),
    Deferred(
        "infx.config.validate",
        ("infx.config.load",),
        30,
        "the config rules: `infx lane` and `infx launch` read runners.yaml's default path from infx.config, "
        "and `load_config_set(validate=False)` skips them",
    ),
    Deferred(
        "yaml",
        ("infx.evalsuite", "infx.config.rules"),
        13,
        "PyYAML: a warm `infx matrix` reads every YAML file from infx's cache and never parses",
    ),
    # `infx launch`: a real launch and a dry run each load a large part of the launcher the other does not.
    Deferred(
        "infx.launch.run",
        ("infx.commands.launch",),
        31,
        "a real launch alone submits and waits (Slurm, srtctl, staging); a dry run does not",
    ),
    Deferred("infx.launch.dryrun", ("infx.commands.launch",), 16, "a dry run alone renders srtctl's view of the job"),
    Deferred(
        "infx.results.artifact",
        ("infx.commands.launch",),
        19,
        "the judge a real launch hands the launcher (the output folder's verdict); a dry run judges nothing",
    ),
    Deferred(
        "infx.yamlio",
        _WARM_MATRIX_READERS,
        18,
        "infx's YAML reader, which loads PyYAML: imported by the functions that parse, after a cache miss",
    ),
)


def deferred_importers() -> dict[str, tuple[str, ...]]:
    """Module imported late -> the infx modules allowed to import it inside a function."""
    return {entry.module: entry.importers for entry in DEFERRED}
