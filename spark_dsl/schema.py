"""The one schema table of the language: every key and block, its type, unit family and symbols.

The type checker, the formatter, the language server (hover, completion) and the
docs all read this table; nothing else lists keys.
"""

from __future__ import annotations

from enum import StrEnum
from functools import lru_cache
from typing import Any

from msgspec import Struct, field
from msgspec.structs import force_setattr

from spark_dsl.targets import registry as target_table
from spark_dsl.units import format_duration
from spark_dsl.values import Volume, spelled

# The settings that say what is deployed on what: no fix replaces their value with another
# (docs/fixes.md), since every capacity number and rule follows from them. A did-you-mean names
# a near spelling in the help; only the same name in other capitals is written by a fix.
IDENTITY_KEYS = frozenset({"model", "accelerator"})


class Kind(StrEnum):
    """A key's value type, named as users read it in messages."""

    INTEGER = "integer"
    COUNT = "count"
    SIZE = "size"
    DURATION = "duration"
    FRACTION = "fraction"
    BOOL = "boolean"
    STRING = "string"
    SYMBOL = "symbol"
    MODEL = "model id"
    SYMBOL_LIST = "list of symbols"
    STRING_LIST = "list of strings"
    PARALLEL = "parallelism"
    SPECULATIVE = "speculative decoding"
    SECRET = "secret reference"
    VOLUME = "volume"


class KeySpec(Struct, frozen=True):
    """One key: its type, its documentation and its default.

    `fallback` is the value the plan takes when the spec leaves the key out (None: no value, or
    one computed from other settings, which `default` then describes in words). It is the one
    definition of that default: the plan's parts, the targets, the rules and `spark plan` read
    it, and `default`, the text docs, hover and `spark explain` show, is spelled from it unless
    a description is given.
    """

    name: str
    kind: Kind
    doc: str
    symbols: tuple[str, ...] = ()
    default: str = ""
    minimum: int | None = None
    maximum: int | None = None
    # Typed (not Any) so the built-in targets' keys decode from declared.json as they were declared.
    fallback: bool | int | str | tuple[str, ...] | Volume | None = None

    def __post_init__(self) -> None:
        if self.fallback is not None and not self.default:
            force_setattr(self, "default", _spelled_default(self.kind, self.fallback))

    @property
    def type_name(self) -> str:
        if self.kind is Kind.SYMBOL:
            return " | ".join(self.symbols)
        if self.kind is Kind.SYMBOL_LIST:
            return "list of " + " | ".join(self.symbols)
        return self.kind.value


class BlockSpec(Struct, frozen=True):
    """A body: its keys, its nested blocks, and for labelled blocks one body per label.

    `map_of` makes the body a free-form map (keys are names chosen by the user,
    values all of that kind), as in `env { ... }`.
    """

    name: str
    doc: str
    keys: dict[str, KeySpec] = field(default_factory=dict)
    blocks: dict[str, BlockSpec] = field(default_factory=dict)
    labels: dict[str, BlockSpec] | None = None
    map_of: Kind | None = None


def _spelled_default(kind: Kind, value: Any) -> str:
    if kind is Kind.DURATION:
        return format_duration(value)
    return spelled(value)


def _keys(*specs: KeySpec) -> dict[str, KeySpec]:
    return {s.name: s for s in specs}


MODALITIES = ("text", "image", "audio", "video")
FABRICS = ("infiniband", "roce", "efa", "tcp")


def _pool(name: str) -> BlockSpec:
    return BlockSpec(
        name,
        f"the {name} pool of a disaggregated deployment",
        keys=_keys(
            KeySpec("nodes", Kind.INTEGER, f"nodes in the {name} pool", fallback=1, minimum=1),
            KeySpec(
                "parallel",
                Kind.PARALLEL,
                f"parallelism of the {name} pool's nodes",
                default="the deployment's `parallel`",
            ),
        ),
    )


def _targets() -> dict[str, BlockSpec]:
    """`target KIND { }`: one body per target, from the declaration at the end of its module."""
    return {
        t.kind: BlockSpec(t.kind, t.doc, keys=_keys(*t.keys), blocks={b.name: b for b in t.blocks})
        for t in target_table.all_targets()
    }


def deployment_schema() -> BlockSpec:
    """The body of a deployment (and of a profile), with symbols from the catalog."""
    return _deployment_schema(target_table.generation())


# Long: the deployment's keys and blocks are one table of data, read top to bottom.
# Keyed by the target table's generation: built again only when a target is registered.
@lru_cache(maxsize=1)
def _deployment_schema(targets_generation: int) -> BlockSpec:
    from spark_dsl import catalog

    cat = catalog.load()
    return BlockSpec(
        "deployment",
        "one deployment of a model",
        keys=_keys(
            KeySpec("model", Kind.MODEL, "catalog model id", symbols=tuple(cat.models), default="required"),
            KeySpec(
                "accelerator",
                Kind.SYMBOL,
                "catalog accelerator id",
                # The validated ones first: the help lists them before the others.
                symbols=tuple(sorted(cat.accelerators, key=lambda a: not cat.accelerators[a].validated)),
                default="required",
            ),
            KeySpec(
                "gpus",
                Kind.INTEGER,
                "GPUs used on each node (on vLLM's CPU backend: ranks, one worker process each)",
                default="the accelerator's GPUs per node",
                minimum=1,
            ),
            KeySpec("nodes", Kind.INTEGER, "nodes", fallback=1, minimum=1),
            KeySpec(
                "checkpoint",
                Kind.SYMBOL,
                "which weights",
                # The recipe's checkpoints, then every weight format a declared model's may have.
                symbols=tuple(dict.fromkeys((*cat.recipe.checkpoints, *catalog.weight_formats()))),
                default="by recipe path",
            ),
            KeySpec(
                "parallel",
                Kind.PARALLEL,
                "a combination of `tp`, `tp(N)`, `pp(N)`, `ep`, `dp(N)`; or `auto`",
                default="by recipe path",
            ),
            KeySpec(
                "speculative",
                Kind.SPECULATIVE,
                "`none`, `dspark`, `dspark(adaptive)` (optional `tokens = N`) or `auto`",
                default="by recipe path",
            ),
            KeySpec(
                "attention",
                Kind.SYMBOL,
                "attention backend",
                symbols=("auto", *(b.name for b in cat.recipe.attention_backends)),
                default="by recipe path",
            ),
            KeySpec(
                "frontend", Kind.SYMBOL, "API server frontend", symbols=("rust", "python"), default="by recipe path"
            ),
            KeySpec("max_model_len", Kind.COUNT, "context limit in tokens", default="by recipe path", minimum=1),
            KeySpec("max_num_seqs", Kind.COUNT, "concurrent sequences per engine", default="vLLM's", minimum=1),
            KeySpec(
                "kv_cache_dtype",
                Kind.SYMBOL,
                "KV cache precision",
                symbols=tuple(cat.recipe.kv_cache_dtypes),
                fallback="auto",
            ),
            KeySpec(
                "modalities", Kind.SYMBOL_LIST, "input modalities served", symbols=MODALITIES, default="by recipe path"
            ),
            KeySpec("prefix_caching", Kind.BOOL, "automatic prefix caching", default="by recipe path"),
            KeySpec("chunked_prefill", Kind.BOOL, "chunked prefill", default="by recipe path"),
            KeySpec("model_runner", Kind.SYMBOL, "vLLM model runner", symbols=("v1", "v2"), default="by recipe path"),
            KeySpec(
                "gpu_memory_utilization",
                Kind.FRACTION,
                "fraction of GPU memory vLLM may use, in (0, 1]",
                default=f"{cat.thresholds.gpu_memory_utilization:g}",
            ),
            KeySpec(
                "allow_unvalidated",
                Kind.BOOL,
                "turn 'not a validated configuration' errors into warnings",
                fallback=False,
            ),
        ),
        blocks={
            "workload": BlockSpec(
                "workload",
                "the traffic the deployment is sized for",
                keys=_keys(
                    KeySpec("concurrency", Kind.COUNT, "concurrent requests", minimum=1),
                    KeySpec("goal", Kind.SYMBOL, "what to optimize", symbols=("latency", "throughput")),
                    KeySpec(
                        "input_tokens",
                        Kind.COUNT,
                        "prompt tokens per request (the benchmark's random input length)",
                        default="1024, as `vllm bench serve`",
                        minimum=1,
                        maximum=10_000_000,
                    ),
                    KeySpec(
                        "output_tokens",
                        Kind.COUNT,
                        "generated tokens per request (the benchmark's random output length)",
                        default="128, as `vllm bench serve`",
                        minimum=1,
                        maximum=10_000_000,
                    ),
                ),
            ),
            "serve": BlockSpec(
                "serve",
                "the API server's own settings",
                keys=_keys(
                    KeySpec("port", Kind.INTEGER, "API port", fallback=cat.recipe.ports.api, minimum=1, maximum=65535),
                    KeySpec("host", Kind.STRING, "address to bind"),
                    KeySpec("served_model_name", Kind.STRING, "model name clients use"),
                    KeySpec("api_key", Kind.SECRET, "API key: `secret(...)` or `env(...)`"),
                    KeySpec(
                        # Zero would give up before the engine starts.
                        "ready_timeout",
                        Kind.DURATION,
                        "how long the servers may take to load and answer /health: every waiter's budget",
                        default="estimated from the checkpoint's size (docs/targets.md, The ready budget)",
                        minimum=1,
                    ),
                    KeySpec(
                        # Zero is vLLM's own default: abort every in-flight request on SIGTERM.
                        "drain",
                        Kind.DURATION,
                        "how long in-flight requests may finish when a server is stopped (vLLM's "
                        "`--shutdown-timeout`); the stop clocks of every target are set above it",
                        default="60s (docs/targets.md, Graceful drain); vLLM's own is 0s: abort",
                        minimum=0,
                    ),
                    KeySpec("extra_args", Kind.STRING_LIST, "vLLM flags the language does not model"),
                ),
                blocks={"env": BlockSpec("env", "extra environment variables", map_of=Kind.STRING)},
            ),
            "runtime": BlockSpec(
                "runtime",
                "where and how the server runs",
                keys=_keys(
                    KeySpec("image", Kind.STRING, "container image", default="vLLM's image for the vendor, pinned"),
                    KeySpec("model_path", Kind.STRING, "repository or local path served instead of the catalog's"),
                    KeySpec("hf_token", Kind.SECRET, "Hugging Face token: `secret(...)` or `env(...)`"),
                    KeySpec("model_cache", Kind.STRING, "where weights are cached (a folder every node shares)"),
                    KeySpec("shm_size", Kind.SIZE, "shared-memory size"),
                    KeySpec(
                        "fabric",
                        Kind.SYMBOL,
                        "the network between nodes: RDMA devices, capabilities and NCCL/NIXL settings",
                        symbols=FABRICS,
                        default="none: NCCL and UCX detect it",
                    ),
                    KeySpec("router_image", Kind.STRING, "image of the P/D router", default="the vLLM image"),
                    # vLLM's CPU backend (`accelerator = cpu`): the host is the accelerator.
                    KeySpec(
                        "host_memory",
                        Kind.SIZE,
                        "host memory each node gives vLLM's CPU backend for weights and KV cache",
                        default="none: vLLM's CPU backend needs it",
                        minimum=1,
                    ),
                    KeySpec(
                        "cpu_cores",
                        Kind.STRING,
                        "the host CPUs each node's ranks bind their threads to on vLLM's CPU backend, a Linux "
                        'CPU list (`"0-31"`) split evenly among them',
                        default="vLLM's `auto` binding: one NUMA node per rank",
                    ),
                ),
            ),
            "weights": BlockSpec(
                "weights",
                "staging the checkpoint before the launches",
                keys=_keys(
                    KeySpec(
                        "download",
                        Kind.BOOL,
                        "download the checkpoint (and draft) once, before any launch",
                        default="false: vLLM downloads on start",
                        fallback=False,
                    ),
                    KeySpec(
                        # `timeout 0` runs without a limit: zero is no budget at all.
                        "download_timeout",
                        Kind.DURATION,
                        "time budget of the download step",
                        fallback=2 * 3600,
                        minimum=1,
                    ),
                ),
            ),
            "disaggregation": BlockSpec(
                "disaggregation",
                "prefill/decode disaggregation",
                keys=_keys(
                    KeySpec("connector", Kind.SYMBOL, "KV transfer connector", symbols=("nixl",), fallback="nixl")
                ),
                blocks={"prefill": _pool("prefill"), "decode": _pool("decode")},
            ),
            "target": BlockSpec("target", "an output to build", labels=_targets()),
        },
    )


def lookup_block(path: tuple[str, ...]) -> BlockSpec | None:
    """The schema of a nested body, by block kinds and labels from the deployment down."""
    spec: BlockSpec | None = deployment_schema()
    for part in path:
        if spec is None:
            return None
        spec = spec.labels.get(part) if spec.labels is not None else spec.blocks.get(part)
    return spec
