"""Prometheus scraping of vLLM's `/metrics` (`target kubernetes { metrics { } }`) and a dashboard.

vLLM serves `/metrics` on its API server's port (the pod's `http` port); a LeaderWorkerSet's
headless workers start no API server and serve none, and the leader's `/metrics` carries every
data-parallel rank (one series per `engine` label): docs/production.md, "Metrics", with sources.
So a monitor selects what each pool's Service selects: the pods, or the leaders, that serve.
Metric names are vLLM 0.33.0's (`vllm/v1/metrics/loggers.py`); counters are scraped with `_total`.
"""

from __future__ import annotations

import json
from typing import Any

from spark_dsl.schema import BlockSpec, KeySpec, Kind
from spark_dsl.targets.common import Job
from spark_dsl.units import format_duration

MONITOR_API = "monitoring.coreos.com/v1"
MONITORS = ("pod", "service", "none")
# Target labels the monitors add from the pods' own labels, so queries (dashboard, KEDA) select
# one deployment's pools without knowing pod names.
DEPLOYMENT_LABEL = "spark_deployment"
COMPONENT_LABEL = "spark_component"
_POD_LABEL = "__meta_kubernetes_pod_label_"

METRICS = BlockSpec(
    "metrics",
    "Prometheus scraping of vLLM's `/metrics` (prometheus-operator PodMonitor or ServiceMonitor)",
    keys={
        "monitor": KeySpec(
            "monitor",
            Kind.SYMBOL,
            "what selects the serving pods: a PodMonitor (`pod`), a ServiceMonitor on each pool's Service "
            "(`service`), or nothing (`none`)",
            symbols=MONITORS,
            fallback="pod",
        ),
        "interval": KeySpec("interval", Kind.DURATION, "scrape interval", fallback=30),
    },
    blocks={
        "labels": BlockSpec(
            "labels",
            "labels of the monitor, for the Prometheus's `podMonitorSelector`/`serviceMonitorSelector`",
            map_of=Kind.STRING,
        )
    },
)


def monitor(job: Job) -> str:
    """`pod`, `service` or `none`; `none` when the spec writes no `metrics` block."""
    block = job.settings.block("metrics")
    return str(block.value("monitor")) if block.declared else "none"


def quoted(text: str) -> str:
    """A PromQL string literal (Go's escapes, which JSON's with ASCII only are a subset of)."""
    return json.dumps(text, ensure_ascii=True)


def series(job: Job, metric: str, role: str) -> str:
    """`metric{namespace=..., spark_deployment=..., spark_component=...}` for one pool."""
    matchers = [
        f"namespace={quoted(job.setting('namespace'))}",
        f"{DEPLOYMENT_LABEL}={quoted(job.name)}",
        f"{COMPONENT_LABEL}={quoted(role)}",
    ]
    return f"{metric}{{{','.join(matchers)}}}"


def _relabelings() -> list[dict[str, Any]]:
    return [
        {
            "action": "replace",
            "sourceLabels": [_POD_LABEL + "app_kubernetes_io_name"],
            "targetLabel": DEPLOYMENT_LABEL,
        },
        {
            "action": "replace",
            "sourceLabels": [_POD_LABEL + "app_kubernetes_io_component"],
            "targetLabel": COMPONENT_LABEL,
        },
    ]


def monitor_object(
    job: Job, name: str, metadata: dict[str, Any], selector: dict[str, str], service_selector: dict[str, str]
) -> dict[str, Any] | None:
    """The PodMonitor (pods matching `selector`) or ServiceMonitor (the pool's Service) of a pool."""
    kind = monitor(job)
    if kind == "none":
        return None
    block = job.settings.block("metrics")
    labels = {**block.block("labels").mapping(), **metadata["labels"]}
    endpoint: dict[str, Any] = {
        "port": "http",
        "path": "/metrics",
        "interval": format_duration(int(block.value("interval"))),
        "relabelings": _relabelings(),
    }
    if kind == "pod":
        spec: dict[str, Any] = {"selector": {"matchLabels": selector}, "podMetricsEndpoints": [endpoint]}
    else:
        spec = {"selector": {"matchLabels": service_selector}, "endpoints": [endpoint]}
    return {
        "apiVersion": MONITOR_API,
        "kind": "PodMonitor" if kind == "pod" else "ServiceMonitor",
        "metadata": {**metadata, "name": name, "labels": labels},
        "spec": spec,
    }
