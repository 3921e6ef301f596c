"""Source positions: 0-based offsets inside, converted to lines and columns at the edges."""

from __future__ import annotations

from bisect import bisect_right

from msgspec import Struct


class Span(Struct, frozen=True):
    """A half-open range of code-point offsets into one file's text."""

    start: int
    end: int

    def cover(self, other: Span) -> Span:
        return Span(min(self.start, other.start), max(self.end, other.end))


class Location(Struct, frozen=True):
    """A span inside a named file."""

    file: str
    span: Span


class LineIndex:
    """Maps offsets to 1-based (line, column) in code points, and back."""

    __slots__ = ("_starts", "text")

    def __init__(self, text: str) -> None:
        self.text = text
        starts = [0]
        find = text.find
        pos = find("\n")
        while pos != -1:
            starts.append(pos + 1)
            pos = find("\n", pos + 1)
        self._starts = starts

    def position(self, offset: int) -> tuple[int, int]:
        """1-based line and column of an offset (columns count code points)."""
        offset = max(0, min(offset, len(self.text)))
        line = bisect_right(self._starts, offset) - 1
        return line + 1, offset - self._starts[line] + 1

    def offset(self, line: int, column: int) -> int:
        """The offset of a 1-based line and column, clamped to the text."""
        if line < 1:
            return 0
        if line > len(self._starts):
            return len(self.text)
        return min(self._starts[line - 1] + max(column, 1) - 1, len(self.text))

    def line_text(self, line: int) -> str:
        """The text of a 1-based line, without its newline."""
        start, end = self.line_bounds(line)
        return self.text[start:end]

    def line_bounds(self, line: int) -> tuple[int, int]:
        """The offsets where a 1-based line starts and ends (before its line break), without
        copying the line out: a line can be megabytes long."""
        start = self._starts[line - 1]
        end = self._starts[line] - 1 if line < len(self._starts) else len(self.text)
        while end > start and self.text[end - 1] == "\r":
            end -= 1
        return start, end

    @property
    def line_count(self) -> int:
        return len(self._starts)
