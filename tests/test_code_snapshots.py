"""Every code's wording is pinned: the text rendering of each `CODE.fail.spark` fixture (message,
label, help and notes) is a snapshot, so a changed message shows up as a reviewed snapshot diff.

Update with `pytest --snapshot-update tests/test_code_snapshots.py` and read the diff.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from spark_dsl.pipeline import run
from spark_dsl.render.text import render

FIXTURES = Path(__file__).parent / "fixtures"
FAILING = sorted(FIXTURES.glob("codes/*.fail.spark")) + sorted(FIXTURES.glob("rules/*.fail.spark"))


@pytest.mark.parametrize("path", FAILING, ids=lambda p: p.name.split(".")[0])
def test_the_failing_fixture_renders_as_pinned(path: Path, snapshot: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(path.parent)  # file names as a user in the fixture's folder sees them
    result = run([Path(path.name)], Path("."))
    code = path.name.split(".")[0]
    assert code in {d.code for d in result.diagnostics}
    assert render(result.diagnostics, result.sources, len(result.files)) == snapshot
