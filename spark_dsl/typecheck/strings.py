"""Strings and lists of strings, checked for what a string may hold wherever it lands; and
booleans, whose commonest mistake is a quoted `"true"`."""

from __future__ import annotations

from spark_dsl.schema import KeySpec
from spark_dsl.string_checks import content
from spark_dsl.string_checks import setting as setting_problem
from spark_dsl.syntax import ast
from spark_dsl.typecheck.context import Context


def read_string(ctx: Context, key: KeySpec, value: ast.Value) -> str:
    if not isinstance(value, ast.String):
        example = f'"{value.name}"' if isinstance(value, ast.Symbol) else '"..."'
        ctx.wrong_type(key, value, example, safe=isinstance(value, ast.Symbol))
    assert isinstance(value, ast.String)
    ctx.report(setting_problem(key.name, value.value, key.default), value.span)
    return value.value


def read_string_list(ctx: Context, key: KeySpec, value: ast.Value) -> tuple[str, ...]:
    if not isinstance(value, ast.ListValue):
        ctx.wrong_type(key, value, '["--flag", "value"]')
    assert isinstance(value, ast.ListValue)
    out = []
    for item in value.items:
        if not isinstance(item, ast.String):
            ctx.wrong_type(key, item, '["--flag", "value"]')
        assert isinstance(item, ast.String)
        ctx.report(content(f"an item of `{key.name}`", item.value), item.span)
        out.append(item.value)
    return tuple(out)


def read_bool(ctx: Context, key: KeySpec, value: ast.Value) -> bool:
    if not isinstance(value, ast.Bool):
        example = "true"
        same = isinstance(value, ast.String) and value.value in ("true", "false")
        if isinstance(value, ast.String) and same:
            example = value.value
        ctx.wrong_type(key, value, example, safe=same)
    assert isinstance(value, ast.Bool)
    return value.value
