"""`speculative`: a mode (`none`, `dspark`, `auto`), or `dspark(adaptive)` / `dspark(tokens = N)`."""

from __future__ import annotations

from spark_dsl.diagnostics import replacement
from spark_dsl.schema import KeySpec
from spark_dsl.syntax import ast
from spark_dsl.typecheck.calls import call_args, count_arg
from spark_dsl.typecheck.context import Context, describe
from spark_dsl.values import SPECULATIVE_MODES, Speculative


def read_speculative(ctx: Context, key: KeySpec, value: ast.Value) -> Speculative:
    modes = SPECULATIVE_MODES
    if isinstance(value, ast.Symbol):
        if value.name not in modes:
            ctx.suggest(
                "SPK103",
                f"`{value.name}` is not a valid `speculative`",
                value.span,
                value.name,
                (*modes, "dspark(adaptive)"),
                "`speculative` takes `none`, `dspark`, `dspark(adaptive)` or `auto`",
                otherwise=ctx.rewrite("write `auto`", value, "auto"),
            )
        return Speculative(value.name)
    if not isinstance(value, ast.Call):
        ctx.wrong_type(key, value, "dspark")
    assert isinstance(value, ast.Call)
    if value.name.name != "dspark":
        ctx.suggest(
            "SPK103",
            f"`{value.name.name}(...)` is not a valid `speculative`",
            value.name.span,
            value.name.name,
            ("dspark",),
            "only `dspark` takes arguments: `dspark(adaptive)`, `dspark(tokens = 4)`",
            otherwise=replacement("write `dspark`", ctx.file, value.name.span, "dspark"),
        )
    call_args(ctx, value, {"tokens": "draft tokens per step"}, 1)
    adaptive = False
    for pos in value.positional:
        if not (isinstance(pos, ast.Symbol) and pos.name == "adaptive"):
            ctx.error(
                "SPK121",
                f"`dspark` takes `adaptive` as its positional argument, found {describe(pos)}",
                pos.span,
                help="write `dspark(adaptive)`",
                fixes=(ctx.rewrite("write `adaptive`", pos, "adaptive"),),
            )
        adaptive = True
    tokens = None
    if "tokens" in value.named:
        tokens = count_arg(ctx, "tokens", value.named["tokens"].value)
    return Speculative("dspark", adaptive=adaptive, tokens=tokens)
