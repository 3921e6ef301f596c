"""Checks open documents with the one pipeline, unsaved editor buffers passed as overlays."""

from __future__ import annotations

import hashlib
import os
from functools import lru_cache
from pathlib import Path

from msgspec import Struct, field

from spark_dsl import files
from spark_dsl.diagnostics import Diagnostic
from spark_dsl.loader import ResolvedDeployment, SourceFile
from spark_dsl.lsp.uris import file_uri, uri_path
from spark_dsl.pipeline import RunResult, run
from spark_dsl.plan.model import Plan
from spark_dsl.project import Projects
from spark_dsl.syntax import ast


def document_path(uri: str) -> Path:
    """The file behind a URI; an unsaved (untitled) buffer gets a stable stand-in in the cwd."""
    return _located(uri)[0]


def resolvable(uri: str) -> bool:
    """Whether the URI's path resolves; one that does not (a symlink loop, a NUL, a name
    too long) must not be handed to the pipeline, which resolves every path it is given."""
    return _located(uri)[1]


@lru_cache(maxsize=1024)
def _located(uri: str) -> tuple[Path, bool]:
    """Cached: a check asks several times, and resolving a path costs system calls.

    A URI that names no file (another scheme, or one that does not parse) is an untitled
    buffer. A lone surrogate in a path (UnicodeEncodeError, a ValueError) makes it a path
    that does not resolve; in the digest it is kept as it is (surrogatepass).
    """
    fs_path = uri_path(uri)
    if fs_path:
        try:
            return Path(fs_path).resolve(), True
        except (OSError, RuntimeError, ValueError):  # RuntimeError: a loop, on Python < 3.13
            return Path(os.path.abspath(fs_path)), False
    digest = hashlib.sha1(uri.encode("utf-8", "surrogatepass")).hexdigest()[:12]
    return (Path.cwd() / f".untitled-{digest}.spark").resolve(), True


def read_unopened(uri: str) -> str | None:
    """The text of a `file:` document the editor has not opened, if it is a readable spec.

    Read as the loader reads specs (spark_dsl.files): only a regular file of at most
    MAX_SPEC_BYTES, never blocking. A FIFO would block the server, a device such as
    /dev/zero never ends, /dev/stdin is the server's own input.
    """
    fs_path = uri_path(uri)
    if not fs_path:
        return None
    data = files.read_spec(Path(fs_path))
    if isinstance(data, files.Unreadable):
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def project_root(path: Path) -> Path:
    """The root imports may not leave, found as `spark check` finds it (spark_dsl.project): the
    nearest folder above the file with spark.toml, [tool.spark] or .git, whatever the workspace."""
    return Projects().of(path).root


class Analysis(Struct):
    """One document's latest pipeline run and what the editor features read from it."""

    uri: str
    path: Path
    text: str
    version: int | None
    result: RunResult
    source: SourceFile | None
    diagnostics: list[Diagnostic] = field(default_factory=list)
    # The files imports name that the run could not read (SPK120: a folder, a FIFO, a file
    # over the size limit): the document is checked again when one of them changes too.
    unread: frozenset[Path] = frozenset()

    @property
    def module(self) -> ast.Module | None:
        return self.source.module if self.source is not None else None

    def source_at(self, path: Path) -> SourceFile | None:
        for source in self.result.sources.values():
            if source.path == path:
                return source
        return None

    def uri_of(self, file: str) -> str | None:
        """The URI of a file named in a diagnostic, the editor's own URI for this document."""
        source = self.result.sources.get(file)
        if source is None:
            return None
        if source.path == self.path:
            return self.uri
        return file_uri(source.path)

    def depends_on(self, path: Path) -> bool:
        """Whether this document's run read `path` (itself or an import, however deep), or an
        import names it and it could not be read."""
        return path != self.path and (path in self.unread or self.source_at(path) is not None)

    def plan(self, deployment: ResolvedDeployment) -> Plan | None:
        return next((p for p in self.result.plans if p.deployment is deployment), None)

    def deployment(self, node: ast.Deployment) -> ResolvedDeployment | None:
        for dep in self.result.deployments:
            if dep.node is node:
                return dep
        return None


def analyse(
    uri: str,
    text: str,
    version: int | None,
    open_texts: dict[Path, str],
) -> Analysis:
    """Runs the pipeline for one document; its diagnostics are those located in it.

    A document whose path does not resolve is checked from its path, not its text: the
    loader then says why the path cannot be read.
    """
    path = document_path(uri)
    overlays = {**open_texts, path: text} if resolvable(uri) else open_texts
    # The file's project as `spark check` finds it: the same root, and its settings.
    result = run([path], Projects(), overlays)
    source = next((s for s in result.sources.values() if s.path == path), None)
    own = source.name if source is not None else None
    diagnostics = [d for d in result.diagnostics if d.location is None or d.location.file == own]
    return Analysis(uri, path, text, version, result, source, diagnostics, unread_imports(result))


def unread_imports(result: RunResult) -> frozenset[Path]:
    """The files named by imports the run reported at (SPK120 and the like) rather than read,
    resolved as far as they can be; a path that does not resolve is kept absolute as written.
    Only those: the files read are the run's sources already, and resolving costs system calls
    at every keystroke."""
    reported = {(d.location.file, d.location.span) for d in result.diagnostics if d.location is not None}
    named = set()
    for source in result.sources.values():
        for imp in source.module.imports if source.module is not None else ():
            if (source.name, imp.path.span) not in reported:
                continue
            raw = os.path.join(source.path.parent, imp.path.value)
            try:
                named.add(Path(os.path.realpath(raw)))
            except (OSError, ValueError):  # a NUL in the path; a loop, on some systems
                named.add(Path(os.path.abspath(raw)))
    return frozenset(named)


def affected_by(analyses: dict[str, Analysis], changes: list[tuple[Path, bool]]) -> list[str]:
    """The documents that changes on disk, (path, created), can alter: those whose last check
    read a changed or deleted file; every one when a file was created (an import that was
    missing may be there now). A document's own file is its editor buffer, not the disk."""
    if any(created for _, created in changes):
        return list(analyses)
    paths = {path for path, _ in changes}
    return [uri for uri, analysis in analyses.items() if any(analysis.depends_on(path) for path in paths)]


def workspace_folders(uris: list[str]) -> list[Path]:
    """The folders of `file:` URIs, resolved; a path that cannot be (a NUL in it) is left out."""
    out = []
    for uri in uris:
        fs_path = uri_path(uri)
        if not fs_path:
            continue
        try:
            out.append(Path(os.path.realpath(fs_path)))
        except (OSError, ValueError):
            continue
    return out
