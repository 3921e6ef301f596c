"""Parses with the shipped LALR table (spark_dsl.syntax.table) in one tight loop, without Lark.

Lark parses a token through a generator, a method call, an assertion that compares rule objects
in Python and a lookup of each reduction's callback by rule hash, and a cold start imported Lark
and unpickled its parser before the first token. This driver reads the table Lark built from the
grammar (shipped as data), scans with SparkLexer's pattern and replays what Lark's parse-tree
builder does with each reduction (which children to keep, where an optional part leaves None, a
`?rule` handing on its one child) before calling the same AstBuilder method, so a text it accepts
gives the very same statements as Lark's parser.

It knows only the way through: at the first thing that is not plain sailing (a character no
terminal matches, a token the table does not expect, nesting too deep, too many tokens, or any
exception from a callback), it gives up and the caller parses the text again with Lark, whose
errors, and their order, the diagnostics are made from (spark_dsl/syntax/parser.py).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from spark_dsl.span import Span
from spark_dsl.syntax import ast
from spark_dsl.syntax.scan import MAX_NESTING, MAX_TOKENS, NESTING, GiveUp, shared_offsets

# A reduction: how many values it pops, what makes its value of them (None: the one value
# stays) and the nonterminal it leaves.
_Reduce = tuple[int, Callable[[list[Any]], Any] | None, str]


class Tok(str):
    """A token: its text, its terminal and where it is (what the AstBuilder reads of Lark's)."""

    __slots__ = ("end_pos", "start_pos", "type")
    type: str
    start_pos: int
    end_pos: int


class _Helper:
    """One of Lark's helper lists (`__body_star_2`: the entries of a body), which the rule that
    uses it splices in, as Lark splices the children of its helper trees."""

    __slots__ = ("children",)

    def __init__(self, children: list[Any]) -> None:
        self.children = children


def _filter(include: list[list[Any]], append_none: int, then: Callable[[list[Any]], Any]) -> Callable[[list[Any]], Any]:
    """Lark's child filter: keep the listed children, splice in helper lists, add placeholders."""

    def keep(children: list[Any]) -> Any:
        kept: list[Any] = []
        for i, splice, add_none in include:
            if add_none:
                kept += [None] * add_none
            if splice:
                if kept:
                    kept += children[i].children
                else:  # as Lark: take the helper's own list, so a long body is built in linear time
                    kept = children[i].children
            else:
                kept.append(children[i])
        if append_none:
            kept += [None] * append_none
        return then(kept)

    return keep


def _expand1(then: Callable[[list[Any]], Any]) -> Callable[[list[Any]], Any]:
    """Lark's `?rule`: a lone child is handed on, several make the rule's value."""

    def expand(children: list[Any]) -> Any:
        return children[0] if len(children) == 1 else then(children)

    return expand


def _reduction(spec: dict[str, Any], builder: object) -> Callable[[list[Any]], Any] | None:
    steps = spec["steps"]
    if steps == [["expand1"]] and spec["size"] == 1:
        return None  # the one child stays on the stack as it is
    make: Callable[[list[Any]], Any] = getattr(builder, spec["method"]) if spec["method"] else _Helper
    for step in reversed(steps):
        if step[0] == "expand1":
            make = _expand1(make)
        elif step[0] == "filter":
            make = _filter(step[1], step[2], make)
        else:
            raise ValueError(f"unknown step {step[0]!r} in the parse table")
    return make


class FastParser:
    """Parses texts with the shipped table, building nodes with `builder` (an AstBuilder)."""

    def __init__(self, table: dict[str, Any], builder: object) -> None:
        rules: list[_Reduce] = [(spec["size"], _reduction(spec, builder), spec["origin"]) for spec in table["rules"]]
        # Each state is its action table, and a shift or a goto names the next state's table
        # itself rather than its number: the driver's stack holds the tables, so a step is one
        # lookup in the table on top, never a list index first.
        self.states: list[dict[str, Any]] = [{} for _ in table["states"]]
        for actions, codes in zip(self.states, table["states"], strict=True):
            for symbol, code in codes.items():
                actions[symbol] = self.states[code] if code >= 0 else rules[-1 - code]
        self.start_state: dict[str, Any] = self.states[table["start"]]
        self.end_state: dict[str, Any] = self.states[table["end"]]
        scan = table["scan"]
        # Whitespace is skipped in front of each token by the same match: half of what a spec's
        # scan meets is whitespace, and a loop turn per stretch of it cost a tenth of a parse. The
        # prefix gives the whitespace back when no token follows it (the end of the text, or a
        # character no terminal matches), so the alternation still sees it as before. No terminal
        # starts with whitespace, so the prefix takes nothing a token would have.
        skip = scan.get("skip")
        self.pattern = re.compile(f"(?:{skip})?(?:{scan['pattern']})" if skip else scan["pattern"])
        keywords: dict[str, dict[str, str]] = scan["keywords"]
        # By the number of the terminal's group in the pattern (the match's `lastindex`): its name,
        # and whether it needs more than a shift (skipped, nesting, or a keyword's terminal).
        self.terminals: list[tuple[str, bool]] = [("", True)] * (self.pattern.groups + 1)
        for name, index in self.pattern.groupindex.items():
            plain = name not in scan["ignore"] and name not in NESTING and name not in keywords
            self.terminals[index] = (name, not plain)
        self.ignore = frozenset(scan["ignore"])
        self.keywords = keywords

    def parse(self, text: str, comments: list[ast.Comment]) -> Any:
        """The start rule's value; comments appended to `comments`. Raises GiveUp."""
        try:
            return self._parse(text, comments)
        except GiveUp:
            raise
        except Exception as err:  # a callback's SyntaxProblem, say: Lark reports it in its order
            raise GiveUp from err

    # Long: the scanner and the LALR driver in one loop, with the table and the stacks in locals,
    # because it runs once per token of every spec: a function call per token or per reduction
    # would be paid on every check (issue 14's speed goals).
    def _parse(self, text: str, comments: list[ast.Comment]) -> Any:
        match, terminals, ignore, keywords = self.pattern.match, self.terminals, self.ignore, self.keywords
        new_token = str.__new__
        stack: list[dict[str, Any]] = [self.start_state]  # the action tables of the states
        value_stack: list[Any] = []
        depth = 0
        budget = MAX_TOKENS  # tokens and comments the file may still hold (SparkLexer counts the same)
        pos, end = 0, len(text)
        offsets = shared_offsets(end)
        while pos < end:
            m = match(text, pos)
            if m is None:
                raise GiveUp
            index: int = m.lastindex  # type: ignore[assignment]  # every alternative is a group
            kind, special = terminals[index]
            start, stop = m.span(index)  # the token, after any whitespace the prefix skipped
            if offsets is not None:
                start, stop = offsets[start], offsets[stop]
            pos = stop
            value = text[start:stop]
            if special:
                if kind in ignore:
                    if kind == "COMMENT":
                        budget -= 1
                        if budget < 0:
                            raise GiveUp
                        comments.append(ast.Comment(value, Span(start, stop)))
                    continue
                if kind in NESTING:
                    depth += NESTING[kind]
                    if depth > MAX_NESTING:
                        raise GiveUp
                if kind in keywords:
                    kind = keywords[kind].get(value, kind)
            budget -= 1
            if budget < 0:
                raise GiveUp
            token = new_token(Tok, value)
            token.type = kind
            token.start_pos = start
            token.end_pos = stop
            while True:
                action = stack[-1].get(kind)
                if action is None:
                    raise GiveUp
                if type(action) is dict:
                    stack.append(action)
                    value_stack.append(token)
                    break
                # A reduction, inline (it runs more often than a shift).
                size, make, origin = action
                if make is None:
                    stack.pop()
                else:
                    if size:
                        children = value_stack[-size:]
                        del stack[-size:]
                        del value_stack[-size:]
                    else:
                        children = []
                    value_stack.append(make(children))
                stack.append(stack[-1][origin])
        end_state = self.end_state
        # The end of input: the same reduction as in the loop above, which keeps it inline
        # rather than calling a helper because it runs once per reduction of every parse.
        while True:
            action = stack[-1].get("$END")
            if action is None or type(action) is dict:
                raise GiveUp
            size, make, origin = action
            if make is None:
                stack.pop()
            else:
                if size:
                    children = value_stack[-size:]
                    del stack[-size:]
                    del value_stack[-size:]
                else:
                    children = []
                value_stack.append(make(children))
            stack.append(stack[-1][origin])
            if stack[-1] is end_state:
                return value_stack[-1]
