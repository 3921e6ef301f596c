"""The resolved value of every key of a deployment and where it came from, for hover.

The values and origins are the rows of plan/in_effect.py, the table `spark plan` lists: the
plan's settings (`user`, `profile NAME`, `recipe default`, `workload policy: ...`) where the plan
resolved a key, else the merged body's written values (the deployment or a profile) and, for the
keys it leaves out, the schema's words for their defaults. Hover shows each value as written in
its file, else as the spec would spell it.
"""

from __future__ import annotations

from collections.abc import Iterator

from msgspec import Struct

from spark_dsl.loader import ResolvedDeployment, SourceFile
from spark_dsl.plan.in_effect import InEffect, described, entry_row, key_rows, plan_rows
from spark_dsl.plan.model import Block, Plan
from spark_dsl.schema import BlockSpec, KeySpec, deployment_schema
from spark_dsl.span import Location
from spark_dsl.values import TypedBody, spelled

# Plan settings that live in a block of the spec.
_PLAN_KEYS = {"concurrency": "workload.concurrency", "goal": "workload.goal"}


class ResolvedValue(Struct, frozen=True):
    """One key's value as the deployment sees it."""

    key: str  # dotted from the deployment down: `serve.port`, `target.kubernetes.namespace`
    value: str  # as written in the spec, else as the plan or the schema says it
    origin: str  # `user`, `profile common`, `recipe default`, `workload policy: ...`, `default`
    where: str | None = None  # `file:line` of the value, when it was written somewhere


def resolved_values(
    deployment: ResolvedDeployment, sources: dict[str, SourceFile], plan: Plan | None = None
) -> dict[str, ResolvedValue]:
    """Every key with a value or a default, by dotted key, in schema order."""
    rows = {row.key: row for row in _rows(deployment.body, deployment_schema(), "")}
    if plan is not None:
        for name, row in plan_rows(plan).items():
            rows[_PLAN_KEYS.get(name, name)] = row
    return {key: _shown(key, row, sources) for key, row in rows.items()}


def _shown(key: str, row: InEffect, sources: dict[str, SourceFile]) -> ResolvedValue:
    """A row as hover shows it: the text as written, with `file:line`, where it was written."""
    written = None if row.location is None else _written(row.location, sources)
    if written is not None:
        return ResolvedValue(key, written[0], row.origin, written[1])
    return ResolvedValue(key, row.value if row.described else spelled(row.value), row.origin)


def _written(location: Location, sources: dict[str, SourceFile]) -> tuple[str, str] | None:
    source = sources.get(location.file)
    if source is None:
        return None
    line, _ = source.index.position(location.span.start)
    return source.text[location.span.start : location.span.end], f"{location.file}:{line}"


def _schema_words(dotted: str, key: KeySpec) -> InEffect | None:
    """Without the plan's computations, a default is the schema's words for it (`required` is none)."""
    return None if key.default == "required" else described(dotted, key)


def _rows(body: TypedBody, spec: BlockSpec, prefix: str) -> Iterator[InEffect]:
    """The written and described keys of a body and of the blocks it writes, in written order."""
    yield from key_rows(Block(spec, body), prefix, _schema_words)
    if spec.map_of is not None:
        for name, setting in body.settings.items():
            yield entry_row(f"{prefix}.{name}" if prefix else name, setting)
    for (kind, label), inner in body.blocks.items():
        block = spec.blocks.get(kind)
        if block is None:
            continue
        nested = f"{prefix}.{kind}" if prefix else kind
        if block.labels is not None and label is not None:
            labelled = block.labels.get(label)
            if labelled is not None:
                yield from _rows(inner, labelled, f"{nested}.{label}")
        else:
            yield from _rows(inner, block, nested)
