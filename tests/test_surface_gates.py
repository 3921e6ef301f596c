"""The hostile suites catch a reader or writer that bypasses its gate (issue 31, item 6).

Each case takes one gate out of one reader or writer (the function the reader calls, replaced by
what the code did before the gate existed) and runs the suite case of the inventory that covers
that surface: the suite must fail. The same case passes with the gate in place (the inventory
test runs it), so a suite that could not see the hole would show up here.
"""

from __future__ import annotations

import tomllib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests import test_surface_inventory as inventory
from tests.hostile_suites import Project, hang_guard, make_project

# (what is removed, the attribute replaced, its stand-in, the suite case that must catch it)
REMOVALS: dict[str, tuple[str, Callable[..., Any], Callable[[Project], None]]] = {
    "write gate of --output-file": (
        "spark_dsl.write_gate.refusal",
        lambda path, build_folder=None: None,
        lambda proj: inventory.test_output_path_suite(proj, "spark check --output-file", "spec"),
    ),
    "write gate of model import -o": (
        "spark_dsl.write_gate.refusal",
        lambda path, build_folder=None: None,
        lambda proj: inventory.test_output_path_suite(proj, "spark model import -o/--output", "config-json"),
    ),
    "configuration symlink check": (
        "spark_dsl.config.leaves_repository",
        lambda file, home: False,
        lambda proj: inventory.test_input_path_suite_on_found_files(proj, "file:spark.toml", "symlink-out"),
    ),
    "nesting limit of spark.toml": (
        "spark_dsl.config.load_toml",
        tomllib.loads,
        lambda proj: inventory.test_input_path_suite_on_found_files(proj, "file:spark.toml", "deep"),
    ),
    "named-path project check": (
        "spark_dsl.project.Projects.escape",
        lambda self, raw, real, folder: None,
        lambda proj: inventory.test_input_path_suite_on_the_command_line(
            proj, "spark check PATHS", "symlink-folder-out"
        ),
    ),
}


# What the verdict says when it finds a hole (tests/hostile_suites.py's `judge`): a test that only
# failed for some other reason (a stand-in with the wrong signature) would not count.
REASONS = ("read from outside the project", "traceback", "raised:", "changed", "internal error")


@pytest.fixture
def proj(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Project]:
    made = make_project(tmp_path)
    monkeypatch.chdir(made.root)
    monkeypatch.setenv("NO_COLOR", "1")
    with hang_guard():
        yield made


@pytest.mark.parametrize("removed", sorted(REMOVALS))
def test_removing_a_gate_makes_its_suite_fail(proj: Project, monkeypatch: pytest.MonkeyPatch, removed: str) -> None:
    target, stand_in, suite_case = REMOVALS[removed]
    monkeypatch.setattr(target, stand_in)
    with pytest.raises(AssertionError) as caught:
        suite_case(proj)
    assert any(reason in str(caught.value) for reason in REASONS), caught.value
