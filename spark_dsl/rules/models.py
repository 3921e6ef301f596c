"""What any model's shape asks of a deployment (SPK223-SPK228): tensor parallelism against the
attention heads, vLLM's replication of KV heads, the checkpoint's weight format against the
accelerator, a checkpoint the model has, expert parallelism only with experts, a draft for
speculative decoding. They read the model's facts only, so they hold for shipped and declared models alike
(docs/models.md); SPK219 (TP divides the KV heads), SPK220 (EP divides the experts), SPK215
(context) and SPK301-SPK304 (capacity) are the other rules every model gets."""

from __future__ import annotations

from collections.abc import Iterator
from math import gcd

from msgspec.structs import replace

from spark_dsl import catalog
from spark_dsl.diagnostics import Fix, Severity
from spark_dsl.plan.model import Plan, Pool, Resolved
from spark_dsl.rules import catalog_texts as facts
from spark_dsl.rules.registry import Finding, rule
from spark_dsl.rules.suggest import replace_or_add, set_parallel, spelled
from spark_dsl.values import Parallel

# Head counts are small; a value past this (a hostile or mistyped one, up to 2**53) is not
# factored: the listing says "a divisor of N" and the fix takes the greatest common divisor.
LISTED_DIVISORS_UP_TO = 4096


def divisors(n: int) -> list[int] | None:
    """The divisors of `n`, or None when `n` is too large to list."""
    if n > LISTED_DIVISORS_UP_TO:
        return None
    return [d for d in range(1, n + 1) if not n % d]


def spelled_divisors(n: int) -> str:
    """`1, 2, 4 or 8`, or `a divisor of N` for a large `n`."""
    found = divisors(n)
    if found is None:
        return f"a divisor of {n}"
    sizes = [str(d) for d in found]
    return sizes[0] if len(sizes) == 1 else ", ".join(sizes[:-1]) + " or " + sizes[-1]


def divisor_up_to(n: int, most: int) -> int:
    """The largest divisor of `n` not above `most` (their greatest common divisor for a large `n`)."""
    found = divisors(n)
    if found is None:
        return gcd(n, most)
    return max(d for d in found if d <= most)


@rule(
    "SPK223",
    "error",
    "tensor-parallel size does not divide the attention heads",
    checks="The tensor-parallel size must divide the model's query (attention) heads.",
    basis="vLLM splits the attention heads evenly across TP ranks and refuses to start otherwise "
    "(`Total number of attention heads must be divisible by tensor parallel size`).",
    # A TP that does not divide the KV heads does not divide the query heads either: SPK219 says it.
    suppressed_by=("SPK219",),
)
def tp_divides_query_heads(plan: Plan) -> Iterator[Finding]:
    heads = plan.model.architecture.query_heads
    for pool in plan.pools:
        if heads % pool.tp:
            size = divisor_up_to(heads, pool.tp)  # the next size down that divides
            at, fix = _tp_fix(plan, pool, size)
            yield Finding(
                f"tensor-parallel size {pool.tp} does not divide the {heads} attention heads of `{plan.model.id}`",
                at,
                f"{fix.message if fix else f'use a tensor-parallel size of {size}'}: "
                f"a size that divides the heads ({spelled_divisors(heads)})",
                label=f"TP {pool.tp}",
                fix=fix,
            )
            return


def _tp_fix(plan: Plan, pool: Pool, size: int) -> tuple[Resolved, Fix | None]:
    """Where a tensor-parallel size is set, and the fix that makes it `size`: `tp(N)` where the spec
    writes the parallelism, else `gpus = N` (TP is every GPU the node uses)."""
    if pool.parallel.explicit and pool.parallel.value.tp is not None:
        written: Parallel = pool.parallel.value
        value = replace(written, tp=size, has_tp=True)
        return pool.parallel, set_parallel(plan, pool, value, f"use `parallel = {spelled(value)}`")
    return plan.setting("gpus"), replace_or_add(plan, "gpus", str(size), f"use `gpus = {size}`")


@rule(
    "SPK224",
    "info",
    "KV heads replicated across tensor-parallel ranks",
    checks=lambda: (
        "The tensor-parallel size is a multiple of the model's KV heads but larger: each KV head "
        "is kept on TP / KV-heads ranks, so the KV cache per token grows by that factor. Not for multi-head "
        f"latent attention ({facts.latent_attention_models()}), whose one latent per layer every rank holds whole."
    ),
    basis="vLLM replicates the KV heads when the tensor-parallel size exceeds them "
    "(`max(1, total_num_kv_heads // tensor_parallel_size)`, vllm/config/model.py:1683); the capacity "
    "estimate counts each head once per rank that holds it. The help keeps the GPUs: a TP of the KV "
    "heads with as many more data-parallel replicas (or pipeline stages), where the weights still "
    "fit a replica; for Muse Spark Open, whose recipe's TP fills the node (SPK203), fewer `gpus`.",
    suppressed_by=("SPK223",),
)
def kv_heads_replicated(plan: Plan) -> Iterator[Finding]:
    if plan.model.architecture.mla:  # one latent per layer on every rank, whatever the TP (SPK219)
        return
    heads = plan.model.architecture.kv_heads
    for pool in plan.pools:
        if pool.tp > heads and not pool.tp % heads:
            message = (
                f"tensor-parallel size {pool.tp} exceeds the {heads} KV heads of `{plan.model.id}`: "
                f"vLLM keeps each KV head on {pool.tp // heads} ranks"
            )
            if plan.model.id == catalog.load().recipe.model:  # the recipe's TP fills the node (SPK203)
                at, fix = _tp_fix(plan, pool, heads)
                help_text = (
                    f"to hold each KV head once, {fix.message if fix else f'use a tensor-parallel size of {heads}'}"
                )
                yield Finding(message, at, help_text, label="KV heads replicated", fix=fix)
                return
            yield _split_replica(plan, pool, heads, message)
            return


def _split_replica(plan: Plan, pool: Pool, heads: int, message: str) -> Finding:
    """SPK224 for a model outside the recipe: the same GPUs as more, smaller replicas (`tp(heads)`,
    the data-parallel replicas or pipeline stages multiplied to match), when its weights still fit
    one; else the replication is what holding the weights costs, and the help says so."""
    written: Parallel = pool.parallel.value
    # The pool's GPUs, whatever the written layout places (SPK217 and SPK218 say where it does not).
    groups = max(pool.nodes * int(plan.value("gpus")) // heads, 1)
    if pool.pp > 1:  # stages and replicas never mix (SPK230): more stages of fewer GPUs each
        value = replace(written, tp=heads, has_tp=True, pp=groups)
        smaller = replace(pool, tp=heads, pp=groups)
    else:
        value = replace(written, tp=heads, has_tp=True, dp=groups if groups > 1 else None)
        smaller = replace(pool, tp=heads, dp=groups if groups > 1 else None)
    text = spelled(value)
    if not _replica_fits(plan, smaller):
        return Finding(
            message,
            pool.parallel if pool.parallel.explicit else plan.setting("gpus"),
            f"a tensor-parallel size of {heads} would hold each KV head once, but the weights of "
            f"`{plan.model.id}` do not fit {heads * smaller.pp} GPUs with room for the KV cache: keep this layout",
            label="KV heads replicated",
        )
    return Finding(
        message,
        pool.parallel if pool.parallel.explicit else plan.setting("gpus"),
        f"to hold each KV head once, use `parallel = {text}`: the same GPUs as "
        + ("pipeline stages" if pool.pp > 1 else "data-parallel replicas")
        + f" of TP {heads}",
        label="KV heads replicated",
        fix=set_parallel(plan, pool, value, f"use `parallel = {text}`"),
    )


def _replica_fits(plan: Plan, pool: Pool) -> bool:
    """Whether a replica of `pool`'s shape passes the capacity rules (SPK301-SPK304) as the plan's
    settings stand: the weights fit, with the headroom and the sequences they ask for."""
    from math import ceil

    from spark_dsl.plan.capacity import estimate

    est = estimate(plan, pool)
    if est is None:
        return True
    if est.sequences_fit < 1 or est.headroom_gb < plan.thresholds.kv_headroom_fraction * est.memory_per_replica_gb:
        return False
    seqs, conc = plan.setting("max_num_seqs"), plan.setting("concurrency")
    wanted = max(seqs.value if seqs else 0, ceil(conc.value / pool.dp_size) if conc else 0)
    return wanted <= est.sequences_fit


def _missing_support(plan: Plan) -> str | None:
    """What the checkpoint's weight format needs that the accelerator lacks: `fp4` for the formats
    the catalog marks `needs_fp4`, or the format itself where the accelerator lists it (`fp8`)."""
    checkpoint, acc = plan.checkpoint, plan.accelerator
    if checkpoint is None:
        return None
    if checkpoint.needs_fp4:
        return None if acc.fp4 else "fp4"
    capability = checkpoint.dtype
    if capability in catalog.Accelerator.__struct_fields__ and not getattr(acc, capability):
        return capability
    return None


@rule(
    "SPK225",
    "error",
    "checkpoint format the accelerator cannot run",
    checks="The checkpoint's weight format needs hardware the accelerator lacks: FP4 formats "
    "(NVFP4) need an accelerator with FP4, FP8 weights one with FP8.",
    basis=lambda: (
        f"Catalog facts: each accelerator's `fp4` and `fp8` (FP4: {facts.generations_with('fp4')}; "
        f"FP8: {facts.generations_with('fp8')}; neither: {facts.generations_without('fp4', 'fp8')}), each "
        "checkpoint's `dtype`."
    ),
    # The recipe's model: SPK202 says it, with the recipe's validated checkpoints; vLLM's CPU
    # backend: SPK234, with the formats it runs.
    suppressed_by=("SPK202", "SPK234"),
)
def checkpoint_runs(plan: Plan) -> Iterator[Finding]:
    missing = _missing_support(plan)
    if missing is None or plan.checkpoint is None:
        return
    cat = catalog.load()
    able = [a.id for a in cat.accelerators.values() if getattr(a, missing) and a.vendor == plan.accelerator.vendor]
    able = able or [a.id for a in cat.accelerators.values() if getattr(a, missing)]
    others = [c for c in plan.model.checkpoints.values() if not c.needs_fp4 or plan.accelerator.fp4]
    others = [
        c for c in others if c.dtype not in catalog.Accelerator.__struct_fields__ or getattr(plan.accelerator, c.dtype)
    ]
    ckpt = plan.setting("checkpoint")
    instead = f"`checkpoint = {others[0].id}`, or " if others and ckpt is not None and ckpt.explicit else ""
    yield Finding(
        f"checkpoint `{plan.checkpoint.id}` has {plan.checkpoint.dtype} weights, which need "
        f"{missing.upper()} support; `{plan.accelerator.id}` has none",
        plan.setting("accelerator"),
        f"use {instead}an accelerator with {missing.upper()} (`accelerator = {able[0]}`)" if able else "",
        label=f"no {missing.upper()}",
        severity=Severity.ERROR,
        replace_with=None if instead else (able[0] if able else None),
    )


@rule(
    "SPK226",
    "error",
    "checkpoint the model does not have",
    checks="`checkpoint` names a weight format the model has no checkpoint of.",
    basis="A deployment serves one of its model's checkpoints: the catalog's, or the `checkpoint` "
    "blocks of a declared model (docs/models.md).",
)
def checkpoint_of_the_model(plan: Plan) -> Iterator[Finding]:
    ckpt = plan.setting("checkpoint")
    if ckpt is None or ckpt.value in plan.model.checkpoints or not plan.model.checkpoints:
        return
    first = next(iter(plan.model.checkpoints))
    listing = ", ".join(f"`{c}`" for c in plan.model.checkpoints)
    yield Finding(
        f"model `{plan.model.id}` has no checkpoint `{ckpt.value}` (it has {listing})",
        ckpt,
        f"use `checkpoint = {first}`",
        label="not a checkpoint of this model",
        replace_with=first,
    )


@rule(
    "SPK227",
    "error",
    "expert parallelism on a dense model",
    checks="`parallel` has an `ep` term but the model has no routed experts (`experts = 0`).",
    basis="vLLM's `--enable-expert-parallel` shards the experts of a mixture-of-experts model; a "
    "dense model has none to shard.",
)
def ep_needs_experts(plan: Plan) -> Iterator[Finding]:
    if plan.model.architecture.routed_experts:
        return
    for pool in plan.pools:
        if pool.ep:
            written: Parallel = pool.parallel.value
            without_ep = replace(written, ep=False)
            yield Finding(
                f"`parallel = {spelled(written)}` asks for expert parallelism, but `{plan.model.id}` has no experts",
                pool.parallel,
                f"drop `ep`: `parallel = {spelled(without_ep)}`",
                label="dense model",
                replace_with=spelled(without_ep),
            )
            return


@rule(
    "SPK228",
    "error",
    "speculative decoding without a draft model",
    checks="`speculative` turns on a draft model, but the model has none (a shipped model without "
    "`draft`, or a declaration without a `draft { }` block).",
    basis="vLLM's `--speculative-config` names a draft model; without one the setting would be "
    "dropped from the launch silently.",
)
def speculative_needs_a_draft(plan: Plan) -> Iterator[Finding]:
    if not plan.accelerator.speculative_decoding:
        return  # SPK235: no draft runs there at all
    spec = plan.setting("speculative")
    if spec is None or spec.value.mode == "none" or plan.model.draft is not None:
        return
    yield Finding(
        f"`speculative = {spec.value.spelled()}` needs a draft model, and `{plan.model.id}` has none",
        spec,
        "use `speculative = none`, or declare the model's `draft { method  repository  size }`",
        label="no draft model",
        replace_with="none",
    )


@rule(
    "SPK229",
    "error",
    "more pipeline stages than layers",
    checks="`pp(N)` splits the model's decoder layers into N pipeline stages: N must not exceed the layers.",
    basis="vLLM gives each pipeline stage a contiguous run of the decoder layers "
    "(`vllm/distributed/utils.py`, `get_pp_indices`); a stage without a layer has nothing to run.",
)
def pp_within_layers(plan: Plan) -> Iterator[Finding]:
    layers = plan.model.architecture.layers
    for pool in plan.pools:
        if pool.pp > layers:
            yield Finding(
                f"{pool.pp} pipeline stages but `{plan.model.id}` has {layers} layers",
                pool.parallel,
                f"use at most `pp({layers})` (one stage per node: `nodes = {layers}` too), or tensor "
                "parallelism within a node instead",
                label=f"PP {pool.pp}",
            )
            return
