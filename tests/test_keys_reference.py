"""docs/keys.md is current, covers every key, and its "used by" column is what the emitters do."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

import pytest

from spark_dsl.diagnostics import Severity
from spark_dsl.keys_reference import all_key_paths, reference_markdown, used_by
from spark_dsl.pipeline import run
from spark_dsl.schema import KeySpec, Kind, lookup_block
from spark_dsl.targets import registry as target_table
from spark_dsl.targets.build import build

REPO = Path(__file__).resolve().parent.parent

# Reference deployments: body lines, one per key or block. A sample line setting a key the base
# sets (or a target the base declares) replaces that line; any other sample line is added. Each
# base declares every target that can build it, from the target table, so a new target's use of
# each key is proven as soon as it is registered.
# Slurm in a container, so `runtime.image` can show there too.
_TARGET_BODY = {"slurm": "{ container = pyxis }"}


def _declaring(targets: Iterable[target_table.Target]) -> list[str]:
    return [f"target {t.kind} {_TARGET_BODY.get(t.kind, '{}')}" for t in targets]


# One node: every target.
_EVERY = _declaring(target_table.all_targets())
# Several nodes: the targets that span nodes, and the clients, which fit a plan of any size.
_MULTI_NODE = _declaring(t for t in target_table.all_targets() if t.spans_nodes or t.client)

BASES = {
    "single": ["model = muse-spark-open", "accelerator = b200", *_EVERY],
    # AMD, where the workload policy picks `parallel` and the draft.
    "amd": ["model = muse-spark-open", "accelerator = mi355x", "checkpoint = mxfp4", *_EVERY],
    "multi": ["model = muse-spark-open", "accelerator = b200", *_MULTI_NODE],
    # Prefill/decode disaggregation (several nodes).
    "pd": [
        "model = muse-spark-open",
        "accelerator = b200",
        "disaggregation { prefill { nodes = 1 } decode { nodes = 1 } }",
        # The vLLM image has no router (SPK547).
        'runtime { router_image = "registry.example.com/vllm-router:0.1.17" }',
        *_MULTI_NODE,
    ],
}

# vLLM's CPU backend (`accelerator = cpu`), whose host memory and CPU binding only it reads.
BASES["cpu"] = [
    "model = llama-3-1-8b",
    "accelerator = cpu",
    "runtime { host_memory = 64GiB }",
    *BASES["single"][2:],
]

# The download step on (for its budget) and an RDMA fabric (for the device resource's name).
BASES["staged"] = [*BASES["single"][:2], "weights { download = true }", *BASES["single"][2:]]
BASES["rdma"] = [*BASES["single"][:2], "runtime { fabric = infiniband }", *BASES["single"][2:]]
BASES["efa"] = [*BASES["single"][:2], "runtime { fabric = efa }", *BASES["single"][2:]]

# For each key: the base and the lines that set it to something other than its default.
SAMPLES: dict[str, tuple[str, list[str]]] = {
    "accelerator": ("single", ["accelerator = mi355x"]),
    "gpus": ("single", ["gpus = 4"]),
    "nodes": ("multi", ["nodes = 2", "parallel = dp(2) + tp + ep"]),
    "checkpoint": ("amd", ["checkpoint = bf16"]),
    "parallel": ("single", ["parallel = tp"]),
    "speculative": ("single", ["speculative = none"]),
    "attention": ("single", ["attention = flashinfer"]),
    "frontend": ("single", ["frontend = python"]),
    "max_model_len": ("single", ["max_model_len = 64K"]),
    "max_num_seqs": ("single", ["max_num_seqs = 16"]),
    "kv_cache_dtype": ("single", ["kv_cache_dtype = fp8"]),
    "modalities": ("single", ["modalities = [text]"]),
    "prefix_caching": ("single", ["prefix_caching = false"]),
    "chunked_prefill": ("single", ["chunked_prefill = false"]),
    "model_runner": ("single", ["model_runner = v2"]),
    "gpu_memory_utilization": ("single", ["gpu_memory_utilization = 0.8"]),
    "allow_unvalidated": ("single", ["allow_unvalidated = true"]),
    "workload.concurrency": ("amd", ["workload { concurrency = 256 }"]),
    "workload.goal": ("amd", ["workload { goal = throughput }"]),
    "workload.input_tokens": ("single", ["workload { input_tokens = 2K }"]),
    "workload.output_tokens": ("single", ["workload { output_tokens = 512 }"]),
    "target.slurm.constraint": ("single", ['target slurm { constraint = "b200&ib" }']),
    "target.slurm.reservation": ("single", ['target slurm { reservation = "maint" }']),
    "target.slurm.exclude": ("single", ['target slurm { exclude = "node[1-2]" }']),
    "target.slurm.extra_directives": ("single", ['target slurm { extra_directives = ["--mail-type=END"] }']),
    "serve.port": ("single", ["serve { port = 9000 }"]),
    "serve.host": ("single", ['serve { host = "127.0.0.1" }']),
    "serve.served_model_name": ("single", ['serve { served_model_name = "muse" }']),
    "serve.api_key": ("single", ['serve { api_key = secret("vllm-api-key") }']),
    "serve.ready_timeout": ("single", ["serve { ready_timeout = 3h }"]),
    "serve.drain": ("single", ["serve { drain = 5m }"]),
    "serve.extra_args": ("single", ['serve { extra_args = ["--seed", "1"] }']),
    "serve.env": ("single", ['serve { env { VLLM_LOGGING_LEVEL = "DEBUG" } }']),
    "runtime.image": ("single", ['runtime { image = "registry.example/vllm:1" }']),
    "runtime.model_path": ("single", ['runtime { model_path = "/models/muse" }']),
    "runtime.hf_token": ("single", ['runtime { hf_token = secret("hf-token") }']),
    "runtime.model_cache": ("single", ['runtime { model_cache = "/srv/cache" }']),
    "runtime.shm_size": ("single", ["runtime { shm_size = 64GiB }"]),
    "runtime.fabric": ("single", ["runtime { fabric = tcp }"]),
    "runtime.router_image": ("pd", ['runtime { router_image = "registry.example/router:1" }']),
    "runtime.host_memory": ("cpu", ["runtime { host_memory = 48GiB }"]),
    "runtime.cpu_cores": ("cpu", ['runtime { host_memory = 64GiB cpu_cores = "0-7" }']),
    "weights.download": ("single", ["weights { download = true }"]),
    "weights.download_timeout": ("staged", ["weights { download = true download_timeout = 30m }"]),
    "disaggregation.prefill.parallel": (
        "pd",
        ["disaggregation { prefill { nodes = 1 parallel = tp } decode { nodes = 1 } }"],
    ),
    "disaggregation.decode.parallel": (
        "pd",
        ["disaggregation { prefill { nodes = 1 } decode { nodes = 1 parallel = tp } }"],
    ),
    "target.compose.project": ("single", ['target compose { project = "muse" }']),
    "target.compose.restart": ("single", ["target compose { restart = always }"]),
    "target.compose.model_cache": ("single", ['target compose { model_cache = "/srv/cache" }']),
    "target.compose.start_period": ("single", ["target compose { start_period = 1h }"]),
    "target.slurm.partition": ("single", ['target slurm { container = pyxis partition = "gpu" }']),
    "target.slurm.account": ("single", ['target slurm { container = pyxis account = "team" }']),
    "target.slurm.qos": ("single", ['target slurm { container = pyxis qos = "high" }']),
    "target.slurm.time": ("single", ["target slurm { container = pyxis time = 12h }"]),
    "target.slurm.container": ("single", ["target slurm { container = apptainer }"]),
    "target.slurm.output": ("single", ['target slurm { container = pyxis output = "out.log" }']),
    "target.slurm.ready_timeout": ("single", ["target slurm { container = pyxis ready_timeout = 1h }"]),
    "target.kubernetes.namespace": ("single", ['target kubernetes { namespace = "inference" }']),
    "target.kubernetes.replicas": ("single", ["target kubernetes { replicas = 2 }"]),
    "target.kubernetes.service_type": ("single", ["target kubernetes { service_type = NodePort }"]),
    "target.kubernetes.model_cache": ("single", ['target kubernetes { model_cache = pvc("models") }']),
    "target.kubernetes.cache_size": (
        "single",
        ['target kubernetes { model_cache = pvc("models") cache_size = 600GiB }'],
    ),
    "target.kubernetes.storage_class": (
        "single",
        ['target kubernetes { model_cache = pvc("models") cache_size = 600GiB storage_class = "nfs" }'],
    ),
    "target.kubernetes.ephemeral_storage": ("single", ["target kubernetes { ephemeral_storage = 600GiB }"]),
    "target.kubernetes.cpu": ("single", ["target kubernetes { cpu = 16 }"]),
    "target.kubernetes.memory": ("single", ["target kubernetes { memory = 256GiB }"]),
    "target.kubernetes.rdma_resource": ("rdma", ['target kubernetes { rdma_resource = "rdma/ib" }']),
    "target.kubernetes.rdma_devices": ("rdma", ["target kubernetes { rdma_devices = 32 }"]),
    "target.kubernetes.hugepages": ("efa", ["target kubernetes { hugepages = 1GiB }"]),
    "target.kubernetes.node_selector": ("single", ['target kubernetes { node_selector { pool = "gpu" } }']),
    "target.kubernetes.labels": ("single", ['target kubernetes { labels { team = "ml" } }']),
    "target.kubernetes.annotations": ("single", ['target kubernetes { annotations { note = "x" } }']),
    "target.kubernetes.gpu_budget": ("single", ["target kubernetes { gpu_budget = 64 }"]),
    "target.kubernetes.metrics.monitor": ("single", ["target kubernetes { metrics { monitor = service } }"]),
    "target.kubernetes.metrics.interval": ("single", ["target kubernetes { metrics { interval = 1m } }"]),
    "target.kubernetes.metrics.dashboard": ("single", ["target kubernetes { metrics { dashboard = true } }"]),
    "target.kubernetes.metrics.labels": ("single", ['target kubernetes { metrics { labels { release = "kps" } } }']),
    "target.kubernetes.autoscale.min": ("single", ["target kubernetes { autoscale { min = 2 max = 3 } }"]),
    "target.kubernetes.autoscale.max": ("single", ["target kubernetes { autoscale { max = 3 } }"]),
    "target.kubernetes.autoscale.metric": ("single", ["target kubernetes { autoscale { metric = running } }"]),
    "target.kubernetes.autoscale.target": ("single", ["target kubernetes { autoscale { target = 8 } }"]),
    "target.kubernetes.autoscale.via": ("single", ["target kubernetes { autoscale { via = keda } }"]),
    "target.kubernetes.autoscale.prometheus": (
        "single",
        ['target kubernetes { autoscale { via = keda prometheus = "http://p:9090" } }'],
    ),
    "target.kubernetes.rollout.surge": ("single", ["target kubernetes { rollout { surge = 1 } }"]),
    "target.kubernetes.priority_class": ("single", ['target kubernetes { priority_class = "high" }']),
    "target.kubernetes.service_account": ("single", ['target kubernetes { service_account = "vllm" }']),
    "target.kubernetes.pull_secrets": ("single", ['target kubernetes { pull_secrets = ["registry"] }']),
    "target.kubernetes.spread_over": ("single", ['target kubernetes { spread_over = "kubernetes.io/hostname" }']),
    "target.kubernetes.tolerations": ("single", ['target kubernetes { tolerations { "nvidia.com/gpu" = "" } }']),
    "target.kubernetes.node_affinity": ("single", ['target kubernetes { node_affinity { pool = "gpu" } }']),
}
# Keys with nothing to set them to: the default is the only value there is.
NO_OTHER_VALUE = {
    "model": "the catalog holds one model",
    "disaggregation.connector": "NIXL is the only connector",
    # A P/D pool's node count must match its parallelism: the pool's `parallel` sample covers the pool.
    "disaggregation.prefill.nodes": "the node count follows the pool's parallelism",
    "disaggregation.decode.nodes": "the node count follows the pool's parallelism",
}
FILE_TARGET = {t.file_name: t.kind for t in target_table.all_targets()}


def _line_key(line: str) -> str:
    words = line.split()
    return " ".join(words[:2]) if words[0] == "target" else words[0]


def _outputs(tmp_path: Path, base: str, sample: list[str]) -> dict[str, str]:
    lines = list(BASES[base])
    for line in sample:
        keys = [_line_key(existing) for existing in lines]
        if _line_key(line) in keys:
            lines[keys.index(_line_key(line))] = line
        else:
            lines.insert(-1, line)
    spec = tmp_path / "ref.spark"
    spec.write_text("deployment ref {\n" + "".join(f"  {line}\n" for line in lines) + "}\n", encoding="utf-8")
    result = run([spec], tmp_path)
    errors = [f"{d.code} {d.message}" for d in result.diagnostics if d.severity is Severity.ERROR]
    assert errors == [], f"{sample}: {errors}"
    outcome = build(result.plans, result.launches, result.deployment_has_errors, [], (), tmp_path)
    errors = [f"{d.code} {d.message}" for d in outcome.diagnostics if d.severity is Severity.ERROR]
    assert errors == [], f"{sample}: {errors}"
    (output,) = outcome.outputs
    return {FILE_TARGET[name]: text for name, text in output.files.items()}


def test_key_reference_is_current() -> None:
    assert (REPO / "docs/keys.md").read_text(encoding="utf-8") == reference_markdown(), (
        "docs/keys.md is stale: run `python -m spark_dsl.dev regen`"
    )


def test_every_key_says_which_targets_use_it() -> None:
    missing = [path for path in all_key_paths() if used_by(path) is None]
    assert missing == [], f"add these keys to REACH in spark_dsl/keys_reference.py: {missing}"
    assert "**undocumented**" not in reference_markdown()


def test_every_key_has_a_sample_or_a_reason() -> None:
    paths = set(all_key_paths())
    assert set(SAMPLES) | set(NO_OTHER_VALUE) == paths
    assert not set(SAMPLES) & set(NO_OTHER_VALUE)


@pytest.mark.parametrize("path", sorted(SAMPLES))
def test_used_by_is_what_the_emitters_do(path: str, tmp_path: Path) -> None:
    base, sample = SAMPLES[path]
    before = _outputs(tmp_path, base, [])
    after = _outputs(tmp_path, base, sample)
    changed = {kind for kind in after if after[kind] != before.get(kind)}
    use = used_by(path)
    assert use is not None
    assert changed == set(use.targets) & set(after), f"{path} changes {sorted(changed)}"


def test_every_key_a_target_reads_exists() -> None:
    """`Target.reads` names keys by path: a misspelt one would silently use nothing."""
    paths = set(all_key_paths())
    unknown = {t.kind: sorted(set(t.reads) - paths) for t in target_table.all_targets() if set(t.reads) - paths}
    assert unknown == {}


def test_a_pod_target_refuses_env_for_every_secret_it_reads() -> None:
    """A target whose pods read secrets (`pod_secrets`, SPK505) lists every secret key that
    changes its file, as the builds above prove: the bench Job downloads its tokenizer with
    `runtime.hf_token`, and an `env(...)` there was dropped unreported."""
    secrets = [p for p in all_key_paths() if (spec := _spec(p)) is not None and spec.kind is Kind.SECRET]
    for target in target_table.all_targets():
        if target.pod_secrets:
            read = {p for p in secrets if (use := used_by(p)) is not None and target.kind in use.targets}
            assert set(target.pod_secrets) == read, target.kind


def _spec(path: str) -> KeySpec | None:
    """A key's schema by dotted path (None for a map block, as `serve.env`)."""
    *blocks, key = path.split(".")
    block = lookup_block(tuple(blocks))
    return None if block is None else block.keys.get(key)
