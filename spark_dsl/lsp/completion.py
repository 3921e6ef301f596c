"""Completion: keys valid at the cursor, values of the key being assigned, labels, profiles."""

from __future__ import annotations

import os
import re
from pathlib import Path

from lsprotocol import types

from spark_dsl.lsp.context import TypingContext, Want, typing_context
from spark_dsl.lsp.hover import block_markdown, catalog_detail, key_markdown
from spark_dsl.lsp.positions import TextPositions
from spark_dsl.model_schema import lookup as lookup_block
from spark_dsl.pipeline import run
from spark_dsl.schema import KeySpec, Kind
from spark_dsl.span import Span

# Values that are syntax rather than symbols of the schema: how each kind is spelled.
_FORMS: dict[Kind, tuple[tuple[str, str], ...]] = {
    Kind.BOOL: (("true", ""), ("false", "")),
    Kind.PARALLEL: (
        ("tp", "tensor parallel across every GPU of the node"),
        ("tp + ep", "tensor parallel plus expert parallel"),
        ("dp(2) + tp + ep", "data parallel replicas of tensor plus expert parallel"),
        ("tp(4)", "tensor parallel over N GPUs"),
        ("tp + pp(2)", "tensor parallel in each node, one pipeline stage per node"),
        ("ep", "expert parallel"),
        ("auto", "let the recipe choose"),
    ),
    Kind.SPECULATIVE: (
        ("dspark", "DSpark draft model"),
        ("dspark(adaptive)", "DSpark with adaptive draft length"),
        ("dspark(tokens = 4)", "DSpark with a fixed number of draft tokens"),
        ("none", "no speculative decoding"),
        ("auto", "let the recipe choose"),
    ),
    Kind.SECRET: (
        ('secret("name")', "a secret stored outside the spec"),
        ('env("NAME")', "an environment variable of the machine that runs it"),
    ),
    Kind.VOLUME: (
        ('pvc("model-cache")', "a PersistentVolumeClaim"),
        ('hostpath("/models")', "a folder of the node"),
        ("emptydir", "scratch space that lives as long as the pod"),
    ),
    Kind.COUNT: (("32K", "32,768 (K = 1024)"), ("128K", "131,072"), ("1M", "1,048,576")),
    Kind.SIZE: (("64GiB", "64 x 1024^3 bytes"), ("16GB", "16 x 1000^3 bytes")),
    Kind.DURATION: (("4h", "four hours"), ("1h30m", "ninety minutes"), ("45m", "")),
}
_STATEMENTS = (
    (
        "deployment",
        "deployment ${1:name} {\n\tmodel       = ${2:muse-spark-open}\n\taccelerator = ${3:b200}\n}",
        "deployment NAME { ... }",
    ),
    ("profile", "profile ${1:name} {\n\t$0\n}", "profile NAME { ... }"),
    (
        "model",
        "model ${1:name} {\n\tlayers      = ${2:32}\n\thidden_size = ${3:4096}\n\tquery_heads = ${4:32}\n"
        "\tkv_heads    = ${5:8}\n\thead_dim    = ${6:128}\n\tmax_context = ${7:128K}\n}",
        "model NAME { ... }",
    ),
    ("import", 'import "$0"', 'import "path.spark"'),
)
_MAX_IMPORT_CHOICES = 200
_PROFILE_LINE = re.compile(r"^\s*profile\s+(?P<name>[A-Za-z][\w-]*)", re.MULTILINE)
_MODEL_LINE = re.compile(r"^\s*model\s+(?P<name>[A-Za-z][\w-]*)\s*\{", re.MULTILINE)
_IMPORT_LINE = re.compile(r'^\s*import\s+"(?P<path>[^"]*)"', re.MULTILINE)


class Completer:
    """Builds completion items for one request."""

    def __init__(self, positions: TextPositions, offset: int, snippets: bool) -> None:
        self.positions = positions
        self.offset = offset
        self.snippets = snippets

    def item(
        self,
        ctx: TypingContext,
        label: str,
        kind: types.CompletionItemKind,
        *,
        text: str | None = None,
        snippet: str | None = None,
        detail: str | None = None,
        doc: str | None = None,
        order: int = 0,
    ) -> types.CompletionItem:
        use_snippet = snippet is not None and self.snippets
        new_text = snippet if use_snippet and snippet is not None else (text or label)
        return types.CompletionItem(
            label=label,
            kind=kind,
            detail=detail or None,
            documentation=types.MarkupContent(kind=types.MarkupKind.Markdown, value=doc) if doc else None,
            sort_text=f"{order:04d}",
            filter_text=label,
            insert_text_format=types.InsertTextFormat.Snippet if use_snippet else types.InsertTextFormat.PlainText,
            text_edit=types.TextEdit(range=self.positions.range(Span(ctx.start, self.offset)), new_text=new_text),
        )


def completions(
    text: str,
    offset: int,
    positions: TextPositions,
    document: Path,
    project: tuple[Path, dict[Path, str]],
    snippets: bool,
) -> list[types.CompletionItem]:
    """Items at the cursor; `project` is the root and the open buffers (profiles, imports)."""
    ctx = typing_context(text, offset)
    if ctx is None:
        return []
    completer = Completer(positions, offset, snippets)
    if ctx.want is Want.STATEMENT:
        return [
            completer.item(
                ctx,
                name,
                types.CompletionItemKind.Keyword,
                text=name,
                snippet=body,
                detail=detail,
                order=i,
            )
            for i, (name, body, detail) in enumerate(_STATEMENTS)
        ]
    if ctx.want is Want.KEY:
        return _keys(completer, ctx)
    root, open_texts = project
    if ctx.want is Want.VALUE:
        items = _values(completer, ctx)
        if ctx.key == "model" and ctx.path == ():  # the models this file declares or imports
            declared = visible_models(text, document, root, open_texts)
            items += _declared(completer, ctx, declared, len(items))
        return items
    if ctx.want is Want.LABEL:
        return _labels(completer, ctx)
    if ctx.want is Want.PROFILE:
        return _profiles(completer, ctx, visible_profiles(text, document, root, open_texts))
    return _imports(completer, ctx, document, root)


def _keys(completer: Completer, ctx: TypingContext) -> list[types.CompletionItem]:
    spec = lookup_block(ctx.path or ())
    if spec is None or spec.map_of is not None:
        return []
    items = []
    for order, key in enumerate(spec.keys.values()):
        if key.name in ctx.present:
            continue
        items.append(
            completer.item(
                ctx,
                key.name,
                types.CompletionItemKind.Property,
                text=f"{key.name} = ",
                snippet=f"{key.name} = $0",
                detail=key.type_name,
                doc=key_markdown(key),
                order=order,
            )
        )
    for order, (name, block) in enumerate(spec.blocks.items(), start=len(spec.keys)):
        if block.labels is not None:
            kinds = ",".join(block.labels)
            snippet = f"{name} ${{1|{kinds}|}} {{\n\t$0\n}}"
        elif name in ctx.present:
            continue
        else:
            snippet = f"{name} {{\n\t$0\n}}"
        items.append(
            completer.item(
                ctx,
                name,
                types.CompletionItemKind.Module,
                text=name,
                snippet=snippet,
                detail="block",
                doc=block_markdown(name, block),
                order=order,
            )
        )
    return items


def _key_spec(ctx: TypingContext) -> KeySpec | None:
    spec = lookup_block(ctx.path or ())
    if spec is None or ctx.key is None:
        return None
    return spec.keys.get(ctx.key)


def _values(completer: Completer, ctx: TypingContext) -> list[types.CompletionItem]:
    key = _key_spec(ctx)
    if key is None:
        return []
    items = []
    if key.symbols:
        for order, symbol in enumerate(key.symbols):
            wrap = key.kind is Kind.SYMBOL_LIST and not ctx.in_list
            items.append(
                completer.item(
                    ctx,
                    symbol,
                    types.CompletionItemKind.EnumMember,
                    text=f"[{symbol}]" if wrap else symbol,
                    detail=catalog_detail(key.name, symbol),
                    order=order,
                )
            )
    for order, (form, detail) in enumerate(_FORMS.get(key.kind, ()), start=len(items)):
        items.append(completer.item(ctx, form, types.CompletionItemKind.Value, text=form, detail=detail, order=order))
    return items


def _labels(completer: Completer, ctx: TypingContext) -> list[types.CompletionItem]:
    spec = lookup_block(ctx.path or ())
    block = spec.blocks.get(ctx.key or "") if spec is not None else None
    if block is None or block.labels is None:
        return []
    return [
        completer.item(
            ctx,
            label,
            types.CompletionItemKind.EnumMember,
            snippet=f"{label} {{\n\t$0\n}}",
            detail=inner.doc,
            doc=block_markdown(f"{ctx.key} {label}", inner),
            order=order,
        )
        for order, (label, inner) in enumerate(block.labels.items())
    ]


def visible_profiles(text: str, path: Path, root: Path, open_texts: dict[Path, str]) -> list[tuple[str, str]]:
    """(profile, file) pairs visible from a text that may not parse: its own and its imports'."""
    return _visible(text, path, root, open_texts, models=False)


def visible_models(text: str, path: Path, root: Path, open_texts: dict[Path, str]) -> list[tuple[str, str]]:
    """(model, file) pairs of the `model` declarations visible from a text: its own and its imports'."""
    return _visible(text, path, root, open_texts, models=True)


def _visible(text: str, path: Path, root: Path, open_texts: dict[Path, str], models: bool) -> list[tuple[str, str]]:
    line = _MODEL_LINE if models else _PROFILE_LINE
    found = [(m["name"], path.name) for m in line.finditer(text)]
    imported = [p for m in _IMPORT_LINE.finditer(text) if (p := _importable(path.parent / m["path"], root, open_texts))]
    if imported:
        result = run(imported, root, open_texts)
        for source in result.sources.values():
            if source.module is not None:
                named = source.module.models if models else source.module.profiles
                found += [(p.name.name, source.name) for p in named]
    return list(dict.fromkeys(found))


def _declared(
    completer: Completer, ctx: TypingContext, models: list[tuple[str, str]], first: int
) -> list[types.CompletionItem]:
    return [
        completer.item(ctx, name, types.CompletionItemKind.EnumMember, detail=f"model declared in {file}", order=order)
        for order, (name, file) in enumerate(models, start=first)
    ]


def _importable(path: Path, root: Path, open_texts: dict[Path, str]) -> Path | None:
    """The resolved file an import names, if it is open or a file inside the root."""
    try:
        resolved = path.resolve()
        inside = resolved.is_relative_to(root) and (resolved in open_texts or resolved.is_file())
    except (OSError, RuntimeError, ValueError):  # a loop, a NUL, a name too long: the check reports it
        return None
    return resolved if inside else None


def _profiles(completer: Completer, ctx: TypingContext, profiles: list[tuple[str, str]]) -> list[types.CompletionItem]:
    return [
        completer.item(ctx, name, types.CompletionItemKind.Class, detail=f"profile in {file}", order=order)
        for order, (name, file) in enumerate(profiles)
    ]


def _imports(completer: Completer, ctx: TypingContext, document: Path, root: Path) -> list[types.CompletionItem]:
    items: list[types.CompletionItem] = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
        for filename in sorted(filenames):
            path = Path(dirpath) / filename
            if path.suffix != ".spark" or path == document:
                continue
            relative = Path(os.path.relpath(path, document.parent)).as_posix()
            items.append(completer.item(ctx, relative, types.CompletionItemKind.File, order=len(items)))
            if len(items) >= _MAX_IMPORT_CHOICES:
                return items
    return items
