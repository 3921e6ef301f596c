"""The catalog: YAML decoded into its records and its references checked, the snapshot current, the facts of
RULES.md."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import msgspec
import pytest
from msgspec.structs import replace

from spark_dsl import catalog
from spark_dsl.catalog import build


def test_catalog_files_validate_and_snapshot_is_current() -> None:
    data = build.load_sources()
    assert build.SNAPSHOT.read_text(encoding="utf-8") == build.render_snapshot(data), (
        "spark_dsl/catalog/snapshot.json is stale: run `python -m spark_dsl.dev regen`"
    )


def test_a_broken_catalog_file_names_file_and_field(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    copy = tmp_path / "catalog"
    shutil.copytree(build.CATALOG_DIR, copy, ignore=shutil.ignore_patterns("__pycache__"))
    text = (copy / "accelerators.yaml").read_text().replace("memory_gb: 180", "memory_gb: lots")
    (copy / "accelerators.yaml").write_text(text)
    monkeypatch.setattr(build, "CATALOG_DIR", copy)
    with pytest.raises(build.CatalogError) as err:
        build.load_sources()
    assert "accelerators.yaml: accelerators.b200.memory_gb: 'lots': expected `int | float | null`, got `str`" in str(
        err.value
    )


def test_cross_file_references_are_checked(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    copy = tmp_path / "catalog"
    shutil.copytree(build.CATALOG_DIR, copy, ignore=shutil.ignore_patterns("__pycache__"))
    text = (copy / "recipe.yaml").read_text().replace("    checkpoint: nvfp4\n", "    checkpoint: bf16\n")
    (copy / "recipe.yaml").write_text(text)
    monkeypatch.setattr(build, "CATALOG_DIR", copy)
    with pytest.raises(
        build.CatalogError, match=r"paths\.nvidia\.checkpoint: 'bf16' is not in validated_checkpoints\.nvidia"
    ):
        build.load_sources()


@pytest.mark.parametrize(
    ("old", "new", "message"),
    [
        (
            "validated_alternative: mi355x",
            "validated_alternative: mi300x",
            r"vendors\.amd\.validated_alternative: 'mi300x' is not a validated amd accelerator",
        ),
        (
            "attention_instead: triton",
            "attention_instead: flashinfer",
            r"vendors\.amd\.attention_instead: 'flashinfer' is not a amd backend",
        ),
        (
            "model: muse-spark-open",
            "model: muse-spark",
            r"recipe\.yaml: model: 'muse-spark' is not in models\.yaml",
        ),
        (
            "checkpoints: [bf16, mxfp4, nvfp4, bf16-to-mxfp4]",
            "checkpoints: [bf16, mxfp4, nvfp4]",
            r"recipe\.yaml: checkpoints: .* are not the models'",
        ),
    ],
)
def test_vendor_facts_are_checked_against_the_other_files(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, old: str, new: str, message: str
) -> None:
    copy = tmp_path / "catalog"
    shutil.copytree(build.CATALOG_DIR, copy, ignore=shutil.ignore_patterns("__pycache__"))
    text = (copy / "recipe.yaml").read_text()
    assert old in text
    (copy / "recipe.yaml").write_text(text.replace(old, new))
    monkeypatch.setattr(build, "CATALOG_DIR", copy)
    with pytest.raises(build.CatalogError, match=message):
        build.load_sources()


def test_a_runtime_fact_of_the_wrong_shape_is_a_schema_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    copy = tmp_path / "catalog"
    shutil.copytree(build.CATALOG_DIR, copy, ignore=shutil.ignore_patterns("__pycache__"))
    text = (
        (copy / "recipe.yaml")
        .read_text()
        .replace("kubernetes_gpu_resource: amd.com/gpu", "kubernetes_gpu_resource: amd gpu")
    )
    (copy / "recipe.yaml").write_text(text)
    monkeypatch.setattr(build, "CATALOG_DIR", copy)
    with pytest.raises(
        build.CatalogError, match=r"recipe\.yaml: vendors\.amd\.runtime\.kubernetes_gpu_resource: 'amd gpu'"
    ):
        build.load_sources()


def test_typed_views_read_the_recipe() -> None:
    """Rules, plan and targets read typed views: the recipe is no dict of anything."""
    cat = catalog.load()
    assert cat.thresholds.default_context == 32768
    assert cat.path_defaults("amd").attention_with_adaptive_dspark == "triton"
    assert cat.vendor("amd").runtime.kubernetes_gpu_resource == "amd.com/gpu"
    assert [r.code for r in cat.recipe.required_settings] == ["SPK207", "SPK208", "SPK209"]
    assert cat.needs_fp4("nvfp4") and not cat.needs_fp4("mxfp4")
    assert cat.smallest_kv_cache_dtype() == "fp8"
    assert cat.examples() == ("b200", "muse-spark-open", "nvfp4")


def test_vendor_capabilities_and_the_flags_extra_args_must_not_set() -> None:
    """The AMD path's limits are catalog facts; its forbidden flags are its `forbids` plus each
    required setting a flag sets (SPK209's model runner is an environment variable, so none)."""
    amd, nvidia = catalog.load().vendor("amd"), catalog.load().vendor("nvidia")
    limits = ("data_parallel", "disaggregation", "multimodal", "multi_node", "rust_frontend")
    assert [getattr(amd, f) for f in limits] == [False] * 5 and amd.long_context_restricted
    assert [getattr(nvidia, f) for f in limits] == [True] * 5 and not nvidia.long_context_restricted
    assert [(f.flag, f.negative, f.code) for f in amd.forbids] == [
        ("data_parallel_size", False, "SPK204"),
        ("kv_transfer_config", False, "SPK205"),
        ("limit_mm_per_prompt", False, "SPK206"),
        ("enable_prefix_caching", False, "SPK207"),  # `prefix_caching = true` is the error
        ("enable_chunked_prefill", True, "SPK208"),  # `chunked_prefill = false`: `--no-enable-...`
    ]
    assert amd.forbids[3].reason == "the AMD path runs with prefix caching off"
    assert nvidia.forbids == ()


def test_a_rule_reads_its_vendor_capability_from_the_catalog(
    project: Callable[[dict[str, str]], Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """One catalog fact is the whole change: with `data_parallel` and `multi_node` off for NVIDIA,
    the rules written for the AMD path (SPK204, SPK216) report an NVIDIA spec."""
    from spark_dsl.pipeline import run

    spec = "deployment d {\n  model = muse-spark-open\n  accelerator = b200\n"
    spec += "  nodes = 2\n  parallel = dp(2) + tp + ep\n}\n"
    root = project({"a.spark": spec})
    assert {d.code for d in run([root / "a.spark"], root).diagnostics} == set()
    real = catalog.load()
    vendors = {**real.recipe.vendors, "nvidia": replace(real.vendor("nvidia"), data_parallel=False, multi_node=False)}
    changed = replace(real, recipe=replace(real.recipe, vendors=vendors))
    monkeypatch.setattr(catalog, "load", lambda: changed)
    assert {d.code for d in run([root / "a.spark"], root).diagnostics} >= {"SPK204", "SPK216"}


def test_facts_of_rules_md() -> None:
    cat = catalog.load()
    muse = cat.models["muse-spark-open"]
    assert (muse.total_params_b, muse.active_params_b, muse.max_context) == (816, 42, 1_048_576)
    assert {k: v.weights_gb for k, v in muse.checkpoints.items()} == {
        "bf16": 1640,
        "nvfp4": 533,
        "mxfp4": 509,
        "bf16-to-mxfp4": 509,
    }
    assert muse.checkpoints["mxfp4"].confirmed is False
    assert (muse.draft.repository, muse.draft.weights_gb, muse.draft.num_speculative_tokens) == (
        "Inferact/Muse-Spark-Open-DSpark",
        10.6,
        7,
    )
    arch = muse.architecture
    assert (arch.kv_heads, arch.head_dim, arch.full_attention_layers, arch.sliding_window_layers) == (16, 64, 16, 46)
    assert (arch.sliding_window, arch.routed_experts) == (2048, 256)
    acc = {k: (a.memory_gb, a.gpus_per_node, a.validated) for k, a in cat.accelerators.items()}
    assert acc["b200"] == (180, 8, True) and acc["gb200"] == (192, 4, True) and acc["h100"] == (80, 8, False)
    assert acc["mi355x"] == (288, 8, True) and acc["mi325x"] == (256, 8, False)


def test_vllm_version_is_one_pin() -> None:
    cat = catalog.load()
    assert catalog.VLLM_VERSION == cat.vllm_version == "0.33.0"
    assert cat.image("nvidia") == "vllm/vllm-openai:v0.33.0"
    assert cat.image("amd") == "vllm/vllm-openai-rocm:v0.33.0"


def test_issue15_facts_every_model_needs() -> None:
    """Checkpoint dtypes, FP8 support, the draft's vLLM method and the recipe's model (issue 15)."""
    cat = catalog.load()
    muse = cat.recipe_model()
    assert cat.recipe.model == muse.id == "muse-spark-open"
    assert {k: v.dtype for k, v in muse.checkpoints.items()} == {
        "bf16": "bf16",
        "nvfp4": "nvfp4",
        "mxfp4": "mxfp4",
        "bf16-to-mxfp4": "mxfp4",
    }
    assert muse.draft is not None and muse.draft.method == "dspark"
    # Facts of an architecture, not of a part, so an accelerator added to the catalog keeps them
    # without an edit here. FP8 everywhere but Ampere, where SPK225 refuses FP8 weights, and vLLM's
    # CPU backend; NVFP4 on the Blackwell parts only.
    accelerators = cat.accelerators.values()
    assert {a.id for a in accelerators if not a.fp8} == {
        a.id for a in accelerators if a.generation == "ampere" or a.on_host
    }
    assert {a.id for a in accelerators if a.fp4} == {a.id for a in accelerators if a.generation == "blackwell"}
    assert {a.generation for a in accelerators} >= {"ampere", "blackwell"}  # neither side is empty


def test_a_checkpoint_dtype_outside_the_four_is_a_schema_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    copy = tmp_path / "catalog"
    shutil.copytree(build.CATALOG_DIR, copy, ignore=shutil.ignore_patterns("__pycache__"))
    text = (copy / "models.yaml").read_text()
    assert "        dtype: nvfp4\n" in text
    (copy / "models.yaml").write_text(text.replace("        dtype: nvfp4\n", "        dtype: fp16\n"))
    monkeypatch.setattr(build, "CATALOG_DIR", copy)
    with pytest.raises(
        build.CatalogError, match=r"models\.yaml: models\.muse-spark-open\.checkpoints\.nvfp4\.dtype: 'fp16'"
    ):
        build.load_sources()


def _catalog_copy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str, old: str, new: str) -> None:
    copy = tmp_path / "catalog"
    shutil.copytree(build.CATALOG_DIR, copy, ignore=shutil.ignore_patterns("__pycache__"))
    text = (copy / name).read_text()
    assert text.count(old) >= 1, old
    (copy / name).write_text(text.replace(old, new, 1))
    monkeypatch.setattr(build, "CATALOG_DIR", copy)


def test_every_accelerator_fact_has_a_source() -> None:
    cat = catalog.load()
    for acc in cat.accelerators.values():
        facts = {"memory_gb", "fp8", "fp4"} - ({"memory_gb"} if acc.on_host else set())
        facts |= {"weight_formats"} if acc.weight_formats is not None else set()
        facts |= set() if acc.speculative_decoding else {"speculative_decoding"}
        assert set(acc.sources) == facts, acc.id
        assert all(s.startswith(("https://", "recipe: ")) for s in acc.sources.values()), acc.id


def test_an_accelerator_fact_without_a_source_is_an_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _catalog_copy(
        tmp_path,
        monkeypatch,
        "accelerators.yaml",
        "      memory_gb: https://docs.nvidia.com/launchpad/ai/h100-mig/latest/h100-mig-gpu.html\n",
        "",
    )
    with pytest.raises(build.CatalogError, match=r"accelerators\.h100: memory_gb has no source"):
        build.load_sources()


def test_a_source_for_no_fact_is_an_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _catalog_copy(tmp_path, monkeypatch, "accelerators.yaml", "      fp8: https://", "      fp8x: https://")
    with pytest.raises(build.CatalogError, match=r"accelerators\.b200\.sources\.fp8x: names no fact"):
        build.load_sources()


def test_a_source_is_a_url_a_pinned_file_or_the_recipe(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _catalog_copy(tmp_path, monkeypatch, "accelerators.yaml", "      fp8: https://", "      fp8: see https://")
    with pytest.raises(build.CatalogError, match=r"accelerators\.b200\.sources\.fp8: 'see https://"):
        build.load_sources()


def test_the_recipe_model_stays_first_and_five_open_models_ship() -> None:
    """Help texts take the first model as their example; the snapshot sorts keys, load() does not."""
    cat = catalog.load()
    assert next(iter(cat.models)) == "muse-spark-open"
    shapes = {m.id: m.architecture for m in cat.models.values() if m.id != "muse-spark-open"}
    assert len(shapes) >= 5
    assert any(a.kind == "dense" and a.sliding_window_layers == 0 for a in shapes.values())
    assert any(a.routed_experts > 0 for a in shapes.values())
    assert any(a.sliding_window_layers > 0 for a in shapes.values())
    assert any(len(m.modalities) > 1 for m in cat.models.values() if m.id in shapes)


def test_shipped_model_facts_from_their_configs() -> None:
    """Spot checks against the publishers' config.json files (tests/data/hf_configs holds copies)."""
    models = catalog.load().models
    llama = models["llama-3-1-8b"].architecture
    assert (llama.layers, llama.query_heads, llama.kv_heads, llama.head_dim) == (32, 32, 8, 128)
    qwen = models["qwen3-30b-a3b"]
    assert (qwen.architecture.routed_experts, qwen.architecture.experts_per_token, qwen.max_context) == (128, 8, 40960)
    gemma = models["gemma-3-12b-it"]
    assert (gemma.architecture.sliding_window_layers, gemma.architecture.sliding_window) == (40, 1024)
    assert gemma.modalities == ("text", "image")
    assert models["mistral-7b-v0-1"].architecture.full_attention_layers == 0
    assert models["mixtral-8x7b-v0-1"].checkpoints["bf16"].weights_gb == 93.405585408


def test_kv_bytes_per_token_of_two_shipped_models_by_hand() -> None:
    """The capacity arithmetic's inputs, worked by hand: 2 (K and V) x kv_heads x head_dim x 2 bytes
    (BF16) per layer. Llama 3.1 8B: 2 x 8 x 128 x 2 = 4096 B per layer, x 32 full layers = 131072 B
    (128 KiB) per token. Gemma 3 12B: 2 x 8 x 256 x 2 = 8192 B per layer; 8 full layers = 65536 B
    per token of context, and 40 sliding layers = 327680 B per token of their last 1024 tokens."""
    models = catalog.load().models

    def per_layer(model_id: str) -> int:
        arch = models[model_id].architecture
        return 2 * arch.kv_heads * arch.head_dim * 2

    llama = models["llama-3-1-8b"].architecture
    assert per_layer("llama-3-1-8b") * llama.full_attention_layers == 131072
    gemma = models["gemma-3-12b-it"].architecture
    assert per_layer("gemma-3-12b-it") * gemma.full_attention_layers == 65536
    assert per_layer("gemma-3-12b-it") * gemma.sliding_window_layers == 327680


@pytest.mark.parametrize(
    ("old", "new", "message"),
    [
        (
            "      full_attention_layers: 48\n      sliding_window_layers: 0\n"
            "      sliding_window: 0\n      routed_experts: 128",
            "      full_attention_layers: 47\n      sliding_window_layers: 0\n"
            "      sliding_window: 0\n      routed_experts: 128",
            r"qwen3-30b-a3b\.architecture: full_attention_layers 47 \+ sliding_window_layers 0 \+ "
            r"chunked_attention_layers 0 is not layers 48",
        ),
        (
            "      routed_experts: 8\n      experts_per_token: 2",
            "      routed_experts: 0\n      experts_per_token: 2",
            r"mixtral-8x7b-v0-1\.architecture: kind 'sparse-moe' with 0 routed experts",
        ),
    ],
)
def test_contradicting_architecture_facts_are_errors(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, old: str, new: str, message: str
) -> None:
    _catalog_copy(tmp_path, monkeypatch, "models.yaml", old, new)
    with pytest.raises(build.CatalogError, match=message):
        build.load_sources()


def test_a_shipped_model_fact_without_a_source_is_an_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _catalog_copy(
        tmp_path,
        monkeypatch,
        "models.yaml",
        "      max_context: https://huggingface.co/Qwen/Qwen3-30B-A3B/blob/main/config.json\n",
        "",
    )
    with pytest.raises(build.CatalogError, match=r"models\.qwen3-30b-a3b: max_context has no source"):
        build.load_sources()


def test_the_cpu_backend_is_an_accelerator_of_the_hosts_memory_and_no_gpu() -> None:
    """`accelerator = cpu` (issue 30): no memory of its own, BF16 weights only, no draft model, and
    its vendor names nothing a runtime would request a GPU with; its image is vLLM's CPU image."""
    cat = catalog.load()
    cpu = cat.accelerators["cpu"]
    assert cpu.on_host and cpu.memory_gb is None and not cpu.validated
    assert (cpu.fp8, cpu.fp4, cpu.weight_formats, cpu.speculative_decoding) == (False, False, ("bf16",), False)
    assert not any(a.on_host for a in cat.accelerators.values() if a.id != "cpu")
    runtime = cat.vendor(cpu.vendor).runtime
    assert (runtime.kubernetes_gpu_resource, runtime.apptainer_flag) == (None, None)
    assert (runtime.compose_gpu_driver, runtime.compose_devices) == (None, None)
    assert cat.image(cpu.vendor) == f"vllm/vllm-openai-cpu:v{cat.vllm_version}-x86_64"
    assert not cat.has_path(cpu.vendor) and cat.validated_checkpoints(cpu.vendor) == ()


def test_a_host_accelerator_with_a_gpu_runtime_is_an_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _catalog_copy(tmp_path, monkeypatch, "accelerators.yaml", "    vendor: cpu\n", "    vendor: nvidia\n")
    with pytest.raises(build.CatalogError, match=r"accelerators\.cpu\.memory_gb: null, but vendors\.nvidia"):
        build.load_sources()


@pytest.mark.parametrize(
    ("name", "old", "new", "message"),
    [
        # A misspelt field is an error, not a default (`forbid_unknown_fields`), listing the fields there.
        (
            "accelerators.yaml",
            "    fp8: true\n",
            "    fp8: true\n    fp16: true\n",
            r"^accelerators\.yaml: accelerators\.b200\.fp16: True: unknown field; the fields are vendor, generation, "
            r".*, sources$",
        ),
        # Inside a record that may be null (`compose_devices`): the record's fields.
        (
            "recipe.yaml",
            "      devices: [",
            "      device: [",
            r"^recipe\.yaml: vendors\.amd\.runtime\.compose_devices\.device: \['/dev/kfd', '/dev/dri'\]: "
            r"unknown field; the fields are devices, group_add, security_opt$",
        ),
        # A wrong type in a list entry of a mapping entry: the entry's key and the index, and the value.
        (
            "recipe.yaml",
            "{flag: data_parallel_size, code: SPK204,",
            "{flag: data_parallel_size, code: 204,",
            r"^recipe\.yaml: vendors\.amd\.forbids\.0\.code: 204: expected `str`, got `int`$",
        ),
        (
            "accelerators.yaml",
            "    gpus_per_node: 8\n",
            "",
            r"^accelerators\.yaml: accelerators\.b200: object missing required field `gpus_per_node`$",
        ),
        (
            "accelerators.yaml",
            "  b200:\n",
            "  B200:\n",
            r"^accelerators\.yaml: accelerators: the key 'B200' does not match '\^\[a-z\]\[a-z0-9-\]\*\$'$",
        ),
    ],
)
def test_a_field_of_the_wrong_shape_names_file_field_and_value(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str, old: str, new: str, message: str
) -> None:
    """msgspec's own path reads `$.accelerators[...].fp16`; the error names the entry and the value.
    The JSON Schemas refused each of these as well, in their own words."""
    _catalog_copy(tmp_path, monkeypatch, name, old, new)
    with pytest.raises(build.CatalogError, match=message):
        build.load_sources()


@pytest.mark.parametrize(
    ("name", "old", "new", "message"),
    [
        # The JSON Schema accepted this one: `converts_from` was any string.
        (
            "models.yaml",
            "        converts_from: bf16\n",
            "        converts_from: bf17\n",
            r"models\.yaml: models\.muse-spark-open\.checkpoints\.bf16-to-mxfp4\.converts_from: 'bf17' is not a "
            r"checkpoint of models\.muse-spark-open \(bf16, nvfp4, mxfp4, bf16-to-mxfp4\)",
        ),
        # And these two: the schema's enums restated the lists, so removing an entry left its name valid.
        (
            "recipe.yaml",
            "  - {name: aiter, vllm: ROCM_AITER_FA, vendors: [amd]}\n",
            "",
            r"recipe\.yaml: paths\.amd\.attention: 'aiter' is not one of attention_backends \(triton, flashinfer\)",
        ),
        (
            "recipe.yaml",
            "  - {name: fp8_e4m3, bytes: 1}\n",
            "",
            r"recipe\.yaml: thresholds\.long_context_kv_dtypes: 'fp8_e4m3' is not one of kv_cache_dtypes",
        ),
        # The schema refused this one with its vendor enum; the vendors are now recipe.yaml's `vendors`.
        (
            "accelerators.yaml",
            "    vendor: amd\n",
            "    vendor: intel\n",
            r"accelerators\.yaml: accelerators\.mi350x\.vendor: 'intel' is not one of vendors \(nvidia, amd, cpu\)",
        ),
    ],
)
def test_a_dangling_reference_names_the_field_and_what_it_may_name(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str, old: str, new: str, message: str
) -> None:
    _catalog_copy(tmp_path, monkeypatch, name, old, new)
    with pytest.raises(build.CatalogError, match=message):
        build.load_sources()


def test_an_entry_written_twice_or_with_its_key_as_a_field_is_an_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A second KV cache dtype of one name would hide the first in `kv_cache_dtypes` (the schema
    accepted it); an `id` field would contradict, or repeat, the entry's key that fills it."""
    _catalog_copy(
        tmp_path, monkeypatch, "recipe.yaml", "  - {name: fp8, bytes: 1}\n", "  - {name: fp8, bytes: 1}\n" * 2
    )
    with pytest.raises(build.CatalogError, match=r"recipe\.yaml: kv_cache_dtypes: 'fp8' is listed twice"):
        build.load_sources()
    monkeypatch.undo()
    _catalog_copy(tmp_path / "again", monkeypatch, "accelerators.yaml", "  b200:\n", "  b200:\n    id: b300\n")
    with pytest.raises(build.CatalogError, match=r"accelerators\.b200\.id: 'b300': the entry's key is its id"):
        build.load_sources()


def test_the_snapshot_decodes_into_the_records_as_written() -> None:
    """`load()` is msgspec's typed decoder and the derived fields: each entry's id from its key, and
    a number keeps the type it is written with (a weight of `533` is shown as 533, not 533.0)."""
    cat = catalog.load()
    assert all(acc.id == key for key, acc in cat.accelerators.items())
    assert all(c.id == key for m in cat.models.values() for key, c in m.checkpoints.items())
    assert [v.name for v in cat.recipe.vendors.values()] == list(cat.recipe.vendors)
    muse = cat.recipe_model()
    assert type(muse.checkpoints["nvfp4"].weights_gb) is int and type(muse.draft.weights_gb) is float


def test_a_json_schema_for_editors_is_made_from_the_records() -> None:
    """docs/catalog.md offers `msgspec.json.schema` for an editor: the records make one, strict as they are."""
    schema = msgspec.json.schema(catalog.Recipe)
    thresholds = schema["$defs"]["Thresholds"]
    assert thresholds["additionalProperties"] is False
    assert set(thresholds["required"]) == set(catalog.Thresholds.__struct_fields__)
