"""infx: validate benchmark configs, build sweep matrices, gate perf-changelog.yaml and
launch sweep points on runner lanes."""

__version__ = "0.1.0"
