"""`python -m spark_dsl.dev regen --check`: every generated file is current, and a stale one is named."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from spark_dsl import dev

REPO = Path(__file__).resolve().parent.parent


def test_every_generated_file_is_current() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "spark_dsl.dev", "regen", "--check"], cwd=REPO, capture_output=True, text=True
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr


def _copy(tmp_path: Path) -> Path:
    """The generated files, the pages around them, and the specs with their committed outputs."""
    for step in dev.STEPS:
        (tmp_path / step.path).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(REPO / step.path, tmp_path / step.path)
    shutil.copytree(REPO / "specs", tmp_path / "specs")
    shutil.copytree(REPO / "targets", tmp_path / "targets")
    (tmp_path / ".git").mkdir()  # the project's root, which the outputs' headers name paths from
    return tmp_path


@pytest.mark.parametrize("step", [s.path for s in dev.STEPS])
def test_a_stale_file_is_named_with_the_command(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, step: str) -> None:
    copy = _copy(tmp_path)
    lines = (copy / step).read_text(encoding="utf-8").splitlines(keepends=True)
    # A line of the generated part goes missing (a page's hand-written part is its own).
    begin = next((i for i, line in enumerate(lines) if "BEGIN GENERATED" in line), None)
    del lines[len(lines) // 2 if begin is None else begin + 2]
    (copy / step).write_text("".join(lines), encoding="utf-8")
    monkeypatch.setattr(dev, "REPO", copy)
    assert dev.stale_files() == [step]


def test_stale_targets_are_named(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    copy = _copy(tmp_path)
    (copy / "targets" / "tiny-cpu" / "serve.sh").write_text("#!/bin/sh\n")
    monkeypatch.setattr(dev, "REPO", copy)
    assert dev.stale_files() == ["targets/"]


def test_the_snapshot_files_are_found_from_their_tests() -> None:
    tests = dev.snapshot_tests()
    assert "tests/test_render_snapshots.py" in tests
    assert all((REPO / t).is_file() for t in tests)
    assert "tests/test_code_snapshots.py" in tests  # its snapshots are a folder, a file a code
    single = list((REPO / "tests").rglob("__snapshots__/*.ambr"))
    folders = {ambr.parent for ambr in (REPO / "tests").rglob("__snapshots__/*/*.ambr")}
    assert len(tests) == len(single) + len(folders)
