"""Names from a fixed set: a symbol (`accelerator = b200`), the model id, a list of symbols."""

from __future__ import annotations

from spark_dsl.diagnostics import replacement
from spark_dsl.schema import IDENTITY_KEYS, KeySpec
from spark_dsl.span import Span
from spark_dsl.syntax import ast
from spark_dsl.typecheck import model_ids
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
    # An accelerator is never replaced by a fix (IDENTITY_KEYS): the help lists the choices.
    identity = key.name in IDENTITY_KEYS
    ctx.suggest(
        "SPK103",
        f"`{word}` is not a valid `{key.name}`",
        span,
        word,
        key.symbols,
        f"`{key.name}` takes one of {listing}",
        otherwise=None if identity else replacement(f"write `{chosen}`", ctx.file, span, chosen),
        guess_fix=not identity,
    )


def read_model(ctx: Context, key: KeySpec, value: ast.Value) -> str:
    """The model's name: a shipped or declared name, or the Hugging Face id of one (model_ids)."""
    if isinstance(value, ast.Symbol):
        word, span, quote = value.name, value.span, ""
    elif isinstance(value, ast.String):
        word, span, quote = value.value, value.span, '"'
    else:
        ctx.wrong_type(key, value, key.symbols[0])
        raise AssertionError  # pragma: no cover
    if word in key.symbols or word in ctx.models:
        return word
    resolved = model_ids.resolve(word, ctx.repositories)
    if resolved is not None:
        return resolved
    if model_ids.is_hub_id(word):
        # Near ids are the repositories spark knows, spelled as their publishers do.
        known = (*model_ids.shipped(), *ctx.repositories)
        ctx.suggest(
            "SPK117",
            f"unknown model `{word}`: no shipped or declared model has this Hugging Face repository",
            span,
            word,
            model_ids.near_choices(word, known),
            model_ids.import_help(word, ctx.file, ctx.models),
            quote,
            guess_fix=False,
        )
    listing = ", ".join(f"`{s}`" for s in key.symbols)
    ctx.suggest(
        "SPK117",
        f"unknown model `{word}`",
        span,
        word,
        model_ids.near_choices(word, (*key.symbols, *ctx.models)),
        model_ids.unknown_help(listing, ctx.models),
        quote,
        guess_fix=False,
    )
    raise AssertionError  # pragma: no cover


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
