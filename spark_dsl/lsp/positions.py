"""Converts code-point offsets to LSP positions in the negotiated encoding, and back."""

from __future__ import annotations

import re
from collections.abc import Sequence

from lsprotocol import types

from spark_dsl.span import LineIndex, Span

UTF16 = types.PositionEncodingKind.Utf16
UTF32 = types.PositionEncodingKind.Utf32
_ASTRAL = re.compile("[\U00010000-\U0010ffff]")


def negotiate(offered: Sequence[str] | None) -> types.PositionEncodingKind:
    """UTF-32 when the client offers it (spans are code points already), else UTF-16."""
    return UTF32 if offered and UTF32 in offered else UTF16


class TextPositions:
    """Position conversions for one text; cheap when no character lies outside the BMP."""

    __slots__ = ("_astral", "index", "utf16")

    def __init__(self, text: str, encoding: str, index: LineIndex | None = None) -> None:
        self.index = index if index is not None else LineIndex(text)
        self.utf16 = encoding != UTF32
        # UTF-16 and code points differ only past the Basic Multilingual Plane.
        self._astral = self.utf16 and _ASTRAL.search(text) is not None

    def position(self, offset: int) -> types.Position:
        line, column = self.index.position(offset)
        units = column - 1
        if self._astral:
            prefix = self.index.line_text(line)[: column - 1]
            units += len(_ASTRAL.findall(prefix))
        return types.Position(line=line - 1, character=units)

    def range(self, span: Span) -> types.Range:
        return types.Range(start=self.position(span.start), end=self.position(span.end))

    def offset(self, position: types.Position) -> int:
        """The code-point offset of a client position, clamped to the line and the text."""
        line = position.line + 1
        if line > self.index.line_count:
            return len(self.index.text)
        text = self.index.line_text(line)
        column = position.character
        if self._astral:
            units = 0
            for count, ch in enumerate(text):
                if units >= column:
                    column = count
                    break
                units += 2 if ord(ch) > 0xFFFF else 1
            else:
                column = len(text)
        return self.index.offset(line, min(column, len(text)) + 1)
