"""Capacity rules (SPK301-SPK304): weights, draft model and KV cache against one replica's memory."""

from __future__ import annotations

from collections.abc import Iterator
from math import ceil

from spark_dsl.plan.model import CapacityEstimate, Plan
from spark_dsl.rules.registry import Finding, rule


def _replica(est: CapacityEstimate, plan: Plan) -> str:
    role = "" if est.role == "server" else f" ({est.role} pool)"
    return (
        f"{est.replica_gpus} x {plan.accelerator.id.upper()}{role}: {est.replica_gpus} x "
        f"{est.memory_per_gpu_gb:g} GB x {est.utilization:g} = {est.memory_per_replica_gb:g} GB"
    )


def _smaller_checkpoints(plan: Plan, est: CapacityEstimate) -> str:
    """The help of SPK301: validated checkpoints of this vendor that fit, if any do."""
    from spark_dsl import catalog

    validated = catalog.load().recipe["validated_checkpoints"][plan.path]
    fits = [
        c for c in validated
        if plan.model.checkpoints[c].weights_gb <= est.memory_per_replica_gb and (c != "nvfp4" or plan.accelerator.fp4)
    ]  # fmt: skip
    if fits:
        return f"use `checkpoint = {fits[0]}`, or accelerators with more memory"
    return "use more GPUs per replica (all of a node's GPUs) or accelerators with more memory"


def _left(est: CapacityEstimate) -> str:
    if est.headroom_gb < 0:
        used = est.weights_gb + est.draft_gb
        return f"nothing is left after weights and draft model ({used:g} GB of {est.memory_per_replica_gb:g} GB)"
    return f"only {est.headroom_gb:g} GB of {est.memory_per_replica_gb:g} GB is left"


def _weights_note(plan: Plan, est: CapacityEstimate) -> tuple[str, None]:
    draft = f" + DSpark draft {est.draft_gb:g} GB" if est.draft_gb else ""
    return (f"weights: {plan.checkpoint.id if plan.checkpoint else '?'} {est.weights_gb:g} GB{draft}", None)


@rule(
    "SPK301",
    "error",
    "weights exceed one replica's memory",
    checks="The chosen checkpoint's weights exceed the memory of one model replica: GPUs per replica x "
    "per-GPU memory x gpu_memory_utilization. A replica is one tensor-parallel group.",
    basis="The recipe sizes the checkpoints before KV cache: BF16 about 1.64 TB, Quark MXFP4 about "
    "509 GB, NVFP4 about 533 GB. BF16 on 8 x B200 needs 1.64 TB > 1.44 TB x 0.92 = 1.325 TB.",
    failing="accelerator = b200\ncheckpoint  = bf16",
    fixed="accelerator = b200\ncheckpoint  = nvfp4",
)
def weights_fit(plan: Plan) -> Iterator[Finding]:
    for est in plan.capacity:
        if est.weights_gb > est.memory_per_replica_gb:
            ckpt, gpus = plan.settings.get("checkpoint"), plan.settings["gpus"]
            at = ckpt if ckpt is not None and ckpt.explicit else gpus if gpus.explicit else ckpt
            yield Finding(
                f"{plan.value('checkpoint')} weights ({est.weights_gb:g} GB) exceed one replica's memory "
                f"({_replica(est, plan)})",
                at,
                _smaller_checkpoints(plan, est),
                label=f"{est.weights_gb:g} GB of weights",
            )
            return


@rule(
    "SPK302",
    "warning",
    "little memory left for KV cache",
    checks="After the weights and the draft model, less than 10% of a replica's memory is left for KV "
    "cache and activations.",
    basis="The recipe says capacity planning starts from the checkpoint; a replica this full serves "
    "very few tokens at a time.",
    failing="accelerator = gb200\ngpus        = 4\ncheckpoint  = nvfp4\ngpu_memory_utilization = 0.78",
    fixed="accelerator = gb200\ngpus        = 4\ncheckpoint  = nvfp4",
    suppressed_by=("SPK301",),
)
def headroom(plan: Plan) -> Iterator[Finding]:
    fraction = plan.threshold("kv_headroom_fraction")
    for est in plan.capacity:
        if est.headroom_gb < fraction * est.memory_per_replica_gb:
            ckpt, util = plan.settings.get("checkpoint"), plan.settings.get("gpu_memory_utilization")
            at = ckpt if ckpt is not None and ckpt.explicit else util if util is not None else ckpt
            yield Finding(
                f"{_left(est)}: less than {fraction:.0%} remains for KV cache and activations",
                at,
                "use a smaller checkpoint, drop the draft model, or raise `gpu_memory_utilization`",
                notes=(_weights_note(plan, est),),
            )
            return


@rule(
    "SPK303",
    "error",
    "one full-length sequence does not fit",
    checks="The KV cache of one sequence of `max_model_len` tokens does not fit in what is left after "
    "weights and draft model. KV bytes per token: 16 full-attention layers x 2 x 16 KV heads x 64 x "
    "dtype bytes, plus the 46 sliding-window layers for at most 2,048 tokens.",
    basis="vLLM refuses to start when one sequence of the configured length cannot be cached.",
    failing="accelerator   = gb200\nmax_model_len = 1M\ngpu_memory_utilization = 0.78",
    fixed="accelerator   = gb200\nmax_model_len = 256K\ngpu_memory_utilization = 0.78",
    suppressed_by=("SPK301",),
)
def one_sequence_fits(plan: Plan) -> Iterator[Finding]:
    for est in plan.capacity:
        if est.sequences_fit < 1:
            at = plan.settings.get("max_model_len")
            yield Finding(
                f"one sequence of {est.sequence_tokens:,} tokens needs {est.sequence_gb:g} GB of KV "
                f"cache, but {_left(est)}",
                at if at is not None and at.explicit else plan.settings.get("checkpoint"),
                "lower `max_model_len`, use `kv_cache_dtype = fp8`, or add memory",
                notes=(_weights_note(plan, est),),
            )
            return


@rule(
    "SPK304",
    "warning",
    "the requested sequences do not fit at full length",
    checks="Only when `max_num_seqs` or `workload.concurrency` is set: max(max_num_seqs, "
    "ceil(concurrency / data-parallel replicas)) sequences of full length do not fit in one "
    "replica's KV cache. The message says how many do.",
    basis="The recipe pairs concurrency advice with context limits; vLLM preempts sequences that do "
    "not fit, so the configured concurrency would not be reached at full length.",
    failing="accelerator   = gb200\ncheckpoint    = nvfp4\nmax_model_len = 1M\nmax_num_seqs  = 4",
    fixed="accelerator   = gb200\ncheckpoint    = nvfp4\nmax_model_len = 1M\nmax_num_seqs  = 2",
    suppressed_by=("SPK301",),
)
def sequences_fit(plan: Plan) -> Iterator[Finding]:
    seqs = plan.settings.get("max_num_seqs")
    conc = plan.settings.get("concurrency")
    if seqs is None and conc is None:
        return
    replicas = max(p.dp_size for p in plan.pools)
    wanted = max(seqs.value if seqs else 0, ceil(conc.value / replicas) if conc else 0)
    at = seqs if seqs is not None and (conc is None or seqs.value >= ceil(conc.value / replicas)) else conc
    for est in plan.capacity:
        if est.sequences_fit >= 1 and wanted > est.sequences_fit:
            fit = est.sequences_fit
            yield Finding(
                f"{wanted} sequences of {est.sequence_tokens:,} tokens do not fit: only {fit} "
                f"full-length sequence{'s' if fit != 1 else ''} fit{'s' if fit == 1 else ''} in "
                f"{est.headroom_gb:g} GB ({est.sequence_gb:g} GB each)",
                at,
                f"set `max_num_seqs = {fit}`, lower `max_model_len`, or use `kv_cache_dtype = fp8`",
                replace_with=str(fit) if at is seqs else None,
            )
            return
