"""Reading srtctl's output: the dry run's script panel, and the image notations a recipe may use."""

from infx.launch.checks import image_spellings
from infx.launch.srtctl import script_from_dry_run

# The layout srt-slurm's `srtctl dry-run` prints (rich panel, numbered rows, padded to the width).
PANEL = """2026-12-01 08:33:50 | INFO | Loaded config: job
╭──────────────────────── Generated sbatch Script ────────────────────────╮
│    1 #!/bin/bash                                                        │
│    2 #SBATCH --nodes=2                                                  │
│    3                                                                    │
│    4 if true; then                                                      │
│    5     echo "indented │ bar"                                          │
│    6 fi                                                                 │
╰─────────────────────────────────────────────────────────────────────────╯
╭──────────── Container Mounts ────────────╮
│    1 not the script                      │
╰──────────────────────────────────────────╯
"""


def test_the_script_is_read_from_the_numbered_panel_with_its_indentation():
    assert (
        script_from_dry_run(PANEL) == '#!/bin/bash\n#SBATCH --nodes=2\n\nif true; then\n    echo "indented │ bar"\nfi\n'
    )


def test_no_panel_or_an_unknown_layout_gives_no_script_rather_than_a_wrong_one():
    assert script_from_dry_run("Loaded config\nnothing else\n") is None
    skipped = PANEL.replace("│    3  ", "│    7  ")
    assert script_from_dry_run(skipped) is None
    wrapped = PANEL.replace("│    4 if true; then", "│      if true; then")
    assert script_from_dry_run(wrapped) is None


def test_both_registry_notations_name_the_same_image():
    assert image_spellings("nvcr.io#nvidia/ai-dynamo/x:1") == {
        "nvcr.io#nvidia/ai-dynamo/x:1",
        "nvcr.io/nvidia/ai-dynamo/x:1",
    }
    assert image_spellings("localhost:5000/x") == {"localhost:5000/x", "localhost:5000#x"}
    # a first component without '.' or ':' is a Docker Hub namespace, not a registry
    assert image_spellings("lmsysorg/sglang:v0.5.14") == {"lmsysorg/sglang:v0.5.14"}
    assert image_spellings("nginx:1.27.4") == {"nginx:1.27.4"}


def test_a_trt_recipe_naming_its_image_with_a_slash_matches_a_point_written_with_hash(lane, points):
    from pathlib import Path

    from infx.launch.plan import plan_point
    from infx.launch.pointfile import PointFile

    point = next(p for p in points if str(p["image"]).startswith("nvcr.io#"))
    plan = plan_point(lane, PointFile(data=point, file="p.json"), Path(__file__).resolve().parents[2])
    containers = plan.cluster_config("/c", "/s.sqsh")["containers"]
    slash = point["image"].replace("#", "/", 1)
    assert containers[point["image"]] == containers[slash] == "/s.sqsh"
