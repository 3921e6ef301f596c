"""Target settings rules (SPK501-SPK512, SPK541-SPK543): what each declared target block can and cannot express."""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from functools import cache

from spark_dsl.diagnostics import Fix, replacement
from spark_dsl.edits import entry_at, remove_entry
from spark_dsl.patterns import lazy_regex
from spark_dsl.plan.model import Block, Plan, Resolved
from spark_dsl.rules import catalog_texts as facts
from spark_dsl.rules.registry import Finding, rule
from spark_dsl.rules.registry import shown as _shown
from spark_dsl.syntax import ast
from spark_dsl.targets import model_cache, sbatch_options
from spark_dsl.targets import registry as target_table
from spark_dsl.values import SecretRef, Setting, Volume


def _slurm_default(key: str) -> str:
    """The default of a `target slurm` key as docs spell it, from the Slurm target's declaration."""
    slurm = target_table.find("slurm")
    assert slurm is not None, "the Slurm rules need the Slurm target"
    return next(spec.default for spec in slurm.keys if spec.name == key)


_DEFAULT_TIME = _slurm_default("time")

DNS_LABEL = lazy_regex(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?")
DNS_SUBDOMAIN = lazy_regex(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")
LABEL_NAME = lazy_regex(r"([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]")
SLURM_NAME = lazy_regex(r"[A-Za-z0-9_.-]+")
COMPOSE_PROJECT = lazy_regex(r"[a-z0-9][a-z0-9_-]*")


def _target(plan: Plan, kind: str) -> Block | None:
    """The declared `target KIND` block (None when the spec does not declare it)."""
    return plan.targets.get(kind)


def _setting(plan: Plan, kind: str, key: str) -> Setting | None:
    """What the spec wrote for a key of `target KIND`."""
    return plan.target(kind).setting(key)


def _map(plan: Plan, kind: str, block: str) -> Mapping[str, Setting]:
    return plan.target(kind).block(block).entries()


def _fits(pattern: re.Pattern[str], text: str, limit: int) -> bool:
    return len(text) <= limit and pattern.fullmatch(text) is not None


def _suggest_label(text: str) -> str:
    """The closest DNS label: lowercase, other characters to `-`, trimmed."""
    cleaned = re.sub(r"[^a-z0-9-]+", "-", text.lower()).strip("-")[:63].strip("-")
    return cleaned or "default"


# ---- every target ---------------------------------------------------------------------------

# The targets that describe one host, as their modules declare them, for SPK501's explain text.
_SINGLE_HOST = [t.kind for t in target_table.single_host_targets()]
_FORCED_TOO = [f"`-t {k}`" for k in _SINGLE_HOST[1:]]


@rule(
    "SPK501",
    "error",
    "target cannot express this deployment",
    checks="A deployment that needs more than one node (data parallel over nodes, or "
    f"prefill/decode disaggregation) declares {target_table.either([f'`target {k}`' for k in _SINGLE_HOST])}, "
    f"which describe one host. `spark build -t {_SINGLE_HOST[0]}`"
    + (f" (or {target_table.either(_FORCED_TOO)})" if _FORCED_TOO else "")
    + " on such a deployment fails the same way.",
    basis="TARGETS.md: Compose runs one service per launch on a single host, and `vllm serve "
    "--config` holds one node's launch; more than one node is an SPK5xx error for both.",
)
def single_host_target(plan: Plan) -> Iterator[Finding]:
    if plan.total_nodes <= 1:
        return
    declared = set(plan.targets)
    multi = target_table.either([f"`target {k}`" for k in target_table.multi_node_kinds()])
    for target in target_table.single_host_targets():
        kind = target.kind
        body = _target(plan, kind)
        if body is not None:
            at = body.header(kind)
            yield Finding(
                f"`target {kind}` cannot run `{plan.name}`: it needs {plan.total_nodes} nodes and {target.single_host}",
                at,
                f"use {multi} for more than one node",
                label=f"{plan.total_nodes} nodes",
                fix=_multi_node_target(plan, at, declared),
            )
            declared.add(kind)


def _multi_node_target(plan: Plan, at: Resolved | None, declared: set[str]) -> Fix | None:
    """`target compose` becomes a multi-node target the deployment does not declare yet (settings
    of the old kind would not fit it, so only an empty block is relabelled); else it goes."""
    source = plan.deployment.source
    if at is None or at.location is None or at.location.file != source.name:
        return None
    block = entry_at(source.module, at.location.span)
    if not isinstance(block, ast.Block) or block.label is None:
        return None
    free = [k for k in target_table.multi_node_kinds() if k not in declared]
    if free and not block.body.entries:
        declared.add(free[0])
        return replacement(f"use `target {free[0]}`", source.name, block.label.span, free[0])
    return remove_entry(f"remove `target {block.label.name}`", source, at.location.span)


# ---- Kubernetes -----------------------------------------------------------------------------


@rule(
    "SPK502",
    "error",
    "namespace is not a Kubernetes name",
    checks="`target kubernetes { namespace = ... }` must be a DNS-1123 label: at most 63 lowercase "
    "letters, digits and `-`, starting and ending with a letter or digit.",
    basis="The API server rejects any other namespace name; the build would write objects that "
    "`kubectl apply` refuses.",
    target="kubernetes",
)
def kubernetes_namespace(plan: Plan) -> Iterator[Finding]:
    setting = _setting(plan, "kubernetes", "namespace")
    if setting is not None and not _fits(DNS_LABEL, setting.value, 63):
        fixed = _suggest_label(setting.value)
        yield Finding(
            f"namespace {_shown(setting.value)} is not a valid Kubernetes namespace",
            Resolved.from_setting(setting),
            f'use lowercase letters, digits and `-` (at most 63), e.g. `"{fixed}"`',
            label="not a DNS-1123 label",
            replace_with=f'"{fixed}"',
        )


def _qualified_name_problem(key: str) -> str | None:
    """Why a label/annotation key is not a Kubernetes qualified name, or None."""
    prefix, slash, name = key.rpartition("/")
    if slash and not _fits(DNS_SUBDOMAIN, prefix, 253):
        return f"its prefix `{prefix}` is not a DNS subdomain"
    if not _fits(LABEL_NAME, name, 63):
        return "its name part must be 1-63 letters, digits, `-`, `_` or `.`, starting and ending alphanumeric"
    return None


@rule(
    "SPK503",
    "error",
    "label, annotation or node-selector key not valid in Kubernetes",
    checks="Every key in `labels`, `annotations` and `node_selector` of `target kubernetes` "
    "must be a qualified name: an optional DNS-subdomain prefix and `/`, then 1-63 letters, "
    "digits, `-`, `_` or `.`, starting and ending with a letter or digit.",
    basis="Kubernetes validates label and annotation keys this way; a node selector matches node "
    "labels, so its keys follow the same rule.",
    target="kubernetes",
)
def kubernetes_keys(plan: Plan) -> Iterator[Finding]:
    for block in ("labels", "annotations", "node_selector"):
        for key, setting in _map(plan, "kubernetes", block).items():
            problem = _qualified_name_problem(key)
            if problem is not None:
                fixed = _suggest_qualified_name(key)
                yield Finding(
                    f"`{block}` key {_shown(key)} is not a valid Kubernetes key: {problem}",
                    Resolved.from_setting(setting, key_span=True),
                    f'use a key such as `"{fixed}"`' if fixed else 'use a key such as `"team"` or `"example.com/team"`',
                    label="not a qualified name",
                    replace_with=f'"{fixed}"' if fixed else None,
                )


def _suggest_qualified_name(key: str) -> str | None:
    """The closest qualified name: a lowercase DNS prefix and a name of letters, digits, `-_.`."""
    prefix, slash, name = key.rpartition("/")
    name = re.sub(r"[^A-Za-z0-9_.-]+", "-", name).strip("-_.")[:63].strip("-_.")
    prefix = ".".join(p for p in (_suggest_dns_label(part) for part in prefix.split(".")) if p)[:253]
    if not name:
        name, prefix = _suggest_dns_label(prefix.split(".")[0]) if prefix else "", ""
    if not name:
        return None
    return f"{prefix}/{name}" if slash and prefix else name


def _suggest_dns_label(text: str) -> str:
    return re.sub(r"[^a-z0-9-]+", "-", text.lower()).strip("-")[:63].strip("-")


@rule(
    "SPK504",
    "error",
    "label or node-selector value not valid in Kubernetes",
    checks="Values in `labels` and `node_selector` of `target kubernetes` must be empty or 1-63 "
    "letters, digits, `-`, `_` or `.`, starting and ending with a letter or digit. "
    "Annotation values may hold any text.",
    basis="Kubernetes validates label values this way; a node selector value is a node label value.",
    target="kubernetes",
)
def kubernetes_label_values(plan: Plan) -> Iterator[Finding]:
    for block in ("labels", "node_selector"):
        for key, setting in _map(plan, "kubernetes", block).items():
            value = setting.value
            if value and not _fits(LABEL_NAME, value, 63):
                fixed = re.sub(r"[^A-Za-z0-9_.-]+", "-", value).strip("-_.")[:63].strip("-_.")
                yield Finding(
                    f"`{block}` value {_shown(value)} for {_shown(key)} is not a valid Kubernetes label value",
                    Resolved.from_setting(setting),
                    f'use at most 63 letters, digits, `-`, `_` or `.`, e.g. `"{fixed}"`',
                    label="not a label value",
                    replace_with=f'"{fixed}"',
                )


def _secret_settings(plan: Plan) -> Iterator[tuple[str, Setting]]:
    for block, key in (("runtime", "hf_token"), ("serve", "api_key")):
        setting = plan.spec.block(block).setting(key)
        if setting is not None and isinstance(setting.value, SecretRef):
            yield f"{block}.{key}", setting


def _pod_secrets(plan: Plan) -> Iterator[tuple[str, Setting]]:
    """The secret settings that pods of a target this run builds read (each target's
    `pod_secrets`), each once: `target kubernetes` and its smoke Job share `serve.api_key`."""
    wanted = {
        where for kind, secrets in _pod_targets(target_table.generation()) if plan.builds(kind) for where in secrets
    }
    if wanted:
        yield from ((where, setting) for where, setting in _secret_settings(plan) if where in wanted)


@cache
def _pod_targets(generation: int) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """(kind, pod_secrets) of the targets that run pods: read from the table once per change to it
    (`generation`: `register` changes it), not once per plan."""
    return tuple((t.kind, t.pod_secrets) for t in target_table.all_targets() if t.pod_secrets)


def _pod_secret_keys() -> str:
    """`` `runtime.hf_token` or `serve.api_key` ``: every secret some target's pods read."""
    keys = dict.fromkeys(s for _, secrets in _pod_targets(target_table.generation()) for s in secrets)
    return target_table.either([f"`{k}`" for k in keys])


def _pod_readers() -> str:
    """`` `target kubernetes` (`runtime.hf_token`, `serve.api_key`), ... ``: who reads which."""
    return ", ".join(
        f"`target {kind}` ({', '.join(f'`{s}`' for s in secrets)})"
        for kind, secrets in _pod_targets(target_table.generation())
    )


@rule(
    "SPK505",
    "error",
    "`env(...)` secret with Kubernetes",
    checks=lambda: (
        f'{_pod_secret_keys()} reads `env("NAME")` while the deployment builds a target '
        f"that runs in Kubernetes pods and reads it: {_pod_readers()}, declared or forced with `spark build -t`."
    ),
    basis="LANGUAGE.md: a pod has no host environment to read a variable from; Kubernetes takes "
    'secrets from a Secret (`secret("name")` becomes a `secretKeyRef`).',
)
def kubernetes_env_secret(plan: Plan) -> Iterator[Finding]:
    for where, setting in _pod_secrets(plan):
        ref: SecretRef = setting.value
        if ref.kind == "env":
            name = ref.name.lower().replace("_", "-")
            yield Finding(
                f'`{where}` reads env("{ref.name}"), but a Kubernetes pod has no host environment',
                Resolved.from_setting(setting),
                f'store it in a Secret and refer to it: `secret("{name}")`',
                label="not available in a pod",
                replace_with=f'secret("{name}")' if DNS_LABEL.fullmatch(name) else None,
            )


@rule(
    "SPK512",
    "error",
    "Kubernetes model cache that cannot be mounted",
    checks='`target kubernetes { model_cache = ... }`: a `pvc("name")` must name a claim with a '
    "DNS-1123 subdomain (lowercase letters, digits, `-` and `.`, at most 253); a "
    '`hostpath("/path")` must be an absolute path.',
    basis="The API server rejects other claim names, and a relative host path means nothing on a node.",
    target="kubernetes",
)
def kubernetes_model_cache(plan: Plan) -> Iterator[Finding]:
    setting = _setting(plan, "kubernetes", "model_cache")
    if setting is None:
        return
    volume: Volume = setting.value
    if volume.kind == "pvc" and not _fits(DNS_SUBDOMAIN, volume.name or "", 253):
        claim = re.sub(r"[^a-z0-9.-]+", "-", (volume.name or "").lower()).strip("-.")[:253].strip("-.")
        claim = claim or "model-cache"
        yield Finding(
            f"claim name {_shown(volume.name or '')} is not a valid PersistentVolumeClaim name",
            Resolved.from_setting(setting),
            f'use lowercase letters, digits, `-` and `.`, e.g. `pvc("{claim}")`',
            label="not a DNS-1123 subdomain",
            replace_with=f'pvc("{claim}")' if _plain(claim) else None,
        )
    elif volume.kind == "hostpath" and not (volume.name or "").startswith("/"):
        relative = (volume.name or "").lstrip("./")
        yield Finding(
            f"host path {_shown(volume.name or '')} is not absolute",
            Resolved.from_setting(setting),
            f'write the full path on the node, e.g. `hostpath("/{relative}")`',
            label="relative path",
            replace_with=f'hostpath("/{relative}")' if _plain(relative) else None,
        )


def _plain(text: str) -> bool:
    """Whether text can go between quotes as it is (no quote, backslash or control character)."""
    return all(ch.isprintable() and ch not in '"\\' for ch in text)


# ---- Slurm ----------------------------------------------------------------------------------


@rule(
    "SPK506",
    "error",
    "Slurm time limit of zero",
    checks="`target slurm { time = 0s }` (or any spelling of zero).",
    basis="Slurm reads `--time=0` as no limit at all, which no cluster policy means by zero; "
    f"the default is {_DEFAULT_TIME}.",
    target="slurm",
)
def slurm_time_zero(plan: Plan) -> Iterator[Finding]:
    setting = _setting(plan, "slurm", "time")
    if setting is not None and setting.value == 0:
        yield Finding(
            "a Slurm time limit of 0 means no limit at all",
            Resolved.from_setting(setting),
            f"give the job a real limit, e.g. `time = 12h`, or leave `time` out for the default {_DEFAULT_TIME}",
            label="zero",
            replace_with="12h",
        )


@rule(
    "SPK507",
    "error",
    "Slurm partition, account or qos with characters Slurm does not accept",
    checks="`partition`, `account` and `qos` of `target slurm` must be Slurm names: letters, "
    "digits, `_`, `.` and `-` (`partition` may list several, separated by commas).",
    basis="These values go into `#SBATCH` lines; a space or newline would end the directive early "
    "or start a new one, and Slurm knows no such names.",
    target="slurm",
)
def slurm_names(plan: Plan) -> Iterator[Finding]:
    for key in ("partition", "account", "qos"):
        setting = _setting(plan, "slurm", key)
        if setting is None:
            continue
        parts = setting.value.split(",") if key == "partition" else [setting.value]
        if not all(SLURM_NAME.fullmatch(part) for part in parts):
            listing = " (several partitions are separated by `,`)" if key == "partition" else ""
            cleaned = [re.sub(r"[^A-Za-z0-9_.]+", "-", part).strip("-") for part in parts]
            fixed = ",".join(part for part in cleaned if part)
            yield Finding(
                f"{key} {_shown(setting.value)} has characters Slurm does not accept in a name",
                Resolved.from_setting(setting),
                f"use letters, digits, `_`, `.` and `-`{listing}" + (f', e.g. `"{fixed}"`' if fixed else ""),
                label=f"not a Slurm {key}",
                replace_with=f'"{fixed}"' if fixed else None,
            )


# What a constraint, reservation or host list may hold: Slurm's names and operators
# (`&`, `|`, `[...]`, `*N`, `!` in constraints; `,` lists; `[1-4]` ranges), never whitespace,
# a quote or a backslash, which would end the `#SBATCH` word or start another.
SLURM_SCHEDULING = {
    "constraint": lazy_regex(r"[A-Za-z0-9_.&|\[\]*()!:,-]+"),
    "reservation": lazy_regex(r"[A-Za-z0-9_.,-]+"),
    "exclude": lazy_regex(r"[A-Za-z0-9_.\[\],-]+"),
}


@rule(
    "SPK541",
    "error",
    "Slurm constraint, reservation or excluded nodes that cannot go into an #SBATCH line",
    checks="`constraint` (node features with Slurm's `&`, `|`, `[]`, `*`, `!` operators), "
    "`reservation` (reservation names, `,`-separated) and `exclude` (a host list such as "
    "`node[1-2],gpu07`) of `target slurm`: letters, digits, `_`, `.`, `-` and those operators only.",
    basis="Each becomes one `#SBATCH --KEY=VALUE` line, which sbatch splits at whitespace and reads "
    "without a shell: a space, quote or newline would cut the value or add a directive of its own.",
    target="slurm",
)
def slurm_scheduling(plan: Plan) -> Iterator[Finding]:
    for key, pattern in SLURM_SCHEDULING.items():
        setting = _setting(plan, "slurm", key)
        if setting is None or pattern.fullmatch(setting.value):
            continue
        fixed = ",".join(part for part in re.split(r"[^A-Za-z0-9_.&|\[\]*()!:-]+", setting.value) if part)
        fixed = fixed if pattern.fullmatch(fixed) else ""
        yield Finding(
            f"{key} {_shown(setting.value)} cannot go into an #SBATCH line",
            Resolved.from_setting(setting),
            "use Slurm names and operators without spaces or quotes (several joined by `,`)"
            + (f', e.g. `"{fixed}"`' if fixed else ""),
            label=f"not a Slurm {key}",
            replace_with=f'"{fixed}"' if fixed else None,
        )


@rule(
    "SPK542",
    "error",
    "extra #SBATCH directive that sbatch does not know or cannot read",
    checks="Each of `extra_directives` in `target slurm` must be `--OPTION` or `--OPTION=VALUE`, "
    "OPTION one of sbatch's long options (Slurm 22.05's `sbatch --help`, the OPTIONS of sbatch(1)), "
    "VALUE without whitespace, quotes or backslashes.",
    basis="sbatch stops at an option it does not know (`sbatch: unrecognized option`) and reads "
    "`#SBATCH` lines word by word without a shell, so the job would not be submitted, or not as "
    "written.",
    target="slurm",
)
def slurm_extra_directives(plan: Plan) -> Iterator[Finding]:
    yield from _extra_directives(plan, managed=False)


@rule(
    "SPK543",
    "error",
    "extra #SBATCH directive that spark writes from the spec",
    checks="`extra_directives` in `target slurm` names an option job.sbatch writes itself or that "
    "contradicts it: `--nodes`, `--ntasks`, `--ntasks-per-node`, `--gpus`, `--gpus-per-node`, `--gres`, "
    "`--exclusive`, `--time`, `--partition`, `--account`, `--qos`, `--job-name`, `--output`, "
    "`--error`, `--constraint`, `--reservation`, `--exclude`, `--array`.",
    basis="sbatch takes the last of repeated options, so an extra `--nodes` or `--time` would "
    "silently replace the spec's; `--output`/`--error` move the log the job reports to, and "
    "`--array` would start the deployment several times. The spec's own keys set these.",
    target="slurm",
)
def slurm_managed_directives(plan: Plan) -> Iterator[Finding]:
    yield from _extra_directives(plan, managed=True)


def _extra_directives(plan: Plan, managed: bool) -> Iterator[Finding]:
    setting = _setting(plan, "slurm", "extra_directives")
    if setting is None:
        return
    items = list(setting.value)
    for index, text in enumerate(items):
        reason = sbatch_options.problem(text)
        name = sbatch_options.option_name(text)
        if reason is None or (name in sbatch_options.MANAGED) != managed:
            continue
        if managed:
            # The fix drops the directive; the spec's own key sets what it meant.
            rest = items[:index] + items[index + 1 :]
            hint = f"set it with `target slurm`'s own keys or the deployment's settings, and remove `{text}`"
        else:
            from difflib import get_close_matches  # only on a finding: difflib stays off the cold path

            near = get_close_matches(name or text.lstrip("-"), sorted(sbatch_options.SBATCH_OPTIONS), n=1)
            value = text.partition("=")[2] if name else ""
            fixed = f"--{near[0]}" + (f"={value}" if value else "") if near else None
            usable = fixed is not None and fixed != text and sbatch_options.problem(fixed) is None
            rest = [*items[:index], fixed, *items[index + 1 :]] if fixed is not None and usable else []
            hint = _directive_hint(name, fixed if usable else None)
        yield Finding(
            f"extra directive {_shown(text)}: {reason}",
            Resolved.from_setting(setting),
            hint,
            label="spark writes this" if managed else "not an sbatch directive",
            replace_with=_string_list(rest) if rest or managed else None,
        )


def _directive_hint(name: str | None, fixed: str | None) -> str:
    """The way to a directive sbatch reads: the near option when it makes one, else what to write
    (never the refused text again: a known option with a bad value was once offered as its own fix)."""
    if fixed is not None:
        return f"write `--OPTION=VALUE` with one of sbatch's options, e.g. `{fixed}`"
    if name in sbatch_options.SBATCH_OPTIONS:
        return f"write `--{name}=VALUE` with a VALUE of no whitespace, quotes or backslashes"
    return "write `--OPTION=VALUE` with one of sbatch's options (`sbatch --help` lists them)"


def _string_list(items: list[str]) -> str | None:
    """The list as spark text, when every item can be written plainly between double quotes."""
    if any(not item.isprintable() or '"' in item or "\\" in item for item in items):
        return None
    return "[" + ", ".join(f'"{item}"' for item in items) + "]"


@rule(
    "SPK508",
    "warning",
    "ready timeout not shorter than the time limit",
    checks=f"`ready_timeout` of `target slurm` is at least the job's `time` limit (default {_DEFAULT_TIME}).",
    basis="The job waits up to `ready_timeout` for /health; if Slurm ends the job first, the wait "
    "never reports a result and the allocation is spent loading weights.",
    target="slurm",
)
def slurm_ready_timeout(plan: Plan) -> Iterator[Finding]:
    timeout = _setting(plan, "slurm", "ready_timeout")
    if timeout is None:
        return
    limit = _setting(plan, "slurm", "time")
    seconds = plan.target("slurm").value("time")
    if seconds and timeout.value >= seconds:
        yield Finding(
            "`ready_timeout` is not shorter than the job's time limit",
            Resolved.from_setting(timeout),
            "make `ready_timeout` shorter than `time`, leaving the job time to serve",
            label="never reached",
            notes=(("the time limit is set here", Resolved.from_setting(limit) if limit is not None else None),),
        )


@rule(
    "SPK509",
    "error",
    "Slurm output path that an #SBATCH line cannot hold",
    checks="`output` of `target slurm` is empty or holds whitespace, quotes or control characters.",
    basis="The path goes into `#SBATCH --output=...`, which sbatch splits at whitespace; a newline "
    "would start a new line of the script.",
    target="slurm",
)
def slurm_output(plan: Plan) -> Iterator[Finding]:
    setting = _setting(plan, "slurm", "output")
    if setting is None:
        return
    value: str = setting.value
    if not value or any(_unfit_in_sbatch(ch) for ch in value):
        cleaned = "".join("-" if _unfit_in_sbatch(ch) else ch for ch in value)
        fixed = re.sub(r"-{2,}", "-", cleaned).strip("-") or "logs/%x-%j.out"
        yield Finding(
            f"output path {_shown(value)} cannot go into an #SBATCH line",
            Resolved.from_setting(setting),
            f'use a path without spaces, quotes or control characters, e.g. `"{fixed}"`',
            label="not a plain path",
            replace_with=f'"{fixed}"',
        )


def _unfit_in_sbatch(ch: str) -> bool:
    return ch.isspace() or ch in "\"'\\" or not ch.isprintable()


# ---- Compose --------------------------------------------------------------------------------


@rule(
    "SPK510",
    "error",
    "Compose project name not accepted by Docker Compose",
    checks="`target compose { project = ... }` must start with a lowercase letter or digit and "
    "hold only lowercase letters, digits, `_` and `-`.",
    basis="Docker Compose rejects other project names: `docker compose` fails before it starts anything.",
    target="compose",
)
def compose_project(plan: Plan) -> Iterator[Finding]:
    setting = _setting(plan, "compose", "project")
    if setting is not None and not COMPOSE_PROJECT.fullmatch(setting.value):
        fixed = re.sub(r"[^a-z0-9_-]+", "-", setting.value.lower()).strip("-_") or plan.name
        yield Finding(
            f"project name {_shown(setting.value)} is not valid for Docker Compose",
            Resolved.from_setting(setting),
            f'use lowercase letters, digits, `_` and `-`, e.g. `"{fixed}"`',
            label="not a project name",
            replace_with=f'"{fixed}"',
        )


@rule(
    "SPK511",
    "error",
    "Compose model cache that is not a host path",
    checks="`target compose { model_cache = ... }` must be a host path: absolute (`/data/hf`), "
    "relative to the compose file (`./cache`) or under the home folder (`~/hf`).",
    basis="Compose reads a bare name such as `hf-cache` as a named volume, not a folder on the "
    "host, so the weights would not land where the spec says.",
    target="compose",
)
def compose_model_cache(plan: Plan) -> Iterator[Finding]:
    setting = _setting(plan, "compose", "model_cache")
    if setting is None:
        return
    value: str = setting.value
    if not value.startswith(("/", "./", "../", "~")):
        yield Finding(
            f"model_cache {_shown(value)} is not a host path; Compose would read it as a volume name",
            Resolved.from_setting(setting),
            f'write a path: `"./{value}"` next to compose.yaml, or an absolute one',
            label="not a path",
            replace_with=f'"./{value}"',
        )


# ---- weights --------------------------------------------------------------------------------


def _size(value: float) -> str:
    return f"{value:,.1f} GB"


def _written_size(size: int) -> str:
    """A size the way a spec writes it: `300GiB` when binary units fit exactly, else `500GB`."""
    from spark_dsl.targets.common import binary_size

    exact = binary_size(size, (("Ti", 1 << 40), ("Gi", 1 << 30), ("Mi", 1 << 20)))
    return f"{exact}B" if exact else f"{size / 1e9:g}GB"


@rule(
    "SPK519",
    "warning",
    "every pod downloads the weights itself",
    checks="`target kubernetes { model_cache = emptydir }` while several vLLM pods read the weights: "
    "a pool over several nodes (a LeaderWorkerSet group), prefill and decode pools, or more than one "
    "replica. The message counts the downloads.",
    basis="An emptyDir lives and dies with its pod (Kubernetes docs, Volumes, emptyDir), so each pod "
    "downloads the whole checkpoint itself; a LeaderWorkerSet with `RecreateGroupOnPodRestart` "
    "recreates every pod of the group when one restarts (LeaderWorkerSet API, "
    "`leaderWorkerTemplate.restartPolicy`), so each restart downloads it again on every pod. "
    "Without `model_cache`, spark gives such a deployment one shared claim and one staging Job.",
    target="kubernetes",
)
def every_pod_downloads(plan: Plan) -> Iterator[Finding]:
    from spark_dsl.plan.weights import staging

    setting = _setting(plan, "kubernetes", "model_cache")
    pods = model_cache.readers(plan)
    staged = staging(plan)
    if setting is None or setting.value.kind != "emptydir" or pods < 2 or not staged.repositories:
        return
    each = staged.size_gb
    message = (
        f"model_cache = emptydir: each of the {pods} vLLM pods downloads the {_size(each)} of weights"
        f" itself, {pods} x {_size(each)} = {_size(pods * each)} per rollout"
    )
    group = max(pool.nodes for pool in plan.pools)
    if group > 1:
        message += (
            f"; a LeaderWorkerSet recreates its group of {group} pods when one restarts, so every restart"
            f" downloads {group} x {_size(each)} = {_size(group * each)} again"
        )
    yield Finding(
        message,
        Resolved.from_setting(setting),
        f"remove `model_cache`: spark then creates one claim every pod mounts ({model_cache.default_claim(plan)}),"
        " and with `weights { download = true }` one Job downloads into it once",
        label="one download per pod",
        fix=_remove_setting(plan, setting, "remove `model_cache`: one claim every pod mounts"),
    )


def _remove_setting(plan: Plan, setting: Setting, message: str) -> Fix | None:
    """The unsafe fix that removes a setting written in the deployment's own file (not a profile's)."""
    source = plan.deployment.source
    if setting.origin.file != source.name:
        return None
    return remove_entry(message, source, setting.origin.span)


def _converted() -> str:
    """`for `bf16-to-mxfp4`, the BF16 weights it converts`: the recipe model's load-time conversions."""
    model = facts.model()
    return "; ".join(
        f"for `{c.id}`, the {c.converts_from.upper()} weights it converts"
        for c in model.checkpoints.values()
        if c.converts_from is not None
    )


def _draft() -> str:
    draft = facts.model().draft
    return draft.name if draft is not None else "speculative"


@rule(
    "SPK514",
    "error",
    "declared volume smaller than the checkpoint",
    checks=lambda: (
        "`target kubernetes`: the claim spark creates (`cache_size`) or the pod's "
        "`ephemeral_storage` with an `emptydir` cache is smaller than what the deployment downloads: "
        f"the checkpoint ({_converted()}) plus the {_draft()} draft."
    ),
    basis="The catalog's checkpoint sizes (spark_dsl/catalog/models.yaml). A cache that cannot hold "
    "the weights fails the download part-way, or gets the pod evicted for using more disk than it asked for.",
    target="kubernetes",
)
def volume_too_small(plan: Plan) -> Iterator[Finding]:
    from spark_dsl.plan.weights import staging

    body = _target(plan, "kubernetes")
    if body is None or plan.checkpoint is None:
        return
    volume = model_cache.volume(plan)
    checks = [("cache_size", volume.kind == "pvc"), ("ephemeral_storage", volume.kind == "emptydir")]
    for key, applies in checks:
        setting = body.setting(key)
        if setting is None or not applies:
            continue
        needed = staging(plan).size_bytes  # only for a size that is written: most specs write none
        if setting.value >= needed:
            continue
        gib = -(-needed * 11 // 10 // (1 << 30))
        yield Finding(
            f"{key} = {_written_size(setting.value)} ({_size(setting.value / 1e9)}) cannot hold the"
            f" {_size(needed / 1e9)} this deployment downloads",
            Resolved.from_setting(setting),
            f"make it at least the download's size plus room for the cache, e.g. `{key} = {gib}GiB`",
            label=f"smaller than {_size(needed / 1e9)}",
            replace_with=f"{gib}GiB",
        )
