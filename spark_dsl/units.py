"""Reads quantity literals (`32K`, `64GiB`, `1h30m`) by the unit family of the key they are assigned to."""

from __future__ import annotations

import itertools
from decimal import Decimal, InvalidOperation

from msgspec import Struct

# vLLM's human-readable integers: lowercase decimal, uppercase binary.
COUNT_UNITS = {"k": 10**3, "K": 2**10, "m": 10**6, "M": 2**20, "g": 10**9, "G": 2**30}
SIZE_UNITS = {
    "B": 1,
    "KB": 10**3,
    "MB": 10**6,
    "GB": 10**9,
    "TB": 10**12,
    "KiB": 2**10,
    "MiB": 2**20,
    "GiB": 2**30,
    "TiB": 2**40,
}
DURATION_UNITS = {"d": 86400, "h": 3600, "m": 60, "s": 1}

FAMILY_UNITS = {"count": COUNT_UNITS, "size": SIZE_UNITS, "duration": DURATION_UNITS}


class UnitError(Struct, frozen=True):
    """Why a literal does not read as its key's unit family; `help` names the fix.

    `replacement` is the literal the help describes, when one can be written (`safe` when it
    denotes the same value, as `1h30m` for `30m1h`).
    """

    message: str
    help: str
    replacement: str | None = None
    safe: bool = False


def accepted_suffixes(family: str) -> str:
    return ", ".join(f"`{u}`" for u in FAMILY_UNITS[family])


def _decimal(text: str) -> Decimal:
    return Decimal(text.replace("_", ""))


def read_quantity(family: str, text: str, parts: tuple[tuple[str, str], ...]) -> int | UnitError:
    """The integer a quantity denotes in `family` (tokens, bytes or seconds)."""
    units = FAMILY_UNITS[family]
    for _num, unit in parts:
        if unit not in units:
            close = [u for u in units if u.lower() == unit.lower()]
            hint = f"; did you mean `{close[0]}`?" if close else ""
            nearest = close[0] if close else _same_scale(family, unit)
            fixed = "".join(n + (nearest if u == unit else u) for n, u in parts) if nearest else None
            return UnitError(
                f"unit `{unit}` in `{text}` is not a {family} unit{hint}",
                f"{family} values take {accepted_suffixes(family)}" + (f", e.g. `{fixed}`" if fixed else ""),
                fixed,
            )
    if family == "duration":
        return _read_duration(text, parts)
    if len(parts) != 1:
        return UnitError(f"`{text}` chains several units", "write one number with one unit, e.g. `32K`")
    num, unit = parts[0]
    try:
        value = _decimal(num) * units[unit]
    except InvalidOperation:  # pragma: no cover - the grammar only admits digits
        return UnitError(f"`{text}` is not a number", "write digits, e.g. `32K`")
    if family == "count" and "." in num and unit.isupper():
        return UnitError(
            f"`{text}`: a fractional count takes only a lowercase (decimal) suffix",
            f"write a whole number with `{unit}`, or use `{unit.lower()}` (e.g. `25.6k` = 25,600)",
            f"{num}{unit.lower()}",
        )
    if value != value.to_integral_value():
        whole = "tokens" if family == "count" else "bytes"
        closest = int(value.to_integral_value())
        rounded = format_count(closest) if family == "count" else f"{closest}B"
        return UnitError(
            f"`{text}` is not a whole number of {whole} ({value.normalize():f})",
            f"choose a value that comes out whole, e.g. `{rounded}`",
            rounded,
        )
    return int(value)


def _same_scale(family: str, unit: str) -> str | None:
    """A count suffix for a size unit of the same scale (`GiB` -> `G`): the value stays."""
    if family == "count" and unit[:1].upper() in COUNT_UNITS and unit.endswith("iB"):
        return unit[0].upper()
    return None


def _read_duration(text: str, parts: tuple[tuple[str, str], ...]) -> int | UnitError:
    order = list(DURATION_UNITS)
    seen: list[int] = []
    total = Decimal(0)
    for num, unit in parts:
        rank = order.index(unit)
        seen.append(rank)
        total += _decimal(num) * DURATION_UNITS[unit]
    if any(later <= earlier for earlier, later in itertools.pairwise(seen)):
        # The same duration written in order, when it comes out whole: a safe rewrite.
        whole = total == total.to_integral_value()
        fixed = format_duration(int(total)) if whole else None
        return UnitError(
            f"`{text}`: units must go from largest to smallest, each once",
            f"write `{fixed}`" if fixed else "write e.g. `1h30m` or `2d12h`",
            fixed,
            safe=True,
        )
    if total != total.to_integral_value():
        nearest = format_duration(int(total.to_integral_value()))
        return UnitError(
            f"`{text}` is not a whole number of seconds", f"write whole seconds, e.g. `{nearest}`", nearest
        )
    return int(total)


def format_duration(seconds: int) -> str:
    """`5400` -> `1h30m`: the shortest chained spelling."""
    if seconds == 0:
        return "0s"
    out = []
    for unit, size in DURATION_UNITS.items():
        if seconds >= size:
            out.append(f"{seconds // size}{unit}")
            seconds %= size
    return "".join(out)


def format_count(tokens: int) -> str:
    """The shortest exact spelling of a count: `1M`, `32K`, `128k`, else digits with `_`."""
    for unit in ("G", "M", "K", "g", "m", "k"):
        size = COUNT_UNITS[unit]
        if tokens >= size and tokens % size == 0:
            return f"{tokens // size}{unit}"
    return f"{tokens:_}"
