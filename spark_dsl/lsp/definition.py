"""Go to definition: a profile named after `extends`, and the file an import names."""

from __future__ import annotations

from pathlib import Path

from lsprotocol import types
from pygls.uris import from_fs_path

from spark_dsl.loader import SourceFile
from spark_dsl.lsp.cursor import Part, spot_at
from spark_dsl.lsp.documents import Analysis
from spark_dsl.lsp.positions import TextPositions
from spark_dsl.syntax import ast

_FILE_START = types.Range(start=types.Position(line=0, character=0), end=types.Position(line=0, character=0))


def find_profile(name: str, analysis: Analysis) -> tuple[SourceFile, ast.Profile] | None:
    """The profile a name refers to: the file's own first, then its imports, nearest first."""
    if analysis.source is None:
        return None
    queue = [analysis.source]
    seen: set[Path] = set()
    while queue:
        source = queue.pop(0)
        if source.path in seen or source.module is None:
            continue
        seen.add(source.path)
        for profile in source.module.profiles:
            if profile.name.name == name:
                return source, profile
        for imp in source.module.imports:
            imported = analysis.source_at((source.path.parent / imp.path.value).resolve())
            if imported is not None:
                queue.append(imported)
    return None


def definition(analysis: Analysis, offset: int, encoding: str) -> list[types.Location] | None:
    module = analysis.module
    spot = spot_at(module, offset) if module is not None else None
    if spot is None:
        return None
    if spot.part is Part.EXTENDS and spot.ident is not None:
        found = find_profile(spot.ident.name, analysis)
        if found is None:
            return None
        source, profile = found
        positions = TextPositions(source.text, encoding, source.index)
        uri = analysis.uri if source.path == analysis.path else from_fs_path(str(source.path))
        return [types.Location(uri=uri, range=positions.range(profile.name.span))]
    if spot.part is Part.IMPORT:
        assert isinstance(spot.statement, ast.Import)
        target = (analysis.path.parent / spot.statement.path.value).resolve()
        if analysis.source_at(target) is None and not target.is_file():
            return None
        return [types.Location(uri=from_fs_path(str(target)), range=_FILE_START)]
    return None
