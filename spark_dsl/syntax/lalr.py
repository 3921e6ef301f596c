"""Lark's LALR parse table driven by one tight loop over the SparkLexer's scan.

Lark parses a token through a generator, a method call, an assertion that compares rule objects
in Python and a lookup of each reduction's callback by rule hash; with the scan and the tokens
Lark builds, that was about two thirds of a check's parse. This driver reads the same table, calls
the same callbacks (the inline AstBuilder, through Lark's parse-tree builder) and scans with the
SparkLexer's own pattern, so a text it accepts gives the very same statements.

It knows only the way through: at the first thing that is not plain sailing (a character no
terminal matches, a token the table does not expect, nesting too deep, too many tokens, or any
exception from a callback), it gives up and the caller parses the text again with Lark, whose errors, and their
order, the diagnostics are made from (spark_dsl/syntax/parser.py).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from lark.lexer import Token
from lark.parse_tree_builder import ExpandSingleChild
from lark.parsers.lalr_analysis import Shift
from lark.parsers.lalr_parser_state import ParseConf

from spark_dsl.span import Span
from spark_dsl.syntax import ast
from spark_dsl.syntax.lexer import _NESTING, MAX_NESTING, MAX_TOKENS, SparkLexer

if TYPE_CHECKING:
    from lark import Lark

# A reduction: how many values it pops, its callback (None: the one value stays) and the
# nonterminal it leaves.
_Reduce = tuple[int, Callable[[list[Any]], Any] | None, str]


class GiveUp(Exception):
    """The text is not plain sailing: parse it with Lark for its exact error."""


class FastParser:
    """Parses texts with the table and callbacks of one Lark LALR parser."""

    def __init__(self, lark: Lark) -> None:
        frontend = lark.parser
        lexer = frontend.lexer
        assert isinstance(lexer, SparkLexer), "the driver scans with SparkLexer's pattern"
        inner = frontend.parser.parser  # lark.parsers.lalr_parser._Parser
        (start,) = lark.options.start
        conf = ParseConf(inner.parse_table, inner.callbacks, start)
        if any(isinstance(key, str) for key in conf.callbacks):
            raise ValueError("terminal callbacks are not supported")  # AstBuilder has none
        # Each state's actions with the rule objects resolved once: a shift is the next state
        # (an int), a reduction a tuple.
        self.states: dict[int, dict[str, int | _Reduce]] = {}
        for state, actions in conf.states.items():
            table: dict[str, int | _Reduce] = {}
            for symbol, (action, arg) in actions.items():
                if action is Shift:
                    table[symbol] = arg
                else:
                    callback = conf.callbacks[arg]
                    size = len(arg.expansion)
                    # `?rule` with one symbol: Lark hands the one child on unchanged.
                    identity = size == 1 and isinstance(callback, ExpandSingleChild)
                    table[symbol] = (size, None if identity else callback, arg.origin.name)
            self.states[state] = table
        self.start_state: int = conf.start_state
        self.end_state: int = conf.end_state
        self.pattern = lexer.pattern
        self.ignore = lexer.ignore
        self.keywords = lexer.keywords
        # Only comments are ignored and kept; any other callback would need Lark's tokens.
        if set(lexer.callbacks) - {"COMMENT"}:
            raise ValueError("lexer callbacks other than COMMENT are not supported")

    def parse(self, text: str, comments: list[ast.Comment]) -> Any:
        """The start rule's value; comments appended to `comments`. Raises GiveUp."""
        try:
            return self._parse(text, comments)
        except GiveUp:
            raise
        except Exception as err:  # a callback's SyntaxProblem, say: Lark reports it in its order
            raise GiveUp from err

    def _parse(self, text: str, comments: list[ast.Comment]) -> Any:
        states, match, ignore, keywords = self.states, self.pattern.match, self.ignore, self.keywords
        new_token = str.__new__
        state_stack = [self.start_state]
        value_stack: list[Any] = []
        depth = 0
        budget = MAX_TOKENS  # tokens and comments the file may still hold (SparkLexer counts the same)
        pos, end = 0, len(text)
        while pos < end:
            m = match(text, pos)
            if m is None:
                raise GiveUp
            kind: str = m.lastgroup  # type: ignore[assignment]  # every alternative is a named group
            stop = m.end()
            if kind in ignore:
                if kind == "COMMENT":
                    budget -= 1
                    if budget < 0:
                        raise GiveUp
                    comments.append(ast.Comment(m.group(), Span(pos, stop)))
                pos = stop
                continue
            budget -= 1
            if budget < 0:
                raise GiveUp
            value = m.group()
            if kind in _NESTING:
                depth += _NESTING[kind]
                if depth > MAX_NESTING:
                    raise GiveUp
            if kind in keywords:
                kind = keywords[kind].get(value, kind)
            # A Lark token with what the AstBuilder reads (type, value, start and end).
            token = new_token(Token, value)
            token.type = kind
            token.value = value
            token.start_pos = pos
            token.end_pos = stop
            pos = stop
            while True:
                action = states[state_stack[-1]].get(kind)
                if action is None:
                    raise GiveUp
                if type(action) is int:
                    state_stack.append(action)
                    value_stack.append(token)
                    break
                # A reduction, inline (it runs more often than a shift).
                size, callback, origin = action  # type: ignore[misc]
                if callback is None:
                    state_stack.pop()
                else:
                    if size:
                        children = value_stack[-size:]
                        del state_stack[-size:]
                        del value_stack[-size:]
                    else:
                        children = []
                    value_stack.append(callback(children))
                state_stack.append(states[state_stack[-1]][origin])  # type: ignore[arg-type]
        end_state = self.end_state
        while True:
            action = states[state_stack[-1]].get("$END")
            if action is None or isinstance(action, int):
                raise GiveUp
            size, callback, origin = action
            if callback is None:
                state_stack.pop()
            else:
                if size:
                    children = value_stack[-size:]
                    del state_stack[-size:]
                    del value_stack[-size:]
                else:
                    children = []
                value_stack.append(callback(children))
            state_stack.append(states[state_stack[-1]][origin])  # type: ignore[arg-type]
            if state_stack[-1] == end_state:
                return value_stack[-1]
