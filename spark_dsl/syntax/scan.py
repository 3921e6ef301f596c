"""The limits both scanners enforce, without Lark: SparkLexer (Lark's parser) and the fast driver
(spark_dsl.syntax.lalr) count nesting and tokens alike."""

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
