"""The grammar and the AST: every form of LANGUAGE.md, spans from tokens, syntax errors in words."""

from __future__ import annotations

import pytest

from spark_dsl.span import LineIndex
from spark_dsl.syntax import ast
from spark_dsl.syntax.parser import parse


def only_deployment(text: str) -> ast.Deployment:
    result = parse(text, "t.spark")
    assert result.diagnostic is None, result.diagnostic
    assert result.module is not None
    (dep,) = result.module.deployments
    return dep


def value_of(text: str) -> ast.Value:
    dep = only_deployment(f"deployment d {{\n  x = {text}\n}}\n")
    (attr,) = dep.body.entries
    assert isinstance(attr, ast.Attribute)
    return attr.value


def test_statements_in_any_order_with_extends_and_labels() -> None:
    text = (
        "profile p extends a, b { serve { port = 8000 } }\n"
        'import "x.spark"\n'
        "deployment muse-b200 extends p { target vllm-config {} }\n"
    )
    result = parse(text, "t.spark")
    assert result.module is not None
    imp, prof, dep = result.module.imports[0], result.module.profiles[0], result.module.deployments[0]
    assert imp.path.value == "x.spark"
    assert [i.name for i in prof.extends] == ["a", "b"]
    assert dep.name.name == "muse-b200"
    (block,) = dep.body.entries
    assert isinstance(block, ast.Block) and block.label is not None
    assert (block.kind.name, block.label.name) == ("target", "vllm-config")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("8", 8),
        ("32_768", 32768),
        ("0.90", 0.90),
    ],
)
def test_numbers(text: str, expected: float) -> None:
    v = value_of(text)
    assert isinstance(v, ast.Number) and v.value == expected and type(v.value) is type(expected)


@pytest.mark.parametrize(
    ("text", "parts"),
    [
        ("32K", (("32", "K"),)),
        ("25.6k", (("25.6", "k"),)),
        ("64GiB", (("64", "GiB"),)),
        ("1h30m", (("1", "h"), ("30", "m"))),
    ],
)
def test_quantities_keep_their_parts_for_the_key_to_read(text: str, parts: tuple[tuple[str, str], ...]) -> None:
    v = value_of(text)
    assert isinstance(v, ast.Quantity) and v.parts == parts and v.text == text


def test_string_escapes() -> None:
    v = value_of(r'"a\"b\\c\nd\te\u{1F680}"')
    assert isinstance(v, ast.String)
    assert v.value == 'a"b\\c\nd\te\U0001f680'


def test_lists_calls_and_combinations() -> None:
    lst = value_of("[text, image,]")
    assert isinstance(lst, ast.ListValue) and [s.name for s in lst.items] == ["text", "image"]  # type: ignore[attr-defined]
    call = value_of('secret("hf-token", key = "token")')
    assert isinstance(call, ast.Call) and call.name.name == "secret"
    assert [a.name.name if a.name else None for a in call.args] == [None, "key"]
    combo = value_of("dp(2) + tp + ep")
    assert isinstance(combo, ast.Combination)
    assert [type(t).__name__ for t in combo.terms] == ["Call", "Symbol", "Symbol"]
    assert isinstance(value_of("true"), ast.Bool) and isinstance(value_of("muse-spark-open"), ast.Symbol)


def test_quoted_map_keys_and_comments_are_kept() -> None:
    text = 'deployment d { # head\n  labels { "nvidia.com/gpu.product" = "B200" } # tail\n}'
    result = parse(text, "t.spark")
    assert result.module is not None
    assert [c.text for c in result.module.comments] == ["# head", "# tail"]
    block = result.module.deployments[0].body.entries[0]
    assert isinstance(block, ast.Block)
    attr = block.body.entries[0]
    assert isinstance(attr, ast.Attribute) and attr.key_quoted and attr.key.name == "nvidia.com/gpu.product"


def test_spans_cover_exactly_the_source_text() -> None:
    text = "deployment d {\n  parallel = dp(2) + tp\n  max_model_len = 128K\n}\n"
    dep = only_deployment(text)
    par, mml = dep.body.entries
    assert isinstance(par, ast.Attribute) and isinstance(mml, ast.Attribute)
    assert text[par.value.span.start : par.value.span.end] == "dp(2) + tp"
    assert text[mml.value.span.start : mml.value.span.end] == "128K"
    assert text[par.span.start : par.span.end] == "parallel = dp(2) + tp"
    assert text[dep.body.span.start] == "{" and text[dep.body.span.end - 1] == "}"


def test_reserved_words_are_not_names_but_prefixes_are() -> None:
    assert parse("deployment importer { x = profiles }", "t").diagnostic is None
    assert parse("deployment d { x = true }", "t").diagnostic is None
    for text in ("deployment import { }", "deployment d { profile = 1 }"):
        bad = parse(text, "t").diagnostic
        assert bad is not None and bad.code == "SPK001" and "is a reserved word" in bad.message


def where(text: str) -> tuple[str, int, int, str, str | None]:
    d = parse(text, "t.spark").diagnostic
    assert d is not None and d.location is not None
    line, col = LineIndex(text).position(d.location.span.start)
    return d.code, line, col, d.message, d.help


@pytest.mark.parametrize(
    ("text", "code", "line", "col", "message"),
    [
        (
            "deployment d {\n  accelerator b200\n}",
            "SPK001",
            2,
            15,
            'expected "=" or "{" after "accelerator", found "b200"',
        ),
        ("deployment d {\n  accelerator }", "SPK001", 2, 15, 'expected "=" or "{" after "accelerator", found "}"'),
        ("deployment d {\n  x = }", "SPK001", 2, 7, 'expected a value after "=", found "}"'),
        ("deployment {", "SPK001", 1, 12, 'expected a name after "deployment", found "{"'),
        ('deployment d {\n  ns = "abc\n}', "SPK002", 2, 8, "unterminated string"),
        (
            "deployment d {\n  serve {\n    port = 1\n\n  target shell {}\n}",
            "SPK003",
            2,
            9,
            "unclosed `{`: the file ends before this block is closed",
        ),
        ("deployment d { }\n}", "SPK003", 2, 1, "unmatched `}`"),
        ("deployment d { x = 1 @ }", "SPK004", 1, 22, "unexpected character `@`"),
        ('deployment d { x = "\\q" }', "SPK005", 1, 21, "invalid escape `\\q` in string"),
        ("deployment d { x = 1__0 }", "SPK006", 1, 20, "malformed number `1__0`"),
        ("deployment d { x = [a b] }", "SPK001", 1, 23, 'expected "," or "]" after "a", found "b"'),
    ],
)
def test_syntax_errors_are_worded_and_located(text: str, code: str, line: int, col: int, message: str) -> None:
    got_code, got_line, got_col, got_message, got_help = where(text)
    assert (got_code, got_line, got_col) == (code, line, col)
    assert got_message == message
    assert got_help


def test_missing_equals_comes_with_a_fix() -> None:
    d = parse("deployment d {\n  accelerator b200\n}", "t.spark").diagnostic
    assert d is not None and d.fixes
    (edit,) = d.fixes[0].edits
    # The blank between key and value becomes ` = `: the line reads as `spark fmt` writes it.
    assert edit.text == " = " and (edit.location.span.start, edit.location.span.end) == (28, 29)
    assert d.fixes[0].safe


def test_parser_is_built_once() -> None:
    from spark_dsl.syntax.parser import _parser

    assert _parser() is _parser()


def test_the_language_md_example_parses_and_checks_clean() -> None:
    from pathlib import Path

    from spark_dsl.pipeline import run

    root = Path(__file__).parent / "fixtures" / "language"
    result = run([root / "muse.spark"], root)
    assert result.diagnostics == []
    assert [p.name for p in result.plans] == ["muse-b200", "muse-mi355x-1m"]
