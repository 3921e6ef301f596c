"""The recipe's AMD path (SPK204-SPK209, SPK216): one eight-GPU node serving text, no data
parallelism or prefill/decode disaggregation, and the settings its commands always write
(SPK207-SPK209, generated from the catalog's `required_settings`)."""

from __future__ import annotations

from collections.abc import Iterator

from spark_dsl import catalog
from spark_dsl.edits import remove_entry
from spark_dsl.plan.model import Plan, Resolved
from spark_dsl.rules import catalog_texts as facts
from spark_dsl.rules.parallelism import nodes_resolved
from spark_dsl.rules.registry import Finding, recipe_only, rule
from spark_dsl.rules.suggest import pool_parallel, set_parallel, spelled


@recipe_only
@rule(
    "SPK204",
    "error",
    "data parallelism on the AMD path",
    checks=lambda: f"`dp(N)` on {facts.validated_on('amd')} (or another AMD accelerator).",
    basis="The recipe's AMD path supports TP and TP+EP, not its data-parallel configuration.",
)
def amd_no_dp(plan: Plan) -> Iterator[Finding]:
    if plan.vendor.data_parallel:
        return
    for pool in plan.pools:
        if pool.dp is not None:
            one_node = spelled(pool_parallel(plan, pool, dp=False))
            yield Finding(
                "data parallelism is not validated on the AMD path",
                pool.parallel,
                f"use `parallel = {one_node}` on one node",
                label=f"dp({pool.dp})",
                fix=set_parallel(plan, pool, pool_parallel(plan, pool, dp=False), f"use `parallel = {one_node}`"),
            )
            return


def _block_resolved(plan: Plan, kind: str) -> Resolved | None:
    """The block `kind` as a written value to point at (None if absent or without a position)."""
    return plan.spec.block(kind).header(True)


@recipe_only
@rule(
    "SPK205",
    "error",
    "prefill/decode disaggregation on the AMD path",
    checks="A `disaggregation` block on an AMD accelerator.",
    basis="The recipe's AMD path does not support prefill/decode disaggregation; teams that need it "
    "should use the NVIDIA path.",
)
def amd_no_disaggregation(plan: Plan) -> Iterator[Finding]:
    if not plan.vendor.disaggregation and plan.disaggregated:
        block = _block_resolved(plan, "disaggregation")
        source = plan.deployment.source
        fix = None
        if block is not None and block.location is not None and block.location.file == source.name:
            fix = remove_entry("remove the `disaggregation` block", source, block.location.span)
        yield Finding(
            "prefill/decode disaggregation is not validated on the AMD path",
            block,
            "remove the `disaggregation` block, or deploy on a Blackwell accelerator",
            label="AMD has no P/D disaggregation",
            fix=fix,
        )


@recipe_only
@rule(
    "SPK206",
    "error",
    "multimodal input on the AMD path",
    checks="Any modality other than `text` on an AMD accelerator.",
    basis="The AMD commands are text-only: they do not provide the model's image, audio and video path.",
)
def amd_text_only(plan: Plan) -> Iterator[Finding]:
    mods = plan.setting("modalities")
    if not plan.vendor.multimodal and set(mods.value) - {"text"}:
        extra = ", ".join(m for m in mods.value if m != "text")
        yield Finding(
            f"the AMD path serves text only, not {extra}",
            mods,
            "use `modalities = [text]`, or the NVIDIA path for multimodal serving",
            label="multimodal",
            replace_with="[text]",
        )


def _required_setting_rule(req: catalog.RequiredSetting) -> None:
    """SPK207-SPK209, generated from the catalog's `required_settings`: one setting a vendor's
    commands always set to `good`, raised when the spec writes `bad` on that vendor's path."""

    def check(plan: Plan) -> Iterator[Finding]:
        s = plan.setting(req.key)
        if plan.path == req.vendor and s is not None and str(s.value).lower() == req.bad:
            yield Finding(req.message, s, f"use `{req.key} = {req.good}`", replace_with=req.good)

    recipe_only(
        rule(
            req.code,
            "error",
            req.title,
            checks=f"`{req.key} = {req.bad}` on an {req.vendor.upper()} accelerator.",
            basis=req.basis,
        )(check)
    )


for _required in catalog.load().recipe.required_settings:
    _required_setting_rule(_required)


@recipe_only
@rule(
    "SPK216",
    "error",
    "more than one node on the AMD path",
    checks="An AMD deployment on more than one node. Not reported beside SPK205: prefill/decode "
    "pools are two nodes, and SPK205 already says they are not validated on AMD.",
    basis="The recipe's AMD path is validated on one eight-GPU node: no data parallelism, no "
    "prefill/decode disaggregation.",
    suppressed_by=("SPK205",),
)
def amd_one_node(plan: Plan) -> Iterator[Finding]:
    if not plan.vendor.multi_node and plan.total_nodes > 1:
        at = nodes_resolved(plan)
        yield Finding(
            f"the AMD path is validated on one node, found {plan.total_nodes}",
            at,
            "deploy on one node (`nodes = 1`)",
            replace_with="1" if at.explicit else None,
        )
