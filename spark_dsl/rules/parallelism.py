"""How the GPUs are split (SPK203, SPK217-SPK220, SPK230-SPK232): every GPU is placed once, data-parallel
replicas stay within a node and pipeline stages span the nodes, as vLLM 0.33.0 lays them out, and the
sizes divide the model's KV heads and experts. Muse Spark Open's recipe asks more (SPK203: TP fills a
node; SPK231: no pipeline), for its model only.

vLLM's layout, as the pinned wheel's own validation has it (`vllm/config/parallel.py`,
`vllm/engine/arg_utils.py`; the lines are cited in each rule's basis): a replica is TP x PP ranks
(`world_size`), DP replicas are started `--data-parallel-size-local` to a node and each takes the next
TP x PP GPUs of its node, and with `--nnodes` the whole world is split evenly over the nodes."""

from __future__ import annotations

from collections.abc import Iterator

from msgspec.structs import replace

from spark_dsl.diagnostics import Severity
from spark_dsl.plan.model import Plan, Pool, Resolved
from spark_dsl.rules import catalog_texts as facts
from spark_dsl.rules.models import spelled_divisors
from spark_dsl.rules.registry import Finding, recipe_only, rule
from spark_dsl.rules.suggest import pool_parallel, set_parallel, spelled
from spark_dsl.values import Parallel


def _pool_label(pool: Pool) -> str:
    return "" if pool.role == "server" else f" in the {pool.role} pool"


# The models SPK219 and SPK220 take their example numbers from: the recipe's, then a small
# mixture-of-experts model whose numbers differ from it.
_EXAMPLE_MODELS = (None, "mixtral-8x7b-v0-1")


def _for_examples(fact: str) -> str:
    """`16 for Muse Spark Open, 8 for Mixtral 8x7B v0.1`: an architecture fact of the example models."""
    models = [facts.model(m) for m in _EXAMPLE_MODELS]
    return ", ".join(f"{getattr(m.architecture, fact)} for {m.display_name}" for m in models)


def nodes_resolved(plan: Plan) -> Resolved:
    """The node count to point at: the top-level `nodes` if written, else the first pool's that asks
    for more than one node (SPK216 on the AMD path reads it too)."""
    nodes = plan.setting("nodes")
    if nodes.explicit:
        return nodes
    for pool in plan.pools:
        if pool.nodes_setting is not None and pool.nodes > 1:
            return pool.nodes_setting
    return nodes


@recipe_only
@rule(
    "SPK203",
    "error",
    "tensor-parallel size differs from the GPUs per node",
    checks="In a Muse Spark Open deployment, the tensor-parallel size must equal the GPUs used on each "
    "node (`gpus`, which defaults to the accelerator's GPUs per node), for each disaggregation pool too. "
    "Other models may split a node into data-parallel replicas (`dp(4) + tp(4)` on 2 x 8 GPUs), as "
    "vLLM does (SPK217).",
    basis="Muse Spark Open's recipe sets TP to the GPU count: a smaller TP replicates the model's dense "
    "components on every rank and runs out of memory; TP never spans nodes.",
)
def tp_matches_gpus(plan: Plan) -> Iterator[Finding]:
    gpus = plan.setting("gpus")
    for pool in plan.pools:
        if pool.tp != gpus.value:
            fitting = spelled(pool_parallel(plan, pool))
            yield Finding(
                f"tensor-parallel size {pool.tp}{_pool_label(pool)} differs from the {gpus.value} GPUs used per node",
                pool.parallel,
                f"use `parallel = {fitting}` (TP = GPUs per node)"
                + (", or lower `gpus`" if pool.tp < gpus.value else ""),
                label=f"TP {pool.tp}",
                notes=((f"gpus = {gpus.value} ({gpus.origin})", gpus if gpus.explicit else None),),
                fix=set_parallel(plan, pool, pool_parallel(plan, pool), f"use `parallel = {fitting}`"),
            )


@rule(
    "SPK217",
    "error",
    "GPU arithmetic does not add up",
    checks="Data parallel x pipeline stages x tensor parallel must equal nodes x GPUs per node (per pool under "
    "disaggregation), data-parallel replicas over several nodes must be a multiple of the nodes (each "
    "node holds the same number of whole replicas), and a top-level `nodes` must equal the sum of the "
    "pools' nodes. Not reported beside SPK204, SPK205, SPK216 or SPK218, which already explain the "
    "node count.",
    basis="vLLM 0.33.0: a replica is TP x PP ranks (`world_size`, vllm/config/parallel.py:964); each "
    "node starts `--data-parallel-size-local` replicas, replica r on GPUs r x world_size onwards "
    "(parallel.py:855), so a replica never straddles nodes and the nodes must hold equal groups "
    "(parallel.py:827); with `--nnodes` (pipeline stages) the world divides evenly over the nodes "
    "(vllm/engine/arg_utils.py:2406, 2421). spark-dsl gives each node dp / nodes local replicas and "
    "uses every GPU `gpus` names once.",
    suppressed_by=("SPK204", "SPK205", "SPK216", "SPK218"),
)
def gpu_arithmetic(plan: Plan) -> Iterator[Finding]:
    gpus = plan.value("gpus")
    nodes = plan.setting("nodes")
    if plan.disaggregated and nodes.explicit and nodes.value != plan.total_nodes:
        yield Finding(
            f"nodes = {nodes.value} differs from the {plan.total_nodes} nodes of the disaggregation pools",
            nodes,
            f"use `nodes = {plan.total_nodes}`, or leave `nodes` out",
            replace_with=str(plan.total_nodes),
        )
        return
    for pool in plan.pools:
        ranks, available = pool.dp_size * pool.pp * pool.tp, pool.nodes * gpus
        if ranks == available and pool.dp_size % pool.nodes and pool.pp == 1 and pool.nodes > 1:
            yield _straddling(plan, pool, gpus)
        elif ranks != available:
            fitting = spelled(pool_parallel(plan, pool))
            where = "" if pool.role == "server" else f" in the `{pool.role}` block"
            # Pipeline stages are named only where the spec has them: the message stays as it was.
            sizes = (
                f"dp x pp x tp = {pool.dp_size} x {pool.pp} x {pool.tp}"
                if pool.pp > 1
                else f"dp x tp = {pool.dp_size} x {pool.tp}"
            )
            per_node = "one pipeline stage" if pool.pp > 1 else "one data-parallel replica"
            yield Finding(
                f"{sizes} = {ranks} ranks{_pool_label(pool)}, "
                f"but {pool.nodes} node{'s' if pool.nodes != 1 else ''} x {gpus} GPUs = {available}",
                _arithmetic_culprit(pool),
                f"use `parallel = {fitting}`{where}: {per_node} per node, TP = GPUs per node",
                fix=set_parallel(plan, pool, pool_parallel(plan, pool), f"use `parallel = {fitting}`{where}"),
            )


def _straddling(plan: Plan, pool: Pool, gpus: int) -> Finding:
    """dp x tp fills the nodes, but some replica would hold GPUs of two nodes (`dp(3) + tp(4)` on
    2 x 6): vLLM places a node's local replicas on its own GPUs only."""
    fitting = spelled(pool_parallel(plan, pool))
    where = "" if pool.role == "server" else f" in the `{pool.role}` block"
    return Finding(
        f"{pool.dp_size} data-parallel replicas of {pool.tp} GPUs{_pool_label(pool)} do not divide over "
        f"{pool.nodes} nodes of {gpus} GPUs: a replica would span two nodes",
        pool.parallel,
        f"use `parallel = {fitting}`{where}: one data-parallel replica per node, TP = GPUs per node",
        fix=set_parallel(plan, pool, pool_parallel(plan, pool), f"use `parallel = {fitting}`{where}"),
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
    checks="An NVIDIA deployment on several nodes without `dp(N)`, `pp(N)` or disaggregation.",
    basis="spark-dsl starts vLLM's multi-node rendezvous (`--nnodes`) only for pipeline stages "
    "(SPK217), so a replica without `pp(N)` stays within a node, and extra nodes need data-parallel "
    "replicas, pipeline stages or prefill/decode pools.",
)
def nvidia_multinode_needs_dp(plan: Plan) -> Iterator[Finding]:
    # Where one node is all the path allows, SPK216 says so instead.
    if not plan.vendor.multi_node or plan.disaggregated:
        return
    (pool,) = plan.pools
    if pool.nodes > 1 and pool.dp is None and pool.pp == 1:
        fitting = spelled(pool_parallel(plan, pool))
        yield Finding(
            f"{pool.nodes} nodes need data-parallel replicas: tensor parallelism stays within a node",
            nodes_resolved(plan),
            f"use `parallel = {fitting}`",
            fix=set_parallel(plan, pool, pool_parallel(plan, pool), f"use `parallel = {fitting}`"),
        )


@rule(
    "SPK219",
    "error",
    "tensor-parallel size does not divide the KV heads",
    checks=lambda: (
        "The tensor-parallel size must divide the model's KV heads (`kv_heads`: "
        f"{_for_examples('kv_heads')}), or be a multiple of them, which SPK224 reports. Not for multi-head "
        f"latent attention ({facts.latent_attention_models()}): vLLM caches one latent per layer, whole on every rank."
    ),
    basis="A model fact (the catalog's or the model declaration's), not a recipe sentence: vLLM splits "
    "the KV heads evenly across TP ranks, and gives each KV head to TP / KV-heads ranks when TP "
    "exceeds them (docs/models.md).",
)
def tp_divides_heads(plan: Plan) -> Iterator[Finding]:
    if plan.model.architecture.mla:
        # Multi-head latent attention caches one latent per layer, whole on every TP rank: vLLM's
        # KV heads are 1 (vllm/config/model.py:1673-1675) and TP need only divide the query heads
        # (SPK223).
        return
    heads = plan.model.architecture.kv_heads
    gpus = plan.setting("gpus")
    whole = plan.accelerator.gpus_per_node
    for pool in plan.pools:
        if not heads % pool.tp or not pool.tp % heads:  # a multiple: vLLM replicates the KV heads (SPK224)
            continue
        message = f"tensor-parallel size {pool.tp} does not divide the model's {heads} KV heads"
        if pool.tp != gpus.value and not heads % gpus.value:  # `tp(N)` other than the node's GPUs
            fitting = spelled(pool_parallel(plan, pool))
            fix = set_parallel(plan, pool, pool_parallel(plan, pool), f"use `parallel = {fitting}`")
            yield Finding(message, pool.parallel, f"use `parallel = {fitting}` (TP = GPUs per node)", fix=fix)
        elif gpus.explicit and not heads % whole:  # `gpus` itself does not divide the heads
            yield Finding(message, gpus, f"use all {whole} GPUs of a node: `gpus = {whole}`", replace_with=str(whole))
        else:
            at = pool.parallel if pool.parallel.explicit else gpus
            yield Finding(message, at, f"use a tensor-parallel size of {spelled_divisors(heads)}")
        return


def _expert_parallel_sizes(experts: int) -> str:
    """The EP sizes that split `experts` evenly: every power of two up to a power-of-two count
    (Muse Spark Open's 256, Mixtral's 8), else the count's divisors."""
    if experts & (experts - 1) == 0:
        return f"a power of two up to {experts}"
    return spelled_divisors(experts)


@rule(
    "SPK220",
    "warning",
    "expert-parallel size does not divide the experts",
    checks=lambda: (
        "With expert parallelism, the expert-parallel size (TP x DP of the replica group) does not "
        f"divide the model's routed experts (`experts`: {_for_examples('routed_experts')})."
    ),
    basis="vLLM 0.33.0 accepts an uneven split: each EP rank holds the experts divided by the EP size, "
    "and the first (experts mod size) ranks one more (`model_executor/layers/fused_moe/"
    "expert_map_manager.py:66-69`), so those ranks carry more of every layer's expert work and set "
    "the pace. With `--enable-eplb` vLLM refuses it at load (`fused_moe/layer.py:274`: EPLB supports "
    "only an even distribution). A warning, not an error: the split runs.",
)
def ep_divides_experts(plan: Plan) -> Iterator[Finding]:
    experts = plan.model.architecture.routed_experts
    for pool in plan.pools:
        size = pool.tp * pool.dp_size
        if pool.ep and experts % size:
            written: Parallel = pool.parallel.value
            without_ep = replace(written, ep=False)
            sizes = _expert_parallel_sizes(experts)
            yield Finding(
                f"expert-parallel size {size} (TP {pool.tp} x DP {pool.dp_size}) does not divide the {experts} experts",
                pool.parallel if pool.parallel.explicit else plan.setting("gpus"),
                f"choose TP x DP as {sizes}, or drop `ep` (`parallel = {spelled(without_ep)}`); "
                "an uneven split runs, with the ranks that hold one more expert setting the pace, "
                "but not with `--enable-eplb`",
                fix=set_parallel(plan, pool, without_ep, f"drop `ep`: `parallel = {spelled(without_ep)}`"),
            )
            return


@rule(
    "SPK230",
    "error",
    "pipeline stages with data-parallel replicas",
    checks="`pp(N)` and `dp(N)` in one parallelism (of the deployment or of a disaggregation pool).",
    basis="spark-dsl launches a pipeline as one replica over its nodes (vLLM's `--nnodes`, "
    "`--node-rank`, `--master-addr`), and data-parallel replicas as one rank group per node "
    "(`--data-parallel-address`); it does not lay out replicas of a pipeline. docs/models.md says so.",
)
def pp_without_dp(plan: Plan) -> Iterator[Finding]:
    for pool in plan.pools:
        if pool.pp > 1 and pool.dp is not None:
            written: Parallel = pool.parallel.value
            replicas = replace(written, dp=pool.nodes, pp=None)
            yield Finding(
                f"`parallel = {spelled(written)}` combines pipeline stages with data-parallel replicas"
                f"{_pool_label(pool)}",
                pool.parallel,
                f"use `parallel = {spelled(replicas)}` for a replica per node, or `pp({pool.nodes})` without "
                f"`dp` for one replica over the {pool.nodes} nodes (or two deployments, one pipeline each)",
                label="pp and dp",
                fix=set_parallel(plan, pool, replicas, f"use `parallel = {spelled(replicas)}`"),
            )
            return


@recipe_only
@rule(
    "SPK231",
    "error",
    "pipeline parallelism outside the recipe",
    checks="`pp(N)` in a Muse Spark Open deployment. With `allow_unvalidated = true` this is a warning.",
    basis="The recipe's layouts are TP, TP+EP, DP and prefill/decode disaggregation; it validates no "
    "pipeline split. Extra nodes take data-parallel replicas (SPK218).",
)
def pp_outside_recipe(plan: Plan) -> Iterator[Finding]:
    for pool in plan.pools:
        written: Parallel = pool.parallel.value
        if pool.pp == 1:  # `pp(1)` is one stage: no pipeline to leave the recipe with
            continue
        instead = _as_replicas(pool, plan.vendor.multi_node)
        allowed = bool(plan.value("allow_unvalidated"))
        yield Finding(
            f"`parallel = {spelled(written)}` splits Muse Spark Open into pipeline stages{_pool_label(pool)}, "
            "which the recipe does not validate",
            pool.parallel,
            f"use `parallel = {spelled(instead)}`"
            + ("" if allowed else ", or set `allow_unvalidated = true` to proceed at your own risk"),
            label="outside the recipe",
            severity=Severity.WARNING if allowed else None,
            fix=set_parallel(plan, pool, instead, f"use `parallel = {spelled(instead)}`"),
        )
        return


def _as_replicas(pool: Pool, multi_node: bool = True) -> Parallel:
    """The pool's parallelism with its stages turned into data-parallel replicas over the same
    nodes (one per node, as SPK217 counts them), or none on one node or on a path of one node
    (SPK204, SPK216 say so of the nodes)."""
    written: Parallel = pool.parallel.value
    return replace(written, pp=None, dp=pool.nodes if pool.nodes > 1 and multi_node else None)


@rule(
    "SPK232",
    "error",
    "pipeline stages where vLLM refuses them",
    checks="`pp(N)` with a feature vLLM 0.33.0 does not run with pipeline parallelism: in the decode "
    "pool of a prefill/decode deployment, in the prefill pool of a model with sliding-window layers, "
    "or with `speculative = dspark(adaptive)`.",
    basis="vLLM refuses each at start-up: NixlConnector's decode side (`kv_consumer`) and, with a "
    "hybrid KV cache layout, its pull-mode prefill side do not support pipeline_parallel_size > 1 "
    "(`nixl/base_worker.py`); adaptive verification's cost curves exist only on the last pipeline "
    "rank (`config/vllm.py`, `_validate_adaptive_verification`).",
)
def pp_where_vllm_refuses(plan: Plan) -> Iterator[Finding]:
    for pool in plan.pools:
        if pool.pp == 1:
            continue
        why = None
        if pool.role == "decode":
            why = "vLLM's NixlConnector runs no pipeline stages on the decode side"
        elif pool.role == "prefill" and plan.model.architecture.sliding_window_layers:
            why = "vLLM's NixlConnector runs no pipeline stages with a sliding-window model's hybrid KV cache"
        if why is not None:
            instead = _as_replicas(pool)
            yield Finding(
                f"`parallel = {spelled(pool.parallel.value)}`{_pool_label(pool)}: {why}",
                pool.parallel,
                f"use `parallel = {spelled(instead)}` in the `{pool.role}` block: data-parallel replicas "
                "over the same nodes",
                label="pipeline stages",
                fix=set_parallel(plan, pool, instead, f"use `parallel = {spelled(instead)}`"),
            )
            return
    spec = plan.setting("speculative")
    staged = next((pool for pool in plan.pools if pool.pp > 1), None)
    if staged is not None and spec is not None and spec.value.mode == "dspark" and spec.value.adaptive:
        plain = replace(spec.value, adaptive=False)
        yield Finding(
            "adaptive DSpark verification with pipeline stages: vLLM computes it on the last stage only",
            spec,
            f"use `speculative = {plain.spelled()}` (a fixed draft length), or no pipeline",
            label="adaptive",
            replace_with=plain.spelled(),
        )
