"""The argv bench.sh hands to `vllm bench serve`, parsed by vLLM 0.33.0's own bench parser.

The parser is `vllm.benchmarks.serve.add_cli_args` (the `vllm bench serve` subcommand adds exactly
it: vllm/entrypoints/cli/benchmark/serve.py), from the wheel in the parser venv. Importing it pulls
`einops` in through `vllm.benchmarks.datasets` -> `vllm.lora`; the `--no-deps` parser venv lacks
it and nothing at parse time uses it, so the probe puts an empty module in its place rather than
installing anything.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

SPEC = """\
deployment muse-bench {
  model       = muse-spark-open
  accelerator = b200
  modalities  = [text, image]

  workload {
    concurrency   = 32
    input_tokens  = 2K
    output_tokens = 512
  }
  serve {
    served_model_name = "muse-spark-vision"
    api_key           = env("VLLM_KEY")
  }

  target bench {}
}
"""

PROBE = """\
import argparse, json, sys, types
sys.modules.setdefault("einops", types.ModuleType("einops"))
from vllm.benchmarks.serve import add_cli_args
parser = argparse.ArgumentParser(prog="vllm bench serve")
add_cli_args(parser)
args = parser.parse_args(json.loads(sys.argv[1]))
keys = ("backend", "endpoint", "base_url", "model", "tokenizer", "dataset_name", "random_input_len",
        "random_output_len", "ignore_eos", "max_concurrency", "num_prompts", "save_result", "result_dir")
print(json.dumps({k: getattr(args, k) for k in keys}))
"""


def bench_argv(tmp_path: Path) -> list[str]:
    """The argv the built bench.sh execs, caught by a `vllm` that records it."""
    spec = tmp_path / "bench.spark"
    spec.write_text(SPEC)
    out = tmp_path / "out"
    argv = [sys.executable, "-m", "spark_dsl", "build", str(spec), "-o", str(out), "--root", str(tmp_path)]
    built = subprocess.run(argv, capture_output=True, text=True)
    assert built.returncode == 0, built.stdout + built.stderr
    folder = tmp_path / "bin"
    folder.mkdir()
    stub = folder / "vllm"
    stub.write_text(f"#!{sys.executable}\nimport json, sys\nprint(json.dumps(sys.argv[1:]))\n")
    stub.chmod(0o755)
    env = {**os.environ, "PATH": f"{folder}{os.pathsep}{os.environ['PATH']}", "VLLM_KEY": "k"}
    ran = subprocess.run(
        ["bash", str(out / "muse-bench" / "bench.sh"), "head-0.example"], capture_output=True, text=True, env=env
    )
    assert ran.returncode == 0, ran.stderr
    return list(json.loads(ran.stdout))


@pytest.mark.vllm_parser
def test_vllms_bench_parser_takes_bench_sh_argv(tmp_path: Path, vllm_python: Path) -> None:
    argv = bench_argv(tmp_path)
    assert argv[:2] == ["bench", "serve"]
    proc = subprocess.run(
        [str(vllm_python), "-c", PROBE, json.dumps(argv[2:])], capture_output=True, text=True, timeout=600
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    parsed = json.loads(proc.stdout.strip().splitlines()[-1])
    assert parsed == {
        "backend": "openai-chat",
        "endpoint": "/v1/chat/completions",
        "base_url": "http://head-0.example:8000",
        "model": "muse-spark-vision",
        "tokenizer": "meta-models/Muse-Spark-Open-816B-A42B-NVFP4",
        "dataset_name": "random",
        "random_input_len": 2048,
        "random_output_len": 512,
        "ignore_eos": True,
        "max_concurrency": 32,
        "num_prompts": 320,
        "save_result": True,
        "result_dir": "bench-results",
    }


@pytest.mark.vllm_parser
def test_the_probe_fails_on_an_argument_vllm_does_not_know(vllm_python: Path) -> None:
    # The probe is a real parser: an option bench serve lacks (an --api-key, say) is refused.
    proc = subprocess.run(
        [str(vllm_python), "-c", PROBE, json.dumps(["--model", "m", "--api-key", "k"])],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 2
    assert "unrecognized arguments: --api-key k" in proc.stderr
