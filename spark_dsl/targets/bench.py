"""The benchmark target, `bench.sh`: `vllm bench serve` shaped by the spec's `workload`.

The arguments are vLLM 0.33.0's (vllm/benchmarks/serve.py `add_cli_args`; docs/production.md has
the table and why each is passed). What the spec decides:

* `--max-concurrency` is `workload.concurrency` (1 when unset: one request at a time);
* `--random-input-len`/`--random-output-len` are `workload.input_tokens`/`output_tokens` with
  `--dataset-name random` and `--ignore-eos`, so every request has exactly that shape;
* `--num-prompts` is ten times the concurrency (ROUNDS): each slot serves ten requests, so the
  steady state outweighs the ramp at the start and the drain at the end;
* `--model` is the served name; `--tokenizer` the model's path or repository (the random
  dataset needs a real tokenizer), overridable with SPARK_BENCH_TOKENIZER for a local copy;
* the key: `vllm bench serve` has no key argument and reads OPENAI_API_KEY, so the script sets it
  from the deployment's own secret variable; `--model` is passed because the benchmark's model
  lookup (`GET /v1/models`) is sent without that key.
"""

from __future__ import annotations

from spark_dsl.plan import weights
from spark_dsl.plan.launches import model_id
from spark_dsl.plan.model import Plan
from spark_dsl.targets import endpoint
from spark_dsl.targets.common import Job
from spark_dsl.targets.pack_values import INPUT_TOKENS, OUTPUT_TOKENS
from spark_dsl.targets.registry import Target
from spark_dsl.targets.shell_words import joined, quote

# What the benchmark reads (`Target.reads`): a client's settings, and the workload it sends.
READS = (*endpoint.READS, "workload.concurrency", "workload.input_tokens", "workload.output_tokens")

FILE_NAME = "bench.sh"
ROUNDS = 10
TOKENIZER = "SPARK_BENCH_TOKENIZER"
RESULTS = "SPARK_BENCH_RESULTS"


def shape(plan: Plan) -> tuple[int, int, int]:
    """(concurrency, input tokens, output tokens) of the benchmark: the workload's, else defaults."""
    workload = plan.spec.block("workload")
    concurrency = workload.value("concurrency") or 1
    input_tokens = workload.value("input_tokens") or INPUT_TOKENS
    output_tokens = workload.value("output_tokens") or OUTPUT_TOKENS
    return int(concurrency), int(input_tokens), int(output_tokens)


# Words of the command that only exist at run time: bash text, written as is.
_RUNTIME = {"base_url": '"${base_url}"', "tokenizer": '"${tokenizer}"', "results": '"${results}"'}


def bench_argv(plan: Plan, base_url: str, tokenizer: str, results: str) -> list[str]:
    """`vllm bench serve` and its arguments, with the run-time values as given."""
    concurrency, input_tokens, output_tokens = shape(plan)
    return [
        "vllm",
        "bench",
        "serve",
        *("--backend", "openai-chat", "--endpoint", "/v1/chat/completions"),
        *("--base-url", base_url),
        *("--model", endpoint.served_name(plan)),
        *("--tokenizer", tokenizer),
        *("--dataset-name", "random"),
        *("--random-input-len", str(input_tokens), "--random-output-len", str(output_tokens)),
        "--ignore-eos",
        *("--max-concurrency", str(concurrency), "--num-prompts", str(concurrency * ROUNDS)),
        "--save-result",
        *("--result-dir", results),
        # It sends a first request until one succeeds, for up to this long; vLLM's default, 0, sends
        # none and fails at once on a server still loading (vllm/benchmarks/serve.py).
        *("--ready-check-timeout-sec", str(weights.ready_budget(plan).seconds)),
    ]


def _command(plan: Plan) -> list[str]:
    """The command as bash lines: each option on its own line, values quoted, run-time ones expanded."""
    lines: list[str] = []
    for token in bench_argv(plan, *(f"\0{name}" for name in _RUNTIME)):
        text = _RUNTIME[token[1:]] if token.startswith("\0") else quote(token)
        if token.startswith("--") or not lines:
            lines.append(text)
        else:
            lines[-1] += " " + text
    return joined(["exec " + lines[0], *("  " + line for line in lines[1:])])


def summary(job: Job) -> str:
    concurrency, input_tokens, output_tokens = shape(job.plan)
    return (
        f"Benchmark of {job.name}: vllm bench serve, {concurrency} concurrent requests of {input_tokens}"
        f" prompt and {output_tokens} output tokens, {concurrency * ROUNDS} in all."
    )


def usage_lines(script: str) -> list[str]:
    return [
        f"Usage: {script} ADDRESS   (or set {endpoint.ADDRESS}); the port is {endpoint.PORT}, else the spec's.",
        f"{TOKENIZER}: a local tokenizer folder (default: the model's); {RESULTS}: where results go.",
    ]


def body_lines(plan: Plan, script: str) -> list[str]:
    """Everything after the header: the endpoint, the key, the tokenizer and the command."""
    key = endpoint.api_key(plan)
    lines = ["set -euo pipefail", "", *endpoint.address_lines(plan, script)]
    if key:
        lines += [
            endpoint.key_check(key),
            "# vllm bench serve reads the key from OPENAI_API_KEY (it has no key argument).",
            f'export OPENAI_API_KEY="${{{key.env_name}}}"',
        ]
    return [
        *lines,
        f'tokenizer="${{{TOKENIZER}:-}}"',
        f'if [ -z "$tokenizer" ]; then tokenizer={quote(model_id(plan))}; fi',
        f'results="${{{RESULTS}:-bench-results}}"',
        "",
        *_command(plan),
    ]


def render(job: Job) -> str:
    header = job.header(summary(job), *usage_lines(FILE_NAME), image=False)
    lines = ["#!/usr/bin/env bash", *(f"# {line}" for line in header), *body_lines(job.plan, FILE_NAME)]
    return "\n".join(lines) + "\n"


TARGET = Target(
    "bench",
    FILE_NAME,
    "a bash script, `bench.sh`, that runs `vllm bench serve` shaped by the workload",
    render,
    executable=True,
    client=True,
    reads=READS,
)
