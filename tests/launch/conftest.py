"""The bundled gb300-nv lane and the matrix rows it serves, shared by the launch tests."""

from pathlib import Path

import pytest

from bench.gb300_points import gb300_points
from infx.launch.lane import load_lane

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def lane():
    return load_lane("gb300-nv", REPO)


@pytest.fixture(scope="session")
def points():
    return gb300_points(REPO)
