"""The part of a long source line a text diagnostic quotes (spark_dsl/render/excerpt.py)."""

from __future__ import annotations

import pytest

from spark_dsl.render.excerpt import CONTEXT, LONG_LINE, SHOWN, excerpt

TOKEN = "hf_" + "AbCdEfGhIjKlMnOpQrStUvWxYz01234567"


def quote(line: str, start: int, end: int) -> tuple[str, str]:
    """The quoted text, and the part of it the span covers."""
    shown = excerpt(line, 0, len(line), start, end)
    return shown.text, shown.text[shown.start : shown.end]


def test_a_short_line_is_quoted_whole() -> None:
    line = "x" * LONG_LINE
    assert quote(line, 5, 9) == (line, "xxxx")


@pytest.mark.parametrize("at", [0, 1, CONTEXT, 500, 10_000 - 4])
def test_a_long_line_is_cut_around_the_span(at: int) -> None:
    line = "-" * 10_000
    line = line[:at] + "HERE" + line[at + 4 :]
    text, covered = quote(line, at, at + 4)
    assert covered == "HERE"
    assert len(text) <= SHOWN + 2 * len("...")
    assert text.startswith("...") == (at > CONTEXT)
    assert text.endswith("...") == (at + 4 < len(line))


def test_a_span_longer_than_the_window_is_cut_with_it() -> None:
    line = "a" * 50 + "b" * 5_000 + "c" * 50
    text, covered = quote(line, 50, 5_050)
    assert covered == "b" * (SHOWN - CONTEXT) and text.endswith("b...")


def test_a_span_past_the_end_of_its_line_stops_there() -> None:
    line = "z" * 1_000
    text, covered = quote(line, 990, 5_000)  # a span running onto later lines
    assert covered == "z" * 10 and not text.endswith("...")


def test_only_the_window_is_taken_from_the_source() -> None:
    source = "first line\n" + "y" * 1_000 + "TARGET" + "y" * 1_000 + "\nlast"
    start = source.index("TARGET")
    shown = excerpt(source, 11, source.index("\nlast"), start, start + 6)
    assert shown.text[shown.start : shown.end] == "TARGET" and "line" not in shown.text


@pytest.mark.parametrize("offset", range(-45, 5))
def test_a_token_across_the_cut_is_masked(offset: int) -> None:
    at = 1_000
    line = " " * 1_200
    where = at - CONTEXT + offset  # the token starts just before the window, or in it
    line = line[:where] + TOKEN + line[where + len(TOKEN) :]
    text, _ = quote(line, at, at + 1)
    assert not any(TOKEN[i : i + 8] in text for i in range(3, len(TOKEN) - 8))
