"""Production-pack rules (SPK530-SPK539): metrics, the GPU budget, autoscaling, rollouts and
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
from spark_dsl.rules.registry import shown as _shown
from spark_dsl.rules.safety import _at_item, _destination, _drop_items, _extra_args, _items
from spark_dsl.rules.targets import (
    DNS_SUBDOMAIN,
    LABEL_NAME,
    _fits,
    _qualified_name_problem,
    _suggest_qualified_name,
)
from spark_dsl.span import Location, Span
from spark_dsl.targets import kubernetes_budget as budget
from spark_dsl.targets.pack_values import EFFECTS, LB_MODES, STATS_OFF
from spark_dsl.values import Setting

# Two B200 nodes per replica (16 GPUs) joined by InfiniBand (SPK560), as the budget fixtures use.
_TWO_NODES = "nodes       = 2\nparallel    = dp(2) + tp + ep\nruntime {\n  fabric = infiniband\n}\n"
_K8S = _TWO_NODES + "target kubernetes {\n  gpu_budget = 48\n"


def _body(plan: Plan) -> Block | None:
    return plan.targets.get(budget.KIND)


def _written(block: Block, key: str) -> Resolved | None:
    setting = block.setting(key)
    return None if setting is None else Resolved.from_setting(setting)


# ---- labels of the pack's blocks ------------------------------------------------------------

# Map blocks under `target kubernetes` whose keys are label keys, and how their values read:
# label values (`labels`), several label values separated by commas (`node_affinity`: the values a
# node label may take) or not label values at all (`tolerations`: effects, SPK536).
LABEL_MAPS: tuple[tuple[tuple[str, ...], str], ...] = (
    (("metrics", "labels"), "value"),
    (("node_affinity",), "values"),
    (("tolerations",), ""),
)


def _label_maps(plan: Plan) -> Iterator[tuple[str, str, str, Setting]]:
    body = plan.target(budget.KIND)
    for path, values in LABEL_MAPS:
        block = body
        for part in path:
            block = block.block(part)
        for key, setting in block.entries().items():
            yield ".".join(path), values, key, setting


def _bad_key(where: str, key: str, setting: Setting, key_span: bool) -> Finding | None:
    """The finding for a key that is no qualified name, at the key (`key_span`) or the value."""
    problem = _qualified_name_problem(key)
    if problem is None:
        return None
    fixed = _suggest_qualified_name(key)
    return Finding(
        f"`{where}` key {_shown(key)} is not a valid Kubernetes key: {problem}",
        Resolved.from_setting(setting, key_span=key_span),
        f'use a key such as `"{fixed}"`' if fixed else 'use a key such as `"team"`',
        label="not a qualified name",
        replace_with=f'"{fixed}"' if fixed else None,
    )


def _label_value(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", text).strip("-_.")[:63].strip("-_.")


@rule(
    "SPK530",
    "error",
    "label key or value of the production pack not valid in Kubernetes",
    checks="In `target kubernetes`: keys of `metrics { labels { } }`, `node_affinity { }` and "
    "`tolerations { }`, and `spread_over`, must be qualified names (an optional DNS-subdomain "
    "prefix and `/`, then 1-63 letters, digits, `-`, `_` or `.`); the monitor's label values and "
    "each comma-separated value of `node_affinity` must be empty or 1-63 of those characters, "
    "starting and ending with a letter or digit.",
    basis="Kubernetes validates label keys and values this way; the monitor's labels are what the "
    "Prometheus's `podMonitorSelector`/`serviceMonitorSelector` matches, node affinity and "
    "topology spread match node labels, and a toleration's key is a taint's key.",
    target="kubernetes",
)
def pack_labels(plan: Plan) -> Iterator[Finding]:
    for where, values, key, setting in _label_maps(plan):
        bad = _bad_key(where, key, setting, key_span=True)
        if bad is not None:
            yield bad
        parts = [str(setting.value)] if values == "value" else []
        if values == "values":
            parts = [part.strip() for part in str(setting.value).split(",")]
        wrong = [part for part in parts if part and not _fits(LABEL_NAME, part, 63)]
        if wrong or (values == "values" and not all(parts)):
            fixed = ",".join(p for p in (_label_value(part) for part in parts) if p)
            yield Finding(
                f"`{where}` value {_shown(str(setting.value))} for {_shown(key)} is not"
                + (" a list of label values" if values == "values" else " a valid Kubernetes label value"),
                Resolved.from_setting(setting),
                "use at most 63 letters, digits, `-`, `_` or `.`"
                + (" per value, separated by `,`" if values == "values" else "")
                + (f', e.g. `"{fixed}"`' if fixed else ""),
                label="not a label value",
                replace_with=f'"{fixed}"' if fixed else None,
            )
    spread = plan.target(budget.KIND).setting("spread_over")
    if spread is not None:
        bad = _bad_key("spread_over", str(spread.value), spread, key_span=False)
        if bad is not None:
            yield bad


# ---- budget and autoscaling -----------------------------------------------------------------


def _budget_note(body: Block) -> tuple[tuple[str, Resolved | None], ...]:
    return (("the budget is set here", _written(body, budget.BUDGET.name)),)


def _over_budget(
    message: str, at: Resolved | None, where: tuple[Block, Block, str], cost: budget.Cost, count: int, limit: int
) -> Finding:
    """SPK531's and SPK533's finding: `count` replicas cost more than the budget; the help (and
    the fix, where `key` is written in `block`) is the most that fit. `where` is (the target's
    body, the block holding the key, the key)."""
    body, block, key = where
    most = cost.most(limit)
    fits = (
        f"`{key} = {most}` is the most that fits ({cost.spelled(most)})"
        if most >= 1
        else "not one replica fits: raise `gpu_budget`"
    )
    return Finding(
        message,
        at,
        fits,
        label=f"needs {count * cost.replica} GPUs",
        replace_with=str(most) if most >= 1 and block.setting(key) is not None else None,
        notes=_budget_note(body),
    )


@rule(
    "SPK531",
    "error",
    "autoscaler maximum needs more GPUs than the budget",
    checks="`autoscale { max = N }` of `target kubernetes`: N replicas, each a group of `nodes` pods "
    "of `gpus` GPUs, need more than `gpu_budget` GPUs.",
    basis="Replicas past the budget stay Pending: the autoscaler asks for them and never reaches "
    "its maximum, while its status says it is scaling (docs/production.md, Budget).",
    target="kubernetes",
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
    yield _over_budget(
        f"autoscale max {cost.spelled(high)} > budget {limit}",
        _written(scale, "max") or scale.header("autoscale"),
        (body, scale, "max"),
        cost,
        high,
        limit,
    )


@rule(
    "SPK532",
    "error",
    "autoscaler minimum above its maximum",
    checks="`autoscale { min = A, max = B }` of `target kubernetes` with A > B.",
    basis="The HorizontalPodAutoscaler API and KEDA's ScaledObject (its CRD's CEL rule) refuse a "
    "minimum above the maximum: `kubectl apply` fails.",
    target="kubernetes",
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
    target="kubernetes",
)
def replicas_over_budget(plan: Plan) -> Iterator[Finding]:
    body, limit = _body(plan), budget.budget(plan)
    if body is None or limit is None or budget.autoscaled(plan):
        return
    count, cost = int(body.value("replicas")), budget.cost(plan)
    if count * cost.replica <= limit:
        return
    yield _over_budget(
        f"{cost.spelled(count)} > budget {limit}",
        _written(body, "replicas") or _written(body, budget.BUDGET.name),
        (body, body, "replicas"),
        cost,
        count,
        limit,
    )


@rule(
    "SPK534",
    "warning",
    "autoscaler on metrics nothing scrapes",
    checks="`target kubernetes` declares `autoscale` without a `metrics` block (or with `monitor = none`).",
    basis="The autoscaler reads vLLM's queue from Prometheus (KEDA) or through prometheus-adapter "
    "(HPA), which only has it when a PodMonitor or ServiceMonitor scrapes `/metrics`; the queries "
    "select by the labels spark's monitor adds.",
    target="kubernetes",
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


# ---- what vLLM's own flags do to the scrape -------------------------------------------------


def _flags_of(plan: Plan, dests: tuple[str, ...]) -> Iterator[tuple[int, str, Setting, str]]:
    """(index, token, the setting, vLLM's destination) of each item of `serve.extra_args` that turns on one of vLLM's
    destinations `dests`, under any of its spellings (`-dph` too), never the `--no-` one."""
    setting = _extra_args(plan)
    if setting is None:  # vLLM's flag table is read for a spec that passes extra_args only
        return
    for index, token in enumerate(setting.value):
        dest, negative, _ = _destination(token)
        if dest in dests and not negative:
            yield index, token, setting, str(dest)


def _extra_args_finding(
    plan: Plan, found: tuple[int, str, Setting, str], message: str, why: str, label: str
) -> Finding:
    index, token, setting, _ = found
    items = _items(plan, setting)
    remove = f"remove `{token}` from `extra_args`"
    return Finding(
        message,
        _at_item(setting, items, index),
        f"{remove}: {why}",
        label=label,
        fix=_drop_items(plan, setting, items, index, 1, remove),
    )


@rule(
    "SPK537",
    "warning",
    "metrics scraped from a vLLM whose stats are off",
    checks="`target kubernetes` scrapes vLLM (`metrics` with `monitor = pod` or `service`) while "
    "`serve.extra_args` passes `--disable-log-stats`.",
    basis="vLLM 0.33.0 creates its Prometheus stat logger only when stats are logged "
    "(`vllm/v1/engine/async_llm.py`: `if self.log_stats: self.logger_manager = StatLoggerManager(...)`, "
    "and `log_stats=not engine_args.disable_log_stats`), so `/metrics` still answers but has no "
    "`vllm:*` series: the dashboard stays empty and an autoscaler reads nothing.",
    target="kubernetes",
)
def metrics_without_stats(plan: Plan) -> Iterator[Finding]:
    body = _body(plan)
    if body is None or not body.block("metrics").declared or body.block("metrics").value("monitor") == "none":
        return
    for found in _flags_of(plan, (STATS_OFF,)):
        yield _extra_args_finding(
            plan,
            found,
            f"`metrics` scrapes vLLM, but `{found[1]}` in `extra_args` turns off every `vllm:*` series",
            "vLLM then exports no request, queue or latency metrics for the monitor to scrape",
            "no vllm:* series",
        )


@rule(
    "SPK538",
    "error",
    "extra_args picks a data-parallel load-balancing mode the launches do not run",
    checks="`serve.extra_args` passes `--data-parallel-hybrid-lb` (`-dph`) or `--data-parallel-external-lb` (`-dpe`).",
    basis="spark's launches run vLLM's internal load balancing: one API server on the head, "
    "`--headless` ranks elsewhere, so each pool's Service and monitor select the head, whose "
    "`/metrics` carries every rank. vLLM 0.33.0 refuses the other modes on those launches "
    '(`vllm/engine/arg_utils.py`, `create_engine_config`): hybrid is "not applicable in headless '
    'mode" and otherwise "requires `--data-parallel-size-local`"; external needs a '
    "`--data-parallel-rank`, which the compiler manages (SPK902) and does not write.",
)
def load_balancing_mode(plan: Plan) -> Iterator[Finding]:
    for found in _flags_of(plan, tuple(LB_MODES)):
        yield _extra_args_finding(
            plan,
            found,
            f"`{found[1]}` in `extra_args`: vLLM refuses {LB_MODES[found[3]]} on spark's launches",
            "the launches balance load inside vLLM (the head's API server serves every rank, and its "
            "`/metrics` carries them all)",
            "vLLM refuses to start",
        )


# ---- rollouts -------------------------------------------------------------------------------


@rule(
    "SPK535",
    "error",
    "rollout surge needs more GPUs than the budget",
    checks="`rollout { surge = S }` of `target kubernetes`: the most replicas (`autoscale`'s `max`, "
    "else `replicas`) plus S more during an update need more than `gpu_budget` GPUs.",
    basis="A surge replica that cannot be scheduled stays Pending and the update never finishes: "
    "the old replicas are kept until the new one is ready (docs/production.md, Rollouts).",
    target="kubernetes",
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


_ONE_NODE = "target kubernetes {\n  gpu_budget = 16\n  replicas   = 1\n"


@rule(
    "SPK539",
    "warning",
    "rollout leaves no replica serving",
    checks="`target kubernetes` whose update strategy spark decides (`gpu_budget` or `rollout` is "
    "written) with no surge replica (`surge = 0`, written or all the budget has room for), while the "
    "fewest replicas (`autoscale`'s `min`, else `replicas`) is 1: the update stops it before its "
    "replacement is ready.",
    basis="Without a surge the update replaces replicas one at a time in place (maxSurge 0, "
    "maxUnavailable 1, docs/production.md, Rollouts): with one replica, every update is an outage "
    "of a whole stop and start, a drain plus the ready budget (docs/targets.md, Graceful drain).",
    target="kubernetes",
)
def rollout_outage(plan: Plan) -> Iterator[Finding]:
    body = _body(plan)
    if body is None or budget.surge(plan) != 0 or budget.serving_during_update(plan) > 0:
        return
    low, cost, limit = budget.floor(plan), budget.cost(plan), budget.budget(plan)
    fewest = "autoscale min" if budget.autoscaled(plan) else "replicas"
    written = _written(body.block(budget.ROLLOUT.name), "surge")
    need = (budget.peak(plan) + 1) * cost.replica
    message = (
        f"an update leaves no replica serving: {fewest} {low} - {budget.unavailable(plan)} stopped at a time"
        f" + 0 surge = {budget.serving_during_update(plan)} serving"
    )
    if limit is None or need <= limit:
        yield Finding(
            message,
            written,
            "`surge = 1`: the new replica is ready before the old one stops",
            label="no surge",
            replace_with="1" if written is not None else None,
        )
        return
    # Two replicas keep one serving while the other is replaced, where the budget holds them.
    key = "min" if budget.autoscaled(plan) else "replicas"
    pair = 2 * cost.replica <= limit and budget.peak(plan) >= (2 if key == "min" else 1)
    yield Finding(
        message,
        _written(body, budget.BUDGET.name) if written is None else written,
        f"raise `gpu_budget` to {need} so one surge replica fits ({cost.spelled(budget.peak(plan) + 1)})"
        + (f", or run two: `{key} = 2`" if pair else ""),
        label="no room for a surge",
        replace_with=str(need) if written is None else None,
        notes=_budget_note(body) if written is not None else (),
    )


# ---- scheduling -----------------------------------------------------------------------------


def _object_name(text: str) -> str:
    return re.sub(r"[^a-z0-9.-]+", "-", text.lower()).strip("-.")[:253].strip("-.")


@rule(
    "SPK536",
    "error",
    "scheduling setting Kubernetes does not accept",
    checks="In `target kubernetes`: `priority_class`, `service_account` and each of "
    "`pull_secrets` must be an object name (a DNS-1123 subdomain: lowercase letters, digits, "
    "`-` and `.`, at most 253); each effect in `tolerations { }` must be `NoSchedule`, "
    '`PreferNoSchedule`, `NoExecute` or `""` (any).',
    basis="The API server rejects other names and effects: `kubectl apply` would refuse the pods' "
    "Deployment or LeaderWorkerSet.",
    target="kubernetes",
)
def scheduling_names(plan: Plan) -> Iterator[Finding]:
    body = plan.target(budget.KIND)
    for key in ("priority_class", "service_account"):
        setting = body.setting(key)
        if setting is not None and not _fits(DNS_SUBDOMAIN, str(setting.value), 253):
            fixed = _object_name(str(setting.value))
            yield Finding(
                f"{key} {_shown(str(setting.value))} is not a Kubernetes object name",
                Resolved.from_setting(setting),
                "use lowercase letters, digits, `-` and `.`" + (f', e.g. `"{fixed}"`' if fixed else ""),
                label="not a DNS-1123 subdomain",
                replace_with=f'"{fixed}"' if fixed else None,
            )
    pull = body.setting("pull_secrets")
    if pull is not None:
        wrong = [name for name in pull.value if not _fits(DNS_SUBDOMAIN, name, 253)]
        if wrong:
            names = [n for n in (_object_name(name) for name in pull.value) if n]
            listed = "[" + ", ".join(_shown(n) for n in names) + "]"
            yield Finding(
                f"pull_secrets {_shown(wrong[0])} is not a Secret name",
                Resolved.from_setting(pull),
                "use lowercase letters, digits, `-` and `.`" + (f", e.g. `{listed}`" if names else ""),
                label="not a DNS-1123 subdomain",
                replace_with=listed if names else None,
            )
    for key, setting in body.block("tolerations").entries().items():
        effect = str(setting.value)
        if effect and effect not in EFFECTS:
            near = next((e for e in EFFECTS if e.lower() == effect.replace(" ", "").lower()), "NoSchedule")
            yield Finding(
                f"toleration effect {_shown(effect)} for {_shown(key)} is not a taint effect",
                Resolved.from_setting(setting),
                f'use `"NoSchedule"`, `"PreferNoSchedule"`, `"NoExecute"` or `""` (any effect), e.g. `"{near}"`',
                label="not an effect",
                replace_with=f'"{near}"',
            )
