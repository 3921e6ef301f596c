"""The GPU budget of `target kubernetes`: what a replica costs, and how many replicas fit.

One replica of a deployment is one copy of every pool: a Deployment's pod, or one LeaderWorkerSet
group of `nodes` pods, each holding the node's GPUs. The budget (`gpu_budget`) is the GPUs the
namespace may use; the rules (rules/production.py) reject an autoscaler maximum, a replica count
or a rollout surge that needs more, and the rollout follows it (docs/production.md, "Budget").
Both read the arithmetic here, so the message and the emitted strategy agree.
"""

from __future__ import annotations

from msgspec import Struct

from spark_dsl.plan.model import Plan
from spark_dsl.schema import BlockSpec, KeySpec, Kind

KIND = "kubernetes"
VIA = ("hpa", "keda")
# The autoscaler's signals (docs/production.md, Autoscaling): queue depth first, as
# production-stack's ScaledObject (helm/templates/scaledobject-vllm.yaml, `vllm:num_requests_waiting`,
# threshold 5) and KServe's LLM autoscaling guide; the KV cache's usage, as llm-d's workload variant
# autoscaler (kvCacheThreshold 0.80 beside queueLengthThreshold 5); `running` saturates at
# `max_num_seqs` and is kept for those who chose it.
METRIC = ("waiting", "kv_cache", "running")
# `target` when unwritten: requests per replica, or the KV cache's usage in percent.
TARGET = {"waiting": 5, "kv_cache": 80, "running": 5}
# The budget and rollout keys of `target kubernetes`.
BUDGET = KeySpec(
    "gpu_budget",
    Kind.INTEGER,
    "GPUs the deployment may use in the cluster, counting autoscaling and rollout surges",
    default="none: unchecked",
    minimum=1,
)
AUTOSCALE = BlockSpec(
    "autoscale",
    "a HorizontalPodAutoscaler or KEDA ScaledObject on vLLM's queue; a replica is one group of pods",
    keys={
        "min": KeySpec("min", Kind.INTEGER, "fewest replicas", fallback=1, minimum=1),
        "max": KeySpec("max", Kind.INTEGER, "most replicas", fallback=2, minimum=1),
        "metric": KeySpec(
            "metric",
            Kind.SYMBOL,
            "vLLM gauge scaled on: `waiting` (`vllm:num_requests_waiting`, queue depth), `kv_cache` "
            "(`vllm:kv_cache_usage_perc`) or `running` (`vllm:num_requests_running`)",
            symbols=METRIC,
            fallback="waiting",
        ),
        "target": KeySpec(
            "target",
            Kind.INTEGER,
            "per replica, what the autoscaler aims at: requests (`waiting`, `running`) or percent of the "
            "KV cache (`kv_cache`)",
            default="5 requests; 80 (percent) for `kv_cache`",
            minimum=1,
        ),
        "via": KeySpec(
            "via",
            Kind.SYMBOL,
            "HPA through prometheus-adapter, or KEDA's prometheus scaler",
            symbols=VIA,
            fallback="hpa",
        ),
        "prometheus": KeySpec(
            "prometheus",
            Kind.STRING,
            "Prometheus address KEDA queries (`via = keda`)",
            fallback="http://prometheus-operated.monitoring.svc:9090",
        ),
    },
)
ROLLOUT = BlockSpec(
    "rollout",
    "how an update replaces replicas",
    keys={
        "surge": KeySpec(
            "surge",
            Kind.INTEGER,
            "replicas started beside the old ones during an update (0: replace in place)",
            default="1 when the budget has room for one more replica, else 0",
            minimum=0,
        ),
    },
)


class Cost(Struct, frozen=True):
    """What one replica holds: `nodes` pods of `gpus` GPUs."""

    nodes: int
    gpus: int

    @property
    def replica(self) -> int:
        return self.nodes * self.gpus

    def spelled(self, replicas: int) -> str:
        """`4 replicas x 2 nodes x 8 GPUs = 64 GPUs` (`x 1 node` is said too: the group's size)."""
        nodes = f"{self.nodes} node{'s' if self.nodes != 1 else ''}"
        count = f"{replicas} replica{'s' if replicas != 1 else ''}"
        return f"{count} x {nodes} x {self.gpus} GPUs = {replicas * self.replica} GPUs"

    def most(self, budget: int) -> int:
        """The most replicas the budget holds."""
        return budget // self.replica


def cost(plan: Plan) -> Cost:
    return Cost(plan.total_nodes, int(plan.value("gpus")))


def budget(plan: Plan) -> int | None:
    value = plan.target(KIND).value(BUDGET.name)
    return None if value is None else int(value)


def autoscaled(plan: Plan) -> bool:
    return plan.target(KIND).block(AUTOSCALE.name).declared


def peak(plan: Plan) -> int:
    """The most replicas the deployment runs: the autoscaler's maximum, else `replicas`."""
    body = plan.target(KIND)
    if autoscaled(plan):
        return int(body.block(AUTOSCALE.name).value("max"))
    return int(body.value("replicas"))


def surge(plan: Plan) -> int | None:
    """Replicas an update adds: as written, else 1 when one more fits the budget, else 0.

    None without a budget and without `rollout { surge }`: nothing to go by, so the workloads
    keep their behaviour without the pack (a Deployment recreates, a LeaderWorkerSet takes the
    controller's default).
    """
    written = plan.target(KIND).block(ROLLOUT.name).value("surge")
    if written is not None:
        return int(written)
    limit = budget(plan)
    if limit is None:
        return None
    return 1 if (peak(plan) + 1) * cost(plan).replica <= limit else 0


def floor(plan: Plan) -> int:
    """The fewest replicas the deployment runs: the autoscaler's minimum, else `replicas`."""
    body = plan.target(KIND)
    if autoscaled(plan):
        return int(body.block(AUTOSCALE.name).value("min"))
    return int(body.value("replicas"))


def unavailable(plan: Plan) -> int:
    """Replicas an update stops before their replacements are ready: none with a surge, else one
    at a time (both workloads' rolling update with maxSurge 0, maxUnavailable 1)."""
    return 0 if surge(plan) else 1


def serving_during_update(plan: Plan) -> int:
    """Replicas still serving at the worst moment of an update, from the fewest there may be."""
    return max(floor(plan) - unavailable(plan), 0)


def target(plan: Plan) -> int:
    """`autoscale.target`, else the metric's own default."""
    block = plan.target(KIND).block(AUTOSCALE.name)
    written = block.value("target")
    return int(written) if written is not None else TARGET[str(block.value("metric"))]
