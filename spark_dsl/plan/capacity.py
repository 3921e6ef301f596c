"""Capacity arithmetic: weights, draft model and KV cache of one replica against its GPU memory."""

from __future__ import annotations

from spark_dsl import catalog
from spark_dsl.plan.model import CapacityEstimate, Plan, Pool


def estimate(plan: Plan, pool: Pool) -> CapacityEstimate | None:
    if plan.checkpoint is None:
        return None
    arch = plan.model.architecture
    dtype_bytes = catalog.load().recipe.kv_cache_dtypes[plan.value("kv_cache_dtype")]
    # K and V of every KV head; vLLM keeps each KV head on TP / KV-heads ranks when TP exceeds them.
    replicated = pool.tp // arch.kv_heads if pool.tp > arch.kv_heads and not pool.tp % arch.kv_heads else 1
    per_layer = 2 * arch.kv_heads * replicated * arch.head_dim * dtype_bytes
    speculative = plan.value("speculative")
    utilization = plan.value("gpu_memory_utilization") or plan.thresholds.gpu_memory_utilization
    return CapacityEstimate(
        role=pool.role,
        replica_gpus=pool.replica_gpus,
        memory_per_gpu_gb=plan.accelerator.memory_gb,
        utilization=utilization,
        weights_gb=plan.checkpoint.weights_gb,
        draft_gb=plan.model.draft.weights_gb if speculative.mode == "dspark" and plan.model.draft else 0.0,
        kv_bytes_per_token=arch.full_attention_layers * per_layer,
        sliding_bytes_per_token=arch.sliding_window_layers * per_layer,
        sliding_window=arch.sliding_window,
        sequence_tokens=plan.value("max_model_len") or plan.model.max_context,
    )


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
