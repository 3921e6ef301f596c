"""The resolved value of every key of a deployment and where it came from, for hover.

`resolved_values` is the one place that knows where values come from: the
plan's settings and origins (`user`, `profile NAME`, `recipe default`,
`workload policy: ...`) where the plan resolved a key, else the loader's
merged body (the deployment or a profile) and the schema's default texts.
"""

from __future__ import annotations

from msgspec import Struct

from spark_dsl.loader import ResolvedDeployment, SourceFile
from spark_dsl.plan.model import DEFAULT, Plan
from spark_dsl.schema import BlockSpec, deployment_schema
from spark_dsl.span import Location
from spark_dsl.values import Setting, TypedBody, spelled

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
    out: dict[str, ResolvedValue] = {}
    _walk(deployment.body, deployment_schema(), "", sources, out)
    if plan is not None:
        for name, resolved in plan.settings.items():
            key = _PLAN_KEYS.get(name, name)
            text, where = spelled(resolved.value), None
            if resolved.location is not None:
                text, where = _written(resolved.location, sources) or (text, None)
            out[key] = ResolvedValue(key, text, resolved.origin, where)
    return out


def _written(location: Location, sources: dict[str, SourceFile]) -> tuple[str, str] | None:
    source = sources.get(location.file)
    if source is None:
        return None
    line, _ = source.index.position(location.span.start)
    return source.text[location.span.start : location.span.end], f"{location.file}:{line}"


def _setting(key: str, setting: Setting, sources: dict[str, SourceFile]) -> ResolvedValue:
    origin = setting.origin
    described = origin.describe()
    written = _written(Location(origin.file, origin.span), sources)
    if written is None:
        return ResolvedValue(key, spelled(setting.value), described)
    return ResolvedValue(key, written[0], described, written[1])


def _walk(
    body: TypedBody,
    spec: BlockSpec,
    prefix: str,
    sources: dict[str, SourceFile],
    out: dict[str, ResolvedValue],
) -> None:
    for name, key in spec.keys.items():
        setting = body.get(name)
        if setting is not None:
            out[prefix + name] = _setting(prefix + name, setting, sources)
        elif key.default and key.default != "required":
            out[prefix + name] = ResolvedValue(prefix + name, key.default, DEFAULT)
    if spec.map_of is not None:
        for name, setting in body.settings.items():
            out[prefix + name] = _setting(prefix + name, setting, sources)
    for (kind, label), inner in body.blocks.items():
        block = spec.blocks.get(kind)
        if block is None:
            continue
        if block.labels is not None and label is not None:
            labelled = block.labels.get(label)
            if labelled is not None:
                _walk(inner, labelled, f"{prefix}{kind}.{label}.", sources, out)
        else:
            _walk(inner, block, f"{prefix}{kind}.", sources, out)
