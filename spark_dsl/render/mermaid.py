"""`spark plan --format mermaid`: the deployment as a Mermaid flowchart, for pull requests and docs.

One subgraph per deployment, one per node inside it (its GPUs), one box per launch (role, program,
parallelism, port), and the connections between them: clients to the API, the router to each
pool, the decode pool pulling KV cache from the prefill pool over NIXL, data-parallel workers to
their head's RPC port. GitHub renders a fenced ```mermaid block of this text as the picture.

Labels are Mermaid strings (`["..."]`); every character outside a small plain set, user text
included, is written as Mermaid's entity code (`#60;` for `<`), so no value can close a label,
start a line of Mermaid or become HTML: Mermaid shows it as the character. Ids are generated.
"""

from __future__ import annotations

import re

from spark_dsl.plan.launches import model_id
from spark_dsl.plan.model import Launch, Plan, Planned

_PLAIN = re.compile(r"[A-Za-z0-9 _.,:/+()=-]")
BREAK = "<br>"


def label(text: str) -> str:
    """`text` as the inside of a Mermaid string: plain characters as they are, others as `#N;`."""
    return "".join(ch if _PLAIN.fullmatch(ch) else f"#{ord(ch)};" for ch in text)


def _lines(*parts: str) -> str:
    return '"' + BREAK.join(label(part) for part in parts if part) + '"'


def _option(launch: Launch, flag: str) -> str | None:
    """The value the compiler gives an option on this launch's node (its options, not its argv)."""
    value = launch.option(flag)
    return value if isinstance(value, str) else None


def _parallelism(launch: Launch) -> str:
    terms = []
    tp = _option(launch, "--tensor-parallel-size")
    if tp:
        terms.append(f"TP {tp}")
    pp = _option(launch, "--pipeline-parallel-size")
    if pp:
        rank = _option(launch, "--node-rank")
        terms.append(f"PP {pp}" if rank is None else f"PP {pp}, stage {rank}")
    if launch.option("--enable-expert-parallel"):
        terms.append("EP")
    dp = _option(launch, "--data-parallel-size")
    if dp:
        local = int(_option(launch, "--data-parallel-size-local") or dp)
        start = int(_option(launch, "--data-parallel-start-rank") or 0)
        ranks = f"rank {start}" if local == 1 else f"ranks {start}-{start + local - 1}"
        terms.append(f"DP {dp}" if local == int(dp) else f"DP {dp}, {ranks}")
    return " + ".join(terms)


def _program(launch: Launch) -> str:
    if launch.command[:2] == ("vllm", "serve"):
        return "vllm serve --headless" if launch.option("--headless") else "vllm serve"
    return launch.command[0] if launch.command else launch.role


def _nixl_port(launch: Launch) -> str | None:
    return dict(launch.env).get("VLLM_NIXL_SIDE_CHANNEL_PORT")


def _deployment(plan: Plan, launches: tuple[Launch, ...], d: str) -> tuple[list[str], list[str]]:
    """(lines inside the flowchart for this deployment, its edges)."""
    gpus = f"{plan.value('gpus')} x {plan.accelerator.display_name}"
    served = model_id(plan) if plan.checkpoint is not None else str(plan.value("model"))
    nodes = plan.total_nodes
    lines = [
        f"  subgraph {d}[{_lines(plan.name, f'{plan.path.upper()} path, {nodes} node' + 's' * (nodes != 1), served)}]"
    ]
    edges: list[str] = []
    ids: dict[int, str] = {i: f"{d}_l{i}" for i in range(len(launches))}
    if not launches:
        lines.append(f"    {d}_none[{_lines('no launches: the deployment has errors')}]")
    for rank in range(nodes):
        on_node = [(i, launch) for i, launch in enumerate(launches) if launch.node_rank == rank]
        if not on_node:
            continue
        lines.append(f"    subgraph {d}_n{rank}[{_lines(f'node {rank}: {gpus}')}]")
        for i, launch in on_node:
            port = f"API :{launch.port}" if launch.port is not None and launch.api_server else ""
            nixl = _nixl_port(launch)
            shown = _lines(launch.role, _program(launch), _parallelism(launch), port, f"NIXL :{nixl}" if nixl else "")
            lines.append(f"      {ids[i]}[{shown}]")
        lines.append("    end")
    lines.append("  end")
    edges += _edges(launches, d, ids)
    return lines, edges


# How a headless worker reaches its pool head: the address flag (the head has the same
# placeholder), the port flag, and what the link is.
_WORKER_LINKS = (
    ("--data-parallel-address", "--data-parallel-rpc-port", "data-parallel RPC"),
    ("--master-addr", "--master-port", "pipeline store"),
)


def _edges(plan_launches: tuple[Launch, ...], d: str, ids: dict[int, str]) -> list[str]:
    launches = list(enumerate(plan_launches))
    edges: list[str] = []
    router = next(((i, launch) for i, launch in launches if launch.role == "router"), None)
    heads = [(i, launch) for i, launch in launches if launch.role != "router" and launch.api_server]
    if launches:
        edges.append(f"  {d}_clients([{_lines('clients')}])")
    if router is not None:
        edges.append(f"  {d}_clients -->|{_lines(f'HTTP :{router[1].port}')}| {ids[router[0]]}")
        for i, launch in heads:
            edges.append(f"  {ids[router[0]]} -->|{_lines(f'{launch.role} :{launch.port}')}| {ids[i]}")
    else:
        for i, launch in heads:
            edges.append(f"  {d}_clients -->|{_lines(f'HTTP :{launch.port}')}| {ids[i]}")
    # Data-parallel workers connect to their pool head's RPC socket; the later nodes of a pipeline
    # join its head's torch.distributed store.
    for i, launch in launches:
        if not launch.option("--headless"):
            continue
        for flag, port_flag, what in _WORKER_LINKS:
            address = _option(launch, flag)
            if address is None:
                continue
            head = next(
                (j for j, other in heads if other.role == launch.role and _option(other, flag) == address), None
            )
            if head is not None:
                port = _option(launch, port_flag)
                edges.append(f"  {ids[i]} -.->|{_lines(f'{what} :{port}')}| {ids[head]}")
    # The decode engines pull the KV cache from the prefill engines' NIXL side channels.
    prefill = [(i, launch) for i, launch in launches if launch.role == "prefill"]
    for i, launch in launches:
        if launch.role != "decode":
            continue
        for j, source in prefill:
            edges.append(f"  {ids[i]} -.->|{_lines(f'KV cache, NIXL :{_nixl_port(source)}')}| {ids[j]}")
    return edges


def render(plans: list[Planned]) -> str:
    lines = ["flowchart LR"]
    edges: list[str] = []
    for n, (plan, launches) in enumerate(plans):
        inside, between = _deployment(plan, launches, f"d{n}")
        lines += inside
        edges += between
    return "\n".join([*lines, *edges]) + "\n"
