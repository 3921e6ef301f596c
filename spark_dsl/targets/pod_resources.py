"""What a Kubernetes pod asks the scheduler for: CPU, memory, disk, RDMA devices, the model cache.

Defaults are this project's own sizing (docs/targets.md, "Kubernetes"); the device resource names
and the IPC_LOCK capability come from the device plugins' documentation.
"""

from __future__ import annotations

import math
from typing import Any

from spark_dsl.plan.weights import ready_budget, staging
from spark_dsl.targets import model_cache
from spark_dsl.targets.common import MODEL_CACHE, Job, binary_size
from spark_dsl.values import Volume

GIB = 1 << 30
QUANTITY_UNITS = (("Ti", 1 << 40), ("Gi", GIB), ("Mi", 1 << 20), ("Ki", 1 << 10))
CPU_PER_GPU = 4
MEMORY_PER_GPU = 16 * GIB
# Without an emptyDir cache the pod's own disk holds logs and vLLM's compile caches.
SMALL_EPHEMERAL_STORAGE = 50 * GIB
ROUTER_REQUESTS = {"cpu": 1, "memory": "2Gi"}
# The staging Job's downloader asks for little: `hf download` streams to disk. Our own sizing.
DOWNLOADER_REQUESTS = {"cpu": 2, "memory": "4Gi"}
# `fabric` -> device-plugin resource. EFA: the AWS EFA device plugin's `vpc.amazonaws.com/efa`.
# InfiniBand/RoCE: the `rdma_resource` setting, by default the name NVIDIA's network operator and
# Mellanox's k8s-rdma-shared-dev-plugin document (`rdma/rdma_shared_device_a`).
EFA_RESOURCE = "vpc.amazonaws.com/efa"
RDMA_FABRICS = ("infiniband", "roce", "efa")
# EFA's libfabric provider takes its internal buffers from the huge-page pool by default
# (ofiwg/libfabric issue #9739), which a pod reaches only by requesting `hugepages-2Mi` (Kubernetes,
# "Manage HugePages": requests equal to limits, with a CPU or memory request beside them). AWS's
# EKS EFA example asks for 5120Mi next to `vpc.amazonaws.com/efa`
# (aws-samples/awsome-distributed-training, micro-benchmarks/nccl-tests/kubernetes/nccl-tests.yaml);
# the amount is the node's, so it is the `hugepages` setting (docs/targets.md, "Fabric").
HUGEPAGES_RESOURCE = "hugepages-2Mi"
HUGEPAGE = 2 << 20
HUGEPAGES_DEFAULT = 5120 << 20
# vLLM's image runs `vllm serve` as its ENTRYPOINT (vllm-project/vllm, docker/Dockerfile, the
# `vllm-openai` stage); a container that sets `command` replaces it (Kubernetes, "Define a Command
# and Arguments for a Container").
IMAGE_ENTRYPOINT = ("vllm", "serve")
PERIOD_SECONDS = 10


def quantity(size: int) -> str:
    """A byte count as a Kubernetes quantity: exact binary units when they fit, else rounded up to Gi."""
    return binary_size(size, QUANTITY_UNITS) or f"{math.ceil(size / GIB)}Gi"


def cache_volume(job: Job) -> Volume:
    return model_cache.volume(job.plan)


def fabric(job: Job) -> str | None:
    value = job.runtime_value("fabric")
    return str(value) if value else None


def devices(job: Job) -> dict[str, int]:
    """The RDMA devices of a vLLM pod: `rdma_devices`, by default one per GPU.

    How many a node has depends on the machine, not on its GPUs (AWS's EKS example asks for all 32
    EFA interfaces of an 8-GPU p5.48xlarge; a shared-device plugin counts shares, and NVIDIA's
    network operator examples ask for one), so the count is a setting (docs/targets.md, "Fabric").
    """
    chosen = fabric(job)
    count = int(job.setting("rdma_devices") or job.gpus)
    if chosen == "efa":
        return {EFA_RESOURCE: count}
    if chosen in ("infiniband", "roce"):
        return {str(job.setting("rdma_resource")): count}
    return {}


def hugepages(job: Job) -> dict[str, str]:
    """`hugepages-2Mi` of a vLLM pod on EFA: the `hugepages` setting, rounded up to whole 2 MiB
    pages (a quantity the kubelet can hand out), and none when it is 0."""
    if fabric(job) != "efa":
        return {}
    size = int(job.setting("hugepages"))
    pages = math.ceil(size / HUGEPAGE)
    return {HUGEPAGES_RESOURCE: f"{pages * HUGEPAGE >> 20}Mi"} if pages else {}


def keeps_entrypoint(job: Job) -> bool:
    """Whether the vLLM containers give only `args` and keep the image's ENTRYPOINT: on EFA, where an
    image's entrypoint may be what sets up libfabric and aws-ofi-nccl before `vllm serve` runs."""
    return fabric(job) == "efa"


def entrypoint_lines(job: Job) -> list[str]:
    """The header's note on EFA's containers, which name no program of their own."""
    if not keeps_entrypoint(job):
        return []
    words = " ".join(IMAGE_ENTRYPOINT)
    return [
        f"fabric = efa: the vLLM containers give only arguments, so the image's ENTRYPOINT runs them"
        f" (`{words}` in vLLM's image); an EFA image's entrypoint must end in `{words}` too."
    ]


def security_context(job: Job) -> dict[str, Any] | None:
    """RDMA registers (pins) memory, which needs CAP_IPC_LOCK in the container."""
    if fabric(job) in RDMA_FABRICS:
        return {"capabilities": {"add": ["IPC_LOCK"]}}
    return None


def default_memory(job: Job) -> int:
    """16GiB per GPU and the shared memory; on vLLM's CPU backend also the host memory its weights
    and KV cache live in (`runtime.host_memory`)."""
    shm = int(job.runtime_value("shm_size") or 0)
    host = int(job.runtime_value("host_memory") or 0) if job.plan.accelerator.on_host else 0
    return MEMORY_PER_GPU * job.gpus + shm + host


def vllm_resources(job: Job, gpu_resource: str | None) -> dict[str, Any]:
    """`gpu_resource` None: no GPU to request (vLLM's CPU backend)."""
    staged = staging(job.plan)
    cpu = job.setting("cpu") or CPU_PER_GPU * job.gpus
    memory = job.setting("memory") or default_memory(job)
    storage = job.setting("ephemeral_storage")
    if storage is None:
        storage = model_cache.emptydir_size(staged) if cache_volume(job).kind == "emptydir" else SMALL_EPHEMERAL_STORAGE
    pages = hugepages(job)  # in both: Kubernetes requires a huge-page request equal to its limit
    limits = {**({gpu_resource: job.gpus} if gpu_resource else {}), **devices(job), **pages}
    requests = {
        "cpu": int(cpu),
        "memory": quantity(int(memory)),
        "ephemeral-storage": quantity(int(storage)),
        **pages,
    }
    return {"limits": limits, "requests": requests} if limits else {"requests": requests}


def claim(job: Job, name: str, namespace: str, labels: dict[str, str]) -> dict[str, Any] | None:
    """The PersistentVolumeClaim spark creates: `model_cache = pvc(...)` with a `cache_size`, or
    its own shared claim when several pods read the weights (model_cache.py)."""
    volume = cache_volume(job)
    size = model_cache.claim_size(job.plan)
    if volume.kind != "pvc" or size is None:
        return None
    shared = model_cache.readers(job.plan) > 1
    spec: dict[str, Any] = {
        # Several pods on several nodes mount it at once: only ReadWriteMany allows that.
        "accessModes": ["ReadWriteMany" if shared else "ReadWriteOnce"],
        "resources": {"requests": {"storage": quantity(int(size))}},
    }
    storage_class = job.setting("storage_class")
    if storage_class:
        spec["storageClassName"] = storage_class
    return {
        "apiVersion": "v1",
        "kind": "PersistentVolumeClaim",
        "metadata": {"name": volume.name or name, "namespace": namespace, "labels": labels},
        "spec": spec,
    }


def download_containers(job: Job, image: str, token: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Init containers that fill the pod's own cache before vLLM starts (`weights { download = true }`)
    with an emptyDir or hostPath cache; a shared claim is filled by the staging Job instead."""
    staged = staging(job.plan)
    if not staged.download or model_cache.staged_by_job(job.plan):
        return []
    out = []
    for i, repository in enumerate(staged.repositories, start=1):
        container: dict[str, Any] = {
            "name": f"download-{i}",
            "image": image,
            "command": ["hf"],
            "args": ["download", repository.replace("$", "$$")],
        }
        if token:
            container["env"] = token
        container["volumeMounts"] = [{"name": "model-cache", "mountPath": MODEL_CACHE}]
        out.append(container)
    return out


def startup_failures(job: Job) -> int:
    """Startup probe failures allowed: the deployment's ready budget, which every waiter shares."""
    return math.ceil(ready_budget(job.plan).seconds / PERIOD_SECONDS)
