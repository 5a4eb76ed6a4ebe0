"""Take one sweep point to a runner lane: route, resolve, check, fetch, submit, wait, collect.

Pure planning (pointfile, lane, route, plan, planrules, variant, checks) is separate from the
edges that act (sources, checkout, srtctl, slurm, the lane kind's launcher srtctl_kind, run), so
everything up to the first side effect is testable with data alone and runs in a dry run.

Effects: filesystem, subprocess (Slurm, srtctl, git, the benchmark; those may reach the network,
infx itself never does here).
"""
