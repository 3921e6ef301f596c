"""Recipe paths, defaults and the AMD workload policy of RULES.md, value by value, origin by origin."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from spark_dsl.pipeline import run

Project = Callable[[dict[str, str]], Path]


def plan_of(project: Project, body: str, accelerator: str = "mi355x") -> Any:
    root = project(
        {"a.spark": f"deployment d {{\n  model = muse-spark-open\n  accelerator = {accelerator}\n{body}}}\n"}
    )
    result = run([root / "a.spark"], root)
    (plan,) = result.plans
    return plan, result


def shown(plan: Any, key: str) -> Any:
    value = plan.setting(key).value
    return value.spelled() if hasattr(value, "spelled") else value


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("checkpoint", "nvfp4"),
        ("parallel", "tp + ep"),
        ("speculative", "dspark"),
        ("frontend", "rust"),
        ("modalities", ("text", "image", "audio", "video")),
        ("prefix_caching", True),
        ("chunked_prefill", True),
    ],
)
def test_nvidia_defaults(project: Project, key: str, value: Any) -> None:
    plan, result = plan_of(project, "", "b200")
    assert result.diagnostics == []
    assert plan.path == "nvidia" and shown(plan, key) == value
    assert plan.setting(key).origin == "recipe default"


def test_nvidia_leaves_attention_context_and_runner_to_vllm(project: Project) -> None:
    plan, result = plan_of(project, "", "gb300")
    for key in ("attention", "max_model_len", "model_runner"):
        assert plan.setting(key) is None
    argv = " ".join(result.launches[plan][0].argv)
    for flag in ("--attention-backend", "--max-model-len", "--language-model-only", "--limit-mm-per-prompt"):
        assert flag not in argv
    assert "VLLM_USE_V2_MODEL_RUNNER" not in dict(result.launches[plan][0].env)
    assert plan.setting("gpus").value == 4 and "--tensor-parallel-size 4" in argv


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("checkpoint", "mxfp4"),
        ("parallel", "tp"),
        ("speculative", "none"),
        ("frontend", "python"),
        ("attention", "aiter"),
        ("max_model_len", 32768),
        ("modalities", ("text",)),
        ("prefix_caching", False),
        ("chunked_prefill", True),
        ("model_runner", "v2"),
    ],
)
def test_amd_defaults(project: Project, key: str, value: Any) -> None:
    plan, result = plan_of(project, "", "mi350x")
    assert result.diagnostics == []
    assert plan.path == "amd" and shown(plan, key) == value


def test_amd_launch_spells_every_default(project: Project) -> None:
    plan, result = plan_of(project, "")
    (launch,) = result.launches[plan]
    assert launch.argv == (
        "vllm",
        "serve",
        "amd/Muse-Spark-Open-816B-A42B-MXFP4",
        "--port",
        "8000",
        "--tensor-parallel-size",
        "8",
        "--max-model-len",
        "32768",
        "--no-enable-prefix-caching",
        "--enable-chunked-prefill",
        "--attention-backend",
        "ROCM_AITER_FA",
        "--language-model-only",
        # The drain (serve.drain, 60 s by default): in-flight requests finish on SIGTERM.
        "--shutdown-timeout",
        "60",
    )
    # The ready budget: 600 s + the 509 GB MXFP4 checkpoint at 0.5 GB/s to load and 0.25 GB/s to download.
    assert dict(launch.env) == {
        "VLLM_ENGINE_READY_TIMEOUT_S": "3654",
        "VLLM_ROCM_USE_AITER": "1",
        "VLLM_USE_V2_MODEL_RUNNER": "1",
    }


@pytest.mark.parametrize(
    ("checkpoint", "workload", "parallel", "speculative"),
    [
        ("mxfp4", "concurrency = 4", "tp", "dspark"),
        ("mxfp4", "concurrency = 31", "tp", "dspark"),
        ("mxfp4", "concurrency = 32", "tp + ep", "dspark"),
        ("mxfp4", "concurrency = 64", "tp + ep", "dspark"),
        ("mxfp4", "concurrency = 65", "tp + ep", "none"),
        ("bf16-to-mxfp4", "concurrency = 48", "tp + ep", "dspark"),
        ("bf16", "concurrency = 8", "tp", "dspark"),
        ("bf16", "concurrency = 48", "tp", "none"),
        ("bf16", "concurrency = 100", "tp", "none"),
        ("mxfp4", "goal = latency", "tp", "dspark"),
        ("mxfp4", "goal = throughput", "tp + ep", "none"),
    ],
)
def test_amd_workload_policy(project: Project, checkpoint: str, workload: str, parallel: str, speculative: str) -> None:
    plan, result = plan_of(project, f"  checkpoint = {checkpoint}\n  workload {{ {workload} }}\n")
    assert [d.code for d in result.diagnostics] == []
    assert (shown(plan, "parallel"), shown(plan, "speculative")) == (parallel, speculative)
    assert plan.setting("parallel").origin.startswith("workload policy: ")


def test_long_context_always_takes_plain_tp_without_draft(project: Project) -> None:
    plan, result = plan_of(project, "  max_model_len = 1M\n  max_num_seqs = 8\n  workload { concurrency = 48 }\n")
    # 48 sequences of 1M tokens do not fit (23 do); the policy itself stays on the long-context path.
    assert [d.code for d in result.diagnostics] == ["SPK304"]
    assert (shown(plan, "parallel"), shown(plan, "speculative")) == ("tp", "none")
    assert plan.setting("parallel").origin == "workload policy: max_model_len 1M -> long-context configuration"


def test_auto_follows_the_policy_and_says_so(project: Project) -> None:
    plan, _ = plan_of(project, "  parallel = auto\n  speculative = auto\n  workload { concurrency = 100 }\n")
    assert (shown(plan, "parallel"), shown(plan, "speculative")) == ("tp + ep", "none")
    assert plan.setting("parallel").origin.endswith("(auto)")
    nvidia, _ = plan_of(project, "  parallel = auto\n", "b200")
    assert shown(nvidia, "parallel") == "tp + ep" and nvidia.setting("parallel").origin == "recipe default (auto)"


def test_adaptive_dspark_defaults_to_triton_on_amd(project: Project) -> None:
    plan, result = plan_of(project, "  speculative = dspark(adaptive)\n")
    assert result.diagnostics == []
    assert shown(plan, "attention") == "triton"
    assert "TRITON_ATTN" in result.launches[plan][0].argv
    spec = result.launches[plan][0].argv[result.launches[plan][0].argv.index("--speculative-config") + 1]
    assert spec == (
        '{"method":"dspark","model":"Inferact/Muse-Spark-Open-DSpark",'
        '"num_speculative_tokens":7,"enable_adaptive_verification":true}'
    )


def test_explicit_attention_auto_emits_nothing(project: Project) -> None:
    plan, result = plan_of(project, "  attention = auto\n")
    assert "--attention-backend" not in result.launches[plan][0].argv


def test_load_time_conversion_on_amd_is_an_environment_switch(project: Project) -> None:
    plan, result = plan_of(project, "  checkpoint = bf16-to-mxfp4\n")
    (launch,) = result.launches[plan]
    assert launch.argv[2] == "meta-models/Muse-Spark-Open-816B-A42B"
    assert "--quantization" not in launch.argv
    assert dict(launch.env)["VLLM_ROCM_MUSE_MOE_ONLINE_QUANT"] == "mxfp4"


def test_unvalidated_accelerator_takes_its_vendors_defaults_but_no_checkpoint(project: Project) -> None:
    plan, result = plan_of(project, "  allow_unvalidated = true\n", "mi325x")
    assert plan.path == "amd" and plan.setting("checkpoint") is None
    assert {d.code for d in result.diagnostics} == {"SPK201", "SPK118"}
    (d,) = [d for d in result.diagnostics if d.code == "SPK118"]
    assert "`mxfp4`" in d.help and "`bf16-to-mxfp4`" in d.help and "`nvfp4`" not in d.help
