"""Go to definition: a profile named after `extends`, a declared model named by `model =`, and
the file an import names."""

from __future__ import annotations

from pathlib import Path

from lsprotocol import types

from spark_dsl.loader import SourceFile
from spark_dsl.lsp.cursor import Part, spot_at
from spark_dsl.lsp.documents import Analysis
from spark_dsl.lsp.positions import TextPositions
from spark_dsl.lsp.uris import file_uri
from spark_dsl.syntax import ast

_FILE_START = types.Range(start=types.Position(line=0, character=0), end=types.Position(line=0, character=0))


def find_profile(name: str, analysis: Analysis) -> tuple[SourceFile, ast.Profile] | None:
    """The profile a name refers to: the file's own first, then its imports, nearest first."""
    found = _find(name, analysis, models=False)
    if found is None or not isinstance(found[1], ast.Profile):
        return None
    return found[0], found[1]


def find_model(name: str, analysis: Analysis) -> tuple[SourceFile, ast.ModelDecl] | None:
    """The `model` declaration a name refers to, searched as profiles are."""
    found = _find(name, analysis, models=True)
    if found is None or not isinstance(found[1], ast.ModelDecl):
        return None
    return found[0], found[1]


def _find(name: str, analysis: Analysis, models: bool) -> tuple[SourceFile, ast.Profile | ast.ModelDecl] | None:
    if analysis.source is None:
        return None
    queue = [analysis.source]
    seen: set[Path] = set()
    while queue:
        source = queue.pop(0)
        if source.path in seen or source.module is None:
            continue
        seen.add(source.path)
        for named in source.module.models if models else source.module.profiles:
            if named.name.name == name:
                return source, named
        for imp in source.module.imports:
            imported = analysis.source_at((source.path.parent / imp.path.value).resolve())
            if imported is not None:
                queue.append(imported)
    return None


def _names_a_model(entry: object, path: tuple[str, ...]) -> bool:
    """`model = NAME` in a deployment's or profile's own body."""
    return (
        path == ()
        and isinstance(entry, ast.Attribute)
        and entry.key.name == "model"
        and isinstance(entry.value, ast.Symbol | ast.String)
    )


def definition(analysis: Analysis, offset: int, encoding: str) -> list[types.Location] | None:
    module = analysis.module
    spot = spot_at(module, offset) if module is not None else None
    if spot is None:
        return None
    found: tuple[SourceFile, ast.Profile | ast.ModelDecl] | None = None
    if spot.part is Part.EXTENDS and spot.ident is not None:
        found = _find(spot.ident.name, analysis, models=False)
    elif spot.part is Part.VALUE and _names_a_model(spot.entry, spot.path):
        assert isinstance(spot.entry, ast.Attribute) and isinstance(spot.entry.value, ast.Symbol | ast.String)
        value = spot.entry.value
        found = _find(value.name if isinstance(value, ast.Symbol) else value.value, analysis, models=True)
    if found is not None:
        source, named = found
        positions = TextPositions(source.text, encoding, source.index)
        uri = analysis.uri if source.path == analysis.path else file_uri(source.path)
        return [types.Location(uri=uri, range=positions.range(named.name.span))]
    if spot.part is Part.IMPORT:
        assert isinstance(spot.statement, ast.Import)
        try:
            target = (analysis.path.parent / spot.statement.path.value).resolve()
        except (OSError, RuntimeError, ValueError):  # a NUL in the import; a loop, on Python < 3.13
            return None
        if analysis.source_at(target) is None and not target.is_file():
            return None
        return [types.Location(uri=file_uri(target), range=_FILE_START)]
    return None
