"""A generated serve.sh of an NVIDIA launch (`frontend = rust`) run through vLLM 0.33.0's own code
into its real Rust frontend (`vllm-rs`, from the pinned wheel), with an engine core that loads
nothing (rust_frontend_vllm.py says exactly what is vLLM's and what is not).

Two facts that no stub could establish, both on the real binary:

* the API key: spark hands it over as `VLLM_API_KEY` in the environment. `--args-json` bypasses
  clap's `env =` declarations (the comment in vllm/v1/utils.py) and the JSON holds `api_key` only
  for `--api-key` on the command line, so the key might never reach the server. It does: the
  frontend inherits the environment and enforces the key (401 without it, 200 with it);
* the ready budget: `VLLM_ENGINE_READY_TIMEOUT_S`, which spark sets from the ready budget, is the
  frontend's clock for the engines to load (its default is 600 s, vllm/envs.py). An engine slower
  than the budget ends the server at the budget; one within it comes up.
"""

from __future__ import annotations

import time
from pathlib import Path

from engine_helpers import TINY_LLAMA, base_env, free_port, http_status, spark_build, start, wait_healthy

from spark_dsl.vllm_verify import default_python

HARNESS = Path(__file__).resolve().parent / "rust_frontend_vllm.py"
KEY = "rust-frontend-test-key"


def spec(model: Path, port: int, budget: str) -> str:
    return (
        TINY_LLAMA
        + f"""
deployment tiny-rust {{
  model         = tiny-llama
  accelerator   = b200
  gpus          = 1
  frontend      = rust
  max_model_len = 1024
  runtime {{
    model_path = "{model}"
  }}
  serve {{
    host          = "127.0.0.1"
    port          = {port}
    api_key       = env("SPARK_TEST_KEY")
    ready_timeout = {budget}   # spark: ignore[SPK545]
  }}
  target shell {{}}
}}
"""
    )


def vllm_shim(folder: Path) -> Path:
    """A bin folder whose `vllm` is the harness in the parser venv."""
    folder.mkdir()
    shim = folder / "vllm"
    shim.write_text(f'#!/bin/sh\nexec "{default_python()}" "{HARNESS}" "$@"\n')
    shim.chmod(0o755)
    return folder


def run_serve(tmp_path: Path, tiny_model: Path, processes: list, budget: str, load_seconds: int):
    port = free_port()
    out = spark_build(tmp_path, spec(tiny_model, port, budget))
    script = out / "tiny-rust" / "serve.sh"
    assert "export VLLM_USE_RUST_FRONTEND=1" in script.read_text()
    env = base_env(vllm_shim(tmp_path / "bin"), SPARK_TEST_KEY=KEY, SPARK_FAKE_LOAD_SECONDS=str(load_seconds))
    log = tmp_path / "serve.log"
    proc = start(processes, ["bash", str(script)], env, log, tmp_path)
    return proc, port, log


def test_the_key_in_the_environment_is_enforced_by_the_rust_frontend(tmp_path, tiny_model, processes) -> None:
    proc, port, log = run_serve(tmp_path, tiny_model, processes, "2m", load_seconds=1)
    wait_healthy(f"http://127.0.0.1:{port}/health", proc, 120)
    models = f"http://127.0.0.1:{port}/v1/models"
    assert http_status(models) == 401, log.read_text()
    assert http_status(models, "not-the-key") == 401
    assert http_status(models, KEY) == 200


def test_an_engine_slower_than_the_ready_budget_ends_the_server_at_the_budget(tmp_path, tiny_model, processes) -> None:
    proc, _, log = run_serve(tmp_path, tiny_model, processes, "10s", load_seconds=600)
    started = time.monotonic()
    assert proc.wait(timeout=180) != 0
    text = log.read_text(errors="replace")
    assert "engine input registration timed out after 10s" in text, text[-3000:]
    # The interpreter's start-up and vLLM's imports come first (13 s here); not vLLM's 600 s.
    assert time.monotonic() - started < 120


def test_an_engine_within_the_ready_budget_comes_up(tmp_path, tiny_model, processes) -> None:
    proc, port, log = run_serve(tmp_path, tiny_model, processes, "90s", load_seconds=20)
    wait_healthy(f"http://127.0.0.1:{port}/health", proc, 150)
    assert proc.poll() is None, log.read_text()
