"""`spark check --fix`, `--diff` and `--unsafe-fixes`, through the real command."""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Callable
from pathlib import Path
from typing import Any

Project = Callable[[dict[str, str]], Path]

# `accelerator b200` lacks `=` (a safe fix); `flashinfr` is a typo (a did-you-mean: unsafe). A
# misspelt model or accelerator is no example: no fix replaces those (docs/fixes.md).
BROKEN = "deployment d {\n  model       = muse-spark-open\n  accelerator   b200\n  attention   = flashinfr\n}\n"
SAFE_FIXED = "deployment d {\n  model       = muse-spark-open\n  accelerator = b200\n  attention   = flashinfr\n}\n"
ALL_FIXED = "deployment d {\n  model       = muse-spark-open\n  accelerator = b200\n  attention   = flashinfer\n}\n"


def test_fix_applies_safe_fixes_writes_and_reports_what_it_changed(spark: Any, project: Project) -> None:
    folder = project({"a.spark": BROKEN})
    r = spark("check", "--fix", "a.spark")
    # The missing `=` hid the typo; fixed, the typo is reported, and stays (its fix is unsafe).
    assert (folder / "a.spark").read_text() == SAFE_FIXED
    assert "a.spark:3:17: fixed SPK001: insert `=` after `accelerator`" in r.stderr
    assert "fixed 1 problem in 1 file" in r.stderr
    assert "error[SPK103]" in r.stdout and r.returncode == 1


def test_unsafe_fixes_apply_the_rest_round_after_round(spark: Any, project: Project) -> None:
    folder = project({"a.spark": BROKEN})
    r = spark("check", "--fix", "--unsafe-fixes", "a.spark")
    assert r.returncode == 0, r.stdout + r.stderr
    assert (folder / "a.spark").read_text() == ALL_FIXED
    assert "fixed SPK103 (unsafe): replace with `flashinfer`" in r.stderr
    assert "checked 1 file: no problems" in r.stdout


def test_diff_shows_the_change_and_writes_nothing(spark: Any, project: Project) -> None:
    folder = project({"a.spark": BROKEN})
    r = spark("check", "--diff", "--unsafe-fixes", "a.spark")
    assert r.returncode == 1
    assert (folder / "a.spark").read_text() == BROKEN
    assert "--- a.spark (original)\n+++ a.spark (fixed)\n" in r.stdout
    assert (
        "-  accelerator   b200\n-  attention   = flashinfr\n+  accelerator = b200\n+  attention   = flashinfer\n"
        in r.stdout
    )
    assert "would fix 2 problems in 1 file" in r.stderr
    clean = spark("check", "--diff", "a.spark", cwd=project({"a.spark": ALL_FIXED}))
    assert clean.returncode == 0 and clean.stdout == ""


def test_without_fix_the_text_output_says_what_fix_would_do(spark: Any, project: Project) -> None:
    project({"a.spark": BROKEN})
    r = spark("check", "a.spark")
    assert "1 problem can be fixed with `spark check --fix`" in r.stderr
    project(
        {"a.spark": "deployment d {\n  model = muse-spark-open\n  accelerator = b200\n  attention = flashinfr\n}\n"}
    )
    assert "1 more with `--unsafe-fixes`" in spark("check", "a.spark").stderr


def test_json_marks_each_fix_safe_or_not(spark: Any, project: Project) -> None:
    project({"a.spark": BROKEN})
    doc = json.loads(spark("check", "--format", "json", "a.spark").stdout)
    (d,) = doc["diagnostics"]
    assert [f["safe"] for f in d["fixes"]] == [True]


def test_fix_writes_through_a_symlink_and_keeps_the_mode_and_byte_order_mark(spark: Any, project: Project) -> None:
    folder = project({"real/a.spark": "\ufeff" + BROKEN})
    real = folder / "real" / "a.spark"
    os.chmod(real, 0o640)
    (folder / "link.spark").symlink_to(real)
    r = spark("check", "--fix", "link.spark")
    assert "fixed 1 problem in 1 file" in r.stderr, r.stderr
    assert (folder / "link.spark").is_symlink()
    assert real.read_text(encoding="utf-8") == "\ufeff" + SAFE_FIXED
    assert stat.S_IMODE(real.stat().st_mode) == 0o640


def test_fix_reaches_an_imported_profile(spark: Any, project: Project) -> None:
    folder = project(
        {
            "p.spark": "profile team {\n  gpus: 8\n}\n",
            "a.spark": 'import "p.spark"\ndeployment d extends team {\n  model = muse-spark-open\n'
            "  accelerator = b200\n}\n",
        }
    )
    r = spark("check", "--fix", "a.spark")
    assert r.returncode == 0, r.stdout + r.stderr
    assert (folder / "p.spark").read_text() == "profile team {\n  gpus = 8\n}\n"


def test_a_file_that_cannot_be_written_or_changed_meanwhile_is_left_untouched(
    project: Project, monkeypatch: Any
) -> None:
    import io

    from spark_dsl import files, fixes
    from spark_dsl.pipeline import run

    folder = project({"a.spark": BROKEN, "b.spark": BROKEN.replace("deployment d", "deployment e")})
    paths = [folder / "a.spark", folder / "b.spark"]
    outcome = fixes.fix_run(lambda overlays: run(paths, folder, overlays), unsafe=False)
    assert len(outcome.changed) == 2
    (folder / "b.spark").write_text(BROKEN + "# edited meanwhile\n")

    def refuse(path: Path, text: str) -> None:
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(files, "replace_text", refuse)
    err = io.StringIO()
    assert fixes.write_fixed(outcome, err) == 2
    assert "a.spark: cannot write: Permission denied; left untouched" in err.getvalue()
    assert "b.spark: changed while spark was fixing it; left untouched" in err.getvalue()
    assert (folder / "a.spark").read_text() == BROKEN


def test_fix_on_standard_input_is_a_filter(project: Project) -> None:
    import subprocess
    import sys

    folder = project({})
    env = {**os.environ, "NO_COLOR": "1"}
    r = subprocess.run(
        [sys.executable, "-m", "spark_dsl", "check", "--fix", "--stdin-filename", "a.spark", "-"],
        input=BROKEN, capture_output=True, text=True, cwd=folder, env=env, timeout=120,
    )  # fmt: skip
    assert r.stdout == SAFE_FIXED  # the fixed text, and only it, on stdout
    assert "a.spark:3:17: fixed SPK001" in r.stderr and "error[SPK103]" in r.stderr
    assert not (folder / "a.spark").exists() and r.returncode == 1
