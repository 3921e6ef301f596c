"""`spark plan --node N --format shell`: what runs on one node, as bash a person can paste.

Each launch of the node is one command: its environment as assignments in front of it, then the
argv, one option per line. Values the spec wrote are single-quoted (or `$'...'`), so bash reads
them back byte for byte; run-time values (CLI.md's placeholders) are shell variables in double
quotes, `"${SPARK_NODE_ADDRESS}"`; secrets are read from the variables the targets read them from.
One `:` command first checks that every variable the node needs is set: it fails, naming the
variable, before anything starts (bash stops the whole `&&` list, interactive or not). A router
runs in the background of the same shell, as serve.sh runs it beside the node's server.
"""

from __future__ import annotations

from spark_dsl.plan.model import Launch, Plan
from spark_dsl.targets import placeholders
from spark_dsl.targets.common import describe_secret
from spark_dsl.targets.shell_words import command_lines, expansion_text, joined, word
from spark_dsl.text_escape import visible


class NoLaunches(Exception):
    """The node has nothing to run (a rank outside the deployment, or a plan with errors)."""


def node_launches(launches: tuple[Launch, ...], node: int) -> tuple[Launch, ...]:
    return tuple(launch for launch in launches if launch.node_rank == node)


def _address_meaning(plan: Plan, name: str) -> str:
    """What a placeholder stands for, in words a person acts on (no `'`: bash reads a quote inside
    `"${X:?message}"` as the start of a quoted string)."""
    if name == placeholders.NODE_ADDRESS:
        return "the IPv4 address of this node"
    if name == placeholders.NODE_INTERFACE:
        return "the network interface that holds the IPv4 address of this node"
    role = next((role for role, address in placeholders.POOL_ADDRESS.items() if address == name), None)
    pool = next((p for p in plan.pools if p.role == role), None)
    if pool is None:  # pragma: no cover - every placeholder names a pool of the plan
        return "an IPv4 address"
    head = "the pipeline head" if pool.pp > 1 else "the data-parallel head"
    what = head if role == "server" else f"the first node of the {role} pool"
    return f"the IPv4 address of node {pool.first_rank} ({what})"


def _needs(plan: Plan, launches: tuple[Launch, ...]) -> list[tuple[str, str]]:
    """(variable, what it must hold): run-time placeholders, then secrets, each once."""
    texts = [t for launch in launches for t in (*launch.argv, *(value for _, value in launch.env))]
    out = {name: _address_meaning(plan, name) for name in placeholders.used(texts)}
    for launch in launches:
        for _, ref in launch.secrets:
            out.setdefault(ref.env_name, f"the value of {describe_secret(ref)}")
    return list(out.items())


def _command(launch: Launch, indent: str) -> list[str]:
    """Assignments, then the argv: `NAME=value \\` lines before `vllm serve ... \\` lines."""
    env = [f"{name}={word(value)}" for name, value in launch.env]
    env += [f'{name}="${{{ref.env_name}}}"' for name, ref in launch.secrets]
    body = command_lines(launch.argv, "  ")
    return [indent + line for line in joined([*env, *body])]


def render_node(plan: Plan, all_launches: tuple[Launch, ...], node: int) -> str:
    launches = node_launches(all_launches, node)
    if not launches:
        raise NoLaunches(f"node {node}")
    roles = " and ".join(launch.role for launch in launches)
    needs = _needs(plan, launches)
    lines = [
        f"# {plan.name}, node {node} of {plan.total_nodes} ({roles}), from {plan.deployment.source.name}.",
        "# Written by `spark plan --format shell`: the exact environment and command of each launch.",
    ]
    if needs:
        lines.append("# Set first (export, or assign in this shell):")
        lines += [f"#   {name}: {what}" for name, what in needs]
        checks = [f'"${{{name}:?{expansion_text(f"set {name} to {what}")}}}"' for name, what in needs]
        lines += joined([": " + checks[0], *("  " + check for check in checks[1:])])
        lines[-1] += " &&"
    background = [launch for launch in launches if launch.role == "router"]
    foreground = [launch for launch in launches if launch.role != "router"]
    group = len(launches) > 1 and bool(needs)
    indent = "  " if group else ""
    if group:
        lines.append("{")
    for launch in background:
        lines.append(f"{indent}# The {launch.role} runs in the background of this shell (`jobs`, `kill %1`).")
        lines += _command(launch, indent)
        lines[-1] += " &"
    for launch in foreground:
        lines += _command(launch, indent)
    if group:
        lines.append("}")
    # Names and values come from the spec: comments show control characters as escapes.
    return "\n".join(visible(line) if line.lstrip().startswith("#") else line for line in lines) + "\n"
