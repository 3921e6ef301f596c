"""A buffer as the client sees it: LSP lines and positions, and `didChange` edits applied to it.

The protocol ends a line at `\\n`, `\\r\\n` or `\\r` and nothing else; pygls splits with
`str.splitlines`, which also breaks at form feeds, `\\u2028` and other separators, so its line
numbers drift from the editor's. pygls also pulls a character past a line's end back one
unit (cutting off the last character of the last line), reads a character just past a
line's text as the start of the next line, and drops the text of an edit that starts below
the last line. Edits are applied here instead, as the specification says: a position past
the end of its line means the end of the line, one past the last line the end of the
document. A range whose end comes before its start has no meaning; the change that holds
it is refused whole (the buffer keeps its last good text) and logged.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Sequence

from lsprotocol import types

_BREAK = re.compile(r"\r\n|\r|\n")


class ClientLines:
    """Offsets (code points) of client positions in one text, and back, in UTF-16 or UTF-32."""

    def __init__(self, text: str, utf16: bool = True) -> None:
        self.text = text
        self.utf16 = utf16
        # Each line's start and the end of its text (before its break).
        self.lines: list[tuple[int, int]] = []
        start = 0
        for brk in _BREAK.finditer(text):
            self.lines.append((start, brk.start()))
            start = brk.end()
        self.lines.append((start, len(text)))
        self.starts = [start for start, _ in self.lines]

    def offset(self, position: types.Position) -> int:
        """Where a position falls, clamped: past its line's end is the line's end, past the
        last line the end of the document."""
        if position.line >= len(self.lines):
            return len(self.text)
        start, end = self.lines[position.line]
        if not self.utf16:
            return min(start + position.character, end)
        units = 0
        at = start
        while at < end and units < position.character:
            units += 2 if ord(self.text[at]) > 0xFFFF else 1
            at += 1
        return at

    def position(self, offset: int) -> types.Position:
        offset = max(0, min(offset, len(self.text)))
        line = max(0, bisect_right(self.starts, offset) - 1)
        start, end = self.lines[line]
        column = self.text[start : min(offset, end)]
        units = len(column) + (sum(1 for ch in column if ord(ch) > 0xFFFF) if self.utf16 else 0)
        return types.Position(line=line, character=units)


def reversed_range(r: types.Range) -> bool:
    return (r.end.line, r.end.character) < (r.start.line, r.start.character)


def apply_changes(text: str, changes: Sequence[types.TextDocumentContentChangeEvent], utf16: bool) -> str | None:
    """The text after a `didChange`'s changes, in order; None when one has a reversed range."""
    for change in changes:
        if isinstance(change, types.TextDocumentContentChangePartial):
            if reversed_range(change.range):
                return None
            lines = ClientLines(text, utf16)
            start, end = lines.offset(change.range.start), lines.offset(change.range.end)
            text = text[:start] + change.text + text[end:]
        else:
            text = change.text
    return text


def minimal_edit(old: str, new: str, utf16: bool) -> types.TextEdit | None:
    """One edit that turns `old` into `new`, covering only what differs (None when equal); its
    ends never split a `\\r\\n`, so the client reads the same range."""
    if old == new:
        return None
    prefix = 0
    limit = min(len(old), len(new))
    while prefix < limit and old[prefix] == new[prefix]:
        prefix += 1
    if prefix and old[prefix - 1] == "\r":
        prefix -= 1
    suffix = 0
    limit -= prefix
    while suffix < limit and old[-1 - suffix] == new[-1 - suffix]:
        suffix += 1
    end = len(old) - suffix
    if suffix and old[end] == "\n" and end > 0 and old[end - 1] == "\r":
        suffix -= 1
    lines = ClientLines(old, utf16)
    end = len(old) - suffix
    return types.TextEdit(
        range=types.Range(start=lines.position(prefix), end=lines.position(end)),
        new_text=new[prefix : len(new) - suffix],
    )
