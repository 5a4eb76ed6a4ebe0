"""The stand-in for lm-evaluation-harness in the jobs of tests/slurm (see __main__.py)."""
