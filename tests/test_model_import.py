"""`spark model import` (issue 15, item 2): a `model` block from a model's own config.json.

The fixtures in tests/data/hf_configs are published configs (their README says whose); the cache
layouts are made in tmp_path; nothing is downloaded.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from cli_helpers import spark

from spark_dsl import model_import
from spark_dsl.format import format_text
from spark_dsl.pipeline import run

CONFIGS = Path(__file__).resolve().parent / "data" / "hf_configs"


def _block(folder: Path | str, name: str | None = "imported", env: dict[str, str] | None = None) -> str:
    return model_import.import_model(str(folder), name, env=env or {})


def _lines(text: str) -> list[str]:
    return [" ".join(line.split()) for line in text.splitlines()]


def test_a_dense_model_with_each_fact_and_its_source() -> None:
    lines = _lines(_block(CONFIGS / "llama-3.1-8b"))
    for expected in (
        "model imported {",
        "layers = 32 # config.json: num_hidden_layers",
        "hidden_size = 4096 # config.json: hidden_size",
        "query_heads = 32 # config.json: num_attention_heads",
        "kv_heads = 8 # config.json: num_key_value_heads",
        "head_dim = 128 # config.json: hidden_size / num_attention_heads",
        "max_context = 131072 # config.json: max_position_embeddings",
        "modalities = [text] # config.json: no vision_config or audio_config",
        "checkpoint bf16 { # config.json: torch_dtype",
        "size = 16060522496B # model.safetensors.index.json: metadata.total_size",
    ):
        assert expected in lines, expected
    assert not [line for line in lines if line.startswith(("experts", "sliding_window"))]


def test_a_moe_model_names_its_experts() -> None:
    lines = _lines(_block(CONFIGS / "qwen3-30b-a3b"))
    assert "experts = 128 # config.json: num_experts" in lines
    assert "experts_per_token = 8 # config.json: num_experts_per_tok" in lines
    assert "head_dim = 128 # config.json: head_dim" in lines
    assert "kv_heads = 4 # config.json: num_key_value_heads" in lines
    # sliding_window null with use_sliding_window false: no window.
    assert not [line for line in lines if line.startswith("sliding_window")]
    mixtral = _lines(_block(CONFIGS / "mixtral-8x7b-v0.1"))
    assert "experts = 8 # config.json: num_local_experts" in mixtral
    assert "experts_per_token = 2 # config.json: num_experts_per_tok" in mixtral


def _with_index(tmp_path: Path, fixture: str, total: int) -> Path:
    """A copy of a fixture with an index this test writes (the size is not the publisher's)."""
    folder = tmp_path / fixture
    shutil.copytree(CONFIGS / fixture, folder)
    (folder / "model.safetensors.index.json").write_text(f'{{"metadata": {{"total_size": {total}}}}}')
    return folder


def test_a_multimodal_model_reads_text_config_and_its_sliding_layers(tmp_path: Path) -> None:
    lines = _lines(_block(_with_index(tmp_path, "gemma-3-12b-it", 24_374_158_560)))
    assert "layers = 48 # config.json: text_config.num_hidden_layers" in lines
    assert "head_dim = 256 # config.json: text_config.head_dim" in lines
    assert 'sliding_window_layers = 40 # config.json: text_config.layer_types ("sliding_attention")' in lines
    assert "sliding_window = 1024 # config.json: text_config.sliding_window" in lines
    assert "modalities = [text, image] # config.json: vision_config" in lines
    assert "checkpoint bf16 { # config.json: text_config.dtype" in lines


@pytest.mark.parametrize(
    ("extra", "expected"),
    [
        # Mistral 7B v0.1: a bare window covers every layer.
        ({"sliding_window": 4096}, "sliding_window_layers = 32 # config.json: sliding_window (every layer)"),
        # Qwen2: the window only when use_sliding_window, from max_window_layers on.
        (
            {"sliding_window": 4096, "use_sliding_window": True, "max_window_layers": 28},
            "sliding_window_layers = 4 # config.json: max_window_layers (layers from it on)",
        ),
        # Older Gemma 3 configs: every sixth layer full.
        (
            {"sliding_window": 1024, "sliding_window_pattern": 6},
            "sliding_window_layers = 27 # config.json: sliding_window_pattern (every 6th layer full)",
        ),
    ],
)
def test_sliding_window_facts_from_each_spelling(tmp_path: Path, extra: dict[str, object], expected: str) -> None:
    import json

    folder = tmp_path / "m"
    folder.mkdir()
    config = json.loads((CONFIGS / "llama-3.1-8b" / "config.json").read_text())
    (folder / "config.json").write_text(json.dumps({**config, **extra}))
    shutil.copy(CONFIGS / "llama-3.1-8b" / "model.safetensors.index.json", folder)
    assert expected in _lines(_block(folder))


def test_quantized_checkpoints_take_their_format(tmp_path: Path) -> None:
    import json

    config = json.loads((CONFIGS / "llama-3.1-8b" / "config.json").read_text())
    cases = {
        "fp8": {"quant_method": "fp8"},
        "mxfp4": {"quant_method": "mxfp4"},
        "nvfp4": {"quant_method": "modelopt", "quant_algo": "NVFP4"},
    }
    for dtype, quant in cases.items():
        folder = tmp_path / dtype
        folder.mkdir()
        (folder / "config.json").write_text(json.dumps({**config, "quantization_config": quant}))
        shutil.copy(CONFIGS / "llama-3.1-8b" / "model.safetensors.index.json", folder)
        assert any(line.startswith(f"checkpoint {dtype} {{") for line in _lines(_block(folder))), dtype
    half = tmp_path / "float16"
    half.mkdir()
    (half / "config.json").write_text(json.dumps({**config, "torch_dtype": "float16"}))
    shutil.copy(CONFIGS / "llama-3.1-8b" / "model.safetensors.index.json", half)
    assert "checkpoint bf16 { # config.json: torch_dtype (float16: the bytes of bf16)" in _lines(_block(half))


# ---------------------------------------------------------------------------- the local cache


def _cache(root: Path, repository: str, revisions: dict[str, str], main: str | None) -> None:
    """A Hugging Face cache entry: snapshots/REV per revision (fixture folder), refs/main -> `main`."""
    org, name = repository.split("/")
    repo = root / f"models--{org}--{name}"
    for revision, fixture in revisions.items():
        shutil.copytree(CONFIGS / fixture, repo / "snapshots" / revision)
    if main is not None:
        (repo / "refs").mkdir(parents=True)
        (repo / "refs" / "main").write_text(main)


def test_a_repository_is_found_in_the_cache_at_refs_main(tmp_path: Path) -> None:
    cache = tmp_path / "hub"
    _cache(cache, "acme/Tiny-MoE", {"aaa111": "llama-3.1-8b", "bbb222": "qwen3-30b-a3b"}, main="bbb222")
    text = model_import.import_model("acme/Tiny-MoE", None, env={"HF_HUB_CACHE": str(cache)})
    lines = _lines(text)
    assert "model tiny-moe {" in lines  # the name comes from the repository's
    assert 'display_name = "Tiny-MoE" # the repository\'s name' in lines
    assert 'repository = "acme/Tiny-MoE" # the Hugging Face cache folder' in lines
    assert "experts = 128 # config.json: num_experts" in lines  # refs/main's snapshot, not the other


@pytest.mark.parametrize("variable", ["HF_HUB_CACHE", "HF_HOME", "HOME"])
def test_the_cache_is_where_huggingface_hub_puts_it(tmp_path: Path, variable: str) -> None:
    hub = {"HF_HUB_CACHE": tmp_path, "HF_HOME": tmp_path / "hub", "HOME": tmp_path / ".cache/huggingface/hub"}
    _cache(hub[variable], "acme/Only-One", {"ccc333": "mixtral-8x7b-v0.1"}, main=None)  # the only snapshot
    text = model_import.import_model("acme/Only-One", None, env={variable: str(tmp_path)})
    assert "experts = 8 # config.json: num_local_experts" in _lines(text)


def test_a_shipped_model_is_not_declared_again(tmp_path: Path) -> None:
    _cache(tmp_path, "meta-llama/Llama-3.1-8B", {"r1": "llama-3.1-8b"}, main="r1")
    with pytest.raises(model_import.ImportProblem) as err:
        model_import.import_model("meta-llama/Llama-3.1-8B", None, env={"HF_HUB_CACHE": str(tmp_path)})
    assert err.value.kind == "shipped-name" and "model = llama-3-1-8b" in err.value.help


# ---------------------------------------------------------------------------- bad input, exit 2


def _fails(tmp_path: Path, *args: str, env: dict[str, str] | None = None) -> str:
    result = spark("model", "import", *args, cwd=tmp_path, env=env)
    assert result.returncode == 2, (result.stdout, result.stderr)
    assert result.stdout == "" and "Traceback" not in result.stderr
    assert result.stderr.startswith("spark: error: model-import/")
    assert "\n  help: " in result.stderr
    return result.stderr


def _folder(tmp_path: Path, config: bytes | None) -> Path:
    folder = tmp_path / "model"
    folder.mkdir()
    if config is not None:
        (folder / "config.json").write_bytes(config)
    return folder


def test_a_missing_folder_or_config_is_an_error(tmp_path: Path) -> None:
    assert "model-import/not-found: no such folder: nowhere" in _fails(tmp_path, "nowhere")
    _folder(tmp_path, None)
    assert "model-import/missing-file: no config.json in model" in _fails(tmp_path, "model")


def test_a_repository_not_in_the_cache_says_where_it_looked(tmp_path: Path) -> None:
    error = _fails(tmp_path, "acme/absent", env={"HF_HUB_CACHE": str(tmp_path / "hub")})
    assert "model-import/not-in-cache: `acme/absent` is not in the Hugging Face cache" in error
    assert "spark never downloads" in error


@pytest.mark.parametrize(
    ("config", "expected"),
    [
        (b"{not json", "model-import/not-json: model/config.json is not JSON"),
        (b"[1, 2]", "model-import/not-json: model/config.json holds a JSON list, not an object"),
        (b"\xff\xfe", "model-import/not-json"),
        (b'{"hidden_size": 4096}', "model-import/missing-field: model/config.json has no `num_hidden_layers`"),
        (
            b'{"num_hidden_layers": "32", "hidden_size": 4096, "num_attention_heads": 32}',
            'model-import/bad-field: `num_hidden_layers` in model/config.json is "32", not a whole number',
        ),
        (
            b'{"num_hidden_layers": 2, "hidden_size": 64, "num_attention_heads": 4, "max_position_embeddings": 8,'
            b' "quantization_config": {"quant_method": "awq"}}',
            'model-import/unknown-dtype: quantization_config.quant_method "awq"',
        ),
    ],
)
def test_bad_config_json_is_an_error(tmp_path: Path, config: bytes, expected: str) -> None:
    _folder(tmp_path, config)
    assert expected in _fails(tmp_path, "model")


def test_a_config_without_a_size_says_which_file_is_missing(tmp_path: Path) -> None:
    error = _fails(tmp_path, str(CONFIGS / "gemma-3-12b-it"))
    assert "model-import/missing-file: no model.safetensors.index.json or model.safetensors" in error


def test_a_fifo_never_blocks(tmp_path: Path) -> None:
    folder = _folder(tmp_path, None)
    os.mkfifo(folder / "config.json")
    assert "model-import/not-a-file: model/config.json: it is a FIFO, not a regular file" in _fails(tmp_path, "model")
    shutil.copy(CONFIGS / "llama-3.1-8b" / "config.json", tmp_path / "config.json")
    shutil.copy(CONFIGS / "llama-3.1-8b" / "model.safetensors.index.json", tmp_path)
    os.mkfifo(tmp_path / "out.spark")
    error = _fails(tmp_path, ".", "--name", "mine", "-o", "out.spark")
    assert "model-import/unwritable: out.spark: it is a FIFO" in error


def test_a_huge_file_is_not_read(tmp_path: Path) -> None:
    folder = _folder(tmp_path, None)
    with open(folder / "config.json", "wb") as huge:
        huge.truncate(model_import.MAX_JSON_BYTES + 1)  # sparse: no disk used
    assert "model-import/too-large: model/config.json is 16,777,217 bytes" in _fails(tmp_path, "model")


@pytest.mark.parametrize("name", ["1st", "model", "my model", "a\nb", "x" * 200])
def test_a_bad_name_is_an_error(tmp_path: Path, name: str) -> None:
    error = _fails(tmp_path, str(CONFIGS / "llama-3.1-8b"), "--name", name)
    assert "model-import/bad-name:" in error and "\n  help: pass --name " in error


# ---------------------------------------------------------------------------- hostile names


def test_hostile_folder_names_are_quoted_and_escaped(tmp_path: Path) -> None:
    hostile = 'we"ird\\ }\n# model x {'
    folder = tmp_path / hostile
    shutil.copytree(CONFIGS / "llama-3.1-8b", folder)
    text = model_import.import_model(str(folder), None, env={})
    parsed = format_text(text, "x.spark")
    assert parsed.diagnostic is None and parsed.text == text  # one block, already formatted
    assert "model we-ird-model-x {" in text
    from spark_dsl.syntax.parser import parse

    module = parse(text, "x.spark").module
    assert module is not None
    (decl,) = module.models
    assert module.statements == (decl,)
    checkpoint = decl.body.entries[-1]
    repository = checkpoint.body.entries[0].value  # type: ignore[union-attr]
    assert repository.value == str(folder.resolve())  # the path round-trips through the literal


def test_derived_names_are_names() -> None:
    assert model_import.derived_name("Llama-3.1-8B") == "llama-3-1-8b"
    assert model_import.derived_name("3-Mini") == "m-3-mini"
    assert model_import.derived_name("Model") == "model-model"
    assert model_import.derived_name("???") == "imported"


# ---------------------------------------------------------------------------- the round trip


DEPLOYMENT = """import "models/imported.spark"

deployment imported-h100 {
  model       = my-llama
  accelerator = h100
  gpus        = 2
  target shell {}
}
"""


def test_round_trip_config_to_block_to_a_clean_check_and_capacity_by_hand(tmp_path: Path) -> None:
    models = tmp_path / "models"
    models.mkdir()
    written = spark("model", "import", str(CONFIGS / "llama-3.1-8b"), "--name", "my-llama", "-o",
                    "models/imported.spark", cwd=tmp_path)  # fmt: skip
    assert written.returncode == 0 and written.stdout == "", written.stderr
    (tmp_path / "spec.spark").write_text(DEPLOYMENT, encoding="utf-8")
    checked = spark("check", "spec.spark", cwd=tmp_path)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    result = run([tmp_path / "spec.spark"], tmp_path)
    assert result.diagnostics == []
    (plan,) = result.plans
    (est,) = plan.capacity
    # By hand from config.json: K and V x 8 KV heads x head_dim 4096 / 32 = 128 x 2 bytes (BF16
    # KV cache) x 32 layers = 131,072 bytes per token; weights = total_size 16,060,522,496 bytes.
    assert est.kv_bytes_per_token == 2 * 8 * 128 * 2 * 32 == 131_072
    assert est.sliding_bytes_per_token == 0
    assert est.weights_gb == 16.060522496
    # 2 GPUs x 80 GB (H100) x 0.92 of it for vLLM.
    assert est.memory_per_replica_gb == 147.2
    assert est.sequence_tokens == 131_072
    # Headroom for KV cache: 147.2 GB - 16.060522496 GB of weights - no draft = 131.1394775 GB,
    # shown to the MB: 131.139 GB.
    assert est.headroom_gb == 131.139
    # One sequence of max_position_embeddings 131,072 tokens x 131,072 B = 17,179,869,184 B; and
    # 131,139,000,000 B / 17,179,869,184 B = 7.63, so 7 whole sequences fit.
    assert est.sequence_bytes == 131_072 * 131_072 == 17_179_869_184
    assert est.sequences_fit == 131_139_000_000 // 17_179_869_184 == 7


def test_round_trip_of_a_windowed_model_counts_its_sliding_layers(tmp_path: Path) -> None:
    folder = _with_index(tmp_path, "gemma-3-12b-it", 24_374_158_560)
    (tmp_path / "models").mkdir()
    (tmp_path / "models" / "imported.spark").write_text(_block(folder, "my-llama"), encoding="utf-8")
    (tmp_path / "spec.spark").write_text(DEPLOYMENT, encoding="utf-8")
    result = run([tmp_path / "spec.spark"], tmp_path)
    assert [d.code for d in result.diagnostics if d.severity == "error"] == []
    (plan,) = result.plans
    (est,) = plan.capacity
    # Per layer: 2 x 8 KV heads x 256 x 2 bytes = 8,192; 8 full layers and 40 windowed (1,024 tokens).
    assert est.kv_bytes_per_token == 8 * 8192 == 65_536
    assert est.sliding_bytes_per_token == 40 * 8192 == 327_680
    # vLLM reserves per windowed layer the window less one plus the tokens in flight (2 batches of
    # the H100's default 8,192 batched tokens), in 16-token blocks, plus one block
    # (vllm/v1/kv_cache_interface.py:937-944): ceil((1,023 + 16,384) / 16) + 1 = 1,089 blocks.
    assert est.sliding_tokens == 1_089 * 16 == 17_424
    assert est.weights_gb == 24.37415856
    # 2 x 80 GB x 0.92 = 147.2 GB - 24.37415856 GB of weights = 122.82584144 GB: 122.826 GB.
    assert est.headroom_gb == 122.826
    # One sequence of max_position_embeddings 131,072 tokens: 65,536 B x 131,072 tokens on the full
    # layers + 327,680 B x 17,424 tokens on the windowed ones = 8,589,934,592 + 5,709,496,320 =
    # 14,299,430,912 B, what vLLM's startup check reserves for one sequence.
    assert est.sequence_tokens == 131_072
    assert est.sequence_bytes == 8_589_934_592 + 5_709_496_320 == 14_299_430_912
    # Each further sequence shares the tokens in flight: its windowed layers keep ceil(1,023 / 16)
    # + 1 = 65 blocks = 1,040 tokens, so 8,589,934,592 + 327,680 x 1,040 = 8,930,721,792 B; the
    # 122,826,000,000 - 14,299,430,912 = 108,526,569,088 B after the first hold 12 more: 13 fit.
    assert est.sequences_fit == 1 + (122_826_000_000 - 14_299_430_912) // 8_930_721_792 == 13


def test_a_cache_folder_that_cannot_be_listed_is_an_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _cache(tmp_path, "acme/Locked", {"r1": "llama-3.1-8b", "r2": "qwen3-30b-a3b"}, main=None)

    def refused(self: Path) -> None:
        raise PermissionError(13, "Permission denied", str(self))

    # The tests run as root, which reads any folder: the refusal is the operating system's answer
    # to a user without read permission on the snapshots folder.
    monkeypatch.setattr(Path, "iterdir", refused)
    with pytest.raises(model_import.ImportProblem) as err:
        model_import.import_model("acme/Locked", None, env={"HF_HUB_CACHE": str(tmp_path)})
    assert (err.value.kind, err.value.message) == ("unreadable", "cannot read acme/Locked: permission denied")


def test_a_nul_in_the_cache_variable_is_shown_escaped() -> None:
    with pytest.raises(model_import.ImportProblem) as err:
        model_import.import_model("acme/x", None, env={"HF_HUB_CACHE": "/tmp/a\0b"})
    assert err.value.kind == "not-in-cache" and "\\x00" in err.value.message


def test_the_block_goes_to_standard_output_or_replaces_the_file_named(tmp_path: Path) -> None:
    fixture = str(CONFIGS / "mixtral-8x7b-v0.1")
    expected = model_import.import_model(fixture, "mine", env={})
    printed = spark("model", "import", fixture, "--name", "mine", cwd=tmp_path)
    assert (printed.returncode, printed.stdout, printed.stderr) == (0, expected, "")
    (tmp_path / "out.spark").write_text("old text\n")
    replaced = spark("model", "import", fixture, "--name", "mine", "-o", "out.spark", cwd=tmp_path)
    assert (replaced.returncode, replaced.stdout) == (0, "")
    assert (tmp_path / "out.spark").read_text() == expected
