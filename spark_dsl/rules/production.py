"""Production-pack rules (SPK530-SPK536): metrics, the GPU budget, autoscaling, rollouts and
scheduling of `target kubernetes` (docs/production.md).

The budget arithmetic is the target's own (targets/kubernetes_budget.py), so a message's numbers
are the ones the emitted rollout strategy was chosen by.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from spark_dsl.diagnostics import Edit, Fix
from spark_dsl.plan.model import Block, Plan, Resolved
from spark_dsl.rules.registry import Finding, rule
from spark_dsl.rules.targets import (
    LABEL_NAME,
    _fits,
    _qualified_name_problem,
    _shown,
    _suggest_qualified_name,
)
from spark_dsl.span import Location, Span
from spark_dsl.targets import kubernetes_budget as budget
from spark_dsl.values import Setting

_K8S = "target kubernetes {\n  gpu_budget = 48\n"


def _body(plan: Plan) -> Block | None:
    return plan.targets.get(budget.KIND)


def _written(block: Block, key: str) -> Resolved | None:
    setting = block.setting(key)
    return None if setting is None else Resolved.from_setting(setting)


# ---- labels of the pack's blocks ------------------------------------------------------------

# (block path under `target kubernetes`, whether its values are label values)
LABEL_MAPS = ((("metrics", "labels"), True),)


def _label_maps(plan: Plan) -> Iterator[tuple[str, bool, str, Setting]]:
    body = plan.target(budget.KIND)
    for path, values in LABEL_MAPS:
        block = body
        for part in path:
            block = block.block(part)
        for key, setting in block.entries().items():
            yield ".".join(path), values, key, setting


@rule(
    "SPK530",
    "error",
    "label key or value of the production pack not valid in Kubernetes",
    checks="Keys of `metrics { labels { } }` in `target kubernetes` must be qualified names (an "
    "optional DNS-subdomain prefix and `/`, then 1-63 letters, digits, `-`, `_` or `.`), and their "
    "values empty or 1-63 of those characters, starting and ending with a letter or digit.",
    basis="Kubernetes validates label keys and values this way; the monitor's labels are what the "
    "Prometheus's `podMonitorSelector`/`serviceMonitorSelector` matches.",
    failing='target kubernetes {\n  metrics {\n    labels {\n      release = "kube prometheus"',
    fixed='target kubernetes {\n  metrics {\n    labels {\n      release = "kube-prometheus"',
)
def pack_labels(plan: Plan) -> Iterator[Finding]:
    for where, values, key, setting in _label_maps(plan):
        problem = _qualified_name_problem(key)
        if problem is not None:
            fixed = _suggest_qualified_name(key)
            yield Finding(
                f"`{where}` key {_shown(key)} is not a valid Kubernetes key: {problem}",
                Resolved.from_setting(setting, key_span=True),
                f'use a key such as `"{fixed}"`' if fixed else 'use a key such as `"team"`',
                label="not a qualified name",
                replace_with=f'"{fixed}"' if fixed else None,
            )
        value = str(setting.value)
        if values and value and not _fits(LABEL_NAME, value, 63):
            fixed = re.sub(r"[^A-Za-z0-9_.-]+", "-", value).strip("-_.")[:63].strip("-_.")
            yield Finding(
                f"`{where}` value {_shown(value)} for {_shown(key)} is not a valid Kubernetes label value",
                Resolved.from_setting(setting),
                f'use at most 63 letters, digits, `-`, `_` or `.`, e.g. `"{fixed}"`',
                label="not a label value",
                replace_with=f'"{fixed}"',
            )


# ---- budget and autoscaling -----------------------------------------------------------------


def _budget_note(body: Block) -> tuple[tuple[str, Resolved | None], ...]:
    return (("the budget is set here", _written(body, budget.BUDGET.name)),)


@rule(
    "SPK531",
    "error",
    "autoscaler maximum needs more GPUs than the budget",
    checks="`autoscale { max = N }` of `target kubernetes`: N replicas, each a group of `nodes` pods "
    "of `gpus` GPUs, need more than `gpu_budget` GPUs.",
    basis="Replicas past the budget stay Pending: the autoscaler asks for them and never reaches "
    "its maximum, while its status says it is scaling (docs/production.md, Budget).",
    failing=_K8S + "  autoscale {\n    max = 4",
    fixed=_K8S + "  autoscale {\n    max = 3",
)
def autoscale_over_budget(plan: Plan) -> Iterator[Finding]:
    body, limit = _body(plan), budget.budget(plan)
    if body is None or limit is None or not budget.autoscaled(plan):
        return
    scale = body.block(budget.AUTOSCALE.name)
    high = int(scale.value("max"))
    cost = budget.cost(plan)
    if high * cost.replica <= limit:
        return
    most = cost.most(limit)
    fits = f"`max = {most}` is the most that fits" if most >= 1 else "not one replica fits: raise `gpu_budget`"
    yield Finding(
        f"autoscale max {cost.spelled(high)} > budget {limit}",
        _written(scale, "max") or scale.header("autoscale"),
        f"{fits} ({cost.spelled(most)})" if most >= 1 else fits,
        label=f"needs {high * cost.replica} GPUs",
        replace_with=str(most) if most >= 1 and scale.setting("max") is not None else None,
        notes=_budget_note(body),
    )


@rule(
    "SPK532",
    "error",
    "autoscaler minimum above its maximum",
    checks="`autoscale { min = A, max = B }` of `target kubernetes` with A > B.",
    basis="The HorizontalPodAutoscaler API and KEDA's ScaledObject (its CRD's CEL rule) refuse a "
    "minimum above the maximum: `kubectl apply` fails.",
    failing="target kubernetes {\n  autoscale {\n    min = 4\n    max = 2",
    fixed="target kubernetes {\n  autoscale {\n    min = 2\n    max = 2",
)
def autoscale_min_above_max(plan: Plan) -> Iterator[Finding]:
    if _body(plan) is None or not budget.autoscaled(plan):
        return
    scale = plan.target(budget.KIND).block(budget.AUTOSCALE.name)
    low, high = int(scale.value("min")), int(scale.value("max"))
    if low > high:
        yield Finding(
            f"autoscale min {low} is above max {high}",
            _written(scale, "min") or scale.header("autoscale"),
            f"make `min` at most `max`: `min = {high}`",
            label="above max",
            replace_with=str(high) if scale.setting("min") is not None else None,
        )


@rule(
    "SPK533",
    "error",
    "replicas need more GPUs than the budget",
    checks="`replicas = N` of `target kubernetes` (without `autoscale`): N replicas, each a group of "
    "`nodes` pods of `gpus` GPUs, need more than `gpu_budget` GPUs.",
    basis="The replicas past the budget stay Pending (docs/production.md, Budget).",
    failing=_K8S + "  replicas   = 4",
    fixed=_K8S + "  replicas   = 3",
)
def replicas_over_budget(plan: Plan) -> Iterator[Finding]:
    body, limit = _body(plan), budget.budget(plan)
    if body is None or limit is None or budget.autoscaled(plan):
        return
    count, cost = int(body.value("replicas")), budget.cost(plan)
    if count * cost.replica <= limit:
        return
    most = cost.most(limit)
    yield Finding(
        f"{cost.spelled(count)} > budget {limit}",
        _written(body, "replicas") or _written(body, budget.BUDGET.name),
        f"`replicas = {most}` is the most that fits ({cost.spelled(most)})"
        if most >= 1
        else "not one replica fits: raise `gpu_budget`",
        label=f"needs {count * cost.replica} GPUs",
        replace_with=str(most) if most >= 1 and body.setting("replicas") is not None else None,
        notes=_budget_note(body),
    )


@rule(
    "SPK534",
    "warning",
    "autoscaler on metrics nothing scrapes",
    checks="`target kubernetes` declares `autoscale` without a `metrics` block (or with `monitor = none`).",
    basis="The autoscaler reads vLLM's queue from Prometheus (KEDA) or through prometheus-adapter "
    "(HPA), which only has it when a PodMonitor or ServiceMonitor scrapes `/metrics`; the queries "
    "select by the labels spark's monitor adds.",
    failing="target kubernetes {\n  autoscale {\n    max = 2\n  }\n}",
    fixed="target kubernetes {\n  metrics {}\n  autoscale {\n    max = 2\n  }\n}",
)
def autoscale_unscraped(plan: Plan) -> Iterator[Finding]:
    body = _body(plan)
    if body is None or not budget.autoscaled(plan):
        return
    metrics = body.block("metrics")
    if metrics.declared and metrics.value("monitor") != "none":
        return
    monitor = _written(metrics, "monitor")
    if monitor is not None:
        yield Finding(
            "autoscale reads vLLM's queue from Prometheus, but `monitor = none` scrapes nothing",
            monitor,
            "scrape the serving pods: `monitor = pod` (or `service`)",
            label="nothing scraped",
            replace_with="pod",
        )
        return
    at = body.block(budget.AUTOSCALE.name).header("autoscale")
    yield Finding(
        "autoscale reads vLLM's queue from Prometheus, but no monitor scrapes `/metrics`",
        at,
        "add `metrics {}` to `target kubernetes` (a PodMonitor of the serving pods)",
        label="nothing scraped",
        fix=_add_metrics(plan, at),
    )


def _add_metrics(plan: Plan, at: Resolved | None) -> Fix | None:
    """`metrics {}` on its own line before the `autoscale` block (in the deployment's file)."""
    source = plan.deployment.source
    if at is None or at.location is None or at.location.file != source.name:
        return None
    start = at.location.span.start
    line = source.text.rfind("\n", 0, start) + 1
    indent = source.text[line:start]
    if indent.strip():
        return None
    where = Location(source.name, Span(start, start))
    return Fix("add `metrics {}`", (Edit(where, "metrics {}\n" + indent),))


# ---- rollouts -------------------------------------------------------------------------------


@rule(
    "SPK535",
    "error",
    "rollout surge needs more GPUs than the budget",
    checks="`rollout { surge = S }` of `target kubernetes`: the most replicas (`autoscale`'s `max`, "
    "else `replicas`) plus S more during an update need more than `gpu_budget` GPUs.",
    basis="A surge replica that cannot be scheduled stays Pending and the update never finishes: "
    "the old replicas are kept until the new one is ready (docs/production.md, Rollouts).",
    failing=_K8S + "  replicas   = 2\n  rollout {\n    surge = 2",
    fixed=_K8S + "  replicas   = 2\n  rollout {\n    surge = 1",
)
def surge_over_budget(plan: Plan) -> Iterator[Finding]:
    body, limit = _body(plan), budget.budget(plan)
    if body is None or limit is None:
        return
    rollout = body.block(budget.ROLLOUT.name)
    setting = rollout.setting("surge")
    if setting is None:
        return
    extra, peak, cost = int(setting.value), budget.peak(plan), budget.cost(plan)
    need = (peak + extra) * cost.replica
    if need <= limit:
        return
    room = max(cost.most(limit) - peak, 0)
    yield Finding(
        f"rollout surge needs ({peak} + {extra} replicas) x {cost.nodes} node{'s' if cost.nodes != 1 else ''}"
        f" x {cost.gpus} GPUs = {need} GPUs > budget {limit}",
        Resolved.from_setting(setting),
        f"`surge = {room}` is the most that fits"
        + (" (an update then replaces replicas in place)" if room == 0 else ""),
        label=f"needs {need} GPUs",
        replace_with=str(room),
        notes=_budget_note(body),
    )
