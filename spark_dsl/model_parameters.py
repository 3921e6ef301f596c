"""`parameters` and `active_parameters` of an imported model, each with where it was read.

The total is the safetensors index's own count (`metadata.total_parameters`, which newer
`huggingface_hub` uploads write) or else the stored bytes over the bytes of one stored weight: a
bfloat16 checkpoint of 16,060,522,496 bytes holds 8,030,261,248 weights. A quantized checkpoint
packs its weights (and keeps scales beside them), so its bytes give no count: without the index's
count no `parameters` line is written rather than a wrong one.

The active count of a mixture of experts is the total less the routed experts a token does not
use: (experts - experts_per_token) x the parameters of one expert (gate, up and down projections:
3 x hidden_size x the expert's intermediate size) x the layers that have experts. Shared experts
and dense layers are always active, so they stay in. For Qwen3 30B A3B this gives 3.35B of
30.53B, Qwen's own "3.3B activated".
"""

from __future__ import annotations

from typing import Any

# The keys config.json names its routed experts with (the importer's `_experts` reads the same).
EXPERT_KEYS = ("num_local_experts", "num_experts", "n_routed_experts")


def parameter_facts(
    config: Any, total_bytes: int, source: str, metadata: dict[str, Any], stored: int | None
) -> list[tuple[str, str, str]]:
    """`parameters` and `active_parameters` as (key, value, source), or nothing when the
    checkpoint's bytes give no count. `config` is the importer's view of config.json (its `get`
    reads the text model's section first)."""
    counted = metadata.get("total_parameters")
    if isinstance(counted, int) and not isinstance(counted, bool) and counted > 0:
        total, where = counted, "model.safetensors.index.json: metadata.total_parameters"
    elif stored is not None:
        total, where = total_bytes // stored, f"{source} / {stored} bytes a stored weight"
    else:
        return []
    facts = [("parameters", str(total), where)]
    inactive = _inactive(config)
    if inactive is None:
        facts.append(("active_parameters", str(total), "dense: every parameter is active"))
    elif 0 < inactive[0] < total:
        facts.append(("active_parameters", str(total - inactive[0]), inactive[1]))
    return facts


def _inactive(config: Any) -> tuple[int, str] | None:
    """The routed-expert parameters a token does not use and how they were counted; None if dense."""
    experts = next((config.get(k) for k in EXPERT_KEYS if _whole(config.get(k))), 0)
    per_token = config.get("num_experts_per_tok")
    if not experts or not _whole(per_token):
        return None
    hidden = config.get("hidden_size")
    layers = config.get("num_hidden_layers")
    ffn_key = "moe_intermediate_size" if _whole(config.get("moe_intermediate_size")) else "intermediate_size"
    ffn = config.get(ffn_key)
    if not (_whole(hidden) and _whole(layers) and _whole(ffn)):
        return (0, "")
    moe_layers, which = _expert_layers(config, layers)
    unused = (experts - per_token) * 3 * hidden * ffn * moe_layers
    how = (
        f"parameters - ({experts} - {per_token} experts a token skips) x 3 x hidden_size {hidden} x "
        f"{ffn_key} {ffn} x {moe_layers} expert layers ({which})"
    )
    return unused, how


def _expert_layers(config: Any, layers: int) -> tuple[int, str]:
    """How many layers have routed experts, as the publishers' configs say it."""
    first_dense = config.get("first_k_dense_replace")  # DeepSeek V3, Kimi K2: the first k are dense
    if _whole(first_dense):
        return layers - first_dense, f"all but the first_k_dense_replace {first_dense}"
    step = config.get("interleave_moe_layer_step")  # Llama 4: every step-th layer
    if _whole(step) and step > 1:
        return layers // step, f"every interleave_moe_layer_step {step}th"
    step = config.get("decoder_sparse_step")  # Qwen MoE: every step-th, but mlp_only_layers
    dense = config.get("mlp_only_layers")
    if _whole(step):
        skipped = {i for i in dense if isinstance(i, int)} if isinstance(dense, list) else set()
        count = sum(1 for i in range(layers) if (i + 1) % step == 0 and i not in skipped)
        return count, f"decoder_sparse_step {step}, less mlp_only_layers"
    return layers, "every layer"


def _whole(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value > 0
