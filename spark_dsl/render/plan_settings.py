"""The settings of `spark plan`, for people and for JSON: value, origin and `file:line:column`."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from spark_dsl.loader import SourceFile
from spark_dsl.plan.in_effect import InEffect, settings_in_effect
from spark_dsl.plan.model import Plan
from spark_dsl.schema import Kind
from spark_dsl.span import Location
from spark_dsl.units import format_count, format_duration
from spark_dsl.values import Parallel, SecretRef, Speculative, Volume, spelled

Sources = Mapping[str, SourceFile]
_SIZE_UNITS = (("TiB", 2**40), ("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10))


def json_value(value: Any) -> Any:
    if isinstance(value, (Parallel, Speculative)):
        return value.spelled()
    if isinstance(value, SecretRef):
        return {value.kind: value.name, **({"key": value.key} if value.key else {})}
    if isinstance(value, Volume):
        return value.kind if value.name is None else {value.kind: value.name}
    if isinstance(value, tuple):
        return [json_value(v) for v in value]
    return value


def where(location: Location, plan: Plan, sources: Sources | None) -> tuple[str, int, int] | None:
    """(file, line, column), 1-based, columns in code points; None when the file is not at hand."""
    source = (sources or {}).get(location.file)
    if source is None and location.file == plan.deployment.source.name:
        source = plan.deployment.source
    if source is None:
        return None
    line, column = source.index.position(location.span.start)
    return location.file, line, column


def origin_text(setting: InEffect, plan: Plan, sources: Sources | None) -> str:
    if setting.location is None:
        return setting.origin
    found = where(setting.location, plan, sources)
    if found is None:
        return f"{setting.origin} ({setting.location.file})"
    file, line, column = found
    return f"{setting.origin} ({file}:{line}:{column})"


def shown(setting: InEffect) -> str:
    """A value as the spec would spell it: `64GiB`, `45m`, `tp + ep`, `secret("x")`."""
    value = setting.value
    if setting.described:
        return f"({value})"
    if isinstance(value, int) and not isinstance(value, bool):
        if setting.kind is Kind.SIZE:
            return next(
                (f"{value // f}{unit}" for unit, f in _SIZE_UNITS if value >= f and value % f == 0), f"{value}B"
            )
        if setting.kind is Kind.DURATION:
            return format_duration(value)
        if value >= 1024 and setting.kind in (Kind.COUNT, None):
            return f"{format_count(value)} ({value:,})"
    return spelled(value)


def text_rows(plan: Plan, sources: Sources | None) -> list[tuple[str, str, str]]:
    return [(s.key, shown(s), origin_text(s, plan, sources)) for s in settings_in_effect(plan)]


def json_settings(plan: Plan, sources: Sources | None) -> dict[str, dict[str, Any]]:
    """`{key: {"value", "origin"[, "file", "line", "column"][, "default"]}}`: written values keep the
    place the text output shows; a default described in words has value null and the words."""
    out: dict[str, dict[str, Any]] = {}
    for s in settings_in_effect(plan):
        entry: dict[str, Any] = {"value": None if s.described else json_value(s.value), "origin": s.origin}
        if s.described:
            entry["default"] = s.value
        if s.location is not None:
            found = where(s.location, plan, sources)
            entry["file"] = s.location.file
            if found is not None:
                entry["line"], entry["column"] = found[1], found[2]
        out[s.key] = entry
    return out
