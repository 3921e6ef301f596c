"""Shared fixtures: run the CLI in a fresh process or in-process, and project folders on disk."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

# The real validators (ShellCheck, Compose v2, kubernetes-validate, yamllint, a local Slurm cluster).
pytest_plugins = ["conftest_validators"]

REPO = Path(__file__).resolve().parent.parent


@pytest.fixture
def spark(tmp_path: Path) -> Callable[..., subprocess.CompletedProcess[str]]:
    """Runs `python -m spark_dsl` as a user would, in `tmp_path` unless `cwd` says otherwise."""

    def run(*args: str, cwd: Path | None = None, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
        full_env = {**os.environ, "NO_COLOR": "1", **(env or {})}
        return subprocess.run(
            [sys.executable, "-m", "spark_dsl", *args],
            cwd=cwd or tmp_path,
            capture_output=True,
            text=True,
            env=full_env,
            timeout=120,
        )

    return run


@pytest.fixture
def project(tmp_path: Path) -> Callable[[dict[str, str]], Path]:
    """Writes {relative path: text} under tmp_path and returns the folder."""

    def write(files: dict[str, str]) -> Path:
        for rel, text in files.items():
            path = tmp_path / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
        return tmp_path

    return write
