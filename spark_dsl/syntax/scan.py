"""What the scanners share, without Lark: the limits SparkLexer (Lark's parser) and the fast
parsers (spark_dsl.syntax.descent and spark_dsl.syntax.lalr) enforce alike, the offsets their
spans share, and how a fast parser gives up."""

from __future__ import annotations

# `{`, `[` and `(` nest at most this deep. Real specs use four or five levels; every later
# stage (the checker, the formatter, the language server) walks the tree recursively, so
# the lexer refuses deeper text before a tree exists that could exhaust Python's stack.
MAX_NESTING = 32
NESTING = {"LBRACE": 1, "LSQB": 1, "LPAR": 1, "RBRACE": -1, "RSQB": -1, "RPAR": -1}
# A file holds at most this many tokens (names, numbers, strings, punctuation, comments). Real
# specs hold hundreds; the largest test fixture (a 1,200-profile `extends` chain) about 7,000.
# Every later stage costs time and memory per token, and per diagnostic, which a dense file can
# have one of per three tokens: a 1 MiB file of `a=1` lines took over 10 s and 1.5 GB (10 MiB,
# the file size limit, ten times that). Counted as the file is read, before the parser builds
# anything past the limit.
MAX_TOKENS = 100_000


# Offsets as shared int objects: a run keeps every token's offsets in its spans, and an offset
# past 256 is an object of its own (28 bytes) in each file, about 30 of them per spec (a tenth of
# a 10,000-spec check's memory beside the tree). A file shorter than _SHARED_OFFSETS takes its
# offsets from one table; a longer one keeps its own. The table grows to the longest file parsed,
# not to its full size at once: 16,384 ints were 1 ms of a cold check of one short spec.
_SHARED_OFFSETS = 1 << 14
_OFFSETS: list[int] = []


def shared_offsets(end: int) -> list[int] | None:
    """The shared table, long enough for offsets 0 to `end`; None for a file too long to share."""
    if end >= _SHARED_OFFSETS:
        return None
    if len(_OFFSETS) <= end:  # under the parser's lock (spark_dsl.syntax.parser), as every parse
        _OFFSETS.extend(range(len(_OFFSETS), end + 1))
    return _OFFSETS


class GiveUp(Exception):
    """The text is not plain sailing: parse it with Lark for its exact error."""
