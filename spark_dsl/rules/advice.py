"""The recipe's workload advice (SPK401-SPK406): warnings about explicit choices that the recipe advises against."""

from __future__ import annotations

from collections.abc import Iterator

from spark_dsl import catalog
from spark_dsl.plan.model import Plan, Resolved
from spark_dsl.rules import catalog_texts as facts
from spark_dsl.rules.registry import Finding, recipe_only, rule
from spark_dsl.values import parse_parallel


def _workload(plan: Plan) -> int | None:
    """C, when SPK401-405 apply: a path with a workload policy, a concurrency set, and the default context."""
    conc = plan.setting("concurrency")
    if not plan.vendor.workload_policy or conc is None or plan.long_context:
        return None
    return int(conc.value)


def _policy_ep(plan: Plan, band: str) -> bool | None:
    """Whether the workload policy runs the checkpoint with expert parallelism in `band` (None: no policy)."""
    table = catalog.load().recipe.workload_policy.get(plan.value("checkpoint"))
    return None if table is None else parse_parallel(table[band].parallel).ep


def _format(plan: Plan) -> str:
    """The weight format a checkpoint serves (`MXFP4` for load-time BF16-to-MXFP4 too)."""
    ckpt = plan.checkpoint
    return "" if ckpt is None else (ckpt.quantization or ckpt.id).upper()


def _policy_never_ep(plan: Plan) -> bool:
    """The checkpoint stays on plain tensor parallelism at every concurrency (BF16's Triton experts)."""
    return all(_policy_ep(plan, band) is False for band in ("low", "mid", "high"))


def _ep_on(plan: Plan) -> bool:
    return any(p.ep for p in plan.pools)


def _ep_from() -> int:
    return catalog.load().thresholds.ep_from_concurrency


def _dspark_until() -> int:
    return catalog.load().thresholds.dspark_until_concurrency


def _mid_ep_checkpoints() -> str:
    """`MXFP4 (or load-time BF16-to-MXFP4)`: the checkpoints the policy runs with expert
    parallelism at mid concurrency, as SPK402 and SPK405 name them."""
    recipe = catalog.load().recipe
    policy = recipe.workload_policy
    first, *others = (c for c in recipe.checkpoints if c in policy and parse_parallel(policy[c]["mid"].parallel).ep)
    return facts.checkpoint(first) + (f" (or {facts.spelled(map(facts.checkpoint, others), 'or')})" if others else "")


def _conc_notes(plan: Plan) -> tuple[tuple[str, Resolved], ...]:
    """The concurrency the advice follows from: none when it is unset (no advice then)."""
    conc = plan.setting("concurrency")
    return () if conc is None else ((f"workload.concurrency = {conc.value}", conc),)


@recipe_only
@rule(
    "SPK401",
    "warning",
    "BF16 under expert parallelism on AMD",
    checks="AMD, `checkpoint = bf16`, a workload concurrency set, and expert parallelism chosen explicitly.",
    basis="The recipe keeps BF16 on plain tensor parallelism: its Triton experts are slower under expert parallelism.",
)
def bf16_plain_tp(plan: Plan) -> Iterator[Finding]:
    par = plan.setting("parallel")
    if _workload(plan) is not None and _policy_never_ep(plan) and _ep_on(plan) and par.explicit:
        yield Finding(
            f"checkpoint `{plan.value('checkpoint')}` on AMD stays on plain tensor parallelism: "
            "its Triton experts are slower under expert parallelism",
            par,
            "use `parallel = tp`",
            replace_with="tp",
            notes=_conc_notes(plan),
        )


@recipe_only
@rule(
    "SPK402",
    "warning",
    "plain TP at throughput concurrency with MXFP4 on AMD",
    checks=lambda: (
        f"AMD, {_mid_ep_checkpoints()}, concurrency of {_ep_from()} or more, and plain tensor "
        "parallelism chosen explicitly."
    ),
    basis=lambda: (
        "The recipe names tensor plus expert parallelism the throughput choice for MXFP4 from about "
        f"{_ep_from()} concurrent requests."
    ),
)
def mxfp4_ep_for_throughput(plan: Plan) -> Iterator[Finding]:
    c, par = _workload(plan), plan.setting("parallel")
    if (
        c is not None
        and c >= plan.thresholds.ep_from_concurrency
        and _policy_ep(plan, "mid")
        and not _ep_on(plan)
        and par.explicit
    ):
        yield Finding(
            f"at {c} concurrent requests, TP+EP is the recipe's throughput choice for {_format(plan)}",
            par,
            "use `parallel = tp + ep`",
            replace_with="tp + ep",
            notes=_conc_notes(plan),
        )


@recipe_only
@rule(
    "SPK403",
    "warning",
    "expert parallelism for a handful of requests on AMD",
    checks=lambda: f"AMD, concurrency below {_ep_from()}, and expert parallelism chosen explicitly.",
    basis="The recipe recommends plain tensor parallelism for latency-bound AMD serving with only a "
    "handful of concurrent requests.",
)
def latency_plain_tp(plan: Plan) -> Iterator[Finding]:
    c, par = _workload(plan), plan.setting("parallel")
    if c is not None and c < plan.thresholds.ep_from_concurrency and _ep_on(plan) and par.explicit:
        yield Finding(
            f"at {c} concurrent requests, plain tensor parallelism is the recipe's latency choice",
            par,
            "use `parallel = tp`",
            replace_with="tp",
            notes=_conc_notes(plan),
        )


@recipe_only
@rule(
    "SPK404",
    "warning",
    lambda: f"DSpark beyond about {_dspark_until()} concurrent requests on AMD",
    checks=lambda: f"AMD, DSpark chosen explicitly, concurrency above {_dspark_until()}.",
    basis=lambda: (
        f"The recipe points operators back to running without the draft model beyond about {_dspark_until()} "
        "concurrent requests (MXFP4: expert parallelism without the draft; BF16: plain TP without it)."
    ),
)
def no_draft_at_high_concurrency(plan: Plan) -> Iterator[Finding]:
    c, spec = _workload(plan), plan.setting("speculative")
    if c is not None and c > plan.thresholds.dspark_until_concurrency and spec.value.mode == "dspark" and spec.explicit:
        after = "TP+EP" if _policy_ep(plan, "high") is not False else "plain TP"
        yield Finding(
            f"beyond about {plan.thresholds.dspark_until_concurrency} concurrent requests the recipe drops "
            f"the draft model ({after} without DSpark)",
            spec,
            "use `speculative = none`",
            replace_with="none",
            notes=_conc_notes(plan),
        )


@recipe_only
@rule(
    "SPK405",
    "warning",
    "DSpark at mid concurrency without expert parallelism on AMD",
    checks=lambda: (
        f"AMD, {_mid_ep_checkpoints()}, DSpark chosen explicitly, concurrency from {_ep_from()} to "
        f"{_dspark_until()}, no expert parallelism."
    ),
    basis=lambda: (
        f"The recipe says DSpark can stay ahead through about {_dspark_until()} concurrent requests only "
        "when paired with expert parallelism."
    ),
)
def dspark_needs_ep_mid(plan: Plan) -> Iterator[Finding]:
    c = _workload(plan)
    spec, par = plan.setting("speculative"), plan.setting("parallel")
    if c is None or not _policy_ep(plan, "mid") or spec.value.mode != "dspark" or _ep_on(plan):
        return
    # DSpark chosen by the user: the policy's own DSpark never warns against itself.
    if plan.thresholds.ep_from_concurrency <= c <= plan.thresholds.dspark_until_concurrency and spec.explicit:
        at = par if par.explicit else spec
        yield Finding(
            f"at {c} concurrent requests DSpark stays ahead only with expert parallelism",
            at,
            "use `parallel = tp + ep`",
            replace_with="tp + ep" if at is par else None,
            notes=_conc_notes(plan),
        )


@recipe_only
@rule(
    "SPK406",
    "warning",
    "Rust frontend on the AMD path",
    checks="`frontend = rust` set on an AMD accelerator, workload or not.",
    basis="The Rust frontend is part of the NVIDIA path's validated command; the recipe treats it as an "
    "optimization, not a requirement, and says to switch to Python if a feature is unsupported.",
)
def amd_rust_frontend(plan: Plan) -> Iterator[Finding]:
    fe = plan.setting("frontend")
    if not plan.vendor.rust_frontend and fe is not None and fe.value == "rust" and fe.explicit:
        yield Finding(
            "the Rust frontend is validated on the NVIDIA path only; on AMD it is an untested optimization",
            fe,
            "use `frontend = python` if a feature is unsupported",
            replace_with="python",
        )
