"""The smoke and benchmark jobs' rules (SPK540): what the workload asks of the deployment."""

from __future__ import annotations

from collections.abc import Iterator

from spark_dsl.plan.model import Plan, Resolved
from spark_dsl.rules.registry import Finding, rule
from spark_dsl.targets.pack_values import INPUT_TOKENS, OUTPUT_TOKENS
from spark_dsl.units import format_count


@rule(
    "SPK540",
    "error",
    "workload requests are longer than the context",
    checks="`workload { input_tokens, output_tokens }` together above `max_model_len`: each "
    "request of the workload (and of the benchmark job, which sends exactly that shape) needs "
    "prompt plus output tokens of context.",
    basis="vLLM refuses a request whose prompt plus `max_tokens` exceeds the model's context "
    '("This model\'s maximum context length is N tokens"), so every benchmark request would '
    "fail with 400 instead of measuring anything.",
)
def workload_longer_than_context(plan: Plan) -> Iterator[Finding]:
    workload = plan.spec.block("workload")
    inputs, outputs = workload.setting("input_tokens"), workload.setting("output_tokens")
    limit = plan.value("max_model_len")
    at = inputs or outputs
    if at is None or limit is None:
        return
    # Unset, a length is the benchmark's default: the shape the bench job sends.
    input_tokens = int(inputs.value) if inputs is not None else INPUT_TOKENS
    output_tokens = int(outputs.value) if outputs is not None else OUTPUT_TOKENS
    needed = input_tokens + output_tokens
    if needed <= limit:
        return
    room = int(limit) - output_tokens
    fits = inputs is not None and room > 0
    yield Finding(
        f"workload requests need {needed:,} tokens of context ({input_tokens:,} in + "
        f"{output_tokens:,} out), above max_model_len = {format_count(int(limit))} ({int(limit):,})",
        Resolved.from_setting(inputs if fits and inputs is not None else at),
        f"use `input_tokens = {room}` (the context less the output), or raise `max_model_len`"
        if fits
        else f"keep `output_tokens` plus `input_tokens` within {int(limit):,}, or raise `max_model_len`",
        label=f"{needed:,} tokens with the output",
        notes=((f"max_model_len is {int(limit):,} tokens", plan.setting("max_model_len")),),
        replace_with=str(room) if fits else None,
    )
