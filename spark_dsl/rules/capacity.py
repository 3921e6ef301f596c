"""Capacity rules (SPK301-SPK304): weights, draft model and KV cache against one replica's memory."""

from __future__ import annotations

from collections.abc import Iterator
from math import ceil

from spark_dsl import catalog
from spark_dsl.diagnostics import Fix
from spark_dsl.plan.model import CapacityEstimate, Plan, Pool, Resolved
from spark_dsl.rules import catalog_texts as facts
from spark_dsl.rules.cpu_backend import raise_host_memory
from spark_dsl.rules.registry import Finding, rule
from spark_dsl.rules.suggest import pool_parallel, replace_or_add, set_parallel, spelled
from spark_dsl.units import format_count


def _kv_formula() -> str:
    """The recipe model's KV bytes per token, as SPK303 explains them."""
    arch = facts.model().architecture
    return (
        f"{arch.full_attention_layers} full-attention layers x 2 x {arch.kv_heads} KV heads x {arch.head_dim} x "
        f"dtype bytes, plus the {arch.sliding_window_layers} sliding-window layers for at most "
        f"{facts.number(arch.sliding_window)} tokens"
    )


def max_num_seqs_allowed(plan: Plan) -> int:
    """The most sequences every rule allows at once: as many as fit at full length in each replica
    (SPK304) and, for long context on AMD, the recipe's limit (SPK213), so their hints agree."""
    limits = [est.sequences_fit for est in plan.capacity if est.sequences_fit >= 1]
    if plan.vendor.long_context_restricted and plan.long_context:
        limits.append(int(plan.thresholds.long_context_max_num_seqs))
    return max(1, min(limits)) if limits else 1


def _pool_of(plan: Plan, est: CapacityEstimate) -> Pool:
    return next(p for p in plan.pools if p.role == est.role)


def _tokens_that_fit(est: CapacityEstimate) -> int | None:
    """The longest `max_model_len` (a power of two of 1K tokens) whose one sequence fits, if any."""
    room = est.headroom_gb * 1e9 - est.windowed_bytes
    if room <= 0 or not est.kv_bytes_per_token:
        return None
    tokens = int(room // est.kv_bytes_per_token)
    best = None
    size = 1024
    while size <= tokens and size < est.sequence_tokens:
        best = size
        size *= 2
    return best


def _replica(est: CapacityEstimate, plan: Plan) -> str:
    role = "" if est.role == "server" else f" ({est.role} pool)"
    if plan.accelerator.on_host:  # vLLM's CPU backend: each rank's share of the host memory
        ranks = f"{est.replica_gpus} rank{'s' * (est.replica_gpus != 1)}"
        return (
            f"{ranks} of `{plan.accelerator.id}`{role}: {est.replica_gpus} x {est.memory_per_gpu_gb:g} GB "
            f"of `runtime.host_memory` = {est.memory_per_replica_gb:g} GB"
        )
    return (
        f"{est.replica_gpus} x {plan.accelerator.id.upper()}{role}: {est.replica_gpus} x "
        f"{est.memory_per_gpu_gb:g} GB x {est.utilization:g} = {est.memory_per_replica_gb:g} GB"
    )


def _smaller_checkpoints(plan: Plan, est: CapacityEstimate) -> str | None:
    """A validated checkpoint of this vendor whose weights fit the replica, if one does."""
    cat = catalog.load()
    # The recipe's model: the checkpoints its vendor validates; any other model: its own.
    recipe = plan.model.id == cat.recipe.model
    candidates = cat.validated_checkpoints(plan.path) if recipe else tuple(plan.model.checkpoints)
    fits = [
        c for c in candidates
        if c in plan.model.checkpoints
        and plan.model.checkpoints[c].weights_gb <= est.memory_per_replica_gb
        and (not plan.model.checkpoints[c].needs_fp4 or plan.accelerator.fp4)
    ]  # fmt: skip
    return fits[0] if fits else None


def _left(est: CapacityEstimate) -> str:
    if est.headroom_gb < 0:
        used = est.weights_gb + est.draft_gb
        return f"nothing is left after weights and draft model ({used:g} GB of {est.memory_per_replica_gb:g} GB)"
    return f"only {est.headroom_gb:g} GB of {est.memory_per_replica_gb:g} GB is left"


def _draft_kind(plan: Plan) -> str:
    """The draft's method as vLLM spells it (`eagle3`), or the catalog's name of the draft when
    that is the method's own name in other case (Muse Spark Open's `DSpark` for `dspark`)."""
    draft = plan.model.draft
    if draft is None:
        return "draft"
    return f"{draft.name if draft.name.lower() == draft.method else draft.method} draft"


def _weights_note(plan: Plan, est: CapacityEstimate) -> tuple[str, None]:
    draft = f" + {_draft_kind(plan)} {est.draft_gb:g} GB" if est.draft_gb else ""
    return (f"weights: {plan.checkpoint.id if plan.checkpoint else '?'} {est.weights_gb:g} GB{draft}", None)


def _sizing_basis() -> str:
    """SPK301's basis: the recipe model's checkpoint sizes, and its unquantized weights against a
    node of the first validated accelerator at the recipe's utilization."""
    cat = catalog.load()
    model = cat.recipe_model()
    # The checkpoints as published (a load-time conversion downloads another's weights).
    stored = [model.checkpoints[c] for c in cat.recipe.checkpoints if c in model.checkpoints]
    stored = [c for c in stored if c.converts_from is None]
    sizes = facts.spelled(f"{facts.checkpoint(c.id)} about {facts.size(c.weights_gb)}" for c in stored)
    accelerator = cat.validated_accelerators()[0]
    gpus, util = accelerator.gpus_per_node, cat.thresholds.gpu_memory_utilization
    node = (accelerator.memory_gb or 0) * gpus
    usable = round(node * util)
    # The unquantized checkpoint (the first weight format): the one that does not fit.
    full = next(c for c in stored if c.dtype == catalog.weight_formats()[0])
    fits = ">" if full.weights_gb > usable else "<="
    return (
        f"The recipe sizes the checkpoints before KV cache: {sizes}. {facts.checkpoint(full.id)} on {gpus} x "
        f"{accelerator.id.upper()} needs {facts.size(full.weights_gb)} {fits} {facts.size(node)} x {util:g} = "
        f"{facts.size(usable)}."
    )


@rule(
    "SPK301",
    "error",
    "weights exceed one replica's memory",
    checks="The chosen checkpoint's weights exceed the memory of one model replica: GPUs per replica x "
    "per-GPU memory x gpu_memory_utilization. A replica is one tensor-parallel group, times its "
    "pipeline stages (`pp(N)`).",
    basis=_sizing_basis,
)
def weights_fit(plan: Plan) -> Iterator[Finding]:
    for est in plan.capacity:
        if est.weights_gb > est.memory_per_replica_gb:
            at, help_text, fix, replace_with = _weights_culprit(plan, est)
            yield Finding(
                f"{plan.value('checkpoint')} weights ({est.weights_gb:g} GB) exceed one replica's memory "
                f"({_replica(est, plan)})",
                at,
                help_text,
                label=f"{est.weights_gb:g} GB of weights",
                fix=fix,
                replace_with=replace_with,
            )
            return


def _weights_culprit(plan: Plan, est: CapacityEstimate) -> tuple[Resolved | None, str, Fix | None, str | None]:
    """What makes the weights too big, and its fix: a replica smaller than the node, the written
    checkpoint, or a written `gpus` below the node's; else the accelerator, with no single fix."""
    ckpt, gpus = plan.setting("checkpoint"), plan.setting("gpus")
    pool = _pool_of(plan, est)
    node_gb = gpus.value * est.memory_per_gpu_gb * est.utilization
    if pool.tp < gpus.value and est.weights_gb <= node_gb:
        fitting = spelled(pool_parallel(plan, pool))
        message = f"use all of a node's GPUs per replica: `parallel = {fitting}`"
        return pool.parallel, message, set_parallel(plan, pool, pool_parallel(plan, pool), message), None
    host = raise_host_memory(plan)
    if host is not None:
        return host[0], host[1], host[2], None
    smaller = _smaller_checkpoints(plan, est)
    if ckpt is not None and ckpt.explicit and smaller is not None:
        return ckpt, f"use `checkpoint = {smaller}`, or accelerators with more memory", None, smaller
    whole = plan.accelerator.gpus_per_node
    if gpus.explicit and gpus.value < whole and est.weights_gb <= whole * est.memory_per_gpu_gb * est.utilization:
        return gpus, f"use all {whole} GPUs of a node: `gpus = {whole}`", None, str(whole)
    at = ckpt if ckpt is not None and ckpt.explicit else gpus if gpus.explicit else plan.setting("accelerator")
    return (
        at,
        "use accelerators with more memory, or a smaller checkpoint" + _over_nodes(plan, est, node_gb),
        None,
        None,
    )


def _over_nodes(plan: Plan, est: CapacityEstimate, node_gb: float) -> str:
    """For a model outside the recipe served by one replica: the pipeline over nodes that holds it
    (vLLM's advice for a model too large for one node; SPK229 caps the stages at the layers)."""
    (pool, *others) = plan.pools
    stages = ceil(est.weights_gb / node_gb) if node_gb > 0 else 0
    if plan.model.id == catalog.load().recipe.model or others or pool.dp is not None or pool.pp > 1:
        return ""
    if not 2 <= stages <= plan.model.architecture.layers:
        return ""
    return f", or a pipeline over {stages} nodes: `nodes = {stages}` and `parallel = tp + pp({stages})`"


@rule(
    "SPK302",
    "warning",
    "little memory left for KV cache",
    checks=lambda: (
        f"After the weights and the draft model, less than {facts.thresholds().kv_headroom_fraction:.0%} "
        "of a replica's memory is left for KV cache and activations."
    ),
    basis="The recipe says capacity planning starts from the checkpoint; a replica this full serves "
    "very few tokens at a time.",
    suppressed_by=("SPK301",),
)
def headroom(plan: Plan) -> Iterator[Finding]:
    fraction = plan.thresholds.kv_headroom_fraction
    for est in plan.capacity:
        if est.headroom_gb < fraction * est.memory_per_replica_gb:
            ckpt, util = plan.setting("checkpoint"), plan.setting("gpu_memory_utilization")
            at = ckpt if ckpt is not None and ckpt.explicit else util if util is not None else ckpt
            help_text = "use a smaller checkpoint, drop the draft model, or raise `gpu_memory_utilization`"
            fix = None
            # The utilization at which a tenth is left, rounded up to a hundredth; vLLM's own
            # ceiling of sense is about 0.95, so higher is not suggested.
            used = est.weights_gb + est.draft_gb
            needed = ceil(used / ((1 - fraction) * est.replica_gpus * est.memory_per_gpu_gb) * 100) / 100
            host = raise_host_memory(plan)
            if host is not None:  # the CPU backend reads no utilization: its memory is the host's
                at, help_text, fix = host
            elif needed <= 0.95:
                at = util if util is not None and util.explicit else at
                raised = f"gpu_memory_utilization = {needed:g}"
                help_text = f"set `{raised}`, use a smaller checkpoint, or drop the draft model"
                fix = replace_or_add(plan, "gpu_memory_utilization", f"{needed:g}", f"set `{raised}`")
            yield Finding(
                f"{_left(est)}: less than {fraction:.0%} remains for KV cache and activations",
                at,
                help_text,
                notes=(_weights_note(plan, est),),
                fix=fix,
            )
            return


@rule(
    "SPK303",
    "error",
    "one full-length sequence does not fit",
    checks=lambda: (
        "The KV cache of one sequence of `max_model_len` tokens does not fit in what is left after "
        f"weights and draft model. KV bytes per token, for {facts.model().display_name}: {_kv_formula()}."
    ),
    basis="vLLM refuses to start when one sequence of the configured length cannot be cached.",
    suppressed_by=("SPK301",),
)
def one_sequence_fits(plan: Plan) -> Iterator[Finding]:
    for est in plan.capacity:
        if est.sequences_fit < 1:
            at = plan.setting("max_model_len")
            fits = _tokens_that_fit(est)
            smaller = catalog.load().smallest_kv_cache_dtype()
            # Named only where it is not the KV cache already: else the help leads back to this spec.
            dtype = "" if plan.value("kv_cache_dtype") == smaller else f", use `kv_cache_dtype = {smaller}`"
            help_text = f"lower `max_model_len`{dtype}, or add memory"
            fix = None
            if fits is not None:
                shown = format_count(fits)
                help_text = f"lower `max_model_len` to {shown}{dtype}, or add memory"
                fix = replace_or_add(plan, "max_model_len", shown, f"set `max_model_len = {shown}`")
            yield Finding(
                f"one sequence of {est.sequence_tokens:,} tokens needs {est.sequence_gb:g} GB of KV "
                f"cache, but {_left(est)}",
                at if at is not None and at.explicit else plan.setting("checkpoint"),
                help_text,
                notes=(_weights_note(plan, est),),
                fix=fix,
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
    suppressed_by=("SPK301",),
)
def sequences_fit(plan: Plan) -> Iterator[Finding]:
    seqs = plan.setting("max_num_seqs")
    conc = plan.setting("concurrency")
    if seqs is None and conc is None:
        return
    replicas = max(p.dp_size for p in plan.pools)
    wanted = max(seqs.value if seqs else 0, ceil(conc.value / replicas) if conc else 0)
    at = seqs if seqs is not None and (conc is None or seqs.value >= ceil(conc.value / replicas)) else conc
    for est in plan.capacity:
        if est.sequences_fit >= 1 and wanted > est.sequences_fit:
            allowed = max_num_seqs_allowed(plan)  # what SPK213 asks for too, so the two never disagree
            smaller = catalog.load().smallest_kv_cache_dtype()
            fit = est.sequences_fit
            if at is seqs:
                value, change = allowed, f"set `max_num_seqs = {allowed}`"
            else:  # the concurrency asks for more per replica than max_num_seqs does
                value = allowed * replicas
                change = f"lower `workload.concurrency` to {value}"
            yield Finding(
                f"{wanted} sequences of {est.sequence_tokens:,} tokens do not fit: only {fit} "
                f"full-length sequence{'s' if fit != 1 else ''} fit{'s' if fit == 1 else ''} in "
                f"{est.headroom_gb:g} GB ({est.sequence_gb:g} GB each)",
                at,
                f"{change}, lower `max_model_len`, or use `kv_cache_dtype = {smaller}`",
                replace_with=str(value),
            )
            return
