"""Helpers of the real-engine tier: ports, builds, HTTP probes and the processes a test starts."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Mapping
from pathlib import Path

import pytest

# The model make_tiny_model.py makes, declared as `spark model import` reads its config.json; each
# spec serves the local copy with `runtime { model_path }`.
TINY_LLAMA = """\
model tiny-llama {
  layers      = 2
  hidden_size = 128
  query_heads = 4
  kv_heads    = 2
  head_dim    = 32
  max_context = 4K
  checkpoint bf16 {
    repository = "example-org/tiny-llama"
    size       = 1_117_600B
  }
}
"""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def spark_build(folder: Path, text: str, *options: str) -> Path:
    """`spark build` of one spec in a project folder of its own; the output folder."""
    (folder / "spark.toml").touch()
    spec = folder / "deploy.spark"
    spec.write_text(text, encoding="utf-8")
    out = folder / "out"
    argv = [sys.executable, "-m", "spark_dsl", "build", str(spec), "-o", str(out), *options]
    proc = subprocess.run(argv, capture_output=True, text=True, cwd=folder)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return out


def http_status(url: str, key: str | None = None, body: bytes | None = None, timeout: float = 60) -> int:
    """The HTTP status of a GET (or a JSON POST with `body`), with a bearer key when given."""
    request = urllib.request.Request(url, data=body, method="POST" if body is not None else "GET")
    if key is not None:
        request.add_header("Authorization", f"Bearer {key}")
    if body is not None:
        request.add_header("Content-Type", "application/json")
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            response.read()
            return int(response.status)
    except urllib.error.HTTPError as err:
        return int(err.code)


def wait_healthy(url: str, process: subprocess.Popen[bytes], seconds: float) -> None:
    """Poll `url` until it answers 200; fail early when `process` ends first."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if process.poll() is not None:
            pytest.fail(f"the process ended ({process.returncode}) before {url} answered")
        try:
            if http_status(url, timeout=2) == 200:
                return
        except OSError:
            pass
        time.sleep(0.5)
    pytest.fail(f"{url} did not answer within {seconds}s")


def start(
    processes: list[subprocess.Popen[bytes]], argv: list[str], env: Mapping[str, str], log: Path, cwd: Path
) -> subprocess.Popen[bytes]:
    handle = log.open("wb")
    proc = subprocess.Popen(
        argv, env=dict(env), stdout=handle, stderr=subprocess.STDOUT, cwd=cwd, start_new_session=True
    )
    processes.append(proc)
    return proc


def base_env(bin_first: Path | None = None, **extra: str) -> dict[str, str]:
    """This environment without vLLM's, spark's and the keys' variables, a bin folder first."""
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("VLLM_", "SPARK_")) and k not in ("OPENAI_API_KEY", "HF_TOKEN")
    }
    if bin_first is not None:
        env["PATH"] = f"{bin_first}{os.pathsep}{env.get('PATH', '')}"
    env.update({"HF_HUB_OFFLINE": "1", "VLLM_NO_USAGE_STATS": "1", "DO_NOT_TRACK": "1", **extra})
    return env
