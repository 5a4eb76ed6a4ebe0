"""Results: per-point artifacts -> typed rows (collect), their verdicts (validate), a comparison
with a baseline (compare) and the Pareto picture (plot)."""
