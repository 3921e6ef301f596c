"""The recipe's knowledge as data: the catalog's records, which are also its files' shape.

The YAML files beside this module are the source. Each record below is the shape of one of
their entries, constraints and all (`Annotated[..., Meta(...)]`), so msgspec's typed decoder is
the whole reader: `build.py` converts each file into its record and checks the references
between the files, then writes `snapshot.json`, which is all the compiler reads (`load()`
decodes it straight into these records; the cold `check` path never imports PyYAML).
"""

# No `from __future__ import annotations`: the records' annotations are read by msgspec's decoder
# on the cold `check` path, and evaluating them as strings there cost more than the load itself.
from collections.abc import Mapping
from functools import cache
from pathlib import Path
from typing import Annotated, Any, Literal, get_args

import msgspec
from msgspec import Meta, Struct, field
from msgspec.structs import replace

SNAPSHOT = Path(__file__).resolve().parent / "snapshot.json"


class Record(Struct, frozen=True, forbid_unknown_fields=True):
    """A catalog record: frozen, as every record is (docs/architecture.md, "Records"; a check loads
    the catalog on its cold path, and a Struct class is made in a fraction of a NamedTuple's time),
    and strict, so a misspelt field in a catalog file is an error, not a default."""


def matching(regex: str) -> Meta:
    """A string's pattern, carried in the JSON Schema made from the records, which `build.py`
    checks each file against (`located.mismatches`). Not msgspec's `Meta(pattern=...)`: that
    compiles every regex when this module is imported, about 3 ms of each cold `check`, to
    re-check a snapshot `build.py` has checked."""
    return Meta(extra_json_schema={"pattern": regex})


# The spellings the files share, each with its constraint. A name that refers to an entry of
# another file (an accelerator, a checkpoint, a vendor, an attention backend) is a plain string
# here, looked up in that file by `references.py`, never a list restated as a Literal.
Name = Annotated[str, matching(r"^[a-z][a-z0-9-]*$")]
CheckpointName = Annotated[str, matching(r"^[a-z0-9][a-z0-9-]*$")]
Identifier = Annotated[str, matching(r"^[a-z][a-z0-9_]*$")]
Repository = Annotated[str, matching(r"^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+$")]
EnvName = Annotated[str, matching(r"^[A-Z][A-Z0-9_]*$")]
Code = Annotated[str, matching(r"^SPK2[0-9]{2}$")]
Text = Annotated[str, Meta(min_length=1)]
# A number as written: an int stays an int (`533`, not `533.0`, in every text that shows it).
Positive = Annotated[int, Meta(gt=0)] | Annotated[float, Meta(gt=0)]
Count = Annotated[int, Meta(ge=1)]
Zero = Annotated[int, Meta(ge=0)]
Port = Annotated[int, Meta(ge=1, le=65535)]
Version = Annotated[str, matching(r"^[0-9]+\.[0-9]+\.[0-9]+$")]
# A checkpoint's number format as served; the first is the unquantized one (`weight_formats()`).
WeightFormat = Literal["bf16", "fp8", "nvfp4", "mxfp4"]
# A closed set spelled as a pattern, not a Literal, where readers key `str` mappings with it.
Modality = Annotated[str, matching(r"^(text|image|audio|video)$")]

# A fact's source: the catalog's `sources` mapping, fact (a field's dotted path, or a prefix that
# covers every field under it) -> an https URL, a publisher's file at a pinned revision
# (ORG/REPO@REVISION:PATH), or `recipe: WHERE` (the recipe's own statement).
FactPath = Annotated[str, matching(r"^[a-z][a-z0-9_]*(\.[a-z0-9_-]+)*$")]
Citation = Annotated[str, matching(r"^(https://\S+|[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+@[0-9a-f]{7,40}:\S+|recipe: .+)$")]
Sources = Annotated[Mapping[FactPath, Citation], Meta(min_length=1)]


class Accelerator(Record, frozen=True, kw_only=True):
    # The entry's key in accelerators.yaml, filled in by `of_files` (never written in the file).
    id: str = ""
    # A vendor of recipe.yaml's `vendors`.
    vendor: str
    generation: str
    display_name: str
    # Per GPU; None where the memory is the host's (vLLM's CPU backend): `on_host`.
    memory_gb: Positive | None
    gpus_per_node: Count
    validated: bool
    # NVFP4 tensor cores (Blackwell): what a `needs_fp4` checkpoint needs. AMD CDNA4 has FP4
    # (MXFP4) units but no NVFP4, so it is false there (accelerators.yaml says why).
    fp4: bool
    # FP8 tensor cores (Hopper, Blackwell, CDNA3, CDNA4): what an `fp8` checkpoint needs.
    fp8: bool
    note: str | None = None
    # The only checkpoint formats it runs, where that is fewer than `fp8`/`fp4` allow (None: any).
    weight_formats: Annotated[tuple[WeightFormat, ...], Meta(min_length=1)] | None = None
    # Whether vLLM runs a speculative draft model on it.
    speculative_decoding: bool = True
    sources: Sources = {}

    @property
    def on_host(self) -> bool:
        """vLLM's CPU backend: no GPU, the ranks are processes on the host's cores, and the memory
        is the host's, which each deployment gives as `runtime.host_memory`."""
        return self.memory_gb is None


class Checkpoint(Record, frozen=True, kw_only=True):
    # The entry's key in the model's `checkpoints`, filled in by `of_files`.
    id: str = ""
    repository: Repository
    weights_gb: Positive
    confirmed: bool
    # The weights' number format as served. A load-time conversion (`converts_from`, another
    # checkpoint of the model) has the format it converts to, as its `weights_gb` has that size.
    dtype: WeightFormat
    converts_from: str | None = None
    # Runs only on accelerators with FP4 support (`Accelerator.fp4`).
    needs_fp4: bool = False
    # Converted to this quantization while loading (vLLM's `--quantization` value).
    quantization: Identifier | None = None
    # A gated Hub repository: downloading it needs a token of an account granted access (SPK516).
    gated: bool = False


class Architecture(Record, frozen=True):
    kind: Literal["sparse-moe", "dense"]
    layers: Count
    hidden_size: Count
    query_heads: Count
    kv_heads: Count
    head_dim: Count
    full_attention_layers: Zero
    sliding_window_layers: Zero
    sliding_window: Zero
    routed_experts: Zero
    experts_per_token: Zero
    # Multi-head latent attention (DeepSeek V3, Kimi K2; 0 for every other attention): vLLM caches
    # one vector of kv_lora_rank + qk_rope_head_dim per token per layer, on every TP rank, in place
    # of K and V per KV head (docs/models.md, "KV cache"). Written together or not at all.
    kv_lora_rank: Count = 0
    qk_rope_head_dim: Count = 0
    # Chunked local attention (Llama 4): these layers attend within chunks of attention_chunk_size
    # tokens; vLLM's ChunkedLocalAttentionSpec, not a sliding window. Counted apart from both
    # full_attention_layers and sliding_window_layers.
    chunked_attention_layers: Zero = 0
    attention_chunk_size: Zero = 0
    # Learned attention sinks (gpt-oss): weights, one logit per query head, and no KV-cache bytes.
    attention_sinks: bool = False

    @property
    def mla(self) -> bool:
        """Multi-head latent attention: one latent per token per layer, not KV heads."""
        return self.kv_lora_rank > 0


class DraftModel(Record, frozen=True):
    name: str
    # vLLM's speculative method (`--speculative-config`'s "method").
    method: Identifier
    repository: Repository
    weights_gb: Positive
    num_speculative_tokens: Count


class Model(Record, frozen=True, kw_only=True):
    # The entry's key in models.yaml, filled in by `of_files` (a spec's declared model: its name).
    id: str = ""
    display_name: str
    total_params_b: Positive
    active_params_b: Positive
    architecture: Architecture
    max_context: Count
    modalities: Annotated[tuple[Modality, ...], Meta(min_length=1)]
    checkpoints: Annotated[dict[CheckpointName, Checkpoint], Meta(min_length=1)]
    # The speculative draft model, if the model has one.
    draft: DraftModel | None = None
    sources: Sources = {}


class Image(Record, frozen=True):
    repository: Annotated[str, matching(r"^[a-z0-9./_-]+$")]
    confirmed: bool
    # After the version in the tag: `-x86_64` makes `v0.33.0-x86_64`.
    tag_suffix: Annotated[str, matching(r"^-[a-z0-9_.-]+$")] = ""


Parallel = Literal["tp", "tp+ep"]
Speculative = Literal["none", "dspark", "dspark(adaptive)"]


class PathDefaults(Record, frozen=True):
    """The settings a vendor's path uses where the spec says nothing (`paths.<vendor>`)."""

    # A checkpoint of the vendor's `validated_checkpoints`.
    checkpoint: str
    parallel: Parallel
    speculative: Speculative
    frontend: Literal["rust", "python"]
    # An `attention_backends` name, as `attention_with_adaptive_dspark` is.
    attention: str | None
    max_model_len: Count | None
    modalities: tuple[Modality, ...]
    prefix_caching: bool
    chunked_prefill: bool
    model_runner: Literal["v1", "v2"] | None
    attention_with_adaptive_dspark: str | None = None


class Thresholds(Record, frozen=True):
    default_context: Count
    long_context_max_num_seqs: Count
    # Names of `kv_cache_dtypes`, and checkpoints of the recipe's model.
    long_context_kv_dtypes: tuple[str, ...]
    long_context_checkpoints: tuple[str, ...]
    ep_from_concurrency: Count
    dspark_until_concurrency: Count
    kv_headroom_fraction: Annotated[float, Meta(gt=0, lt=1)]
    gpu_memory_utilization: Annotated[float, Meta(gt=0, le=1)]


class PolicyChoice(Record, frozen=True):
    """One concurrency band of the AMD workload policy, in the catalog's spelling."""

    parallel: Parallel
    speculative: Speculative


# Every band of a checkpoint's policy is given: three distinct keys of the three.
Band = Annotated[str, matching(r"^(low|mid|high)$")]
PolicyBands = Annotated[dict[Band, PolicyChoice], Meta(min_length=3)]


class Ports(Record, frozen=True):
    api: Port
    data_parallel_rpc: Port
    pipeline_master: Port
    prefill: Port
    decode: Port
    nixl_prefill: Port
    nixl_decode: Port

    def nixl(self, role: str) -> int:
        return self.nixl_prefill if role == "prefill" else self.nixl_decode


class AttentionBackend(Record, frozen=True):
    name: Annotated[str, matching(r"^[a-z_]+$")]
    vllm: EnvName
    # Vendors of `vendors`.
    vendors: Annotated[tuple[str, ...], Meta(min_length=1)]


class KvCacheDtype(Record, frozen=True):
    name: Identifier
    # Bytes per KV element.
    bytes: Count


class ComposeDevices(Record, frozen=True):
    devices: tuple[Annotated[str, matching(r"^/dev/[a-z0-9/]+$")], ...]
    group_add: tuple[Annotated[str, matching(r"^[a-z_]+$")], ...]
    security_opt: tuple[str, ...]


class VendorRuntime(Record, frozen=True):
    """How each runtime reaches the vendor's GPUs (None: the vendor has none, vLLM's CPU backend)."""

    kubernetes_gpu_resource: Annotated[str, matching(r"^[a-z0-9.-]+/[a-z0-9.-]+$")] | None
    apptainer_flag: Annotated[str, matching(r"^--[a-z]+$")] | None
    compose_gpu_driver: Annotated[str, matching(r"^[a-z0-9_-]+$")] | None
    compose_devices: ComposeDevices | None


class Forbid(Record, frozen=True, kw_only=True):
    """A vLLM flag `serve.extra_args` must not set on a vendor's path, as its setting is an error there."""

    # vLLM's destination name of the flag (`data_parallel_size`).
    flag: Identifier
    # Whether the flag's negative spelling (`--no-...`) is the forbidden one.
    negative: bool = False
    code: Code
    reason: Text


class Vendor(Record, frozen=True, kw_only=True):
    # The entry's key in recipe.yaml's `vendors`, filled in by `of_files`.
    name: str = ""
    # A validated accelerator, of this vendor where it has one.
    validated_alternative: str
    workload_policy: bool
    # An `attention_backends` name of this vendor, or `auto`.
    attention_instead: str
    # What the recipe validates on the vendor's path; each one left out is a rule (recipe.yaml).
    data_parallel: bool
    disaggregation: bool
    multimodal: bool
    multi_node: bool
    rust_frontend: bool
    # Long context must take the recipe's long-context configuration (SPK211-SPK214).
    long_context_restricted: bool
    # The file's `forbids`; `of_files` appends the `required_settings` of the vendor that have a flag.
    forbids: tuple[Forbid, ...]
    env: dict[EnvName, str]
    online_quantization_env: EnvName | None
    runtime: VendorRuntime


class RequiredSetting(Record, frozen=True):
    """A setting a vendor's commands always set one way: one rule (`code`) each."""

    code: Code
    vendor: str
    key: Identifier
    # vLLM's destination of the flag that sets `key`; None when an environment variable does.
    flag: Identifier | None
    bad: str
    good: str
    title: Text
    basis: Text
    message: Text


class Recipe(Record, frozen=True):
    """recipe.yaml."""

    # The model the recipe is written for: its recipe-specific rules apply to this model only.
    model: Name
    vllm_version: Version
    vllm_router_version: Version  # PyPI's `vllm-router`, for the P/D router's install hint
    images: dict[str, Image]
    validated_checkpoints: dict[str, tuple[str, ...]]
    paths: dict[str, PathDefaults]
    thresholds: Thresholds
    workload_policy: dict[str, PolicyBands]
    # The `checkpoint` key's spellings: the recipe model's checkpoints, in the key reference's order.
    checkpoints: Annotated[tuple[CheckpointName, ...], Meta(min_length=1)]
    attention_backends: tuple[AttentionBackend, ...]
    # The file's list keeps the key reference's order; `kv_cache_dtypes` reads it as a mapping.
    kv_cache_dtype_list: tuple[KvCacheDtype, ...] = field(name="kv_cache_dtypes")
    vendors: dict[Annotated[str, matching(r"^[a-z]+$")], Vendor]
    required_settings: tuple[RequiredSetting, ...]
    ports: Ports

    @property
    def kv_cache_dtypes(self) -> dict[str, int]:
        """`kv_cache_dtype` spelling -> bytes per KV element, in the key reference's order."""
        return {d.name: d.bytes for d in self.kv_cache_dtype_list}


# The other two files: one mapping each, keyed by the entry's id.
Models = Annotated[dict[Name, Model], Meta(min_length=1)]
Accelerators = Annotated[dict[Name, Accelerator], Meta(min_length=1)]


class ModelsFile(Record, frozen=True):
    """models.yaml."""

    models: Models


class AcceleratorsFile(Record, frozen=True):
    """accelerators.yaml."""

    accelerators: Accelerators


# The records whose id is their entry's key in the file, and the field `of_files` fills with it:
# a file never writes it (`build.py` refuses one that does).
KEYED: dict[type[Record], str] = {Accelerator: "id", Model: "id", Checkpoint: "id", Vendor: "name"}


class Snapshot(Recipe, frozen=True):
    """snapshot.json: the three files merged, as `build.py` writes it."""

    models: Models
    accelerators: Accelerators


class Catalog(Struct, frozen=True):
    """The three files as the compiler reads them: each entry knows its id, the recipe's model
    comes first, and a vendor's `forbids` include its required settings (`of_files`)."""

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
        dtypes = self.recipe.kv_cache_dtypes
        return min(dtypes, key=dtypes.__getitem__)

    def fp4_checkpoints(self) -> tuple[str, ...]:
        return tuple(c for c in self.recipe.checkpoints if self.needs_fp4(c))

    def vendor_env_names(self) -> tuple[str, ...]:
        """Every variable a vendor's launches set (`env`, `online_quantization_env`)."""
        names = [n for v in self.recipe.vendors.values() for n in v.env]
        names += [v.online_quantization_env for v in self.recipe.vendors.values() if v.online_quantization_env]
        return tuple(names)

    def needs_fp4(self, checkpoint: str) -> bool:
        """Whether any model's `checkpoint` runs only on FP4 hardware."""
        return any(m.checkpoints[checkpoint].needs_fp4 for m in self.models.values() if checkpoint in m.checkpoints)


def _forbids(vendor: Vendor, required: tuple[RequiredSetting, ...]) -> tuple[Forbid, ...]:
    """The vendor's `forbids`, then each of its required settings set by a flag: writing the
    setting as `bad` is the error, so the flag's spelling that writes `bad` is the forbidden one."""
    derived = [
        Forbid(flag=r.flag, negative=r.bad == "false", code=r.code, reason=r.message)
        for r in required
        if r.vendor == vendor.name and r.flag is not None
    ]
    return (*vendor.forbids, *derived)


def of_files(models: dict[str, Model], accelerators: dict[str, Accelerator], recipe: Recipe) -> Catalog:
    """The catalog the three decoded files make: what the records cannot say themselves, derived.
    Each entry's id is its key; the recipe's model comes first, as help texts and examples take
    the first model (`Catalog.examples`; the snapshot sorts its keys), then the others in order."""
    vendors = {k: replace(v, name=k) for k, v in recipe.vendors.items()}
    vendors = {k: replace(v, forbids=_forbids(v, recipe.required_settings)) for k, v in vendors.items()}
    order = [recipe.model, *(k for k in models if k != recipe.model)]
    return Catalog(
        models={
            k: replace(models[k], id=k, checkpoints={c: replace(v, id=c) for c, v in models[k].checkpoints.items()})
            for k in order
        },
        accelerators={k: replace(v, id=k) for k, v in accelerators.items()},
        recipe=replace(recipe, vendors=vendors),
    )


def weight_formats() -> tuple[str, ...]:
    """Every weight format a checkpoint may have (`WeightFormat`): the spellings of a deployment's
    `checkpoint`, for shipped and declared models alike; the first is the unquantized one."""
    formats: tuple[str, ...] = get_args(WeightFormat)
    return formats


@cache
def load() -> Catalog:
    """The catalog, read once per process from the committed snapshot."""
    # msgspec's typed decoder (C; already loaded for the records): the snapshot straight into the
    # records, without building dicts first or importing json on a check's cold path.
    snapshot = msgspec.json.decode(SNAPSHOT.read_bytes(), type=Snapshot)
    recipe = Recipe(**{name: getattr(snapshot, name) for name in Recipe.__struct_fields__})
    return of_files(snapshot.models, snapshot.accelerators, recipe)


def __getattr__(name: str) -> Any:
    # `VLLM_VERSION` stays a module attribute for scripts, read from the one pin.
    if name == "VLLM_VERSION":
        return load().vllm_version
    raise AttributeError(name)
