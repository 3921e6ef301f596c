"""The recipe's knowledge as data: typed views over the pre-validated catalog snapshot.

The YAML files beside this module are the source; `build.py` validates them
against their JSON Schemas and writes `snapshot.json`, which is all the compiler
reads (the cold `check` path never imports PyYAML or jsonschema).
"""

from __future__ import annotations

from functools import cache
from pathlib import Path
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

import msgspec
from msgspec import Struct

if TYPE_CHECKING:
    from collections.abc import Mapping

SNAPSHOT = Path(__file__).resolve().parent / "snapshot.json"

# The views are frozen Structs, as every record is (docs/architecture.md, "Records"): a check loads
# the catalog on its cold path, and a Struct class is made in a fraction of a NamedTuple's time.

# A fact's source: the catalog's `sources` mapping, fact (a field's dotted path, or a prefix that
# covers every field under it) -> URL or publisher file at a pinned revision.
NO_SOURCES: Mapping[str, str] = MappingProxyType({})


class Accelerator(Struct, frozen=True):
    id: str
    vendor: str
    generation: str
    display_name: str
    # Per GPU; None where the memory is the host's (vLLM's CPU backend): `on_host`.
    memory_gb: float | None
    gpus_per_node: int
    validated: bool
    # NVFP4 tensor cores (Blackwell): what a `needs_fp4` checkpoint needs. AMD CDNA4 has FP4
    # (MXFP4) units but no NVFP4, so it is false there (accelerators.yaml says why).
    fp4: bool
    # FP8 tensor cores (Hopper, Blackwell, CDNA3, CDNA4): what an `fp8` checkpoint needs.
    fp8: bool
    note: str | None = None
    # The only checkpoint formats it runs, where that is fewer than `fp8`/`fp4` allow (None: any).
    weight_formats: tuple[str, ...] | None = None
    # Whether vLLM runs a speculative draft model on it.
    speculative_decoding: bool = True
    sources: Mapping[str, str] = NO_SOURCES

    @property
    def on_host(self) -> bool:
        """vLLM's CPU backend: no GPU, the ranks are processes on the host's cores, and the memory
        is the host's, which each deployment gives as `runtime.host_memory`."""
        return self.memory_gb is None


class Checkpoint(Struct, frozen=True):
    id: str
    repository: str
    weights_gb: float
    confirmed: bool
    # The weights' number format as served: bf16 | fp8 | nvfp4 | mxfp4. A load-time conversion
    # (`converts_from`) has the format it converts to, as its `weights_gb` has that size.
    dtype: str
    converts_from: str | None = None
    # Runs only on accelerators with FP4 support (`Accelerator.fp4`).
    needs_fp4: bool = False
    # Converted to this quantization while loading (vLLM's `--quantization` value).
    quantization: str | None = None
    # A gated Hub repository: downloading it needs a token of an account granted access (SPK516).
    gated: bool = False


class Architecture(Struct, frozen=True):
    kind: str
    layers: int
    hidden_size: int
    query_heads: int
    kv_heads: int
    head_dim: int
    full_attention_layers: int
    sliding_window_layers: int
    sliding_window: int
    routed_experts: int
    experts_per_token: int
    # Multi-head latent attention (DeepSeek V3, Kimi K2; 0 for every other attention): vLLM caches
    # one vector of kv_lora_rank + qk_rope_head_dim per token per layer, on every TP rank, in place
    # of K and V per KV head (docs/models.md, "KV cache").
    kv_lora_rank: int = 0
    qk_rope_head_dim: int = 0
    # Chunked local attention (Llama 4): these layers attend within chunks of attention_chunk_size
    # tokens; vLLM's ChunkedLocalAttentionSpec, not a sliding window. Counted apart from both
    # full_attention_layers and sliding_window_layers.
    chunked_attention_layers: int = 0
    attention_chunk_size: int = 0
    # Learned attention sinks (gpt-oss): weights, one logit per query head, and no KV-cache bytes.
    attention_sinks: bool = False

    @property
    def mla(self) -> bool:
        """Multi-head latent attention: one latent per token per layer, not KV heads."""
        return self.kv_lora_rank > 0


class DraftModel(Struct, frozen=True):
    name: str
    # vLLM's speculative method (`--speculative-config`'s "method").
    method: str
    repository: str
    weights_gb: float
    num_speculative_tokens: int


class Model(Struct, frozen=True):
    id: str
    display_name: str
    total_params_b: float
    active_params_b: float
    architecture: Architecture
    max_context: int
    modalities: tuple[str, ...]
    checkpoints: dict[str, Checkpoint]
    # The speculative draft model, if the model has one.
    draft: DraftModel | None
    sources: Mapping[str, str] = NO_SOURCES


class Image(Struct, frozen=True):
    repository: str
    confirmed: bool
    # After the version in the tag: `-x86_64` makes `v0.33.0-x86_64`.
    tag_suffix: str = ""


class PathDefaults(Struct, frozen=True):
    """The settings a vendor's path uses where the spec says nothing (`paths.<vendor>`)."""

    checkpoint: str
    parallel: str
    speculative: str
    frontend: str
    attention: str | None
    max_model_len: int | None
    modalities: tuple[str, ...]
    prefix_caching: bool
    chunked_prefill: bool
    model_runner: str | None
    attention_with_adaptive_dspark: str | None = None


class Thresholds(Struct, frozen=True):
    default_context: int
    long_context_max_num_seqs: int
    long_context_kv_dtypes: tuple[str, ...]
    long_context_checkpoints: tuple[str, ...]
    ep_from_concurrency: int
    dspark_until_concurrency: int
    kv_headroom_fraction: float
    gpu_memory_utilization: float


class PolicyChoice(Struct, frozen=True):
    """One concurrency band of the AMD workload policy, in the catalog's spelling."""

    parallel: str
    speculative: str


class Ports(Struct, frozen=True):
    api: int
    data_parallel_rpc: int
    pipeline_master: int
    prefill: int
    decode: int
    nixl_prefill: int
    nixl_decode: int

    def nixl(self, role: str) -> int:
        return self.nixl_prefill if role == "prefill" else self.nixl_decode


class AttentionBackend(Struct, frozen=True):
    name: str
    vllm: str
    vendors: tuple[str, ...]


class ComposeDevices(Struct, frozen=True):
    devices: tuple[str, ...]
    group_add: tuple[str, ...]
    security_opt: tuple[str, ...]


class VendorRuntime(Struct, frozen=True):
    """How each runtime reaches the vendor's GPUs (None: the vendor has none, vLLM's CPU backend)."""

    kubernetes_gpu_resource: str | None
    apptainer_flag: str | None
    compose_gpu_driver: str | None
    compose_devices: ComposeDevices | None


class Forbid(Struct, frozen=True):
    """A vLLM flag `serve.extra_args` must not set on a vendor's path, as its setting is an error there."""

    # vLLM's destination name of the flag (`data_parallel_size`).
    flag: str
    # Whether the flag's negative spelling (`--no-...`) is the forbidden one.
    negative: bool
    code: str
    reason: str


class Vendor(Struct, frozen=True):
    name: str
    validated_alternative: str
    workload_policy: bool
    attention_instead: str
    # What the recipe validates on the vendor's path; each one left out is a rule (recipe.yaml).
    data_parallel: bool
    disaggregation: bool
    multimodal: bool
    multi_node: bool
    rust_frontend: bool
    # Long context must take the recipe's long-context configuration (SPK211-SPK214).
    long_context_restricted: bool
    # The `forbids` entries and the `required_settings` of the vendor that have a flag.
    forbids: tuple[Forbid, ...]
    env: tuple[tuple[str, str], ...]
    online_quantization_env: str | None
    runtime: VendorRuntime


class RequiredSetting(Struct, frozen=True):
    """A setting a vendor's commands always set one way: one rule (`code`) each."""

    code: str
    vendor: str
    key: str
    # vLLM's destination of the flag that sets `key`; None when an environment variable does.
    flag: str | None
    bad: str
    good: str
    title: str
    basis: str
    message: str


class Recipe(Struct, frozen=True):
    # The model the recipe is written for: its recipe-specific rules apply to this model only.
    model: str
    vllm_version: str
    vllm_router_version: str  # PyPI's `vllm-router`, for the P/D router's install hint
    images: dict[str, Image]
    validated_checkpoints: dict[str, tuple[str, ...]]
    paths: dict[str, PathDefaults]
    thresholds: Thresholds
    workload_policy: dict[str, dict[str, PolicyChoice]]
    checkpoints: tuple[str, ...]
    attention_backends: tuple[AttentionBackend, ...]
    # `kv_cache_dtype` spelling -> bytes per KV element, in the key reference's order.
    kv_cache_dtypes: dict[str, int]
    vendors: dict[str, Vendor]
    required_settings: tuple[RequiredSetting, ...]
    ports: Ports


class Catalog(Struct, frozen=True):
    models: dict[str, Model]
    accelerators: dict[str, Accelerator]
    recipe: Recipe

    @property
    def vllm_version(self) -> str:
        return self.recipe.vllm_version

    @property
    def router_requirement(self) -> str:
        """The P/D router as pip installs it: `vllm-router==VERSION` (vLLM's images lack it)."""
        return f"vllm-router=={self.recipe.vllm_router_version}"

    def path_defaults(self, vendor: str) -> PathDefaults:
        return self.recipe.paths[vendor]

    def has_path(self, vendor: str) -> bool:
        """Whether the recipe has a path on the vendor (it has none on vLLM's CPU backend, whose
        plans of the recipe's model take a model's generic defaults)."""
        return vendor in self.recipe.paths

    def validated_checkpoints(self, vendor: str) -> tuple[str, ...]:
        """The checkpoints the recipe validates on the vendor's path (none where it has no path)."""
        return self.recipe.validated_checkpoints.get(vendor, ())

    @property
    def thresholds(self) -> Thresholds:
        return self.recipe.thresholds

    def vendor(self, name: str) -> Vendor:
        return self.recipe.vendors[name]

    def image(self, vendor: str) -> str:
        image = self.recipe.images[vendor]
        return f"{image.repository}:v{self.vllm_version}{image.tag_suffix}"

    def recipe_model(self) -> Model:
        """The model the recipe is written for (`recipe.yaml`'s `model`)."""
        return self.models[self.recipe.model]

    def validated_accelerators(self) -> tuple[Accelerator, ...]:
        return tuple(a for a in self.accelerators.values() if a.validated)

    def attention_backend(self, name: str) -> AttentionBackend | None:
        return next((b for b in self.recipe.attention_backends if b.name == name), None)

    def examples(self) -> tuple[str, str, str]:
        """The accelerator, model and checkpoint help texts show: the first validated accelerator,
        the first model, and its vendor path's default checkpoint."""
        accelerator = self.validated_accelerators()[0]
        return accelerator.id, next(iter(self.models)), self.path_defaults(accelerator.vendor).checkpoint

    def smallest_kv_cache_dtype(self) -> str:
        """The KV cache dtype with the fewest bytes per element: what a capacity hint suggests."""
        return min(self.recipe.kv_cache_dtypes, key=lambda name: self.recipe.kv_cache_dtypes[name])

    def fp4_checkpoints(self) -> tuple[str, ...]:
        return tuple(c for c in self.recipe.checkpoints if self.needs_fp4(c))

    def vendor_env_names(self) -> tuple[str, ...]:
        """Every variable a vendor's launches set (`env`, `online_quantization_env`)."""
        names = [n for v in self.recipe.vendors.values() for n, _ in v.env]
        names += [v.online_quantization_env for v in self.recipe.vendors.values() if v.online_quantization_env]
        return tuple(names)

    def needs_fp4(self, checkpoint: str) -> bool:
        """Whether any model's `checkpoint` runs only on FP4 hardware."""
        return any(m.checkpoints[checkpoint].needs_fp4 for m in self.models.values() if checkpoint in m.checkpoints)


def _model(model_id: str, raw: dict[str, Any]) -> Model:
    return Model(
        id=model_id,
        display_name=raw["display_name"],
        total_params_b=raw["total_params_b"],
        active_params_b=raw["active_params_b"],
        architecture=Architecture(**raw["architecture"]),
        max_context=raw["max_context"],
        modalities=tuple(raw["modalities"]),
        checkpoints={k: Checkpoint(id=k, **v) for k, v in raw["checkpoints"].items()},
        draft=None if raw.get("draft") is None else DraftModel(**raw["draft"]),
        sources=MappingProxyType(raw.get("sources", {})),
    )


def _accelerator(accelerator_id: str, raw: dict[str, Any]) -> Accelerator:
    formats = raw.get("weight_formats")
    return Accelerator(
        id=accelerator_id,
        **{
            **raw,
            "weight_formats": None if formats is None else tuple(formats),
            "sources": MappingProxyType(raw.get("sources", {})),
        },
    )


def _forbids(name: str, raw: dict[str, Any], required: tuple[RequiredSetting, ...]) -> tuple[Forbid, ...]:
    """The vendor's `forbids`, then each of its required settings set by a flag: writing the
    setting as `bad` is the error, so the flag's spelling that writes `bad` is the forbidden one."""
    listed = [Forbid(f["flag"], False, f["code"], f["reason"]) for f in raw["forbids"]]
    listed += [
        Forbid(r.flag, r.bad == "false", r.code, r.message) for r in required if r.vendor == name and r.flag is not None
    ]
    return tuple(listed)


def _vendor(name: str, raw: dict[str, Any], required: tuple[RequiredSetting, ...]) -> Vendor:
    runtime = raw["runtime"]
    devices = runtime["compose_devices"]
    return Vendor(
        name=name,
        validated_alternative=raw["validated_alternative"],
        workload_policy=raw["workload_policy"],
        attention_instead=raw["attention_instead"],
        data_parallel=raw["data_parallel"],
        disaggregation=raw["disaggregation"],
        multimodal=raw["multimodal"],
        multi_node=raw["multi_node"],
        rust_frontend=raw["rust_frontend"],
        long_context_restricted=raw["long_context_restricted"],
        forbids=_forbids(name, raw, required),
        env=tuple(raw["env"].items()),
        online_quantization_env=raw["online_quantization_env"],
        runtime=VendorRuntime(
            kubernetes_gpu_resource=runtime["kubernetes_gpu_resource"],
            apptainer_flag=runtime["apptainer_flag"],
            compose_gpu_driver=runtime["compose_gpu_driver"],
            compose_devices=None if devices is None else ComposeDevices(**{k: tuple(v) for k, v in devices.items()}),
        ),
    )


def _recipe(data: dict[str, Any]) -> Recipe:
    th = data["thresholds"]
    required = tuple(RequiredSetting(**r) for r in data["required_settings"])
    return Recipe(
        model=data["model"],
        vllm_version=data["vllm_version"],
        vllm_router_version=data["vllm_router_version"],
        images={k: Image(**v) for k, v in data["images"].items()},
        validated_checkpoints={k: tuple(v) for k, v in data["validated_checkpoints"].items()},
        paths={k: PathDefaults(**{**v, "modalities": tuple(v["modalities"])}) for k, v in data["paths"].items()},
        thresholds=Thresholds(
            **{
                **th,
                "long_context_kv_dtypes": tuple(th["long_context_kv_dtypes"]),
                "long_context_checkpoints": tuple(th["long_context_checkpoints"]),
            }
        ),
        workload_policy={
            ckpt: {band: PolicyChoice(**choice) for band, choice in bands.items()}
            for ckpt, bands in data["workload_policy"].items()
        },
        checkpoints=tuple(data["checkpoints"]),
        attention_backends=tuple(
            AttentionBackend(b["name"], b["vllm"], tuple(b["vendors"])) for b in data["attention_backends"]
        ),
        kv_cache_dtypes={d["name"]: d["bytes"] for d in data["kv_cache_dtypes"]},
        vendors={k: _vendor(k, v, required) for k, v in data["vendors"].items()},
        required_settings=required,
        ports=Ports(**data["ports"]),
    )


@cache
def weight_formats() -> tuple[str, ...]:
    """Every weight format a checkpoint may have (the models schema's `dtype` enum): the
    spellings of a deployment's `checkpoint`, for shipped and declared models alike."""
    schema = msgspec.json.decode((SNAPSHOT.parent / "schema" / "models.schema.json").read_bytes())
    formats: list[str] = schema["$defs"]["dtype"]["enum"]
    return tuple(formats)


@cache
def load() -> Catalog:
    """The catalog, read once per process from the committed snapshot."""
    # msgspec's decoder (C; already loaded for the records) rather than json's: the same values,
    # without importing json and its scanner on a check's cold path.
    data = msgspec.json.decode(SNAPSHOT.read_bytes())
    # The snapshot sorts its keys; the recipe's model comes first, as help texts and examples
    # take the first model (`Catalog.examples`), then the others in name order.
    first = data["model"]
    order = [first, *(k for k in data["models"] if k != first)]
    return Catalog(
        models={k: _model(k, data["models"][k]) for k in order},
        accelerators={k: _accelerator(k, v) for k, v in data["accelerators"].items()},
        recipe=_recipe(data),
    )


def __getattr__(name: str) -> Any:
    # `VLLM_VERSION` stays a module attribute for scripts, read from the one pin.
    if name == "VLLM_VERSION":
        return load().vllm_version
    raise AttributeError(name)
