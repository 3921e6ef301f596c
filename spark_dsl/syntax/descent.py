"""Parses `.spark` text by recursive descent over its tokens: the grammar, written out by hand.

The LALR driver (spark_dsl.syntax.lalr) replays Lark's table one action at a time: about eighty
reductions for a spec of fifty tokens, each a lookup, a list of children built and filtered, and a
callback; its parse was 45% of a check of 1,000 specs. This parser scans the grammar's terminals
with one `findall` and builds each node where it is recognised, with the AstBuilder's own
conversions (strings, numbers, quantities): 475 M instructions for the 1,000 specs of
benchmarks/corpus.py against the driver's 999 M.

It knows only the way through, as the driver does: at the first token the grammar does not allow
there, or any exception while building a node, it gives up (GiveUp) and the caller parses the text
with Lark, whose errors the diagnostics are made from; a text too long for it (TooLong) goes to
the driver. A text it accepts gives the very statements Lark's parser gives
(tests/test_parser_driver.py compares them).

grammar/spark.lark stays the definition: a rule changed there and not here makes this parser give
up on texts that use it (slower, never wrong), and the comparison tests fail.
"""

from __future__ import annotations

import re
import sys
from typing import Any

from spark_dsl.span import Span
from spark_dsl.syntax import ast
from spark_dsl.syntax.builder import number_node, quantity_node, unescape_text
from spark_dsl.syntax.scan import MAX_NESTING, MAX_TOKENS, NESTING, GiveUp, shared_offsets

_END = "$END"
_NAMES = ("NAME", "MODEL")


# The grammar's terminals (grammar/spark.lark) as one pattern: whitespace, then a token, or any
# other character (`bad`, which no terminal starts: the text is not plain sailing). `findall`
# hands them over without a match object each, and the terminal is told by its first character
# (a QUANTITY ends in a letter, a NUMBER does not): the driver's pattern, one named group per
# terminal read back from each match, was most of its scan. tests/test_parser_driver.py holds the
# two scanners to the same tokens.
_TOKEN = re.compile(
    r"([ \t\r\n\f\ufeff]*+)"
    r"(?:((?:[0-9][0-9_]*+(?:\.[0-9][0-9_]*+)?+[A-Za-z]++)++"  # QUANTITY (before NUMBER, as its priority)
    r"|[0-9][0-9_]*(?:\.[0-9][0-9_]*)?"  # NUMBER
    r"|[A-Za-z][A-Za-z0-9_-]*"  # NAME, and the keywords
    r'|"[^"\\\n]*+(?:\\.[^"\\\n]*+)*+"'  # STRING
    r"|#[^\n]*"  # COMMENT
    r"|[,={}()\[\]+])"
    r"|(.))",
    re.DOTALL,
)
_BY_FIRST = {
    **dict.fromkeys("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz", "NAME"),
    **dict.fromkeys("0123456789", "NUMBER"),
    '"': "STRING",
    "#": "COMMENT",
    ",": "COMMA",
    "=": "EQUAL",
    "+": "PLUS",
    "{": "LBRACE",
    "}": "RBRACE",
    "(": "LPAR",
    ")": "RPAR",
    "[": "LSQB",
    "]": "RSQB",
}
# The grammar's keywords, which a NAME token's text retypes (as the table's scanner retypes them;
# tests/test_parser_driver.py holds the two to the same list). Written here, not read from the
# table: a clean check then decodes no parse table and builds no driver.
KEYWORDS = {
    "deployment": "DEPLOYMENT",
    "extends": "EXTENDS",
    "false": "FALSE",
    "import": "IMPORT",
    "model": "MODEL",
    "profile": "PROFILE",
    "true": "TRUE",
}
# A file this long may hold more than MAX_TOKENS tokens; `findall` would list them all before
# any count. The driver reads it, counting as it goes (TooLong).
_LONGEST = 2 * MAX_TOKENS


class TooLong(GiveUp):
    """The text is longer than this parser reads: the LALR driver parses it."""


def parse(text: str, comments: list[ast.Comment]) -> list[Any]:
    """The file's statements; comments appended to `comments`. Raises GiveUp (TooLong for a text
    longer than this parser reads)."""
    try:
        kinds, starts, ends = _scan(text, comments)
        return _Descent(text, kinds, starts, ends).statements()
    except GiveUp:
        raise
    except Exception as err:  # a bad escape, a malformed number: Lark reports it in its order
        raise GiveUp from err


def _scan(text: str, comments: list[ast.Comment]) -> tuple[list[str], list[int], list[int]]:
    """The tokens' terminals, starts and ends, closed by end markers; the driver's limits."""
    end = len(text)
    if end > _LONGEST:
        raise TooLong
    found = _TOKEN.findall(text)
    if len(found) > MAX_TOKENS:  # tokens and comments, as SparkLexer counts
        raise GiveUp
    keywords, by_first, nesting = KEYWORDS, _BY_FIRST, NESTING
    offsets = shared_offsets(end)
    kinds: list[str] = []
    starts: list[int] = []
    ends: list[int] = []
    depth = 0
    pos = 0
    for space, token, bad in found:
        if bad:
            raise GiveUp
        pos += len(space)
        start = pos
        pos += len(token)
        kind = by_first[token[0]]
        if kind == "NAME":
            kind = keywords.get(token, kind)
        elif kind == "NUMBER":
            if token[-1].isalpha():
                kind = "QUANTITY"
        elif kind == "COMMENT":
            comments.append(ast.Comment(token, Span(start, pos)))
            continue
        elif kind in nesting:
            depth += nesting[kind]
            if depth > MAX_NESTING:
                raise GiveUp
        kinds.append(kind)
        if offsets is None:
            starts.append(start)
            ends.append(pos)
        else:
            starts.append(offsets[start])
            ends.append(offsets[pos])
    # Lookahead past the last token reads end markers, never past the list.
    kinds += (_END, _END, _END)
    starts += (end, end, end)
    ends += (end, end, end)
    return kinds, starts, ends


class _Descent:
    """One text's tokens and the grammar's rules over them; each rule takes the index of its
    first token and returns its node and the index after it."""

    __slots__ = ("ends", "kinds", "starts", "text")

    def __init__(self, text: str, kinds: list[str], starts: list[int], ends: list[int]) -> None:
        self.text, self.kinds, self.starts, self.ends = text, kinds, starts, ends

    def _ident(self, i: int) -> ast.Ident:
        """A name token's Ident, its text interned as the AstBuilder interns names."""
        start, end = self.starts[i], self.ends[i]
        return ast.Ident(sys.intern(self.text[start:end]), Span(start, end))

    def _label(self, i: int) -> ast.Ident:
        """A key or label: a name, or a quoted string read with its escapes."""
        if self.kinds[i] == "STRING":
            start, end = self.starts[i], self.ends[i]
            return ast.Ident(unescape_text(self.text[start:end], start), Span(start, end))
        return self._ident(i)

    # start: item*
    def statements(self) -> list[Any]:
        kinds = self.kinds
        items: list[Any] = []
        i = 0
        while True:
            kind = kinds[i]
            if kind == _END:
                return items
            if kind == "IMPORT":
                if kinds[i + 1] != "STRING":
                    raise GiveUp
                path = self._string(i + 1)
                items.append(ast.Import(path, Span(self.starts[i], path.span.end)))
                i += 2
            elif kind == "DEPLOYMENT" or kind == "PROFILE":
                item, i = self._declaration(i, ast.Deployment if kind == "DEPLOYMENT" else ast.Profile)
                items.append(item)
            elif kind == "MODEL":
                if kinds[i + 1] not in _NAMES or kinds[i + 2] != "LBRACE":
                    raise GiveUp
                body, after = self._body(i + 2)
                items.append(ast.ModelDecl(self._ident(i + 1), (), body, Span(self.starts[i], body.span.end)))
                i = after
            else:
                raise GiveUp

    # profile | deployment: KEYWORD (NAME | MODEL) extends? LBRACE body RBRACE
    def _declaration(self, i: int, make: type[ast.Profile] | type[ast.Deployment]) -> tuple[Any, int]:
        kinds = self.kinds
        if kinds[i + 1] not in _NAMES:
            raise GiveUp
        name = self._ident(i + 1)
        extends: list[ast.Ident] = []
        j = i + 2
        if kinds[j] == "EXTENDS":  # extends: EXTENDS (NAME | MODEL) (COMMA (NAME | MODEL))*
            j += 1
            while True:
                if kinds[j] not in _NAMES:
                    raise GiveUp
                extends.append(self._ident(j))
                j += 1
                if kinds[j] != "COMMA":
                    break
                j += 1
        if kinds[j] != "LBRACE":
            raise GiveUp
        body, after = self._body(j)
        return make(name, tuple(extends), body, Span(self.starts[i], body.span.end)), after

    # LBRACE body RBRACE, body: entry*, entry: attribute | block
    def _body(self, i: int) -> tuple[ast.Body, int]:
        kinds = self.kinds
        entries: list[Any] = []
        j = i + 1
        while True:
            kind = kinds[j]
            if kind == "RBRACE":
                return ast.Body(tuple(entries), Span(self.starts[i], self.ends[j])), j + 1
            after = kinds[j + 1]
            if after == "EQUAL" and (kind in _NAMES or kind == "STRING"):
                # attribute: key EQUAL value
                key = self._label(j)
                value, j = self._value(j + 2)
                entries.append(ast.Attribute(key, value, Span(key.span.start, value.span.end), kind == "STRING"))
            elif kind in _NAMES:
                # block: (NAME | MODEL) label? LBRACE body RBRACE
                label = None
                brace = j + 1
                if after in _NAMES or after == "STRING":
                    label = self._label(j + 1)
                    brace = j + 2
                if kinds[brace] != "LBRACE":
                    raise GiveUp
                body, after_body = self._body(brace)
                entries.append(ast.Block(self._ident(j), label, body, Span(self.starts[j], body.span.end)))
                j = after_body
            else:
                raise GiveUp

    # value: term | term (PLUS term)+
    def _value(self, i: int) -> tuple[Any, int]:
        term, j = self._term(i)
        if self.kinds[j] != "PLUS":
            return term, j
        terms = [term]
        while self.kinds[j] == "PLUS":
            term, j = self._term(j + 1)
            terms.append(term)
        return ast.Combination(tuple(terms), Span(terms[0].span.start, term.span.end)), j

    def _string(self, i: int) -> ast.String:
        start, end = self.starts[i], self.ends[i]
        return ast.String(unescape_text(self.text[start:end], start), Span(start, end))

    def _term(self, i: int) -> tuple[Any, int]:
        kind = self.kinds[i]
        start, end = self.starts[i], self.ends[i]
        if kind == "NAME":
            if self.kinds[i + 1] == "LPAR":
                return self._call(i)
            return ast.Symbol(sys.intern(self.text[start:end]), Span(start, end)), i + 1
        if kind == "STRING":
            return self._string(i), i + 1
        if kind == "QUANTITY":
            return quantity_node(self.text[start:end], Span(start, end)), i + 1
        if kind == "NUMBER":
            return number_node(self.text[start:end], Span(start, end)), i + 1
        if kind == "MODEL":
            return ast.Symbol(sys.intern(self.text[start:end]), Span(start, end)), i + 1
        if kind == "TRUE" or kind == "FALSE":
            return ast.Bool(kind == "TRUE", Span(start, end)), i + 1
        if kind == "LSQB":
            items, j = self._sequence(i + 1, "RSQB", self._value)
            return ast.ListValue(items, Span(start, self.ends[j])), j + 1
        raise GiveUp

    # call: NAME LPAR [arg (COMMA arg)* COMMA?] RPAR
    def _call(self, i: int) -> tuple[ast.Call, int]:
        args, j = self._sequence(i + 2, "RPAR", self._arg)
        return ast.Call(self._ident(i), args, Span(self.starts[i], self.ends[j])), j + 1

    # arg: NAME EQUAL value -> named_arg | value -> positional_arg
    def _arg(self, i: int) -> tuple[ast.Arg, int]:
        if self.kinds[i] == "NAME" and self.kinds[i + 1] == "EQUAL":
            value, j = self._value(i + 2)
            return ast.Arg(self._ident(i), value, Span(self.starts[i], value.span.end)), j
        value, j = self._value(i)
        return ast.Arg(None, value, value.span), j

    def _sequence(self, i: int, close: str, item: Any) -> tuple[tuple[Any, ...], int]:
        """`[item (COMMA item)* COMMA?] close` from `i`: the items and the index of `close`."""
        kinds = self.kinds
        items: list[Any] = []
        j = i
        while kinds[j] != close:
            node, j = item(j)
            items.append(node)
            if kinds[j] == "COMMA":
                j += 1
            elif kinds[j] != close:
                raise GiveUp
        return tuple(items), j
