"""`spark plan --node N` and the formats that speak for one node or draw the whole deployment."""

from __future__ import annotations

from spark_dsl.plan.model import Planned
from spark_dsl.render import mermaid, plan_shell


class PlanUsageError(Exception):
    """The options ask for something the plans cannot give (a usage error, exit 2)."""


class NothingToRun(Exception):
    """Nothing to run because the deployment has errors (exit 1, the diagnostics say why)."""


def on_node(plans: list[Planned], node: int | None) -> list[Planned]:
    """The plans with only the launches of node `node` (all of them when None)."""
    if node is None:
        return plans
    out = []
    for plan, launches in plans:
        if node >= plan.total_nodes:
            last = plan.total_nodes - 1
            ranks = "node 0" if last == 0 else f"nodes 0-{last}"
            raise PlanUsageError(f"deployment {plan.name} runs on {ranks}; there is no --node {node}")
        out.append(Planned(plan, plan_shell.node_launches(launches, node)))
    return out


def shell(plans: list[Planned], node: int | None) -> str:
    """One node of one deployment, as bash."""
    if not plans:
        raise NothingToRun("no deployment could be planned, so there is nothing to run")
    if len(plans) != 1:
        names = ", ".join(p.plan.name for p in plans)
        raise PlanUsageError(f"--format shell prints one deployment; pick one with -d NAME (found: {names})")
    ((plan, launches),) = plans
    if node is None:
        if plan.total_nodes > 1:
            raise PlanUsageError(
                f"deployment {plan.name} runs on {plan.total_nodes} nodes; pick one with --node 0 to "
                f"--node {plan.total_nodes - 1}"
            )
        node = 0
    try:
        return plan_shell.render_node(plan, launches, node)
    except plan_shell.NoLaunches:
        raise NothingToRun(f"deployment {plan.name} has errors, so node {node} has nothing to run") from None


def draw(plans: list[Planned]) -> str:
    return mermaid.render(plans)
