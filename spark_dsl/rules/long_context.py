"""The context length (SPK211-SPK215): the model's own limit, and the recipe's long-context
configuration on AMD (checkpoint, plain tensor parallelism, sequences and KV cache dtype)."""

from __future__ import annotations

from collections.abc import Iterator

from spark_dsl.plan.model import Plan, Resolved
from spark_dsl.rules import catalog_texts as facts
from spark_dsl.rules.capacity import max_num_seqs_allowed
from spark_dsl.rules.registry import Finding, recipe_only, rule
from spark_dsl.rules.suggest import replace_or_add
from spark_dsl.units import format_count


def _tokens(n: int) -> str:
    return f"{format_count(n)} ({n:,} tokens)"


def _on_long_context(what: str) -> str:
    """What SPK211-SPK214 check, after the recipe's threshold of long context on AMD."""
    return f"On the AMD path, `max_model_len` above {facts.default_context()} with {what}."


def _long_context_checkpoints() -> tuple[str, ...]:
    return facts.thresholds().long_context_checkpoints


def _either(names: tuple[str, ...], upper: bool = False) -> str:
    """`` `mxfp4` ``, or `MXFP4` in a title: the names, one of which the recipe allows."""
    return facts.spelled((n.upper() if upper else f"`{n}`" for n in names), "or")


def _long_context_notes(plan: Plan) -> tuple[tuple[str, Resolved], ...]:
    """The setting that selects the long-context configuration: none without `max_model_len`."""
    mml = plan.setting("max_model_len")
    if mml is None:
        return ()
    return (
        (
            f"max_model_len = {format_count(mml.value)} selects the long-context configuration "
            f"(above {format_count(plan.thresholds.default_context)})",
            mml,
        ),
    )


@recipe_only
@rule(
    "SPK211",
    "error",
    lambda: f"long context on AMD needs the {_either(_long_context_checkpoints(), upper=True)} checkpoint",
    checks=lambda: _on_long_context(f"a checkpoint other than {_either(_long_context_checkpoints())}"),
    basis=lambda: (
        "The recipe's one-million-token configuration on AMD is validated with "
        f"{facts.spelled(map(facts.checkpoint, facts.thresholds().long_context_checkpoints), 'or')} only."
    ),
)
def long_context_mxfp4(plan: Plan) -> Iterator[Finding]:
    ckpt = plan.setting("checkpoint")
    allowed = plan.thresholds.long_context_checkpoints
    if plan.vendor.long_context_restricted and plan.long_context and ckpt is not None and ckpt.value not in allowed:
        only = " or ".join(f"`{c}`" for c in allowed)
        yield Finding(
            f"long context on AMD is validated with {only} only, found `{ckpt.value}`",
            ckpt,
            f"use `checkpoint = {allowed[0]}`, or `max_model_len = {format_count(plan.thresholds.default_context)}`",
            notes=_long_context_notes(plan),
            replace_with=allowed[0],
        )


@recipe_only
@rule(
    "SPK212",
    "error",
    "long context on AMD is validated with plain tensor parallelism",
    checks=lambda: _on_long_context("expert parallelism on"),
    basis="The recipe's long-context configuration uses plain tensor parallelism.",
)
def long_context_plain_tp(plan: Plan) -> Iterator[Finding]:
    if plan.vendor.long_context_restricted and plan.long_context:
        for pool in plan.pools:
            if pool.ep:
                yield Finding(
                    "long context on AMD is validated with plain tensor parallelism",
                    pool.parallel,
                    "use `parallel = tp`",
                    label="expert parallelism is on",
                    notes=_long_context_notes(plan),
                    replace_with="tp",
                )
                return


@recipe_only
@rule(
    "SPK213",
    "error",
    lambda: f"long context on AMD allows at most {facts.thresholds().long_context_max_num_seqs} sequences",
    checks=lambda: _on_long_context(f"`max_num_seqs` unset or above {facts.thresholds().long_context_max_num_seqs}"),
    basis=lambda: (
        "The recipe's long-context configuration runs no more than "
        f"{facts.thresholds().long_context_max_num_seqs} sequences."
    ),
)
def long_context_seqs(plan: Plan) -> Iterator[Finding]:
    if not plan.vendor.long_context_restricted or not plan.long_context:
        return
    limit = plan.thresholds.long_context_max_num_seqs
    seqs = plan.setting("max_num_seqs")
    allowed = max_num_seqs_allowed(plan)  # what SPK304 allows too, so the two never disagree
    if seqs is None:
        mml = plan.setting("max_model_len")
        yield Finding(
            f"long context on AMD needs `max_num_seqs` of at most {limit}; it is unset (vLLM's default is higher)",
            mml,
            f"set `max_num_seqs = {allowed}`",
            label="long-context configuration",
            fix=replace_or_add(plan, "max_num_seqs", str(allowed), f"set `max_num_seqs = {allowed}`"),
        )
    elif seqs.value > limit:
        yield Finding(
            f"long context on AMD allows at most {limit} sequences, found `max_num_seqs = {seqs.value}`",
            seqs,
            f"set `max_num_seqs = {allowed}`",
            notes=_long_context_notes(plan),
            replace_with=str(allowed),
        )


@recipe_only
@rule(
    "SPK214",
    "error",
    "long context on AMD uses the default or FP8 KV cache",
    checks=lambda: _on_long_context(
        f"`kv_cache_dtype` other than {_either(facts.thresholds().long_context_kv_dtypes)} (vLLM's `fp8` is E4M3)"
    ),
    basis="The recipe's long-context configuration runs with either the default or the FP8 KV cache.",
)
def long_context_kv_dtype(plan: Plan) -> Iterator[Finding]:
    kv = plan.setting("kv_cache_dtype")
    allowed = plan.thresholds.long_context_kv_dtypes
    if plan.vendor.long_context_restricted and plan.long_context and kv.value not in allowed:
        # The first allowed dtype that is not vLLM's default: the one the recipe names.
        fp8 = next(d for d in allowed if d != "auto")
        yield Finding(
            f"long context on AMD uses the default or {fp8.upper()} (E4M3) KV cache, found `{kv.value}`",
            kv,
            f"use `kv_cache_dtype = {fp8}`",
            notes=_long_context_notes(plan),
            replace_with=fp8,
        )


# Every model: its own `max_context` (docs/models.md).
@rule(
    "SPK215",
    "error",
    "max_model_len above the model's context",
    checks=lambda: (
        "`max_model_len` larger than the model's native context "
        f"({facts.number(facts.model().max_context)} tokens for {facts.model().display_name})."
    ),
    basis="The model supports a one-million-token context; vLLM refuses a longer limit.",
)
def within_model_context(plan: Plan) -> Iterator[Finding]:
    mml = plan.setting("max_model_len")
    if mml is not None and mml.value > plan.model.max_context:
        yield Finding(
            f"max_model_len {_tokens(mml.value)} exceeds the model's context of {_tokens(plan.model.max_context)}",
            mml,
            f"use `max_model_len = {format_count(plan.model.max_context)}` or less",
            replace_with=format_count(plan.model.max_context),
        )
