"""The capacity arithmetic of two shipped models outside the recipe, worked by hand (issue 15,
acceptance): Llama 3.1 8B (dense) and Qwen3 30B A3B (MoE, 4 KV heads, replicated at TP 8)."""

from __future__ import annotations

from pathlib import Path

from spark_dsl.pipeline import RunResult, run


def _run(tmp_path: Path, body: str) -> RunResult:
    (tmp_path / "spec.spark").write_text(f"deployment d {{\n{body}}}\n", encoding="utf-8")
    return run([tmp_path / "spec.spark"], tmp_path)


def test_llama_3_1_8b_on_one_h100_node(tmp_path: Path) -> None:
    # The Hub gates Llama's weights: a token, or SPK516.
    token = '  runtime {\n    hf_token = secret("hf-token")\n  }\n'
    result = _run(tmp_path, "  model       = llama-3-1-8b\n  accelerator = h100\n" + token)
    assert result.diagnostics == []
    (est,) = result.plans[0].capacity
    # 8 x 80 GB x 0.92 = 588.8 GB; weights 16,060,522,496 B (model.safetensors.index.json).
    assert est.memory_per_replica_gb == 588.8 and est.weights_gb == 16.060522496
    assert est.headroom_gb == 572.739  # 588.8 - 16.060522496, to the MB
    # K and V x 8 KV heads x 128 x 2 bytes (BF16 cache) x 32 layers.
    assert est.kv_bytes_per_token == 2 * 8 * 128 * 2 * 32 == 131_072
    # vLLM's default context: the model's 131,072 tokens, 17.18 GB per sequence.
    assert est.sequence_tokens == 131_072 and est.sequence_gb == 17.18
    assert est.sequences_fit == 572_739_000_000 // (131_072 * 131_072) == 33


def test_qwen3_30b_a3b_with_and_without_kv_replication(tmp_path: Path) -> None:
    half = _run(tmp_path, "  model       = qwen3-30b-a3b\n  accelerator = h100\n  gpus        = 4\n")
    assert half.diagnostics == []
    (est,) = half.plans[0].capacity
    # 4 x 80 GB x 0.92 = 294.4 GB; weights 61,064,245,248 B.
    assert est.memory_per_replica_gb == 294.4 and est.headroom_gb == 233.336
    # TP 4 = the 4 KV heads: K and V x 4 x 128 x 2 bytes x 48 layers.
    assert est.kv_bytes_per_token == 2 * 4 * 128 * 2 * 48 == 98_304
    assert est.sequence_tokens == 40_960 and est.sequences_fit == 233_336_000_000 // (98_304 * 40_960) == 57
    whole = _run(tmp_path, "  model       = qwen3-30b-a3b\n  accelerator = h100\n")
    assert [d.code for d in whole.diagnostics] == ["SPK224"]  # TP 8 over 4 KV heads: each held twice
    (est,) = whole.plans[0].capacity
    assert est.kv_bytes_per_token == 2 * 98_304
    assert est.headroom_gb == 527.736 and est.sequences_fit == 527_736_000_000 // (196_608 * 40_960) == 65


def test_the_weights_note_names_the_draft_of_the_model_at_hand(tmp_path: Path) -> None:
    """An EAGLE-3 draft is not a DSpark draft: the note names the draft's own method."""
    model = (
        "model eagle-model {\n  layers = 32\n  hidden_size = 4096\n  query_heads = 32\n  kv_heads = 8\n"
        "  head_dim = 128\n  max_context = 32K\n"
        '  checkpoint bf16 {\n    repository = "example-org/base"\n    size = 64GB\n  }\n'
        '  draft {\n    method = eagle3\n    repository = "example-org/base-eagle3"\n    size = 3GB\n  }\n}\n'
    )
    # 1 x 80 GB x 0.92 = 73.6 GB; 64 + 3 GB leaves 6.6 GB, under the tenth (7.36 GB): SPK302.
    body = "  model = eagle-model\n  accelerator = h100\n  gpus = 1\n  speculative = dspark\n"
    (tmp_path / "spec.spark").write_text(f"{model}\ndeployment d {{\n{body}}}\n", encoding="utf-8")
    result = run([tmp_path / "spec.spark"], tmp_path)
    (d,) = [d for d in result.diagnostics if d.code == "SPK302"]
    assert [n.message for n in d.notes if n.message.startswith("weights:")] == [
        "weights: bf16 64 GB + eagle3 draft 3 GB"
    ]
