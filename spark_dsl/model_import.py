"""`spark model import`: a `model` block written from a Hugging Face model's own files.

Reads `config.json` (and `model.safetensors.index.json` for the exact size of the weights) from a
folder, or from the local Hugging Face cache when given a repository id (`ORG/NAME`), and writes
the `model NAME { ... }` declaration of docs/models.md with each fact's source as a trailing
comment. It never downloads: a repository that is not in the cache is an error that says where
it looked.

Every input is hostile: a path may name a FIFO, a device, a huge file or a folder; a file may not
be JSON; a field may be missing or of the wrong type. Each of these is an `ImportProblem` with a
code-like kind (`model-import/not-json`), a message quoting the value and a help line; the
command line prints it and exits 2. Strings that reach the written block (the repository, the
display name, the path in the header comment) are encoded for where they land: string literals
through the formatter's `quote`, the comment through `files.printable`, which escapes newlines.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from msgspec import Struct

from spark_dsl import files
from spark_dsl.model_names import NAME, REPOSITORY, RESERVED, derived_name
from spark_dsl.structured import TooDeep, load_json

# config.json and the safetensors index are small (an index of a 1T-parameter model is a few
# MB); a larger file is not one of them, and reading it whole would cost memory for nothing.
MAX_JSON_BYTES = 16 * 1024 * 1024
MAX_JSON_SIZE = "16 MiB"
# The unquantized `torch_dtype` spellings (transformers 5 says `dtype`) and the bytes a stored
# weight takes. vLLM 0.33.0 serves each in 16 bits with its default `--dtype auto`
# (`_resolve_auto_dtype`, vllm/config/model.py): float16 and bfloat16 as stored, and float32
# downcast to the platform's first supported dtype, bfloat16 on every GPU it serves ("Downcast for
# float32 models"). So each is written as the unquantized format, sized at 2 bytes a weight.
STORED_BYTES = {"bfloat16": 2, "float16": 2, "float32": 4}
SERVED_BYTES = 2
# ModelOpt writes `quant_method: modelopt` and names the format, upper case, in `quant_algo`.
MODELOPT = "modelopt"


class ImportProblem(Exception):
    """Why a model cannot be imported: a kind (`model-import/KIND`), the message, and the way out."""

    def __init__(self, kind: str, message: str, help: str) -> None:
        super().__init__(message)
        self.kind, self.message, self.help = kind, message, help

    def __str__(self) -> str:
        return f"model-import/{self.kind}: {self.message}\n  help: {self.help}"


class Fact(Struct):
    """One line of the block: the key, its value as written, and where it came from."""

    key: str
    value: str
    source: str


class Imported(Struct):
    """What the files say, before it is written out."""

    name: str
    display_name: str
    facts: list[Fact]
    dtype: str
    checkpoint: list[Fact]
    dtype_source: str
    origin: str
    display_source: str


# --------------------------------------------------------------------------- finding the files


def cache_root(env: dict[str, str] | None = None) -> Path:
    """The Hugging Face hub cache: `$HF_HUB_CACHE`, else `$HF_HOME/hub`, else `~/.cache/huggingface/hub`."""
    env = dict(os.environ) if env is None else env
    if env.get("HF_HUB_CACHE"):
        return Path(env["HF_HUB_CACHE"])
    if env.get("HF_HOME"):
        return Path(env["HF_HOME"]) / "hub"
    return Path(env.get("HOME") or Path.home()) / ".cache" / "huggingface" / "hub"


def locate(path: str, env: dict[str, str] | None = None) -> tuple[Path, str | None]:
    """The folder holding config.json, and the repository id when it came from the cache.

    A folder (or a config.json file) on disk wins; otherwise `path` is read as `ORG/NAME` and
    looked up in the cache, in the snapshot `refs/main` names (or the only snapshot there is).
    """
    given = Path(path)
    status = files.inspect(given)
    if not isinstance(status, files.Unreadable):
        if given.is_dir():
            return given, _repository_of_snapshot(given)
        if given.name == "config.json":
            return given.parent, _repository_of_snapshot(given.parent)
        raise ImportProblem(
            "not-a-folder",
            f"{files.printable(path)} is not a folder or a config.json file",
            "name the model's folder (the one holding config.json) or a repository id such as `org/name`",
        )
    if not files.missing(given):
        raise ImportProblem("unreadable", f"cannot read {files.printable(path)}: {status.reason}", status.help)
    if not REPOSITORY.match(path):
        raise ImportProblem(
            "not-found",
            f"no such folder: {files.printable(path)}",
            "name the model's folder (the one holding config.json) or a repository id such as `org/name` "
            "that is in the local Hugging Face cache",
        )
    return _cached_snapshot(path, cache_root(env)), path


def _is_snapshot(path: Path) -> bool:
    """Whether `path` is a Hugging Face cache snapshot: `.../models--ORG--NAME/snapshots/REV`."""
    parts = path.parts
    return len(parts) >= 3 and parts[-2] == "snapshots" and parts[-3].startswith("models--")


def _repository_of_snapshot(folder: Path) -> str | None:
    """`ORG/NAME` when `folder` is `.../models--ORG--NAME/snapshots/REV`, else None."""
    resolved = files.resolve(folder)
    real = folder if isinstance(resolved, files.Unreadable) else resolved
    if _is_snapshot(real):
        org_name = real.parts[-3].removeprefix("models--").split("--", 1)
        if len(org_name) == 2 and REPOSITORY.match("/".join(org_name)):
            return "/".join(org_name)
    return None


def _cached_snapshot(repository: str, root: Path) -> Path:
    org, name = repository.split("/")
    repo_dir = root / f"models--{org}--{name}"
    snapshots = repo_dir / "snapshots"
    if not snapshots.is_dir():
        raise ImportProblem(
            "not-in-cache",
            f"`{repository}` is not in the Hugging Face cache at {files.display(root)} "
            f"(looked for {files.display(repo_dir)}); spark never downloads",
            f"download it first (`huggingface-cli download {repository} config.json "
            "model.safetensors.index.json`) or name the model's folder",
        )
    main = repo_dir / "refs" / "main"
    revision = _small_text(main).strip() if main.is_file() else ""
    if revision and (snapshots / revision).is_dir() and "/" not in revision and revision not in (".", ".."):
        return snapshots / revision
    revisions = sorted(p.name for p in snapshots.iterdir() if p.is_dir())
    if len(revisions) == 1:
        return snapshots / revisions[0]
    listed = ", ".join(files.printable(r) for r in revisions[:5]) or "none"
    raise ImportProblem(
        "no-snapshot",
        f"the cache holds {len(revisions)} snapshots of `{repository}` ({listed}) and refs/main names none of them",
        f"name the snapshot's folder: {files.display(snapshots)}/REVISION",
    )


def _small_text(path: Path) -> str:
    data = files.read_spec(path)
    return "" if isinstance(data, files.Unreadable) else data[:200].decode("utf-8", "replace")


def model_boundary(folder: Path) -> Path:
    """The folder a model's files must resolve into: the model's folder, or for a snapshot of the
    Hugging Face cache its repository folder (`models--ORG--NAME`), whose `blobs/` the snapshot's
    links name. A `config.json` linked from anywhere else was read, and its `_name_or_path`
    printed: a link to any JSON file of the machine."""
    real = folder.resolve()
    return real.parent.parent if _is_snapshot(real) else real


def read_json(path: Path, what: str) -> dict[str, Any]:
    """A JSON object from `path`, read through the one gate for user-named files (files.read_spec:
    a regular file of at most MAX_JSON_BYTES, never blocking) and parsed with a nesting limit.
    The file must resolve inside its model (`model_boundary`)."""
    real = files.resolve(path)
    if isinstance(real, Path) and not real.is_relative_to(model_boundary(path.parent)):
        raise ImportProblem(
            "outside-model",
            f"{files.display(path)} is a symbolic link out of the model's folder; spark does not follow it",
            f"put the model's own {what} in its folder (a Hugging Face cache snapshot may link into its blobs/)",
        )
    status = files.inspect(path)
    if isinstance(status, files.Unreadable):
        if files.missing(path):
            raise ImportProblem("missing-file", f"no {what} in {files.display(path.parent)}", _missing_help(what))
        raise ImportProblem("unreadable", f"cannot read {files.display(path)}: {status.reason}", status.help)
    refused = files.not_regular(status.st_mode)
    if refused is not None:
        raise ImportProblem("not-a-file", f"{files.display(path)}: {refused.reason}", f"put the model's {what} there")
    if status.st_size > MAX_JSON_BYTES:
        raise ImportProblem(
            "too-large",
            f"{files.display(path)} is {status.st_size:,} bytes, more than a {what} ever is ({MAX_JSON_SIZE})",
            f"name the folder of the model's own {what}",
        )
    data = files.read_spec(path, MAX_JSON_BYTES, MAX_JSON_SIZE)
    if isinstance(data, files.Unreadable):
        raise ImportProblem("unreadable", f"cannot read {files.display(path)}: {data.reason}", data.help)
    try:
        parsed = load_json(data.decode("utf-8"))
    except UnicodeDecodeError as err:
        parsed = ValueError(f"byte {err.start} is not UTF-8")
    if isinstance(parsed, TooDeep):
        raise ImportProblem(
            "too-deep", f"cannot read {files.display(path)}: {parsed.reason()}", f"restore the model's {what}"
        )
    if isinstance(parsed, ValueError):
        raise ImportProblem("not-json", f"{files.display(path)} is not JSON: {parsed}", f"restore the model's {what}")
    if not isinstance(parsed, dict):
        raise ImportProblem(
            "not-json",
            f"{files.display(path)} holds a JSON {type(parsed).__name__}, not an object",
            f"restore the model's {what}",
        )
    return parsed


def _missing_help(what: str) -> str:
    if what == "config.json":
        return "name the model's folder (the one holding config.json); spark never downloads"
    return "copy it beside config.json (the Hub serves it with the weights)"


# --------------------------------------------------------------------------- reading the facts


class _Config:
    """config.json, with the text model's own section (`text_config`) read first when there is one."""

    def __init__(self, raw: dict[str, Any], path: Path) -> None:
        self.raw, self.path = raw, path
        text = raw.get("text_config")
        self.text: dict[str, Any] = text if isinstance(text, dict) else {}
        self.prefix = "text_config." if self.text else ""

    def where(self, key: str) -> str:
        """The dotted name of `key` as it was found (`text_config.num_hidden_layers`)."""
        return f"config.json: {self.prefix}{key}" if key in self.text else f"config.json: {key}"

    def get(self, key: str) -> Any:
        return self.text[key] if key in self.text else self.raw.get(key)

    def integer(self, key: str, required: bool = True, minimum: int = 1) -> int | None:
        value = self.get(key)
        if value is None:
            if required:
                raise ImportProblem(
                    "missing-field",
                    f"{files.display(self.path)} has no `{self.prefix}{key}`",
                    "import the model's own config.json; a transformers config always has it",
                )
            return None
        if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
            raise ImportProblem(
                "bad-field",
                f"`{key}` in {files.display(self.path)} is {_shown(value)}, not a whole number of at least {minimum}",
                "import the model's own config.json",
            )
        return value


def _shown(value: Any) -> str:
    text = json.dumps(value)
    return files.printable(text if len(text) <= 60 else text[:57] + "...")


def read_model(folder: Path, repository: str | None, name: str | None, hub_id: str | None = None) -> Imported:
    """The facts of the model in `folder`, each with its source; `hub_id` (`--repo`) is the
    repository the block names instead of the folder."""
    config_path = folder / "config.json"
    config = _Config(read_json(config_path, "config.json"), config_path)
    facts: list[Fact] = []
    layers = config.integer("num_hidden_layers")
    assert layers is not None
    hidden = config.integer("hidden_size")
    assert hidden is not None
    heads = config.integer("num_attention_heads")
    assert heads is not None
    facts += [
        Fact("layers", str(layers), config.where("num_hidden_layers")),
        Fact("hidden_size", str(hidden), config.where("hidden_size")),
        Fact("query_heads", str(heads), config.where("num_attention_heads")),
    ]
    kv = config.integer("num_key_value_heads", required=False)
    if kv is None:
        facts.append(Fact("kv_heads", str(heads), "config.json: no num_key_value_heads, so one per query head"))
    else:
        facts.append(Fact("kv_heads", str(kv), config.where("num_key_value_heads")))
    facts += _latent(config) or [_head_dim(config, hidden, heads)]
    facts += _sliding(config, layers)
    facts += _chunked(config, layers)
    facts += _sinks(config)
    facts += _experts(config)
    context = config.integer("max_position_embeddings")
    facts.append(Fact("max_context", str(context), config.where("max_position_embeddings")))
    modalities, modality_source = _modalities(config.raw)
    facts.append(Fact("modalities", "[" + ", ".join(modalities) + "]", modality_source))
    dtype, dtype_source = _dtype(config)
    repo = hub_id or repository or _name_or_path(config.raw) or str(folder.resolve())
    size, parameters = _weights(folder, config)
    facts += parameters
    checkpoint = [
        Fact("repository", _quoted(repo), "--repo" if hub_id else _repository_source(repository, config.raw)),
        size,
    ]
    display = repo.rsplit("/", 1)[-1] if "/" in repo else repo
    model_name = checked_name(name) if name is not None else derived_name(display)
    return Imported(
        name=model_name,
        display_name=display,
        facts=facts,
        dtype=dtype,
        dtype_source=dtype_source,
        checkpoint=checkpoint,
        origin=str(folder) if repository is None else f"{repository} (Hugging Face cache snapshot {folder.name})",
        display_source="the repository's name" if REPOSITORY.match(repo) else "the folder's name",
    )


def _sliding(config: _Config, layers: int) -> list[Fact]:
    """`sliding_window_layers` and `sliding_window`: which layers keep a window, and how long it is.

    `layer_types` lists each layer (Gemma 3, gpt-oss); else Qwen2's `use_sliding_window` gates the
    window to the layers from `max_window_layers` on; `sliding_window_pattern` makes every Nth
    layer full (older Gemma 3 configs); Gemma 2 alternates; a bare `sliding_window` (Mistral 7B
    v0.1) windows every layer.
    """
    window = config.get("sliding_window")
    types = config.get("layer_types")
    if window is None or window is False or (isinstance(types, list) and "sliding_attention" not in types):
        return []
    if isinstance(window, bool) or not isinstance(window, int) or window < 1:
        raise ImportProblem(
            "bad-field",
            f"`sliding_window` in {files.display(config.path)} is {_shown(window)}, not a number of tokens",
            "import the model's own config.json",
        )
    source = config.where("sliding_window")
    if isinstance(types, list):
        if len(types) != layers or not all(isinstance(t, str) for t in types):
            raise ImportProblem(
                "bad-field",
                f"`layer_types` in {files.display(config.path)} lists {len(types)} entries for {layers} layers",
                "import the model's own config.json",
            )
        count = sum(t == "sliding_attention" for t in types)
        return [
            Fact("sliding_window_layers", str(count), config.where("layer_types") + ' ("sliding_attention")'),
            Fact("sliding_window", str(window), source),
        ]
    if config.get("use_sliding_window") is False:
        return []
    if config.get("use_sliding_window") is True:
        start = config.integer("max_window_layers", required=False, minimum=0) or 0
        count = max(layers - start, 0)
        where = config.where("max_window_layers") + " (layers from it on)"
        return (
            [Fact("sliding_window_layers", str(count), where), Fact("sliding_window", str(window), source)]
            if count
            else []
        )
    pattern = config.get("sliding_window_pattern") or config.get("_sliding_window_pattern")
    if isinstance(pattern, int) and not isinstance(pattern, bool) and pattern > 1:
        count = layers - layers // pattern
        where = config.where("sliding_window_pattern") + f" (every {pattern}th layer full)"
        return [Fact("sliding_window_layers", str(count), where), Fact("sliding_window", str(window), source)]
    if config.get("model_type") == "gemma2":
        count = (layers + 1) // 2
        where = "config.json: model_type gemma2 (every other layer windowed)"
        return [Fact("sliding_window_layers", str(count), where), Fact("sliding_window", str(window), source)]
    return [
        Fact("sliding_window_layers", str(layers), source + " (every layer)"),
        Fact("sliding_window", str(window), source),
    ]


def _head_dim(config: _Config, hidden: int, heads: int) -> Fact:
    """`head_dim`, or hidden_size / num_attention_heads where the config has none."""
    head_dim = config.integer("head_dim", required=False)
    if head_dim is not None:
        return Fact("head_dim", str(head_dim), config.where("head_dim"))
    if hidden % heads:
        raise ImportProblem(
            "missing-field",
            f"{files.display(config.path)} has no `head_dim` and hidden_size {hidden} is not a multiple of "
            f"num_attention_heads {heads}",
            "import the model's own config.json",
        )
    return Fact("head_dim", str(hidden // heads), "config.json: hidden_size / num_attention_heads")


def _latent(config: _Config) -> list[Fact]:
    """Multi-head latent attention (DeepSeek V2/V3, Kimi K2): `kv_lora_rank` and
    `qk_rope_head_dim`, what vLLM caches per token and layer (mla_attention.py:480), and the
    query/key head (`qk_nope_head_dim` + `qk_rope_head_dim`; such a config has no head_dim, and
    hidden_size / heads is no head of it). None for any other attention."""
    rank = config.integer("kv_lora_rank", required=False)
    if rank is None:
        return []
    rope = config.integer("qk_rope_head_dim")
    nope = config.integer("qk_nope_head_dim")
    assert rope is not None and nope is not None
    return [
        Fact("head_dim", str(nope + rope), "config.json: qk_nope_head_dim + qk_rope_head_dim"),
        Fact("kv_lora_rank", str(rank), config.where("kv_lora_rank")),
        Fact("qk_rope_head_dim", str(rope), config.where("qk_rope_head_dim")),
    ]


# transformers' default for Llama 4 (models/llama4/configuration_llama4.py:167-169, 180-183):
# every 4th layer has no RoPE and full attention when the config lists no `no_rope_layers`.
NO_ROPE_LAYER_INTERVAL = 4


def _chunked(config: _Config, layers: int) -> list[Fact]:
    """Chunked local attention (Llama 4): `attention_chunk_size` on the RoPE layers, which
    `no_rope_layers` marks 1, or, where the config has none, all but every
    `no_rope_layer_interval`th layer. vLLM reads the same (llama4.py:184-185, 251-252)."""
    chunk = config.integer("attention_chunk_size", required=False)
    if chunk is None:
        return []
    flags = config.get("no_rope_layers")
    if isinstance(flags, list) and flags:
        if len(flags) != layers or not all(f in (0, 1) and not isinstance(f, float) for f in flags):
            raise ImportProblem(
                "bad-field",
                f"`no_rope_layers` in {files.display(config.path)} is not {layers} entries of 0 or 1",
                "import the model's own config.json",
            )
        count, where = sum(map(bool, flags)), config.where("no_rope_layers") + " (1: RoPE, chunked)"
    else:
        interval = config.integer("no_rope_layer_interval", required=False) or NO_ROPE_LAYER_INTERVAL
        count = layers - layers // interval
        where = (
            config.where("no_rope_layer_interval") + f" (every {interval}th layer full)"
            if config.get("no_rope_layer_interval") is not None
            else f"config.json: no no_rope_layers (transformers: every {interval}th layer full)"
        )
    return [
        Fact("chunked_attention_layers", str(count), where),
        Fact("attention_chunk_size", str(chunk), config.where("attention_chunk_size")),
    ]


# The model types whose attention has a learned sink per head, which config.json has no key for
# (vLLM's gpt_oss.py:131 makes them for every layer). Sinks are weights: no KV-cache bytes.
SINK_MODEL_TYPES = ("gpt_oss",)


def _sinks(config: _Config) -> list[Fact]:
    model_type = config.get("model_type")
    if model_type not in SINK_MODEL_TYPES:
        return []
    return [Fact("attention_sinks", "true", config.where("model_type") + f" {model_type} (a learned sink per head)")]


def _experts(config: _Config) -> list[Fact]:
    for key in ("num_local_experts", "num_experts", "n_routed_experts"):
        experts = config.integer(key, required=False, minimum=0)
        if experts:
            per_token = config.integer("num_experts_per_tok")
            return [
                Fact("experts", str(experts), config.where(key)),
                Fact("experts_per_token", str(per_token), config.where("num_experts_per_tok")),
            ]
    return []


def _modalities(raw: dict[str, Any]) -> tuple[list[str], str]:
    found = ["text"]
    sources = []
    if isinstance(raw.get("vision_config"), dict):
        found.append("image")
        sources.append("vision_config")
    if isinstance(raw.get("audio_config"), dict):
        found.append("audio")
        sources.append("audio_config")
    if not sources:
        return found, "config.json: no vision_config or audio_config"
    return found, "config.json: " + ", ".join(sources)


def _formats() -> tuple[str, tuple[str, ...]]:
    """The unquantized checkpoint format and the quantized ones, from the catalog's `WeightFormat`
    enum (its first entry is the unquantized one): a `quant_method` or ModelOpt `quant_algo` that
    names a quantized format (vLLM's spelling is the catalog's) is that format."""
    from spark_dsl.model_schema import checkpoint_dtypes

    unquantized, *quantized = checkpoint_dtypes()
    return unquantized, tuple(quantized)


def _dtype(config: _Config) -> tuple[str, str]:
    unquantized, quantized = _formats()
    formats = ", ".join((unquantized, *quantized))
    way_out = f"import a checkpoint of one of {formats}, or declare the model by hand (docs/models.md)"
    quant = config.raw.get("quantization_config")
    if isinstance(quant, dict):
        method = quant.get("quant_method")
        if method == MODELOPT:
            algo = quant.get("quant_algo")
            if isinstance(algo, str) and algo.lower() in quantized:
                return algo.lower(), "config.json: quantization_config.quant_algo"
        elif isinstance(method, str) and method in quantized:
            return method, "config.json: quantization_config.quant_method"
        raise ImportProblem(
            "unknown-dtype",
            f"quantization_config.quant_method {_shown(method)} in {files.display(config.path)} is not a "
            f"format spark-dsl knows ({', '.join(quantized)}, or {MODELOPT} with one of them)",
            way_out,
        )
    for key in ("torch_dtype", "dtype"):
        value = config.get(key)
        if value is None:
            continue
        if isinstance(value, str) and value in STORED_BYTES:
            return unquantized, config.where(key) + _served_note(value, unquantized)
        raise ImportProblem(
            "unknown-dtype",
            f"`{key}` in {files.display(config.path)} is {_shown(value)}; spark-dsl knows "
            f"{', '.join(STORED_BYTES)} weights",
            way_out,
        )
    raise ImportProblem(
        "missing-field",
        f"{files.display(config.path)} has no `torch_dtype` and no `quantization_config`",
        "import the model's own config.json; it says how its weights are stored",
    )


def _served_note(stored: str, unquantized: str) -> str:
    """What the checkpoint line says of a stored dtype that is not bfloat16."""
    if stored == "float32":
        return f" (float32, served as bfloat16 by vLLM's --dtype auto: {unquantized}, half the stored bytes)"
    return f" ({stored}: the bytes of {unquantized})" if stored != "bfloat16" else ""


def _stored_bytes(config: _Config) -> int | None:
    """Bytes a stored weight takes: None for a quantized checkpoint (its size is its own)."""
    if isinstance(config.raw.get("quantization_config"), dict):
        return None
    value = config.get("torch_dtype") or config.get("dtype")
    return STORED_BYTES.get(value) if isinstance(value, str) else None


def _name_or_path(raw: dict[str, Any]) -> str | None:
    value = raw.get("_name_or_path")
    return value if isinstance(value, str) and REPOSITORY.match(value) else None


def _repository_source(repository: str | None, raw: dict[str, Any]) -> str:
    if repository is not None:
        return "the Hugging Face cache folder"
    if _name_or_path(raw) is not None:
        return "config.json: _name_or_path"
    return "the folder itself (not a Hub repository)"


def _weights(folder: Path, config: _Config) -> tuple[Fact, list[Fact]]:
    """The checkpoint's `size` as served, and the model's `parameters` and `active_parameters`."""
    total, source, metadata = _stored_size(folder)
    stored = _stored_bytes(config)
    size = Fact("size", f"{total}B", source)
    if stored is not None and stored != SERVED_BYTES:
        served = total * SERVED_BYTES // stored
        size = Fact("size", f"{served}B", f"{source} x {SERVED_BYTES}/{stored} (served in 16 bits)")
    from spark_dsl.model_parameters import parameter_facts

    return size, [Fact(*fact) for fact in parameter_facts(config, total, source, metadata, stored)]


def _stored_size(folder: Path) -> tuple[int, str, dict[str, Any]]:
    """The bytes of the stored weights, where that number was read, and the index's metadata."""
    index_path = folder / "model.safetensors.index.json"
    if not files.missing(index_path):
        index = read_json(index_path, "model.safetensors.index.json")
        metadata = index.get("metadata")
        total = metadata.get("total_size") if isinstance(metadata, dict) else None
        if isinstance(total, bool) or not isinstance(total, int) or total < 1:
            raise ImportProblem(
                "missing-field",
                f"{files.display(index_path)} has no whole `metadata.total_size` (found {_shown(total)})",
                "restore the model's own model.safetensors.index.json",
            )
        assert isinstance(metadata, dict)
        return total, "model.safetensors.index.json: metadata.total_size", metadata
    single = folder / "model.safetensors"
    status = files.inspect(single)
    if not isinstance(status, files.Unreadable) and files.not_regular(status.st_mode) is None:
        return status.st_size, "model.safetensors: file size (one file, no index)", {}
    raise ImportProblem(
        "missing-file",
        f"no model.safetensors.index.json or model.safetensors in {files.display(folder)}: "
        "the size of the weights is unknown",
        "copy model.safetensors.index.json beside config.json (the Hub serves it with the weights); "
        "spark never downloads",
    )


# --------------------------------------------------------------------------- names and writing


def checked_name(name: str) -> str:
    if not NAME.match(name) or name in RESERVED or len(name) > 128:
        shown = files.printable(name)
        raise ImportProblem(
            "bad-name",
            f"`{shown}` is not a model name (a letter, then letters, digits, `_` or `-`; not a keyword)",
            f"pass --name {derived_name(name)}",
        )
    return name


def _quoted(text: str) -> str:
    from spark_dsl.format.values import quote

    return quote(text)


def render(model: Imported) -> str:
    """The `model` block, with each fact's source as a trailing comment, as `spark fmt` prints it."""
    lines = [
        f"# Imported by `spark model import` from {files.printable(model.origin)}.",
        "# Each fact's source is on its line; review before use (docs/models.md).",
        f"model {model.name} {{",
    ]
    rows = [Fact("display_name", _quoted(model.display_name), model.display_source), *model.facts]
    lines += _aligned(rows, "  ")
    lines.append(f"  checkpoint {model.dtype} {{  # {files.printable(model.dtype_source)}")
    lines += _aligned(model.checkpoint, "    ")
    lines += ["  }", "}"]
    text = "\n".join(lines) + "\n"
    from spark_dsl.format import format_text

    formatted = format_text(text, "<import>")
    return formatted.text if formatted.text is not None else text


def _aligned(rows: list[Fact], indent: str) -> list[str]:
    width = max(len(r.key) for r in rows)
    return [f"{indent}{r.key.ljust(width)} = {r.value}  # {files.printable(r.source)}" for r in rows]


def import_model(
    path: str, name: str | None = None, env: dict[str, str] | None = None, hub_id: str | None = None
) -> str:
    """The block for the model at `path` (a folder or a cached `ORG/NAME`); ImportProblem if not.
    `hub_id` (`--repo ORG/NAME`) is the repository the block names: the Hub id a cluster
    downloads, where a folder import would otherwise name the folder's path on this machine."""
    if hub_id is not None and not REPOSITORY.match(hub_id):
        raise ImportProblem(
            "bad-repo",
            f"--repo {_shown(hub_id)} is not a Hugging Face repository id",
            "pass the id the Hub shows for the model, such as `--repo meta-llama/Llama-3.1-8B-Instruct`",
        )
    try:
        folder, repository = locate(path, env)
        model = read_model(folder, repository, name, hub_id)
    except (OSError, ValueError) as err:  # a cache folder that cannot be listed, a NUL in $HF_HOME
        problem = files.os_problem(err)
        raise ImportProblem(
            "unreadable", f"cannot read {files.printable(path)}: {problem.reason}", problem.help
        ) from None
    from spark_dsl import catalog

    if model.name in catalog.load().models:
        raise ImportProblem(
            "shipped-name",
            f"`{model.name}` is a model the catalog ships (a declaration may not reuse its name)",
            f"deploy it as `model = {model.name}` (`spark explain {model.name}`), or pass --name "
            f"{model.name}-local to declare your own",
        )
    return render(model)


def write_block(output: Path, text: str, root: Path | None = None) -> None:
    """Writes the block to `output`: a new file, or a regular file replaced in one step. A FIFO,
    device or folder there is refused (writing to a FIFO would wait for a reader forever), and so
    is a file this import read (`-o config.json` would replace the model's own configuration).
    Missing folders of `output` are created when they lie inside `root`, the project (never
    outside it: write_gate.make_folders)."""
    from spark_dsl import write_gate

    clash = write_gate.refusal(output)
    if clash is None and root is not None:
        clash = write_gate.make_folders(output, root)
    if clash is not None:
        raise ImportProblem(
            "refused-output",
            f"refusing to write {files.display(output)}: {clash}; nothing was written",
            "name a new `.spark` file for the block inside the project, such as `-o models/NAME.spark`",
        )
    status = files.inspect(output)
    if isinstance(status, files.Unreadable):
        if not files.missing(output):
            raise ImportProblem("unwritable", f"cannot write {files.display(output)}: {status.reason}", status.help)
        try:
            with open(output, "x", encoding="utf-8") as out:
                out.write(text)
        except (OSError, ValueError) as err:
            problem = files.os_problem(err)
            raise ImportProblem(
                "unwritable", f"cannot write {files.display(output)}: {problem.reason}", problem.help
            ) from None
        return
    refused = files.not_regular(status.st_mode)
    if refused is not None:
        raise ImportProblem("unwritable", f"{files.display(output)}: {refused.reason}", "name a `.spark` file to write")
    try:
        files.replace_text(output, text)
    except OSError as err:
        problem = files.os_problem(err)
        raise ImportProblem(
            "unwritable", f"cannot write {files.display(output)}: {problem.reason}", problem.help
        ) from None
