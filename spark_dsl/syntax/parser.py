"""Parses `.spark` text into a Module, or into one located syntax diagnostic."""

from __future__ import annotations

import _thread
from collections import OrderedDict
from functools import cache
from typing import TYPE_CHECKING, cast

from msgspec import Struct

from spark_dsl.diagnostics import Diagnostic, Fix, Severity, replacement
from spark_dsl.span import Location, Span
from spark_dsl.syntax import ast
from spark_dsl.syntax.grammar import grammar_path

if TYPE_CHECKING:
    from lark import Lark

    from spark_dsl.syntax.lalr import FastParser


class _CommentCollector:
    """Receives COMMENT tokens from the lexer for the parse in progress."""

    def __init__(self) -> None:
        self.current: list[ast.Comment] = []

    def __call__(self, tok: object) -> None:
        from lark import Token

        assert isinstance(tok, Token)
        self.current.append(ast.Comment(str(tok), Span(tok.start_pos or 0, tok.end_pos or 0)))


_comments = _CommentCollector()
# The same lock as `threading.Lock()`, without importing threading (about 1 ms of a cold check):
# the language server parses from more than one thread.
_lock = _thread.allocate_lock()


@cache
def _parser() -> Lark:
    from lark import Lark

    from spark_dsl.syntax.builder import AstBuilder
    from spark_dsl.syntax.lexer import SparkLexer

    return Lark(
        grammar_path().read_text(encoding="utf-8"),
        parser="lalr",
        lexer=SparkLexer,
        transformer=AstBuilder(),
        maybe_placeholders=True,
        lexer_callbacks={"COMMENT": _comments},
        cache=True,
    )


@cache
def _fast() -> FastParser:
    from spark_dsl.syntax import table
    from spark_dsl.syntax.builder import AstBuilder
    from spark_dsl.syntax.lalr import FastParser

    return FastParser(table.load(), AstBuilder())


class ParseResult(Struct, frozen=True):
    module: ast.Module | None
    diagnostic: Diagnostic | None


class _KeptParses:
    """The latest parse of each file, by its name, with the text it was made of."""

    def __init__(self, files: int) -> None:
        self.files = files
        self.latest: OrderedDict[str, tuple[str, ParseResult]] = OrderedDict()

    def get(self, file: str, text: str) -> ParseResult | None:
        kept = self.latest.get(file)
        if kept is None or kept[0] != text:
            return None
        self.latest.move_to_end(file)
        return kept[1]

    def put(self, file: str, text: str, result: ParseResult) -> None:
        self.latest[file] = (text, result)
        self.latest.move_to_end(file)
        while len(self.latest) > self.files:
            self.latest.popitem(last=False)


_kept: _KeptParses | None = None


def keep_parses(files: int) -> None:
    """From now on, keep the latest parse of up to `files` files and hand it out again while the
    text is the same: for a process that checks the same files over and over (the language
    server reads every import of a document again at each edit). One parse per file is kept,
    so an edited document's older versions are let go. A module is immutable, so one parse can
    serve every check that reads that text."""
    global _kept
    _kept = _KeptParses(files)


def parse(text: str, file: str) -> ParseResult:
    """Parse one file's text; a syntax error yields a diagnostic instead of a module.

    The recursive descent (spark_dsl.syntax.descent) parses what it can without importing Lark,
    and the LALR driver (spark_dsl.syntax.lalr, reading the shipped table) a file too long for it;
    a text either gives up on is parsed again by Lark, whose errors the diagnostics describe.
    """
    kept = _kept
    if kept is None:
        return _parse(text, file)
    with _lock:
        found = kept.get(file, text)
    if found is not None:
        return found
    result = _parse(text, file)
    with _lock:
        kept.put(file, text, result)
    return result


def _parse(text: str, file: str) -> ParseResult:
    from spark_dsl.syntax import descent
    from spark_dsl.syntax.scan import GiveUp

    with _lock:
        found: list[ast.Comment] = []
        try:
            try:
                statements = descent.parse(text, found)
            except descent.TooLong:
                found.clear()
                statements = _fast().parse(text, found)
        except GiveUp:
            pass
        else:
            module = ast.Module(tuple(cast("list[ast.Statement]", statements)), tuple(found), Span(0, len(text)))
            return ParseResult(module, None)
    return _parse_with_lark(text, file)


def _parse_with_lark(text: str, file: str) -> ParseResult:
    """Lark's own parse, for a text the fast driver gives up on: its errors make the diagnostics."""
    from lark.exceptions import UnexpectedInput, VisitError

    from spark_dsl.syntax.builder import SyntaxProblem
    from spark_dsl.syntax.errors import describe_syntax_error

    parser = _parser()
    with _lock:
        _comments.current = []
        try:
            statements = parser.parse(text)
        except UnexpectedInput as err:
            return ParseResult(None, describe_syntax_error(text, file, err, parser.parser.lexer))
        except (VisitError, SyntaxProblem) as err:
            problem = err.orig_exc if isinstance(err, VisitError) else err
            if not isinstance(problem, SyntaxProblem):
                raise
            fixes: tuple[Fix, ...] = ()
            if problem.replacement is not None:
                fixes = (replacement(problem.help, file, problem.span, problem.replacement, safe=problem.safe),)
            diagnostic = Diagnostic(
                problem.code,
                Severity.ERROR,
                problem.message,
                Location(file, problem.span),
                help=problem.help,
                fixes=fixes,
            )
            return ParseResult(None, diagnostic)
        comments = tuple(_comments.current)
    # The inline AstBuilder turns the start rule into a list of statements, not a tree.
    module = ast.Module(tuple(cast("list[ast.Statement]", statements)), comments, Span(0, len(text)))
    return ParseResult(module, None)
