"""GitHub Actions plumbing (step outputs, summaries, shards) and, later, the GitHub API."""
