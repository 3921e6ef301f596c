"""Builds AST nodes from the LALR parser's reductions, spans taken from tokens."""

from __future__ import annotations

import re
import sys
from typing import Any, Protocol

from spark_dsl.patterns import lazy_regex
from spark_dsl.span import Span
from spark_dsl.syntax import ast


class Token(Protocol):
    """What the builder reads of a token: its text (`str(tok)`), terminal and place. Lark's
    tokens and the fast driver's (spark_dsl.syntax.lalr) both have it; both are `str`s."""

    @property
    def type(self) -> str: ...

    @property
    def start_pos(self) -> int | None: ...

    @property
    def end_pos(self) -> int | None: ...


class SyntaxProblem(Exception):
    """A lexical problem found while building nodes (a bad escape, a malformed number).

    `replacement`, when given, is the text that fixes `span` (`safe` when it keeps the meaning).
    """

    def __init__(
        self, code: str, message: str, span: Span, help: str, replacement: str | None = None, safe: bool = False
    ) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.span = span
        self.help = help
        self.replacement = replacement
        self.safe = safe


def _name(tok: Token) -> str:
    """A name's text, one string object per distinct name: `model`, `serve` and `b200` recur in
    every spec of a run, and a run of 10,000 specs holds every one of them."""
    return sys.intern(str(tok))


def _span(tok: Token) -> Span:
    return Span(tok.start_pos or 0, tok.end_pos or 0)


def _node_span(first: Any, last: Any) -> Span:
    """From the start of `first` to the end of `last`, each a token (a `str`) or a node."""
    # A token is a `str` and a node is not: asking a token for a `span` it lacks raised and
    # caught an AttributeError each time, for most of the nodes of a parse.
    first_token, last_token = isinstance(first, str), isinstance(last, str)  # kept as Any, not narrowed to str
    start = (first.start_pos or 0) if first_token else first.span.start
    end = (last.end_pos or 0) if last_token else last.span.end
    return Span(start, end)


_ESCAPE = lazy_regex(r"\\(u\{[0-9A-Fa-f]{1,6}\}|.)")
_SIMPLE_ESCAPES = {'"': '"', "\\": "\\", "n": "\n", "t": "\t"}
_QUANTITY_PART = lazy_regex(r"([0-9][0-9_]*(?:\.[0-9][0-9_]*)?)([A-Za-z]+)")


def unescape(tok: Token) -> str:
    return unescape_text(str(tok), tok.start_pos or 0)


def unescape_text(quoted: str, start: int) -> str:
    """A STRING token's value: `quoted` (its text, quotes included) read with its escapes, `start`
    its offset in the file (where a bad escape is reported)."""
    raw = quoted[1:-1]
    if "\\" not in raw:
        return raw
    base = start + 1

    def repl(m: re.Match[str]) -> str:
        esc = m.group(1)
        if esc in _SIMPLE_ESCAPES:
            return _SIMPLE_ESCAPES[esc]
        if esc.startswith("u{"):
            point = int(esc[2:-1], 16)
            if point <= 0x10FFFF and not 0xD800 <= point <= 0xDFFF:
                return chr(point)
        span = Span(base + m.start(), base + m.end())
        raise SyntaxProblem(
            "SPK005",
            f"invalid escape `{m.group(0)}` in string",
            span,
            'use one of `\\"`, `\\\\`, `\\n`, `\\t` or `\\u{...}` with a valid code point, '
            f"or `\\{m.group(0)}` for a backslash",
            # A lone backslash most likely meant itself (a Windows path, a regular expression).
            replacement="\\" + m.group(0),
        )

    return _ESCAPE.sub(repl, raw)


# No setting takes a number near this long (the checker's ceiling, 2**53, has 16 digits).
# Refusing longer literals here bounds the cost of every conversion after: Python's
# `int()` is quadratic in the digits and refuses more than 4,300 of them outright.
MAX_NUMBER_LENGTH = 64


def _check_digits(text: str, span: Span) -> None:
    if len(text) > MAX_NUMBER_LENGTH:
        shown = f"{text[:12]}…{text[-4:]}"
        raise SyntaxProblem(
            "SPK105",
            f"number `{shown}` is {len(text):,} characters long (at most {MAX_NUMBER_LENGTH})",
            span,
            "no setting takes a number this large; write the value the setting needs",
        )
    for chunk in text.split("."):
        if chunk.endswith("_") or "__" in chunk:
            # The same digits with each `_` between two of them: the same number, safely.
            fixed = ".".join(re.sub(r"_+", "_", part).strip("_") for part in text.split("."))
            raise SyntaxProblem(
                "SPK006",
                f"malformed number `{text}`",
                span,
                f"`_` may only separate digits, as in `{fixed}`",
                replacement=fixed,
                safe=True,
            )


def number_value(text: str) -> int | float:
    clean = text.replace("_", "")
    return float(clean) if "." in clean else int(clean)


def quantity_node(text: str, span: Span) -> ast.Quantity:
    """A QUANTITY token's node; raises SyntaxProblem for a malformed number in it."""
    if len(text) > MAX_NUMBER_LENGTH:  # the whole literal first: `1h1h1h...` of megabytes is one token
        _check_digits(text, span)
    parts = tuple((m.group(1), m.group(2)) for m in _QUANTITY_PART.finditer(text))
    for num, _unit in parts:
        _check_digits(num, span)
    return ast.Quantity(text, parts, span)


def number_node(text: str, span: Span) -> ast.Number:
    """A NUMBER token's node; raises SyntaxProblem for a malformed one."""
    _check_digits(text, span)
    return ast.Number(text, number_value(text), span)


class AstBuilder:
    """Run inline by the LALR parser: each method receives its rule's children (tokens, which are
    `str`s, nodes, and None for an optional part left out).

    No Lark here: the fast driver calls these methods itself; spark_dsl.syntax.parser mixes in
    Lark's Transformer for Lark's own parser."""

    # statements
    def start(self, items: list[Any]) -> list[Any]:
        return items

    def import_stmt(self, c: list[Any]) -> ast.Import:
        return ast.Import(self.string([c[1]]), _node_span(c[0], c[1]))

    def _decl(self, c: list[Any]) -> tuple[ast.Ident, tuple[ast.Ident, ...], ast.Body, Span]:
        name = ast.Ident(_name(c[1]), _span(c[1]))
        extends: tuple[ast.Ident, ...] = ()
        rest = c[2:]
        if isinstance(rest[0], tuple):
            extends = rest[0]
            rest = rest[1:]
        lbrace, body_entries, rbrace = rest
        body = ast.Body(tuple(body_entries), Span(lbrace.start_pos or 0, rbrace.end_pos or 0))
        return name, extends, body, _node_span(c[0], rbrace)

    def profile(self, c: list[Any]) -> ast.Profile:
        return ast.Profile(*self._decl(c))

    def deployment(self, c: list[Any]) -> ast.Deployment:
        return ast.Deployment(*self._decl(c))

    def model_decl(self, c: list[Any]) -> ast.ModelDecl:
        keyword, name_tok, lbrace, body_entries, rbrace = c
        body = ast.Body(tuple(body_entries), Span(lbrace.start_pos or 0, rbrace.end_pos or 0))
        return ast.ModelDecl(ast.Ident(_name(name_tok), _span(name_tok)), (), body, _node_span(keyword, rbrace))

    def extends(self, c: list[Any]) -> tuple[ast.Ident, ...]:
        # `model` is a name here too (grammar/spark.lark: a keyword only where a statement starts).
        return tuple(ast.Ident(_name(t), _span(t)) for t in c if t.type in ("NAME", "MODEL"))

    # bodies
    def body(self, entries: list[Any]) -> list[Any]:
        return entries

    def attribute(self, c: list[Any]) -> ast.Attribute:
        key_tok, _, value = c
        quoted = key_tok.type == "STRING"
        key = ast.Ident(unescape(key_tok) if quoted else _name(key_tok), _span(key_tok))
        return ast.Attribute(key, value, _node_span(key_tok, value), quoted)

    def block(self, c: list[Any]) -> ast.Block:
        kind = ast.Ident(_name(c[0]), _span(c[0]))
        label = None
        if len(c) == 5:
            tok = c[1]
            label = ast.Ident(unescape(tok) if tok.type == "STRING" else _name(tok), _span(tok))
        lbrace, entries, rbrace = c[-3:]
        body = ast.Body(tuple(entries), Span(lbrace.start_pos or 0, rbrace.end_pos or 0))
        return ast.Block(kind, label, body, _node_span(c[0], rbrace))

    # values
    def combination(self, c: list[Any]) -> ast.Combination:
        terms = tuple(x for x in c if not isinstance(x, str))
        return ast.Combination(terms, _node_span(terms[0], terms[-1]))

    def quantity(self, c: list[Token]) -> ast.Quantity:
        return quantity_node(str(c[0]), _span(c[0]))

    def number(self, c: list[Token]) -> ast.Number:
        return number_node(str(c[0]), _span(c[0]))

    def string(self, c: list[Token]) -> ast.String:
        return ast.String(unescape(c[0]), _span(c[0]))

    def true(self, c: list[Token]) -> ast.Bool:
        return ast.Bool(True, _span(c[0]))

    def false(self, c: list[Token]) -> ast.Bool:
        return ast.Bool(False, _span(c[0]))

    def symbol(self, c: list[Token]) -> ast.Symbol:
        return ast.Symbol(_name(c[0]), _span(c[0]))

    def call(self, c: list[Any]) -> ast.Call:
        name = ast.Ident(_name(c[0]), _span(c[0]))
        args = tuple(x for x in c[2:-1] if isinstance(x, ast.Arg))
        return ast.Call(name, args, _node_span(c[0], c[-1]))

    def named_arg(self, c: list[Any]) -> ast.Arg:
        name = ast.Ident(_name(c[0]), _span(c[0]))
        return ast.Arg(name, c[2], _node_span(c[0], c[2]))

    def positional_arg(self, c: list[Any]) -> ast.Arg:
        return ast.Arg(None, c[0], c[0].span)

    def list(self, c: list[Any]) -> ast.ListValue:
        items = tuple(x for x in c[1:-1] if x is not None and not isinstance(x, str))
        return ast.ListValue(items, _node_span(c[0], c[-1]))
