"""Bash words for values: one line each, read back exactly by bash, placeholders expanded."""

from __future__ import annotations

import re
import shlex

from spark_dsl.targets.placeholders import split

# Characters that need no quoting at all (shlex's own safe set).
_SAFE = re.compile(r"[\w@%+=:,./-]+", re.ASCII)
_ANSI_C = {"\\": "\\\\", "'": "\\'", "\n": "\\n", "\t": "\\t", "\r": "\\r"}


def quote(text: str) -> str:
    """One bash word that reads back as `text`, never spanning lines.

    Printable text is single-quoted (nothing inside is special); text with
    newlines or control characters uses ANSI-C quoting, so every flag stays on
    its own line and comments built from words never break.
    """
    if _SAFE.fullmatch(text):
        return text
    if text.isprintable():
        return shlex.quote(text)
    return "$'" + "".join(_ansi_c(ch) for ch in text) + "'"


def _ansi_c(ch: str) -> str:
    if ch in _ANSI_C:
        return _ANSI_C[ch]
    if ch.isprintable():
        return ch
    code = ord(ch)
    if code < 0x80:
        return f"\\x{code:02x}"
    return f"\\U{code:08x}" if code > 0xFFFF else f"\\u{code:04x}"


def word(text: str) -> str:
    """`text` as a bash word whose placeholders expand from shell variables of the same name."""
    parts = list(split(text))
    if len(parts) > 1 and all(_SAFE.fullmatch(literal) or not literal for literal, _ in parts):
        # Plain text around the variables: one double-quoted word reads best ("http://${X}:8100").
        return '"' + "".join(literal + (f"${{{name}}}" if name else "") for literal, name in parts) + '"'
    out = []
    for literal, variable in parts:
        if literal:
            out.append(quote(literal))
        if variable:
            out.append(f'"${{{variable}}}"')
    return "".join(out) or "''"


def command_lines(argv: tuple[str, ...] | list[str], indent: str = "  ") -> list[str]:
    """A command as lines for `\\` joining: program and positionals, then one option per line."""
    groups: list[list[str]] = [[]]
    for token in argv:
        if token.startswith("-") and groups[-1]:
            groups.append([])
        groups[-1].append(word(token))
    lines = [" ".join(group) for group in groups]
    return [lines[0], *(indent + line for line in lines[1:])]


def joined(lines: list[str]) -> list[str]:
    """Continuation backslashes on every line but the last."""
    return [line + " \\" for line in lines[:-1]] + lines[-1:]
