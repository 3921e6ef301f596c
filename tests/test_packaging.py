"""The wheel ships the grammar and the catalog snapshot, and works from a clean install."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def test_wheel_contains_grammar_and_catalog(tmp_path: Path) -> None:
    subprocess.run(
        [sys.executable, "-m", "build", "--wheel", "--outdir", str(tmp_path), str(REPO)],
        check=True,
        capture_output=True,
        text=True,
    )
    (wheel,) = tmp_path.glob("spark_dsl-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    assert "spark_dsl/grammar/spark.lark" in names
    assert "spark_dsl/catalog/snapshot.json" in names
    shipped = zipfile.ZipFile(wheel).read("spark_dsl/grammar/spark.lark").decode()
    assert shipped == (REPO / "grammar" / "spark.lark").read_text()
    entry_points = next(n for n in names if n.endswith("entry_points.txt"))
    assert "spark = spark_dsl.cli:main" in zipfile.ZipFile(wheel).read(entry_points).decode()
