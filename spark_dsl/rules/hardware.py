"""What the hardware runs (SPK201, SPK202, SPK222): the accelerators the recipe validates, the
checkpoints each vendor validates and the FP4 hardware NVFP4 needs, and each vendor's attention backends."""

from __future__ import annotations

from collections.abc import Iterator

from spark_dsl import catalog
from spark_dsl.diagnostics import Severity
from spark_dsl.plan.model import Plan
from spark_dsl.rules import catalog_texts as facts
from spark_dsl.rules.registry import Finding, recipe_only, rule


def _spelled_list(ids: list[str]) -> str:
    """`A, B and C` in upper case, as the messages name accelerators."""
    names = [i.upper() for i in ids]
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]


def _validated_accelerators() -> str:
    return _spelled_list([a.id for a in catalog.load().validated_accelerators()])


def _fp4_accelerators() -> str:
    """The validated accelerators with FP4, comma-separated (`B200, B300, ...`)."""
    return ", ".join(a.id.upper() for a in catalog.load().validated_accelerators() if a.fp4)


def _fp4_checkpoints() -> str:
    """`NVFP4`: the checkpoints that need FP4 hardware."""
    return facts.spelled(catalog.load().fp4_checkpoints(), "or").upper()


def _validated_checkpoints(path: str) -> list[str]:
    return list(catalog.load().validated_checkpoints(path))


def _runs_on(checkpoint: str, plan: Plan) -> bool:
    """Whether the accelerator has the hardware the checkpoint's format needs (FP4 for NVFP4)."""
    return plan.accelerator.fp4 or not catalog.load().needs_fp4(checkpoint)


def _downgrade(plan: Plan) -> Severity | None:
    return Severity.WARNING if plan.value("allow_unvalidated") else None


_AT_RISK = "to proceed at your own risk"


@recipe_only
@rule(
    "SPK201",
    "error",
    "accelerator outside the recipe's validated set",
    checks=lambda: (
        f"The accelerator is one the catalog knows ({facts.unvalidated_gpus()}) but the recipe "
        "does not validate. With `allow_unvalidated = true` this is a warning."
    ),
    basis=lambda: (
        f"The recipe validates Muse Spark Open on {facts.validated_by_generation()} only. Other "
        "accelerators take their vendor's path, untested."
    ),
)
def accelerator_validated(plan: Plan) -> Iterator[Finding]:
    if not plan.accelerator.validated:
        validated = plan.vendor.validated_alternative
        yield Finding(
            f"accelerator `{plan.accelerator.id}` is not validated for Muse Spark Open",
            plan.setting("accelerator"),
            f"use `accelerator = {validated}` (validated: {_validated_accelerators()})"
            # Once set, naming it again would be help that leads back to the same spec.
            + ("" if plan.value("allow_unvalidated") else f", or set `allow_unvalidated = true` {_AT_RISK}"),
            label="outside the recipe",
            severity=_downgrade(plan),
            replace_with=validated,
        )


@recipe_only
@rule(
    "SPK202",
    "error",
    "checkpoint not validated on this vendor",
    checks=lambda: (
        "The checkpoint is not one the recipe validates on the accelerator's vendor: "
        + "; ".join(f"{v.upper()} validates {facts.validated_checkpoints(v)}" for v in facts.validating_vendors())
        + f". `allow_unvalidated = true` makes it a warning, except {_fp4_checkpoints()} on an accelerator "
        f"without FP4 support (anything before {facts.fp4_generations()}), which cannot run at all."
    ),
    basis=lambda: (
        f"{facts.validated_checkpoints('nvidia')} is the recipe's {facts.fp4_generations()} path; the AMD "
        f"commands list {facts.validated_checkpoints('amd')}."
    ),
)
def checkpoint_validated(plan: Plan) -> Iterator[Finding]:
    ckpt = plan.setting("checkpoint")
    # No recipe path on the accelerator's vendor (vLLM's CPU backend): SPK201 says it is outside.
    if ckpt is None or plan.checkpoint is None or not catalog.load().has_path(plan.path):
        return
    valid = _validated_checkpoints(plan.path)
    runnable = [c for c in valid if _runs_on(c, plan)]
    if not _runs_on(ckpt.value, plan):
        yield Finding(
            f"checkpoint `{ckpt.value}` cannot run on `{plan.accelerator.id}`: it has no FP4 support",
            ckpt,
            f"use `checkpoint = {runnable[0]}`"
            if runnable
            else f"use a Blackwell accelerator for {ckpt.value.upper()}, or another checkpoint",
            label="needs Blackwell FP4",
            replace_with=runnable[0] if runnable else None,
        )
    elif ckpt.value not in valid:
        listing = ", ".join(f"`{c}`" for c in valid)
        yield Finding(
            f"checkpoint `{ckpt.value}` is not validated on {plan.path.upper()} (validated: {listing})",
            ckpt,
            f"use `checkpoint = {runnable[0]}`"
            if runnable
            else f"{listing} needs a Blackwell accelerator ({_fp4_accelerators()}); "
            f"on `{plan.accelerator.id}` the checkpoint stays unvalidated",
            label="not validated here",
            replace_with=runnable[0] if runnable else None,
            severity=_downgrade(plan),
        )


@recipe_only
@rule(
    "SPK222",
    "error",
    "attention backend of the other vendor",
    checks="`attention = aiter` on the NVIDIA path, or `attention = flashinfer` on the AMD path.",
    basis="vLLM fact: AITER is ROCm's kernel library and FlashInfer is CUDA-only; each backend exists on one vendor.",
    # vLLM's CPU backend, where no backend of the recipe's exists: SPK236 says vLLM ignores it.
    suppressed_by=("SPK236",),
)
def attention_vendor(plan: Plan) -> Iterator[Finding]:
    att = plan.setting("attention")
    if att is None:
        return
    backend = catalog.load().attention_backend(att.value)
    if backend is not None and plan.path not in backend.vendors:
        other = plan.vendor.attention_instead
        yield Finding(
            f"attention backend `{backend.name}` does not exist on {plan.path.upper()} GPUs",
            att,
            f"use `attention = {other}`",
            replace_with=other,
        )
