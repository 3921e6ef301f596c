"""A Lark lexer that scans with one compiled alternation of the grammar's own terminals.

Lark's basic lexer matches and then re-dispatches every token through several
Python calls; scanning with a single pattern whose groups are the grammar's
terminals does the same job in about half the time, which is most of what an
editor keystroke costs. The terminals, their order and the keyword rule come
from the grammar itself, so `grammar/spark.lark` stays the one source of truth.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from typing import Any

from lark.exceptions import UnexpectedCharacters
from lark.lexer import Lexer, LexerState, PatternStr, Token

from spark_dsl.span import Span
from spark_dsl.syntax.builder import SyntaxProblem
from spark_dsl.syntax.scan import MAX_NESTING, MAX_TOKENS, NESTING

# The limits live in spark_dsl.syntax.scan, which the fast driver shares without importing Lark.
_NESTING = NESTING


class SparkLexer(Lexer):
    """Scans `.spark` text into the grammar's terminals; comments go to the lexer callbacks."""

    # Lark's current lexer interface: lex(lexer_state, parser_state) over a TextSlice.
    __future_interface__ = 2

    def __init__(self, lexer_conf: Any) -> None:
        terminals = list(lexer_conf.terminals)
        regexps = [t for t in terminals if not isinstance(t.pattern, PatternStr)]
        # A string terminal that a regexp terminal also matches whole (`import` as a NAME)
        # is a keyword: scanned as the regexp, then retyped, as Lark's own lexer does.
        self.keywords: dict[str, dict[str, str]] = {}
        scanned = []
        for term in terminals:
            if isinstance(term.pattern, PatternStr):
                owner = next((r for r in regexps if re.fullmatch(r.pattern.to_regexp(), term.pattern.value)), None)
                if owner is not None:
                    self.keywords.setdefault(owner.name, {})[term.pattern.value] = term.name
                    continue
            scanned.append(term)
        # Lark's own precedence: priority, then the longest possible match, then the longest pattern.
        scanned.sort(key=lambda t: (-t.priority, -t.pattern.max_width, -len(t.pattern.value), t.name))
        self.pattern = re.compile("|".join(f"(?P<{t.name}>{t.pattern.to_regexp()})" for t in scanned))
        self.ignore = frozenset(lexer_conf.ignore)
        self.callbacks: dict[str, Callable[[Token], Token]] = dict(lexer_conf.callbacks)

    def lex(self, lexer_state: LexerState, parser_state: Any) -> Iterator[Token]:
        text = lexer_state.text.text
        end = lexer_state.text.end
        pos = lexer_state.line_ctr.char_pos
        match = self.pattern.match
        ignore, keywords, callbacks = self.ignore, self.keywords, self.callbacks
        depth = 0
        count = 0
        while pos < end:
            m = match(text, pos)
            if m is None:
                line = text.count("\n", 0, pos) + 1
                column = pos - text.rfind("\n", 0, pos)
                # Lark's exception classes carry no annotations; the call is the documented one.
                raise UnexpectedCharacters(text, pos, line, column, state=parser_state)  # type: ignore[no-untyped-call]
            kind = m.lastgroup
            assert kind is not None
            stop = m.end()
            if kind not in ignore or kind in callbacks:  # whitespace is not counted; comments are
                count += 1
                if count > MAX_TOKENS:
                    raise _too_many(pos, stop)
            if kind in ignore:
                if kind in callbacks:
                    callbacks[kind](Token(kind, m.group(), pos, end_pos=stop))
                pos = stop
                continue
            value = m.group()
            if kind in _NESTING:
                depth += _NESTING[kind]
                if depth > MAX_NESTING:
                    raise _too_deep(pos, stop)
            if kind in keywords:
                kind = keywords[kind].get(value, kind)
            token = Token(kind, value, pos, end_pos=stop)
            pos = stop
            lexer_state.line_ctr.char_pos = pos
            yield callbacks[kind](token) if kind in callbacks else token


def _too_deep(start: int, end: int) -> SyntaxProblem:
    return SyntaxProblem(
        "SPK008",
        f"`{{`, `[` and `(` nested more than {MAX_NESTING} levels deep",
        Span(start, end),
        f"flatten the structure: blocks, lists and calls nest at most {MAX_NESTING} levels deep",
    )


def _too_many(start: int, end: int) -> SyntaxProblem:
    return SyntaxProblem(
        "SPK009",
        f"the file holds more than {MAX_TOKENS:,} tokens (names, numbers, strings, punctuation, comments)",
        Span(start, end),
        "split the file into files that import each other",
    )


def tokens(text: str, lexer: Lexer) -> Iterator[Token]:
    """Every token of `text` up to the first lexical error or nesting too deep (for describing syntax errors).

    `lexer` is the Lark parser's own (the parser passes it in, so this module need not import it)."""
    state = LexerState(_text_slice(text))
    try:
        yield from lexer.lex(state, None)
    except (UnexpectedCharacters, SyntaxProblem):
        return


def _text_slice(text: str) -> Any:
    from lark.utils import TextSlice

    return TextSlice.cast_from(text)
