"""The argv bench.sh and bench-job.yaml hand to `vllm bench serve`, parsed as vLLM 0.33.0 parses it.

The parser is built the way `vllm` itself builds it for `vllm bench serve`
(vllm/entrypoints/cli/main.py `main`, from the wheel in the parser venv): a `FlexibleArgumentParser`
with the CLI's subcommands, the `bench` subcommand's `subparser_init`
(vllm/entrypoints/cli/benchmark/main.py), which, when the first positional word is `bench`, adds a
subparser per benchmark and hands it to that benchmark's `add_cli_args`; for `serve` that is
`BenchmarkServingSubcommand.add_cli_args` (vllm/entrypoints/cli/benchmark/serve.py), i.e.
`vllm.benchmarks.serve.add_cli_args`. As `main` does for `bench`, the probe sets the CPU platform
when none is detected (the other benchmarks' arguments read the device config while being added),
and it checks the parsed namespace dispatches to `BenchmarkServingSubcommand.cmd`.

Importing the benchmarks pulls `einops` in through `vllm.benchmarks.datasets` -> `vllm.lora`; the
`--no-deps` parser venv lacks it and nothing at parse time uses it, so the probe puts an empty
module in its place rather than installing anything.

Three argvs are parsed: the one a freshly built bench.sh execs, and the committed
targets/muse-b200-jobs/bench.sh's exec line and bench-job.yaml's `command` + `args`.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

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
import json, sys, types
sys.modules.setdefault("einops", types.ModuleType("einops"))
argvs = json.loads(sys.argv[1])
from vllm import platforms
if platforms.current_platform.is_unspecified():
    from vllm.platforms.cpu import CpuPlatform
    platforms.current_platform = CpuPlatform()
from vllm.entrypoints.cli.benchmark.main import BenchmarkSubcommand
from vllm.entrypoints.cli.benchmark.serve import BenchmarkServingSubcommand
from vllm.utils.argparse_utils import FlexibleArgumentParser
keys = ("backend", "endpoint", "base_url", "model", "tokenizer", "dataset_name", "random_input_len",
        "random_output_len", "ignore_eos", "max_concurrency", "num_prompts", "save_result", "result_dir")
out = []
for argv in argvs:
    # subparser_init reads sys.argv to decide whether to add the benchmarks (the first positional).
    sys.argv = ["vllm", *argv]
    parser = FlexibleArgumentParser(description="vLLM CLI")
    BenchmarkSubcommand().subparser_init(parser.add_subparsers(required=False, dest="subparser"))
    args = parser.parse_args(argv)
    assert args.dispatch_function is BenchmarkServingSubcommand.cmd, args
    out.append({k: getattr(args, k) for k in ("subparser", "bench_type", *keys)})
print(json.dumps(out))
"""
REPO = Path(__file__).resolve().parents[2]
JOBS = REPO / "targets" / "muse-b200-jobs"


def parse(vllm_python: Path, argvs: list[list[str]]) -> subprocess.CompletedProcess[str]:
    """vLLM's own `vllm bench serve` parser over each argv (the words after `vllm`)."""
    return subprocess.run(
        [str(vllm_python), "-c", PROBE, json.dumps(argvs)], capture_output=True, text=True, timeout=600
    )


def recorded_argv(script: Path, tmp_path: Path) -> list[str]:
    """The argv a bench script execs, caught by a `vllm` on PATH that records it."""
    folder = tmp_path / "bin"
    folder.mkdir(exist_ok=True)
    stub = folder / "vllm"
    stub.write_text(f"#!{sys.executable}\nimport json, sys\nprint(json.dumps(sys.argv[1:]))\n")
    stub.chmod(0o755)
    env = {
        **os.environ,
        "PATH": f"{folder}{os.pathsep}{os.environ['PATH']}",
        "VLLM_KEY": "k",
        "VLLM_API_KEY": "k",
    }
    ran = subprocess.run(["bash", str(script), "head-0.example"], capture_output=True, text=True, env=env)
    assert ran.returncode == 0, ran.stderr
    return list(json.loads(ran.stdout))


def bench_argv(tmp_path: Path) -> list[str]:
    """The argv a bench.sh built from SPEC execs."""
    spec = tmp_path / "bench.spark"
    spec.write_text(SPEC)
    out = tmp_path / "out"
    argv = [sys.executable, "-m", "spark_dsl", "build", str(spec), "-o", str(out), "--root", str(tmp_path)]
    built = subprocess.run(argv, capture_output=True, text=True)
    assert built.returncode == 0, built.stdout + built.stderr
    return recorded_argv(out / "muse-bench" / "bench.sh", tmp_path)


def job_argv() -> list[str]:
    """The committed bench-job.yaml's container argv, less the `vllm` of its command: the command
    is a short `sh -c` script that runs `vllm "$@"` on the args, then prints the result file to
    the Job's log."""
    (job,) = yaml.safe_load_all((JOBS / "bench-job.yaml").read_text())
    (container,) = job["spec"]["template"]["spec"]["containers"]
    assert container["command"][:2] == ["sh", "-c"]
    assert 'vllm "$$@"' in container["command"][2].splitlines()  # `$$`: the kubelet's literal `$`
    return [str(word) for word in container["args"]]


COMMITTED = {
    "backend": "openai-chat",
    "endpoint": "/v1/chat/completions",
    "model": "muse-spark",
    "tokenizer": "meta-models/Muse-Spark-Open-816B-A42B-NVFP4",
    "dataset_name": "random",
    "random_input_len": 2048,
    "random_output_len": 512,
    "ignore_eos": True,
    "max_concurrency": 64,
    "num_prompts": 640,
    "save_result": True,
}


@pytest.mark.vllm_parser
def test_vllms_bench_parser_takes_every_bench_argv(tmp_path: Path, vllm_python: Path) -> None:
    built = bench_argv(tmp_path)
    script = recorded_argv(JOBS / "bench.sh", tmp_path)
    job = job_argv()
    for argv in (built, script, job):
        assert argv[:2] == ["bench", "serve"]
    proc = parse(vllm_python, [built, script, job])
    assert proc.returncode == 0, proc.stderr[-3000:]
    parsed_built, parsed_script, parsed_job = json.loads(proc.stdout.strip().splitlines()[-1])
    assert parsed_built == {
        "subparser": "bench",
        "bench_type": "serve",
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
    # specs/nvidia/b200-smoke-bench.spark: concurrency 64, 2K in, 512 out, served as muse-spark.
    common = {"subparser": "bench", "bench_type": "serve", **COMMITTED}
    assert parsed_script == {**common, "base_url": "http://head-0.example:8000", "result_dir": "bench-results"}
    assert parsed_job == {
        **common,
        "base_url": "http://muse-b200-jobs.inference.svc:8000",
        "result_dir": "/tmp/bench-results",
    }


@pytest.mark.vllm_parser
def test_the_probe_fails_on_an_argument_vllm_does_not_know(vllm_python: Path) -> None:
    # The probe is a real parser: an option bench serve lacks (an --api-key, say) is refused, and so
    # is a benchmark `vllm bench` does not have.
    proc = parse(vllm_python, [["bench", "serve", "--model", "m", "--api-key", "k"]])
    assert proc.returncode == 2
    assert "unrecognized arguments: --api-key k" in proc.stderr
    proc = parse(vllm_python, [["bench", "serving", "--model", "m"]])
    assert proc.returncode == 2
    assert "invalid choice: 'serving'" in proc.stderr
