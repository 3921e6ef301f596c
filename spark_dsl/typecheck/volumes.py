"""Volumes (`model_cache`): `pvc("claim")`, `hostpath("/path")` or `emptydir`."""

from __future__ import annotations

from spark_dsl.schema import KeySpec
from spark_dsl.string_checks import content
from spark_dsl.syntax import ast
from spark_dsl.typecheck.calls import call_args
from spark_dsl.typecheck.context import Context
from spark_dsl.values import Volume

KINDS = ("pvc", "hostpath", "emptydir")


def read_volume(ctx: Context, key: KeySpec, value: ast.Value) -> Volume:
    if isinstance(value, ast.Symbol) and value.name == "emptydir":
        return Volume("emptydir")
    if isinstance(value, ast.Call) and value.name.name in ("pvc", "hostpath"):
        fn = value.name.name
        what, example = ("claim name", "model-cache") if fn == "pvc" else ("path", "/models")
        call_args(ctx, value, {}, 1)
        arg = value.positional[0] if value.positional else None
        if not isinstance(arg, ast.String) or not arg.value:
            ctx.error(
                "SPK121",
                f"`{fn}(...)` needs a {what} as a string",
                value.span,
                help=f'write `{fn}("{example}")`',
                fixes=(ctx.rewrite(f'write `{fn}("{example}")`', value, f'{fn}("{example}")'),),
            )
        assert isinstance(arg, ast.String)
        ctx.report(content(f"`{fn}(...)`", arg.value), arg.span)
        return Volume(value.name.name, arg.value)
    word = value.name if isinstance(value, ast.Symbol) else value.name.name if isinstance(value, ast.Call) else ""
    if word:
        ctx.suggest(
            "SPK103",
            f"`{word}` is not a valid `{key.name}`",
            value.span,
            word,
            KINDS,
            '`model_cache` takes `pvc("name")`, `hostpath("/path")` or `emptydir`',
            otherwise=ctx.rewrite("write `emptydir`", value, "emptydir"),
        )
    ctx.wrong_type(key, value, 'pvc("model-cache")')
    raise AssertionError  # pragma: no cover
