"""Document symbols: imports, profiles and deployments, their attributes and blocks inside."""

from __future__ import annotations

from lsprotocol import types

from spark_dsl.format.values import inline
from spark_dsl.lsp.positions import TextPositions
from spark_dsl.syntax import ast

_DETAIL_WIDTH = 60


def _entry(entry: ast.Attribute | ast.Block, positions: TextPositions) -> types.DocumentSymbol:
    if isinstance(entry, ast.Attribute):
        value = inline(entry.value)
        return types.DocumentSymbol(
            name=entry.key.name,
            kind=types.SymbolKind.Property,
            detail=value if len(value) <= _DETAIL_WIDTH else value[: _DETAIL_WIDTH - 3] + "...",
            range=positions.range(entry.span),
            selection_range=positions.range(entry.key.span),
        )
    name = entry.kind.name + (f" {entry.label.name}" if entry.label else "")
    return types.DocumentSymbol(
        name=name,
        kind=types.SymbolKind.Struct,
        range=positions.range(entry.span),
        selection_range=positions.range(entry.kind.span),
        children=[_entry(e, positions) for e in entry.body.entries],
    )


def document_symbols(module: ast.Module, positions: TextPositions) -> list[types.DocumentSymbol]:
    symbols = []
    for stmt in module.statements:
        if isinstance(stmt, ast.Import):
            symbols.append(
                types.DocumentSymbol(
                    name=stmt.path.value,
                    kind=types.SymbolKind.File,
                    detail="import",
                    range=positions.range(stmt.span),
                    selection_range=positions.range(stmt.path.span),
                )
            )
            continue
        is_profile = isinstance(stmt, ast.Profile)
        keyword = "model" if isinstance(stmt, ast.ModelDecl) else "profile" if is_profile else "deployment"
        extends = ", ".join(p.name for p in stmt.extends)
        symbols.append(
            types.DocumentSymbol(
                name=stmt.name.name,
                kind=types.SymbolKind.Interface if is_profile else types.SymbolKind.Module,
                detail=keyword + (f" extends {extends}" if extends else ""),
                range=positions.range(stmt.span),
                selection_range=positions.range(stmt.name.span),
                children=[_entry(e, positions) for e in stmt.body.entries],
            )
        )
    return symbols
