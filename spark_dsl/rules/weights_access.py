"""Whether the machines that serve can get the weights (SPK515, SPK516): a folder only the machine
that wrote the spec has, and a gated Hub repository with no token to download it."""

from __future__ import annotations

from collections.abc import Iterator

from spark_dsl.plan.model import Plan
from spark_dsl.rules.registry import Finding, rule
from spark_dsl.rules.registry import shown as _shown
from spark_dsl.targets import registry as target_table

# The one line a spec adds for a token (docs/keys.md: `runtime.hf_token` is a secret reference).
TOKEN_LINE = 'runtime { hf_token = secret("hf-token") }'


def _served_checkpoint(plan: Plan) -> tuple[str, bool] | None:
    """The repository vLLM downloads and whether the Hub gates it; None when `runtime.model_path`
    names the weights instead (the spec says where they are: nothing is downloaded by name)."""
    if plan.checkpoint is None or plan.runtime.value("model_path"):
        return None
    source = plan.model.checkpoints.get(plan.checkpoint.converts_from or "") or plan.checkpoint
    return plan.checkpoint.repository, plan.checkpoint.gated or source.gated


@rule(
    "SPK515",
    "warning",
    "weights at a path of this machine, served by a target that runs elsewhere",
    checks="The checkpoint's `repository` is an absolute path (`spark model import` of a folder "
    "writes the folder's path unless `--repo` names the Hub id) while the deployment builds a "
    "target whose launches run in a container, a pod or on a cluster's nodes: each target says so "
    "in its declaration (`Target.elsewhere`).",
    basis="vLLM serves an absolute path from the file system it runs on; a pod, a Compose service "
    "or a Slurm job sees its image, its volumes and its nodes' folders, not the folder of the "
    "machine that ran `spark model import`.",
)
def local_path_elsewhere(plan: Plan) -> Iterator[Finding]:
    served = _served_checkpoint(plan)
    if served is None or not served[0].startswith("/"):
        return
    away = [t for t in target_table.elsewhere_targets() if plan.builds(t.kind)]
    if away:
        target = away[0]
        yield Finding(
            f"model `{plan.model.id}` serves {_shown(served[0])}, a folder of the machine that wrote the "
            f"spec, but `target {target.kind}` runs elsewhere: {target.elsewhere}",
            plan.setting("model"),
            'name the Hub repository in the model\'s checkpoint (`repository = "org/name"`, or '
            "`spark model import PATH --repo ORG/NAME`), or set `runtime { model_path }` to where "
            "the serving machines keep the weights",
            label="a folder of this machine",
        )


@rule(
    "SPK516",
    "warning",
    "gated model without a Hugging Face token",
    checks="The served checkpoint's repository is gated on the Hugging Face Hub (the catalog's "
    "`gated` fact, cited from the model card) and the deployment sets no `runtime.hf_token` and "
    "no `runtime.model_path`.",
    basis="The Hub serves a gated repository's files only to an account its publisher granted "
    "access, identified by its token: vLLM's download without `HF_TOKEN` fails with 401, after "
    "the deployment has started.",
)
def gated_without_token(plan: Plan) -> Iterator[Finding]:
    served = _served_checkpoint(plan)
    if served is None or not served[1] or plan.runtime.value("hf_token") is not None:
        return
    yield Finding(
        f"model `{plan.model.id}` downloads {_shown(served[0])}, a gated Hugging Face repository, "
        "and the deployment gives no `runtime.hf_token`",
        plan.setting("model"),
        f"add `{TOKEN_LINE}`: a secret holding the token of an account granted access on "
        f"https://huggingface.co/{served[0]}",
        label="gated: needs a token",
    )
