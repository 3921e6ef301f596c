"""`spark fmt`: formats `.spark` text canonically and proves the result means the same.

The layout is described in `spark_dsl/format/printer.py`; `format_text` is the
one entry point for the command line and the language server.
"""

from __future__ import annotations

from typing import Any

from msgspec import Struct

from spark_dsl.diagnostics import Diagnostic


class FormatterBug(Exception):
    """The formatter produced text that does not parse back to the same tree."""


class FormatResult(Struct, frozen=True):
    """The formatted text, or the syntax diagnostic that kept the file from being formatted."""

    text: str | None
    diagnostic: Diagnostic | None


def shape(node: Any) -> Any:
    """A node as nested tuples without spans: equal shapes mean equal meaning."""
    if isinstance(node, Struct):
        kept = (name for name in node.__struct_fields__ if name != "span")
        return (type(node).__name__, *(shape(getattr(node, name)) for name in kept))
    if isinstance(node, tuple):
        return tuple(shape(item) for item in node)
    return node


def _meaning(module: Any) -> tuple[Any, list[str]]:
    return shape(module.statements), sorted(c.text.rstrip() for c in module.comments)


def format_text(text: str, file: str) -> FormatResult:
    """Formats one file's text; a file with a syntax error yields its diagnostic instead."""
    from spark_dsl.format.printer import Printer
    from spark_dsl.syntax.parser import parse

    text = text.removeprefix("\ufeff")
    parsed = parse(text, file)
    if parsed.module is None:
        return FormatResult(None, parsed.diagnostic)
    formatted = Printer(text, parsed.module).print()
    # Check every result before anyone writes it: a formatter must never change meaning.
    again = parse(formatted, file)
    if again.module is None or _meaning(again.module) != _meaning(parsed.module):
        raise FormatterBug(f"formatting {file} would change its meaning")
    return FormatResult(formatted, None)
