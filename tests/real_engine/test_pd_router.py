"""Prefill/decode disaggregation, run byte for byte: the generated `serve.sh` of a CPU P/D spec starts
the real `vllm-router` (PyPI, the catalog's release) beside a real prefill server on node rank 0,
and a real decode server on node rank 1; the KV cache moves over NIXL (PyPI's nixl on UCX, CPU
memory). Both "nodes" are this machine, on 127.0.0.1 (the pools' ports differ: 8100, 8200).

What only the real router shows:

* it authenticates to the workers with `Authorization: Bearer $OPENAI_API_KEY` from its own
  environment (vllm_pd_router.rs): spark gives it the deployment's key, so a routed chat returns
  200; the same router without that variable (as spark wrote it before) gets 401 from the workers;
* it checks no key of its own: a chat without a key is served too (docs/targets.md, "Authentication");
* it waits for the workers' /health up to `--worker-startup-timeout-secs`, then exits 1: with a
  budget shorter than the servers' start it gives up, and `serve.sh` stops the node with it.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

from engine_helpers import TINY_LLAMA, base_env, free_port, http_status, spark_build, start, wait_healthy

from spark_dsl.plan.managed import ENGINE_READY_DEFAULT_SECONDS

KEY = "pd-router-test-key"
NAME = "tiny"
LOCAL = "127.0.0.1"


def spec(model: Path, port: int, budget: str) -> str:
    return (
        TINY_LLAMA
        + f"""

deployment tiny-pd {{
  model         = tiny-llama
  accelerator   = cpu
  max_model_len = 1024
  runtime {{
    model_path  = "{model}"
    host_memory = 1GiB
  }}
  serve {{
    port              = {port}
    served_model_name = "{NAME}"
    # CUDA graphs have no CPU counterpart; eager start-up skips torch.compile (about 40 s of 80).
    extra_args        = ["--enforce-eager"]
    api_key           = env("SPARK_TEST_KEY")
    ready_timeout     = {budget}   # spark: ignore[SPK545]
  }}
  disaggregation {{   # spark: ignore[SPK238, SPK548]
    prefill {{
      nodes = 1
    }}
    decode {{
      nodes = 1
    }}
  }}
  target shell {{}}
}}
"""
    )


def chat(url: str, key: str | None) -> int:
    body = {"model": NAME, "messages": [{"role": "user", "content": "hello there"}], "max_tokens": 4}
    return http_status(f"{url}/v1/chat/completions", key, json.dumps(body).encode(), timeout=120)


def router_argv(folder: Path) -> list[str]:
    """The router's launch as the plan decides it, with both pools on this machine."""
    proc = subprocess.run(
        [sys.executable, "-m", "spark_dsl", "plan", str(folder / "deploy.spark"), "--format", "json"],
        capture_output=True,
        text=True,
        cwd=folder,
    )
    assert proc.returncode == 0, proc.stderr
    (deployment,) = json.loads(proc.stdout)["deployments"]
    (router,) = [launch for launch in deployment["launches"] if launch["role"] == "router"]
    fill = {"${SPARK_PREFILL_ADDRESS}": LOCAL, "${SPARK_DECODE_ADDRESS}": LOCAL}
    argv = []
    for word in router["argv"]:
        for name, value in fill.items():
            word = word.replace(name, value)
        argv.append(word)
    return argv


def node_env(cpu_bin: Path, rank: int) -> dict[str, str]:
    return base_env(cpu_bin, SPARK_TEST_KEY=KEY, SPARK_NODE_ADDRESS=LOCAL, SPARK_NODE_RANK=str(rank))


def test_a_routed_chat_is_served_with_the_deployments_key(tmp_path, cpu_bin, tiny_model, processes) -> None:
    port = free_port()
    script = spark_build(tmp_path, spec(tiny_model, port, "10m")) / "tiny-pd" / "serve.sh"
    decode = start(processes, ["bash", str(script), "1"], node_env(cpu_bin, 1), tmp_path / "decode.log", tmp_path)
    node0 = start(
        processes, ["bash", str(script), "0", LOCAL, LOCAL], node_env(cpu_bin, 0), tmp_path / "node0.log", tmp_path
    )
    router = f"http://{LOCAL}:{port}"
    # The router listens once both pools answer /health.
    wait_healthy(f"{router}/health", node0, 600)
    assert decode.poll() is None, (tmp_path / "decode.log").read_text()[-3000:]

    # The first request makes the decode server fetch the prefill's NIXL metadata, whose reply it
    # waits 5 s for (base_worker.py, `_nixl_handshake`): on two cores shared by both servers that
    # reply can come late and fail that one request with 500. The next request retries it.
    statuses = [chat(router, KEY) for _ in range(3)]
    assert 200 in statuses, (tmp_path / "decode.log").read_text()[-4000:]
    assert statuses[-1] == 200, statuses
    assert chat(router, None) == 200  # the router checks no key of its own
    assert http_status(f"{router}/v1/models") == 401  # forwarded with the client's own header
    assert http_status(f"{router}/v1/models", KEY) == 200
    for pool in ("8100", "8200"):
        server = f"http://{LOCAL}:{pool}"
        assert http_status(f"{server}/v1/models") == 401
        assert http_status(f"{server}/v1/models", KEY) == 200
        # Refused before any generation; a pool's own generation needs the router's KV hand-off.
        assert chat(server, None) == 401
        assert chat(server, "wrong") == 401

    # The same router without OPENAI_API_KEY, as spark launched it before: the workers refuse it.
    bare_port = free_port()
    argv = router_argv(tmp_path)
    argv[argv.index("--port") + 1] = str(bare_port)
    argv += ["--prometheus-port", str(free_port())]  # the first router holds the default, 29000
    bare = start(processes, argv, base_env(cpu_bin), tmp_path / "bare-router.log", tmp_path)
    wait_healthy(f"http://{LOCAL}:{bare_port}/health", bare, 120)
    assert chat(f"http://{LOCAL}:{bare_port}", KEY) == 401


def test_a_router_whose_workers_outlast_the_budget_gives_up_and_stops_the_node(
    tmp_path, cpu_bin, tiny_model, processes
) -> None:
    # Only node rank 0: the decode pool never comes, the prefill server takes longer than 15 s.
    script = spark_build(tmp_path, spec(tiny_model, free_port(), "15s")) / "tiny-pd" / "serve.sh"
    assert "--worker-startup-timeout-secs 15" in script.read_text()
    started = time.monotonic()
    node0 = start(
        processes, ["bash", str(script), "0", LOCAL, LOCAL], node_env(cpu_bin, 0), tmp_path / "node0.log", tmp_path
    )
    code = node0.wait(timeout=300)
    log = (tmp_path / "node0.log").read_text(errors="replace")
    assert code != 0, log[-3000:]
    assert "Timeout 15s waiting for hosts" in log, log[-3000:]
    assert "serve.sh: the router exited (1); stopping this node" in log
    # The router checks its clock every 30 s (--worker-startup-check-interval), and serve.sh then
    # waits for the prefill server's own shutdown (its drain): the node stops well inside vLLM's
    # 600 s engine-ready clock, so that clock did not end it.
    assert time.monotonic() - started < ENGINE_READY_DEFAULT_SECONDS / 2
