"""The run-time placeholders of a launch (CLI.md): which ones a text holds, and how to fill them."""

from __future__ import annotations

from collections.abc import Callable, Iterator

# The names are the plan's (plan/template.py), re-exported for the targets that fill them.
from spark_dsl.patterns import lazy_regex
from spark_dsl.plan.template import DECODE as DECODE
from spark_dsl.plan.template import DP_START_RANK as DP_START_RANK
from spark_dsl.plan.template import HEAD as HEAD
from spark_dsl.plan.template import NODE_ADDRESS as NODE_ADDRESS
from spark_dsl.plan.template import NODE_INTERFACE as NODE_INTERFACE
from spark_dsl.plan.template import NODE_RANK as NODE_RANK
from spark_dsl.plan.template import POOL_ADDRESS as POOL_ADDRESS
from spark_dsl.plan.template import PREFILL as PREFILL
from spark_dsl.plan.template import RANKS as RANKS
from spark_dsl.plan.template import Template

NAMES = (HEAD, PREFILL, DECODE, NODE_ADDRESS, NODE_INTERFACE, NODE_RANK, DP_START_RANK)

_PATTERN = lazy_regex(r"\$\{(" + "|".join(NAMES) + r")\}")


def split(text: str) -> Iterator[tuple[str, str | None]]:
    """(literal text, placeholder name or None) pairs, in order; a plain str is all literal."""
    if not isinstance(text, Template):
        yield text, None
        return
    pos = 0
    for m in _PATTERN.finditer(text):
        yield text[pos : m.start()], m.group(1)
        pos = m.end()
    yield text[pos:], None


def used(texts: Iterator[str] | list[str] | tuple[str, ...]) -> list[str]:
    """The placeholders that appear in any of the texts, in CLI.md's order."""
    # As `split` finds them, without a generator per text (a build asks of every argument).
    found = {m.group(1) for text in texts if isinstance(text, Template) for m in _PATTERN.finditer(text)}
    return [name for name in NAMES if name in found]


def fill(text: str, value: Callable[[str], str], literal: Callable[[str], str] = str) -> str:
    """`text` with each placeholder as `value(name)` and each literal part as `literal(part)`."""
    if not isinstance(text, Template):  # most of a launch's words: no generator for them
        return literal(text)
    return "".join(literal(part) + (value(name) if name else "") for part, name in split(text))
