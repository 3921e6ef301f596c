"""The fast parsers give exactly what Lark's own parser gives, or give up: the recursive descent
(spark_dsl.syntax.descent), which parses every file but a very long one, and the LALR driver
(spark_dsl.syntax.lalr), which parses those.

The table the driver reads (spark_dsl/syntax/parse_table.json) is what Lark builds from the grammar
now. Lark stays the reference: for every spec in the repository and for many cut and spliced
variants of them, each fast parser's statements and comments equal Lark's, and wherever Lark raises
(a syntax error, a bad escape, nesting too deep) each gives up, so the diagnostic is still made from
Lark's error.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest

from spark_dsl.syntax import ast, descent, table
from spark_dsl.syntax import parser as spark_parser
from spark_dsl.syntax.lalr import GiveUp

REPO = Path(__file__).resolve().parent.parent
SPECS = sorted(
    p for folder in ("specs", "examples", "tests/fixtures", "docs") for p in (REPO / folder).rglob("*.spark")
)


def by_lark(text: str) -> tuple[Any, tuple[ast.Comment, ...]] | None:
    """Statements and comments as Lark's own parser builds them; None where it raises."""
    with spark_parser._lock:
        spark_parser._comments.current = []
        try:
            statements = spark_parser._parser().parse(text)
        except Exception:
            return None
        return statements, tuple(spark_parser._comments.current)


def by_driver(text: str, parser: str = "lalr") -> tuple[Any, tuple[ast.Comment, ...]] | None:
    """What a fast parser (`lalr`, the table's driver, or `descent`) gives; None where it gives up."""
    comments: list[ast.Comment] = []
    fast = spark_parser._fast().parse if parser == "lalr" else descent.parse
    try:
        statements = fast(text, comments)
    except GiveUp:
        return None
    return statements, tuple(comments)


PARSERS = ("lalr", "descent")


def test_there_are_specs_to_compare() -> None:
    assert len(SPECS) > 100


@pytest.mark.parametrize("path", SPECS, ids=[str(p.relative_to(REPO)) for p in SPECS])
def test_every_spec_of_the_repository(path: Path) -> None:
    text = path.read_text(encoding="utf-8", errors="replace")
    lark = by_lark(text)
    assert by_driver(text) == lark
    assert by_driver(text, "descent") == lark


TRICKY = [
    "",
    "# only a comment",
    "deployment a {}",
    "deployment a { x = 1 }",
    "deployment a {\n  x = \n}",  # a syntax error
    'deployment a { s = "bad \\q escape" }',  # a SyntaxProblem from a callback
    "deployment a { n = 1__0 }",  # a malformed number
    "deployment a { x = " + "[" * 40 + "]" * 40 + " }",  # nesting too deep
    "deployment a { x = @ }",  # a character no terminal matches
    "deployment a extends b, c { l = [1, 2,] f = g(h = 1, 2,) q = 1h30m + 2 }",
    'import "x.spark"\nprofile p { "quoted key" = true }',
    'deployment a { block label { } block "label" { } }',
    "deployment a {",  # ends too early
    # Each rule of the grammar and each way out of it, for the recursive descent.
    "model m { x = 1 }\ndeployment model extends model, b { model = model }",
    "profile p extends model {}\nmodel model { model = m }",
    "model m extends x {}",  # a model extends nothing
    "model { }",
    "import x",
    'import "a" import "b"',
    "deployment a { f = g() h = k(,) }",
    "deployment a { f = g(x = 1, model = 2) }",  # a named argument is a NAME
    "deployment a { f = model(1) }",  # a call's name is a NAME
    "deployment a { f = g(x = y = 1) }",
    'deployment a { l = [] m = [,] n = [[1], [f(2)], "s"] }',
    "deployment a { l = [1 2] }",
    "deployment a { c = a + b + f(1) + [2] + 3GiB }",
    "deployment a { c = a + }",
    "deployment a { q = 1.5GiB n = 1_000.5 d = 1h30m e = 1. }",
    "deployment a { q = 1.5.3x }",
    'deployment a { s = "tab\\t \\u{1F600} \\"q\\"" }',
    'deployment a { s = "\\u{D800}" }',
    'deployment a { s = "unterminated }',
    'deployment a { s = "line\nbreak" }',
    'deployment a { "k" = 1 "k" { } }',
    'deployment a { b "label" { c = 1 } b model { } model { } }',
    "deployment a { b c d { } }",
    "deployment a { x = b c }",
    "deployment a { true = 1 }",
    "deployment a { x = true y = false z = import }",
    "deployment import { }",
    "deployment a { = 1 }",
    "deployment a { x = 1 } }",
    "\ufeffdeployment a {\f\r\n\tx = 1 # trailing\n} # last",
    "# a\n# b\ndeployment a { # c\n  x = [ # d\n 1 ] # e\n}\n   \n",
    "deployment a { x = 1 }\n\x00",
    "model m z y = 1 }",  # a body opens with `{`
    "deployment a {" + "a=1\n" * 33_332 + "}",  # 99,999 tokens
    "deployment a {" + "a=1\n" * 33_334 + "}",  # 100,005: more than a file may hold
    "deployment a {" + "b {" * 31 + "}" * 31 + "}",  # as deep as nesting may go
    "deployment a {" + "b {" * 32 + "}" * 32 + "}",  # one deeper
]


@pytest.mark.parametrize("parser", PARSERS)
@pytest.mark.parametrize("text", TRICKY)
def test_tricky_texts(text: str, parser: str) -> None:
    assert by_driver(text, parser) == by_lark(text)


def test_cut_and_spliced_specs() -> None:
    """Random cuts, deletions and splices of real specs: mostly broken text."""
    rng = random.Random(14)
    texts = [p.read_text(encoding="utf-8", errors="replace") for p in SPECS]
    agreed = broken = 0
    for _ in range(3000):
        a, b = rng.choice(texts), rng.choice(texts)
        i, j = sorted(rng.randrange(len(a) + 1) for _ in range(2))
        k = rng.randrange(len(b) + 1)
        text = rng.choice([a[:i] + a[j:], a[:i] + b[k:], a[:i] + rng.choice('{}[]()=,+"#\n ') + a[i:]])
        lark = by_lark(text)
        assert by_driver(text) == lark, text
        assert by_driver(text, "descent") == lark, text
        agreed += 1
        broken += lark is None
    assert agreed == 3000 and 300 < broken < 2900


def test_parse_falls_back_to_lark_for_its_diagnostic() -> None:
    result = spark_parser.parse("deployment a {\n  x = \n}\n", "a.spark")
    assert result.module is None and result.diagnostic is not None and result.diagnostic.code.startswith("SPK0")


def test_the_descent_retypes_the_keywords_the_table_retypes() -> None:
    assert table.load()["scan"]["keywords"]["NAME"] == descent.KEYWORDS


def test_the_shipped_table_is_what_lark_builds_from_the_grammar() -> None:
    assert table.TABLE_FILE.read_text(encoding="utf-8") == table.render(table.generate()), (
        "the grammar changed: run `python -m spark_dsl.dev regen`"
    )


def test_a_clean_parse_imports_no_lark() -> None:
    import subprocess
    import sys

    code = (
        "import sys\n"
        "from spark_dsl.syntax.parser import parse\n"
        "assert parse('deployment a {\\n  x = [1, f(2)]\\n}\\n', 'a.spark').module is not None\n"
        "print(' '.join(m for m in sys.modules if m == 'lark' or m.startswith('lark.')))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""


def test_offsets_are_shared_between_files_and_a_long_file_still_parses_as_lark_does() -> None:
    """Spans keep every token's offsets for the run; past 256 each was an int object of its own in
    every file (about 30 a spec). A file shorter than the shared table takes them from it, so two
    files' offset 300 is one object; a longer file keeps its own and parses exactly as Lark does."""
    pad = "# " + "x" * 297 + "\n"  # pushes the deployment's tokens past offset 256
    text = pad + "deployment a {\n  model = muse-spark-open\n}\n"
    first, second = by_driver(text), by_driver(text.replace("deployment a", "deployment b"))
    assert first is not None and second is not None
    assert first[0][0].span.start == 300 and first[0][0].span.start is second[0][0].span.start
    # The table grows to the longest file parsed: a longer file's offsets are shared as well.
    longer = pad * 20 + text
    third, fourth = by_driver(longer), by_driver(longer.replace("deployment a", "deployment c"))
    assert third is not None and fourth is not None
    assert third[0][0].span.start == len(pad) * 21 and third[0][0].span.start is fourth[0][0].span.start
    long = pad * 60 + text  # over the shared table's 16,384 offsets
    assert len(long) > 1 << 14
    assert by_driver(long) == by_lark(long)
    assert by_driver(long)[0][0].span.start == len(pad) * 61  # type: ignore[index]


def test_a_file_too_long_for_the_descent_is_parsed_by_the_driver() -> None:
    """The descent lists a file's tokens before counting them, so it leaves a file that may hold
    more than a file may (over 200,000 characters) to the driver, which counts as it reads."""
    text = "# " + "x" * 250_000 + "\ndeployment a {\n  model = muse-spark-open\n}\n"
    with pytest.raises(descent.TooLong):
        descent.parse(text, [])
    lark = by_lark(text)
    assert lark is not None and by_driver(text) == lark
    module = spark_parser.parse(text, "long.spark").module
    assert module is not None and (list(module.statements), module.comments) == (lark[0], lark[1])
