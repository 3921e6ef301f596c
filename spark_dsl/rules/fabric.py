"""Traffic between nodes without a fabric (SPK560): the expert all-to-all, the data-parallel ranks'
collectives and the prefill-to-decode KV transfer cross nodes, and without `runtime.fabric` nothing
asks for the RDMA network, so they run over TCP on the pod or host network."""

from __future__ import annotations

from collections.abc import Iterator

from spark_dsl.plan.model import Plan, Pool, Resolved
from spark_dsl.rules.registry import Finding, rule

# `runtime.fabric`'s RDMA choices, named in the help (schema.FABRICS also has `tcp`).
_RDMA = "`infiniband`, `roce` or `efa`"
# The targets that put the pools on nodes of their own; Compose runs them on one host, and
# vLLM config files are one launch.
_OVER_NODES = ("kubernetes", "slurm", "shell")


def _crossing(plan: Plan, pool: Pool) -> str | None:
    """What of a pool over several nodes talks between them every forward pass: its experts' traffic.

    With `ep` it is the expert all-to-all; without, vLLM shards a mixture-of-experts model's experts
    over all DP x TP ranks, which synchronize in every pass. A dense model's data-parallel ranks are
    independent replicas and a pipeline (`pp(N)`) sends one activation per stage: both are left out
    (vLLM's "Data Parallel Deployment" guide)."""
    if pool.nodes < 2:
        return None
    if pool.ep:
        return "the expert-parallel all-to-all"
    if pool.dp is not None and plan.model.architecture.routed_experts:
        return "the data-parallel ranks' expert layers"
    return None


def _where(pool: Pool) -> Resolved | None:
    """The layout that spans the nodes: the pool's `parallel`, else its `nodes`."""
    if pool.parallel.location is not None or pool.nodes_setting is None:
        return pool.parallel
    return pool.nodes_setting


@rule(
    "SPK560",
    "warning",
    "traffic between nodes runs over TCP: no fabric",
    checks="A deployment without `runtime.fabric` whose expert- or data-parallel layout spans "
    "nodes (`nodes` over 1 with `ep`, or with `dp(N)` of a mixture-of-experts model), or that "
    "disaggregates prefill and decode (each pool has nodes, or pods, of its own), built for "
    "Kubernetes, Slurm or shell. vLLM's CPU "
    "backend is left out: its ranks use gloo. `fabric = tcp` says TCP is meant and silences it.",
    basis="Without a fabric spark requests no RDMA device and sets no transport: on Kubernetes the "
    "pods get the pod network only (the EFA device plugin's `vpc.amazonaws.com/efa` or an RDMA "
    "plugin's resource is what puts the NICs in a pod), and NCCL falls back to its socket "
    'transport when it finds no IB device (NCCL\'s "Environment Variables", NCCL_IB_DISABLE). '
    "NIXL's default backend is UCX (vLLM's NixlConnector guide, \"Transport Configuration\"), "
    "which then moves the KV cache over TCP. With data parallelism a mixture-of-experts model's "
    "expert layers synchronize across every rank in every forward pass, a dense model's ranks do "
    "not (vLLM's \"Data Parallel Deployment\"). The recipe's throughput assumes the fabric.",
)
def no_fabric(plan: Plan) -> Iterator[Finding]:
    if plan.runtime.value("fabric") is not None or plan.accelerator.on_host:
        return
    if not any(plan.builds(kind) for kind in _OVER_NODES):
        return
    for pool in plan.pools:
        what = _crossing(plan, pool)
        if what is not None:
            yield _finding(f"{what} between the {pool.nodes} nodes of {_named(pool)}", _where(pool))
    if plan.disaggregated:
        header = plan.spec.block("disaggregation").header("disaggregation")
        yield _finding("the KV transfer from the prefill pods to the decode pods", header)


def _named(pool: Pool) -> str:
    return "the deployment" if pool.role == "server" else f"the {pool.role} pool"


def _finding(what: str, at: Resolved | None) -> Finding:
    return Finding(
        f"{what} runs over TCP on the pod or host network: `runtime.fabric` is not set",
        at,
        f"set `runtime {{ fabric = ... }}` to the network between the nodes ({_RDMA}), "
        "or `fabric = tcp` if TCP is meant",
        label="no fabric",
    )
