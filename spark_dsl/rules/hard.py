"""The recipe's hard constraints (SPK201-SPK222): combinations that the recipe does not validate or vLLM cannot run."""

from __future__ import annotations

from collections.abc import Iterator

from spark_dsl import catalog
from spark_dsl.diagnostics import Severity
from spark_dsl.edits import remove_entry
from spark_dsl.plan.model import Plan, Pool, Resolved
from spark_dsl.rules.registry import Finding, rule
from spark_dsl.rules.suggest import pool_parallel, replace_or_add, set_parallel, spelled
from spark_dsl.units import format_count
from spark_dsl.values import Parallel


def _spelled_list(ids: list[str]) -> str:
    """`A, B and C` in upper case, as the messages name accelerators."""
    names = [i.upper() for i in ids]
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def _validated_accelerators() -> str:
    return _spelled_list([a.id for a in catalog.load().validated_accelerators()])


def _fp4_accelerators() -> str:
    """The validated accelerators with FP4, comma-separated (`B200, B300, ...`)."""
    return ", ".join(a.id.upper() for a in catalog.load().validated_accelerators() if a.fp4)


def _validated_checkpoints(path: str) -> list[str]:
    return list(catalog.load().recipe.validated_checkpoints[path])


def _runs_on(checkpoint: str, plan: Plan) -> bool:
    """Whether the accelerator has the hardware the checkpoint's format needs (FP4 for NVFP4)."""
    return plan.accelerator.fp4 or not catalog.load().needs_fp4(checkpoint)


def _tokens(n: int) -> str:
    return f"{format_count(n)} ({n:,} tokens)"


def _long_context_note(plan: Plan) -> tuple[str, Resolved | None]:
    mml = plan.settings["max_model_len"]
    return (
        f"max_model_len = {format_count(mml.value)} selects the long-context configuration "
        f"(above {format_count(plan.thresholds.default_context)})",
        mml,
    )


def _downgrade(plan: Plan) -> Severity | None:
    return Severity.WARNING if plan.value("allow_unvalidated") else None


@rule(
    "SPK201",
    "error",
    "accelerator outside the recipe's validated set",
    checks="The accelerator is one the catalog knows (H100, H200, MI300X, MI325X) but the recipe does "
    "not validate. With `allow_unvalidated = true` this is a warning.",
    basis="The recipe validates Muse Spark Open on NVIDIA Blackwell (B200, B300, GB200, GB300) and "
    "AMD MI350X/MI355X only. Other accelerators take their vendor's path, untested.",
    failing="deployment muse {\n  model       = muse-spark-open\n  accelerator = h200\n  checkpoint  = mxfp4\n}",
    fixed="deployment muse {\n  model       = muse-spark-open\n  accelerator = b200\n}",
)
def accelerator_validated(plan: Plan) -> Iterator[Finding]:
    if not plan.accelerator.validated:
        validated = plan.vendor.validated_alternative
        yield Finding(
            f"accelerator `{plan.accelerator.id}` is not validated for Muse Spark Open",
            plan.settings["accelerator"],
            f"use `accelerator = {validated}` (validated: {_validated_accelerators()}), "
            "or set `allow_unvalidated = true` to proceed at your own risk",
            label="outside the recipe",
            severity=_downgrade(plan),
            replace_with=validated,
        )


@rule(
    "SPK202",
    "error",
    "checkpoint not validated on this vendor",
    checks="The checkpoint is not one the recipe validates on the accelerator's vendor: NVIDIA "
    "validates NVFP4; AMD validates Quark MXFP4, load-time BF16-to-MXFP4 and BF16. "
    "`allow_unvalidated = true` makes it a warning, except NVFP4 on an accelerator without FP4 "
    "support (anything before Blackwell), which cannot run at all.",
    basis="NVFP4 is the recipe's Blackwell path; the AMD commands list MXFP4, load-time conversion and BF16 serving.",
    failing="accelerator = mi355x\ncheckpoint  = nvfp4",
    fixed="accelerator = mi355x\ncheckpoint  = mxfp4",
)
def checkpoint_validated(plan: Plan) -> Iterator[Finding]:
    ckpt = plan.settings.get("checkpoint")
    if ckpt is None or plan.checkpoint is None:
        return
    valid = _validated_checkpoints(plan.path)
    runnable = [c for c in valid if _runs_on(c, plan)]
    if not _runs_on(ckpt.value, plan):
        yield Finding(
            f"checkpoint `{ckpt.value}` cannot run on `{plan.accelerator.id}`: it has no FP4 support",
            ckpt,
            f"use `checkpoint = {runnable[0]}`"
            if runnable
            else f"use a Blackwell accelerator for {ckpt.value.upper()}, or another checkpoint",
            label="needs Blackwell FP4",
            replace_with=runnable[0] if runnable else None,
        )
    elif ckpt.value not in valid:
        listing = ", ".join(f"`{c}`" for c in valid)
        yield Finding(
            f"checkpoint `{ckpt.value}` is not validated on {plan.path.upper()} (validated: {listing})",
            ckpt,
            f"use `checkpoint = {runnable[0]}`"
            if runnable
            else f"{listing} needs a Blackwell accelerator ({_fp4_accelerators()}); "
            f"on `{plan.accelerator.id}` the checkpoint stays unvalidated",
            label="not validated here",
            replace_with=runnable[0] if runnable else None,
            severity=_downgrade(plan),
        )


def _pool_label(pool: Pool) -> str:
    return "" if pool.role == "server" else f" in the {pool.role} pool"


@rule(
    "SPK203",
    "error",
    "tensor-parallel size differs from the GPUs per node",
    checks="The tensor-parallel size must equal the GPUs used on each node (`gpus`, which defaults to "
    "the accelerator's GPUs per node), for each disaggregation pool too.",
    basis="The recipe sets TP to the GPU count: a smaller TP replicates the dense components on every "
    "rank and runs out of memory; TP never spans nodes.",
    failing="accelerator = b200   # 8 GPUs per node\nparallel    = tp(4) + ep",
    fixed="accelerator = b200\nparallel    = tp + ep",
)
def tp_matches_gpus(plan: Plan) -> Iterator[Finding]:
    gpus = plan.settings["gpus"]
    for pool in plan.pools:
        if pool.tp != gpus.value:
            fitting = spelled(pool_parallel(pool))
            yield Finding(
                f"tensor-parallel size {pool.tp}{_pool_label(pool)} differs from the {gpus.value} GPUs used per node",
                pool.parallel,
                f"use `parallel = {fitting}` (TP = GPUs per node)"
                + (", or lower `gpus`" if pool.tp < gpus.value else ""),
                label=f"TP {pool.tp}",
                notes=((f"gpus = {gpus.value} ({gpus.origin})", gpus if gpus.explicit else None),),
                fix=set_parallel(plan, pool, pool_parallel(pool), f"use `parallel = {fitting}`"),
            )


@rule(
    "SPK204",
    "error",
    "data parallelism on the AMD path",
    checks="`dp(N)` on MI350X/MI355X (or another AMD accelerator).",
    basis="The recipe's AMD path supports TP and TP+EP, not its data-parallel configuration.",
    failing="accelerator = mi355x\nparallel    = dp(2) + tp",
    fixed="accelerator = mi355x\nparallel    = tp",
)
def amd_no_dp(plan: Plan) -> Iterator[Finding]:
    if plan.path != "amd":
        return
    for pool in plan.pools:
        if pool.dp is not None:
            one_node = spelled(pool_parallel(pool, dp=False))
            yield Finding(
                "data parallelism is not validated on the AMD path",
                pool.parallel,
                f"use `parallel = {one_node}` on one node",
                label=f"dp({pool.dp})",
                fix=set_parallel(plan, pool, pool_parallel(pool, dp=False), f"use `parallel = {one_node}`"),
            )
            return


def _block_resolved(plan: Plan, kind: str) -> Resolved | None:
    block = plan.deployment.body.block(kind)
    return None if block is None or block.origin is None else Resolved.written(True, block.origin)


@rule(
    "SPK205",
    "error",
    "prefill/decode disaggregation on the AMD path",
    checks="A `disaggregation` block on an AMD accelerator.",
    basis="The recipe's AMD path does not support prefill/decode disaggregation; teams that need it "
    "should use the NVIDIA path.",
    failing="accelerator = mi355x\ndisaggregation { }",
    fixed="accelerator = b200\ndisaggregation { }",
)
def amd_no_disaggregation(plan: Plan) -> Iterator[Finding]:
    if plan.path == "amd" and plan.disaggregated:
        block = _block_resolved(plan, "disaggregation")
        source = plan.deployment.source
        fix = None
        if block is not None and block.location is not None and block.location.file == source.name:
            fix = remove_entry("remove the `disaggregation` block", source, block.location.span)
        yield Finding(
            "prefill/decode disaggregation is not validated on the AMD path",
            block,
            "remove the `disaggregation` block, or deploy on a Blackwell accelerator",
            label="AMD has no P/D disaggregation",
            fix=fix,
        )


@rule(
    "SPK206",
    "error",
    "multimodal input on the AMD path",
    checks="Any modality other than `text` on an AMD accelerator.",
    basis="The AMD commands are text-only: they do not provide the model's image, audio and video path.",
    failing="accelerator = mi355x\nmodalities  = [text, image]",
    fixed="accelerator = mi355x\nmodalities  = [text]",
)
def amd_text_only(plan: Plan) -> Iterator[Finding]:
    mods = plan.settings["modalities"]
    if plan.path == "amd" and set(mods.value) - {"text"}:
        extra = ", ".join(m for m in mods.value if m != "text")
        yield Finding(
            f"the AMD path serves text only, not {extra}",
            mods,
            "use `modalities = [text]`, or the NVIDIA path for multimodal serving",
            label="multimodal",
            replace_with="[text]",
        )


def _required_setting_rule(req: catalog.RequiredSetting) -> None:
    """SPK207-SPK209, generated from the catalog's `required_settings`: one setting a vendor's
    commands always set to `good`, raised when the spec writes `bad` on that vendor's path."""

    def check(plan: Plan) -> Iterator[Finding]:
        s = plan.settings.get(req.key)
        if plan.path == req.vendor and s is not None and str(s.value).lower() == req.bad:
            yield Finding(req.message, s, f"use `{req.key} = {req.good}`", replace_with=req.good)

    example = catalog.load().vendor(req.vendor).validated_alternative
    rule(
        req.code,
        "error",
        req.title,
        checks=f"`{req.key} = {req.bad}` on an {req.vendor.upper()} accelerator.",
        basis=req.basis,
        failing=f"accelerator = {example}\n{req.key} = {req.bad}",
        fixed=f"accelerator = {example}\n{req.key} = {req.good}",
    )(check)


for _required in catalog.load().recipe.required_settings:
    _required_setting_rule(_required)


@rule(
    "SPK210",
    "error",
    "adaptive DSpark without Triton attention on AMD",
    checks="On the AMD path, `speculative = dspark(adaptive)` with an explicit attention backend other "
    "than `triton` (`auto` included, since vLLM would pick AITER).",
    basis="Adaptive DSpark needs Triton attention: AITER's attention backend cannot run the "
    "variable-length decode graphs it captures.",
    failing="accelerator = mi355x\nspeculative = dspark(adaptive)\nattention   = aiter",
    fixed="accelerator = mi355x\nspeculative = dspark(adaptive)\nattention   = triton",
)
def adaptive_needs_triton(plan: Plan) -> Iterator[Finding]:
    spec, att = plan.settings["speculative"], plan.settings.get("attention")
    # The path's recipe names the one backend adaptive DSpark runs with (none: any backend).
    needed = catalog.load().path_defaults(plan.path).attention_with_adaptive_dspark
    if needed is None or not (spec.value.mode == "dspark" and spec.value.adaptive):
        return
    if att is not None and att.explicit and att.value != needed:
        yield Finding(
            f"adaptive DSpark needs {needed.capitalize()} attention, found `{att.value}`",
            att,
            f"use `attention = {needed}`",
            label="cannot run adaptive DSpark's decode graphs",
            notes=(("speculative = dspark(adaptive) is set here", spec if spec.explicit else None),),
            replace_with=needed,
        )


@rule(
    "SPK211",
    "error",
    "long context on AMD needs the MXFP4 checkpoint",
    checks="On the AMD path, `max_model_len` above 32,768 with a checkpoint other than `mxfp4`.",
    basis="The recipe's one-million-token configuration on AMD is validated with Quark MXFP4 only.",
    failing="accelerator   = mi355x\ncheckpoint    = bf16\nmax_model_len = 1M\nmax_num_seqs  = 8",
    fixed="accelerator   = mi355x\nmax_model_len = 1M\nmax_num_seqs  = 8\ncheckpoint    = mxfp4",
)
def long_context_mxfp4(plan: Plan) -> Iterator[Finding]:
    ckpt = plan.settings.get("checkpoint")
    allowed = plan.thresholds.long_context_checkpoints
    if plan.path == "amd" and plan.long_context and ckpt is not None and ckpt.value not in allowed:
        only = " or ".join(f"`{c}`" for c in allowed)
        yield Finding(
            f"long context on AMD is validated with {only} only, found `{ckpt.value}`",
            ckpt,
            f"use `checkpoint = {allowed[0]}`, or `max_model_len = {format_count(plan.thresholds.default_context)}`",
            notes=(_long_context_note(plan),),
            replace_with=allowed[0],
        )


@rule(
    "SPK212",
    "error",
    "long context on AMD is validated with plain tensor parallelism",
    checks="On the AMD path, `max_model_len` above 32,768 with expert parallelism on.",
    basis="The recipe's long-context configuration uses plain tensor parallelism.",
    failing="accelerator   = mi355x\nmax_model_len = 1M\nmax_num_seqs  = 8\nparallel      = tp + ep",
    fixed="accelerator   = mi355x\nmax_model_len = 1M\nmax_num_seqs  = 8\nparallel      = tp",
)
def long_context_plain_tp(plan: Plan) -> Iterator[Finding]:
    if plan.path == "amd" and plan.long_context:
        for pool in plan.pools:
            if pool.ep:
                yield Finding(
                    "long context on AMD is validated with plain tensor parallelism",
                    pool.parallel,
                    "use `parallel = tp`",
                    label="expert parallelism is on",
                    notes=(_long_context_note(plan),),
                    replace_with="tp",
                )
                return


@rule(
    "SPK213",
    "error",
    "long context on AMD allows at most 8 sequences",
    checks="On the AMD path, `max_model_len` above 32,768 with `max_num_seqs` unset or above 8.",
    basis="The recipe's long-context configuration runs no more than eight sequences.",
    failing="accelerator   = mi355x\nmax_model_len = 1M",
    fixed="accelerator   = mi355x\nmax_model_len = 1M\nmax_num_seqs  = 8",
)
def long_context_seqs(plan: Plan) -> Iterator[Finding]:
    if plan.path != "amd" or not plan.long_context:
        return
    from spark_dsl.rules.capacity import max_num_seqs_allowed

    limit = plan.thresholds.long_context_max_num_seqs
    seqs = plan.settings.get("max_num_seqs")
    allowed = max_num_seqs_allowed(plan)  # what SPK304 allows too, so the two never disagree
    if seqs is None:
        mml = plan.settings["max_model_len"]
        yield Finding(
            f"long context on AMD needs `max_num_seqs` of at most {limit}; it is unset (vLLM's default is higher)",
            mml,
            f"set `max_num_seqs = {allowed}`",
            label="long-context configuration",
            fix=replace_or_add(plan, "max_num_seqs", str(allowed), f"set `max_num_seqs = {allowed}`"),
        )
    elif seqs.value > limit:
        yield Finding(
            f"long context on AMD allows at most {limit} sequences, found `max_num_seqs = {seqs.value}`",
            seqs,
            f"set `max_num_seqs = {allowed}`",
            notes=(_long_context_note(plan),),
            replace_with=str(allowed),
        )


@rule(
    "SPK214",
    "error",
    "long context on AMD uses the default or FP8 KV cache",
    checks="On the AMD path, `max_model_len` above 32,768 with `kv_cache_dtype` other than `auto`, "
    "`fp8` or `fp8_e4m3` (vLLM's `fp8` is E4M3).",
    basis="The recipe's long-context configuration runs with either the default or the FP8 KV cache.",
    failing="accelerator    = mi355x\nmax_model_len  = 1M\nmax_num_seqs   = 8\nkv_cache_dtype = fp8_e5m2",
    fixed="accelerator    = mi355x\nmax_model_len  = 1M\nmax_num_seqs   = 8\nkv_cache_dtype = fp8",
)
def long_context_kv_dtype(plan: Plan) -> Iterator[Finding]:
    kv = plan.settings["kv_cache_dtype"]
    allowed = plan.thresholds.long_context_kv_dtypes
    if plan.path == "amd" and plan.long_context and kv.value not in allowed:
        # The first allowed dtype that is not vLLM's default: the one the recipe names.
        fp8 = next(d for d in allowed if d != "auto")
        yield Finding(
            f"long context on AMD uses the default or {fp8.upper()} (E4M3) KV cache, found `{kv.value}`",
            kv,
            f"use `kv_cache_dtype = {fp8}`",
            notes=(_long_context_note(plan),),
            replace_with=fp8,
        )


@rule(
    "SPK215",
    "error",
    "max_model_len above the model's context",
    checks="`max_model_len` larger than the model's native context (1,048,576 tokens for Muse Spark Open).",
    basis="The model supports a one-million-token context; vLLM refuses a longer limit.",
    failing="max_model_len = 2M",
    fixed="max_model_len = 1M",
)
def within_model_context(plan: Plan) -> Iterator[Finding]:
    mml = plan.settings.get("max_model_len")
    if mml is not None and mml.value > plan.model.max_context:
        yield Finding(
            f"max_model_len {_tokens(mml.value)} exceeds the model's context of {_tokens(plan.model.max_context)}",
            mml,
            f"use `max_model_len = {format_count(plan.model.max_context)}` or less",
            replace_with=format_count(plan.model.max_context),
        )


def _nodes_resolved(plan: Plan) -> Resolved:
    nodes = plan.settings["nodes"]
    if nodes.explicit:
        return nodes
    for pool in plan.pools:
        if pool.nodes_setting is not None and pool.nodes > 1:
            return pool.nodes_setting
    return nodes


@rule(
    "SPK216",
    "error",
    "more than one node on the AMD path",
    checks="An AMD deployment on more than one node. Not reported beside SPK205: prefill/decode "
    "pools are two nodes, and SPK205 already says they are not validated on AMD.",
    basis="The recipe's AMD path is validated on one eight-GPU node: no data parallelism, no "
    "prefill/decode disaggregation.",
    failing="accelerator = mi355x\nnodes       = 2",
    fixed="accelerator = mi355x\nnodes       = 1",
    suppressed_by=("SPK205",),
)
def amd_one_node(plan: Plan) -> Iterator[Finding]:
    if plan.path == "amd" and plan.total_nodes > 1:
        at = _nodes_resolved(plan)
        yield Finding(
            f"the AMD path is validated on one node, found {plan.total_nodes}",
            at,
            "deploy on one node (`nodes = 1`)",
            replace_with="1" if at.explicit else None,
        )


@rule(
    "SPK217",
    "error",
    "GPU arithmetic does not add up",
    checks="Data parallel x tensor parallel must equal nodes x GPUs per node (per pool under "
    "disaggregation), and a top-level `nodes` must equal the sum of the pools' nodes. Not reported "
    "beside SPK204, SPK205, SPK216 or SPK218, which already explain the node count.",
    basis="Every GPU must be placed exactly once: vLLM starts dp x tp ranks and expects them to fill "
    "the nodes it is given.",
    failing="nodes    = 2\nparallel = dp(4) + tp + ep   # 4 x 8 = 32 ranks, 16 GPUs",
    fixed="nodes    = 2\nparallel = dp(2) + tp + ep",
    suppressed_by=("SPK204", "SPK205", "SPK216", "SPK218"),
)
def gpu_arithmetic(plan: Plan) -> Iterator[Finding]:
    gpus = plan.value("gpus")
    nodes = plan.settings["nodes"]
    if plan.disaggregated and nodes.explicit and nodes.value != plan.total_nodes:
        yield Finding(
            f"nodes = {nodes.value} differs from the {plan.total_nodes} nodes of the disaggregation pools",
            nodes,
            f"use `nodes = {plan.total_nodes}`, or leave `nodes` out",
            replace_with=str(plan.total_nodes),
        )
        return
    for pool in plan.pools:
        ranks, available = pool.dp_size * pool.tp, pool.nodes * gpus
        if ranks != available:
            fitting = spelled(pool_parallel(pool))
            where = "" if pool.role == "server" else f" in the `{pool.role}` block"
            yield Finding(
                f"dp x tp = {pool.dp_size} x {pool.tp} = {ranks} ranks{_pool_label(pool)}, "
                f"but {pool.nodes} node{'s' if pool.nodes != 1 else ''} x {gpus} GPUs = {available}",
                _arithmetic_culprit(pool),
                f"use `parallel = {fitting}`{where}: one data-parallel replica per node, TP = GPUs per node",
                fix=set_parallel(plan, pool, pool_parallel(pool), f"use `parallel = {fitting}`{where}"),
            )


def _arithmetic_culprit(pool: Pool) -> Resolved:
    """The user's parallelism if they wrote one, else the node count they wrote."""
    if pool.parallel.explicit or pool.nodes_setting is None or not pool.nodes_setting.explicit:
        return pool.parallel
    return pool.nodes_setting


@rule(
    "SPK218",
    "error",
    "extra nodes on the NVIDIA path without replicas",
    checks="An NVIDIA deployment on several nodes without `dp(N)` or disaggregation.",
    basis="Tensor parallelism stays within a node (SPK203), so extra nodes need data-parallel "
    "replicas or prefill/decode pools.",
    failing="accelerator = b200\nnodes       = 2\nparallel    = tp + ep",
    fixed="accelerator = b200\nnodes       = 2\nparallel    = dp(2) + tp + ep",
)
def nvidia_multinode_needs_dp(plan: Plan) -> Iterator[Finding]:
    if plan.path != "nvidia" or plan.disaggregated:
        return
    (pool,) = plan.pools
    if pool.nodes > 1 and pool.dp is None:
        fitting = spelled(pool_parallel(pool))
        yield Finding(
            f"{pool.nodes} nodes need data-parallel replicas: tensor parallelism stays within a node",
            _nodes_resolved(plan),
            f"use `parallel = {fitting}`",
            fix=set_parallel(plan, pool, pool_parallel(pool), f"use `parallel = {fitting}`"),
        )


@rule(
    "SPK219",
    "error",
    "tensor-parallel size does not divide the KV heads",
    checks="The tensor-parallel size must divide the model's 16 KV heads.",
    basis="Catalog fact, not a recipe sentence: Muse Spark Open has 16 KV heads (grouped-query "
    "attention), and vLLM splits attention heads evenly across TP ranks.",
    failing="gpus     = 6\nparallel = tp",
    fixed="gpus     = 8\nparallel = tp",
)
def tp_divides_heads(plan: Plan) -> Iterator[Finding]:
    heads = plan.model.architecture.kv_heads
    gpus = plan.settings["gpus"]
    whole = plan.accelerator.gpus_per_node
    for pool in plan.pools:
        if not heads % pool.tp:
            continue
        message = f"tensor-parallel size {pool.tp} does not divide the model's {heads} KV heads"
        if pool.tp != gpus.value and not heads % gpus.value:  # `tp(N)` other than the node's GPUs
            fitting = spelled(pool_parallel(pool))
            fix = set_parallel(plan, pool, pool_parallel(pool), f"use `parallel = {fitting}`")
            yield Finding(message, pool.parallel, f"use `parallel = {fitting}` (TP = GPUs per node)", fix=fix)
        elif gpus.explicit and not heads % whole:  # `gpus` itself does not divide the heads
            yield Finding(message, gpus, f"use all {whole} GPUs of a node: `gpus = {whole}`", replace_with=str(whole))
        else:
            at = pool.parallel if pool.parallel.explicit else gpus
            yield Finding(message, at, "use a tensor-parallel size of 1, 2, 4, 8 or 16")
        return


@rule(
    "SPK220",
    "error",
    "expert-parallel size does not divide the experts",
    checks="With expert parallelism, the expert-parallel size (TP x DP of the replica group) must "
    "divide the model's 256 routed experts.",
    basis="Catalog fact: vLLM splits the 256 routed experts of each layer evenly across EP ranks.",
    failing="gpus     = 6\nparallel = tp + ep",
    fixed="gpus     = 8\nparallel = tp + ep",
)
def ep_divides_experts(plan: Plan) -> Iterator[Finding]:
    experts = plan.model.architecture.routed_experts
    for pool in plan.pools:
        size = pool.tp * pool.dp_size
        if pool.ep and experts % size:
            written: Parallel = pool.parallel.value
            without_ep = Parallel(written.tp, written.has_tp, False, written.dp)
            yield Finding(
                f"expert-parallel size {size} (TP {pool.tp} x DP {pool.dp_size}) does not divide the {experts} experts",
                pool.parallel if pool.parallel.explicit else plan.settings["gpus"],
                f"choose TP x DP as a power of two up to 256, or drop `ep` (`parallel = {spelled(without_ep)}`)",
                fix=set_parallel(plan, pool, without_ep, f"drop `ep`: `parallel = {spelled(without_ep)}`"),
            )
            return


@rule(
    "SPK221",
    "error",
    "DSpark needs the V2 model runner",
    checks="`speculative = dspark` (on any path) with `model_runner = v1`.",
    basis="vLLM fact: vLLM 0.33 runs DSpark only on the V2 model runner; the V1 runner rejects it.",
    failing="speculative  = dspark\nmodel_runner = v1",
    fixed="speculative  = dspark\nmodel_runner = v2",
)
def dspark_v2(plan: Plan) -> Iterator[Finding]:
    runner = plan.settings.get("model_runner")
    if runner is not None and runner.value == "v1" and plan.value("speculative").mode == "dspark":
        yield Finding(
            "speculative decoding with DSpark runs only on the V2 model runner",
            runner,
            "use `model_runner = v2`, or `speculative = none`",
            notes=(("speculative decoding is DSpark here", plan.settings["speculative"]),),
            replace_with="v2",
        )


@rule(
    "SPK222",
    "error",
    "attention backend of the other vendor",
    checks="`attention = aiter` on the NVIDIA path, or `attention = flashinfer` on the AMD path.",
    basis="vLLM fact: AITER is ROCm's kernel library and FlashInfer is CUDA-only; each backend exists on one vendor.",
    failing="accelerator = b200\nattention   = aiter",
    fixed="accelerator = b200\nattention   = auto",
)
def attention_vendor(plan: Plan) -> Iterator[Finding]:
    att = plan.settings.get("attention")
    if att is None:
        return
    backend = catalog.load().attention_backend(att.value)
    if backend is not None and plan.path not in backend.vendors:
        other = plan.vendor.attention_instead
        yield Finding(
            f"attention backend `{backend.name}` does not exist on {plan.path.upper()} GPUs",
            att,
            f"use `attention = {other}`",
            replace_with=other,
        )
