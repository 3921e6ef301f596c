"""The arguments of a call value (`tp(4)`, `dspark(tokens = 4)`, `secret("x", key = "k")`,
`pvc("cache")`): which names and how many positional ones a call takes, and counts."""

from __future__ import annotations

from spark_dsl.diagnostics import replacement
from spark_dsl.syntax import ast
from spark_dsl.typecheck.context import Context, describe
from spark_dsl.typecheck.numbers import below_ceiling


def call_args(ctx: Context, call: ast.Call, allowed: dict[str, str], max_positional: int) -> None:
    """Rejects unknown named arguments and surplus positional ones."""
    fn = call.name.name
    for arg in call.args:
        if arg.name is not None and arg.name.name not in allowed:
            names = ", ".join(f"`{n}`" for n in allowed) or "no named arguments"
            ctx.suggest(
                "SPK121",
                f"`{fn}` has no argument `{arg.name.name}`",
                arg.name.span,
                arg.name.name,
                tuple(allowed),
                f"`{fn}` takes {names}",
            )
    if len(call.positional) > max_positional:
        from spark_dsl.edits import list_item_removal

        extra = call.positional[max_positional]
        index = next(i for i, a in enumerate(call.args) if a.value is extra)
        ctx.error(
            "SPK121",
            f"`{fn}` takes at most {max_positional} positional argument" + ("s" if max_positional != 1 else ""),
            extra.span,
            help=f"remove the extra argument from `{fn}(...)`",
            fixes=(replacement("remove it", ctx.file, list_item_removal(call.args, index), ""),),
        )


def count_arg(ctx: Context, fn: str, value: ast.Value) -> int:
    """A call's count argument (`tp(4)`, `tokens = 4`): a whole number, at least 1."""
    if not isinstance(value, ast.Number) or isinstance(value.value, float) or value.value < 1:
        ctx.error(
            "SPK121",
            f"`{fn}(...)` takes a whole number of at least 1, found {describe(value)}",
            value.span,
            help=f"write e.g. `{fn}(2)`",
            fixes=(ctx.rewrite("write `2`", value, "2"),),
        )
    assert isinstance(value, ast.Number)
    below_ceiling(ctx, f"{fn}(...)", int(value.value), value.text, value.span)
    return int(value.value)
