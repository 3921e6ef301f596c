"""Safety rules (SPK902-SPK904, SPK908): escape hatches that would fight the compiler or silently do nothing,
and values a platform would take apart."""

from __future__ import annotations

from collections.abc import Iterator

from spark_dsl.plan.launches import MANAGED_ENV, MANAGED_FLAGS
from spark_dsl.plan.model import Plan, Resolved
from spark_dsl.rules.registry import Finding, rule
from spark_dsl.values import Setting


def _extra_args(plan: Plan) -> Setting | None:
    serve = plan.deployment.body.block("serve")
    return serve.get("extra_args") if serve else None


def _flag_name(token: str) -> str:
    """`--max_model_len=8` -> `--max-model-len`; `-sc.method` -> `-sc` (vLLM's dotted JSON keys)."""
    name = token.split("=", 1)[0].split(".", 1)[0]
    return "--" + name[2:].replace("_", "-") if name.startswith("--") else name


def _is_managed(token: str) -> bool:
    """Whether a flag sets what a managed flag sets, under any of vLLM's spellings."""
    from spark_dsl.vllm_flags import flag_table

    options: dict[str, str] = flag_table()["options"]
    name = _flag_name(token)
    managed = {options.get(f, f) for f in MANAGED_FLAGS}
    return name in MANAGED_FLAGS or options.get(name) in managed


@rule(
    "SPK902",
    "error",
    "extra_args sets a flag the compiler manages",
    checks="A flag in `serve.extra_args` that the compiler already decides (tensor parallelism, "
    "context length, speculative decoding, ports, ...). The compiler's value and yours would both "
    "reach vLLM, and the last one would silently win.",
    basis="Every managed flag comes from a checked setting; setting it behind the checker's back "
    "would bypass the recipe's rules.",
    failing='serve {\n  extra_args = ["--max-model-len", "65536"]\n}',
    fixed="max_model_len = 64K",
)
def managed_flags(plan: Plan) -> Iterator[Finding]:
    setting = _extra_args(plan)
    if setting is None:
        return
    for token in setting.value:
        if token.startswith("-") and _is_managed(token):
            yield Finding(
                f"`{token}` in `extra_args` is a flag the compiler manages",
                Resolved.from_setting(setting),
                "set the matching key of the spec instead (see `spark explain SPK902`)",
                label="managed flag",
            )


@rule(
    "SPK903",
    "warning",
    "extra_args flag unknown to the pinned vLLM",
    checks="A flag in `serve.extra_args` that vLLM's serve parser of the pinned release does not "
    "know, misspells, abbreviates, or gives a value it would reject.",
    basis="The flag table in spark_dsl/data/vllm_flags.json was read from vLLM's own parser; vLLM "
    "would refuse to start with an unknown flag.",
    failing='serve {\n  extra_args = ["--enable-log-request"]\n}',
    fixed='serve {\n  extra_args = ["--enable-log-requests"]\n}',
)
def unknown_flags(plan: Plan) -> Iterator[Finding]:
    setting = _extra_args(plan)
    if setting is None or not setting.value:
        return
    from spark_dsl.vllm_flags import check_argv

    for problem in check_argv(["vllm", "serve", "model", *setting.value]):
        yield Finding(
            f"`{problem.option}` in `extra_args`: {problem.message}",
            Resolved.from_setting(setting),
            "check the flag against `vllm serve --help=all` of the pinned release",
        )


@rule(
    "SPK904",
    "error",
    "serve.env sets a variable the compiler manages",
    checks="A variable in `serve { env { ... } }` that the compiler sets itself "
    "(`VLLM_USE_RUST_FRONTEND`, `VLLM_USE_V2_MODEL_RUNNER`, `VLLM_API_KEY`, `HF_TOKEN`, ...).",
    basis="Those variables follow checked settings (`frontend`, `model_runner`, `serve.api_key`, "
    "`runtime.hf_token`); `VLLM_ATTENTION_BACKEND` is ignored by vLLM 0.33 altogether.",
    failing='serve {\n  env { VLLM_USE_RUST_FRONTEND = "1" }\n}',
    fixed="frontend = rust",
)
def managed_env(plan: Plan) -> Iterator[Finding]:
    serve = plan.deployment.body.block("serve")
    env = serve.block("env") if serve else None
    if env is None:
        return
    for name, setting in env.settings.items():
        if name in MANAGED_ENV:
            yield Finding(
                f"`{name}` in `serve.env` is a variable the compiler manages",
                Resolved.from_setting(setting, key_span=True),
                "set the matching key of the spec instead (see `spark explain SPK904`)",
                label="managed variable",
            )


def _container(plan: Plan) -> str | None:
    """The container runtime of a declared Slurm target, if it mounts anything."""
    target = plan.deployment.body.labelled("target").get("slurm")
    kind = target.value("container", "none") if target is not None else "none"
    return None if kind == "none" else str(kind)


@rule(
    "SPK908",
    "error",
    "model cache path a mount list would split",
    checks="`runtime.model_cache` holds `,` or `:` while `target slurm` runs in a container "
    "(`container = pyxis` or `apptainer`). The path goes into a mount list, "
    "`--container-mounts=SRC:DST` (pyxis) or `--bind=SRC:DST` (Apptainer).",
    basis="Both split the list at `,` (between mounts) and at `:` (between source, target and "
    "flags), with no way to escape either: the cache would be mounted from the wrong place, or "
    "the job would fail to start.",
    failing='runtime {\n  model_cache = "/scratch/models,v2"\n}\ntarget slurm {\n  container = pyxis\n}',
    fixed='runtime {\n  model_cache = "/scratch/models-v2"\n}\ntarget slurm {\n  container = pyxis\n}',
)
def mount_separators(plan: Plan) -> Iterator[Finding]:
    container = _container(plan)
    runtime = plan.deployment.body.block("runtime")
    setting = runtime.get("model_cache") if runtime is not None else None
    if container is None or setting is None:
        return
    found = sorted({ch for ch in setting.value if ch in ",:"})
    if found:
        listed = " and ".join(f"`{ch}`" for ch in found)
        yield Finding(
            f'`model_cache` "{setting.value}" holds {listed}, which the {container} mount list splits at',
            Resolved.from_setting(setting),
            "move the cache to a path without `,` and `:` (or link one to it)",
            label="split by the mount list",
        )
