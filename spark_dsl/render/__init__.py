"""Renderers of diagnostics for people and machines; spans become lines and columns only here."""

from __future__ import annotations

from msgspec import Struct

from spark_dsl.loader import SourceFile
from spark_dsl.span import Location


class Position(Struct, frozen=True):
    """1-based start and exclusive end, columns in code points."""

    line: int
    column: int
    end_line: int
    end_column: int


def position(location: Location, sources: dict[str, SourceFile]) -> Position:
    source = sources.get(location.file)
    if source is None:
        return Position(1, 1, 1, 1)
    line, col = source.index.position(location.span.start)
    end_line, end_col = source.index.position(location.span.end)
    return Position(line, col, end_line, end_col)
