"""What DSpark speculative decoding needs to run (SPK210, SPK221): Triton attention for adaptive
DSpark on the AMD path, and vLLM's V2 model runner."""

from __future__ import annotations

from collections.abc import Iterator

from spark_dsl import catalog
from spark_dsl.plan.model import Plan
from spark_dsl.rules.registry import Finding, recipe_only, rule


@recipe_only
@rule(
    "SPK210",
    "error",
    "adaptive DSpark without Triton attention on AMD",
    checks="On the AMD path, `speculative = dspark(adaptive)` with an explicit attention backend other "
    "than `triton` (`auto` included, since vLLM would pick AITER).",
    basis="Adaptive DSpark needs Triton attention: AITER's attention backend cannot run the "
    "variable-length decode graphs it captures.",
)
def adaptive_needs_triton(plan: Plan) -> Iterator[Finding]:
    spec, att = plan.setting("speculative"), plan.setting("attention")
    # The path's recipe names the one backend adaptive DSpark runs with (none: any backend).
    cat = catalog.load()
    needed = cat.path_defaults(plan.path).attention_with_adaptive_dspark if cat.has_path(plan.path) else None
    if needed is None or not (spec.value.mode == "dspark" and spec.value.adaptive):
        return
    if att is not None and att.explicit and att.value != needed:
        yield Finding(
            f"adaptive DSpark needs {needed.capitalize()} attention, found `{att.value}`",
            att,
            f"use `attention = {needed}`",
            label="cannot run adaptive DSpark's decode graphs",
            notes=(("speculative = dspark(adaptive) is set here", spec if spec.explicit else None),),
            replace_with=needed,
        )


@recipe_only
@rule(
    "SPK221",
    "error",
    "DSpark needs the V2 model runner",
    checks="`speculative = dspark` (on any path) with `model_runner = v1`.",
    basis="vLLM fact: vLLM 0.33 runs DSpark only on the V2 model runner; the V1 runner rejects it.",
)
def dspark_v2(plan: Plan) -> Iterator[Finding]:
    runner = plan.setting("model_runner")
    if runner is not None and runner.value == "v1" and plan.value("speculative").mode == "dspark":
        yield Finding(
            "speculative decoding with DSpark runs only on the V2 model runner",
            runner,
            "use `model_runner = v2`, or `speculative = none`",
            notes=(("speculative decoding is DSpark here", plan.setting("speculative")),),
            replace_with="v2",
        )
