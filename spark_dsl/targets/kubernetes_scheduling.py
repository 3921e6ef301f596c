"""Scheduling controls of `target kubernetes`, added to every pod template (docs/production.md).

Each is a typed setting; the rules (rules/production.py, SPK530 and SPK536) check their names
and label keys/values the way the API server does, and the values land in the manifest as data.
"""

from __future__ import annotations

from typing import Any

from spark_dsl.schema import BlockSpec, KeySpec, Kind
from spark_dsl.targets.common import Job

KEYS = (
    KeySpec("priority_class", Kind.STRING, "PriorityClass of every pod", default="the cluster's"),
    KeySpec("service_account", Kind.STRING, "ServiceAccount every pod runs as", default="the namespace's"),
    KeySpec(
        "pull_secrets",
        Kind.STRING_LIST,
        "Secrets (docker-registry) every pod pulls its images with",
        default="none",
    ),
    KeySpec(
        "spread_over",
        Kind.STRING,
        "node label to spread each pool's pods over (a soft topology spread, `maxSkew` 1), e.g. "
        '`"topology.kubernetes.io/zone"`',
        default="none",
    ),
)
BLOCKS = (
    BlockSpec(
        "tolerations",
        "taints every pod tolerates: taint key = effect (`NoSchedule`, `PreferNoSchedule`, `NoExecute`, "
        'or `""` for any), for every value of the key',
        map_of=Kind.STRING,
    ),
    BlockSpec(
        "node_affinity",
        "node labels every pod requires: label key = allowed values, separated by commas",
        map_of=Kind.STRING,
    ),
)


def affinity_values(text: str) -> list[str]:
    return [part.strip() for part in text.split(",")]


def pod_fields(job: Job, selector: dict[str, str]) -> dict[str, Any]:
    """The pod spec fields the settings ask for, in the order a pod spec lists them."""
    out: dict[str, Any] = {}
    required = job.map_setting("node_affinity")
    if required:
        expressions = [
            {"key": key, "operator": "In", "values": affinity_values(values)} for key, values in required.items()
        ]
        terms = {"nodeSelectorTerms": [{"matchExpressions": expressions}]}
        out["affinity"] = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": terms}}
    tolerated = job.map_setting("tolerations")
    if tolerated:
        out["tolerations"] = [
            {"key": key, "operator": "Exists", **({"effect": effect} if effect else {})}
            for key, effect in tolerated.items()
        ]
    spread = job.setting("spread_over")
    if spread:
        out["topologySpreadConstraints"] = [
            {
                "maxSkew": 1,
                "topologyKey": spread,
                # Soft: a pool must still start when the cluster has fewer domains than pods.
                "whenUnsatisfiable": "ScheduleAnyway",
                "labelSelector": {"matchLabels": selector},
            }
        ]
    if job.setting("priority_class"):
        out["priorityClassName"] = job.setting("priority_class")
    if job.setting("service_account"):
        out["serviceAccountName"] = job.setting("service_account")
    pull = job.setting("pull_secrets")
    if pull:
        out["imagePullSecrets"] = [{"name": name} for name in pull]
    return out
