"""The part of a source line a text diagnostic quotes: all of it, or a window around the span.

A spec can be one line of megabytes (a list of a million items, `extends a,a,a,...`), and every
diagnostic on that line used to print the whole line: a million diagnostics times a megabyte of
line is a terabyte of output. A line longer than LONG_LINE characters is cut to SHOWN
characters around the span, with `...` where it was cut, so a diagnostic costs the same on any
line. Access tokens are masked before the cut (with a margin, so a token across the cut is
still masked), and only the window is ever copied out of the source.
"""

from __future__ import annotations

from msgspec import Struct

from spark_dsl.string_checks import mask_tokens

LONG_LINE = 160  # a line up to this long is quoted whole, as before
SHOWN = 120  # characters of a longer line shown around the span
CONTEXT = 40  # of which, at most, before the span
_MARGIN = 64  # beyond the window, masked too: longer than any access token
ELLIPSIS = "..."


class Excerpt(Struct, frozen=True):
    """What is quoted, and where the span starts and ends in it (0-based columns)."""

    text: str
    start: int
    end: int


def excerpt(source: str, line_start: int, line_end: int, span_start: int, span_end: int) -> Excerpt:
    """The quoted part of `source[line_start:line_end]` for a span of offsets into `source`.

    The span is clamped to the line (a span running onto later lines ends with this one).
    """
    span_start = min(max(span_start, line_start), line_end)
    span_end = min(max(span_end, span_start), line_end)
    if line_end - line_start <= LONG_LINE:
        text = mask_tokens(source[line_start:line_end])
        return Excerpt(text, span_start - line_start, span_end - line_start)
    first = max(line_start, span_start - CONTEXT)
    last = min(line_end, first + SHOWN)
    first = max(line_start, last - SHOWN)  # at the end of the line, show more before the span
    low, high = max(line_start, first - _MARGIN), min(line_end, last + _MARGIN)
    shown = mask_tokens(source[low:high])[first - low : last - low]
    before = ELLIPSIS if first > line_start else ""
    after = ELLIPSIS if last < line_end else ""
    start = span_start - first + len(before)
    end = min(span_end, last) - first + len(before)
    return Excerpt(before + shown + after, start, max(end, start))
