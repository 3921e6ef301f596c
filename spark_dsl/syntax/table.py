"""The parse table Lark builds from grammar/spark.lark, shipped as data so a clean parse imports no Lark.

Importing Lark and loading its cached parser was about a third of a cold `spark check` of one
spec. Lark builds the table here, once, when the grammar changes:

    python -m spark_dsl.syntax.table > spark_dsl/syntax/parse_table.json

tests/test_parser_driver.py fails when the shipped table is not what the grammar gives, and
compares the driver that reads it (spark_dsl.syntax.lalr) with Lark's own parser. The table holds:

- `scan`: SparkLexer's pattern (one alternation whose named groups are the terminals), the
  names it skips (`ignore`) and the keywords it retypes, as spark_dsl.syntax.lexer scans; and
  `skip`, the skipped terminals no callback receives (whitespace), which the driver consumes in
  front of each token rather than as a token of their own;
- `states`: per state, the action on each symbol: a state number to shift to (or to go to after
  a reduction), or `-1 - n` to reduce by rule `n`; numbered from the start state in the order a
  breadth-first walk over sorted symbols meets them, so the file depends on the grammar only;
- `rules`: per rule, what Lark's parse-tree builder does with the values it pops: `steps`, in
  order (`filter`: which children to keep, which helper lists to splice in and where to put
  `None` placeholders; `expand1`: a `?rule` hands a lone child on), then the AstBuilder method
  (`method`), or none for Lark's helper lists (`__body_star_2`), which a parent splices in.
"""

from __future__ import annotations

import sys
from functools import cache
from pathlib import Path
from typing import Any

import msgspec

TABLE_FILE = Path(__file__).with_name("parse_table.json")


@cache
def load() -> dict[str, Any]:
    """The shipped table."""
    # msgspec's decoder, as for the catalog: json (and its scanner) stays off the cold path.
    table: dict[str, Any] = msgspec.json.decode(TABLE_FILE.read_bytes())
    return table


def generate() -> dict[str, Any]:
    """The table of grammar/spark.lark as Lark builds it now (no cache)."""
    from lark import Lark
    from lark.parsers.lalr_analysis import Shift
    from lark.parsers.lalr_parser_state import ParseConf

    from spark_dsl.syntax.builder import AstBuilder
    from spark_dsl.syntax.grammar import grammar_path
    from spark_dsl.syntax.lexer import SparkLexer

    lark = Lark(
        grammar_path().read_text(encoding="utf-8"),
        parser="lalr",
        lexer=SparkLexer,
        transformer=AstBuilder(),
        maybe_placeholders=True,
        lexer_callbacks={"COMMENT": lambda tok: tok},
    )
    lexer = lark.parser.lexer
    assert isinstance(lexer, SparkLexer)
    inner = lark.parser.parser.parser
    (start,) = lark.options.start
    conf = ParseConf(inner.parse_table, inner.callbacks, start)

    number, order, rules = _numbered(conf)
    states = []
    for state in order:
        actions = {}
        for symbol, (action, arg) in sorted(conf.states[state].items()):
            actions[symbol] = number[arg] if action is Shift else -1 - rules[arg]
        states.append(actions)
    rule_specs = []
    for rule in sorted(rules, key=rules.__getitem__):
        wrappers, method = _callback_steps(conf.callbacks[rule])
        rule_specs.append(
            {"origin": rule.origin.name, "size": len(rule.expansion), "steps": wrappers, "method": method}
        )
    return {
        "scan": {
            "pattern": lexer.pattern.pattern,
            "ignore": sorted(lexer.ignore),
            "keywords": {owner: dict(sorted(words.items())) for owner, words in sorted(lexer.keywords.items())},
            "skip": "|".join(
                t.pattern.to_regexp()
                for t in sorted(lark.terminals, key=lambda t: t.name)
                if t.name in lexer.ignore and t.name not in lexer.callbacks
            ),
        },
        "start": 0,
        "end": number[conf.end_state],
        "states": states,
        "rules": rule_specs,
    }


def render(table: dict[str, Any]) -> str:
    import json  # only to write the file; a parse reads it with msgspec

    return json.dumps(table, indent=1, sort_keys=False, ensure_ascii=True) + "\n"


def _numbered(conf: Any) -> tuple[dict[int, int], list[int], dict[Any, int]]:
    """States and rules numbered in the order a walk from the start state meets them: (Lark's
    state -> number, Lark's states in that order, rule -> number)."""
    from lark.parsers.lalr_analysis import Shift

    number: dict[int, int] = {conf.start_state: 0}
    order = [conf.start_state]
    rules: dict[Any, int] = {}
    for state in order:
        for symbol in sorted(conf.states[state]):
            action, arg = conf.states[state][symbol]
            if action is Shift:
                if arg not in number:
                    number[arg] = len(order)
                    order.append(arg)
            elif arg not in rules:
                rules[arg] = len(rules)
    assert len(order) == len(conf.states), "every state is reachable from the start"
    return number, order, rules


def _callback_steps(callback: Any) -> tuple[list[Any], str | None]:
    """The wrappers of Lark's callback, outermost first, and the AstBuilder method at the end."""
    from lark.parse_tree_builder import ChildFilterLALR, ChildFilterLALR_NoPlaceholders, ExpandSingleChild

    from spark_dsl.syntax.builder import AstBuilder

    out: list[Any] = []
    while True:
        if isinstance(callback, ExpandSingleChild):
            out.append(["expand1"])
        elif isinstance(callback, ChildFilterLALR_NoPlaceholders):
            out.append(["filter", [[i, expand, 0] for i, expand in callback.to_include], 0])
        elif isinstance(callback, ChildFilterLALR):
            out.append(["filter", [list(t) for t in callback.to_include], callback.append_none])
        elif getattr(callback, "__self__", None) is not None:
            name = callback.__name__
            assert getattr(AstBuilder, name, None) is not None, name
            return out, name
        elif getattr(callback, "func", None) is not None:  # Lark's default: a helper list
            return out, None
        else:
            raise ValueError(f"a callback the driver cannot replay: {callback!r}")
        callback = callback.node_builder


# At the end: the helpers above are defined by the time it runs.
if __name__ == "__main__":
    sys.stdout.write(render(generate()))
