"""targets/ is what `spark build specs -o targets` writes now: CI fails when it is stale."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def test_committed_targets_are_current() -> None:
    r = subprocess.run(
        [sys.executable, "-m", "spark_dsl", "build", "specs", "-o", "targets", "--check"],
        cwd=REPO,
        env={**os.environ, "NO_COLOR": "1"},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert r.returncode == 0, (
        "targets/ is stale; rebuild it with `python -m spark_dsl.dev regen` and review the diff:\n"
        + r.stdout
        + r.stderr
    )
