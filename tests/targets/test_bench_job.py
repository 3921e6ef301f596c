"""`target bench {}`: the bench.sh the real `spark build` writes passes ShellCheck and, run with a stub
`vllm` that does what `vllm bench serve` does where it matters, reaches the stub OpenAI server on
loopback with the workload's shape: the served model, the key from the deployment's secret variable,
`max_tokens` the output length, as many requests as --num-prompts and exactly the concurrency.

The stub parses the options bench.sh passes with argparse (unknown ones fail it); that vLLM's own
parser takes the same argv is the vllm_parser tier's job (tests/vllm_parser/test_bench_launch.py).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import validators as v
import yaml
from target_helpers import kubernetes_expand

SPEC = """\
deployment muse-bench {
  model       = muse-spark-open
  accelerator = b200

  workload {
    concurrency   = 4
    input_tokens  = 1K
    output_tokens = 32
  }
  serve {
    served_model_name = "muse spark's $(bench)"
    api_key           = secret("vllm-api-key")
  }

  target bench {}
}
"""
MODEL = "muse spark's $(bench)"
KEY = "bench-key 'quoted' $HOME"

# `vllm bench serve` where it matters: its options (vllm/benchmarks/serve.py, 0.33.0), the key from
# OPENAI_API_KEY as `Authorization: Bearer`, streamed chat completions, at most --max-concurrency in
# flight, --num-prompts in all; the argv is written to $STUB_ARGV for the test to read.
VLLM_STUB = """\
import argparse, json, os, sys, urllib.request
from concurrent.futures import ThreadPoolExecutor

with open(os.environ["STUB_ARGV"], "w") as f:
    json.dump(sys.argv[1:], f)
assert sys.argv[1:3] == ["bench", "serve"], sys.argv
p = argparse.ArgumentParser(prog="vllm bench serve")
for name in ("--backend", "--endpoint", "--base-url", "--model", "--tokenizer", "--dataset-name", "--result-dir"):
    p.add_argument(name, required=True)
for name in ("--random-input-len", "--random-output-len", "--max-concurrency", "--num-prompts"):
    p.add_argument(name, type=int, required=True)
p.add_argument("--ignore-eos", action="store_true")
p.add_argument("--save-result", action="store_true")
# vllm/benchmarks/serve.py (0.33.0), compute_result_filename: the name given, else one from the time.
p.add_argument("--result-filename", default="openai-chat-infqps-20260101-000000.json")
# vllm/benchmarks/serve.py (0.33.0): an int, default 0 (no ready check).
p.add_argument("--ready-check-timeout-sec", type=int, default=0)
a = p.parse_args(sys.argv[3:])
assert a.backend == "openai-chat" and a.dataset_name == "random"

def one(i):
    body = {"model": a.model, "messages": [{"role": "user", "content": "x " * a.random_input_len}],
            "max_tokens": a.random_output_len, "ignore_eos": a.ignore_eos, "stream": True,
            "stream_options": {"include_usage": True}}
    req = urllib.request.Request(a.base_url + a.endpoint, data=json.dumps(body).encode(), method="POST")
    req.add_header("Content-Type", "application/json")
    req.add_header("Authorization", "Bearer " + os.environ["OPENAI_API_KEY"])
    with urllib.request.urlopen(req, timeout=60) as resp:
        return resp.status, resp.read().endswith(b"data: [DONE]\\n\\n")

with ThreadPoolExecutor(a.max_concurrency) as pool:
    results = list(pool.map(one, range(a.num_prompts)))
ok = sum(1 for status, done in results if status == 200 and done)
os.makedirs(a.result_dir, exist_ok=True)
if a.save_result:  # serve.py:2457, json.dump of the result: one line
    with open(os.path.join(a.result_dir, a.result_filename), "w") as f:
        json.dump({"completed": ok, "max_concurrency": a.max_concurrency}, f)
print(f"Successful requests: {ok}")
sys.exit(0 if ok == a.num_prompts else 1)
"""


def build(tmp_path: Path, text: str = SPEC) -> Path:
    spec = tmp_path / "bench.spark"
    spec.write_text(text)
    out = tmp_path / "out"
    argv = [sys.executable, "-m", "spark_dsl", "build", str(spec), "-o", str(out), "--root", str(tmp_path)]
    proc = subprocess.run(argv, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return out / "muse-bench" / "bench.sh"


def stub_path(tmp_path: Path) -> str:
    folder = tmp_path / "bin"
    folder.mkdir()
    stub = folder / "vllm"
    stub.write_text(f"#!{sys.executable}\n{VLLM_STUB}")
    stub.chmod(0o755)
    return f"{folder}{os.pathsep}{os.environ['PATH']}"


def run(script: Path, tmp_path: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    base = {k: val for k, val in os.environ.items() if k not in ("VLLM_API_KEY", "OPENAI_API_KEY")}
    extra = {"PATH": stub_path(tmp_path), "STUB_ARGV": str(tmp_path / "argv.json"), **env}
    return subprocess.run(
        ["bash", str(script), *args], capture_output=True, text=True, env={**base, **extra}, cwd=tmp_path
    )


def test_bench_sh_and_bench_sbatch_pass_shellcheck(tmp_path: Path) -> None:
    # A `$` in a single-quoted value is only a style note (SC2016); the runs below prove it literal.
    text = SPEC.replace(MODEL, "muse-spark").replace(
        "  target bench {}\n", "  target bench {}\n  target bench-slurm {}\n"
    )
    script = build(tmp_path, text)
    v.shellcheck(script).check()
    v.shellcheck(script.parent / "bench.sbatch").check()


def test_the_benchmark_reaches_the_workloads_concurrency_with_the_key(tmp_path: Path, openai_stub) -> None:
    script = build(tmp_path)
    server = openai_stub(MODEL, api_key=KEY, hold_until_in_flight=4)
    proc = run(script, tmp_path, "127.0.0.1", VLLM_API_KEY=KEY, SPARK_API_PORT=str(server.port))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "Successful requests: 40" in proc.stdout
    records = server.records
    assert len(records) == 40  # --num-prompts: ten rounds of the concurrency
    assert {(r.method, r.path, r.status) for r in records} == {("POST", "/v1/chat/completions", 200)}
    assert {r.model for r in records} == {MODEL}
    assert all(r.auth_ok for r in records)
    assert {r.max_tokens for r in records} == {32}
    assert {r.stream for r in records} == {True}
    assert server.max_in_flight == 4
    argv = json.loads((tmp_path / "argv.json").read_text())
    assert argv[argv.index("--random-input-len") + 1] == "1024"
    assert argv[argv.index("--base-url") + 1] == f"http://127.0.0.1:{server.port}"
    assert argv[argv.index("--tokenizer") + 1] == "meta-models/Muse-Spark-Open-816B-A42B-NVFP4"
    assert argv[argv.index("--result-dir") + 1] == "bench-results"


def test_the_tokenizer_and_results_folder_are_set_at_run_time(tmp_path: Path, openai_stub) -> None:
    script = build(tmp_path)
    server = openai_stub(MODEL, api_key=KEY)
    proc = run(
        script,
        tmp_path,
        VLLM_API_KEY=KEY,
        SPARK_API_ADDRESS="127.0.0.1",
        SPARK_API_PORT=str(server.port),
        SPARK_BENCH_TOKENIZER="/models/tok $x",
        SPARK_BENCH_RESULTS=str(tmp_path / "res ults"),
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    argv = json.loads((tmp_path / "argv.json").read_text())
    assert argv[argv.index("--tokenizer") + 1] == "/models/tok $x"
    assert (tmp_path / "res ults").is_dir()


def test_without_a_workload_it_sends_one_request_at_a_time(tmp_path: Path, openai_stub) -> None:
    text = SPEC.replace("    concurrency   = 4\n", "").replace("    output_tokens = 32\n", "")
    script = build(tmp_path, text)
    server = openai_stub(MODEL, api_key=KEY)
    proc = run(script, tmp_path, "127.0.0.1", VLLM_API_KEY=KEY, SPARK_API_PORT=str(server.port))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert len(server.records) == 10
    assert server.max_in_flight == 1
    assert {r.max_tokens for r in server.records} == {128}  # vllm bench serve's default output length


@pytest.mark.parametrize(
    ("args", "env", "message"),
    [
        ((), {"VLLM_API_KEY": KEY}, "pass the address of the API server"),
        (("127.0.0.1",), {}, "set VLLM_API_KEY (secret vllm-api-key), the API key"),
    ],
)
def test_a_missing_address_or_key_is_a_clear_error(
    tmp_path: Path, args: tuple[str, ...], env: dict[str, str], message: str
) -> None:
    proc = run(build(tmp_path), tmp_path, *args, **env)
    assert proc.returncode != 0
    assert message in proc.stderr
    assert not (tmp_path / "argv.json").exists()


# ---- the Kubernetes Job -------------------------------------------------------------------------


def test_the_bench_job_validates_strictly_and_runs_bench_shs_argv(tmp_path: Path) -> None:
    text = SPEC.replace(
        "  target bench {}\n",
        '  runtime { hf_token = secret("hf-token") }\n'
        '  target bench {}\n  target kubernetes { namespace = "inference" }\n  target bench-job {}\n',
    )
    script = build(tmp_path, text)
    path = script.parent / "bench-job.yaml"
    v.kubernetes_validate(path).check()
    (job,) = yaml.safe_load_all(path.read_text())
    (container,) = job["spec"]["template"]["spec"]["containers"]
    assert container["image"].startswith("vllm/vllm-openai:")
    env = {e["name"]: e["valueFrom"]["secretKeyRef"] for e in container["env"]}
    assert env == {
        "OPENAI_API_KEY": {"name": "vllm-api-key", "key": "value"},
        "HF_TOKEN": {"name": "hf-token", "key": "value"},
    }
    command = [kubernetes_expand(arg, {}) for arg in container["command"]]
    argv = [kubernetes_expand(arg, {}) for arg in container["args"]]
    # `sh -c SCRIPT bench-job ARG...`: the script runs `vllm "$@"`, the args are bench.sh's argv.
    assert command[:2] == ["sh", "-c"] and command[3:] == ["bench-job"]
    # bench.sh's argv, with the cluster's address, the model's tokenizer and a named file in /tmp.
    proc = run(script, tmp_path, "muse-bench.inference.svc", VLLM_API_KEY=KEY, SPARK_API_PORT="8000")
    local = json.loads((tmp_path / "argv.json").read_text())
    assert proc.returncode != 0  # nothing listens there; the argv was recorded first
    results = local.index("--result-dir") + 1
    expected = [*local[:results], "/tmp/bench-results", *local[results + 1 :], "--result-filename", "result.json"]
    assert argv == expected
    assert argv[argv.index("--model") + 1] == MODEL  # `$` arrives as written: the kubelet's `$$`


def test_the_bench_jobs_result_is_in_its_log(tmp_path: Path, openai_stub) -> None:
    # The pod's /tmp goes with the pod: the Job prints the result file to its log, which
    # `kubectl logs job/NAME-bench` reads while the Job exists. Run as the kubelet runs it (the
    # results folder moved from /tmp/bench-results to this test's own).
    text = SPEC.replace(
        "  target bench {}\n", '  target kubernetes { namespace = "inference" }\n  target bench-job {}\n'
    )
    path = build(tmp_path, text).parent / "bench-job.yaml"
    assert "        - |\n          set -eu\n" in path.read_text()  # the script as a literal block
    (job,) = yaml.safe_load_all(path.read_text())
    (container,) = job["spec"]["template"]["spec"]["containers"]
    results = str(tmp_path / "results")
    argv = [
        kubernetes_expand(arg, {}).replace("/tmp/bench-results", results)
        for arg in [*container["command"], *container["args"]]
    ]
    server = openai_stub(MODEL, api_key=KEY)
    argv[argv.index("--base-url") + 1] = f"http://127.0.0.1:{server.port}"
    base = {k: val for k, val in os.environ.items() if k not in ("VLLM_API_KEY", "OPENAI_API_KEY")}
    env = {**base, "PATH": stub_path(tmp_path), "STUB_ARGV": str(tmp_path / "argv.json"), "OPENAI_API_KEY": KEY}
    proc = subprocess.run(argv, capture_output=True, text=True, env=env, cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    log = proc.stdout.splitlines()
    assert "Successful requests: 40" in log
    marker = log.index("spark-bench-result:")
    assert json.loads(log[marker + 1]) == {"completed": 40, "max_concurrency": 4}


# ---- the Slurm batch job ------------------------------------------------------------------------


@pytest.mark.slurm
def test_bench_sbatch_runs_on_slurm_against_the_endpoint(tmp_path: Path, openai_stub, spec_cluster) -> None:
    text = SPEC.replace("  target bench {}\n", '  target slurm { partition = "gpu" }\n  target bench-slurm {}\n')
    script = build(tmp_path, text).parent / "bench.sbatch"
    assert spec_cluster.test_only(str(script)).ok
    server = openai_stub(MODEL, api_key=KEY, hold_until_in_flight=4)
    env = {
        **{k: val for k, val in os.environ.items() if k not in ("VLLM_API_KEY", "OPENAI_API_KEY")},
        "PATH": stub_path(tmp_path),
        "STUB_ARGV": str(tmp_path / "argv.json"),
        "VLLM_API_KEY": KEY,
        "SPARK_API_PORT": str(server.port),
        # A batch script runs on node1, this host: the endpoint is on loopback.
        "SPARK_API_ADDRESS": "127.0.0.1",
    }
    job = spec_cluster.run_job(script, env=env, timeout=120, cwd=tmp_path)
    output = job.stdout_path.read_text() if job.stdout_path else ""
    assert job.ok, (job, output)
    assert "Successful requests: 40" in output
    assert len(server.records) == 40
    assert {r.model for r in server.records} == {MODEL}
    assert all(r.auth_ok for r in server.records)
    assert server.max_in_flight == 4
