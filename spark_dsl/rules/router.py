"""The P/D router's image (SPK547): a router that runs from an image needs one that has it."""

from __future__ import annotations

from collections.abc import Iterator

from spark_dsl import catalog
from spark_dsl.plan.model import Plan
from spark_dsl.rules.registry import Finding, rule, shown

_ROUTER = "vllm-router"
# A prefill pool and a decode pool of one node each: the explain examples' topology.
_PD = "disaggregation {\n  prefill {\n    nodes = 1\n  }\n  decode {\n    nodes = 1\n  }\n}"


def _in_images(plan: Plan) -> list[str]:
    """The built targets that run the router from an image: Kubernetes, and Slurm in a container."""
    out = []
    if plan.builds("kubernetes"):
        out.append("kubernetes")
    if plan.builds("slurm") and plan.target("slurm").value("container") != "none":
        out.append("slurm")
    return out


@rule(
    "SPK547",
    "error",
    "the P/D router would run from an image without it",
    checks="A disaggregated deployment built for Kubernetes, or for Slurm in a container, without "
    "`runtime.router_image`: the router would run from the vLLM image.",
    basis=f"The router is `{_ROUTER}`, a program of its own (PyPI `{_ROUTER}`, vllm-project/router); "
    "vLLM's images do not ship it, so its container fails at once and every request to the API "
    "port is refused.",
)
def router_image(plan: Plan) -> Iterator[Finding]:
    if not plan.disaggregated or plan.runtime.value("router_image"):
        return
    targets = _in_images(plan)
    if not targets:
        return
    header = plan.runtime.header("runtime") or plan.spec.block("disaggregation").header("disaggregation")
    yield Finding(
        f"the P/D router would run from the vLLM image {shown(_image(plan))}, which has no `{_ROUTER}` "
        f"(targets: {', '.join(targets)})",
        header,
        f'set `runtime {{ router_image = "..." }}` to an image with '
        f"`pip install {catalog.load().router_requirement}` in it",
        label="no router image",
    )


def _image(plan: Plan) -> str:
    chosen = plan.runtime.value("image")
    return str(chosen) if chosen else catalog.load().image(plan.accelerator.vendor)


@rule(
    "SPK548",
    "warning",
    "the P/D router serves without checking the API key",
    checks="A disaggregated deployment with `serve.api_key`: its entry point is the router. The "
    "warning points at `disaggregation`.",
    basis=f"`{_ROUTER}` checks no key on the requests it receives; it calls the prefill and decode "
    "servers with the deployment's key from its own environment (`OPENAI_API_KEY`). Anyone who "
    "reaches the router's port is served as if they held the key; the servers' own ports still "
    "check it.",
)
def router_without_key(plan: Plan) -> Iterator[Finding]:
    if not plan.disaggregated:
        return
    if plan.serve.value("api_key") is None:
        return
    yield Finding(
        f"the P/D router on port {plan.serve.value('port')} answers every request without asking for "
        "the deployment's API key",
        plan.spec.block("disaggregation").header("disaggregation"),
        "keep the router's port inside your network, or put an authenticating gateway in front of it, "
        "then silence this with `# spark: ignore[SPK548]`",
        label="the router checks no key",
    )
