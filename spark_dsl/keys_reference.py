"""docs/keys.md: every key and block of the language, generated from the schema table.

`python -m spark_dsl.keys_reference > docs/keys.md` writes it; tests/test_keys_reference.py fails
when the file is stale, when a key has no "used by" entry below, and when an entry disagrees with
what the emitters really do (it builds a reference deployment with and without each key).
"""

from __future__ import annotations

from msgspec import Struct

from spark_dsl.schema import BlockSpec, KeySpec, Kind, deployment_schema
from spark_dsl.targets import registry as target_table
from spark_dsl.units import FAMILY_UNITS

# Client targets (the smoke check, the benchmark) run no launch: only the keys they read use them.
_NAMED = "smoke, bench: the model name they send, the benchmark's tokenizer"


class Use(Struct, frozen=True):
    """Which targets' outputs a key changes, and through what."""

    targets: tuple[str, ...]
    how: str


class Reach(Struct, frozen=True):
    """What a key outside `target` blocks changes, in words, and whether through the vLLM launch.

    A `launch` key changes every target that runs a launch (all but the clients; a `multi_node`
    key's deployments only build for the targets that span nodes). Any other target that reads the
    key says so in its declaration (`Target.reads`), so `used_by` derives the targets from the table.
    """

    how: str
    launch: bool = True
    multi_node: bool = False


LAUNCH = Reach("the vLLM launch")
# Keys outside `target` blocks, by dotted path.
REACH: dict[str, Reach] = {
    "model": Reach(f"the vLLM launch (the model served); {_NAMED}"),
    "accelerator": Reach(f"the vLLM launch, the image's vendor and the GPU resources; {_NAMED}"),
    "gpus": Reach("the vLLM launch and the GPU resources"),
    "nodes": Reach(
        "the launches per node; more than one needs " + target_table.either(target_table.multi_node_kinds())
    ),
    "checkpoint": Reach(f"the vLLM launch; {_NAMED}"),
    "parallel": LAUNCH,
    "speculative": Reach("the vLLM launch; the draft's weights count in the ready budget every waiter shares"),
    "attention": LAUNCH,
    "frontend": LAUNCH,
    "max_model_len": LAUNCH,
    "max_num_seqs": LAUNCH,
    "kv_cache_dtype": LAUNCH,
    "modalities": Reach("the vLLM launch; smoke: the request with an image"),
    "prefix_caching": LAUNCH,
    "chunked_prefill": LAUNCH,
    "model_runner": LAUNCH,
    "gpu_memory_utilization": LAUNCH,
    "allow_unvalidated": Reach("no output: it turns 'not validated' errors into warnings", launch=False),
    "workload.concurrency": Reach(
        "the launch, through the AMD workload policy's `parallel` and draft; bench: --max-concurrency"
    ),
    "workload.input_tokens": Reach("the benchmark's --random-input-len", launch=False),
    "workload.output_tokens": Reach("the benchmark's --random-output-len", launch=False),
    "workload.goal": Reach("the launch, through the AMD workload policy's `parallel` and draft"),
    "serve.port": Reach("the vLLM launch, ports, probes and health checks; the jobs' port"),
    "serve.host": LAUNCH,
    "serve.served_model_name": Reach("the vLLM launch; smoke, bench: the model name they send"),
    "serve.api_key": Reach("the launch's environment (from the secret), never its text; the jobs' key"),
    "serve.ready_timeout": Reach(
        "every waiter: VLLM_ENGINE_READY_TIMEOUT_S, the router's wait, probes, the job's and clients' /health wait"
    ),
    "serve.drain": Reach(
        "vLLM's --shutdown-timeout; Kubernetes: the grace period and an update's deadline; Compose: "
        "stop_grace_period; Slurm: the steps' SIGTERM before the time limit"
    ),
    "serve.extra_args": LAUNCH,
    "serve.env": Reach("the launch's environment"),
    "runtime.image": Reach(
        "the container image (Slurm: with `container`); bench-job: the image `vllm bench` runs from", launch=False
    ),
    "runtime.model_path": Reach(f"the vLLM launch; {_NAMED}"),
    "runtime.hf_token": Reach(
        "the launch's environment; `env(...)` only where a host environment exists; bench-job: the tokenizer's download"
    ),
    "runtime.model_cache": Reach(
        "the host folder of the model cache (mounted, or `HF_HOME` on the host)", launch=False
    ),
    "runtime.shm_size": Reach("the container's shared memory", launch=False),
    "runtime.fabric": Reach(
        "the launches' NCCL/libfabric environment and NIXL backend; Kubernetes: RDMA devices, IPC_LOCK "
        "(EFA: huge pages, the image's entrypoint); Slurm: the locked-memory check"
    ),
    "runtime.router_image": Reach("the P/D router's image (Slurm: with `container`)", launch=False),
    "runtime.host_memory": Reach(
        "each rank's KV cache on vLLM's CPU backend (`--kv-cache-memory-bytes`); Kubernetes: the pods' memory"
    ),
    "runtime.cpu_cores": Reach("each rank's CPUs on vLLM's CPU backend (`VLLM_CPU_OMP_THREADS_BIND`)"),
    "weights.download": Reach("a download step before the launches", launch=False),
    "weights.download_timeout": Reach(
        "the download step's time budget; Kubernetes: also the Deployments' progressDeadlineSeconds", launch=False
    ),
    # Prefill/decode disaggregation runs on several nodes: only the targets that span nodes build it.
    "disaggregation.connector": Reach("the P/D launches' KV transfer configuration", multi_node=True),
    "disaggregation.prefill.nodes": Reach("the prefill pool's launches", multi_node=True),
    "disaggregation.prefill.parallel": Reach("the prefill pool's launches", multi_node=True),
    "disaggregation.decode.nodes": Reach("the decode pool's launches", multi_node=True),
    "disaggregation.decode.parallel": Reach("the decode pool's launches", multi_node=True),
}


def _reaches(reach: Reach, target: target_table.Target) -> bool:
    """Whether a key reaches the target's file through its vLLM launch."""
    return reach.launch and not target.client and (target.spans_nodes or not reach.multi_node)


_KIND_VALUES = {
    Kind.INTEGER: "a whole number, no unit",
    Kind.BOOL: "`true`, `false`",
    Kind.STRING: 'a string, `"..."`',
    Kind.MODEL: "",
    Kind.FRACTION: "a number in (0, 1]",
    Kind.PARALLEL: "`tp`, `tp(N)`, `pp(N)`, `ep`, `dp(N)` joined by `+`; or `auto`",
    Kind.SPECULATIVE: "`none`, `dspark`, `dspark(adaptive)`, `dspark(tokens = N)`, `auto`",
    Kind.SECRET: '`secret("name")` or `env("NAME")`, never a literal',
    Kind.VOLUME: '`pvc("name")`, `hostpath("/path")` or `emptydir`',
    Kind.STRING_LIST: 'a list of strings, `["...", "..."]`',
}


def used_by(path: str) -> Use | None:
    """The use of a key by dotted path: the targets it reaches through the launch (`REACH`), and
    those that read it (`Target.reads`). A key of `target.KIND...` is its target's, and read by
    the targets that declare it (a client job in the deployment's namespace or partition)."""
    parts = path.split(".")
    targets = target_table.all_targets()
    readers = tuple(t.kind for t in targets if path in t.reads)
    if parts[0] == "target" and len(parts) > 2:
        return Use((parts[1], *readers), "")
    reach = REACH.get(path)
    if reach is None:
        return None
    return Use(tuple(t.kind for t in targets if _reaches(reach, t) or t.kind in readers), reach.how)


def values_text(spec: KeySpec) -> str:
    """What may be written for a key, in words (the values column; `spark explain KEY`)."""
    if spec.kind in (Kind.SYMBOL, Kind.SYMBOL_LIST, Kind.MODEL):
        shown = ", ".join(f"`{s}`" for s in spec.symbols)
        return f"a list of {shown}" if spec.kind is Kind.SYMBOL_LIST else shown
    if spec.kind.value in FAMILY_UNITS:
        suffixes = " ".join(f"`{u}`" for u in FAMILY_UNITS[spec.kind.value])
        text = f"a number with a unit: {suffixes}"
    else:
        text = _KIND_VALUES.get(spec.kind, "")
    bounds = []
    if spec.minimum is not None:
        bounds.append(f">= {spec.minimum}")
    if spec.maximum is not None:
        bounds.append(f"<= {spec.maximum}")
    return "; ".join(filter(None, [text, " and ".join(bounds)]))


def launching() -> tuple[str, ...]:
    """The targets that run a vLLM launch: "all" in the used-by column."""
    return tuple(t.kind for t in target_table.all_targets() if not t.client)


def _targets(use: Use | None) -> str:
    if use is None:
        return "**undocumented**"
    if not use.targets:
        return "none"
    return "all" if use.targets == launching() else ", ".join(use.targets)


def _cell(text: str) -> str:
    return text.replace("|", "\\|") if text else "—"


def _key_rows(block: BlockSpec, path: str) -> list[str]:
    rows = []
    for spec in block.keys.values():
        dotted = f"{path}.{spec.name}" if path else spec.name
        use = used_by(dotted)
        where = _targets(use)
        if use is not None and use.how:
            where = f"{where}: {use.how}" if use.targets else f"{where} ({use.how})"
        rows.append(
            f"| `{spec.name}` | {spec.kind.value} | {_cell(values_text(spec))} | {_cell(spec.default)} "
            f"| {_cell(where)} | {_cell(spec.doc)} |"
        )
    return rows


def _heading(path: str) -> str:
    """`serve { env { } }` for serve.env; `target kubernetes { labels { } }` for target.kubernetes.labels."""
    parts = path.split(".")
    if parts[0] == "target":
        parts = [f"target {parts[1]}", *parts[2:]]
    return "`" + " ".join(f"{p} {{" for p in parts) + " " + " ".join("}" * len(parts)) + "`"


def _block_sections(block: BlockSpec, path: str, out: list[str]) -> None:
    children = [(name, child) for name, child in block.blocks.items()]
    children += [(name, child) for name, child in (block.labels or {}).items()]
    for name, child in children:
        child_path = f"{path}.{name}" if path else name
        if child.labels is not None:  # `target`: one section per kind
            _block_sections(child, child_path, out)
            continue
        out += [f"## {_heading(child_path)}", "", child.doc[0].upper() + child.doc[1:] + "."]
        if child.map_of is not None:
            use = used_by(child_path)
            out += [
                "",
                f"A map: `NAME = {child.map_of.value}` lines, names chosen by you (quoted if they are "
                f"not identifiers). Used by: {_targets(use)}" + (f" ({use.how})." if use and use.how else "."),
            ]
        if child.keys:
            out += ["", *_TABLE_HEAD, *_key_rows(child, child_path)]
        out.append("")
        _block_sections(child, child_path, out)


_TABLE_HEAD = [
    "| key | type | values | default | used by | what |",
    "|---|---|---|---|---|---|",
]


def reference_markdown() -> str:
    schema = deployment_schema()
    out = [
        "# Key reference",
        "",
        "Every key and block a deployment (or profile) body takes. Generated by",
        "`python -m spark_dsl.keys_reference > docs/keys.md` from the schema table",
        "(`spark_dsl/schema.py`), which the checker, the formatter and the language server read",
        "too; a test fails when this file is stale.",
        "",
        "- **values**: what may be written; quantities take the unit suffixes listed (see",
        "  [language.md](language.md#units)). **default**: what applies when the key is not set;",
        '  "by recipe path" means the recipe\'s choice for the model, accelerator and checkpoint',
        "  (`spark plan` shows it with its origin).",
        f"- **used by**: the targets ({', '.join(f'`{t}`' for t in target_table.kinds())}) whose output the",
        "  key changes, and through what; a test builds a reference deployment with and without",
        "  each key and compares.",
        "",
        "## `deployment NAME { }` and `profile NAME { }`",
        "",
        *_TABLE_HEAD,
        *_key_rows(schema, ""),
        "",
    ]
    _block_sections(schema, "", out)
    return "\n".join(out).rstrip() + "\n"


def all_key_paths(block: BlockSpec | None = None, path: str = "") -> list[str]:
    """Dotted paths of every key and map block, in schema order."""
    block = block or deployment_schema()
    found = [f"{path}.{k}" if path else k for k in block.keys]
    children = list(block.blocks.items()) + list((block.labels or {}).items())
    for name, child in children:
        child_path = f"{path}.{name}" if path else name
        if child.map_of is not None:
            found.append(child_path)
        found += all_key_paths(child, child_path)
    return found


if __name__ == "__main__":
    import sys

    sys.stdout.write(reference_markdown())
