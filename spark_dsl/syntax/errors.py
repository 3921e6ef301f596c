"""Turns the parser's exceptions into syntax diagnostics worded for people (SPK0xx)."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from spark_dsl.diagnostics import Diagnostic, Fix, Severity, replacement
from spark_dsl.span import LineIndex, Location, Span

if TYPE_CHECKING:
    from lark import Token
    from lark.exceptions import UnexpectedInput
    from lark.lexer import Lexer

_WORDS = {
    "NAME": "a name",
    "STRING": "a string",
    "NUMBER": "a number",
    "QUANTITY": "a number with a unit",
    "EQUAL": '"="',
    "PLUS": '"+"',
    "COMMA": '","',
    "LBRACE": '"{"',
    "RBRACE": '"}"',
    "LPAR": '"("',
    "RPAR": '")"',
    "LSQB": '"["',
    "RSQB": '"]"',
    "IMPORT": '"import"',
    "PROFILE": '"profile"',
    "DEPLOYMENT": '"deployment"',
    "MODEL": '"model"',
    "EXTENDS": '"extends"',
    "TRUE": '"true"',
    "FALSE": '"false"',
    "$END": "end of file",
}
_RESERVED = {"IMPORT", "PROFILE", "DEPLOYMENT", "EXTENDS", "TRUE", "FALSE"}
_VALUE_STARTS = {"NAME", "STRING", "NUMBER", "QUANTITY", "TRUE", "FALSE", "LSQB"}
# Keep the order of the words stable and natural: structure first, values last.
_ORDER = list(_WORDS)


def _expected_words(expected: set[str]) -> list[str]:
    names = set(expected)
    if "NAME" in names:
        # `model` is a name wherever a name may stand; only where a statement starts is it a word of its own.
        names.discard("MODEL")
    words: list[str] = []
    if {"NAME", "STRING", "NUMBER", "QUANTITY"} <= names:
        names -= _VALUE_STARTS
        words.append("a value")
    if {"EQUAL", "LBRACE"} <= names:
        # After a key the label of a block is rare; "=" or "{" is what users mean.
        names -= {"NAME", "STRING"}
    ordered = sorted(names, key=lambda n: _ORDER.index(n) if n in _ORDER else len(_ORDER))
    words[:0] = [_WORDS.get(n, n) for n in ordered if not n.startswith("__")]
    return words


def _join(words: list[str]) -> str:
    if len(words) <= 2:
        return " or ".join(words)
    return ", ".join(words[:-1]) + " or " + words[-1]


def _found(tok: Token) -> str:
    if tok.type == "$END":
        return "end of file"
    return f'"{tok}"' if tok.type != "STRING" else f"the string {tok}"


def _tokens_before(text: str, offset: int, lexer: Lexer) -> list[Token]:
    from spark_dsl.syntax.lexer import tokens

    seen: list[Token] = []
    for tok in tokens(text, lexer):
        if (tok.start_pos or 0) >= offset:
            break
        seen.append(tok)
    return seen


def _brace_pairs(text: str, lexer: Lexer) -> tuple[list[tuple[int, int]], list[int], list[int]]:
    """Matched `{`/`}` offset pairs, unclosed `{` offsets and unmatched `}` offsets."""
    pairs: list[tuple[int, int]] = []
    stack: list[int] = []
    stray: list[int] = []
    for tok in _tokens_before(text, len(text) + 1, lexer):
        if tok.type == "LBRACE":
            stack.append(tok.start_pos or 0)
        elif tok.type == "RBRACE":
            if stack:
                pairs.append((stack.pop(), tok.start_pos or 0))
            else:
                stray.append(tok.start_pos or 0)
    return pairs, stack, stray


def _indent(index: LineIndex, offset: int) -> int:
    line, _ = index.position(offset)
    text = index.line_text(line)
    return len(text) - len(text.lstrip())


def _unclosed_brace(text: str, file: str, open_braces: list[int], pairs: list[tuple[int, int]]) -> Diagnostic:
    index = LineIndex(text)
    culprit = open_braces[-1]
    # A `}` indented unlike its `{` most likely closes an outer block: the `{` it
    # was matched with is the one the user forgot to close.
    for start, end in sorted(pairs):
        if index.position(start)[0] != index.position(end)[0] and _indent(index, start) != _indent(index, end):
            culprit = start
            break
    line, _ = index.position(culprit)
    return Diagnostic(
        "SPK003",
        Severity.ERROR,
        "unclosed `{`: the file ends before this block is closed",
        Location(file, Span(culprit, culprit + 1)),
        label="this block is never closed",
        help=f"add `}}` where the block opened on line {line} ends",
    )


def _unterminated_string(text: str, file: str, pos: int) -> Diagnostic:
    end = text.find("\n", pos)
    end = len(text) if end == -1 else end
    return Diagnostic(
        "SPK002",
        Severity.ERROR,
        "unterminated string",
        Location(file, Span(pos, end)),
        label="this string has no closing quote",
        help='close the string with `"` on the same line (strings cannot span lines)',
    )


def describe_syntax_error(text: str, file: str, err: UnexpectedInput, lexer: Lexer) -> Diagnostic:
    from lark.exceptions import UnexpectedCharacters, UnexpectedToken

    if isinstance(err, UnexpectedCharacters):
        pos = err.pos_in_stream or 0
        ch = text[pos] if pos < len(text) else ""
        return _unterminated_string(text, file, pos) if ch == '"' else _unexpected_character(text, file, pos, ch)

    assert isinstance(err, UnexpectedToken)
    tok = err.token
    expected = set(err.expected)
    if tok.type == "$END" and "RBRACE" in expected:
        pairs, open_braces, _ = _brace_pairs(text, lexer)
        if open_braces:
            return _unclosed_brace(text, file, open_braces, pairs)
    start = tok.start_pos if tok.start_pos is not None else len(text)
    end = tok.end_pos if tok.end_pos is not None else start
    if tok.type == "$END":
        start = end = len(text.rstrip())
    span = Span(start, max(end, start))
    if tok.type == "RBRACE" and "RBRACE" not in expected and start in _brace_pairs(text, lexer)[2]:
        return Diagnostic(
            "SPK003",
            Severity.ERROR,
            "unmatched `}`",
            Location(file, span),
            label="no block is open here",
            help="remove this `}`, or add the `{` it was meant to close",
        )
    before = _tokens_before(text, start, lexer)
    if (
        expected == {"LBRACE"}
        and len(before) >= 2
        and (before[-2].type == "NAME" or (before[-2].type == "MODEL" and _in_body(before)))
        and before[-1].type in ("NAME", "MODEL", "STRING")
    ):
        return _missing_equals(text, file, before[-2], before[-1])
    words = _expected_words(expected)
    after = f" after {_found(before[-1])}" if before else ""
    message = f"expected {_join(words)}{after}, found {_found(tok)}"
    if tok.type in _RESERVED and "NAME" in expected:
        return Diagnostic(
            "SPK001",
            Severity.ERROR,
            f"{message}: `{tok}` is a reserved word",
            Location(file, span),
            label="reserved word",
            help=f"choose another name; `{tok}` is reserved by the language",
        )
    help_text = _help_for(words, before, tok)
    return Diagnostic(
        "SPK001",
        Severity.ERROR,
        message,
        Location(file, span),
        label=f"expected {_join(words)}",
        help=help_text,
    )


def _in_body(before: list[Token]) -> bool:
    """Whether the tokens leave a `{` open: `model x` there is a key without "=", not a declaration."""
    depth = 0
    for tok in before:
        depth += 1 if tok.type == "LBRACE" else -1 if tok.type == "RBRACE" else 0
    return depth > 0


def _missing_equals(text: str, file: str, key: Token, value: Token) -> Diagnostic:
    """`accelerator b200` reads as a block header; the user almost surely left out "="."""
    key_end, value_start = key.end_pos or 0, value.start_pos or 0
    span = Span(value_start, value.end_pos or 0)
    # The blanks between key and value become ` = `; a comment between them stays.
    between = text[key_end:value_start]
    gap = Span(key_end, value_start) if not between.strip() else Span(key_end, key_end)
    return Diagnostic(
        "SPK001",
        Severity.ERROR,
        f'expected "=" or "{{" after "{key}", found {_found(value)}',
        Location(file, span),
        label='expected "=" or "{"',
        help=f"write `{key} = {value}`",
        fixes=(replacement(f"insert `=` after `{key}`", file, gap, " = " if not between.strip() else " =", safe=True),),
    )


# A key at the start of its line, then `:` (`model: x`), as YAML or JSON would write it.
_COLON_KEY = re.compile(r'(?:^|[{\s])(?P<key>[A-Za-z_][A-Za-z0-9_-]*|"[^"\n]*")[ \t]*$')


def _unexpected_character(text: str, file: str, pos: int, ch: str) -> Diagnostic:
    """A character outside the language; `:` after a key and a trailing `;` get a safe fix."""
    line_start = text.rfind("\n", 0, pos) + 1
    key = _COLON_KEY.search(text[line_start:pos]) if ch == ":" else None
    label, help_text = "not part of the language", "remove it, or quote it inside a string"
    fixes: tuple[Fix, ...] = ()
    if key is not None:
        label = "a setting takes `=`"
        help_text = f"write `{key['key']} = ...`: a setting takes `=`, not `:`"
        before = "" if text[pos - 1 : pos] in (" ", "\t") else " "
        after = "" if text[pos + 1 : pos + 2] in (" ", "\t") else " "
        fixes = (replacement("write `=` for `:`", file, Span(pos, pos + 1), f"{before}={after}", safe=True),)
    elif ch == ";":
        help_text = "remove it: a setting ends with its line, without `;`"
        fixes = (replacement("remove `;`", file, Span(pos, pos + 1), "", safe=True),)
    return Diagnostic(
        "SPK004",
        Severity.ERROR,
        f"unexpected character `{ch}`",
        Location(file, Span(pos, pos + 1)),
        label=label,
        help=help_text,
        fixes=fixes,
    )


def _help_for(words: list[str], before: list[Token], tok: Token) -> str:
    if words == ['"="', '"{"'] or ('"="' in words and before and before[-1].type == "NAME"):
        name = before[-1] if before else "key"
        return f"write `{name} = value` for an attribute or `{name} {{ ... }}` for a block"
    if "a value" in words:
        return "give a value: a number, a string, a name, a list `[...]` or a call `name(...)`"
    if tok.type == "$END":
        return "the file ends too early; complete the statement"
    return f"the language expects {_join(words)} here"
