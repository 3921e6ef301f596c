"""Launches of models outside the recipe (issue 15) parse with the pinned vLLM's own serve parser:
declared models of several shapes (dense, mixture of experts, sliding window, multimodal, a
pipeline over two nodes) and every shipped catalog model on an NVIDIA and an AMD accelerator, the
mixture-of-experts ones also with expert parallelism, each on the generic path (only vLLM's
documented flags, no recipe env)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from spark_dsl import catalog
from spark_dsl.pipeline import run

MODELS = """model dense-8b {
  layers      = 32
  hidden_size = 4096
  query_heads = 32
  kv_heads    = 8
  head_dim    = 128
  max_context = 128K
  checkpoint bf16 {
    repository = "meta-llama/Llama-3.1-8B-Instruct"
    size       = 16GB
  }
  checkpoint fp8 {
    repository = "neuralmagic/Meta-Llama-3.1-8B-Instruct-FP8"
    size       = 9GB
  }
  draft {
    method     = eagle3
    repository = "yuhuili/EAGLE3-LLaMA3.1-Instruct-8B"
    size       = 0.85GB
    tokens     = 3
  }
}

model moe-30b {
  layers            = 48
  hidden_size       = 2048
  query_heads       = 32
  kv_heads          = 4
  head_dim          = 128
  experts           = 128
  experts_per_token = 8
  max_context       = 32K
  checkpoint bf16 {
    repository = "Qwen/Qwen3-30B-A3B"
    size       = 61GB
  }
}

model windowed-27b {
  layers                = 62
  hidden_size           = 5376
  query_heads           = 32
  kv_heads              = 16
  head_dim              = 128
  sliding_window_layers = 52
  sliding_window        = 1024
  max_context           = 128K
  modalities            = [text, image]
  checkpoint bf16 {
    repository = "google/gemma-3-27b-it"
    size       = 55GB
  }
}
"""

DEPLOYMENTS = """import "models.spark"

deployment dense-default {
  model       = dense-8b
  accelerator = h100
  speculative = dspark
}

deployment dense-tuned {
  model          = dense-8b
  accelerator    = h200
  gpus           = 4
  nodes          = 2
  parallel       = dp(2) + tp
  max_model_len  = 32K
  max_num_seqs   = 64
  kv_cache_dtype = fp8
}

deployment moe-ep {
  model         = moe-30b
  accelerator   = mi300x
  parallel      = tp + ep
  max_model_len = 32K
}

deployment dense-pipeline {
  model       = dense-8b
  accelerator = h100
  nodes       = 2
  parallel    = tp + pp(2)
}

deployment windowed-text {
  model       = windowed-27b
  accelerator = b200
  modalities  = [text]
}
"""


def _launches(root: Path, files: dict[str, str]) -> list[tuple[str, ...]]:
    for name, text in files.items():
        (root / name).write_text(text, encoding="utf-8")
    result = run([root / "deployments.spark"], root)
    assert not result.has_errors, [d.message for d in result.diagnostics]
    return [
        launch.argv for _, launches in result.planned() for launch in launches if launch.argv[:2] == ("vllm", "serve")
    ]


def _envs(root: Path) -> list[tuple[tuple[str, str], ...]]:
    """Each launch's environment beside the ready budget, which every launch carries."""
    planned = run([root / "deployments.spark"], root).planned()
    envs = [dict(launch.env) for _, launches in planned for launch in launches]
    assert all(env.pop("VLLM_ENGINE_READY_TIMEOUT_S").isdigit() for env in envs)
    return [tuple(env.items()) for env in envs]


def test_declared_models_launch_with_flags_vllm_parses(
    tmp_path: Path, vllm_verify: Any, vllm_assert_all_ok: Callable[[Any], None]
) -> None:
    argvs = _launches(tmp_path, {"models.spark": MODELS, "deployments.spark": DEPLOYMENTS})
    flat = [" ".join(a) for a in argvs]
    assert len(argvs) == 7  # dense-tuned and dense-pipeline run one launch per node
    assert any("--enable-expert-parallel" in a for a in flat) and any("--language-model-only" in a for a in flat)
    assert any("--max-model-len 32768" in a and "--kv-cache-dtype fp8" in a for a in flat)
    assert any(
        '--speculative-config {"method":"eagle3","model":"yuhuili/EAGLE3-LLaMA3.1-Instruct-8B"' in a for a in flat
    )
    # A pipeline over two nodes: vLLM's multiprocessing rendezvous, the second node headless.
    assert any("--pipeline-parallel-size 2" in a and "--node-rank 1" in a and " --headless" in a for a in flat)
    # No recipe env (the AITER switch on AMD); the nodes of a pool over two nodes (the pipeline's and
    # dense-tuned's data parallelism) advertise their own address, and Gloo and NCCL use the
    # interface that holds it.
    over_nodes = (
        ("GLOO_SOCKET_IFNAME", "${SPARK_NODE_INTERFACE}"),
        ("NCCL_SOCKET_IFNAME", "=${SPARK_NODE_INTERFACE}"),
        ("VLLM_HOST_IP", "${SPARK_NODE_ADDRESS}"),
    )
    assert [env for env in _envs(tmp_path) if env] == [over_nodes] * 4
    vllm_assert_all_ok(vllm_verify(argvs, []))


# An NVIDIA Blackwell accelerator and an AMD one (CDNA3, outside the recipe): a model outside the
# recipe takes the same generic path on both, with no vendor env of the recipe's.
SHIPPED_ON = ("b200", "mi300x")
# The shipped mixture-of-experts models: this tier must cover expert parallelism on them.
MOE = {
    "qwen3-30b-a3b",
    "mixtral-8x7b-v0-1",
    "deepseek-v3",
    "qwen3-235b-a22b",
    "llama-4-maverick-17b-128e-instruct",
    "gpt-oss-120b",
    "kimi-k2-instruct",
}


def _shipped(parallel: str | None = None, moe_only: bool = False) -> list[str]:
    """A deployment of every shipped model but the recipe's (its launches are test_spec_launches'),
    or of the mixture-of-experts ones, on each accelerator of SHIPPED_ON: one spec text each."""
    cat = catalog.load()
    line = f"  parallel    = {parallel}\n" if parallel else ""
    return [
        f"deployment {accelerator}-{i} {{\n  model       = {model.id}\n  accelerator = {accelerator}\n{line}}}\n"
        for accelerator in SHIPPED_ON
        for i, model in enumerate(cat.models.values())
        if model.id != cat.recipe.model and (model.architecture.routed_experts or not moe_only)
    ]


def test_every_shipped_model_launches_with_flags_vllm_parses(
    tmp_path: Path, vllm_verify: Any, vllm_assert_all_ok: Callable[[Any], None]
) -> None:
    cat = catalog.load()
    specs = _shipped()
    if not specs:  # the recipe's model alone: its launches are test_spec_launches' specs
        assert list(cat.models) == [cat.recipe.model]
        return
    argvs = _launches(tmp_path, {"deployments.spark": "".join(specs)})
    # One launch per deployment: each model on each accelerator, TP over the node's 8 GPUs.
    assert len(argvs) == len(specs) == len(SHIPPED_ON) * (len(cat.models) - 1)
    assert all(a[a.index("--tensor-parallel-size") + 1] == "8" for a in argvs), argvs
    # The generic path on AMD too: no recipe env (VLLM_ROCM_USE_AITER), no recipe flag.
    assert not any(env for env in _envs(tmp_path)), _envs(tmp_path)
    vllm_assert_all_ok(vllm_verify(argvs, []))


def test_shipped_moe_models_launch_with_expert_parallelism_vllm_parses(
    tmp_path: Path, vllm_verify: Any, vllm_assert_all_ok: Callable[[Any], None]
) -> None:
    cat = catalog.load()
    moe = {m.id for m in cat.models.values() if m.architecture.routed_experts and m.id != cat.recipe.model}
    assert moe >= MOE, moe  # the catalog still ships them; a new MoE model joins this test by itself
    specs = _shipped("tp + ep", moe_only=True)
    argvs = _launches(tmp_path, {"deployments.spark": "".join(specs)})
    assert len(argvs) == len(SHIPPED_ON) * len(moe)
    for argv in argvs:
        # vLLM's expert parallelism: `--enable-expert-parallel` over the TP group (8 GPUs).
        assert "--enable-expert-parallel" in argv and argv[argv.index("--tensor-parallel-size") + 1] == "8", argv
    # Each serves its first checkpoint (the default): BF16, or the FP8 and MXFP4 the big models ship.
    assert {a[2] for a in argvs} == {next(iter(cat.models[m].checkpoints.values())).repository for m in moe}
    vllm_assert_all_ok(vllm_verify(argvs, []))
