"""The ports that must be open between the nodes (or pods) of a multi-node deployment.

Fixed ports are the plan's (`spark_dsl/catalog/recipe.yaml`); vLLM 0.33.0 opens the rest on
ports it picks at run time (`vllm/config/parallel.py`: the data-parallel master ports come from
`get_open_ports_list`, and the engines' queues from the head's open ports), and NCCL's socket and
bootstrap connections use ephemeral ports too, so TCP between the nodes must be open beyond these.
"""

from __future__ import annotations

from spark_dsl import catalog
from spark_dsl.plan.model import Launch, Plan


def fixed_ports(plan: Plan, launches: tuple[Launch, ...]) -> list[str]:
    """`PORT (what)` for each fixed port one node connects to on another."""
    recipe_ports = catalog.load().recipe.ports
    out: list[str] = []
    for launch in launches:
        if launch.port is not None and (plan.disaggregated or plan.total_nodes > 1):
            what = "the router's API" if launch.role == "router" else f"the {launch.role} API"
            out.append(f"{launch.port} ({what})")
    for pool in plan.pools:
        if pool.dp is not None and pool.nodes > 1:
            out.append(f"{recipe_ports.data_parallel_rpc} (the {pool.role} data-parallel RPC, on its head)")
        if pool.pp > 1 and pool.nodes > 1:
            out.append(f"{recipe_ports.pipeline_master} (the {pool.role} pipeline's master, on its head)")
        if pool.role in ("prefill", "decode"):
            base = recipe_ports.nixl(pool.role)
            last = base + max(pool.dp_size - 1, 0)
            span = str(base) if last == base else f"{base}-{last}"
            per_rank = ", one per data-parallel rank" if last != base else ""
            out.append(f"{span} (the {pool.role} NIXL side channel{per_rank})")
    return list(dict.fromkeys(out))


def header_lines(plan: Plan, launches: tuple[Launch, ...], between: str = "nodes") -> list[str]:
    """Header lines naming the ports, for outputs that span more than one node."""
    if plan.total_nodes <= 1:
        return []
    return [
        f"Open between the {between}: TCP {', '.join(fixed_ports(plan, launches))}; vLLM and NCCL also use ports"
        " they pick at run time, so allow TCP between them.",
    ]
