"""What `spark build` produces: each deployment's targets rendered in memory, and diagnostics."""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path

from msgspec import Struct, field

from spark_dsl.diagnostics import Diagnostic, Severity
from spark_dsl.plan.model import Launch, Plan
from spark_dsl.span import Location
from spark_dsl.targets import codes
from spark_dsl.targets import registry as target_table
from spark_dsl.targets.common import Job, TargetError
from spark_dsl.targets.registry import Target


class _ExecutableFiles:
    """The file names written executable, read from the target table (a target registered later
    included); the writer asks `file_name in EXECUTABLE`. The names are kept until the table
    changes (its generation), as a build asks for every file it writes."""

    def __init__(self) -> None:
        self._names: frozenset[str] = frozenset()
        self._generation = -1

    def __contains__(self, file_name: object) -> bool:
        if self._generation != target_table.generation():
            self._names = frozenset(t.file_name for t in target_table.all_targets() if t.executable)
            self._generation = target_table.generation()
        return file_name in self._names


EXECUTABLE = _ExecutableFiles()


class DeploymentOutput(Struct, weakref=True):
    """The files of one deployment folder, in target order, and the spec they come from.

    Weakly referable, so tests/targets/test_build_stream.py can see each one let go as soon as it
    is written: a build holds one rendered deployment at a time."""

    name: str
    source: str
    files: dict[str, str] = field(default_factory=dict)


class BuildOutcome(Struct):
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
        target = _declared(kind)
        try:
            output.files[target.file_name] = _render(target, Job(plan, launches, kind, _shown(source)))
        except TargetError as err:
            problems.append(
                Diagnostic(
                    err.code,
                    Severity.ERROR,
                    f"target `{kind}` cannot build `{plan.name}`: {err}",
                    _at_name(plan),
                    label=f"requested with -t {kind}" if kind not in declared else None,
                    help=_help(target, plan),
                    deployment=plan.name,
                )
            )
    return output, problems


def _shown(source: str) -> str:
    """The spec's path as output headers name it: a byte of the name that is not UTF-8 (which Python
    carries as a lone surrogate, U+DC80..U+DCFF, and no UTF-8 file can hold) as `\\xff`, as
    diagnostics show it. The manifest keeps the real name, so the next build finds the spec."""
    return re.sub("[\udc80-\udcff]", lambda m: f"\\x{ord(m.group()) - 0xDC00:02x}", source)


def _declared(kind: str) -> Target:
    target = target_table.find(kind)
    if target is None:
        raise ValueError(f"no target `{kind}`: the targets are {', '.join(target_table.kinds())}")
    return target


def _render(target: Target, job: Job) -> str:
    """The target's file; a single-host target refuses a plan over several nodes (as SPK501 does
    for a declared one), so no renderer repeats that check."""
    plan = job.plan
    if not target.spans_nodes and plan.total_nodes > 1:
        raise TargetError(f"{target.single_host}; {plan.name} needs {plan.total_nodes} nodes")
    return target.render(job)


def _help(target: Target, plan: Plan) -> str:
    if not target.spans_nodes and plan.total_nodes > 1:
        multi = target_table.either(target_table.multi_node_kinds())
        return f"build `{plan.name}` with a multi-node target: {multi}"
    return f"leave `{target.kind}` out for `{plan.name}`"


def build(
    plans: Iterable[Plan],
    launches: Mapping[Plan, tuple[Launch, ...]],
    has_errors: Callable[[str], bool],
    names_with_errors: list[str],
    forced: tuple[str, ...],
    root: Path,
    each: Callable[[DeploymentOutput], object] | None = None,
) -> BuildOutcome:
    """Render every error-free deployment; those with errors keep whatever they had before.

    With `each`, every output is handed to it as soon as it is rendered (the writer stages it and
    drops its text) and none is kept in `outputs`, so a build's memory does not grow with them.
    `plans` is read once, in order: a caller may hand each plan over and drop it once rendered."""
    outputs: list[DeploymentOutput] = []
    diagnostics: list[Diagnostic] = []
    held = set(names_with_errors)
    real_root = root.resolve()
    for plan in plans:
        # A plan whose rules found errors has no launches. Its name alone may not say so: an error
        # in a shared profile is reported once, for the first deployment that extends it.
        if has_errors(plan.name) or plan not in launches:
            held.add(plan.name)
            continue
        kinds = [k for k in target_table.kinds() if k in (forced or plan.targets)]
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
