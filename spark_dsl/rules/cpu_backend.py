"""vLLM's CPU backend (SPK233-SPK241): what `accelerator = cpu` needs and what it cannot do.

The accelerator's facts are the catalog's (`accelerators.yaml`: no memory of its own, the weight
formats it runs, no speculative decoding); what vLLM's CPU code does with the rest is cited where
each rule is declared, from the pinned vLLM 0.33.0 wheel and vLLM's CPU documentation."""

from __future__ import annotations

from collections.abc import Iterator

from msgspec import Struct

from spark_dsl import catalog
from spark_dsl.diagnostics import Fix, replacement
from spark_dsl.edits import add_setting, insert_entry, remove_entry
from spark_dsl.plan.capacity import GIB, host_memory_needed
from spark_dsl.plan.host_cpus import THREADS_BIND_ENV, local_ranks, parse
from spark_dsl.plan.model import Plan, Resolved
from spark_dsl.rules import catalog_texts as facts
from spark_dsl.rules.registry import Finding, rule, shown
from spark_dsl.rules.suggest import add_to_body_of
from spark_dsl.syntax import ast

# The examples declare a Llama of about a million parameters in BF16, what a CI machine serves on
# two cores (head size 32, the smallest the CPU attention takes).


def gib_text(size: int) -> str:
    return f"{size // GIB}GiB" if size % GIB == 0 else f"{size}B"


def _runtime_body(plan: Plan) -> ast.Body | None:
    """The body of the deployment's own `runtime { }` block, if its text writes one."""
    for entry in plan.deployment.node.body.entries:
        if isinstance(entry, ast.Block) and entry.kind.name == "runtime":
            return entry.body
    return None


def raise_host_memory(plan: Plan) -> tuple[Resolved, str, Fix | None] | None:
    """On vLLM's CPU backend with `runtime.host_memory` written: it, the help that raises it to the
    least that holds the weights, one full-length sequence and the KV headroom, and that fix
    (what SPK301 and SPK302 say there instead of a GPU's memory or utilization)."""
    setting = plan.runtime.setting("host_memory")
    need = host_memory_needed(plan)
    if setting is None or need is None:
        return None
    size = gib_text(need)
    message = f"set `host_memory = {size}`"
    help_text = f"raise `runtime.host_memory` to {size}, the least that holds the weights and one full-length sequence"
    return Resolved.from_setting(setting), help_text, host_memory_fix(plan, need, message)


def host_memory_fix(plan: Plan, size: int, message: str) -> Fix | None:
    """`host_memory = SIZE`: the written value replaced, else added to the deployment's own
    `runtime { }` block, else that block added with it. None where a profile holds the block."""
    value = gib_text(size)
    written = plan.runtime.setting("host_memory")
    if written is not None:
        loc = Resolved.from_setting(written).location
        return None if loc is None else replacement(message, loc.file, loc.span, value)
    source = plan.deployment.source
    body = _runtime_body(plan)
    if body is not None:
        return add_setting(message, source, body, "host_memory", value)
    if plan.runtime.declared:
        return None
    return Fix(message, (insert_entry(source, plan.deployment.node.body, f"runtime {{ host_memory = {value} }}"),))


@rule(
    "SPK233",
    "error",
    "vLLM's CPU backend without the host memory it may use",
    checks="`accelerator = cpu` without `runtime.host_memory`: the host memory each node gives vLLM "
    "for weights and KV cache. The help suggests the least that holds each rank's share of the "
    "weights and one sequence of `max_model_len` tokens, rounded up to a GiB.",
    basis="On the CPU backend the weights and the KV cache live in the host's memory. vLLM sizes "
    "the KV cache from `--kv-cache-memory-bytes` (or `VLLM_CPU_KVCACHE_SPACE`); without one it "
    "reserves a fraction of the whole NUMA node's memory for every rank and stops when that is "
    "not free (`vllm/v1/worker/cpu_worker.py`, `determine_available_memory`). vLLM's CPU docs: a "
    "rank's memory is its weight shard plus its KV cache space. spark hands each rank the KV cache "
    "that its share of the host memory leaves after its share of the weights.",
)
def host_memory_required(plan: Plan) -> Iterator[Finding]:
    if not plan.accelerator.on_host or plan.runtime.value("host_memory") is not None:
        return
    need = host_memory_needed(plan) or GIB
    written = f"runtime {{ host_memory = {gib_text(need)} }}"
    yield Finding(
        f"`accelerator = {plan.accelerator.id}` needs the host memory vLLM may use on each node",
        plan.setting("accelerator"),
        f"set `{written}` or more: the least that holds the weights and one full-length sequence "
        "(vLLM's processes need memory beside it)",
        label="no host memory",
        fix=host_memory_fix(plan, need, f"set `{written}`"),
    )


def _few_formats() -> str:
    """`on `accelerator = cpu` only BF16, so no FP8, NVFP4 or MXFP4 checkpoint`: each accelerator
    that runs fewer formats than its `fp8`/`fp4` allow, with what it runs and what it does not."""
    return "; ".join(
        f"on `accelerator = {a.id}` only {facts.spelled(f.upper() for f in a.weight_formats)}, so no "
        f"{facts.spelled((f.upper() for f in catalog.weight_formats() if f not in a.weight_formats), 'or')} checkpoint"
        for a in catalog.load().accelerators.values()
        if a.weight_formats is not None
    )


@rule(
    "SPK234",
    "error",
    "checkpoint format vLLM's CPU backend does not run",
    checks=lambda: (
        "The checkpoint's weight format is not one the accelerator runs (the catalog's "
        f"`weight_formats`): {_few_formats()} and no load-time conversion to one."
    ),
    basis="vLLM's CPU docs list AWQ, GPTQ and compressed-tensors INT8 W8A8 as the quantizations the "
    "CPU backend supports, and vLLM's quantization table marks no x86 CPU support for FP8 or the "
    "FP4 formats (docs.vllm.ai: Installation > CPU > FAQ; Features > Quantization > Supported "
    "Hardware).",
)
def checkpoint_format(plan: Plan) -> Iterator[Finding]:
    acc, ckpt = plan.accelerator, plan.checkpoint
    if acc.weight_formats is None or ckpt is None or ckpt.dtype in acc.weight_formats:
        return
    runs = ", ".join(acc.weight_formats)
    other = next((c.id for c in plan.model.checkpoints.values() if c.dtype in acc.weight_formats), None)
    written = plan.setting("checkpoint")
    explicit = written is not None and written.explicit
    if other is None:
        help_text = f"declare a {runs} checkpoint of `{plan.model.id}`, or use a GPU accelerator"
        fix = None
    else:
        help_text = f"use `checkpoint = {other}`"
        fix = None if explicit else add_to_body_of(plan, None, "checkpoint", other, help_text)
    yield Finding(
        f"checkpoint `{ckpt.id}` has {ckpt.dtype} weights, and `{acc.id}` runs {runs} weights only",
        written if explicit else plan.setting("accelerator"),
        help_text,
        label=f"no {ckpt.dtype} here",
        replace_with=other if explicit else None,
        fix=fix,
    )


@rule(
    "SPK235",
    "error",
    "speculative decoding on vLLM's CPU backend",
    checks="`speculative` turns a draft model on where vLLM runs none (the catalog's "
    "`speculative_decoding`): `accelerator = cpu`.",
    basis="vLLM's feature matrix marks speculative decoding unsupported on CPU (docs.vllm.ai: "
    "Features > Compatibility Matrix > Feature x Hardware).",
)
def no_draft_on_host(plan: Plan) -> Iterator[Finding]:
    spec = plan.setting("speculative")
    if spec is None or spec.value.mode == "none" or plan.accelerator.speculative_decoding:
        return
    yield Finding(
        f"`speculative = {spec.value.spelled()}` runs a draft model, and vLLM runs none on `{plan.accelerator.id}`",
        spec,
        "use `speculative = none`",
        label="no speculative decoding here",
        replace_with="none",
    )


class _Ignored(Struct, frozen=True):
    """A written setting vLLM's CPU backend ignores, and how to stop writing it."""

    shown: str
    at: Resolved
    why: str
    help: str
    fix: Fix | None = None
    replace_with: str | None = None


def _ignored(plan: Plan) -> Iterator[_Ignored]:
    source = plan.deployment.source
    util = plan.setting("gpu_memory_utilization")
    if util is not None and util.location is not None:
        mine = util.location.file == source.name
        yield _Ignored(
            f"gpu_memory_utilization = {util.value:g}",
            util,
            "vLLM's CPU worker reads it only to size a KV cache it is not given, and spark gives each "
            "rank its KV cache from `runtime.host_memory`",
            "remove it: `runtime.host_memory` is the memory here",
            remove_entry("remove `gpu_memory_utilization`", source, util.location.span) if mine else None,
        )
    att = plan.setting("attention")
    backend = catalog.load().attention_backend(att.value) if att is not None else None
    if att is not None and att.location is not None and backend is not None:
        yield _Ignored(
            f"attention = {att.value}",
            att,
            f"vLLM's CPU backend runs its own attention whatever `--attention-backend {backend.vllm}` says",
            "use `attention = auto`",
            replace_with="auto",
        )
    fabric = plan.runtime.setting("fabric")
    if fabric is not None and not plan.disaggregated:
        mine = fabric.origin.file == source.name
        yield _Ignored(
            f"runtime.fabric = {fabric.value}",
            Resolved.from_setting(fabric),
            "it sets NCCL's transport, and vLLM's CPU backend joins its ranks with gloo",
            "remove it",
            remove_entry("remove `fabric`", source, fabric.origin.key_span) if mine else None,
        )


@rule(
    "SPK236",
    "warning",
    "a setting vLLM's CPU backend ignores",
    checks="On `accelerator = cpu`: `gpu_memory_utilization`, an `attention` backend other than "
    "`auto`, or `runtime.fabric` outside prefill/decode disaggregation.",
    basis="vLLM's CPU worker sizes its KV cache from `--kv-cache-memory-bytes` when given, as spark "
    "gives it, and reads `--gpu-memory-utilization` only otherwise (`vllm/v1/worker/cpu_worker.py`); "
    "the CPU platform runs its CPU_ATTN backend whatever `--attention-backend` says, logging "
    "`Cannot use ... backend on CPU` (`vllm/platforms/cpu.py`, `get_attn_backend_cls`); its "
    "distributed backend is gloo, not NCCL (`CpuPlatform.dist_backend`).",
)
def ignored_settings(plan: Plan) -> Iterator[Finding]:
    if not plan.accelerator.on_host:
        return
    for each in _ignored(plan):
        yield Finding(
            f"`{each.shown}` has no effect on `{plan.accelerator.id}`: {each.why}",
            each.at,
            each.help,
            label="ignored here",
            fix=each.fix,
            replace_with=each.replace_with,
        )


@rule(
    "SPK237",
    "warning",
    "an FP8 KV cache on vLLM's CPU backend",
    checks="`kv_cache_dtype` other than `auto` on `accelerator = cpu`.",
    basis="vLLM's CPU attention stores an FP8 KV cache only on x86 hosts with AVX-512 or AMX, and "
    "refuses it elsewhere (`FP8 KV cache on CPU requires x86 with AVX-512 or AMX`, "
    "`vllm/v1/attention/backends/cpu_attn.py`), as on an AVX2 machine.",
)
def fp8_kv_cache(plan: Plan) -> Iterator[Finding]:
    kv = plan.setting("kv_cache_dtype")
    if not plan.accelerator.on_host or kv is None or kv.value == "auto" or not kv.explicit:
        return
    yield Finding(
        f"`kv_cache_dtype = {kv.value}` needs a host with AVX-512 or AMX: vLLM's CPU attention refuses "
        "that KV cache elsewhere",
        kv,
        "keep it only where `lscpu` lists avx512f or amx; else use `kv_cache_dtype = auto`",
        label="AVX-512 or AMX only",
        replace_with="auto",
    )


@rule(
    "SPK238",
    "warning",
    "prefill/decode disaggregation on vLLM's CPU backend needs NIXL in the image",
    checks="A `disaggregation` block on `accelerator = cpu`.",
    basis="The P/D launches use vLLM's NixlConnector. Neither vLLM's CPU wheel nor its requirements "
    "carry NIXL, and vLLM's NixlConnector guide has non-CUDA platforms build NIXL with UCX from "
    "source (docs.vllm.ai: Features > NixlConnector Usage Guide > Installation).",
)
def pd_needs_nixl(plan: Plan) -> Iterator[Finding]:
    if not plan.accelerator.on_host or not plan.disaggregated:
        return
    yield Finding(
        f"prefill/decode disaggregation on `{plan.accelerator.id}` needs NIXL, which vLLM's CPU image "
        "and wheel do not carry",
        plan.spec.block("disaggregation").header("disaggregation"),
        "build NIXL with UCX from source into the image (`runtime.image`), or leave out the `disaggregation` block",
        label="NIXL needed",
    )


@rule(
    "SPK239",
    "warning",
    "a CPU backend setting on a GPU accelerator",
    checks="`runtime.host_memory` or `runtime.cpu_cores` with an accelerator that has GPUs.",
    basis="Both are settings of vLLM's CPU backend (`accelerator = cpu`): a GPU's memory is the "
    "catalog's, and GPU ranks bind no CPU list; neither reaches a launch there.",
)
def host_settings_on_gpus(plan: Plan) -> Iterator[Finding]:
    if plan.accelerator.on_host:
        return
    source = plan.deployment.source
    for key in ("host_memory", "cpu_cores"):
        setting = plan.runtime.setting(key)
        if setting is None:
            continue
        mine = setting.origin.file == source.name
        yield Finding(
            f"`{key}` has no effect on `{plan.accelerator.id}`: it is a setting of vLLM's CPU backend",
            Resolved.from_setting(setting, key_span=True),
            f"remove it, or serve on `accelerator = {_host_id()}`",
            label="ignored here",
            fix=remove_entry(f"remove `{key}`", source, setting.origin.key_span) if mine else None,
        )


def _host_id() -> str:
    return next(a.id for a in catalog.load().accelerators.values() if a.on_host)


@rule(
    "SPK240",
    "error",
    "`runtime.cpu_cores` that cannot bind every rank",
    checks="On `accelerator = cpu`, `runtime.cpu_cores` must be a Linux CPU list (`0-31`, "
    "`0-15,32-47`) with at least one CPU for each rank a node runs (its tensor-parallel size times "
    "its local data-parallel replicas).",
    basis="spark splits the list into equal runs, one per rank, as vLLM's "
    "`VLLM_CPU_OMP_THREADS_BIND` takes them (`0-31|32-63`); vLLM stops when the lists are not one "
    "per rank (`vllm/utils/ompmultiprocessing.py`).",
)
def cpu_cores_bind(plan: Plan) -> Iterator[Finding]:
    setting = plan.runtime.setting("cpu_cores")
    if not plan.accelerator.on_host or setting is None:
        return
    ids = parse(setting.value)
    ranks = max(local_ranks(pool) for pool in plan.pools)
    if isinstance(ids, str):
        message = f"`cpu_cores = {shown(setting.value)}` is not a CPU list: {ids}"
    elif len(ids) < ranks:
        cpus = f"{len(ids)} CPU{'s' * (len(ids) != 1)}"
        message = f"`cpu_cores = {shown(setting.value)}` lists {cpus} for {ranks} ranks per node"
    else:
        return
    yield Finding(
        message,
        Resolved.from_setting(setting),
        f'list the host\'s CPUs for the ranks, at least one each (`"0-{ranks - 1}"` for {ranks}), as `lscpu` '
        "numbers them; leave a CPU or two out for the API server",
        label="not one CPU run per rank",
    )


@rule(
    "SPK241",
    "warning",
    "several ranks on a node bound by vLLM's `auto`",
    checks="On `accelerator = cpu`, a node runs more than one rank and neither `runtime.cpu_cores` "
    "nor `VLLM_CPU_OMP_THREADS_BIND` in `serve.env` says which CPUs each binds.",
    basis="vLLM's default binding, `auto`, gives each rank of a node a NUMA node of its own and stops "
    "on a host with fewer (`Not enough allowed NUMA nodes to bind threads`, "
    "`vllm/utils/ompmultiprocessing.py`): most one-socket machines have one. vLLM's CPU docs: "
    "`VLLM_CPU_OMP_THREADS_BIND` takes one CPU list per rank, `nobind` none.",
)
def auto_binding(plan: Plan) -> Iterator[Finding]:
    if not plan.accelerator.on_host or plan.runtime.value("cpu_cores"):
        return
    if THREADS_BIND_ENV in plan.serve.block("env").mapping():
        return
    ranks = max(local_ranks(pool) for pool in plan.pools)
    if ranks < 2:
        return
    yield Finding(
        f"{ranks} ranks per node with vLLM's `auto` CPU binding, which needs a NUMA node for each",
        plan.setting("gpus") if plan.setting("gpus").explicit else plan.setting("accelerator"),
        f'set `runtime {{ cpu_cores = "..." }}` to the host\'s CPUs for the {ranks} ranks (as `lscpu` '
        f'numbers them, e.g. `"0-{2 * ranks - 1}"`), or `serve {{ env {{ {THREADS_BIND_ENV} = "nobind" }} }}`',
        label="auto binding",
    )
