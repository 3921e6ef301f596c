"""Every setting in effect for a deployment, with where its value comes from: what `spark plan` lists.

The plan's own settings (what the recipe resolves) come first; then the values vLLM takes for keys
the spec leaves to it (`max_model_len`, `max_num_seqs`, ...), then every key of the `serve`,
`runtime`, `weights`, `disaggregation`, `workload` and declared `target` blocks that has a value,
written or default. A default that depends on other settings is computed where this module can
(`target.kubernetes.cpu` is 4 per GPU), else shown as the schema describes it (`described`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from msgspec import Struct

from spark_dsl import catalog
from spark_dsl.plan.model import DEFAULT, RECIPE_DEFAULT, Block, Plan, Resolved
from spark_dsl.schema import KeySpec, Kind, deployment_schema
from spark_dsl.span import Location
from spark_dsl.values import Setting

VLLM_DEFAULT = "vLLM default"
# The plan's own keys, in the order people read them (RULES.md's order of decisions).
SETTING_ORDER = (
    "model",
    "accelerator",
    "gpus",
    "nodes",
    "checkpoint",
    "parallel",
    "speculative",
    "attention",
    "frontend",
    "max_model_len",
    "max_num_seqs",
    "kv_cache_dtype",
    "modalities",
    "prefix_caching",
    "chunked_prefill",
    "model_runner",
    "gpu_memory_utilization",
    "allow_unvalidated",
    "concurrency",
    "goal",
)
# Blocks listed after the plan's settings, in this order; `target` blocks last, one per target.
BLOCK_ORDER = ("workload", "serve", "runtime", "weights", "disaggregation")
# Keys the plan already shows under their own name (`fabric`, `router_image`, the workload).
SHOWN_BY_PLAN = {"runtime.fabric": "fabric", "runtime.router_image": "router_image"}
# vLLM 0.33's own default batch size for its API server on GPUs with 70 GiB or more (H100 class
# and up): vllm/engine/arg_utils.py, EngineArgs.get_batch_defaults; 256 on smaller GPUs.
VLLM_MAX_NUM_SEQS_LARGE_GPU = 1024
VLLM_MAX_NUM_SEQS_SMALL_GPU = 256
# On vLLM's CPU backend: 128 per rank of a replica for the API server (the same function).
VLLM_MAX_NUM_SEQS_PER_CPU_RANK = 128
LARGE_GPU_BYTES = 70 * 2**30


class InEffect(Struct, frozen=True):
    """One setting: dotted key, value, origin (`user`, `profile NAME`, `recipe default`, `default`,
    `vLLM default`, ...), where it was written (None for defaults), and the value's kind for
    display. `described` marks a default the schema describes in words (the value is that text)."""

    key: str
    value: Any
    origin: str
    location: Location | None = None
    kind: Kind | None = None
    described: bool = False

    @classmethod
    def of(cls, key: str, resolved: Resolved, kind: Kind | None = None) -> InEffect:
        return cls(key, resolved.value, resolved.origin, resolved.location, kind)


# The rows below are the one table of values with their origins: `spark plan` lists them with the
# defaults the plan computes, the language server's hover (lsp/resolved.py) with the schema's words.


def plan_rows(plan: Plan) -> dict[str, InEffect]:
    """The plan's own settings (what the recipe resolves), by key, in the order the plan resolved them."""
    schema = deployment_schema().keys
    return {key: InEffect.of(key, r, schema[key].kind if key in schema else None) for key, r in plan.settings.items()}


Default = Callable[[str, KeySpec], InEffect | None]


def key_rows(block: Block, prefix: str, default: Default) -> Iterator[InEffect]:
    """A block's keys in schema order (`prefix.key`, or `key` at the top): each written value with
    where it was written, else what `default` says for the key (None: no row)."""
    for key, spec in block.spec.keys.items():
        dotted = f"{prefix}.{key}" if prefix else key
        setting = block.setting(key)
        found = default(dotted, spec) if setting is None else entry_row(dotted, setting, spec.kind)
        if found is not None:
            yield found


def entry_row(dotted: str, setting: Setting, kind: Kind | None = None) -> InEffect:
    """A value as written (a key's, or an entry's of a map block such as `env`), with where."""
    return InEffect.of(dotted, Resolved.from_setting(setting), kind)


def described(dotted: str, spec: KeySpec) -> InEffect | None:
    """The schema's words for a key's default (`by recipe path`), or None where it has none."""
    return InEffect(dotted, spec.default, DEFAULT, None, spec.kind, described=True) if spec.default else None


def settings_in_effect(plan: Plan) -> list[InEffect]:
    return [*_plan_settings(plan), *_block_settings(plan)]


def _plan_settings(plan: Plan) -> Iterator[InEffect]:
    settings = plan_rows(plan)
    for key, default in _vllm_defaults(plan).items():
        settings.setdefault(key, default)
    settings.setdefault("allow_unvalidated", InEffect("allow_unvalidated", False, DEFAULT, kind=Kind.BOOL))
    keys = [k for k in SETTING_ORDER if k in settings]
    keys += sorted(k for k in settings if k not in SETTING_ORDER)
    for key in keys:
        yield settings[key]


def _max_num_seqs(plan: Plan) -> InEffect:
    """vLLM 0.33's default for its API server: by the GPU's memory, or on vLLM's CPU backend 128 per
    rank of a replica (`EngineArgs.get_batch_defaults`, world size = pp x tp)."""
    memory = plan.accelerator.memory_gb
    if memory is None:
        world = plan.pools[0].replica_gpus
        return InEffect(
            "max_num_seqs",
            VLLM_MAX_NUM_SEQS_PER_CPU_RANK * world,
            f"{VLLM_DEFAULT} on the CPU backend: {VLLM_MAX_NUM_SEQS_PER_CPU_RANK} per rank",
            kind=Kind.COUNT,
        )
    large = memory * 10**9 >= LARGE_GPU_BYTES
    return InEffect(
        "max_num_seqs",
        VLLM_MAX_NUM_SEQS_LARGE_GPU if large else VLLM_MAX_NUM_SEQS_SMALL_GPU,
        f"{VLLM_DEFAULT} for {plan.accelerator.display_name}",
        kind=Kind.COUNT,
    )


def _vllm_defaults(plan: Plan) -> dict[str, InEffect]:
    """What vLLM 0.33 takes for the keys a plan leaves to it (no flag, no variable emitted)."""
    defaults = {
        # vllm/config/model.py: without --max-model-len, the model's own context length.
        "max_model_len": InEffect(
            "max_model_len", plan.model.max_context, f"{VLLM_DEFAULT}: the model's context length", kind=Kind.COUNT
        ),
        "max_num_seqs": _max_num_seqs(plan),
        # vllm/config/cache.py: CacheConfig.gpu_memory_utilization = 0.92 (the catalog's threshold).
        "gpu_memory_utilization": InEffect(
            "gpu_memory_utilization", plan.thresholds.gpu_memory_utilization, VLLM_DEFAULT, kind=Kind.FRACTION
        ),
        # No --attention-backend: vLLM picks one for the hardware and model.
        "attention": InEffect("attention", "auto", f"{VLLM_DEFAULT}: vLLM picks the backend", kind=Kind.SYMBOL),
        # No VLLM_USE_V2_MODEL_RUNNER: vLLM's configuration defaults decide (vllm/envs.py).
        "model_runner": InEffect(
            "model_runner", "vLLM's configuration decides", VLLM_DEFAULT, kind=Kind.SYMBOL, described=True
        ),
    }
    if plan.accelerator.on_host:  # vLLM's CPU backend takes its KV cache size from host_memory instead
        del defaults["gpu_memory_utilization"]
    return defaults


def _block_settings(plan: Plan) -> Iterator[InEffect]:
    for name in BLOCK_ORDER:
        if name == "workload":
            continue  # concurrency and goal are plan settings already
        block = plan.spec.block(name)
        if name == "disaggregation":
            if block.declared:
                yield from _disaggregation(plan, block)
            continue
        yield from _keys(plan, name, block)
    for kind, target in sorted(plan.targets.items()):
        yield from _keys(plan, f"target.{kind}", target)


def _keys(plan: Plan, prefix: str, block: Block) -> Iterator[InEffect]:
    def default(dotted: str, spec: KeySpec) -> InEffect | None:
        applies = _APPLIES.get(dotted)
        if applies is not None and not applies(plan, block):
            return None  # a default that only matters with another setting
        return _default(plan, dotted, spec, block)

    yield from (row for row in key_rows(block, prefix, default) if row.key not in SHOWN_BY_PLAN)
    for name, nested in block.spec.blocks.items():
        if nested.map_of is not None:
            for key, setting in sorted(block.block(name).entries().items()):
                yield entry_row(f"{prefix}.{name}.{key}", setting, nested.map_of)


def _disaggregation(plan: Plan, block: Block) -> Iterator[InEffect]:
    yield from _keys(plan, "disaggregation", block)
    for pool in plan.pools:
        nodes = pool.nodes_setting or Resolved(pool.nodes, DEFAULT)
        prefix = f"disaggregation.{pool.role}"
        yield InEffect(f"{prefix}.nodes", nodes.value, nodes.origin, nodes.location, Kind.INTEGER)
        parallel = pool.parallel
        origin = parallel.origin if parallel.location is not None else f"the deployment's parallel ({parallel.origin})"
        yield InEffect(f"{prefix}.parallel", parallel.value, origin, parallel.location, Kind.PARALLEL)


def _default(plan: Plan, dotted: str, spec: KeySpec, block: Block) -> InEffect | None:
    computed = _COMPUTED.get(dotted)
    if computed is not None:
        value, origin = computed(plan, block)
        return InEffect(dotted, value, origin, None, spec.kind)
    if spec.fallback is not None:
        return InEffect(dotted, spec.fallback, DEFAULT, None, spec.kind)
    return described(dotted, spec)  # None: nothing in effect, the key is simply not used


# ---- defaults that depend on other settings: the values the targets compute ------------------


def _api_port(plan: Plan, _block: Block) -> tuple[Any, str]:
    from spark_dsl.plan.launches import api_port

    return api_port(plan), RECIPE_DEFAULT


def _image(plan: Plan, _block: Block) -> tuple[Any, str]:
    return catalog.load().image(plan.accelerator.vendor), f"{RECIPE_DEFAULT} (vLLM's image for {plan.path})"


def _project(plan: Plan, _block: Block) -> tuple[Any, str]:
    return plan.name, f"{DEFAULT}: the deployment name"


def _gpus(plan: Plan) -> int:
    return int(plan.value("gpus"))


def _cpu(plan: Plan, _block: Block) -> tuple[Any, str]:
    from spark_dsl.targets.pod_resources import CPU_PER_GPU

    return CPU_PER_GPU * _gpus(plan), f"{DEFAULT}: {CPU_PER_GPU} per GPU"


def _memory(plan: Plan, _block: Block) -> tuple[Any, str]:
    from spark_dsl.targets.pod_resources import MEMORY_PER_GPU

    shm = int(plan.runtime.value("shm_size") or 0)
    if plan.accelerator.on_host:
        host = int(plan.runtime.value("host_memory") or 0)
        return MEMORY_PER_GPU * _gpus(plan) + shm + host, f"{DEFAULT}: 16GiB per rank + shm_size + host_memory"
    return MEMORY_PER_GPU * _gpus(plan) + shm, f"{DEFAULT}: 16GiB per GPU + runtime.shm_size"


def _ephemeral_storage(plan: Plan, _block: Block) -> tuple[Any, str]:
    from spark_dsl.plan.weights import staging
    from spark_dsl.targets.model_cache import emptydir_size, volume
    from spark_dsl.targets.pod_resources import SMALL_EPHEMERAL_STORAGE

    if volume(plan).kind == "emptydir":
        return emptydir_size(staging(plan)), f"{DEFAULT}: the download's size (model_cache = emptydir)"
    return SMALL_EPHEMERAL_STORAGE, DEFAULT


def _ready_budget(origin: str) -> Callable[[Plan, Block], tuple[Any, str]]:
    """The ready budget, shown as the default of the budget itself and of each wait set from it."""

    def value(plan: Plan, _block: Block) -> tuple[Any, str]:
        from spark_dsl.plan.weights import ready_budget

        return ready_budget(plan).seconds, f"{DEFAULT}: {origin}"

    return value


def _model_cache(plan: Plan, _block: Block) -> tuple[Any, str]:
    from spark_dsl.targets.model_cache import readers, volume

    if volume(plan).kind == "pvc":
        return volume(plan), f"{DEFAULT}: one claim for the {readers(plan)} pods that read the weights"
    return volume(plan), f"{DEFAULT}: one pod reads the weights"


def _cache_size(plan: Plan, _block: Block) -> tuple[Any, str]:
    from spark_dsl.targets.model_cache import claim_size

    size = claim_size(plan)
    if size is None:
        return None, f"{DEFAULT}: none, the claim must exist"
    return size, f"{DEFAULT}: the download's size plus a tenth (spark's own claim)"


def _drain(_plan: Plan, _block: Block) -> tuple[Any, str]:
    from spark_dsl.plan.drain import DEFAULT_SECONDS

    return DEFAULT_SECONDS, f"{DEFAULT}: docs/targets.md, Graceful drain (vLLM's own, 0, aborts)"


_COMPUTED: dict[str, Callable[[Plan, Block], tuple[Any, str]]] = {
    "serve.port": _api_port,
    "serve.ready_timeout": _ready_budget("estimated from the checkpoint's size"),
    "serve.drain": _drain,
    "target.slurm.ready_timeout": _ready_budget("the ready budget (serve.ready_timeout)"),
    "target.compose.start_period": _ready_budget("the ready budget (serve.ready_timeout)"),
    "runtime.image": _image,
    "target.compose.project": _project,
    "target.kubernetes.cpu": _cpu,
    "target.kubernetes.memory": _memory,
    "target.kubernetes.ephemeral_storage": _ephemeral_storage,
    "target.kubernetes.model_cache": _model_cache,
    "target.kubernetes.cache_size": _cache_size,
    "target.kubernetes.rdma_devices": lambda plan, _block: (_gpus(plan), f"{DEFAULT}: one per GPU"),
}


def _claim(plan: Plan, _block: Block) -> bool:
    from spark_dsl.targets.model_cache import volume

    return volume(plan).kind == "pvc"


def _fabric(plan: Plan) -> str | None:
    fabric: str | None = plan.runtime.value("fabric")
    return fabric


def _rdma(plan: Plan, _block: Block) -> bool:
    return _fabric(plan) in ("infiniband", "roce")


def _rdma_or_efa(plan: Plan, _block: Block) -> bool:
    return _fabric(plan) in ("infiniband", "roce", "efa")


def _efa(plan: Plan, _block: Block) -> bool:
    return _fabric(plan) == "efa"


# Defaults shown only where they take effect: the claim's size and class with `pvc(...)`, the
# RDMA resource with an InfiniBand or RoCE fabric, the device count with any RDMA fabric, the huge
# pages with EFA.
def _on_host(plan: Plan, _block: Block) -> bool:
    return plan.accelerator.on_host


_APPLIES: dict[str, Callable[[Plan, Block], bool]] = {
    "runtime.host_memory": _on_host,
    "runtime.cpu_cores": _on_host,
    "target.kubernetes.cache_size": _claim,
    "target.kubernetes.storage_class": _claim,
    "target.kubernetes.rdma_resource": _rdma,
    "target.kubernetes.rdma_devices": _rdma_or_efa,
    "target.kubernetes.hugepages": _efa,
}
