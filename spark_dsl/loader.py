"""Loads files with their imports (confined to the root), resolves profiles and `extends` into deployments."""

from __future__ import annotations

import os
import re
from bisect import bisect_left, bisect_right
from collections.abc import Callable
from pathlib import Path

from msgspec import Struct, field

from spark_dsl import files as spec_files
from spark_dsl.diagnostics import DiagnosticSink, Fix, Note
from spark_dsl.extends import ExtendsResolver, Resolved
from spark_dsl.model_schema import DeclaredModel
from spark_dsl.patterns import lazy_regex
from spark_dsl.schema import deployment_schema
from spark_dsl.span import LineIndex, Location, Span
from spark_dsl.syntax import ast
from spark_dsl.typecheck import BodyChecker, did_you_mean
from spark_dsl.values import TypedBody

DEPLOYMENT_NAME = lazy_regex(r"[a-z0-9]([a-z0-9-]*[a-z0-9])?\Z")  # `\Z`: `$` also takes a final newline
MAX_DEPLOYMENT_NAME = 40
LISTED_PROFILES = 10  # visible profiles an unknown-profile help line names before "and N more"
# Imports nest at most this many files deep: far beyond any real project, and the
# import walk (one frame per file) stays far from Python's recursion limit.
MAX_IMPORT_DEPTH = 64


class SourceFile(Struct):
    """One file's text, its display name, and its parse."""

    path: Path
    name: str
    text: str
    module: ast.Module | None
    _index: LineIndex | None = None

    @property
    def index(self) -> LineIndex:
        if self._index is None:
            self._index = LineIndex(self.text)
        return self._index


class ProfileDef(Struct):
    node: ast.Profile
    source: SourceFile
    typed: TypedBody | None = None


class ResolvedDeployment(Struct):
    """A deployment with its profiles merged in: what the plan reads."""

    name: str
    node: ast.Deployment
    source: SourceFile
    body: TypedBody
    profiles: tuple[str, ...]
    # The declared model `model = NAME` names (docs/models.md), None for a shipped catalog model.
    model: DeclaredModel | None = None


class Loader(Struct):
    """Loads a run's files once each, so imports shared by many specs are parsed once."""

    root: Path
    sink: DiagnosticSink
    overlays: dict[Path, str] = field(default_factory=dict)
    files: dict[Path, SourceFile] = field(default_factory=dict)
    _scopes: dict[Path, dict[str, ProfileDef]] = field(default_factory=dict)
    _model_scopes: dict[Path, dict[str, DeclaredModel]] = field(default_factory=dict)
    _loading: list[Path] = field(default_factory=list)
    # Each path resolved once per run: a spec's import of a shared file, and the file itself,
    # cost a walk of every folder above them each time (most of a clean spec's import). The
    # pipeline hands in its Projects' answers (`resolve`): it resolved each spec already, to find
    # its project.
    resolve: Callable[[Path], Path | spec_files.Unreadable] | None = None
    _resolved: dict[Path, Path | spec_files.Unreadable] = field(default_factory=dict)
    # What each import names, by importing file's folder and written path, resolved (`scope` and
    # `model_scope` both ask, for every spec that imports the shared profile file), and whether a
    # resolved import stays inside the root: building and comparing paths cost more than the rest
    # of an import.
    _imports: dict[tuple[str, str], Path | spec_files.Unreadable] = field(default_factory=dict)
    _inside: dict[Path, bool] = field(default_factory=dict)
    _real_root: Path | None = None
    # Profiles merged with what they extend, once each, so a profile shared by many
    # deployments (or reached along many paths) is merged once.
    _extends: ExtendsResolver | None = None
    # An unknown parent's diagnostic names the profiles visible in its file and looks for a near
    # one among them. A file can name thousands of unknown parents in a scope of thousands: the
    # listing is built once per scope, and the searches share a budget of names compared per run
    # (past it, no "did you mean"), so those diagnostics cost linear time, not scope x parents.
    _listings: dict[int, tuple[dict[str, ProfileDef], str]] = field(default_factory=dict)
    _suggestions_left: int = 200_000
    # The current folder, asked once: `display` names every file of the run relative to it, and
    # each relpath asked the system for it twice.
    _cwd: str | None = None

    def display(self, path: Path) -> str:
        if self._cwd is None:
            try:
                self._cwd = os.getcwd()
            except OSError:  # the folder is gone: display says what it can without it
                return spec_files.display(path)
        return spec_files.display(path, self._cwd)

    def source(self, path: Path, via: tuple[SourceFile, ast.Import] | None = None) -> SourceFile | None:
        """Read and parse a file once; None (after a diagnostic) when it cannot be read.

        A file that cannot be read is reported where it was named: at the `import` that
        names it (`via`), or, named on the command line, at the start of the file itself.
        """
        resolved = self._resolve(path)
        if isinstance(resolved, spec_files.Unreadable):
            return self._unreadable(path, resolved, via)
        path = resolved
        if path in self.files:
            return self.files[path]
        from spark_dsl.syntax.parser import parse

        name = self.display(path)
        text = self.overlays.get(path)
        if text is None:
            data = spec_files.read_spec(path)
            if isinstance(data, spec_files.Unreadable):
                return self._unreadable(path, data, via)
            try:
                text = data.decode("utf-8")
            except UnicodeDecodeError as err:
                self.sink.error(
                    "SPK007",
                    f"file is not valid UTF-8 (byte {err.start})",
                    name,
                    Span(0, 0),
                    help="save the file as UTF-8",
                )
                text = ""
                self.files[path] = SourceFile(path, name, text, None)
                return self.files[path]
        if text.startswith("\ufeff"):
            text = text[1:]
        result = parse(text, name)
        if result.diagnostic is not None:
            self.sink.add(result.diagnostic)
        self.files[path] = SourceFile(path, name, text, result.module)
        return self.files[path]

    def _resolve(self, path: Path) -> Path | spec_files.Unreadable:
        if self.resolve is not None:
            return self.resolve(path)
        found = self._resolved.get(path)
        if found is None:
            found = self._resolved[path] = spec_files.resolve(path)
        return found

    def _unreadable(
        self, path: Path, problem: spec_files.Unreadable, via: tuple[SourceFile, ast.Import] | None
    ) -> SourceFile | None:
        if via is not None:
            importer, imp = via
            self.sink.error(
                "SPK120",
                f'cannot read imported file "{spec_files.printable(imp.path.value)}": {problem.reason}',
                importer.name,
                imp.path.span,
                help=problem.help,
            )
            return None
        # Named on the command line: reported at the file, which joins the run empty.
        name = self.display(path)
        self.sink.error("SPK120", f"cannot read {name}: {problem.reason}", name, Span(0, 0), help=problem.help)
        self.files[path] = SourceFile(path, name, "", None)
        return self.files[path]

    # ---- imports and profiles ---------------------------------------------

    def scope(self, source: SourceFile) -> dict[str, ProfileDef]:
        """The profiles visible in a file: its own and those of its import closure."""
        if source.path in self._scopes:
            return self._scopes[source.path]
        self._loading.append(source.path)
        scope: dict[str, ProfileDef] = {}
        module = source.module
        if module is not None:
            for node in module.profiles:
                self._add_profile(scope, ProfileDef(node, source), source, None)
            for imp in module.imports:
                imported = self._import(source, imp)
                if imported is None:
                    continue
                for prof in self.scope(imported).values():
                    self._add_profile(scope, prof, source, imp)
        self._loading.pop()
        self._scopes[source.path] = scope
        return scope

    def _add_profile(
        self, scope: dict[str, ProfileDef], prof: ProfileDef, source: SourceFile, via: ast.Import | None
    ) -> None:
        name = prof.node.name.name
        existing = scope.get(name)
        if existing is None:
            scope[name] = prof
            return
        if existing.node is prof.node:
            return
        earlier = Location(existing.source.name, existing.node.name.span)
        if via is None:
            where, label = prof.node.name.span, "defined again here"
        else:
            where, label = via.span, f"brings in a second profile `{name}`"
        self.sink.error(
            "SPK114",
            f"duplicate profile `{name}`",
            source.name,
            where,
            label=label,
            help="rename one of the profiles; names must be unique across a file and its imports",
            notes=(
                Note("first defined here", earlier),
                Note("also defined here", Location(prof.source.name, prof.node.name.span)),
            ),
        )

    def _import_target(self, source: SourceFile, raw: str) -> Path | spec_files.Unreadable:
        """What an import written `raw` in `source` names, resolved.

        Remembered by the importing file's folder, on which alone the answer depends: the specs
        of one folder that import the same shared file join and resolve its path once, not once
        each (a join and a resolve were a tenth of a clean spec's loading)."""
        key = (os.path.dirname(source.path), raw)  # text: a Path's parent is a new Path, hashed anew
        found = self._imports.get(key)
        if found is None:
            found = self._imports[key] = self._resolve(source.path.parent / raw)
        return found

    def _root_real(self) -> Path:
        if self._real_root is None:
            self._real_root = self.root.resolve()
        return self._real_root

    def _within_root(self, target: Path) -> bool:
        inside = self._inside.get(target)
        if inside is None:
            root = self._root_real()
            # A root of `/` (a spec with no project above it, in `/` or named so by
            # `--stdin-filename /x.spark`) would let imports name any file: none leaves nothing.
            inside = self._inside[target] = root != Path(root.anchor) and target.is_relative_to(root)
        return inside

    def _import(self, source: SourceFile, imp: ast.Import) -> SourceFile | None:
        raw = imp.path.value
        resolved = self._import_target(source, raw)
        if isinstance(resolved, spec_files.Unreadable):  # a NUL, a symlink loop, a name too long
            return self._unreadable(source.path.parent / raw, resolved, (source, imp))
        target = resolved
        if not self._within_root(target):
            root = self._root_real()
            self.sink.error(
                "SPK112",
                f'import "{spec_files.printable(raw)}" leaves the project root',
                source.name,
                imp.path.span,
                label=f"resolves to {spec_files.printable(str(target))}",
                help=f"keep imports inside {self.display(root) or '.'}, or pass a wider `--root`"
                if root != Path(root.anchor)
                else "give the spec a project: a folder holding a spark.toml or .git, whose files it may import",
            )
            return None
        if target in self._loading:
            chain = [*self._loading[self._loading.index(target) :], target]
            shown = " -> ".join(self.display(p) for p in chain)
            self.sink.error(
                "SPK113",
                f'import cycle: "{raw}" imports this file again',
                source.name,
                imp.path.span,
                label="closes the cycle",
                help=f"break the cycle {shown}: move the shared profiles into a file both import",
            )
            return None
        if len(self._loading) >= MAX_IMPORT_DEPTH:
            self.sink.error(
                "SPK124",
                f"imports nest more than {MAX_IMPORT_DEPTH} files deep",
                source.name,
                imp.path.span,
                label=f"this would make a chain of {MAX_IMPORT_DEPTH + 1} files",
                help=f"import the files a spec needs directly: imports nest at most {MAX_IMPORT_DEPTH} files deep",
            )
            return None
        if target not in self.overlays and target not in self.files and spec_files.missing(target):
            self.sink.error(
                "SPK111",
                f'imported file "{spec_files.printable(raw)}" does not exist',
                source.name,
                imp.path.span,
                label=f"looked for {self.display(target)}",
                help="paths are relative to the importing file",
            )
            return None
        if self._not_a_spec(source, imp, target):
            return None
        return self.source(target, via=(source, imp))

    def _not_a_spec(self, source: SourceFile, imp: ast.Import, target: Path) -> bool:
        """SPK120 for an import of a regular file not named `*.spark`, which is never read: its
        parse errors would quote its first line (a `.env` of tokens) into a CI log."""
        if target.name.endswith(".spark") or target in self.overlays or not os.path.isfile(target):
            return False
        self.sink.error(
            "SPK120",
            f'cannot read imported file "{spec_files.printable(imp.path.value)}": it is not a `.spark` file',
            source.name,
            imp.path.span,
            label=f"resolves to {self.display(target)}",
            help="import a `.spark` file: spark reads, and quotes in its diagnostics, only specs",
        )
        return True

    # ---- declared models ------------------------------------------------------

    def model_scope(self, source: SourceFile) -> dict[str, DeclaredModel]:
        """The models declared in a file and its import closure, as profiles are seen (`scope`)."""
        found = self._model_scopes.get(source.path)
        if found is not None:
            return found
        self.scope(source)  # the import closure, each import reported once
        scope: dict[str, DeclaredModel] = {}
        self._model_scopes[source.path] = scope
        module = source.module
        if module is None:
            return scope
        for node in module.models:
            self._add_model(scope, DeclaredModel(node, source), source, None)
        for imp in module.imports:
            imported = self._imported(source, imp)
            if imported is not None:
                for decl in self.model_scope(imported).values():
                    self._add_model(scope, decl, source, imp)
        return scope

    def _imported(self, source: SourceFile, imp: ast.Import) -> SourceFile | None:
        """A file an import brought in, already loaded by `scope` (None if it could not be)."""
        resolved = self._import_target(source, imp.path.value)
        return None if isinstance(resolved, spec_files.Unreadable) else self.files.get(resolved)

    def _add_model(
        self, scope: dict[str, DeclaredModel], decl: DeclaredModel, source: SourceFile, via: ast.Import | None
    ) -> None:
        from spark_dsl import catalog

        name = decl.node.name.name
        existing = scope.get(name)
        if existing is not None and existing.node is decl.node:
            return
        if via is None and name in catalog.load().models:
            from spark_dsl.diagnostics import replacement

            renamed = f"{name}-custom"
            help = f"rename it (`model {renamed}`), or drop it and use the catalog's `{name}`"
            self.sink.error(
                "SPK128",
                f"model `{name}` is already a shipped catalog model",
                source.name,
                decl.node.name.span,
                label="declared again here",
                help=help,
                fixes=(replacement(f"rename to `{renamed}`", source.name, decl.node.name.span, renamed),),
            )
            return
        if existing is None:
            scope[name] = decl
            return
        where, label = (
            (decl.node.name.span, "declared again here")
            if via is None
            else (via.span, f"brings in a second model `{name}`")
        )
        self.sink.error(
            "SPK128",
            f"model `{name}` is declared twice",
            source.name,
            where,
            label=label,
            help="rename one of the declarations; model names are unique across a file and its imports",
            notes=(
                Note("first declared here", Location(existing.source.name, existing.node.name.span)),
                Note("also declared here", Location(decl.source.name, decl.node.name.span)),
            ),
        )

    def checked_model(self, decl: DeclaredModel) -> TypedBody | None:
        """A declaration's body, checked once where it is written; None when it is not sound."""
        if not decl.checked:
            from spark_dsl.model_schema import FactCheck, model_schema

            decl.checked = True
            checker = BodyChecker(decl.source.name, self.sink, text=decl.source.text)
            body = checker.check(decl.node.body, model_schema(), decl.node.name.span)
            sound = FactCheck(decl, body, self.sink).run()
            decl.typed = body if sound and not body.has_invalid() else None
        return decl.typed

    def typed_profile(self, prof: ProfileDef) -> TypedBody:
        if prof.typed is None:
            scope = self.model_scope(prof.source)
            checker = BodyChecker(
                prof.source.name,
                self.sink,
                profile=prof.node.name.name,
                text=prof.source.text,
                models=tuple(scope),
                repositories=_repositories(scope),
            )
            prof.typed = checker.check(prof.node.body, deployment_schema(), prof.node.name.span)
        return prof.typed

    def _merge_parents(
        self, parents: tuple[ast.Ident, ...], scope: dict[str, ProfileDef], source: SourceFile, deployment: str
    ) -> tuple[TypedBody, tuple[str, ...]]:
        """A deployment's profiles merged in order, and every profile name they bring in."""
        merged = TypedBody()
        used: dict[str, None] = {}
        for parent in parents:
            prof = scope.get(parent.name)
            if prof is None:
                self.unknown_profile(parent, scope, source, deployment)
                continue
            resolved = self.resolved_profile(prof, deployment)
            merged = merged.merged_with(resolved.body)
            used.update(dict.fromkeys(resolved.profiles))
        return merged, tuple(used)

    def resolved_profile(self, prof: ProfileDef, deployment: str | None) -> Resolved:
        if self._extends is None:
            self._extends = ExtendsResolver(self)
        return self._extends.profile(prof, deployment)

    def unknown_profile(
        self, ident: ast.Ident, scope: dict[str, ProfileDef], source: SourceFile, deployment: str | None
    ) -> None:
        from spark_dsl.diagnostics import replacement

        close = None
        if len(scope) <= self._suggestions_left:
            self._suggestions_left -= len(scope)
            close = did_you_mean(ident.name, tuple(scope))
        message = f"unknown profile `{ident.name}`"
        fixes: tuple[Fix, ...] = ()
        if close:
            message += f"; did you mean `{close}`?"
            fixes = (replacement(f"replace with `{close}`", source.name, ident.span, close),)
        else:
            dropped = _without_parent(source, ident)
            fixes = (replacement(f"drop `{ident.name}` from `extends`", source.name, dropped, ""),) if dropped else ()
        self.sink.error(
            "SPK115",
            message,
            source.name,
            ident.span,
            deployment=deployment,
            help=f"profiles visible here: {self._visible(scope)}; import the file that defines it",
            fixes=fixes,
        )

    def _visible(self, scope: dict[str, ProfileDef]) -> str:
        """The profiles of a scope for a help line: the first LISTED_PROFILES by name, and how many more."""
        cached = self._listings.get(id(scope))
        if cached is None or cached[0] is not scope:  # the scope itself is kept, so its id is not reused
            names = sorted(scope)
            shown = ", ".join(f"`{n}`" for n in names[:LISTED_PROFILES]) or "none"
            if len(names) > LISTED_PROFILES:
                shown += f" and {len(names) - LISTED_PROFILES:,} more"
            cached = (scope, shown)
            self._listings[id(scope)] = cached
        return cached[1]

    # ---- deployments --------------------------------------------------------

    def deployments(self, source: SourceFile) -> list[ResolvedDeployment]:
        """Every deployment of a file, profiles merged, required keys checked."""
        module = source.module
        if module is None:
            return []
        scope = self.scope(source)
        models = self.model_scope(source)
        for decl in models.values():
            if decl.source is source:
                self.checked_model(decl)
        for prof in scope.values():
            if prof.source is source:
                self.resolved_profile(prof, None)
        out = []
        repositories = _repositories(models)
        for node in module.deployments:
            name = node.name.name
            self._check_name(node, source)
            base, profiles = self._merge_parents(node.extends, scope, source, name)
            checker = BodyChecker(
                source.name,
                self.sink,
                deployment=name,
                text=source.text,
                models=tuple(models),
                repositories=repositories,
            )
            own = checker.check(node.body, deployment_schema(), node.name.span)
            body = base.merged_with(own)
            body.origin = own.origin
            self._check_required(node, source, body)
            used = models.get(body.value("model"))
            if used is not None:
                self.checked_model(used)  # checked in its own file, even when only imported
            out.append(ResolvedDeployment(name, node, source, body, profiles, used))
        return out

    def _check_name(self, node: ast.Deployment, source: SourceFile) -> None:
        name = node.name.name
        if DEPLOYMENT_NAME.fullmatch(name) and len(name) <= MAX_DEPLOYMENT_NAME:
            return
        from spark_dsl.diagnostics import replacement

        fixed = re.sub(r"[^a-z0-9-]+", "-", name.lower()).strip("-")[:MAX_DEPLOYMENT_NAME].strip("-")
        reason = (
            f"is {len(name)} characters long (at most {MAX_DEPLOYMENT_NAME})"
            if len(name) > MAX_DEPLOYMENT_NAME and DEPLOYMENT_NAME.fullmatch(name)
            else "is not a DNS-1123 label"
        )
        self.sink.error(
            "SPK108",
            f"deployment name `{name}` {reason}",
            source.name,
            node.name.span,
            deployment=name,
            help="use lowercase letters, digits and `-`, at most 40 characters: targets name "
            "files, jobs and Kubernetes objects after it" + (f" (e.g. `{fixed}`)" if fixed else ""),
            fixes=(replacement(f"rename to `{fixed}`", source.name, node.name.span, fixed),) if fixed else (),
        )

    def _check_required(self, node: ast.Deployment, source: SourceFile, body: TypedBody) -> None:
        for key in ("model", "accelerator"):
            if body.get(key) is None and key not in body.invalid:
                from spark_dsl import catalog
                from spark_dsl.edits import add_setting

                # The examples are the catalog's first model and first validated accelerator,
                # looked up only for a missing key: a clean deployment has both.
                cat = catalog.load()
                example = next(iter(cat.models)) if key == "model" else cat.validated_accelerators()[0].id
                self.sink.error(
                    "SPK107",
                    f"deployment `{node.name.name}` has no `{key}`",
                    source.name,
                    node.name.span,
                    deployment=node.name.name,
                    help=f"add `{key} = {example}` to the deployment or a profile it extends",
                    fixes=(add_setting(f"add `{key} = {example}`", source, node.body, key, example),),
                )


def _repositories(scope: dict[str, DeclaredModel]) -> dict[str, str]:
    """The Hugging Face ids of a scope's declared models, which `model = "org/name"` may name."""
    if not scope:
        return {}
    from spark_dsl.typecheck.model_ids import declared

    return declared((name, decl.node) for name, decl in scope.items())


def _without_parent(source: SourceFile, ident: ast.Ident) -> Span | None:
    """The text that drops one name from an `extends` list: with its comma, or the whole clause.

    The statement and the name are found by position (statements and names are in source order):
    comparing the name with each of thousands of parents, for each of them, was quadratic.
    """
    if source.module is None:
        return None
    statements = source.module.statements
    at = ident.span.start
    k = bisect_right(statements, at, key=lambda s: s.span.start) - 1
    statement = statements[k] if k >= 0 else None
    if not isinstance(statement, ast.Profile | ast.Deployment):  # a model declaration extends nothing
        return None
    names = statement.extends
    i = bisect_left(names, at, key=lambda n: n.span.start)
    if i == len(names) or names[i] != ident:
        return None
    if len(names) > 1:
        return (
            Span(ident.span.start, names[i + 1].span.start)
            if i + 1 < len(names)
            else Span(names[i - 1].span.end, ident.span.end)
        )
    name_end = statement.name.span.end  # `deployment d extends x {` -> `deployment d {`
    return Span(name_end, ident.span.end)
