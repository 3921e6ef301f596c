"""Prints values, strings and names in their canonical spelling; long or commented lists break."""

from __future__ import annotations

import re

from spark_dsl.format.comments import CommentPool, Leading
from spark_dsl.syntax import ast

INDENT = "  "
# A list longer than this, written on one line, is printed one item per line.
WIDTH = 100

_NAME = re.compile(r"[A-Za-z][A-Za-z0-9_-]*\Z")
_RESERVED = frozenset({"import", "profile", "deployment", "extends", "true", "false"})
_ESCAPES = {'"': '\\"', "\\": "\\\\", "\n": "\\n", "\t": "\\t"}


def quote(value: str) -> str:
    """A string literal for `value`; control characters other than tab and newline as `\\u{..}`."""
    out = []
    for ch in value:
        if ch in _ESCAPES:
            out.append(_ESCAPES[ch])
        elif ord(ch) < 0x20 or ord(ch) == 0x7F:
            out.append(f"\\u{{{ord(ch):x}}}")
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


def name_or_quoted(name: str) -> str:
    """A block label as a bare name where the grammar allows it, else quoted."""
    return name if _NAME.match(name) and name not in _RESERVED else quote(name)


def inline(value: ast.Value) -> str:
    """The one-line spelling of a value."""
    match value:
        case ast.Number() | ast.Quantity():
            return value.text
        case ast.String():
            return quote(value.value)
        case ast.Bool():
            return "true" if value.value else "false"
        case ast.Symbol():
            return value.name
        case ast.ListValue():
            return "[" + ", ".join(inline(item) for item in value.items) + "]"
        case ast.Call():
            return f"{value.name.name}(" + ", ".join(_argument(a) for a in value.args) + ")"
        case ast.Combination():
            return " + ".join(inline(term) for term in value.terms)
    raise TypeError(f"not a value: {value!r}")  # pragma: no cover - the AST has no other values


def _argument(arg: ast.Arg) -> str:
    return inline(arg.value) if arg.name is None else f"{arg.name.name} = {inline(arg.value)}"


class ValuePrinter:
    """Lays out one value; comments inside it stay in a broken list or move before it."""

    def __init__(self, pool: CommentPool) -> None:
        self.pool = pool

    def render(self, value: ast.Value, indent: int, column: int) -> tuple[list[str], list[Leading]]:
        """The value's lines and the comments hoisted out of it.

        The first line continues a line already `column` characters wide; later
        lines carry their own indentation (`indent` levels for the closing `]`).
        """
        one_line = inline(value)
        has_comments = self.pool.any_within(value.span)
        if not isinstance(value, ast.ListValue) or (not has_comments and column + len(one_line) <= WIDTH):
            # Only lists can hold a comment where it was written; elsewhere it moves above.
            hoisted = [Leading(c) for c in self.pool.within(value.span.start, value.span.end)]
            return [one_line], hoisted
        return self._broken_list(value, indent), []

    def _broken_list(self, value: ast.ListValue, indent: int) -> list[str]:
        layout = self.pool.distribute(
            value.items,
            [item.span for item in value.items],
            value.span.start + 1,
            value.span.end - 1,
            anchored=True,
        )
        pad = INDENT * (indent + 1)
        lines = ["[" + trailing(layout.open_trailing)]
        for slot in layout.slots:
            assert isinstance(
                slot.item,
                (
                    ast.Number,
                    ast.Quantity,
                    ast.String,
                    ast.Bool,
                    ast.Symbol,
                    ast.ListValue,
                    ast.Call,
                    ast.Combination,
                ),
            )
            item_lines, hoisted = self.render(slot.item, indent + 1, len(pad))
            lines += [pad + lead.comment.text.rstrip() for lead in (*slot.leading, *hoisted)]
            lines.append(pad + item_lines[0])
            lines += item_lines[1:]
            lines[-1] += "," + trailing(slot.trailing)
        lines += [pad + lead.comment.text.rstrip() for lead in layout.dangling]
        lines.append(INDENT * indent + "]")
        return lines


def trailing(comment: ast.Comment | None) -> str:
    """A comment at the end of a line, two spaces after the code."""
    return "" if comment is None else "  " + comment.text.rstrip()
