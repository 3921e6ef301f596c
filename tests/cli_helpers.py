"""Runs the installed `spark` console script as a user would, in folders of a test's own making."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

# The console script beside this interpreter: the real command, not `python -m`.
SPARK = str(Path(sys.executable).with_name("spark"))
# Environment variables that change colour: each test says which it wants.
COLOUR_VARIABLES = ("NO_COLOR", "FORCE_COLOR", "TERM", "CLICOLOR", "CLICOLOR_FORCE")

PROFILE = "profile team {\n  serve { port = 8000 }\n}\n"
SPEC = (
    'import "../shared.spark"\n\n'
    "deployment {name} extends team {{\n  model       = muse-spark-open\n  accelerator = {accelerator}\n}}\n"
)
CLEAN = "deployment {name} {{\n  model       = muse-spark-open\n  accelerator = b200\n}}\n"
# One warning (SPK903) and nothing else.
WARNING = (
    "deployment {name} {{\n  model       = muse-spark-open\n  accelerator = b200\n"
    '  serve {{\n    extra_args = ["--enable-log-request"]\n  }}\n}}\n'
)
# One error (SPK103) and nothing else.
ERROR = "deployment {name} {{\n  model       = muse-spark-open\n  accelerator = b2000\n}}\n"


def spark(
    *args: str, cwd: Path, stdin: str | None = None, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    base = {k: v for k, v in os.environ.items() if k not in COLOUR_VARIABLES}
    return subprocess.run(
        [SPARK, *args],
        cwd=cwd,
        input=stdin,
        capture_output=True,
        text=True,
        env={**base, "NO_COLOR": "1", **(env or {})},
        timeout=120,
    )


def write(root: Path, files: dict[str, str]) -> Path:
    """Writes {relative path: text} under root (a folder named `.git` for a `.git` key)."""
    for rel, text in files.items():
        path = root / rel
        if rel.endswith(".git"):
            path.mkdir(parents=True, exist_ok=True)
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


def amd_repository(root: Path, marker: dict[str, str]) -> Path:
    """deploy/specs/shared.spark and deploy/specs/amd/mi355x.spark importing `../shared.spark`,
    with `marker` (a `.git`, a spark.toml, ...) written too; returns the amd folder."""
    write(
        root,
        {
            "deploy/specs/shared.spark": PROFILE,
            "deploy/specs/amd/mi355x.spark": SPEC.format(name="mi355x", accelerator="mi355x"),
            **marker,
        },
    )
    return root / "deploy/specs/amd"
