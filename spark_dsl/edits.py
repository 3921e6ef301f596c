"""Fixes that add or remove a whole setting or block in a spec's text, laid out as `spark fmt` would.

A replaced value needs only its span (`diagnostics.replacement`). Adding `key = value` to a
body, or removing an entry, needs the syntax tree to find where the body's settings are and
how they are indented; these helpers build those edits.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Protocol

from spark_dsl.diagnostics import Edit, Fix
from spark_dsl.span import Location, Span
from spark_dsl.syntax import ast

if TYPE_CHECKING:
    from spark_dsl.loader import SourceFile

INDENT = "  "


def _line_start(text: str, offset: int) -> int:
    return text.rfind("\n", 0, offset) + 1


def _line_end(text: str, offset: int) -> int:
    end = text.find("\n", offset)
    return len(text) if end == -1 else end


def _indent_of(text: str, offset: int) -> str:
    start = _line_start(text, offset)
    line = text[start:offset]
    return line[: len(line) - len(line.lstrip(" \t"))]


def _alone_on_lines(text: str, span: Span) -> bool:
    """Whether only blanks (and a trailing comment) share the lines of `span`."""
    before = text[_line_start(text, span.start) : span.start]
    after = text[span.end : _line_end(text, span.end)]
    return not before.strip() and (not after.strip() or after.lstrip().startswith("#"))


def insert_setting(source: SourceFile, body: ast.Body, key: str, value: str) -> Edit:
    """`key = value` added to a body: after its last setting, with that setting's indentation."""
    return insert_entry(source, body, f"{key} = {value}")


def insert_entry(source: SourceFile, body: ast.Body, entry: str) -> Edit:
    """One line of a body (`key = value`, or a one-line block `runtime { host_memory = 8GiB }`)
    added to it: after its last setting, with that setting's indentation."""
    text = source.text
    settings = [e for e in body.entries if isinstance(e, ast.Attribute)]
    if settings:
        last = settings[-1]
        if _alone_on_lines(text, last.span):
            end = _line_end(text, last.span.end)
            at = end + 1 if end < len(text) else end
            line = f"{_indent_of(text, last.span.start)}{entry}\n"
            return Edit(Location(source.name, Span(at, at)), line if end < len(text) else "\n" + line)
        return Edit(Location(source.name, Span(last.span.end, last.span.end)), f" {entry}")
    close = body.span.end - 1  # the body's `}`
    if not text[_line_start(text, close) : close].strip():
        at = _line_start(text, close)
        indent = _indent_of(text, close) + INDENT
        return Edit(Location(source.name, Span(at, at)), f"{indent}{entry}\n")
    if body.entries:
        first = body.entries[0]
        if _alone_on_lines(text, first.span):
            at = _line_start(text, first.span.start)
            return Edit(Location(source.name, Span(at, at)), f"{_indent_of(text, first.span.start)}{entry}\n")
    return Edit(Location(source.name, Span(close, close)), f" {entry} ")


def removal_span(text: str, span: Span) -> Span:
    """What removing an entry deletes: its lines when it has them to itself (a trailing comment
    goes with them), else the entry and the blanks before it."""
    if _alone_on_lines(text, span):
        start = _line_start(text, span.start)
        end = _line_end(text, span.end)
        return Span(start, min(end + 1, len(text)))
    start = span.start
    while start > 0 and text[start - 1] in " \t":
        start -= 1
    return Span(start, span.end)


def removal(source: SourceFile, span: Span) -> Edit:
    """An entry removed (see `removal_span`)."""
    return Edit(Location(source.name, removal_span(source.text, span)), "")


class _Spanned(Protocol):
    @property
    def span(self) -> Span: ...


def list_item_removal(items: Sequence[_Spanned], index: int, count: int = 1) -> Span:
    """What removing `count` items of a list (or call arguments) from `index` deletes: them and the
    comma after them, or before them when they are last."""
    first, last = items[index], items[index + count - 1]
    if index + count < len(items):
        return Span(first.span.start, items[index + count].span.start)
    if index > 0:
        return Span(items[index - 1].span.end, last.span.end)
    return Span(first.span.start, last.span.end)


def entry_at(module: ast.Module | None, span: Span) -> ast.Attribute | ast.Block | None:
    """The innermost setting or block whose key, kind or value is exactly `span` or holds it."""
    if module is None:
        return None
    found: ast.Attribute | ast.Block | None = None
    bodies = [s.body for s in module.statements if not isinstance(s, ast.Import)]
    while bodies:
        body = bodies.pop()
        for entry in body.entries:
            if entry.span.start <= span.start and span.end <= entry.span.end:
                found = entry
                if isinstance(entry, ast.Block):
                    bodies.append(entry.body)
    return found


def body_holding(module: ast.Module | None, span: Span) -> ast.Body | None:
    """The innermost body (a deployment's, a profile's or a block's) whose braces hold `span`."""
    if module is None:
        return None
    best: ast.Body | None = None
    bodies = [s.body for s in module.statements if not isinstance(s, ast.Import)]
    while bodies:
        body = bodies.pop()
        if body.span.start < span.start and span.end <= body.span.end:
            best = body
            bodies = [e.body for e in body.entries if isinstance(e, ast.Block)]
    return best


def add_setting(message: str, source: SourceFile, body: ast.Body, key: str, value: str) -> Fix:
    """The unsafe fix that adds `key = value` to a body."""
    return Fix(message, (insert_setting(source, body, key, value),))


def remove_entry(message: str, source: SourceFile, span: Span) -> Fix | None:
    """The unsafe fix that removes the setting or block at `span` (None when there is none)."""
    entry = entry_at(source.module, span)
    if entry is None:
        return None
    return Fix(message, (removal(source, entry.span),))
