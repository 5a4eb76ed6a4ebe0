"""`infx github lane-gate`: which lanes have a self-hosted runner online, read through the API with
the token in INFX_RUNNERS_TOKEN, against the local server's runners and runner groups. A lane is
stopped only when every place its runners could be registered was read; without a token, or with
one that may not read the runners, nothing is stopped and the gate says why."""

from __future__ import annotations

import json

import pytest

from testing.cli import run_cli
from testing.github_helpers import env_for, rows, write_plan
from testing.github_server import LocalGitHub, repository_settings, runner, runner_group

LANES = '["gb300-nv", "gb300", "cluster:gb300-nv"]'


@pytest.fixture
def github():
    with LocalGitHub() as server:
        settings = repository_settings(server.state)
        settings.runners = [
            runner(1, "gb300-nv_0", ["gb300-nv"], True),
            runner(2, "gb300-nv_1", ["gb300-nv"], True, "offline"),
            runner(3, "gb300_0", ["gb300"], True, "offline"),
        ]
        settings.runner_groups = [
            runner_group(
                server.state,
                7,
                "gpu",
                "selected",
                [runner(4, "gb300-c_0", ["cluster:gb300-nv"], True, "offline")],
                ["acme/bench"],
            )
        ]
        yield server


def gate(server: LocalGitHub, tmp_path, token: str | None) -> tuple[dict, str]:
    output = tmp_path / "gate.json"
    env = env_for(server, **({"INFX_RUNNERS_TOKEN": token} if token else {}))
    done = run_cli("github", "lane-gate", "--lanes", LANES, "--output", str(output), env=env)
    assert done.returncode == 0, done.stderr
    return json.loads(output.read_text()), done.stdout


def test_lanes_without_an_online_runner_are_stopped(github, tmp_path):
    found, text = gate(github, tmp_path, "ghs_admin")
    assert found["checked"] is True and found["down"] == ["gb300", "cluster:gb300-nv"]
    assert found["lanes"]["gb300-nv"] == {"up": True, "detail": "1 of 2 runner(s) online"}
    assert "lane `cluster:gb300-nv`: no runner online: all 1 runner(s) with the label are offline" in text


def test_a_lane_whose_runners_could_not_all_be_read_is_never_stopped(github, tmp_path):
    repository_settings(
        github.state
    ).org_runner_readers = set()  # the organization's groups are out of the token's reach
    found, _ = gate(github, tmp_path, "ghs_admin")
    # gb300's one visible runner is offline, but an online one may sit in a group the token cannot see.
    assert found["checked"] is True and found["down"] == []
    assert found["lanes"]["gb300-nv"]["detail"] == "1 of 2 runner(s) online"
    for lane in ("gb300", "cluster:gb300-nv"):
        assert found["lanes"][lane]["up"] is True and "not all could be read" in found["lanes"][lane]["detail"]


@pytest.mark.parametrize("token", [None, "ghs_reader"], ids=["no-token", "no-administration"])
def test_without_a_token_that_may_list_runners_nothing_is_stopped_and_the_gate_says_so(github, tmp_path, token):
    repository_settings(github.state).org_runner_readers = set()
    found, text = gate(github, tmp_path, token)
    assert found["checked"] is False and found["down"] == [] and all(state["up"] for state in found["lanes"].values())
    assert "runner availability not checked" in found["notice"] and "INFX_RUNNERS_TOKEN" in text
    if token:
        assert "403" in found["notice"] and "Must have admin rights" in found["notice"]


def test_the_report_refuses_a_lane_gate_file_that_is_not_json_and_posts_nothing(github, tmp_path):
    plan = write_plan(tmp_path / "plan.json", rows(2))
    gate_file = tmp_path / "gate.json"
    gate_file.write_text('{"checked": true, "down": ["gb300"\n')  # cut short
    done = run_cli(
        "github", "report", "--pr", "7", "--plan", str(plan), "--lane-gate", str(gate_file), env=env_for(github)
    )
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert f"{gate_file}:2:1: error[lane-gate-json]: cannot read the lane gate file" in done.stderr, done.stderr
    assert "infx github lane-gate --output" in done.stderr
    assert not github.state.requests_to("POST", r".*") and not github.state.requests_to("PATCH", r".*")
