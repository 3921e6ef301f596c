"""The benchmark as a Kubernetes Job, `bench-job.yaml`: `vllm bench serve` in the vLLM image.

The argv is bench.sh's (bench.py `bench_argv`) with the run-time values fixed for the cluster: the
Service's address, the model's repository as tokenizer (downloaded with the deployment's
Hugging Face token when it has one) and /tmp for results (the summary is in the Job's log). The
image's entrypoint is `vllm serve`, so the Job sets `command` to `vllm` and the rest as `args`; the
key arrives as OPENAI_API_KEY from the deployment's Secret, never in the argv.
"""

from __future__ import annotations

from typing import Any

from spark_dsl.plan.launches import api_port, model_id
from spark_dsl.targets import bench, client_job, yaml_text
from spark_dsl.targets.common import Job
from spark_dsl.targets.kubernetes import escape
from spark_dsl.targets.registry import Target
from spark_dsl.values import SecretRef

FILE_NAME = "bench-job.yaml"
RESULTS = "/tmp/bench-results"


def _hf_token(job: Job) -> list[dict[str, Any]]:
    ref = job.runtime_value("hf_token")
    if not isinstance(ref, SecretRef) or ref.kind == "env":
        return []
    return [{"name": "HF_TOKEN", "valueFrom": {"secretKeyRef": {"name": ref.name, "key": ref.key or "value"}}}]


def render(job: Job) -> str:
    plan = job.plan
    base_url = f"http://{client_job.service_address(plan)}:{api_port(plan)}"
    argv = bench.bench_argv(plan, base_url, model_id(plan), RESULTS)
    container = {
        "name": "bench",
        "image": job.image,
        "command": [argv[0]],
        "args": [escape(arg) for arg in argv[1:]],
        "env": [*client_job.key_env(plan, "OPENAI_API_KEY"), *_hf_token(job)],
    }
    concurrency, input_tokens, output_tokens = bench.shape(plan)
    header = job.header(
        f"Benchmark of {job.name}: {concurrency} concurrent requests of {input_tokens} prompt and"
        f" {output_tokens} output tokens. Apply after kubernetes.yaml; the summary is in"
        f" `kubectl logs job/{plan.name}-bench`.",
        *client_job.secrets_note(plan),
    )
    return yaml_text.document(client_job.job_object(job, "bench", container), header)


TARGET = Target(
    "bench-job",
    FILE_NAME,
    "a Kubernetes Job, `bench-job.yaml`, that runs `vllm bench serve` against the deployment's Service",
    render,
    client=True,
    pod_secrets=("serve.api_key",),  # the Job calls the deployment with its key
)
