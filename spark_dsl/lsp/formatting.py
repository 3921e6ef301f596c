"""Document formatting: the `spark fmt` layout as one whole-document edit."""

from __future__ import annotations

import logging

from lsprotocol import types

from spark_dsl.format import FormatterBug, format_text
from spark_dsl.lsp.positions import TextPositions
from spark_dsl.span import Span

log = logging.getLogger(__name__)


def format_document(text: str, name: str, positions: TextPositions) -> list[types.TextEdit] | None:
    """No edits when already formatted; None when the text does not parse (nothing to format)."""
    try:
        result = format_text(text, name)
    except FormatterBug as err:  # never rewrite a buffer with text that means something else
        log.error("%s", err)
        return None
    if result.text is None:
        return None
    if result.text == text:
        return []
    whole = positions.range(Span(0, len(text)))
    return [types.TextEdit(range=whole, new_text=result.text)]
