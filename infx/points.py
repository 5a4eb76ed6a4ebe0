"""Identity of one sweep point, shared by the launcher, the workflows and the GitHub API.

A row's ``recipe-fingerprint`` names its topology (everything but concurrency); the
point id adds the concurrency so every GitHub job, artifact and launch record of a sweep
has one stable, short name.
"""

from __future__ import annotations


def point_id(row: dict) -> str:
    conc = row.get("conc")
    concs = conc if isinstance(conc, list) else [conc]
    fingerprint = str(row.get("recipe-fingerprint", "nofingerprint"))[:16]
    return f"{fingerprint}-c{'x'.join(str(c) for c in concs)}"
