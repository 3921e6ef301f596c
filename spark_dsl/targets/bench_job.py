"""The benchmark as a Kubernetes Job, `bench-job.yaml`: `vllm bench serve` in the vLLM image.

The argv is bench.sh's (bench.py `bench_argv`) with the run-time values fixed for the cluster: the
Service's address, the model's repository as tokenizer (downloaded with the deployment's
Hugging Face token when it has one) and a result file in the pod's /tmp. The image's entrypoint is
`vllm serve`, so the Job sets `command` to a short `sh -c` script, which runs `vllm` with the argv as
`args` and then prints the result file to the Job's log: the pod's /tmp goes with the pod, the log
stays readable with `kubectl logs job/NAME-bench` while the Job exists (client_job.TTL_SECONDS). The
key arrives as OPENAI_API_KEY from the deployment's Secret, never in the argv.
"""

from __future__ import annotations

from typing import Any

from spark_dsl.plan.launches import api_port, model_id
from spark_dsl.targets import bench, client_job, yaml_text
from spark_dsl.targets.common import Job
from spark_dsl.targets.kubernetes import escape
from spark_dsl.targets.registry import Target
from spark_dsl.targets.yaml_text import BlockText
from spark_dsl.values import SecretRef

FILE_NAME = "bench-job.yaml"
RESULTS = "/tmp/bench-results"
# vllm bench serve names its file after the time unless given one (vllm/benchmarks/serve.py:1628-1633,
# `--result-filename`): a fixed name for the script to print.
RESULT_FILE = "result.json"
# The marker before the result's JSON in the log: `kubectl logs job/NAME-bench | sed -n '/^MARKER$/{n;p}'`
# takes the JSON alone.
RESULT_MARKER = "spark-bench-result:"
# `sh -c SCRIPT bench-job ARG...`: vllm with the args, then the result (one JSON line, json.dump's,
# serve.py:2457) after its marker; no value reaches the script's text, every one is an argument.
SCRIPT = "\n".join(
    [
        "set -eu",
        'vllm "$@"',
        f"echo {RESULT_MARKER}",
        f"cat {RESULTS}/{RESULT_FILE}",
        "echo",
        "",
    ]
)


def _hf_token(job: Job) -> list[dict[str, Any]]:
    ref = job.runtime_value("hf_token")
    if not isinstance(ref, SecretRef) or ref.kind == "env":
        return []
    return [{"name": "HF_TOKEN", "valueFrom": {"secretKeyRef": {"name": ref.name, "key": ref.key or "value"}}}]


def render(job: Job) -> str:
    plan = job.plan
    base_url = f"http://{client_job.service_address(plan)}:{api_port(plan)}"
    argv = [*bench.bench_argv(plan, base_url, model_id(plan), RESULTS), "--result-filename", RESULT_FILE]
    container = {
        "name": "bench",
        "image": job.image,
        "command": ["sh", "-c", BlockText(escape(SCRIPT)), "bench-job"],
        "args": [escape(arg) for arg in argv[1:]],
        "env": [*client_job.key_env(plan, "OPENAI_API_KEY"), *_hf_token(job)],
    }
    concurrency, input_tokens, output_tokens = bench.shape(plan)
    header = job.header(
        f"Benchmark of {job.name}: {concurrency} concurrent requests of {input_tokens} prompt and"
        f" {output_tokens} output tokens. Apply after kubernetes.yaml; the summary and the result's JSON"
        f" (after a line `{RESULT_MARKER}`) are in `kubectl logs job/{plan.name}-bench`, kept while the"
        f" Job is ({client_job.TTL_SECONDS}s after it ends).",
        *client_job.secrets_note(plan),
    )
    return yaml_text.document(client_job.job_object(job, "bench", container), header)


TARGET = Target(
    "bench-job",
    FILE_NAME,
    "a Kubernetes Job, `bench-job.yaml`, that runs `vllm bench serve` against the deployment's Service",
    render,
    client=True,
    # The Job calls the deployment with its key, and downloads the tokenizer with the Hub token.
    pod_secrets=("serve.api_key", "runtime.hf_token"),
    # `vllm bench` runs from the deployment's image.
    reads=(*bench.READS, *client_job.READS, "runtime.image", "runtime.hf_token"),
)
