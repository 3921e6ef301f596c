"""Autoscalers and update strategies of `target kubernetes` (docs/production.md, sources there).

An HPA reads a `Pods` metric that prometheus-adapter serves from the scraped series (the adapter
rule renames `vllm:num_requests_waiting` to `vllm_num_requests_waiting`); KEDA's prometheus
scaler queries Prometheus itself, summed over the pool's pods by the labels the monitor adds.
A LeaderWorkerSet scales through its scale subresource: a replica is a group, and its selector
for an HPA is the leaders, which are the pods that serve `/metrics`.
"""

from __future__ import annotations

from typing import Any

from spark_dsl.targets import kubernetes_budget as budget
from spark_dsl.targets import kubernetes_metrics
from spark_dsl.targets.common import Job

HPA_API = "autoscaling/v2"
KEDA_API = "keda.sh/v1alpha1"
GAUGES = {metric: gauge for metric, (gauge, _, _) in kubernetes_metrics.SIGNALS.items()}


def adapter_name(gauge: str) -> str:
    """The custom-metrics API name of a vLLM gauge under the documented adapter rule."""
    return gauge.replace(":", "_")


def autoscaler(job: Job, target: dict[str, str], metadata: dict[str, Any], role: str) -> dict[str, Any] | None:
    """The HPA or ScaledObject of one workload (`target`: its apiVersion, kind and name)."""
    block = job.settings.block(budget.AUTOSCALE.name)
    if not block.declared:
        return None
    low, high = int(block.value("min")), int(block.value("max"))
    chosen = str(block.value("metric"))
    aim = kubernetes_metrics.signal_target(chosen, budget.target(job.plan))
    gauge = GAUGES[chosen]
    if block.value("via") == "hpa":
        # A quantity: `800m` is 0.8 of the KV cache, `5` five requests.
        value = f"{round(aim * 1000)}m" if aim != int(aim) else str(int(aim))
        metric = {"metric": {"name": adapter_name(gauge)}, "target": {"type": "AverageValue", "averageValue": value}}
        return {
            "apiVersion": HPA_API,
            "kind": "HorizontalPodAutoscaler",
            "metadata": metadata,
            "spec": {
                "scaleTargetRef": target,
                "minReplicas": low,
                "maxReplicas": high,
                "metrics": [{"type": "Pods", "pods": metric}],
            },
        }
    # AverageValue: KEDA divides the total by the replicas, the dashboard's autoscaler panel too.
    query = kubernetes_metrics.signal_total(job, chosen, role)
    threshold = f"{aim:g}"
    trigger = {
        "type": "prometheus",
        "metricType": "AverageValue",
        "metadata": {"serverAddress": str(block.value("prometheus")), "query": query, "threshold": threshold},
    }
    return {
        "apiVersion": KEDA_API,
        "kind": "ScaledObject",
        "metadata": metadata,
        "spec": {"scaleTargetRef": target, "minReplicaCount": low, "maxReplicaCount": high, "triggers": [trigger]},
    }


def deployment_strategy(job: Job) -> dict[str, Any]:
    """Without the pack's rollout (no budget, no `rollout`), Recreate: Kubernetes' default rolling
    update surges 25%, a second set of GPUs while the first still holds them. With it, a surge that
    fits the budget, else one replica at a time, as a LeaderWorkerSet's: the others keep serving,
    where Recreate would stop them all (SPK539 warns when none is left)."""
    extra = budget.surge(job.plan)
    if extra is None:
        return {"type": "Recreate"}
    settings = {"maxSurge": extra, "maxUnavailable": budget.unavailable(job.plan)}
    return {"type": "RollingUpdate", "rollingUpdate": settings}


def lws_strategy(job: Job) -> dict[str, Any] | None:
    """LeaderWorkerSet's rolloutStrategy: surge whole groups when they fit, else one at a time down."""
    extra = budget.surge(job.plan)
    if extra is None:
        return None
    settings = {"maxSurge": extra, "maxUnavailable": budget.unavailable(job.plan)}
    return {"type": "RollingUpdate", "rollingUpdateConfiguration": settings}


def header_lines(objects: list[dict[str, Any]]) -> list[str]:
    """What the cluster needs for the pack's objects, for the manifest's header."""
    kinds = {o["kind"]: o for o in objects}
    out = []
    for kind in ("PodMonitor", "ServiceMonitor"):
        if kind in kinds:
            out.append(
                f"The {kind} needs the Prometheus operator ({kubernetes_metrics.MONITOR_API}); the Prometheus's"
                f" {kind[0].lower()}{kind[1:]}Selector must match its labels."
            )
    if "HorizontalPodAutoscaler" in kinds:
        (metric,) = kinds["HorizontalPodAutoscaler"]["spec"]["metrics"]
        name = metric["pods"]["metric"]["name"]
        out.append(
            f"The HorizontalPodAutoscaler reads the Pods metric {name} from prometheus-adapter"
            " (its rule is in docs/production.md, Autoscaling)."
        )
    if "ScaledObject" in kinds:
        out.append(f"The ScaledObject needs KEDA ({KEDA_API}) and a Prometheus that scrapes the pods.")
    return out


def signal(job: Job) -> tuple[str, int] | None:
    """The autoscaler's (metric, target), for the dashboard to show what it scales on."""
    if not budget.autoscaled(job.plan):
        return None
    return str(job.settings.block(budget.AUTOSCALE.name).value("metric")), budget.target(job.plan)
