"""Where a Kubernetes deployment keeps its weights, and who downloads them: once per deployment.

Several vLLM pods read the same weights whenever a replica spans nodes (a LeaderWorkerSet group),
P/D runs two pools, or there is more than one replica. Each pod with its own `emptyDir` fetches
the whole checkpoint itself, and a LeaderWorkerSet recreates its whole group when any pod restarts
(`RecreateGroupOnPodRestart`), fetching it again. So the default cache of such a deployment is one
claim all its pods mount (`ReadWriteMany`), sized like the download, and `weights.download` fills
it with one staging Job whose completion marker every serving pod waits for (docs/targets.md,
"Weights"). A single pod keeps `emptyDir`, and its download stays an init container of that pod.
"""

from __future__ import annotations

import hashlib
import math

from spark_dsl.plan.model import Plan
from spark_dsl.plan.weights import Staging, staging
from spark_dsl.targets import kubernetes_budget
from spark_dsl.values import Volume

KIND = "kubernetes"
GIB = 1 << 30
MARKERS = ".spark-staged"  # a folder in the cache: one empty file per staged set of repositories
# How long a serving pod's wait for the marker outlasts the staging Job's own deadline: the
# Job's pod is scheduled and pulls its image before the Job's clock (activeDeadlineSeconds)
# runs down, while the waiters start their clocks when their own pods start. Our own margin.
WAIT_MARGIN_SECONDS = 600


def readers(plan: Plan) -> int:
    """vLLM pods that read the weights at the deployment's peak: every pool's nodes, per replica."""
    return plan.total_nodes * kubernetes_budget.peak(plan)


def written(plan: Plan) -> Volume | None:
    setting = plan.target(KIND).setting("model_cache")
    return None if setting is None else setting.value


def default_claim(plan: Plan) -> str:
    return f"{plan.name}-model-cache"


def volume(plan: Plan) -> Volume:
    """`model_cache` as written, else one shared claim when several pods read the weights, else emptyDir."""
    chosen = written(plan)
    if chosen is not None:
        return chosen
    return Volume("pvc", default_claim(plan)) if readers(plan) > 1 else Volume("emptydir")


def claim_size(plan: Plan) -> int | None:
    """The size of the claim spark creates: `cache_size`, else for its own default claim the
    download plus a tenth; None when the claim must already exist."""
    written_size = plan.target(KIND).value("cache_size")
    if written_size is not None:
        return int(written_size)
    if written(plan) is None and volume(plan).kind == "pvc":
        return emptydir_size(staging(plan))
    return None


def emptydir_size(staged: Staging) -> int:
    """The checkpoint (and draft) plus a tenth for the cache's metadata and partial downloads."""
    return math.ceil(staged.size_bytes * 1.1 / GIB) * GIB


def staged_by_job(plan: Plan) -> bool:
    """One staging Job fills a claim every pod mounts; an emptyDir or hostPath is per pod or per node."""
    staged = staging(plan)
    return staged.download and bool(staged.repositories) and volume(plan).kind == "pvc"


def marker(plan: Plan) -> str:
    """The completion marker's file name: it changes with what is staged, so a new model restages."""
    digest = hashlib.sha256("\n".join(staging(plan).repositories).encode()).hexdigest()[:16]
    return f"{MARKERS}/{digest}"


def wait_seconds(plan: Plan) -> int:
    """A serving pod's budget for the marker: the staging Job's deadline plus the margin."""
    return staging(plan).timeout + WAIT_MARGIN_SECONDS
