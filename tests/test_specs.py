"""specs/: the recipe's validated configurations check clean, and every launch uses only known vLLM flags."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from spark_dsl.pipeline import collect_paths, run
from spark_dsl.render.plan import plan_dict
from spark_dsl.vllm_flags import check_argv

REPO = Path(__file__).resolve().parent.parent
SPEC_FILES = sorted((REPO / "specs").rglob("*.spark"))
# The configurations issue 5 asks for, at least: one deployment each.
SPEC_NAMES = [
    "muse-b200", "muse-b300", "muse-gb200", "muse-gb300", "muse-mi355x-latency", "muse-mi355x-throughput",
    "muse-mi350x-mid", "muse-mi355x-bf16", "muse-mi355x-converted", "muse-mi355x-1m", "muse-b200-dp2",
    "muse-b200-pd", "muse-b200-vision",
]  # fmt: skip


@pytest.fixture(scope="module")
def result() -> Any:
    # File names in plans are relative to the working directory, as a user running `spark` sees them.
    with pytest.MonkeyPatch.context() as mp:
        mp.chdir(REPO)
        return run(collect_paths(["specs"], Path(".")), Path("."))


def test_specs_check_clean(result: Any) -> None:
    assert [(d.code, d.location.file) for d in result.diagnostics] == []
    names = {p.name for p in result.plans}
    assert set(SPEC_NAMES) <= names


def test_every_spec_says_which_recipe_statement_it_realizes() -> None:
    # The recipe's specs quote the recipe; a model outside it (specs/models/) names its sources.
    for path in SPEC_FILES:
        if "profiles" in path.parts:
            continue
        assert path.read_text().startswith("# Source:" if "models" in path.parts else "# Recipe:"), path


def test_every_launch_uses_only_known_flags(result: Any) -> None:
    launches = [launch for _, each in result.planned() for launch in each if launch.argv[0] == "vllm"]
    assert len(launches) >= 15
    for launch in launches:
        assert check_argv(list(launch.argv)) == [], launch.argv


def test_secrets_never_reach_argv_or_env(result: Any) -> None:
    for _, launches in result.planned():
        for launch in launches:
            text = json.dumps([launch.argv, launch.env])
            assert "vllm-api-key" not in text and "hf-token" not in text


@pytest.mark.parametrize("name", SPEC_NAMES)
def test_plan_json_snapshot(result: Any, name: str, snapshot: Any) -> None:
    plan = result.plan(name)
    assert plan is not None
    (planned,) = result.planned([plan])
    assert plan_dict(planned, result.sources) == snapshot
