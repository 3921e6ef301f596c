"""Numbers: plain integers, counts, sizes and durations with their units, fractions; and the
range every integer stays in."""

from __future__ import annotations

from collections.abc import Callable

from spark_dsl.diagnostics import Fix
from spark_dsl.schema import KeySpec, Kind
from spark_dsl.span import Span
from spark_dsl.syntax import ast
from spark_dsl.typecheck.context import Context
from spark_dsl.units import UnitError, accepted_suffixes, format_duration, read_quantity

# The largest integer a float (and a JSON reader) holds exactly: every integer setting stays at
# or below it, so the plan's float arithmetic can neither overflow nor round a value.
MAX_INTEGER = 2**53


def read_integer(ctx: Context, key: KeySpec, value: ast.Value) -> int:
    if isinstance(value, ast.Quantity):
        number = value.parts[0][0]
        ctx.error(
            "SPK104",
            f"`{key.name}` takes a plain number, found `{value.text}`",
            value.span,
            help=f"write the number without a unit, e.g. `{key.name} = {number}`",
            fixes=(ctx.rewrite(f"write `{number}`", value, number),),
        )
    if not isinstance(value, ast.Number):
        ctx.wrong_type(key, value, "8")
    assert isinstance(value, ast.Number)
    if isinstance(value.value, float):
        whole = value.text.split(".")[0]
        ctx.error(
            "SPK105",
            f"`{key.name}` takes a whole number, found `{value.text}`",
            value.span,
            help=f"drop the fraction: `{whole}`",
            fixes=(ctx.rewrite(f"write `{whole}`", value, whole),),
        )
    return in_range(ctx, key, int(value.value), value)


def in_range(ctx: Context, key: KeySpec, number: int, value: ast.Value) -> int:
    text = value.text if isinstance(value, (ast.Number, ast.Quantity)) else str(number)
    # The fix: the key's default when it is a number in range, else the nearest bound.
    default = _default_number(key)
    low, high = _spelled(key, key.minimum), _spelled(key, key.maximum)
    if key.minimum is not None and number < key.minimum:
        fixed = _spelled(key, default if default is not None and default >= key.minimum else key.minimum)
        ctx.error(
            "SPK105",
            f"`{key.name}` must be at least {low}, found `{text}`",
            value.span,
            help=f"use a value from {low}" + (f" to {high}" if key.maximum is not None else " up"),
            fixes=(ctx.rewrite(f"write `{fixed}`", value, fixed),),
        )
    if key.maximum is not None and number > key.maximum:
        fixed = _spelled(key, default if default is not None and default <= key.maximum else key.maximum)
        ctx.error(
            "SPK105",
            f"`{key.name}` must be at most {high}, found `{text}`",
            value.span,
            help=f"use a value from {_spelled(key, key.minimum or 0)} to {high}, e.g. `{fixed}`",
            fixes=(ctx.rewrite(f"write `{fixed}`", value, fixed),),
        )
    below_ceiling(ctx, key.name, number, text, value.span)
    return number


def _default_number(key: KeySpec) -> int | None:
    """The key's default as a number: a duration's fallback in seconds, else a default written in digits."""
    if key.kind is Kind.DURATION:
        return key.fallback if isinstance(key.fallback, int) else None
    return int(key.default) if key.default.isdigit() else None


def _spelled(key: KeySpec, number: int | None) -> str:
    """A bound or fix as the key is written: a duration with its unit (`30s`), else the number."""
    if number is not None and key.kind is Kind.DURATION:
        return format_duration(number)
    return str(number)


def below_ceiling(ctx: Context, name: str, number: int, text: str, span: Span) -> None:
    """Every integer is at most 2^53, checked before the plan's arithmetic turns any into a float."""
    if number > MAX_INTEGER:
        ctx.error(
            "SPK105",
            f"`{name}` must be at most 2^53 ({MAX_INTEGER}), found `{text}`",
            span,
            help="no setting takes a number this large; write the value the setting needs",
        )


def unit_reader(family: str, example: str) -> Callable[[Context, KeySpec, ast.Value], int]:
    """A reader for a unit family: plain counts pass, suffixes read by `family`."""

    def read(ctx: Context, key: KeySpec, value: ast.Value) -> int:
        if isinstance(value, ast.Number):
            if family == "count":
                return _plain_count(ctx, key, value)
            # The example's unit after the number written: `64` -> `64GiB`.
            with_unit = value.text + example.lstrip("0123456789._")
            ctx.error(
                "SPK104",
                f"`{key.name}` needs a unit, found `{value.text}`",
                value.span,
                help=f"{family} values take {accepted_suffixes(family)}, e.g. `{with_unit}`",
                fixes=(ctx.rewrite(f"write `{with_unit}`", value, with_unit),),
            )
        if not isinstance(value, ast.Quantity):
            ctx.wrong_type(key, value, example)
        assert isinstance(value, ast.Quantity)
        result = read_quantity(family, value.text, value.parts)
        if isinstance(result, UnitError):
            code = "SPK105" if "whole" in result.message or "fractional" in result.message else "SPK104"
            fixes: tuple[Fix, ...] = ()
            if result.replacement is not None:
                fixes = (ctx.rewrite(f"write `{result.replacement}`", value, result.replacement, result.safe),)
            ctx.error(code, result.message, value.span, help=result.help, fixes=fixes)
        assert isinstance(result, int)
        return in_range(ctx, key, result, value)

    return read


def _plain_count(ctx: Context, key: KeySpec, value: ast.Number) -> int:
    """A count written without a suffix (`32768`): whole, and in range."""
    if isinstance(value.value, float):
        whole = str(round(value.value))
        ctx.error(
            "SPK105",
            f"`{key.name}` takes a whole number, found `{value.text}`",
            value.span,
            help=f"write a whole count, e.g. `{whole}`",
            fixes=(ctx.rewrite(f"write `{whole}`", value, whole),),
        )
    return in_range(ctx, key, int(value.value), value)


def read_fraction(ctx: Context, key: KeySpec, value: ast.Value) -> float:
    if not isinstance(value, ast.Number):
        ctx.wrong_type(key, value, "0.9")
    assert isinstance(value, ast.Number)
    number = float(value.value)
    if not 0 < number <= 1:
        ctx.error(
            "SPK105",
            f"`{key.name}` must be in (0, 1], found `{value.text}`",
            value.span,
            help="write a fraction such as `0.9` (not a percentage)",
            fixes=(ctx.rewrite("write `0.9`", value, "0.9"),),
        )
    return number
