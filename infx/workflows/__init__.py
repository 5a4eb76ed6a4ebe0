"""What `.github/workflows` call: step outputs, summaries and shards, the sticky PR report,
reruns, and the PyGithub adapter (`api.py`, the only module that imports PyGithub)."""
