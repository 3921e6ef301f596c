"""What `spark build` produces: each deployment's targets rendered in memory, and diagnostics."""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from spark_dsl.diagnostics import Diagnostic, Severity
from spark_dsl.plan.model import Launch, Plan
from spark_dsl.schema import TARGET_KINDS
from spark_dsl.span import Location
from spark_dsl.targets import codes, compose, kubernetes, shell, slurm, vllm_config
from spark_dsl.targets.common import Job, TargetError

# Each target kind, in the schema's order: its file name and its renderer.
EMITTERS = {
    "shell": (shell.FILE_NAME, shell.render),
    "compose": (compose.FILE_NAME, compose.render),
    "slurm": (slurm.FILE_NAME, slurm.render),
    "kubernetes": (kubernetes.FILE_NAME, kubernetes.render),
    "vllm-config": (vllm_config.FILE_NAME, vllm_config.render),
}
assert tuple(EMITTERS) == TARGET_KINDS, "every target kind of the schema needs an emitter"
EXECUTABLE = frozenset({shell.FILE_NAME, slurm.FILE_NAME})


@dataclass
class DeploymentOutput:
    """The files of one deployment folder, in target order, and the spec they come from."""

    name: str
    source: str
    files: dict[str, str] = field(default_factory=dict)


@dataclass
class BuildOutcome:
    outputs: list[DeploymentOutput]
    diagnostics: list[Diagnostic]
    # Deployments whose previous outputs must stay as they are (they have errors now).
    held: set[str]


def _at_name(plan: Plan) -> Location:
    dep = plan.deployment
    return Location(dep.source.name, dep.node.name.span)


def render_plan(
    plan: Plan, launches: tuple[Launch, ...], kinds: list[str], source: str
) -> tuple[DeploymentOutput, list[Diagnostic]]:
    """Every requested target of one plan; one that cannot express it is an error, not a file."""
    declared = plan.targets
    output = DeploymentOutput(plan.name, source)
    problems: list[Diagnostic] = []
    for kind in kinds:
        file_name, render = EMITTERS[kind]
        try:
            output.files[file_name] = render(Job(plan, launches, kind, _shown(source)))
        except TargetError as err:
            problems.append(
                Diagnostic(
                    err.code,
                    Severity.ERROR,
                    f"target `{kind}` cannot build `{plan.name}`: {err}",
                    _at_name(plan),
                    label=f"requested with -t {kind}" if kind not in declared else None,
                    help=_help(kind, plan),
                    deployment=plan.name,
                )
            )
    return output, problems


def _shown(source: str) -> str:
    """The spec's path as output headers name it: a byte of the name that is not UTF-8 (which Python
    carries as a lone surrogate, U+DC80..U+DCFF, and no UTF-8 file can hold) as `\\xff`, as
    diagnostics show it. The manifest keeps the real name, so the next build finds the spec."""
    return re.sub("[\udc80-\udcff]", lambda m: f"\\x{ord(m.group()) - 0xDC00:02x}", source)


def _help(kind: str, plan: Plan) -> str:
    if kind in ("compose", "vllm-config") and plan.total_nodes > 1:
        return f"build `{plan.name}` with a multi-node target: shell, slurm or kubernetes"
    return f"leave `{kind}` out for `{plan.name}`"


def build(
    plans: list[Plan],
    launches: Mapping[Plan, tuple[Launch, ...]],
    has_errors: Callable[[str], bool],
    names_with_errors: list[str],
    forced: tuple[str, ...],
    root: Path,
    each: Callable[[DeploymentOutput], object] | None = None,
) -> BuildOutcome:
    """Render every error-free deployment; those with errors keep whatever they had before.

    With `each`, every output is handed to it as soon as it is rendered (the writer stages it and
    drops its text) and none is kept in `outputs`, so a build's memory does not grow with them."""
    outputs: list[DeploymentOutput] = []
    diagnostics: list[Diagnostic] = []
    held = set(names_with_errors)
    real_root = root.resolve()
    for plan in plans:
        if has_errors(plan.name):
            held.add(plan.name)
            continue
        kinds = [k for k in TARGET_KINDS if k in (forced or plan.targets)]
        if not kinds:
            diagnostics.append(
                Diagnostic(
                    codes.NOTHING_TO_BUILD,
                    Severity.INFO,
                    f"`{plan.name}` declares no target, so the build writes nothing for it",
                    _at_name(plan),
                    help="add a `target shell {}` (or another target) block, or pass `-t TARGET`",
                    deployment=plan.name,
                )
            )
            continue
        output, problems = render_plan(plan, launches[plan], kinds, source_path(plan, real_root))
        if problems:
            diagnostics += problems
            held.add(plan.name)
        else:
            (outputs.append if each is None else each)(output)
    return BuildOutcome(outputs, diagnostics, held)


def source_path(plan: Plan, real_root: Path) -> str:
    """The spec's path relative to the (resolved) project root, so outputs read the same on every
    machine. The loader resolved the spec's path when it read it."""
    path = plan.deployment.source.path
    try:
        return path.relative_to(real_root).as_posix()
    except ValueError:
        return Path(os.path.relpath(path, real_root)).as_posix()
