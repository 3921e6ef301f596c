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
    per_layer = layer_bytes_per_token(arch, pool.tp, dtype_bytes)
    tokens = plan.value("max_model_len") or plan.model.max_context
    sliding, chunked = arch.sliding_window_layers, arch.chunked_attention_layers
    if plan.accelerator.on_host:
        # vLLM turns its hybrid KV cache manager off where the platform lacks it (the CPU backend:
        # vllm/config/vllm.py:2224-2265), and then every layer keeps all its tokens
        # (unify_hybrid_kv_cache_specs, vllm/v1/core/kv_cache_planning.py:853-876).
        sliding = chunked = 0
    in_flight = in_flight_tokens(plan, pool)
    return CapacityEstimate(
        role=pool.role,
        replica_gpus=pool.replica_gpus,
        memory_per_gpu_gb=memory_per_gpu_gb,
        utilization=utilization,
        weights_gb=plan.checkpoint.weights_gb,
        draft_gb=_draft_gb(plan),
        kv_bytes_per_token=(arch.layers - sliding - chunked) * per_layer,
        sliding_bytes_per_token=sliding * per_layer,
        sliding_tokens=sliding_tokens(arch.sliding_window, in_flight, tokens) if sliding else 0,
        chunked_bytes_per_token=chunked * per_layer,
        chunked_tokens=chunked_tokens(arch.attention_chunk_size, in_flight, tokens) if chunked else 0,
        sliding_steady_tokens=sliding_tokens(arch.sliding_window, 0, tokens) if sliding else 0,
        chunked_steady_tokens=chunked_tokens(arch.attention_chunk_size, 0, tokens) if chunked else 0,
        sequence_tokens=tokens,
    )


def layer_bytes_per_token(arch: catalog.Architecture, tp: int, dtype_bytes: int) -> int:
    """KV-cache bytes one token takes in one layer, summed over the TP ranks of the replica that
    hold that layer: vLLM's `page_size_bytes` of the layer's spec over its block size.

    Attention with KV heads: K and V of head_dim each per KV head
    (`AttentionSpec.page_size_bytes`, vllm/v1/kv_cache_interface.py:585-601: num_kv_heads x
    (head_size + head_size_v) x dtype bytes). Each rank holds max(1, KV heads / TP) of them
    (vllm/config/model.py:1683), so when TP exceeds the KV heads each head is on TP / KV-heads
    ranks. Attention sinks (gpt-oss) are weights and add nothing: `Attention.get_kv_cache_spec`
    (vllm/model_executor/layers/attention/attention.py:611-678) never reads them.

    Multi-head latent attention: one latent of kv_lora_rank + qk_rope_head_dim per token
    (mla_attention.py:480), one "head" with no separate V (`MLAAttentionSpec`,
    kv_cache_interface.py:742-743; `num_kv_heads=1, max_tp_shards=1`, mla_attention.py:1371-1402),
    held whole on every TP rank (`_layer_tp_replicas`, vllm/v1/core/kv_cache_planning.py:1233-1238).
    """
    if arch.mla:
        return tp * (arch.kv_lora_rank + arch.qk_rope_head_dim) * dtype_bytes
    replicated = tp // arch.kv_heads if tp > arch.kv_heads and not tp % arch.kv_heads else 1
    return 2 * arch.kv_heads * replicated * arch.head_dim * dtype_bytes


# vLLM's default KV-cache block (vllm/config/cache.py:185, DEFAULT_BLOCK_SIZE): the unit a
# sliding-window or chunked layer's reservation is rounded up to.
BLOCK_TOKENS = 16


def sliding_tokens(window: int, in_flight: int, max_model_len: int) -> int:
    """The tokens vLLM reserves per sequence in a sliding-window layer
    (`SlidingWindowSpec.max_num_blocks_per_req`, vllm/v1/kv_cache_interface.py:937-944): the
    window less one plus the tokens in flight, at most max_model_len, in whole blocks, plus a block
    because the window may start inside one."""
    return (ceil(min(window - 1 + in_flight, max_model_len) / BLOCK_TOKENS) + 1) * BLOCK_TOKENS


def chunked_tokens(chunk: int, in_flight: int, max_model_len: int) -> int:
    """The tokens vLLM reserves per sequence in a chunked-local-attention layer
    (`ChunkedLocalAttentionSpec`, vllm/v1/kv_cache_interface.py:878-881): a chunk plus the
    tokens in flight, at most max_model_len, in whole blocks."""
    return ceil(min(chunk + in_flight, max_model_len) / BLOCK_TOKENS) * BLOCK_TOKENS


def in_flight_tokens(plan: Plan, pool: Pool) -> int:
    """vLLM's `max_in_flight_tokens` (vllm/config/vllm.py:601-609): concurrent batches x
    max_num_batched_tokens. The batches are the pipeline's stages plus one, the most either model
    runner keeps in flight with async scheduling (on by default, vllm/config/vllm.py:587-598 and
    1685-1719); the batch is vLLM's default for the accelerator (`default_batched_tokens`)."""
    return (pool.pp + 1) * default_batched_tokens(plan.accelerator, pool.replica_gpus)


def default_batched_tokens(accelerator: catalog.Accelerator, world_size: int) -> int:
    """vLLM's default `max_num_batched_tokens` for its OpenAI server (vllm/engine/arg_utils.py:
    2975-3034): 16,384 on GPUs of at least 160 GiB, 8,192 on those of at least 70 GiB but A100,
    2,048 on smaller ones, and 2,048 per rank on the CPU backend."""
    if accelerator.memory_gb is None:
        return 2048 * world_size
    gib = accelerator.memory_gb * 1e9 / GIB
    if gib >= 160:
        return 16384
    return 8192 if gib >= 70 and "a100" not in accelerator.id else 2048


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
