"""Bash words for values: one line each, read back exactly by bash, placeholders expanded."""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable

from spark_dsl.patterns import lazy_regex
from spark_dsl.targets.placeholders import split
from spark_dsl.text_escape import visible

# Characters that need no quoting at all (shlex's own safe set).
_SAFE = lazy_regex(r"[\w@%+=:,./-]+", re.ASCII)
_ANSI_C = {"\\": "\\\\", "'": "\\'", "\n": "\\n", "\t": "\\t", "\r": "\\r"}


def quote(text: str) -> str:
    """One bash word that reads back as `text` under any locale, never spanning lines.

    Printable text is single-quoted (nothing inside is special; non-ASCII stays raw UTF-8, whose
    bytes are never a quote in any locale). Text with newlines, control characters or invisible
    ones (bidi overrides, no-break spaces) uses ANSI-C quoting with byte escapes: `\\xNN` means
    the same bytes under every locale, where bash decodes `\\uNNNN` only under a UTF-8 one.
    So every flag stays on its own line and comments built from words never break.
    """
    if "\0" in text:
        # No argument or environment value can hold NUL; the checker reports it (SPK905).
        raise ValueError("a shell word cannot hold a NUL character")
    if _SAFE.fullmatch(text):
        return text
    if text.isprintable():
        return shlex.quote(text)
    return "$'" + "".join(_ansi_c(ch) for ch in text) + "'"


def _ansi_c(ch: str) -> str:
    if ch in _ANSI_C:
        return _ANSI_C[ch]
    if " " <= ch <= "~":
        return ch
    return "".join(f"\\x{byte:02x}" for byte in ch.encode("utf-8"))


def expansion_text(text: str) -> str:
    """`text` as the literal word of a double-quoted `"${NAME:?text}"`: bash expands `$`, `` ` ``
    and `\\` there, `}` ends the word and a `'` opens a quoted string (bash reads quotes inside
    `${...}` even within double quotes), so each is escaped; control characters are shown as
    escapes (the word is a message, printed to a terminal)."""
    return re.sub(r"""([$`"'\\}])""", r"\\\1", visible(text))


# Texts as written, remembered by the renderers (these words, the YAML writer's scalars): a build
# writes the same flags, keys and values for every deployment. A table is emptied when full, so
# a build keeps a few thousand at most.
_REMEMBERED = 4096


def remembered(table: dict[str, str], text: str, write: Callable[[str], str]) -> str:
    """`write(text)`, from `table` when written before (a caller asks the table first)."""
    written = table.get(text)
    if written is None:
        written = write(text)
        if len(table) >= _REMEMBERED:
            table.clear()
        table[text] = written
    return written


_WORDS: dict[str, str] = {}


def word(text: str) -> str:
    """`text` as a bash word whose placeholders expand from shell variables of the same name."""
    if type(text) is str:  # a Template (placeholders to fill) is never remembered as plain text
        return _WORDS.get(text) or remembered(_WORDS, text, _word)
    return _word(text)


def _word(text: str) -> str:
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
