"""Safety rules (SPK902-SPK904, SPK908): escape hatches that would fight the compiler or silently do nothing,
and values a platform would take apart."""

from __future__ import annotations

from collections.abc import Iterator

from spark_dsl.diagnostics import Fix, replacement
from spark_dsl.edits import entry_at, list_item_removal, remove_entry
from spark_dsl.plan import extra_args
from spark_dsl.plan.extra_args import ExtraOption
from spark_dsl.plan.host_cpus import THREADS_BIND_ENV
from spark_dsl.plan.managed import HOST_ENV, HOST_FLAGS, MANAGED_ENV, MANAGED_FLAGS, RENDEZVOUS_ENV, RENDEZVOUS_FLAGS
from spark_dsl.plan.model import Plan, Resolved
from spark_dsl.rules.registry import Finding, rule
from spark_dsl.syntax import ast
from spark_dsl.values import Setting

# The setting of the spec that writes each managed flag (by vLLM's destination name).
_KEY_OF = {
    "model": "`model` (or `runtime.model_path`)",
    "served_model_name": "`serve.served_model_name`",
    "host": "`serve.host`",
    "port": "`serve.port`",
    "api_key": "`serve.api_key`",
    "hf_token": "`runtime.hf_token`",
    "tensor_parallel_size": "`parallel` (`tp(N)`)",
    "enable_expert_parallel": "`parallel` (`+ ep`)",
    "data_parallel_size": "`parallel` (`dp(N)`) and `nodes`",
    "pipeline_parallel_size": "`parallel` (`pp(N)`) and `nodes`",
    "quantization": "`checkpoint`",
    "max_model_len": "`max_model_len`",
    "max_num_seqs": "`max_num_seqs`",
    "kv_cache_dtype": "`kv_cache_dtype`",
    "gpu_memory_utilization": "`gpu_memory_utilization`",
    "enable_prefix_caching": "`prefix_caching`",
    "enable_chunked_prefill": "`chunked_prefill`",
    "attention_backend": "`attention`",
    "attention_config": "`attention`",
    "language_model_only": "`modalities`",
    "limit_mm_per_prompt": "`modalities`",
    "speculative_config": "`speculative`",
    "kv_transfer_config": "the `disaggregation` block",
    "kv_cache_memory_bytes": "`runtime.host_memory` (each rank's KV cache is what it leaves)",
    "shutdown_timeout": "`serve.drain`",
}


def _extra_args(plan: Plan) -> Setting | None:
    return plan.serve.setting("extra_args")


def _spans_nodes_in_stages(plan: Plan) -> bool:
    """A pipeline over nodes: the compiler writes vLLM's multi-node rendezvous for it."""
    return any(pool.pp > 1 and pool.nodes > 1 for pool in plan.pools)


def _managed_flags(plan: Plan) -> tuple[str, ...]:
    """The flags the compiler writes for this plan: the rendezvous only for a pipeline over nodes,
    the KV cache size only on vLLM's CPU backend."""
    flags = MANAGED_FLAGS + RENDEZVOUS_FLAGS if _spans_nodes_in_stages(plan) else MANAGED_FLAGS
    return flags + HOST_FLAGS if plan.accelerator.on_host else flags


def _is_managed(token: str, flags: tuple[str, ...]) -> bool:
    """Whether a flag sets what a managed flag sets, under any of vLLM's spellings."""
    dest = extra_args.destination(token)
    return extra_args.canonical(token) in flags or (dest is not None and dest in map(extra_args.destination, flags))


@rule(
    "SPK902",
    "error",
    "extra_args sets a flag the compiler manages",
    checks="A flag in `serve.extra_args` that the compiler already decides (tensor parallelism, "
    "context length, speculative decoding, ports, ...). The compiler's value and yours would both "
    "reach vLLM, and the last one would silently win.",
    basis="Every managed flag comes from a checked setting; setting it behind the checker's back "
    "would bypass the recipe's rules.",
)
def managed_flags(plan: Plan) -> Iterator[Finding]:
    setting = _extra_args(plan)
    if setting is None:
        return
    items, flags = _items(plan, setting), _managed_flags(plan)
    # The plan's one reading of the list (plan/extra_args.py): each option with the items it takes.
    for option in extra_args.read(tuple(setting.value)).options:
        if _is_managed(option.name, flags):
            index, token = option.index, setting.value[option.index]
            yield Finding(
                f"`{token}` in `extra_args` is a flag the compiler manages",
                _at_item(setting, items, index),
                _managed_help(plan, option),
                label="managed flag",
                fix=_drop_items(plan, setting, items, index, option.count, f"remove `{token}` from `extra_args`"),
            )


def _destination(token: str) -> tuple[str | None, bool, bool]:
    """vLLM's destination of a flag, whether it is the negative spelling, and whether it takes a value."""
    from spark_dsl.vllm_flags import flag_table

    dest = extra_args.destination(token)
    if dest is None:
        return None, False, False
    action = flag_table()["actions"][dest]
    negative = extra_args.canonical(token) in action["negative"]
    return dest, negative, bool(action["takes_value"]) and not negative


def _managed_help(plan: Plan, option: ExtraOption) -> str:
    """Remove it; set the spec's matching key instead, unless the recipe forbids that key here:
    the help must not send a user to a key that is an error on the path (the catalog's `forbids`)."""
    dest, negative = option.dest, option.negative
    forbidden = next((f for f in plan.vendor.forbids if (f.flag, f.negative) == (dest, negative)), None)
    if forbidden is not None:
        return f"remove it: {forbidden.reason} ({forbidden.code})"
    key = _KEY_OF.get(dest or "")
    if dest in {flag.lstrip("-").replace("-", "_") for flag in RENDEZVOUS_FLAGS}:
        return "remove it: the compiler writes vLLM's multi-node rendezvous for a pipeline over nodes"
    if key is None:
        return "remove it: the compiler writes it for every launch"
    return f"remove it, and set {key} instead (see `spark explain SPK902`)"


def _with_value(tokens: tuple[str, ...], index: int) -> int:
    """How many items a flag takes in the list: itself, and its value when it takes one apart."""
    token = tokens[index]
    _, _, takes_value = _destination(token)
    following = index + 1 < len(tokens) and not tokens[index + 1].startswith("-")
    return 2 if takes_value and "=" not in token and following else 1


def _items(plan: Plan, setting: Setting) -> tuple[ast.Value, ...] | None:
    """The list items of `extra_args` as written, when they are in the deployment's own file."""
    source = plan.deployment.source
    if setting.origin.file != source.name:
        return None
    entry = entry_at(source.module, setting.origin.span)
    written = entry.value if isinstance(entry, ast.Attribute) else None
    if isinstance(written, ast.ListValue) and len(written.items) == len(setting.value):
        return written.items
    return None


def _at_item(setting: Setting, items: tuple[ast.Value, ...] | None, index: int) -> Resolved:
    """The list item that breaks the rule, else the whole list (in a profile's file)."""
    resolved = Resolved.from_setting(setting)
    if items is None or resolved.location is None:
        return resolved
    from msgspec.structs import replace

    from spark_dsl.span import Location

    return replace(resolved, location=Location(resolved.location.file, items[index].span))


def _drop_items(
    plan: Plan, setting: Setting, items: tuple[ast.Value, ...] | None, index: int, count: int, message: str
) -> Fix | None:
    if items is None:
        return None
    return replacement(message, setting.origin.file, list_item_removal(items, index, count), "")


@rule(
    "SPK903",
    "warning",
    "extra_args flag unknown to the pinned vLLM",
    checks="A flag in `serve.extra_args` that vLLM's serve parser of the pinned release does not "
    "know, misspells, abbreviates, or gives a value it would reject.",
    basis="The flag table in spark_dsl/data/vllm_flags.json was read from vLLM's own parser; vLLM "
    "would refuse to start with an unknown flag.",
)
def unknown_flags(plan: Plan) -> Iterator[Finding]:
    setting = _extra_args(plan)
    if setting is None or not setting.value:
        return
    from spark_dsl.vllm_flags import check_argv

    items = _items(plan, setting)
    # Each option's first item, found once: a search per problem was quadratic in a long list.
    first: dict[str, int] = {}
    for i, t in enumerate(setting.value):
        first.setdefault(t.split("=", 1)[0], i)
    for problem in check_argv(["vllm", "serve", "model", *setting.value]):
        index = first.get(problem.option)
        fix = None
        help_text = "check the flag against `vllm serve --help=all` of the pinned release"
        if index is not None:
            token = setting.value[index]
            suggestion = problem.suggestion
            if suggestion is not None and not _is_managed(suggestion, _managed_flags(plan)):
                # The full spelling, any `=value` kept; a spelling the compiler manages is SPK902's.
                written = suggestion + token[len(problem.option) :]
                help_text = f"write `{suggestion}`"
                if items is not None:
                    fix = replacement(help_text, setting.origin.file, items[index].span, _quoted(written))
            else:
                help_text += ", or remove it"
                count = _with_value(setting.value, index)
                fix = _drop_items(plan, setting, items, index, count, f"remove `{token}` from `extra_args`")
        yield Finding(
            f"`{problem.option}` in `extra_args`: {problem.message}",
            _at_item(setting, items, index) if index is not None else Resolved.from_setting(setting),
            help_text,
            fix=fix,
        )


def _quoted(text: str) -> str:
    from spark_dsl.format.values import quote

    return quote(text)


@rule(
    "SPK904",
    "error",
    "serve.env sets a variable the compiler manages",
    checks="A variable in `serve { env { ... } }` that the compiler sets itself "
    "(`VLLM_USE_RUST_FRONTEND`, `VLLM_USE_V2_MODEL_RUNNER`, `VLLM_API_KEY`, `HF_TOKEN`, ...).",
    basis="Those variables follow checked settings (`frontend`, `model_runner`, `serve.api_key`, "
    "`runtime.hf_token`); `VLLM_ATTENTION_BACKEND` is ignored by vLLM 0.33 altogether.",
)
def managed_env(plan: Plan) -> Iterator[Finding]:
    source = plan.deployment.source
    managed = MANAGED_ENV + RENDEZVOUS_ENV if _spans_nodes_in_stages(plan) else MANAGED_ENV
    if plan.accelerator.on_host:  # vLLM's CPU backend: the KV cache, and the binding cpu_cores writes
        managed += HOST_ENV + ((THREADS_BIND_ENV,) if plan.runtime.value("cpu_cores") else ())
    for name, setting in plan.serve.block("env").entries().items():
        if name in managed:
            mine = setting.origin.file == source.name
            yield Finding(
                f"`{name}` in `serve.env` is a variable the compiler manages",
                Resolved.from_setting(setting, key_span=True),
                "remove it; the compiler sets it from the spec's settings (see `spark explain SPK904`)",
                label="managed variable",
                fix=remove_entry(f"remove `{name}`", source, setting.origin.key_span) if mine else None,
            )


def _container(plan: Plan) -> str | None:
    """The container runtime of a declared Slurm target, if it mounts anything."""
    target = plan.targets.get("slurm")
    kind = target.value("container") if target is not None else "none"
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
)
def mount_separators(plan: Plan) -> Iterator[Finding]:
    container = _container(plan)
    setting = plan.runtime.setting("model_cache")
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
