"""The ready budget's rules (SPK544-SPK546): no waiter gives up before the servers can be ready.

A deployment has one ready budget (`spark_dsl.plan.weights.ready_budget`): vLLM's engine-ready
clock, the P/D router's wait for its workers, the startup probes and the Slurm job's /health wait
are all set from it. These rules report a value the user wrote that breaks the chain.
"""

from __future__ import annotations

from collections.abc import Iterator

from spark_dsl.plan.managed import ENGINE_READY_DEFAULT_SECONDS, ENGINE_READY_ENV
from spark_dsl.plan.model import Plan, Resolved
from spark_dsl.plan.weights import DOWNLOAD_GB_PER_SECOND, LOAD_GB_PER_SECOND, STARTUP_BASE_SECONDS, ready_budget
from spark_dsl.rules.registry import Finding, rule, shown
from spark_dsl.units import format_duration


@rule(
    "SPK544",
    "error",
    "vLLM's engine-ready timeout is shorter than the ready budget",
    checks=f"`serve.env {{ {ENGINE_READY_ENV} }}` is not a whole number of seconds at least the "
    "deployment's ready budget (`serve.ready_timeout`, else the estimate from the checkpoint's size).",
    basis=f"vLLM's API server waits `{ENGINE_READY_ENV}` seconds (vllm/envs.py: "
    f"{ENGINE_READY_DEFAULT_SECONDS} by default) for "
    "its engines to load the weights, then exits; spark sets it to the ready budget on every "
    "launch. A shorter value kills the servers while the weights still load, although every "
    "other waiter (router, probes, the Slurm job) would still be waiting.",
)
def engine_ready_timeout(plan: Plan) -> Iterator[Finding]:
    setting = plan.serve.block("env").entries().get(ENGINE_READY_ENV)
    if setting is None:
        return
    budget = ready_budget(plan).seconds
    text = str(setting.value).strip()
    if text.isascii() and text.isdigit() and int(text) >= budget:
        return
    yield Finding(
        f"`{ENGINE_READY_ENV}` is {shown(str(setting.value))}, shorter than the ready budget of {budget} s",
        Resolved.from_setting(setting),
        f'remove it (spark sets it to the ready budget) or write "{budget}"; to wait less, set `serve.ready_timeout`',
        label=f"the engines give up after this; the budget is {budget} s",
        replace_with=f'"{budget}"',
    )


@rule(
    "SPK545",
    "warning",
    "ready budget shorter than the load estimate",
    checks="`serve.ready_timeout` below the estimate of how long the servers take to start: "
    f"{STARTUP_BASE_SECONDS} s, plus the checkpoint read at {LOAD_GB_PER_SECOND:g} GB/s, plus its download "
    f"at {DOWNLOAD_GB_PER_SECOND:g} GB/s unless `weights.download` stages it first.",
    basis="Every waiter is set from the ready budget: vLLM's engine-ready clock, the router's wait "
    "for its workers, the startup probes and the Slurm job's /health wait. Below the estimate, "
    "they give up while the weights still load, unless the storage is faster than assumed.",
)
def ready_budget_below_estimate(plan: Plan) -> Iterator[Finding]:
    setting = plan.serve.setting("ready_timeout")
    if setting is None:
        return
    estimate = ready_budget(plan).estimate
    if int(setting.value) >= estimate:
        return
    yield Finding(
        f"the ready budget {format_duration(int(setting.value))} is shorter than the "
        f"{format_duration(estimate)} this deployment is estimated to need to start",
        Resolved.from_setting(setting),
        f"raise `ready_timeout` to at least {format_duration(estimate)}, or remove it to use the estimate",
        label="the waiters give up after this",
        replace_with=format_duration(estimate),
    )


@rule(
    "SPK546",
    "warning",
    "Slurm ready wait shorter than the ready budget",
    checks="`ready_timeout` of `target slurm` below the deployment's ready budget.",
    basis="The job waits `ready_timeout` for /health and then cancels its launches, while vLLM "
    "itself would still wait the whole ready budget for the weights to load; the job then ends a "
    "deployment that was about to come up.",
    target="slurm",
)
def slurm_wait_below_budget(plan: Plan) -> Iterator[Finding]:
    setting = plan.target("slurm").setting("ready_timeout")
    if setting is None:
        return
    budget = ready_budget(plan).seconds
    if int(setting.value) >= budget:
        return
    yield Finding(
        f"`ready_timeout` {format_duration(int(setting.value))} is shorter than the deployment's "
        f"ready budget of {format_duration(budget)}",
        Resolved.from_setting(setting),
        f"remove it to wait the ready budget, or raise it to at least {format_duration(budget)}",
        label="the job gives up after this",
        replace_with=format_duration(budget),
    )
