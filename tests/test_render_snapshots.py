"""Text and JSON renderings of a file with several diagnostics, notes reaching into an imported profile."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from spark_dsl.pipeline import run
from spark_dsl.render.json_format import render as render_json
from spark_dsl.render.text import render as render_text

PROJECT = Path(__file__).parent / "fixtures" / "render"


@pytest.fixture
def result(monkeypatch: pytest.MonkeyPatch) -> Any:
    monkeypatch.chdir(PROJECT)  # file names as a user in the project sees them
    return run([Path("main.spark")], Path("."))


def test_the_fixture_has_errors_warnings_and_a_note_into_the_imported_profile(result: Any) -> None:
    codes = [d.code for d in result.diagnostics]
    assert codes == ["SPK212", "SPK406", "SPK103", "SPK106"]
    (note,) = [n for n in result.diagnostics[0].notes if n.location and n.location.file == "profiles/long.spark"]
    assert "max_model_len = 1M" in note.message


def test_text_rendering(result: Any, snapshot: Any) -> None:
    assert render_text(result.diagnostics, result.sources, len(result.files)) == snapshot


def test_text_rendering_in_colour(result: Any, snapshot: Any) -> None:
    assert render_text(result.diagnostics, result.sources, len(result.files), colour=True) == snapshot


def test_json_rendering(result: Any, snapshot: Any) -> None:
    text = render_json([s.name for s in result.files], result.diagnostics, result.sources)
    assert json.loads(text) == snapshot
