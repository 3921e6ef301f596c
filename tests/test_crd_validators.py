"""The test validators check PodMonitor, ServiceMonitor and ScaledObject strictly (issue 16).

Each kind has a valid example, written by hand from the CRD's own field
documentation (tests/data/prometheus-operator/, tests/data/keda/), that must
pass, and a wrong field, a wrong type and a missing required field that must
each fail with an error naming the place. The examples are what spark's
issue-16 outputs are expected to look like (vLLM's /metrics on the serving
port, KEDA's prometheus scaler on vllm:num_requests_waiting).
"""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest
import yaml

try:
    from .crd_schemas import openapi_to_jsonschema
    from .validators import CRD_SCHEMAS, crd_errors, kubernetes_validate
except ImportError:
    from crd_schemas import openapi_to_jsonschema
    from validators import CRD_SCHEMAS, crd_errors, kubernetes_validate

POD_MONITOR = {
    "apiVersion": "monitoring.coreos.com/v1",
    "kind": "PodMonitor",
    "metadata": {"name": "llama-metrics", "namespace": "inference", "labels": {"release": "prometheus"}},
    "spec": {
        "selector": {"matchLabels": {"app.kubernetes.io/name": "llama"}},
        "podMetricsEndpoints": [{"port": "http", "path": "/metrics", "interval": "15s", "scheme": "http"}],
    },
}

SERVICE_MONITOR = {
    "apiVersion": "monitoring.coreos.com/v1",
    "kind": "ServiceMonitor",
    "metadata": {"name": "llama-metrics", "namespace": "inference"},
    "spec": {
        "selector": {"matchLabels": {"app.kubernetes.io/name": "llama"}},
        "namespaceSelector": {"matchNames": ["inference"]},
        "endpoints": [{"port": "http", "path": "/metrics", "interval": "30s", "scrapeTimeout": "10s"}],
    },
}

SCALED_OBJECT = {
    "apiVersion": "keda.sh/v1alpha1",
    "kind": "ScaledObject",
    "metadata": {"name": "llama", "namespace": "inference"},
    "spec": {
        "scaleTargetRef": {"apiVersion": "leaderworkerset.x-k8s.io/v1", "kind": "LeaderWorkerSet", "name": "llama"},
        "minReplicaCount": 1,
        "maxReplicaCount": 4,
        "pollingInterval": 15,
        "cooldownPeriod": 300,
        "triggers": [
            {
                "type": "prometheus",
                "metadata": {
                    "serverAddress": "http://prometheus.monitoring.svc:9090",
                    "query": 'sum(vllm:num_requests_waiting{model_name="llama"})',
                    "threshold": "5",
                },
            }
        ],
    },
}

VALID = {"PodMonitor": POD_MONITOR, "ServiceMonitor": SERVICE_MONITOR, "ScaledObject": SCALED_OBJECT}


def _write(tmp_path: Path, *docs: dict) -> Path:
    path = tmp_path / "k8s.yaml"
    path.write_text(yaml.safe_dump_all(docs, sort_keys=False))
    return path


def _changed(doc: dict, change) -> dict:
    out = copy.deepcopy(doc)
    change(out)
    return out


def test_every_vendored_schema_is_present_and_strict_at_the_top() -> None:
    for (api_version, kind), path in CRD_SCHEMAS.items():
        schema = json.loads(path.read_text())
        assert schema["properties"]["apiVersion"] == {"enum": [api_version]}
        assert schema["properties"]["kind"] == {"enum": [kind]}
        assert schema["additionalProperties"] is False
        assert schema["properties"]["spec"]["additionalProperties"] is False
        assert (path.parent / "README.md").read_text().count(path.name) >= 1, f"{path.name} not in its README"


@pytest.mark.parametrize("kind", sorted(VALID))
def test_a_valid_example_passes(kind: str, tmp_path: Path) -> None:
    assert crd_errors(VALID[kind]) == []
    kubernetes_validate(_write(tmp_path, VALID[kind])).check()


def test_all_three_pass_in_one_multi_document_file(tmp_path: Path) -> None:
    kubernetes_validate(_write(tmp_path, *VALID.values())).check()


# (kind, how to break it, the text the error must contain)
BROKEN = [
    # unknown fields: rejected, not pruned
    ("PodMonitor", lambda d: d["spec"]["podMetricsEndpoints"][0].update(portt="http"), "'portt' was unexpected"),
    ("PodMonitor", lambda d: d["spec"].update(endpoints=[{"port": "http"}]), "'endpoints' was unexpected"),
    ("ServiceMonitor", lambda d: d["spec"]["endpoints"][0].update(intervall="30s"), "'intervall' was unexpected"),
    ("ScaledObject", lambda d: d["spec"].update(maxReplicas=4), "'maxReplicas' was unexpected"),
    ("ScaledObject", lambda d: d["spec"]["triggers"][0].update(query="x"), "'query' was unexpected"),
    # wrong types and values
    ("PodMonitor", lambda d: d["spec"]["podMetricsEndpoints"][0].update(port=8000), "8000 is not of type 'string'"),
    ("PodMonitor", lambda d: d["spec"]["podMetricsEndpoints"][0].update(interval="15 seconds"), "does not match"),
    ("ServiceMonitor", lambda d: d["spec"]["endpoints"][0].update(scheme="tcp"), "'tcp' is not one of"),
    ("ServiceMonitor", lambda d: d["spec"].update(endpoints={"port": "http"}), "is not of type 'array'"),
    ("ScaledObject", lambda d: d["spec"].update(maxReplicaCount="4"), "'4' is not of type 'integer'"),
    ("ScaledObject", lambda d: d["spec"]["triggers"][0]["metadata"].update(threshold=5), "5 is not of type 'string'"),
    ("ScaledObject", lambda d: d["spec"].update(minReplicaCount=-1), "-1 is less than the minimum of 0"),
    # missing required fields
    ("PodMonitor", lambda d: d["spec"].pop("selector"), "'selector' is a required property"),
    ("ServiceMonitor", lambda d: d["spec"].pop("endpoints"), "'endpoints' is a required property"),
    ("ScaledObject", lambda d: d["spec"].pop("triggers"), "'triggers' is a required property"),
    ("ScaledObject", lambda d: d["spec"]["scaleTargetRef"].pop("name"), "'name' is a required property"),
    ("ScaledObject", lambda d: d["spec"]["triggers"][0].pop("metadata"), "'metadata' is a required property"),
    ("ScaledObject", lambda d: d.pop("metadata"), "'metadata' is a required property"),
    # metadata is checked as ObjectMeta, strictly
    ("PodMonitor", lambda d: d["metadata"].update(label={"a": "b"}), "'label' was unexpected"),
    # KEDA's CEL rule on spec, against the given maximum and against the CRD's default of 100
    ("ScaledObject", lambda d: d["spec"].update(minReplicaCount=5), "(5 > 4)"),
    ("ScaledObject", lambda d: (d["spec"].pop("maxReplicaCount"), d["spec"].update(minReplicaCount=101)), "101 > 100"),
]


@pytest.mark.parametrize(("kind", "change", "expected"), BROKEN, ids=[f"{k}-{e}" for k, _, e in BROKEN])
def test_a_broken_example_fails(kind: str, change, expected: str, tmp_path: Path) -> None:
    doc = _changed(VALID[kind], change)
    errors = crd_errors(doc)
    assert any(expected in e for e in errors), errors
    result = kubernetes_validate(_write(tmp_path, doc))
    assert not result.ok
    assert expected in result.output


def test_the_error_names_the_field_path() -> None:
    doc = _changed(POD_MONITOR, lambda d: d["spec"]["podMetricsEndpoints"][0].update(port=8000))
    assert crd_errors(doc) == ["spec.podMetricsEndpoints.0.port: 8000 is not of type 'string'"]


def test_every_error_is_listed_not_only_the_first() -> None:
    doc = _changed(SCALED_OBJECT, lambda d: d["spec"].update(maxReplicas=4, pollingInterval="15"))
    errors = crd_errors(doc)
    assert len(errors) == 2, errors


@pytest.mark.parametrize(
    ("api_version", "kind"),
    [("monitoring.coreos.com/v1alpha1", "PodMonitor"), ("keda.sh/v1", "ScaledObject")],
)
def test_an_api_version_the_crd_does_not_serve_fails(api_version: str, kind: str, tmp_path: Path) -> None:
    doc = dict(VALID[kind], apiVersion=api_version)
    result = kubernetes_validate(_write(tmp_path, doc))
    assert not result.ok
    assert "unknown kind or apiVersion" in result.output


def test_the_converter_makes_objects_strict_and_keeps_the_open_ones_open() -> None:
    crd_node = {
        "type": "object",
        "description": "dropped",
        "properties": {
            "closed": {"type": "object", "properties": {"a": {"type": "string"}}},
            "open": {"type": "object", "x-kubernetes-preserve-unknown-fields": True, "properties": {"a": {}}},
            "map": {"type": "object", "additionalProperties": {"type": "string"}},
            "port": {"x-kubernetes-int-or-string": True},
            "maybe": {"type": "string", "nullable": True},
            "count": {"type": "integer", "format": "int32"},
        },
    }
    schema = openapi_to_jsonschema(crd_node)
    assert "description" not in schema
    assert schema["additionalProperties"] is False
    props = schema["properties"]
    assert props["closed"]["additionalProperties"] is False
    assert "additionalProperties" not in props["open"]
    assert props["map"]["additionalProperties"] == {"type": "string"}
    assert props["port"] == {"anyOf": [{"type": "integer"}, {"type": "string"}]}
    assert props["maybe"] == {"type": ["string", "null"]}
    assert props["count"] == {"type": "integer", "minimum": -(2**31), "maximum": 2**31 - 1}


# The Kubernetes core kinds issue 16 adds are checked by kubernetes-validate's own 1.32 schemas
# (strict): proven here so the blocks can rely on it.
CORE_1_32 = [
    {
        "apiVersion": "autoscaling/v2",
        "kind": "HorizontalPodAutoscaler",
        "metadata": {"name": "llama"},
        "spec": {
            "scaleTargetRef": {"apiVersion": "leaderworkerset.x-k8s.io/v1", "kind": "LeaderWorkerSet", "name": "llama"},
            "minReplicas": 1,
            "maxReplicas": 4,
            "metrics": [
                {
                    "type": "Pods",
                    "pods": {
                        "metric": {"name": "vllm:num_requests_waiting"},
                        "target": {"type": "AverageValue", "averageValue": "5"},
                    },
                }
            ],
        },
    },
    {
        "apiVersion": "policy/v1",
        "kind": "PodDisruptionBudget",
        "metadata": {"name": "llama"},
        "spec": {"maxUnavailable": 1, "selector": {"matchLabels": {"app.kubernetes.io/name": "llama"}}},
    },
    {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": "llama-bench"},
        "spec": {
            "backoffLimit": 0,
            "template": {
                "spec": {
                    "restartPolicy": "Never",
                    "containers": [{"name": "bench", "image": "vllm/vllm-openai:v0.33.0", "args": ["bench", "serve"]}],
                }
            },
        },
    },
    {
        "apiVersion": "scheduling.k8s.io/v1",
        "kind": "PriorityClass",
        "metadata": {"name": "inference-high"},
        "value": 1000,
        "preemptionPolicy": "Never",
    },
]


@pytest.mark.parametrize("doc", CORE_1_32, ids=[d["kind"] for d in CORE_1_32])
def test_core_kinds_of_the_pack_validate_strictly_on_1_32(doc: dict, tmp_path: Path) -> None:
    kubernetes_validate(_write(tmp_path, doc)).check()
    broken = copy.deepcopy(doc)
    broken.get("spec", broken)["bogus"] = 1
    result = kubernetes_validate(_write(tmp_path, broken))
    assert not result.ok
    assert "'bogus' was unexpected" in result.output
