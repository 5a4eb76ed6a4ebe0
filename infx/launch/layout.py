"""The names of a point folder's parts, as the launch writes them (the point's artifact).

staging.py writes them; whoever reads a point folder (infx/results/artifact.py, the eval reader)
takes the names from here. Names only: no effect.
"""

from __future__ import annotations

EVAL_FOLDER = "eval"  # an eval point's outputs (srt-slurm's lm-eval stage's eval_results/)
LOGS_COPY = "LOGS"  # the launch's logs, copied as regular files and folders
LOGS_TARBALL = "multinode_server_logs.tar.gz"  # the same logs, tarred
