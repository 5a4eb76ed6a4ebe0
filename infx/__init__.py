"""infx: validate benchmark configs, build sweep matrices, gate perf-changelog.yaml and
launch sweep points on runner lanes.

Effects: filesystem, subprocess: those of the modules at this level (files read and written, git
started by infx/git.py); each subpackage's docstring says its own, and infx reaches the network only
through infx/workflows/github/ (tests/test_effects.py).
"""

SOURCE_VERSION = "0.0.0+source"  # a source tree imported without being built or installed (PYTHONPATH)

try:  # written by setuptools-scm when the package is built or installed: the git tag's version
    from ._version import version as __version__
except ImportError:
    __version__ = SOURCE_VERSION
