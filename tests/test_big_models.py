"""The big models and their attention (issue 32, item 6): DeepSeek-V3, Qwen3-235B-A22B, Llama 4
Maverick, gpt-oss-120b and Kimi K2 in the catalog, their vendored config.json files imported to
exactly the catalog's facts, and their KV cache by hand after vLLM 0.33.0's KV-cache specs.

vLLM citations are to vllm 0.33.0 as installed (`vllm/...`); docs/models.md, "KV cache", has them.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from cli_helpers import spark

from spark_dsl import catalog
from spark_dsl.pipeline import RunResult, run

CONFIGS = Path(__file__).resolve().parent / "data" / "hf_configs"
# Catalog id -> vendored config folder (tests/data/hf_configs/README.md names each source).
BIG = {
    "deepseek-v3": "deepseek-v3",
    "qwen3-235b-a22b": "qwen3-235b-a22b",
    "llama-4-maverick-17b-128e-instruct": "llama-4-maverick-17b-128e-instruct",
    "gpt-oss-120b": "gpt-oss-120b",
    "kimi-k2-instruct": "kimi-k2-instruct",
}


def _plan(tmp_path: Path, text: str) -> RunResult:
    (tmp_path / "spec.spark").write_text(text, encoding="utf-8")
    return run([tmp_path / "spec.spark"], tmp_path)


def test_the_catalog_ships_the_big_models() -> None:
    models = catalog.load().models
    assert set(BIG) <= set(models) and len(models) >= 11
    arch = {m: models[m].architecture for m in BIG}
    assert arch["deepseek-v3"].mla and arch["kimi-k2-instruct"].mla
    assert (arch["deepseek-v3"].kv_lora_rank, arch["deepseek-v3"].qk_rope_head_dim) == (512, 64)
    maverick = arch["llama-4-maverick-17b-128e-instruct"]
    assert (maverick.full_attention_layers, maverick.chunked_attention_layers, maverick.attention_chunk_size) == (
        12,
        36,
        8192,
    )
    oss = arch["gpt-oss-120b"]
    assert (oss.sliding_window_layers, oss.sliding_window, oss.attention_sinks) == (18, 128, True)


@pytest.mark.parametrize("model_id", list(BIG))
def test_importing_the_vendored_config_gives_the_catalog_facts(tmp_path: Path, model_id: str) -> None:
    shipped = catalog.load().models[model_id]
    (label, checkpoint), *_ = shipped.checkpoints.items()
    # The Hugging Face cache layout `spark model import ORG/NAME` reads, holding the vendored
    # config.json and an index of the catalog's size (no index of these models was at hand).
    org, name = checkpoint.repository.split("/")
    snapshot = tmp_path / "hub" / f"models--{org}--{name}" / "snapshots" / "0123abc"
    snapshot.mkdir(parents=True)
    shutil.copy(CONFIGS / BIG[model_id] / "config.json", snapshot)
    total = round(checkpoint.weights_gb * 1e9)
    (snapshot / "model.safetensors.index.json").write_text(f'{{"metadata": {{"total_size": {total}}}}}')
    (tmp_path / "models").mkdir()
    env = {"HF_HUB_CACHE": str(tmp_path / "hub")}
    imported = spark("model", "import", checkpoint.repository, "--name", "imported", "-o", "models/imported.spark",
                     cwd=tmp_path, env=env)  # fmt: skip
    assert imported.returncode == 0, imported.stderr
    result = _plan(
        tmp_path,
        'import "models/imported.spark"\n\ndeployment d {\n  model       = imported\n  accelerator = b200\n}\n',
    )
    assert not result.has_errors, [d.message for d in result.diagnostics]
    (plan,) = result.plans
    assert plan.model.architecture == shipped.architecture
    assert (plan.model.max_context, plan.model.modalities) == (shipped.max_context, shipped.modalities)
    ((got_label, got),) = plan.model.checkpoints.items()
    assert (got_label, got.dtype, got.repository, got.weights_gb) == (
        label,
        checkpoint.dtype,
        checkpoint.repository,
        checkpoint.weights_gb,
    )


def test_deepseek_v3_on_two_h200_nodes_caches_one_latent_per_layer_on_every_rank(tmp_path: Path) -> None:
    result = _plan(
        tmp_path,
        "deployment ds {\n  model       = deepseek-v3\n  accelerator = h200\n  nodes       = 2\n"
        "  parallel    = tp + pp(2)\n}\n",
    )
    assert not result.has_errors, [d.message for d in result.diagnostics]
    (est,) = result.plans[0].capacity
    # One replica: TP 8 on each node, 2 pipeline stages: 16 x 141 GB x 0.92 = 2,075.52 GB; the FP8
    # weights (685 GB) leave 1,390.52 GB.
    assert (est.replica_gpus, est.memory_per_replica_gb, est.headroom_gb) == (16, 2075.52, 1390.52)
    # Multi-head latent attention: vLLM caches one latent of kv_lora_rank + qk_rope_head_dim =
    # 512 + 64 = 576 elements per token per layer (vllm/model_executor/layers/attention/
    # mla_attention.py:480), as one "head" with no separate V (MLAAttentionSpec, num_kv_heads=1,
    # head_size_v 0: mla_attention.py:1371-1402, vllm/v1/kv_cache_interface.py:742-743), whole on
    # every TP rank (max_tp_shards=1; _layer_tp_replicas, vllm/v1/core/kv_cache_planning.py:
    # 1233-1238). BF16 KV (`auto`): 576 x 2 = 1,152 B per token per layer on each rank; each stage's
    # 8 ranks hold its layers, so the replica holds 8 x 61 x 1,152 = 562,176 B per token
    # (70,272 B on each GPU of an unpipelined TP group).
    assert est.kv_bytes_per_token == 8 * 61 * (512 + 64) * 2 == 562_176
    # Not 2 x KV heads x head_dim: 2 x 128 x 192 x 2 x 61 = 5,996,544 B, more than ten times as much.
    assert est.kv_bytes_per_token * 10 < 2 * 128 * 192 * 2 * 61
    assert est.sliding_bytes_per_token == est.chunked_bytes_per_token == 0
    # One sequence of the model's 163,840 tokens: 562,176 x 163,840 = 92,106,915,840 B (92.107 GB);
    # 1,390,520,000,000 / 92,106,915,840 = 15.1, so 15 fit.
    assert est.sequence_tokens == 163_840
    assert est.sequence_bytes == 562_176 * 163_840 == 92_106_915_840
    assert est.sequences_fit == 1_390_520_000_000 // 92_106_915_840 == 15


def test_gpt_oss_120b_on_one_h100_reserves_window_and_in_flight_tokens_on_its_sliding_layers(tmp_path: Path) -> None:
    result = _plan(
        tmp_path, "deployment oss {\n  model       = gpt-oss-120b\n  accelerator = h100\n  gpus        = 1\n}\n"
    )
    assert not result.has_errors, [d.message for d in result.diagnostics]
    (est,) = result.plans[0].capacity
    # 1 x 80 GB x 0.92 = 73.6 GB, less the 65.28 GB of MXFP4 weights: 8.32 GB.
    assert (est.memory_per_replica_gb, est.weights_gb, est.headroom_gb) == (73.6, 65.28, 8.32)
    # Every layer: K and V x 8 KV heads x head_dim 64 x 2 bytes = 2,048 B per token
    # (AttentionSpec.page_size_bytes, vllm/v1/kv_cache_interface.py:585-601). The attention sinks
    # are weights: Attention.get_kv_cache_spec (vllm/model_executor/layers/attention/
    # attention.py:611-678) never reads them, so they add nothing.
    per_layer = 2 * 8 * 64 * 2
    assert est.kv_bytes_per_token == 18 * per_layer == 36_864  # the 18 full-attention layers
    assert est.sliding_bytes_per_token == 18 * per_layer == 36_864  # the 18 layers of 128 tokens
    # A sliding layer holds, per sequence, the window less one plus the tokens in flight, in
    # 16-token blocks, plus a block (SlidingWindowSpec, vllm/v1/kv_cache_interface.py:937-944).
    # In flight: 2 batches (async scheduling, vllm/config/vllm.py:587-609) of the H100's default
    # 8,192 batched tokens (vllm/engine/arg_utils.py:2975-3004): 16,384.
    # ceil((127 + 16,384) / 16) + 1 = 1,032 + 1 = 1,033 blocks = 16,528 tokens.
    assert est.sliding_tokens == 1_033 * 16 == 16_528
    # One 131,072-token sequence: 36,864 x 131,072 + 36,864 x 16,528 = 4,831,838,208 +
    # 609,288,192 = 5,441,126,400 B, what vLLM's startup check reserves (max_memory_usage_bytes).
    assert est.sequence_bytes == 4_831_838_208 + 609_288_192 == 5_441_126_400
    # A second sequence shares the tokens in flight, its sliding layers keeping ceil(127 / 16) + 1 =
    # 9 blocks = 144 tokens: 4,831,838,208 + 36,864 x 144 = 4,837,146,624 B, more than the
    # 8,320,000,000 - 5,441,126,400 = 2,878,873,600 B left: one fits.
    assert est.sequences_fit == 1 + (8_320_000_000 - 5_441_126_400) // (4_831_838_208 + 36_864 * 144) == 1


def test_llama_4_maverick_counts_its_chunked_layers_by_the_chunk(tmp_path: Path) -> None:
    result = _plan(
        tmp_path, "deployment m {\n  model       = llama-4-maverick-17b-128e-instruct\n  accelerator = b200\n}\n"
    )
    (est,) = result.plans[0].capacity
    # TP 8 over 8 KV heads: one head per rank; 2 x 8 x 128 x 2 = 4,096 B per token per layer.
    assert est.kv_bytes_per_token == 12 * 4096  # the 12 full-attention (NoPE) layers
    assert est.chunked_bytes_per_token == 36 * 4096
    # A chunk plus the tokens in flight (2 x B200's default 16,384), in 16-token blocks
    # (ChunkedLocalAttentionSpec, vllm/v1/kv_cache_interface.py:878-881): 8,192 + 32,768 = 40,960.
    assert est.chunked_tokens == 40_960
    assert est.sequence_bytes == 12 * 4096 * 1_048_576 + 36 * 4096 * 40_960


MLA_DECLARED = """model tiny-mla {
  layers           = 4
  hidden_size      = 2048
  query_heads      = %d
  kv_heads         = %d
  head_dim         = 192
  kv_lora_rank     = 512
  qk_rope_head_dim = 64
  max_context      = 32K
  checkpoint bf16 {
    repository = "org/tiny-mla"
    size       = 30GB
  }
}

deployment d {
  model       = tiny-mla
  accelerator = h100
  gpus        = %d
}
"""


@pytest.mark.parametrize(
    ("query_heads", "kv_heads", "gpus", "code"),
    [
        (16, 2, 8, "SPK224"),  # TP 8 a multiple of 2 KV heads: each would be on 4 ranks
        (12, 3, 4, "SPK219"),  # TP 4 neither divides 3 KV heads nor is a multiple of them
    ],
)
def test_kv_head_rules_do_not_apply_to_latent_attention(
    tmp_path: Path, query_heads: int, kv_heads: int, gpus: int, code: str
) -> None:
    mla = MLA_DECLARED % (query_heads, kv_heads, gpus)
    (tmp_path / "spec.spark").write_text(mla, encoding="utf-8")
    checked = spark("check", "spec.spark", cwd=tmp_path)
    assert code not in checked.stdout and "error" not in checked.stdout, checked.stdout
    # The same shape with KV heads (no latent) is what the rule is for.
    gqa = mla.replace("  kv_lora_rank     = 512\n  qk_rope_head_dim = 64\n", "")
    (tmp_path / "spec.spark").write_text(gqa, encoding="utf-8")
    assert code in spark("check", "spec.spark", cwd=tmp_path).stdout


def test_a_latent_without_its_rope_dimension_is_a_contradiction(tmp_path: Path) -> None:
    text = (MLA_DECLARED % (16, 16, 8)).replace("  qk_rope_head_dim = 64\n", "")
    (tmp_path / "spec.spark").write_text(text, encoding="utf-8")
    checked = spark("check", "spec.spark", cwd=tmp_path)
    assert checked.returncode == 1
    assert "error[SPK127]: `kv_lora_rank` without `qk_rope_head_dim`" in checked.stdout
    assert "help: add `qk_rope_head_dim = 64`" in checked.stdout
