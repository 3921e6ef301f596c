"""`parallel`: `auto`, or terms `tp`, `tp(N)`, `pp(N)`, `ep` and `dp(N)` combined with `+`."""

from __future__ import annotations

from collections.abc import Collection

from spark_dsl.diagnostics import Fix, replacement
from spark_dsl.schema import KeySpec
from spark_dsl.span import Span
from spark_dsl.syntax import ast
from spark_dsl.typecheck.calls import call_args, count_arg
from spark_dsl.typecheck.context import Context
from spark_dsl.values import PARALLEL_TERMS, Parallel

# The terms that take a count, and what the count is (SPK121's message when it is missing).
COUNTED = {"dp": "data-parallel replicas", "pp": "pipeline stages"}


def read_parallel(ctx: Context, key: KeySpec, value: ast.Value) -> Parallel:
    if isinstance(value, ast.Symbol) and value.name == "auto":
        return Parallel(auto=True)
    terms: dict[str, int | None] = {}
    for term in value.terms if isinstance(value, ast.Combination) else (value,):
        name, args = _term(ctx, key, value, term, terms)
        if name in COUNTED and not args:
            ctx.error(
                "SPK121",
                f"`{name}` needs the number of {COUNTED[name]}",
                term.span,
                help=f"write e.g. `{name}(2)`",
                fixes=(replacement(f"write `{name}(2)`", ctx.file, term.span, f"{name}(2)"),),
            )
        terms[name] = count_arg(ctx, name, args[0].value) if args else None  # `ep` takes none
    return Parallel.of_terms(terms)


def _term(
    ctx: Context, key: KeySpec, value: ast.Value, term: ast.Value, seen: Collection[str]
) -> tuple[str, tuple[ast.Arg, ...]]:
    """One term's name and arguments, once it is known, not among those `seen` before, and called right."""
    args: tuple[ast.Arg, ...]
    if isinstance(term, ast.Symbol):
        name, args = term.name, ()
    elif isinstance(term, ast.Call):
        name, args = term.name.name, term.args
    else:
        ctx.wrong_type(key, term, "tp + ep")
        raise AssertionError  # pragma: no cover
    span = term.span if isinstance(term, ast.Symbol) else term.name.span
    if name not in PARALLEL_TERMS:
        # Dropping a term takes its `+` with it; the terms left are a parallelism of their own.
        without = term_removal(ctx, value, term)
        if name == "auto":
            ctx.error(
                "SPK122",
                "`auto` cannot be combined with other terms",
                term.span,
                help="write `parallel = auto` alone, or spell out the terms",
                fixes=(without,) if without else (),
            )
        ctx.suggest(
            "SPK122",
            f"`{name}` is not a parallelism term",
            span,
            name,
            PARALLEL_TERMS,
            "combine `tp`, `tp(N)`, `pp(N)`, `ep` and `dp(N)` with `+`, or write `auto`",
            otherwise=without or ctx.rewrite("write `auto`", value, "auto"),
        )
    if name in seen:
        without = term_removal(ctx, value, term)
        ctx.error(
            "SPK122",
            f"`{name}` appears twice in `parallel`",
            term.span,
            help=f"keep one `{name}` term",
            fixes=(without,) if without else (),
        )
    if isinstance(term, ast.Call):
        call_args(ctx, term, {}, 1 if name != "ep" else 0)
    return name, args


def term_removal(ctx: Context, value: ast.Value, term: ast.Value) -> Fix | None:
    """The fix that drops one term of a `+` combination, with the `+` beside it."""
    if not isinstance(value, ast.Combination) or len(value.terms) < 2:
        return None
    terms = value.terms
    i = terms.index(term)
    span = (
        Span(term.span.start, terms[i + 1].span.start)
        if i + 1 < len(terms)
        else Span(terms[i - 1].span.end, term.span.end)
    )
    return replacement(f"drop `{ctx.text[term.span.start : term.span.end]}`", ctx.file, span, "")
