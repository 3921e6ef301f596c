"""Names from a fixed set: a symbol (`accelerator = b200`), the model id, a list of symbols."""

from __future__ import annotations

from spark_dsl.diagnostics import replacement
from spark_dsl.schema import KeySpec
from spark_dsl.span import Span
from spark_dsl.syntax import ast
from spark_dsl.typecheck.context import Context


def read_symbol(ctx: Context, key: KeySpec, value: ast.Value) -> str:
    if isinstance(value, ast.String) and value.value in key.symbols:
        ctx.error(
            "SPK102",
            f'`{key.name}` takes a name, not a string: found "{value.value}"',
            value.span,
            help=f"drop the quotes: `{key.name} = {value.value}`",
            fixes=(replacement("drop the quotes", ctx.file, value.span, value.value, safe=True),),
        )
    if not isinstance(value, ast.Symbol):
        ctx.wrong_type(key, value, key.symbols[0])
    assert isinstance(value, ast.Symbol)
    if value.name not in key.symbols:
        unknown_symbol(ctx, key, value.name, value.span)
    return value.name


def unknown_symbol(ctx: Context, key: KeySpec, word: str, span: Span) -> None:
    listing = ", ".join(f"`{s}`" for s in key.symbols)
    chosen = key.default if key.default in key.symbols else key.symbols[0]
    ctx.suggest(
        "SPK103",
        f"`{word}` is not a valid `{key.name}`",
        span,
        word,
        key.symbols,
        f"`{key.name}` takes one of {listing}",
        otherwise=replacement(f"write `{chosen}`", ctx.file, span, chosen),
    )


def read_model(ctx: Context, key: KeySpec, value: ast.Value) -> str:
    if isinstance(value, ast.Symbol):
        word, span, quote = value.name, value.span, ""
    elif isinstance(value, ast.String):
        word, span, quote = value.value, value.span, '"'
    else:
        ctx.wrong_type(key, value, key.symbols[0])
        raise AssertionError  # pragma: no cover
    if word not in key.symbols and word not in ctx.models:
        listing = ", ".join(f"`{s}`" for s in key.symbols)
        # Declared models (docs/models.md) are named after the catalog's when the file sees any.
        declared = f"; declared here: {', '.join(f'`{m}`' for m in ctx.models)}" if ctx.models else ""
        ctx.suggest(
            "SPK117",
            f"unknown model `{word}`",
            span,
            word,
            (*key.symbols, *ctx.models),
            f"the catalog knows {listing}{declared}; to serve other weights of a known model "
            'set `runtime { model_path = "..." }`',
            quote,
            otherwise=replacement(f"write `{key.symbols[0]}`", ctx.file, span, key.symbols[0]),
        )
    return word


def read_symbol_list(ctx: Context, key: KeySpec, value: ast.Value) -> tuple[str, ...]:
    if isinstance(value, ast.Symbol):
        ctx.error(
            "SPK102",
            f"`{key.name}` takes a list, found `{value.name}`",
            value.span,
            help=f"write `{key.name} = [{value.name}]`",
            fixes=(replacement("make it a list", ctx.file, value.span, f"[{value.name}]", safe=True),),
        )
    if not isinstance(value, ast.ListValue):
        ctx.wrong_type(key, value, f"[{key.symbols[0]}]")
    assert isinstance(value, ast.ListValue)
    items: list[str] = []
    for index, item in enumerate(value.items):
        if not isinstance(item, ast.Symbol):
            ctx.wrong_type(key, item, f"[{key.symbols[0]}]")
        assert isinstance(item, ast.Symbol)
        if item.name not in key.symbols:
            unknown_symbol(ctx, key, item.name, item.span)
        if item.name in items:
            from spark_dsl.edits import list_item_removal

            ctx.error(
                "SPK106",
                f"`{item.name}` appears twice in `{key.name}`",
                item.span,
                help="list each item once",
                # A list of modalities is a set: the second mention means nothing.
                fixes=(replacement("remove it", ctx.file, list_item_removal(value.items, index), "", safe=True),),
            )
        items.append(item.name)
    return tuple(items)
