"""Results: per-point artifacts -> typed rows (collect), their verdicts (validate), a comparison
with a baseline (compare) and the Pareto picture (plot).

Effects: filesystem, network (the results and charts read and written; compare looks the baseline
up on GitHub through infx/workflows/baseline.py).
"""
