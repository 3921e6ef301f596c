"""Plan-level name rules (SPK118-SPK119): what a deployment must say that the schema alone cannot check."""

from __future__ import annotations

from collections.abc import Iterator

from spark_dsl.plan.model import Plan
from spark_dsl.rules import catalog_texts as facts
from spark_dsl.rules.registry import Finding, rule
from spark_dsl.rules.suggest import add_to_body_of


@rule(
    "SPK118",
    "error",
    "checkpoint required outside the recipe",
    checks=lambda: (
        f"An accelerator outside the recipe ({facts.unvalidated_gpus()}) gets no default "
        "checkpoint: the deployment must choose one. The help lists the checkpoints whose weights fit one node."
    ),
    basis="The recipe's defaults are validated only on its own accelerators; guessing weights for an "
    "unvalidated one would hide that choice.",
)
def checkpoint_required(plan: Plan) -> Iterator[Finding]:
    acc = plan.accelerator
    # The recipe's model on an accelerator of its path (the others get the model's first checkpoint).
    if plan.setting("checkpoint") is not None or acc.memory_gb is None:
        return
    budget = acc.memory_gb * plan.value("gpus") * plan.thresholds.gpu_memory_utilization
    fitting = [c for c in plan.model.checkpoints.values() if c.weights_gb < budget and (not c.needs_fp4 or acc.fp4)]
    fits = [c.id for c in fitting]
    listing = ", ".join(f"`{c}`" for c in fits) or "none (the weights need more memory than one node has)"
    # The fix picks the smallest that fits: the most room left for KV cache.
    smallest = min(fitting, key=lambda c: c.weights_gb).id if fitting else None
    yield Finding(
        f"accelerator `{acc.id}` is outside the recipe, so there is no default checkpoint",
        plan.setting("accelerator"),
        f"set `checkpoint`; checkpoints that fit {plan.value('gpus')} x {acc.display_name}: {listing}",
        label="no default checkpoint here",
        fix=add_to_body_of(plan, None, "checkpoint", smallest, f"set `checkpoint = {smallest}`") if smallest else None,
    )


@rule(
    "SPK119",
    "error",
    "modalities without text",
    checks="`modalities` must include `text`.",
    basis="Every launch serves the language model; vLLM's switches only turn the other modalities "
    "off (`--language-model-only`, `--limit-mm-per-prompt`).",
)
def text_modality(plan: Plan) -> Iterator[Finding]:
    mods = plan.setting("modalities")
    if "text" not in mods.value:
        yield Finding(
            "`modalities` must include `text`",
            mods,
            f"use `modalities = [{', '.join(('text', *mods.value))}]`",
            replace_with=f"[{', '.join(('text', *mods.value))}]",
        )
