"""Finds what the cursor is on in a parsed module: a key, a value, a block, a name, an import."""

from __future__ import annotations

from enum import Enum

from msgspec import Struct

from spark_dsl.model_schema import MODEL_ROOT
from spark_dsl.model_schema import lookup as lookup_block
from spark_dsl.span import Span
from spark_dsl.syntax import ast


class Part(Enum):
    IMPORT = "import"
    NAME = "name"  # the name of a profile or deployment
    EXTENDS = "extends"  # a profile named after `extends`
    KEY = "key"  # an attribute's key
    VALUE = "value"  # (inside) an attribute's value
    BLOCK = "block"  # a block's kind
    LABEL = "label"  # a block's label


class Spot(Struct, frozen=True):
    """The syntax under the cursor, with the schema path of the body that holds it."""

    part: Part
    span: Span
    statement: ast.Statement
    path: tuple[str, ...] = ()
    entry: ast.Attribute | ast.Block | None = None
    ident: ast.Ident | None = None


def _inside(span: Span, offset: int) -> bool:
    # The end counts: a cursor right after a word is still on it.
    return span.start <= offset <= span.end


def child_path(path: tuple[str, ...], block: ast.Block) -> tuple[str, ...]:
    """The schema path of a block's body: its kind, and its label where the kind takes labels."""
    parent = lookup_block(path)
    spec = parent.blocks.get(block.kind.name) if parent is not None else None
    if spec is not None and spec.labels is not None and block.label is not None:
        return (*path, block.kind.name, block.label.name)
    return (*path, block.kind.name)


def spot_at(module: ast.Module, offset: int) -> Spot | None:
    for stmt in module.statements:
        if not _inside(stmt.span, offset):
            continue
        if isinstance(stmt, ast.Import):
            return Spot(Part.IMPORT, stmt.path.span, stmt)
        if _inside(stmt.name.span, offset):
            return Spot(Part.NAME, stmt.name.span, stmt, ident=stmt.name)
        for parent in stmt.extends:
            if _inside(parent.span, offset):
                return Spot(Part.EXTENDS, parent.span, stmt, ident=parent)
        return _in_body(stmt.body, offset, stmt, (MODEL_ROOT,) if isinstance(stmt, ast.ModelDecl) else ())
    return None


def _in_body(body: ast.Body, offset: int, stmt: ast.Statement, path: tuple[str, ...]) -> Spot | None:
    for entry in body.entries:
        if not _inside(entry.span, offset):
            continue
        if isinstance(entry, ast.Attribute):
            if _inside(entry.key.span, offset):
                return Spot(Part.KEY, entry.key.span, stmt, path, entry, entry.key)
            return Spot(Part.VALUE, entry.value.span, stmt, path, entry)
        if _inside(entry.kind.span, offset):
            return Spot(Part.BLOCK, entry.kind.span, stmt, path, entry, entry.kind)
        if entry.label is not None and _inside(entry.label.span, offset):
            return Spot(Part.LABEL, entry.label.span, stmt, path, entry, entry.label)
        if _inside(entry.body.span, offset):
            return _in_body(entry.body, offset, stmt, child_path(path, entry))
    return None


def symbol_at(value: ast.Value, offset: int) -> ast.Symbol | None:
    """The bare name inside a value under the cursor (`nvfp4`, `tp` in `tp + ep`)."""
    match value:
        case ast.Symbol():
            return value if _inside(value.span, offset) else None
        case ast.ListValue() | ast.Combination():
            items = value.items if isinstance(value, ast.ListValue) else value.terms
            for item in items:
                if _inside(item.span, offset):
                    return symbol_at(item, offset)
        case ast.Call():
            for arg in value.args:
                if _inside(arg.value.span, offset):
                    return symbol_at(arg.value, offset)
    return None
