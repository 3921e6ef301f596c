"""The one pipeline the CLI and the language server share: files in, deployments and diagnostics out."""

from __future__ import annotations

import gc
import stat
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

from msgspec import Struct, field

from spark_dsl.diagnostics import Diagnostic, DiagnosticSink, Note, Severity
from spark_dsl.loader import Loader, ResolvedDeployment, SourceFile
from spark_dsl.plan.model import Launch, Plan, Planned
from spark_dsl.project import Projects
from spark_dsl.span import Location


class UsageError(Exception):
    """The command was misused (a missing path, a path outside the root): exit 2."""


class Launches(Mapping[Plan, tuple[Launch, ...]]):
    """Each plan whose rules passed, with the processes its targets run, decided the first time
    it is asked for and kept: `spark check` asks for none (deciding them was a twentieth of its
    time per spec), a build or `spark plan` for each plan once."""

    def __init__(self, plans: list[Plan] | None = None) -> None:
        self._decided: dict[Plan, tuple[Launch, ...] | None] = dict.fromkeys(plans or ())

    def __getitem__(self, plan: Plan) -> tuple[Launch, ...]:
        found = self._decided[plan]  # KeyError: not a plan whose rules passed
        if found is None:
            from spark_dsl.plan.launches import build_launches

            found = self._decided[plan] = tuple(build_launches(plan))
        return found

    def __contains__(self, plan: object) -> bool:
        return plan in self._decided

    def get(self, plan: Plan, default: Any = None) -> Any:
        # Not Mapping's: it reads a KeyError raised while deciding the launches as "no launches".
        return self[plan] if plan in self._decided else default

    def __iter__(self) -> Iterator[Plan]:
        return iter(self._decided)

    def __len__(self) -> int:
        return len(self._decided)

    def pop(self, plan: Plan, default: None = None) -> None:
        """Lets go of a plan's launches (a streaming build, once rendered)."""
        self._decided.pop(plan, default)


class RunResult(Struct):
    files: list[SourceFile]
    deployments: list[ResolvedDeployment]
    diagnostics: list[Diagnostic]
    sources: dict[str, SourceFile] = field(default_factory=dict)
    plans: list[Plan] = field(default_factory=list)
    # Each plan whose rules passed, with the processes its targets run (a separate value: the plan
    # is what was decided, the launches what is run).
    launches: Launches = field(default_factory=Launches)
    # The projects the run's files belong to, with their settings (spark_dsl.project).
    projects: Projects = field(default_factory=Projects)
    # Indexes for the questions asked once per deployment (a build asks both of every one), so
    # they cost one pass, not one per deployment: (the list's id, its length, the index), built
    # again when the list is replaced or grows (a build adds its own diagnostics).
    _plans_by_name: tuple[int, int, dict[str, Plan]] | None = None
    _names_with_errors: tuple[int, int, frozenset[str]] | None = None

    def plan(self, name: str) -> Plan | None:
        key = (id(self.plans), len(self.plans))
        if self._plans_by_name is None or self._plans_by_name[:2] != key:
            by_name: dict[str, Plan] = {}
            for p in self.plans:
                by_name.setdefault(p.name, p)
            self._plans_by_name = (*key, by_name)
        return self._plans_by_name[2].get(name)

    def deployment_has_errors(self, name: str) -> bool:
        key = (id(self.diagnostics), len(self.diagnostics))
        if self._names_with_errors is None or self._names_with_errors[:2] != key:
            names = frozenset(
                d.deployment for d in self.diagnostics if d.severity is Severity.ERROR and d.deployment is not None
            )
            self._names_with_errors = (*key, names)
        return name in self._names_with_errors[2]

    def planned(self, plans: list[Plan] | None = None) -> list[Planned]:
        """Each plan (all of the run's unless given) with its launches: none where it has errors."""
        return [Planned(p, self.launches.get(p, ())) for p in (self.plans if plans is None else plans)]

    def add_build_diagnostics(self, found: list[Diagnostic]) -> None:
        """A build's own diagnostics join the run's, in file order, after the same `ignore[...]`
        comments: they silence a build's infos (an error stops the build whatever a comment says)."""
        for diagnostic in found:
            loc = diagnostic.location
            source = self.sources.get(loc.file) if loc is not None else None
            if diagnostic.severity is Severity.INFO and source is not None and loc is not None:
                line, _ = source.index.position(loc.span.start)
                silenced = ignored_codes(source)
                if diagnostic.code in silenced.get(line, set()) | silenced.get(line - 1, set()):
                    continue
            self.diagnostics.append(diagnostic)
        _in_file_order(self.diagnostics, self.sources)

    @property
    def has_errors(self) -> bool:
        return any(d.severity is Severity.ERROR for d in self.diagnostics)

    @property
    def has_denied_warnings(self) -> bool:
        """A warning in a file whose project sets `warnings-as-errors`."""
        for d in self.diagnostics:
            if d.severity is Severity.WARNING and d.location is not None:
                source = self.sources.get(d.location.file)
                if source is not None and self.projects.of(source.path).settings.warnings_as_errors.value:
                    return True
        return False


def collect_paths(paths: list[str], root: Path | Projects, skipped: list[str] | None = None) -> list[Path]:
    """The `.spark` files named by the arguments, directories searched recursively.

    A path that is not there, cannot be looked at or is not a regular file is a usage
    error, and so is one outside `--root` when a root is forced. A folder scan leaves
    out what the project's `include`/`exclude` settings leave out, and leaves out, and
    lists in `skipped`, what it must not read (FIFOs and devices, symlinks that lead out
    of the project root).
    """
    from spark_dsl import files

    projects = root if isinstance(root, Projects) else Projects(forced=root)
    found: list[Path] = []
    try:
        for raw in paths:
            found.extend(_named(raw, projects, skipped))
    except files.NamedPathError as err:
        raise UsageError(str(err)) from None
    unique: dict[Path, Path] = {}
    for p in found:
        real = projects.resolved(p)
        unique.setdefault(real if isinstance(real, Path) else p, p)
    return list(unique.values())


def _named(raw: str, projects: Projects, skipped: list[str] | None) -> list[Path]:
    """The specs one command-line path names, or files.NamedPathError."""
    from spark_dsl import files

    path = Path(raw)
    shown = files.printable(raw)
    status = files.named(raw)
    resolved = files.named_real(raw)
    forced = projects.forced
    if forced is not None and not resolved.is_relative_to(forced.resolve()):
        raise files.NamedPathError(f"{shown} is outside the project root {files.printable(str(forced))} (see --root)")
    folder = stat.S_ISDIR(status.st_mode)
    if not folder:
        files.require_regular(raw, status)
    # A symbolic link is judged where it is named: one that leads out of that project is not read.
    left = projects.escape(raw, resolved, folder) if forced is None else None
    if left is not None:
        raise files.NamedPathError(
            f"{shown} resolves outside the project root {files.printable(str(left))} (see --root)"
        )
    if folder:
        return files.scanned_or_error(raw, *projects.scan(path, resolved), skipped)
    return [path]


def run(
    paths: list[Path],
    root: Path | Projects,
    overlays: dict[Path, str] | None = None,
    *,
    on_file: Callable[[Path], None] | None = None,
    forced_targets: tuple[str, ...] = (),
) -> RunResult:
    """Parse, load and check `paths` in one process; never raises for bad input.

    `root` is a forced root (`--root`, a test's folder) or the run's `Projects`, which
    finds each file's project: its imports may not leave its root, and its project's
    settings decide which warnings and infos are reported. `forced_targets` are what
    `spark build -t` builds for every deployment: the rules check them as declared ones.
    """
    # A run allocates many small objects and few reference cycles, all alive to its end: the
    # cyclic collector's passes cost about 40% of a 1,000-spec run and free nothing, so it rests
    # meanwhile.
    collecting = gc.isenabled()
    gc.disable()
    try:
        return _run(paths, root, overlays, on_file, forced_targets)
    finally:
        if collecting:
            gc.enable()


def _run(
    paths: list[Path],
    root: Path | Projects,
    overlays: dict[Path, str] | None,
    on_file: Callable[[Path], None] | None,
    forced_targets: tuple[str, ...],
) -> RunResult:
    projects = root if isinstance(root, Projects) else Projects(forced=root)
    sink = DiagnosticSink()
    resolved_overlays = {p.resolve(): t for p, t in (overlays or {}).items()}
    # One loader per project root: a file's imports may not leave the root of the file named
    # to the run, and a file imported by several specs of one project is parsed once.
    loaders: dict[Path, Loader] = {}
    files: list[SourceFile] = []
    deployments: list[ResolvedDeployment] = []
    for path in paths:
        if on_file is not None:
            on_file(path)
        project_root = projects.of(path).root
        loader = loaders.get(project_root)
        if loader is None:
            loader = loaders[project_root] = Loader(
                project_root, sink, overlays=resolved_overlays, resolve=projects.resolved
            )
        source = loader.source(path)
        if source is None:
            continue
        files.append(source)
        deployments.extend(loader.deployments(source))
    _check_unique_names(deployments, sink)
    plans: list[Plan] = []
    passed: list[Plan] = []
    for dep in deployments:
        planned = plan_deployment(dep, sink, forced_targets)
        if planned is not None:
            plans.append(planned[0])
            if planned[1]:
                passed.append(planned[0])
    launches = Launches(passed)
    sources: dict[str, SourceFile] = {}
    for each in loaders.values():
        for source in each.files.values():
            sources.setdefault(source.name, source)
    diagnostics = _checked_ignores(sink.items, files, sources, plans)
    diagnostics = _apply_settings(diagnostics, sources, projects)
    _in_file_order(diagnostics, sources)
    sources = {**_configuration_sources(projects, diagnostics), **sources}
    projects.forget_paths()
    return RunResult(files, deployments, _dedupe(diagnostics), sources, plans, launches, projects)


def _in_file_order(diagnostics: list[Diagnostic], sources: dict[str, SourceFile]) -> None:
    """Sorted by the order the run read the files, then by place and code within one."""
    order = {name: i for i, name in enumerate(sources)}
    diagnostics.sort(key=lambda d: (order.get(d.location.file, -1) if d.location else -1, d.sort_key))


def _apply_settings(
    diagnostics: list[Diagnostic], sources: dict[str, SourceFile], projects: Projects
) -> list[Diagnostic]:
    """Each file's project settings (`select`, `ignore`, `per-path-ignores`) applied to its
    diagnostics, and the diagnostics of the configuration files themselves added."""
    kept = []
    for d in diagnostics:
        source = sources.get(d.location.file) if d.location is not None else None
        if source is None or projects.of(source.path).settings.keeps(d, source.path, projects.selection):
            kept.append(d)
    return [d for project in projects.all() for d in project.settings.diagnostics] + kept


def _configuration_sources(projects: Projects, diagnostics: list[Diagnostic]) -> dict[str, SourceFile]:
    """The configuration files that have diagnostics, so every format can quote them."""
    named = {d.location.file for d in diagnostics if d.location is not None}
    out = {}
    for project in projects.all():
        source = project.settings.source
        if source is not None and source.name in named:
            out[source.name] = source
    return out


def plan_deployment(
    dep: ResolvedDeployment, sink: DiagnosticSink, forced_targets: tuple[str, ...] = ()
) -> tuple[Plan, bool] | None:
    """Resolve and estimate, and check the rules: the plan, and whether its rules passed (its
    launches are then decided when asked for, `Launches`)."""
    from spark_dsl.plan.resolve import build_plan
    from spark_dsl.rules.table import run_rules

    if dep.body.has_invalid() or dep.body.get("model") is None or dep.body.get("accelerator") is None:
        return None
    plan = build_plan(dep, forced_targets)
    if plan is None:
        return None
    found = run_rules(plan)
    for d in found:
        sink.add(d)
    return plan, not any(d.severity is Severity.ERROR for d in found)


def _check_unique_names(deployments: list[ResolvedDeployment], sink: DiagnosticSink) -> None:
    first: dict[str, ResolvedDeployment] = {}
    for dep in deployments:
        earlier = first.setdefault(dep.name, dep)
        if earlier is dep:
            continue
        sink.error(
            "SPK109",
            f"a deployment named `{dep.name}` already exists in this run",
            dep.source.name,
            dep.node.name.span,
            deployment=dep.name,
            label="second deployment with this name",
            help="rename one: both would write their outputs to the same folder",
            notes=(Note("first defined here", Location(earlier.source.name, earlier.node.name.span)),),
        )


def ignored_codes(source: SourceFile) -> dict[int, set[str]]:
    """Line number -> codes silenced by `# spark: ignore[...]` on that line."""
    from spark_dsl import ignores

    return ignores.ignored_codes(source)


def _checked_ignores(
    found: list[Diagnostic], files: list[SourceFile], sources: dict[str, SourceFile], plans: list[Plan]
) -> list[Diagnostic]:
    """The diagnostics left after ignore comments, plus SPK125 for each ignore that does nothing."""
    from spark_dsl import ignores

    kept, used = ignores.silence(found, sources.values())
    if not any(ignores.entries(source) for source in sources.values()):
        # No ignore comment in the run, so none is unused: the places a run judged (a line index
        # and a set of line numbers for every file) are not worked out for nothing.
        return kept
    failed = {d.deployment for d in found if d.severity is Severity.ERROR}
    clean = {p.name for p in plans} - failed
    judged = ignores.judged_places(files, found, sources, clean)
    fired = {
        (d.location.file, sources[d.location.file].index.position(d.location.span.start)[0], d.code)
        for d in kept
        if d.severity is not Severity.ERROR and d.location is not None and d.location.file in sources
    }
    unused, _ = ignores.silence(ignores.unused(sources, used, judged, fired), sources.values())
    return kept + unused


def _dedupe(diagnostics: list[Diagnostic]) -> list[Diagnostic]:
    """A profile's problem reached through several deployments is reported once."""
    seen: set[tuple[object, ...]] = set()
    out = []
    for d in diagnostics:
        key = (d.code, d.location, d.message)
        if key in seen:
            continue
        seen.add(key)
        out.append(d)
    return out
