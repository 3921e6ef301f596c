"""The generated `job.sbatch` of CPU specs, submitted unchanged to the local Slurm cluster
(tests/slurm_cluster.py: Slurm 22.05 with task/affinity, both nodes on this machine) with the real
vLLM on the nodes' PATH: tensor parallelism over two ranks of one node, and data parallelism across
the two nodes (a headless rank on node 2 joins the head's engine group). The job's own /health wait
reports it ready; then the deployment serves a chat with the key and refuses one without it.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from engine_helpers import TINY_LLAMA, base_env, free_port, http_status, spark_build

try:
    from slurm_cluster import SlurmCluster
except ImportError:  # pragma: no cover - tests/ as a package
    from ..slurm_cluster import SlurmCluster

KEY = "slurm-engine-test-key"
NAME = "tiny"


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    c = SlurmCluster(tmp_path_factory.mktemp("engine-slurm"), nodes=2).start()
    try:
        yield c
    finally:
        c.stop(check=True)


def spec(model: Path, port: int, shape: str) -> str:
    return (
        TINY_LLAMA
        + f"""

deployment tiny-slurm {{
  model         = tiny-llama
  accelerator   = cpu
  max_model_len = 1024
{shape}
  serve {{
    port              = {port}
    served_model_name = "{NAME}"
    # CUDA graphs have no CPU counterpart; eager start-up skips torch.compile (about 40 s of 80).
    extra_args        = ["--enforce-eager"]
    api_key           = env("SPARK_TEST_KEY")
  }}
  target slurm {{}}
}}
"""
    )


def chat(port: int, key: str | None) -> int:
    body = {"model": NAME, "messages": [{"role": "user", "content": "hello"}], "max_tokens": 4}
    return http_status(f"http://127.0.0.1:{port}/v1/chat/completions", key, json.dumps(body).encode(), timeout=120)


def serve_on_slurm(cluster: SlurmCluster, tmp_path: Path, cpu_bin: Path, text: str, port: int) -> str:
    """Submit the job, wait for its own "ready" line, check the key, cancel it; its output."""
    script = spark_build(tmp_path, text) / "tiny-slurm" / "job.sbatch"
    (tmp_path / "logs").mkdir()
    env = base_env(cpu_bin, SPARK_TEST_KEY=KEY, SLURM_CONF=cluster.env["SLURM_CONF"])
    job = cluster.submit(script, env=env, cwd=tmp_path)
    deadline = time.monotonic() + 480
    output = ""
    try:
        while time.monotonic() < deadline:
            logs = list((tmp_path / "logs").glob("*.out"))
            output = logs[0].read_text(errors="replace") if logs else ""
            if "spark: tiny-slurm is ready" in output:
                break
            state = cluster.job_fields(job).get("JobState")
            assert state in ("PENDING", "RUNNING", "CONFIGURING"), f"job {state}:\n{output[-4000:]}"
            time.sleep(2)
        else:
            pytest.fail(f"the job was not ready in time:\n{output[-4000:]}")
        assert http_status(f"http://127.0.0.1:{port}/v1/models") == 401
        assert chat(port, None) == 401
        assert chat(port, KEY) == 200
    finally:
        cluster.run(["scancel", str(job)])
        cluster.wait_job(job, timeout=60)
    return output


def test_tensor_parallel_over_two_ranks_of_one_node(cluster, tmp_path, cpu_bin, tiny_model) -> None:
    port = free_port()
    shape = (
        f'  gpus = 2\n  runtime {{\n    model_path  = "{tiny_model}"\n'
        '    host_memory = 2GiB\n    cpu_cores   = "0-1"\n  }'
    )
    output = serve_on_slurm(cluster, tmp_path, cpu_bin, spec(tiny_model, port, shape), port)
    assert "--tensor-parallel-size 2" in (tmp_path / "out" / "tiny-slurm" / "job.sbatch").read_text()
    assert "spark: tiny-slurm is ready" in output


def test_data_parallel_across_the_two_nodes(cluster, tmp_path, cpu_bin, tiny_model) -> None:
    port = free_port()
    shape = (
        f'  nodes    = 2\n  parallel = dp(2)\n  runtime {{\n    model_path  = "{tiny_model}"\n'
        "    host_memory = 1GiB\n  }"
    )
    output = serve_on_slurm(cluster, tmp_path, cpu_bin, spec(tiny_model, port, shape), port)
    assert "--headless" in (tmp_path / "out" / "tiny-slurm" / "job.sbatch").read_text()
    assert "spark: tiny-slurm is ready" in output
