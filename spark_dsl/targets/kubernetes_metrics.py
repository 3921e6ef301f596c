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
from spark_dsl.targets import yaml_text
from spark_dsl.targets.common import Job
from spark_dsl.units import format_duration

MONITOR_API = "monitoring.coreos.com/v1"
MONITORS = ("pod", "service", "none")
# Target labels the monitors add from the pods' own labels, so queries (dashboard, KEDA) select
# one deployment's pools without knowing pod names.
DEPLOYMENT_LABEL = "spark_deployment"
COMPONENT_LABEL = "spark_component"
# The Grafana sidecar of kube-prometheus-stack loads the dashboards of ConfigMaps with this label.
DASHBOARD_LABEL = "grafana_dashboard"
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
        # Prometheus refuses a zero scrape interval.
        "interval": KeySpec("interval", Kind.DURATION, "scrape interval", fallback=30, minimum=1),
        "dashboard": KeySpec(
            "dashboard",
            Kind.BOOL,
            "a Grafana dashboard of vLLM's main metrics, in a ConfigMap labelled `grafana_dashboard`",
            fallback=False,
        ),
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


# The autoscaler's signals (`autoscale.metric`): vLLM 0.33.0's gauges (vllm/v1/metrics/loggers.py:528
# running, :538 waiting, :620 KV-cache usage, "1 means 100 percent"), and how one pod's engines add
# up: each engine is a series of its own (`engine` label), requests add up, and the KV cache's usage
# is a fraction of each engine's own cache, so a pod's is their mean.
SIGNALS = {
    "waiting": ("vllm:num_requests_waiting", "sum", "Requests waiting"),
    "kv_cache": ("vllm:kv_cache_usage_perc", "avg", "KV-cache usage"),
    "running": ("vllm:num_requests_running", "sum", "Requests running"),
}


def signal_total(job: Job, metric: str, role: str) -> str:
    """The pool's signal summed over its serving pods: what KEDA divides by the replicas."""
    gauge, per_pod, _ = SIGNALS[metric]
    selected = series(job, gauge, role)
    return f"sum({selected})" if per_pod == "sum" else f"sum(avg by(pod)({selected}))"


def signal_per_replica(job: Job, metric: str, role: str) -> str:
    """The average per serving pod (a LeaderWorkerSet's: per leader, so per group), which the
    autoscaler holds at its target: each pod's value, averaged over the pods that report it."""
    gauge, per_pod, _ = SIGNALS[metric]
    return f"avg({per_pod} by(pod)({series(job, gauge, role)}))"


def signal_target(metric: str, target: int) -> float:
    """`autoscale.target` in the gauge's unit: requests, or the KV cache's usage as a fraction."""
    return target / 100 if metric == "kv_cache" else float(target)


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


# (title, unit, PromQL with `{s}` for one pool's selector): vLLM 0.33.0's names, counters with `_total`.
_PANELS = (
    ("Requests running", "short", "sum(vllm:num_requests_running{s})"),
    ("Requests waiting", "short", "sum(vllm:num_requests_waiting{s})"),
    ("KV-cache usage", "percentunit", "max(vllm:kv_cache_usage_perc{s})"),
    (
        "Time to first token, p95",
        "s",
        "histogram_quantile(0.95,sum by(le)(rate(vllm:time_to_first_token_seconds_bucket{s}[5m])))",
    ),
    (
        "Inter-token latency, p95",
        "s",
        "histogram_quantile(0.95,sum by(le)(rate(vllm:inter_token_latency_seconds_bucket{s}[5m])))",
    ),
    (
        "End-to-end latency, p95",
        "s",
        "histogram_quantile(0.95,sum by(le)(rate(vllm:e2e_request_latency_seconds_bucket{s}[5m])))",
    ),
    ("Prompt tokens per second", "short", "sum(rate(vllm:prompt_tokens_total{s}[5m]))"),
    ("Generated tokens per second", "short", "sum(rate(vllm:generation_tokens_total{s}[5m]))"),
    ("Preemptions per second", "short", "sum(rate(vllm:num_preemptions_total{s}[5m]))"),
)


def dashboard_json(value: object) -> yaml_text.BlockText:
    """Indented JSON, written as a literal block: one key or value per line, so a reviewer reads a
    change of the dashboard as a diff of lines. ASCII only (`ensure_ascii`): JSON's escapes carry any
    other character, so every line is printable and ends in no space, and the block always fits
    (`yaml_text.block_fits`); the ConfigMap's value reads back as exactly this text."""
    return yaml_text.BlockText(json.dumps(value, indent=2, ensure_ascii=True) + "\n")


def _signal_panel(job: Job, role: str, signal: tuple[str, int]) -> tuple[str, str, str, float]:
    """The autoscaler's own signal, per replica as it sees it, with its target as a line."""
    metric, target = signal
    unit = "percentunit" if metric == "kv_cache" else "short"
    title = f"Autoscaler: {SIGNALS[metric][2].lower()} per replica"
    return title, unit, signal_per_replica(job, metric, role), signal_target(metric, target)


def dashboard(
    job: Job, roles: list[str], metadata: dict[str, Any], signal: tuple[str, int] | None = None
) -> dict[str, Any] | None:
    """A ConfigMap holding a Grafana dashboard of every serving pool's main metrics; `signal`, the
    autoscaler's (metric, target), heads each pool's panels."""
    block = job.settings.block("metrics")
    if monitor(job) == "none" or not block.value("dashboard"):
        return None
    panels: list[dict[str, Any]] = []
    y = 0
    for role in roles:
        selector = series(job, "", role)
        rows: list[tuple[str, str, str, float | None]] = [
            (title, unit, query.replace("{s}", selector), None) for title, unit, query in _PANELS
        ]
        if signal is not None:
            rows.insert(0, _signal_panel(job, role, signal))
        for i, (title, unit, expr, line) in enumerate(rows):
            defaults: dict[str, Any] = {"unit": unit}
            if line is not None:
                steps = [{"color": "green", "value": None}, {"color": "red", "value": line}]
                defaults["thresholds"] = {"mode": "absolute", "steps": steps}
                defaults["custom"] = {"thresholdsStyle": {"mode": "line"}}
            panels.append(
                {
                    "id": len(panels) + 1,
                    "type": "timeseries",
                    "title": f"{role}: {title}",
                    "datasource": {"type": "prometheus", "uid": "${datasource}"},
                    "fieldConfig": {"defaults": defaults, "overrides": []},
                    "gridPos": {"h": 8, "w": 8, "x": 8 * (i % 3), "y": y + 8 * (i // 3)},
                    "targets": [{"refId": "A", "expr": expr}],
                }
            )
        y += 8 * -(-len(rows) // 3)
    board = {
        "title": f"vLLM {job.name}",
        "uid": f"spark-{job.name}"[:40],
        "schemaVersion": 39,
        "time": {"from": "now-1h", "to": "now"},
        "templating": {"list": [{"name": "datasource", "type": "datasource", "query": "prometheus"}]},
        "panels": panels,
    }
    labels = {**metadata["labels"], DASHBOARD_LABEL: "1"}
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {**metadata, "name": f"{job.name}-dashboard", "labels": labels},
        "data": {f"{job.name}.json": dashboard_json(board)},
    }
