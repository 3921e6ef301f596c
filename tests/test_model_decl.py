"""Declared models (issue 15): imported like profiles, checked once, resolved into the catalog's
`Model` shape, planned with the generic path defaults, checked by the model-generic rules only."""

from __future__ import annotations

from pathlib import Path

from spark_dsl.pipeline import RunResult, run
from spark_dsl.rules.registry import is_recipe_rule
from spark_dsl.rules.table import all_rules

# Llama 3.1 8B Instruct's config.json (meta-llama/Llama-3.1-8B-Instruct): 32 layers, hidden 4096,
# 32 attention heads, 8 KV heads, head_dim 4096 / 32 = 128, 131,072 positions.
LLAMA = """model my-llama {
  display_name = "Llama 3.1 8B Instruct"
  layers       = 32
  hidden_size  = 4096
  query_heads  = 32
  kv_heads     = 8
  head_dim     = 128
  max_context  = 128K
  checkpoint bf16 {
    repository = "meta-llama/Llama-3.1-8B-Instruct"
    size       = 16_060_522_496B
  }
}
"""

DEPLOYMENT = """import "models/llama.spark"

deployment llama-h100 {
  model       = my-llama
  accelerator = h100
  target shell {}
}
"""


def _run(tmp_path: Path, files: dict[str, str], spec: str = "spec.spark") -> RunResult:
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text, encoding="utf-8")
    return run([tmp_path / spec], tmp_path)


def test_an_imported_model_plans_with_the_generic_defaults(tmp_path: Path) -> None:
    result = _run(tmp_path, {"models/llama.spark": LLAMA, "spec.spark": DEPLOYMENT})
    assert result.diagnostics == []
    (plan,) = result.plans
    assert plan.model.id == "my-llama" and plan.model.display_name == "Llama 3.1 8B Instruct"
    arch = plan.model.architecture
    assert (arch.layers, arch.kv_heads, arch.full_attention_layers, arch.sliding_window_layers) == (32, 8, 32, 0)
    assert plan.checkpoint is not None and plan.checkpoint.repository == "meta-llama/Llama-3.1-8B-Instruct"
    checkpoint = plan.setting("checkpoint")
    assert checkpoint is not None and checkpoint.origin == "default: the model's first checkpoint"
    assert plan.value("parallel").spelled() == "tp" and plan.value("speculative").mode == "none"
    # No recipe default for a model outside the recipe: vLLM decides these.
    for key in ("frontend", "max_model_len", "attention", "prefix_caching", "chunked_prefill", "model_runner"):
        assert plan.setting(key) is None, key


def test_the_capacity_of_a_declared_model_is_its_dimensions_by_hand(tmp_path: Path) -> None:
    (plan,) = _run(tmp_path, {"models/llama.spark": LLAMA, "spec.spark": DEPLOYMENT}).plans
    (est,) = plan.capacity
    # K and V x 8 KV heads x 128 x 2 bytes (bf16 KV cache: `auto`) x 32 layers = 131,072 B/token.
    assert est.kv_bytes_per_token == 2 * 8 * 128 * 2 * 32 == 131_072
    assert est.weights_gb == 16.060522496
    assert est.memory_per_replica_gb == 588.8  # 8 x 80 GB x 0.92
    # 128K = 131,072 tokens x 131,072 B = 17.18 GB per sequence.
    assert est.sequence_tokens == 131_072 and est.sequence_bytes == 131_072 * 131_072


def test_launches_of_a_declared_model_hold_only_documented_flags(tmp_path: Path) -> None:
    result = _run(tmp_path, {"models/llama.spark": LLAMA, "spec.spark": DEPLOYMENT})
    ((launch,),) = [p.launches for p in result.planned()]
    text = " ".join(str(a) for a in launch.argv)
    assert "meta-llama/Llama-3.1-8B-Instruct" in text and "--tensor-parallel-size 8" in text
    for recipe_only in ("--language-model-only", "--attention-backend", "--speculative-config", "--async"):
        assert recipe_only not in text
    # None of the recipe's variables; only the ready budget every launch carries.
    assert [k for k, _ in launch.env if k.startswith("VLLM_")] == ["VLLM_ENGINE_READY_TIMEOUT_S"]


def test_recipe_rules_are_marked_and_skip_other_models(tmp_path: Path) -> None:
    recipe = {r.code for r in all_rules() if is_recipe_rule(r)}
    assert {
        "SPK201",
        "SPK202",
        "SPK203",
        "SPK204",
        "SPK207",
        "SPK210",
        "SPK211",
        "SPK212",
        "SPK221",
        "SPK222",
        "SPK401",
    } <= recipe
    assert not recipe & {"SPK215", "SPK217", "SPK219", "SPK220", "SPK223", "SPK301", "SPK303"}
    # h100 is outside the recipe: SPK201 for Muse Spark Open, nothing for a declared model.
    spec = DEPLOYMENT.replace("model       = my-llama", "model       = my-llama\n  checkpoint  = bf16")
    assert _run(tmp_path, {"models/llama.spark": LLAMA, "spec.spark": spec}).diagnostics == []
    muse = "deployment m {\n  model       = muse-spark-open\n  accelerator = h100\n  checkpoint  = nvfp4\n}\n"
    codes = {d.code for d in _run(tmp_path, {"muse.spark": muse}, "muse.spark").diagnostics}
    assert "SPK201" in codes


def test_a_model_imported_twice_is_one_model_and_two_are_spk128(tmp_path: Path) -> None:
    files = {
        "models/llama.spark": LLAMA,
        "models/again.spark": 'import "llama.spark"\n',
        "spec.spark": DEPLOYMENT.replace(
            'import "models/llama.spark"', 'import "models/llama.spark"\nimport "models/again.spark"'
        ),
    }
    assert _run(tmp_path, files).diagnostics == []
    files["models/other.spark"] = LLAMA
    files["spec.spark"] = DEPLOYMENT + 'import "models/other.spark"\n'
    (dup,) = _run(tmp_path, files).diagnostics
    assert dup.code == "SPK128" and dup.message == "model `my-llama` is declared twice"
    assert dup.location is not None and dup.location.file.endswith("spec.spark")
    assert [n.message for n in dup.notes] == ["first declared here", "also declared here"]


def test_an_unknown_model_names_the_declared_ones(tmp_path: Path) -> None:
    spec = DEPLOYMENT.replace("model       = my-llama", "model       = my-lama")
    (bad,) = _run(tmp_path, {"models/llama.spark": LLAMA, "spec.spark": spec}).diagnostics
    assert bad.code == "SPK117" and bad.message == "unknown model `my-lama`; did you mean `my-llama`?"
    assert bad.help is not None and "declared here: `my-llama`" in bad.help


EXPECTED_TYPE_ERRORS = [
    ("SPK102", '`max_context` takes a count, found string "long"'),
    ("SPK105", "`kv_heads` must be at least 1, found `0`"),
]


def test_a_declared_model_is_typed_and_ranged_like_any_key(tmp_path: Path) -> None:
    bad = LLAMA.replace("kv_heads     = 8", "kv_heads     = 0").replace("max_context  = 128K", 'max_context  = "long"')
    result = _run(tmp_path, {"models/llama.spark": bad, "spec.spark": DEPLOYMENT})
    found = sorted((d.code, d.message) for d in result.diagnostics)
    assert found == EXPECTED_TYPE_ERRORS, found
    assert all(d.location is not None and d.location.file.endswith("llama.spark") for d in result.diagnostics)
    assert result.plans == []  # an unsound model plans nothing


def test_context_beyond_a_declared_model_limit_is_spk215(tmp_path: Path) -> None:
    spec = DEPLOYMENT.replace("accelerator = h100", "accelerator = h100\n  max_model_len = 256K")
    (bad,) = _run(tmp_path, {"models/llama.spark": LLAMA, "spec.spark": spec}).diagnostics
    assert bad.code == "SPK215" and bad.message == (
        "max_model_len 256K (262,144 tokens) exceeds the model's context of 128K (131,072 tokens)"
    )


def test_a_sliding_window_model_counts_the_window_once(tmp_path: Path) -> None:
    # Gemma 3 27B's shape (google/gemma-3-27b-it, config.json): 62 layers, 52 of them with a
    # 1,024-token sliding window (five local layers to one global), 16 KV heads of 128.
    gemma = LLAMA.replace("my-llama", "my-gemma").replace("layers       = 32", "layers       = 62")
    gemma = gemma.replace(
        "kv_heads     = 8", "kv_heads     = 16\n  sliding_window_layers = 52\n  sliding_window = 1024"
    )
    spec = DEPLOYMENT.replace("my-llama", "my-gemma").replace("models/llama.spark", "models/gemma.spark")
    result = _run(tmp_path, {"models/gemma.spark": gemma, "spec.spark": spec})
    assert result.diagnostics == []
    (est,) = result.plans[0].capacity
    per_layer = 2 * 16 * 128 * 2  # K and V x 16 KV heads x 128 x 2 bytes = 8,192 B
    assert est.kv_bytes_per_token == 10 * per_layer  # the 10 full-attention layers
    assert est.sliding_bytes_per_token == 52 * per_layer
    # vLLM reserves per sliding layer the window less one plus the tokens in flight (2 batches of
    # H100's default 8,192 batched tokens), in 16-token blocks, plus a block
    # (vllm/v1/kv_cache_interface.py:937-944): ceil((1,023 + 16,384) / 16) + 1 = 1,089 blocks.
    assert est.sliding_tokens == (-(-(1023 + 2 * 8192) // 16) + 1) * 16 == 17_424
    assert est.sequence_bytes == 131_072 * 10 * per_layer + 17_424 * 52 * per_layer


def test_hostile_head_counts_are_not_factored(tmp_path: Path) -> None:
    # Up to 2**53 is a valid integer: the help's divisor is their greatest common divisor, not a
    # search over every number below (which took minutes), and TP over such heads is reported at once.
    huge = LLAMA.replace("query_heads  = 32", "query_heads  = 9007199254740990").replace(
        "kv_heads     = 8", "kv_heads     = 4503599627370494"
    )
    (bad,) = _run(tmp_path, {"models/llama.spark": huge, "spec.spark": DEPLOYMENT}).diagnostics
    assert bad.code == "SPK127" and bad.help is not None
    assert bad.help.startswith("write `kv_heads = 2` (a divisor of 9007199254740990)")
    spec = "deployment d {\n  model = muse-spark-open\n  accelerator = b200\n  gpus = 96879480126779\n}\n"
    codes = [d.code for d in _run(tmp_path, {"huge.spark": spec}, "huge.spark").diagnostics]
    assert codes == ["SPK219", "SPK220"]


def test_a_deployment_picks_any_checkpoint_its_declared_model_has(tmp_path: Path) -> None:
    # An FP8 export beside the BF16 weights: `checkpoint = fp8` picks it, although no recipe
    # checkpoint is called that (the key's spellings are every weight format, not the recipe's).
    with_fp8 = LLAMA.replace(
        "\n}\n",
        '\n  checkpoint fp8 {\n    repository = "neuralmagic/Meta-Llama-3.1-8B-Instruct-FP8"\n'
        "    size       = 9_083_000_000B\n  }\n}\n",
    )
    spec = DEPLOYMENT.replace("accelerator = h100", "accelerator = h100\n  checkpoint  = fp8")
    result = _run(tmp_path, {"models/llama.spark": with_fp8, "spec.spark": spec})
    assert [d.code for d in result.diagnostics] == []
    (plan,) = result.plans
    assert plan.checkpoint is not None and plan.checkpoint.repository.endswith("-FP8")
    (launch,) = result.launches[plan]
    assert launch.argv[2] == "neuralmagic/Meta-Llama-3.1-8B-Instruct-FP8"


def test_spk220_suggests_the_expert_parallel_sizes_of_the_model_at_hand(tmp_path: Path) -> None:
    """Mixtral 8x7B has 8 routed experts, so the sizes that divide them are 1, 2, 4 or 8, not
    Muse Spark Open's "up to 256": the help is built from the model's `routed_experts`."""
    spec = (
        "deployment mixtral {\n  model       = mixtral-8x7b-v0-1\n  accelerator = b200\n"
        "  gpus        = 4\n  nodes       = 3\n  parallel    = dp(3) + tp + ep\n}\n"
    )
    result = _run(tmp_path, {"spec.spark": spec})
    (d,) = [d for d in result.diagnostics if d.code == "SPK220"]
    assert d.message == "expert-parallel size 12 (TP 4 x DP 3) does not divide the 8 experts"
    assert d.help.startswith("choose TP x DP as a power of two up to 8, or drop `ep` (`parallel = dp(3) + tp`); ")


def test_spk220_lists_the_divisors_of_an_expert_count_that_is_no_power_of_two(tmp_path: Path) -> None:
    model = (
        "model moe-60 {\n  layers = 24\n  hidden_size = 2048\n  query_heads = 16\n  kv_heads = 16\n"
        "  head_dim = 128\n  max_context = 32K\n  experts = 60\n  experts_per_token = 4\n"
        '  checkpoint bf16 {\n    repository = "example-org/moe-60"\n    size = 30GB\n  }\n}\n'
    )
    spec = "deployment d {\n  model = moe-60\n  accelerator = b200\n  gpus = 8\n  parallel = tp + ep\n}\n"
    result = _run(tmp_path, {"spec.spark": model + spec})
    (d,) = [d for d in result.diagnostics if d.code == "SPK220"]
    assert d.help.startswith(
        "choose TP x DP as 1, 2, 3, 4, 5, 6, 10, 12, 15, 20, 30 or 60, or drop `ep` (`parallel = tp`); "
    )


def test_an_fp8_checkpoint_on_an_accelerator_without_fp8_is_spk225(tmp_path: Path) -> None:
    """SPK225's FP8 branch: the A100 (Ampere) has no FP8 tensor cores, so FP8 weights cannot run
    there; the help offers the model's BF16 checkpoint or an NVIDIA accelerator with FP8."""
    model = (
        "model tiny-fp8 {\n  layers = 16\n  hidden_size = 2048\n  query_heads = 32\n  kv_heads = 8\n"
        "  head_dim = 64\n  max_context = 128k\n"
        '  checkpoint fp8 {\n    repository = "example-org/tiny-fp8"\n    size = 2GB\n  }\n'
        '  checkpoint bf16 {\n    repository = "example-org/tiny"\n    size = 4GB\n  }\n}\n'
    )
    spec = "deployment d {\n  model = tiny-fp8\n  accelerator = a100-80gb\n  checkpoint = fp8\n}\n"
    result = _run(tmp_path, {"spec.spark": model + spec})
    (d,) = result.diagnostics
    assert d.code == "SPK225"
    assert d.message == "checkpoint `fp8` has fp8 weights, which need FP8 support; `a100-80gb` has none"
    assert d.help == "use `checkpoint = bf16`, or an accelerator with FP8 (`accelerator = b200`)"
    fixed = _run(tmp_path, {"spec.spark": model + spec.replace("checkpoint = fp8", "checkpoint = bf16")})
    assert fixed.diagnostics == []


def test_an_uneven_expert_split_is_a_warning_as_vllm_runs_it(tmp_path: Path) -> None:
    """vLLM 0.33.0 gives the first (experts mod EP size) ranks one more expert
    (fused_moe/expert_map_manager.py:66-69) and refuses the split only with EPLB: SPK220 warns."""
    spec = (
        "deployment mixtral {\n  model       = mixtral-8x7b-v0-1\n  accelerator = b200\n"
        "  gpus        = 4\n  nodes       = 3\n  parallel    = dp(3) + tp + ep\n}\n"
    )
    result = _run(tmp_path, {"spec.spark": spec})
    (d,) = [d for d in result.diagnostics if d.code == "SPK220"]
    assert d.severity.value == "warning"
    assert "not with `--enable-eplb`" in (d.help or "")
