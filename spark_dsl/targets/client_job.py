"""A Kubernetes Job (batch/v1) that calls the deployment: the smoke check's and the benchmark's.

The Job runs in the namespace of `target kubernetes` and reaches the deployment through the
Service `kubernetes.yaml` puts in front of it: named after the deployment (the router's under
disaggregation, else the server pool's), so its in-cluster address is `NAME.NAMESPACE.svc`. The
API key comes from the same Secret and key the deployment's pods read (`serve.api_key`).
"""

from __future__ import annotations

from typing import Any

from spark_dsl.plan.model import Plan
from spark_dsl.targets import endpoint
from spark_dsl.targets.common import Job, describe_secret
from spark_dsl.targets.kubernetes import COMPONENT_LABEL, MANAGED_BY_LABEL, NAME_LABEL

# The Job runs once: a failed check is a result to read, not something to retry.
BACKOFF_LIMIT = 0
# Finished Jobs (and their logs) stay a day, then the cluster removes them.
TTL_SECONDS = 86_400


# What a client Job reads of `target kubernetes` (`Target.reads`).
READS = ("target.kubernetes.namespace",)


def namespace(plan: Plan) -> str:
    return str(plan.target("kubernetes").value("namespace"))


def service_address(plan: Plan) -> str:
    """The in-cluster DNS name of the deployment's API Service."""
    return f"{plan.name}.{namespace(plan)}.svc"


def key_env(plan: Plan, variable: str) -> list[dict[str, Any]]:
    """`variable` read from the deployment's API key Secret, or nothing without a key."""
    ref = endpoint.api_key(plan)
    if ref is None:
        return []
    # An env(...) key never gets here: SPK505 (rules/targets.py) stops the deployment.
    return [{"name": variable, "valueFrom": {"secretKeyRef": {"name": ref.name, "key": ref.key or "value"}}}]


def secrets_note(plan: Plan) -> list[str]:
    ref = endpoint.api_key(plan)
    return [f"Reads the API key from {describe_secret(ref)}, as the deployment does."] if ref else []


def job_object(job: Job, role: str, container: dict[str, Any]) -> dict[str, Any]:
    plan = job.plan
    labels = {NAME_LABEL: plan.name, COMPONENT_LABEL: role, MANAGED_BY_LABEL: "spark-dsl"}
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": f"{plan.name}-{role}", "namespace": namespace(plan), "labels": labels},
        "spec": {
            "backoffLimit": BACKOFF_LIMIT,
            "ttlSecondsAfterFinished": TTL_SECONDS,
            "template": {
                "metadata": {"labels": labels},
                "spec": {"restartPolicy": "Never", "containers": [container]},
            },
        },
    }
