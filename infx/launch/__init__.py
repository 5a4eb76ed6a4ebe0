"""Take one sweep point to a runner lane: route, resolve, check, fetch, submit, wait, collect.

Pure planning (lane, route, plan, checks) is separate from the edges that act
(sources, srtctl, slurm, run), so everything up to the first side effect is testable
with data alone and runs in a dry run.

Effects: filesystem, subprocess (Slurm, srtctl, git, the benchmark; those may reach the network,
infx itself never does here).
"""
