"""Capacity arithmetic: weights, draft model and KV cache of one replica against its GPU memory.

On vLLM's CPU backend (`Accelerator.on_host`) the memory is the host's: each node gives its ranks
`runtime.host_memory`, shared evenly, and each rank's KV cache is what its share leaves after its
share of the weights (`kv_cache_bytes`), the size the launches hand vLLM."""

from __future__ import annotations

from math import ceil

from spark_dsl import catalog
from spark_dsl.plan.model import CapacityEstimate, Plan, Pool

MIB = 1 << 20
GIB = 1 << 30


def host_memory(plan: Plan) -> int | None:
    """The host memory each node gives vLLM (bytes), on an accelerator whose memory is the host's."""
    if not plan.accelerator.on_host:
        return None
    value = plan.runtime.value("host_memory")
    return None if value is None else int(value)


def _draft_gb(plan: Plan) -> float:
    speculative = plan.value("speculative")
    return plan.model.draft.weights_gb if speculative.mode == "dspark" and plan.model.draft else 0.0


def kv_cache_bytes(plan: Plan, pool: Pool) -> int | None:
    """vLLM's CPU backend: the KV cache of each rank of the pool (`--kv-cache-memory-bytes`): its
    share of the node's host memory less its share of the replica's weights and draft, in whole
    MiB, rounded down. None off the host, or without the host memory (SPK233 asks for it)."""
    host = host_memory(plan)
    if host is None or plan.checkpoint is None:
        return None
    per_rank = host // int(plan.value("gpus"))
    weights = round((plan.checkpoint.weights_gb + _draft_gb(plan)) * 1e9)
    left = per_rank - (weights + pool.replica_gpus - 1) // pool.replica_gpus  # its share, rounded up
    return max(0, left) // MIB * MIB


def estimate(plan: Plan, pool: Pool) -> CapacityEstimate | None:
    if plan.checkpoint is None:
        return None
    if plan.accelerator.on_host:
        host = host_memory(plan)
        if host is None:
            return None
        # A rank's share of the host memory, all of it for weights and KV cache: no utilization.
        return _estimate(plan, pool, host / 1e9 / int(plan.value("gpus")), 1.0)
    assert plan.accelerator.memory_gb is not None
    utilization = plan.value("gpu_memory_utilization") or plan.thresholds.gpu_memory_utilization
    return _estimate(plan, pool, plan.accelerator.memory_gb, utilization)


def _estimate(plan: Plan, pool: Pool, memory_per_gpu_gb: float, utilization: float) -> CapacityEstimate:
    assert plan.checkpoint is not None
    arch = plan.model.architecture
    dtype_bytes = catalog.load().recipe.kv_cache_dtypes[plan.value("kv_cache_dtype")]
    # K and V of every KV head; vLLM keeps each KV head on TP / KV-heads ranks when TP exceeds them.
    replicated = pool.tp // arch.kv_heads if pool.tp > arch.kv_heads and not pool.tp % arch.kv_heads else 1
    per_layer = 2 * arch.kv_heads * replicated * arch.head_dim * dtype_bytes
    return CapacityEstimate(
        role=pool.role,
        replica_gpus=pool.replica_gpus,
        memory_per_gpu_gb=memory_per_gpu_gb,
        utilization=utilization,
        weights_gb=plan.checkpoint.weights_gb,
        draft_gb=_draft_gb(plan),
        kv_bytes_per_token=arch.full_attention_layers * per_layer,
        sliding_bytes_per_token=arch.sliding_window_layers * per_layer,
        sliding_window=arch.sliding_window,
        sequence_tokens=plan.value("max_model_len") or plan.model.max_context,
    )


def host_memory_needed(plan: Plan) -> int | None:
    """vLLM's CPU backend: the least `runtime.host_memory` that holds, on every node, its ranks'
    share of the weights, the draft and one full-length sequence's KV cache, with at least the
    catalog's KV headroom fraction left after the weights (SPK302), rounded up to whole GiB.
    What SPK233, SPK301 and SPK302 suggest. None off the host."""
    if not plan.accelerator.on_host or plan.checkpoint is None:
        return None
    gpus = int(plan.value("gpus"))
    fraction = plan.thresholds.kv_headroom_fraction
    need = 0
    for pool in plan.pools:
        est = _estimate(plan, pool, 0.0, 1.0)
        weights = (est.weights_gb + est.draft_gb) * 1e9
        replica = max(weights + est.sequence_bytes, weights / (1 - fraction))
        need = max(need, ceil(replica / pool.replica_gpus) * gpus)
    return ceil(need / GIB) * GIB


def estimate_all(plan: Plan) -> tuple[CapacityEstimate, ...]:
    """One estimate per distinct replica shape (pools with the same TP share one)."""
    out: list[CapacityEstimate] = []
    seen: set[int] = set()
    for pool in plan.pools:
        if pool.replica_gpus in seen:
            continue
        est = estimate(plan, pool)
        if est is not None:
            seen.add(pool.replica_gpus)
            out.append(est)
    return tuple(out)
