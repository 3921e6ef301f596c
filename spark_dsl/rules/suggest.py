"""What rules suggest: values that satisfy every rule at once, and the fixes that write them.

A hint must converge: applied, it must not trade one error for another. So the parallelism a
rule suggests is the one that fits the pool as a whole (TP = GPUs per node, one data-parallel
replica per node), not a patch of the one term the rule looks at.
"""

from __future__ import annotations

from spark_dsl.diagnostics import Fix, replacement
from spark_dsl.edits import add_setting, body_holding
from spark_dsl.plan.model import Plan, Pool, Resolved
from spark_dsl.syntax import ast
from spark_dsl.values import Parallel


def pool_parallel(plan: Plan, pool: Pool, *, ep: bool | None = None, dp: bool = True) -> Parallel:
    """The parallelism that fills a pool: TP = GPUs per node, `dp(N)` over N nodes (or, where the
    spec splits a replica into pipeline stages, `pp(N)`: one stage per node, while the model has a
    layer for each; SPK229), EP as it was."""
    spread = pool.nodes if dp and pool.nodes > 1 else None
    expert = pool.ep if ep is None else ep
    staged = pool.pp > 1 and (spread or 0) <= plan.model.architecture.layers
    # EP spans the TP x DP ranks, which must divide the routed experts (SPK220): else no `ep`.
    ep_size = int(plan.value("gpus")) * (1 if staged else spread or 1)
    if expert and plan.model.architecture.routed_experts % ep_size:
        expert = False
    if staged:
        return Parallel(has_tp=True, ep=expert, pp=spread)
    return Parallel(has_tp=True, ep=expert, dp=spread)


def spelled(parallel: Parallel) -> str:
    return parallel.spelled() or "tp"


def set_parallel(plan: Plan, pool: Pool, value: Parallel, message: str) -> Fix | None:
    """The fix that makes a pool's parallelism `value`: in place if the user wrote one, else added
    to the pool's block (or the deployment) beside the node count that asks for it."""
    text = spelled(value)
    written = pool.parallel
    # A pool that inherits the deployment's parallelism gets its own: the other pool keeps it.
    inherited = plan.disaggregated and written is plan.setting("parallel")
    if written.explicit and written.location is not None and not inherited:
        return replacement(message, written.location.file, written.location.span, text)
    if not plan.disaggregated:
        return add_to_body_of(plan, None, "parallel", text, message)
    body = _pool_body(plan, pool)
    if body is None:
        return None
    return add_setting(message, plan.deployment.source, body, "parallel", text)


def _pool_body(plan: Plan, pool: Pool) -> ast.Body | None:
    """The body of a pool's `prefill { }` or `decode { }` block in the deployment's own text."""
    for entry in plan.deployment.node.body.entries:
        if isinstance(entry, ast.Block) and entry.kind.name == "disaggregation":
            for inner in entry.body.entries:
                if isinstance(inner, ast.Block) and inner.kind.name == pool.role:
                    return inner.body
    return None


def add_to_body_of(plan: Plan, anchor: Resolved | None, key: str, value: str, message: str) -> Fix | None:
    """The fix that adds `key = value` beside `anchor` (in its body), or to the deployment's body.

    Only in the deployment's own file: a profile elsewhere may serve other deployments.
    """
    source = plan.deployment.source
    if anchor is not None and anchor.location is not None:
        if anchor.location.file != source.name:
            return None
        body = body_holding(source.module, anchor.location.span)
    else:
        body = plan.deployment.node.body
    if body is None:
        return None
    return add_setting(message, source, body, key, value)


def replace_or_add(plan: Plan, key: str, value: str, message: str) -> Fix | None:
    """The fix that sets a deployment setting: its written value replaced, else the key added."""
    current = plan.setting(key)
    if current is not None and current.location is not None:
        return replacement(message, current.location.file, current.location.span, value)
    return add_to_body_of(plan, None, key, value, message)
