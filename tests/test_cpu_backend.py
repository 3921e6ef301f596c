"""`accelerator = cpu`, vLLM's CPU backend (issue 30, item 6): the capacity arithmetic on the host
memory, the KV cache and CPU binding the launches carry, outputs that ask for no GPU, and the
rules for what the backend cannot do. docs/targets.md, "The CPU accelerator"."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from spark_dsl.diagnostics import Severity
from spark_dsl.pipeline import RunResult, run
from spark_dsl.plan import host_cpus
from spark_dsl.plan.capacity import host_memory_needed, kv_cache_bytes
from spark_dsl.targets.build import build
from spark_dsl.vllm_flags import check_argv

Project = Callable[[dict[str, str]], Path]
REPO = Path(__file__).resolve().parent.parent
SPEC = REPO / "specs" / "models" / "cpu-tiny-llama.spark"

TINY = """model tiny {
  layers      = 2
  hidden_size = 128
  query_heads = 4
  kv_heads    = 2
  head_dim    = 32
  max_context = 4K
  checkpoint bf16 {
    repository = "example-org/tiny-llama"
    size       = 1_200_000B
  }
}
"""


def deployment(body: str, name: str = "d", targets: str = "  target shell {}\n") -> str:
    return f"deployment {name} {{\n  model       = tiny\n  accelerator = cpu\n{body}{targets}}}\n"


def check(project: Project, text: str) -> RunResult:
    root = project({"a.spark": TINY + "\n" + text, "spark.toml": ""})
    return run([root / "a.spark"], root)


def codes(result: RunResult) -> list[str]:
    return [d.code for d in result.diagnostics]


def outputs(result: RunResult, tmp_path: Path) -> dict[str, dict[str, str]]:
    """Each deployment's files, by deployment and file name."""
    outcome = build(result.plans, result.launches, result.deployment_has_errors, [], (), tmp_path / "out")
    assert [d for d in outcome.diagnostics if d.severity is Severity.ERROR] == []
    return {output.name: dict(output.files) for output in outcome.outputs}


@pytest.fixture(scope="module")
def spec_result() -> RunResult:
    return run([SPEC], REPO)


def test_the_example_spec_checks_clean_and_every_launch_is_vllms(spec_result: RunResult) -> None:
    assert spec_result.diagnostics == []
    names = {p.name for p in spec_result.plans}
    assert names == {"tiny-cpu", "tiny-cpu-tp2", "tiny-cpu-dp2"}
    for _, launches in spec_result.planned():
        for launch in launches:
            assert check_argv(list(launch.argv)) == [], launch.argv
            assert "--gpu-memory-utilization" not in launch.argv
            assert "--kv-cache-memory-bytes" in launch.argv


def test_the_kv_cache_each_rank_gets_by_hand(spec_result: RunResult) -> None:
    """2 GiB over two ranks is 1,073,741,824 B each; the replica's 1,117,600 B of weights are
    558,800 B a rank; 1,073,183,024 B rounded down to whole MiB is 1,023 MiB = 1,072,693,248 B."""
    plan = spec_result.plan("tiny-cpu-tp2")
    assert plan is not None
    (pool,) = plan.pools
    assert kv_cache_bytes(plan, pool) == 1023 * 2**20 == 1_072_693_248
    (est,) = plan.capacity
    # The estimate reads a rank's share as a GPU's memory, all of it (no utilization).
    assert (est.replica_gpus, est.utilization, est.memory_per_replica_gb) == (2, 1.0, 2.147)
    assert (est.weights_gb, est.headroom_gb) == (0.0011176, 2.146)
    # KV per token: 2 x 2 KV heads x 32 x 2 B x 2 layers = 512 B; 4,096 tokens = 2,097,152 B.
    assert (est.kv_bytes_per_token, est.sequence_bytes) == (512, 2_097_152)
    (planned,) = spec_result.planned([plan])
    (launch,) = planned.launches
    argv = list(launch.argv)
    assert argv[argv.index("--kv-cache-memory-bytes") + 1] == "1072693248"
    assert dict(launch.env)[host_cpus.THREADS_BIND_ENV] == "0|1"


def test_the_least_host_memory_holds_the_weights_and_one_sequence(project: Project) -> None:
    result = check(project, deployment(""))
    (d,) = result.diagnostics
    assert d.code == "SPK233" and d.severity is Severity.ERROR
    assert "`runtime { host_memory = 1GiB }`" in d.help
    (plan,) = result.plans
    assert host_memory_needed(plan) == 2**30


def test_the_host_memory_fix_goes_into_a_written_runtime_block(project: Project) -> None:
    from spark_dsl.fixes import apply_edits

    result = check(project, deployment('  runtime {\n    model_path = "/models/tiny"\n  }\n'))
    (d,) = result.diagnostics
    source = result.sources[d.location.file] if d.location else None
    assert source is not None and d.fixes
    fixed = apply_edits(source.text, list(d.fixes[0].edits))
    assert '  runtime {\n    model_path = "/models/tiny"\n    host_memory = 1GiB\n  }\n' in fixed


def test_weights_larger_than_the_host_memory_are_spk301_and_raise_it(project: Project) -> None:
    result = check(project, deployment("  runtime { host_memory = 1MiB }\n"))
    (d,) = result.diagnostics
    assert d.code == "SPK301"
    assert "(1 rank of `cpu`: 1 x 0.00104858 GB of `runtime.host_memory` = 0.001 GB)" in d.message
    assert d.help.startswith("raise `runtime.host_memory` to 1GiB") and d.fixes


def test_little_kv_room_on_the_host_raises_the_host_memory_not_a_utilization(project: Project) -> None:
    # 1,200 MB of weights in 1,250 MiB (1.311 GB): 0.111 GB left, less than a tenth.
    big = TINY.replace("1_200_000B", "1_200_000_000B")
    root = project({"a.spark": big + deployment("  runtime { host_memory = 1250MiB }\n"), "spark.toml": ""})
    result = run([root / "a.spark"], root)
    (d,) = result.diagnostics
    assert d.code == "SPK302" and "gpu_memory_utilization" not in d.help
    assert d.help.startswith("raise `runtime.host_memory` to 2GiB")


def test_muse_spark_open_on_the_cpu_is_an_error(project: Project) -> None:
    muse = "deployment m {\n  model = muse-spark-open\n  accelerator = cpu\n%s}\n"
    found = codes(check(project, muse % ""))
    assert "SPK201" in found and "SPK233" in found
    nvfp4 = codes(check(project, muse % "  checkpoint = nvfp4\n  runtime { host_memory = 4TiB }\n"))
    assert "SPK234" in nvfp4 and "SPK202" not in nvfp4 and "SPK225" not in nvfp4


def test_no_output_asks_for_a_gpu(spec_result: RunResult, tmp_path: Path) -> None:
    files = outputs(spec_result, tmp_path)
    for name, by_file in files.items():
        job = by_file["job.sbatch"]
        assert "--gpus-per-node" not in job and "--nv" not in job, name
        for doc in yaml.safe_load_all(by_file["kubernetes.yaml"]):
            text = yaml.safe_dump(doc)
            assert "nvidia.com/gpu" not in text and "amd.com/gpu" not in text, name
            assert "tolerations" not in text and "nodeSelector" not in text, name
        if "compose.yaml" in by_file:
            for service in yaml.safe_load(by_file["compose.yaml"])["services"].values():
                assert "deploy" not in service and "devices" not in service, name
                assert service["image"] == "vllm/vllm-openai-cpu:v0.33.0-x86_64"
    pods = [
        container
        for doc in yaml.safe_load_all(files["tiny-cpu"]["kubernetes.yaml"])
        if doc.get("kind") == "Deployment"
        for container in doc["spec"]["template"]["spec"]["containers"]
    ]
    (vllm,) = pods
    # 16 GiB for the rank, and the 1 GiB of host memory its weights and KV cache live in.
    assert vllm["resources"] == {"requests": {"cpu": 4, "memory": "17Gi", "ephemeral-storage": "1Gi"}}


def test_apptainer_runs_without_a_gpu_flag(project: Project, tmp_path: Path) -> None:
    text = deployment("  runtime { host_memory = 1GiB }\n", targets="  target slurm { container = apptainer }\n")
    job = outputs(check(project, text), tmp_path)["d"]["job.sbatch"]
    assert "apptainer exec docker://vllm/vllm-openai-cpu:v0.33.0-x86_64" in job


def test_data_parallel_across_nodes_binds_each_nodes_one_rank(project: Project) -> None:
    text = deployment(
        '  nodes = 2\n  parallel = dp(2)\n  runtime {\n    host_memory = 1GiB\n    cpu_cores = "0-3"\n  }\n'
    )
    result = check(project, text)
    assert result.diagnostics == []
    ((_, launches),) = result.planned()
    assert [dict(launch.env)[host_cpus.THREADS_BIND_ENV] for launch in launches] == ["0-3", "0-3"]


@pytest.mark.parametrize(
    ("cores", "ranks", "bound"),
    [("0-7", 2, "0-3|4-7"), ("0-15,32-47", 2, "0-15|32-47"), ("0-2", 2, "0|1"), ("5,2-4", 1, "5,2-4")],
)
def test_the_cpu_list_is_split_into_equal_runs_in_its_order(cores: str, ranks: int, bound: str) -> None:
    ids = host_cpus.parse(cores)
    assert isinstance(ids, list)
    assert host_cpus.binding(ids, ranks) == bound


@pytest.mark.parametrize(
    ("text", "problem"),
    [("0-", "not a CPU id"), ("3-1", "runs backwards"), ("0,0", "listed twice"), ("99999", "past the 8192")],
)
def test_a_cpu_list_that_does_not_parse_says_why(text: str, problem: str) -> None:
    found = host_cpus.parse(text)
    assert isinstance(found, str) and problem in found


def test_the_compiler_manages_the_kv_cache_size_on_the_cpu_only(project: Project) -> None:
    flag = '  serve { extra_args = ["--kv-cache-memory-bytes", "1000"] }\n'
    on_cpu = codes(check(project, deployment("  runtime { host_memory = 1GiB }\n" + flag)))
    assert on_cpu == ["SPK902"]
    env = '  serve { env { VLLM_CPU_KVCACHE_SPACE = "4" } }\n'
    assert codes(check(project, deployment("  runtime { host_memory = 1GiB }\n" + env))) == ["SPK904"]
    gpu = "deployment g {\n  model = tiny\n  accelerator = h100\n  gpus = 2\n" + flag + "}\n"
    assert codes(check(project, gpu)) == []


def test_the_binding_variable_is_the_users_without_cpu_cores(project: Project) -> None:
    env = '  gpus = 2\n  serve { env { VLLM_CPU_OMP_THREADS_BIND = "nobind" } }\n  runtime { host_memory = 1GiB }\n'
    result = check(project, deployment(env))
    assert result.diagnostics == []  # no SPK241: the user binds (here: not at all)
    ((_, (launch,)),) = result.planned()
    assert dict(launch.env)[host_cpus.THREADS_BIND_ENV] == "nobind"
    both = '  gpus = 2\n  serve { env { VLLM_CPU_OMP_THREADS_BIND = "0|1" } }\n'
    assert codes(
        check(project, deployment(both + '  runtime {\n    host_memory = 1GiB\n    cpu_cores = "0-1"\n  }\n'))
    ) == ["SPK904"]


def test_explain_cpu_names_its_facts_and_sources(spark: Callable[..., Any]) -> None:
    r = spark("explain", "cpu")
    assert r.returncode == 0, r.stderr
    assert "runtime.host_memory" in r.stdout and "bf16 only (SPK234)" in r.stdout
    assert "vllm/vllm-openai-cpu:v0.33.0-x86_64" in r.stdout
    assert re.search(r"speculative_decoding: https://docs\.vllm\.ai/\S+feature-x-hardware", r.stdout)
