"""Master-config fields that belong elsewhere (`NON_MASTER_FIELDS`), named by the rule field-not-master
with where each one goes. The schemas themselves are infx/schemas/; infx/schema.py validates."""

from __future__ import annotations

# Fields people put in master configs that belong elsewhere: the rule names them and says where.
NON_MASTER_FIELDS = {
    "duration": "points always run for 3600 s; the matrix sets duration, a master config cannot",
    "gpus-per-node": "it is a runner fact: set it under hardware: in configs/runners.yaml",
    "available-cpu-dram-mib": "it is a runner fact: set it under hardware: in configs/runners.yaml",
    "total-cpu-dram-gb": "the matrix derives it from dram-utilization and the runner's hardware",
    "node-count": "the matrix derives it from num-nodes or the recipe",
    "max-model-len": "the matrix derives it as isl + osl + 256",
    "exp-name": "the matrix derives it from the topology",
    "trace-source": "the agentic trace is fixed by the benchmark, not chosen per config",
}
