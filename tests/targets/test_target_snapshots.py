"""Snapshots of every target of every spec: a change to an emitter shows up as a reviewed diff
(`pytest --snapshot-update` regenerates them)."""

from __future__ import annotations

import pytest
from target_helpers import REPO, SPECS

from spark_dsl.pipeline import collect_paths, run
from spark_dsl.targets.build import DeploymentOutput, build


def rendered() -> dict[str, DeploymentOutput]:
    result = run(collect_paths([str(SPECS)], REPO), REPO)
    outcome = build(result.plans, result.launches, result.deployment_has_errors, [], (), REPO)
    assert outcome.diagnostics == []
    return {output.name: output for output in outcome.outputs}


OUTPUTS = rendered()
CASES = [(name, file) for name, output in sorted(OUTPUTS.items()) for file in output.files]


@pytest.mark.parametrize(("deployment", "file_name"), CASES, ids=[f"{d}/{f}" for d, f in CASES])
def test_output_matches_snapshot(deployment: str, file_name: str, snapshot) -> None:
    assert OUTPUTS[deployment].files[file_name] == snapshot


def test_every_spec_deployment_builds_something() -> None:
    assert len(OUTPUTS) == 21
    assert len(CASES) == 67
