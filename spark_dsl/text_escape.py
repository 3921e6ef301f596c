"""Text from a spec (values, file names) made safe to print: no character a terminal, a log viewer
or a reader's eye would act on instead of showing.

A spec is untrusted input in CI. Printed raw, an ESC sequence could repaint the terminal, a
carriage return or newline could print a fake "no problems" line, a bidi override could make a
value read differently than it is. Such characters are shown as the language writes them
(`\\n`, `\\t`, `\\u{1b}`), so a message still quotes the value exactly.
"""

from __future__ import annotations

# Controls (C0, DEL, C1), format characters (bidi overrides, zero-width), line and paragraph
# separators, and lone surrogates (from file names that are not UTF-8).
_HIDDEN = frozenset(("Cc", "Cf", "Zl", "Zp", "Cs"))
_NAMED = {"\n": "\\n", "\t": "\\t"}


def hidden(ch: str) -> bool:
    """Whether printing `ch` raw would act rather than show."""
    # Imported here: only a text that is not all printable asks, and a clean `spark check`
    # loads no Unicode table (a shared library of its own).
    import unicodedata

    return unicodedata.category(ch) in _HIDDEN


def visible(text: str, keep_tabs: bool = False) -> str:
    """`text` with every hidden character written as an escape (tabs kept when asked)."""
    if text.isprintable():
        return text
    return "".join(_shown(ch, keep_tabs) for ch in text)


def _shown(ch: str, keep_tabs: bool) -> str:
    if ch == "\t" and keep_tabs:
        return ch
    if not hidden(ch):
        return ch
    return _NAMED.get(ch) or f"\\u{{{ord(ch):x}}}"


def json_document(text: str) -> str:
    """A JSON document (written with `ensure_ascii=False`) with hidden characters as `\\uXXXX`.

    `json.dumps` already escapes C0 controls; C1 controls, bidi overrides and line separators
    are valid raw in JSON strings but act when the document is printed to a terminal.
    """
    # The common case checked at C speed: a document of thousands of diagnostics is megabytes.
    if text.replace("\n", "").isprintable() or all(ch == "\n" or not hidden(ch) for ch in text):
        return text
    return "".join(ch if ch == "\n" or not hidden(ch) else _json_escape(ch) for ch in text)


def _json_escape(ch: str) -> str:
    code = ord(ch)
    if code <= 0xFFFF:
        return f"\\u{code:04x}"
    high, low = divmod(code - 0x10000, 0x400)
    return f"\\u{0xD800 + high:04x}\\u{0xDC00 + low:04x}"
