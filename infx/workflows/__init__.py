"""What `.github/workflows` call: step outputs, summaries and shards, the sticky PR report,
reruns, reuse, the baseline, the plan of a sweep, and the GitHub client package (`github/`, the
only importer of PyGithub, and the only way to GitHub's API).

Effects: network, filesystem, subprocess (git, while planning); the modules whose docstring says
"Effects: none" are rules and rendering only.
"""
