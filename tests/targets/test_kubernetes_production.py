"""The production pack of `target kubernetes` (docs/production.md): monitors that scrape exactly the
pods that serve `/metrics`, autoscalers sized in groups, update strategies that follow the GPU
budget; every object strictly valid (Kubernetes 1.32, the vendored PodMonitor/ServiceMonitor and
ScaledObject CRDs, the LeaderWorkerSet schemas). Built by the real `spark build`."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import validators as v

ONE_NODE = """\
deployment muse-pack {
  model       = muse-spark-open
  accelerator = b200
BODY
}
"""
# Two B200 nodes, one LeaderWorkerSet group of 2 pods x 8 GPUs per replica; headless workers.
TWO_NODES = ONE_NODE.replace("BODY", "  nodes = 2\n  parallel = dp(2) + tp + ep\nBODY")
DISAGGREGATED = ONE_NODE.replace(
    "BODY",
    # The router's image: vLLM's has no vllm-router (SPK547).
    '  runtime {\n    router_image = "registry.example.com/vllm-router:0.1.17"\n  }\n'
    "  disaggregation {\n    prefill {\n      nodes = 1\n    }\n    decode {\n      nodes = 1\n    }\n  }\nBODY",
)
# vLLM 0.33.0's gauges (vllm/v1/metrics/loggers.py; docs/observability-research.md, section 1).
GAUGES = {"vllm:num_requests_waiting", "vllm:num_requests_running"}


def build(tmp_path: Path, spec: str, target: str) -> list[dict]:
    """The objects of `kubernetes.yaml`, after strict validation and yamllint."""
    path = tmp_path / "pack.spark"
    path.write_text(spec.replace("BODY", f"  target kubernetes {{\n{target}\n  }}"))
    out = tmp_path / "out"
    argv = [sys.executable, "-m", "spark_dsl", "build", str(path), "-o", str(out), "--root", str(tmp_path)]
    proc = subprocess.run(argv, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    manifest = out / "muse-pack" / "kubernetes.yaml"
    v.check_all([v.kubernetes_validate(manifest), v.yamllint(manifest)])
    return v.load_yaml_documents(manifest)


def kinds(docs: list[dict], kind: str) -> list[dict]:
    return [d for d in docs if d["kind"] == kind]


def test_no_metrics_block_emits_no_monitor(tmp_path: Path) -> None:
    docs = build(tmp_path, ONE_NODE, "")
    assert {d["kind"] for d in docs} == {"Deployment", "Service"}


def test_a_pod_monitor_selects_the_leaders_that_serve_metrics(tmp_path: Path) -> None:
    docs = build(tmp_path, TWO_NODES, '    metrics {\n      labels {\n        release = "kps"\n      }\n    }')
    (lws,) = kinds(docs, "LeaderWorkerSet")
    (service,) = kinds(docs, "Service")
    (monitor,) = kinds(docs, "PodMonitor")
    assert monitor["apiVersion"] == "monitoring.coreos.com/v1"
    # The headless workers start no API server: the monitor selects what the Service selects.
    assert monitor["spec"]["selector"] == {"matchLabels": service["spec"]["selector"]}
    assert service["spec"]["selector"]["leaderworkerset.sigs.k8s.io/worker-index"] == "0"
    worker = lws["spec"]["leaderWorkerTemplate"]["workerTemplate"]["spec"]["containers"][0]
    assert "ports" not in worker and "--headless" in worker["args"]
    (endpoint,) = monitor["spec"]["podMetricsEndpoints"]
    leader = lws["spec"]["leaderWorkerTemplate"]["leaderTemplate"]["spec"]["containers"][0]
    assert endpoint["port"] == leader["ports"][0]["name"] == "http"
    assert endpoint["path"] == "/metrics" and endpoint["interval"] == "30s"
    assert {r["targetLabel"] for r in endpoint["relabelings"]} == {"spark_deployment", "spark_component"}
    # The Prometheus's selector label, beside the labels every object of the deployment carries.
    assert monitor["metadata"]["labels"]["release"] == "kps"
    assert monitor["metadata"]["namespace"] == service["metadata"]["namespace"]


def test_a_service_monitor_selects_each_pools_service_by_its_labels(tmp_path: Path) -> None:
    docs = build(tmp_path, DISAGGREGATED, "    metrics {\n      monitor = service\n      interval = 1m30s\n    }")
    services = {s["metadata"]["name"]: s for s in kinds(docs, "Service")}
    monitors = kinds(docs, "ServiceMonitor")
    assert [m["metadata"]["name"] for m in monitors] == ["muse-pack-prefill", "muse-pack-decode"]
    for monitor in monitors:
        selected = [
            s
            for s in services.values()
            if monitor["spec"]["selector"]["matchLabels"].items() <= s["metadata"]["labels"].items()
        ]
        # Exactly the pool's own Service: not the router's, not the other pool's.
        assert [s["metadata"]["name"] for s in selected] == [monitor["metadata"]["name"]]
        (endpoint,) = monitor["spec"]["endpoints"]
        assert endpoint["port"] == selected[0]["spec"]["ports"][0]["name"]
        assert endpoint["interval"] == "1m30s"


def test_monitor_none_emits_nothing(tmp_path: Path) -> None:
    docs = build(tmp_path, ONE_NODE, "    metrics {\n      monitor = none\n    }")
    assert not kinds(docs, "PodMonitor") and not kinds(docs, "ServiceMonitor")


def test_an_hpa_scales_the_leaderworkerset_in_groups(tmp_path: Path) -> None:
    target = (
        "    gpu_budget = 64\n    metrics {}\n    autoscale {\n      min = 1\n      max = 3\n      target = 4\n    }"
    )
    docs = build(tmp_path, TWO_NODES, target)
    (lws,) = kinds(docs, "LeaderWorkerSet")
    (hpa,) = kinds(docs, "HorizontalPodAutoscaler")
    assert hpa["apiVersion"] == "autoscaling/v2"
    assert hpa["spec"]["scaleTargetRef"] == {
        "apiVersion": "leaderworkerset.x-k8s.io/v1",
        "kind": "LeaderWorkerSet",
        "name": lws["metadata"]["name"],
    }
    assert (hpa["spec"]["minReplicas"], hpa["spec"]["maxReplicas"]) == (1, 3)
    (metric,) = hpa["spec"]["metrics"]
    assert metric == {
        "type": "Pods",
        "pods": {
            "metric": {"name": "vllm_num_requests_waiting"},
            "target": {"type": "AverageValue", "averageValue": "4"},
        },
    }
    # The autoscaler owns the count: a re-apply must not reset it.
    assert "replicas" not in lws["spec"]
    # 3 groups x 16 GPUs = 48; a fourth (64) still fits the budget: surge one group.
    assert lws["spec"]["rolloutStrategy"] == {
        "type": "RollingUpdate",
        "rollingUpdateConfiguration": {"maxSurge": 1, "maxUnavailable": 0},
    }


def test_a_keda_scaled_object_queries_the_pools_running_requests(tmp_path: Path) -> None:
    target = (
        '    namespace = "inference"\n    metrics {}\n    autoscale {\n      max = 2\n      metric = running\n'
        '      via = keda\n      prometheus = "http://prom.monitoring:9090"\n    }'
    )
    docs = build(tmp_path, ONE_NODE, target)
    (scaled,) = kinds(docs, "ScaledObject")
    assert not kinds(docs, "HorizontalPodAutoscaler")  # KEDA refuses a target another HPA scales
    assert scaled["spec"]["scaleTargetRef"] == {"apiVersion": "apps/v1", "kind": "Deployment", "name": "muse-pack"}
    (trigger,) = scaled["spec"]["triggers"]
    assert trigger["type"] == "prometheus" and trigger["metricType"] == "AverageValue"
    assert trigger["metadata"] == {
        "serverAddress": "http://prom.monitoring:9090",
        "query": "sum(vllm:num_requests_running"
        '{namespace="inference",spark_deployment="muse-pack",spark_component="server"})',
        "threshold": "5",
    }
    (monitor,) = kinds(docs, "PodMonitor")
    # The query's labels are the ones the monitor's relabelings write from the pod's labels.
    (deployment,) = kinds(docs, "Deployment")
    pod_labels = deployment["spec"]["template"]["metadata"]["labels"]
    relabel = {r["targetLabel"]: r["sourceLabels"][0] for r in monitor["spec"]["podMetricsEndpoints"][0]["relabelings"]}
    assert pod_labels["app.kubernetes.io/name"] == "muse-pack"
    assert relabel["spark_deployment"] == "__meta_kubernetes_pod_label_app_kubernetes_io_name"
    assert pod_labels["app.kubernetes.io/component"] == "server"
    assert relabel["spark_component"] == "__meta_kubernetes_pod_label_app_kubernetes_io_component"


@pytest.mark.parametrize(
    ("target", "strategy"),
    [
        # No budget: nothing to go by, the Deployment recreates as it always did.
        ("", {"type": "Recreate"}),
        # 2 replicas x 8 = 16; a third needs 24 > 16: one at a time in place, the other serving.
        (
            "    gpu_budget = 16\n    replicas = 2",
            {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 0, "maxUnavailable": 1}},
        ),
        # 2 + 1 replicas x 8 = 24 fits: surge one, keep every old replica until it is ready.
        (
            "    gpu_budget = 24\n    replicas = 2",
            {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1, "maxUnavailable": 0}},
        ),
        (
            "    gpu_budget = 64\n    rollout {\n      surge = 0\n    }",
            {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 0, "maxUnavailable": 1}},
        ),
        (
            "    rollout {\n      surge = 2\n    }",
            {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 2, "maxUnavailable": 0}},
        ),
    ],
)
def test_the_deployment_strategy_follows_the_budget(tmp_path: Path, target: str, strategy: dict) -> None:
    (deployment,) = kinds(build(tmp_path, ONE_NODE, target), "Deployment")
    assert deployment["spec"]["strategy"] == strategy


def test_a_leaderworkerset_without_room_replaces_one_group_at_a_time(tmp_path: Path) -> None:
    (lws,) = kinds(build(tmp_path, TWO_NODES, "    gpu_budget = 40\n    replicas = 2"), "LeaderWorkerSet")
    assert lws["spec"]["rolloutStrategy"]["rollingUpdateConfiguration"] == {"maxSurge": 0, "maxUnavailable": 1}
    assert lws["spec"]["replicas"] == 2


def test_hostile_values_land_encoded(tmp_path: Path) -> None:
    hostile = 'http://p:9090\\"}) or vector(1) #\\n- x'
    target = f'    metrics {{}}\n    autoscale {{\n      via = keda\n      prometheus = "{hostile}"\n    }}'
    (scaled,) = kinds(build(tmp_path, ONE_NODE, target), "ScaledObject")
    assert scaled["spec"]["triggers"][0]["metadata"]["serverAddress"] == 'http://p:9090"}) or vector(1) #\n- x'


SCHEDULING = """\
    priority_class = "inference-high"
    service_account = "vllm"
    pull_secrets = ["registry", "mirror"]
    spread_over = "topology.kubernetes.io/zone"
    tolerations {
      "nvidia.com/gpu" = "NoSchedule"
      "dedicated" = ""
    }
    node_affinity {
      "nvidia.com/gpu.product" = "NVIDIA-B200, NVIDIA-B300"
    }"""


def pod_specs(docs: list[dict]) -> list[tuple[dict, dict]]:
    """(pod spec, the workload's selector labels) of every pod template."""
    out = []
    for doc in docs:
        if doc["kind"] == "Deployment":
            out.append((doc["spec"]["template"]["spec"], doc["spec"]["selector"]["matchLabels"]))
        elif doc["kind"] == "LeaderWorkerSet":
            template = doc["spec"]["leaderWorkerTemplate"]
            labels = template["leaderTemplate"]["metadata"]["labels"]
            for part in ("leaderTemplate", "workerTemplate"):
                out.append((template[part]["spec"], labels))
    return out


@pytest.mark.parametrize("spec", [ONE_NODE, TWO_NODES, DISAGGREGATED], ids=["deployment", "lws", "pd-router"])
def test_scheduling_settings_reach_every_pod_template(tmp_path: Path, spec: str) -> None:
    docs = build(tmp_path, spec, SCHEDULING)
    pods = pod_specs(docs)
    assert len(pods) == {ONE_NODE: 1, TWO_NODES: 2, DISAGGREGATED: 3}[spec]  # P/D: prefill, decode, router
    for pod, labels in pods:
        assert pod["priorityClassName"] == "inference-high"
        assert pod["serviceAccountName"] == "vllm"
        assert pod["imagePullSecrets"] == [{"name": "registry"}, {"name": "mirror"}]
        assert pod["tolerations"] == [
            {"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"},
            {"key": "dedicated", "operator": "Exists"},
        ]
        required = pod["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
        assert required == {
            "nodeSelectorTerms": [
                {
                    "matchExpressions": [
                        {"key": "nvidia.com/gpu.product", "operator": "In", "values": ["NVIDIA-B200", "NVIDIA-B300"]}
                    ]
                }
            ]
        }
        (spread,) = pod["topologySpreadConstraints"]
        assert spread["topologyKey"] == "topology.kubernetes.io/zone"
        assert spread["whenUnsatisfiable"] == "ScheduleAnyway"
        # It counts the pool's own pods: the selector is a subset of the template's labels.
        assert spread["labelSelector"]["matchLabels"].items() <= labels.items()


def test_without_scheduling_settings_the_pod_has_none_of_their_fields(tmp_path: Path) -> None:
    ((pod, _),) = pod_specs(build(tmp_path, ONE_NODE, ""))
    fields = {"affinity", "tolerations", "priorityClassName", "serviceAccountName", "imagePullSecrets"}
    assert not fields & set(pod) and "topologySpreadConstraints" not in pod


def test_hostile_scheduling_values_are_refused_with_a_located_error(tmp_path: Path) -> None:
    # A newline in a name and YAML in an effect: SPK536 for each, before anything is written.
    text = SCHEDULING.replace('"vllm"', '"a\\nkind: Secret"').replace('"dedicated" = ""', '"dedicated" = "x: y # z"')
    spec = tmp_path / "pack.spark"
    spec.write_text(ONE_NODE.replace("BODY", f"  target kubernetes {{\n{text}\n  }}"))
    proc = subprocess.run([sys.executable, "-m", "spark_dsl", "check", str(spec)], capture_output=True, text=True)
    assert proc.stdout.count("error[SPK536]") == 2 and proc.returncode != 0, proc.stdout


def test_the_dashboard_is_grafana_json_of_vllm_0_33_names(tmp_path: Path) -> None:
    import json
    import re

    docs = build(tmp_path, DISAGGREGATED, '    namespace = "inference"\n    metrics {\n      dashboard = true\n    }')
    (board,) = kinds(docs, "ConfigMap")
    assert board["metadata"]["labels"]["grafana_dashboard"] == "1"
    ((name, text),) = board["data"].items()
    assert name == "muse-pack.json"
    dashboard = json.loads(text)
    # Indented JSON, one key or item per line, in a literal block: a change reads as a diff of lines.
    assert text == json.dumps(dashboard, indent=2) + "\n"
    manifest = (tmp_path / "out" / "muse-pack" / "kubernetes.yaml").read_text()
    assert "  muse-pack.json: |\n    {\n" in manifest
    exprs = [panel["targets"][0]["expr"] for panel in dashboard["panels"]]
    assert len(exprs) == 2 * 9  # nine panels per serving pool: prefill, decode
    names = {name for expr in exprs for name in re.findall(r"vllm:[a-z0-9_]+", expr)}
    # vLLM 0.33.0's names as scraped (docs/observability-research.md, section 1): counters end in _total.
    assert names == {
        "vllm:num_requests_running",
        "vllm:num_requests_waiting",
        "vllm:kv_cache_usage_perc",
        "vllm:time_to_first_token_seconds_bucket",
        "vllm:inter_token_latency_seconds_bucket",
        "vllm:e2e_request_latency_seconds_bucket",
        "vllm:prompt_tokens_total",
        "vllm:generation_tokens_total",
        "vllm:num_preemptions_total",
    }
    assert 'spark_component="decode"' in exprs[-1] and 'namespace="inference"' in exprs[0]
    assert dashboard["panels"][0]["title"] == "prefill: Requests running"


def test_no_dashboard_unless_asked(tmp_path: Path) -> None:
    assert not kinds(build(tmp_path, ONE_NODE, "    metrics {}"), "ConfigMap")


COMMITTED_KEDA = Path(__file__).resolve().parents[2] / "targets" / "muse-b200-keda" / "kubernetes.yaml"


def test_the_committed_keda_spec_shows_the_packs_other_choices() -> None:
    """specs/nvidia/b200-production-keda.spark: a ServiceMonitor on the Service, KEDA on the KV
    cache's usage, a surge replica inside the budget ((3 + 1) x 1 node x 8 GPUs = 32 = gpu_budget) and a
    pull secret, each strictly valid (Kubernetes 1.32, the vendored CRDs)."""
    v.kubernetes_validate(COMMITTED_KEDA).check()
    docs = {doc["kind"]: doc for doc in v.load_yaml_documents(COMMITTED_KEDA)}
    # Up to 3 replicas read the weights: one shared claim (docs/targets.md, "one claim, one download").
    assert set(docs) == {"PersistentVolumeClaim", "Deployment", "Service", "ServiceMonitor", "ScaledObject"}
    deployment, service = docs["Deployment"], docs["Service"]
    assert "replicas" not in deployment["spec"]  # the ScaledObject owns the count
    assert deployment["spec"]["strategy"] == {
        "type": "RollingUpdate",
        "rollingUpdate": {"maxSurge": 1, "maxUnavailable": 0},
    }
    pod = deployment["spec"]["template"]["spec"]
    assert pod["imagePullSecrets"] == [{"name": "registry-credentials"}]
    assert pod["containers"][0]["resources"]["limits"] == {"nvidia.com/gpu": 8}
    scaled = docs["ScaledObject"]["spec"]
    assert (scaled["maxReplicaCount"] + 1) * 8 == 32  # the surge fits the budget exactly
    assert scaled["scaleTargetRef"] == {"apiVersion": "apps/v1", "kind": "Deployment", "name": "muse-b200-keda"}
    (trigger,) = scaled["triggers"]
    assert trigger["metadata"]["threshold"] == "0.8"  # llm-d's kvCacheThreshold
    assert trigger["metadata"]["query"].startswith("sum(avg by(pod)(vllm:kv_cache_usage_perc{")
    monitor = docs["ServiceMonitor"]["spec"]
    assert monitor["selector"]["matchLabels"].items() <= service["metadata"]["labels"].items()
    assert [e["port"] for e in monitor["endpoints"]] == [p["name"] for p in service["spec"]["ports"]] == ["http"]
    assert monitor["endpoints"][0]["interval"] == "15s"
