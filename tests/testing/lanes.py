"""Lane profiles for test repositories: the bundled gb300-nv profile under another name, serving
the runner labels a test names (the lane check reads `lane` and `runner-labels`; the rest stays valid)."""

from __future__ import annotations

import json
import re
from pathlib import Path

BUNDLED_PROFILE = Path(__file__).resolve().parents[2] / "runners" / "gb300-nv.yaml"


def write_lane_profile(root: Path, name: str, labels: list[str]) -> Path:
    """runners/<name>.yaml in ``root``: the bundled profile, named ``name``, declaring ``labels``."""
    text = BUNDLED_PROFILE.read_text()
    text = text.replace("lane: gb300-nv\n", f"lane: {name}\n", 1)
    text, replaced = re.subn(r"^runner-labels: .*$", f"runner-labels: {json.dumps(labels)}", text, count=1, flags=re.M)
    assert replaced == 1, "the bundled profile's runner-labels line moved"
    path = root / "runners" / f"{name}.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path
