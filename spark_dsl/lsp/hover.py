"""Hover: a key's doc, type and resolved value with its origin; `explain` text on codes."""

from __future__ import annotations

import re

from lsprotocol import types

from spark_dsl.lsp.cursor import Part, Spot, spot_at, symbol_at
from spark_dsl.lsp.documents import Analysis
from spark_dsl.lsp.positions import TextPositions
from spark_dsl.lsp.resolved import resolved_values
from spark_dsl.model_schema import lookup as lookup_block
from spark_dsl.schema import BlockSpec, KeySpec
from spark_dsl.span import Span
from spark_dsl.syntax import ast

_CODE = re.compile(r"SPK\d{3}")


def hover(analysis: Analysis, offset: int, positions: TextPositions) -> types.Hover | None:
    sections: list[str] = []
    span: Span | None = None
    module = analysis.module
    if module is not None:
        comment_code = _code_in_comment(module, offset)
        if comment_code is not None:
            code, span = comment_code
            sections.append(_explain(code))
        spot = spot_at(module, offset)
        if spot is not None and comment_code is None:
            text = _describe(spot, analysis, offset)
            if text:
                sections.append(text)
                span = spot.span
    for code in _codes_at(analysis, offset):
        sections.append(_explain(code))
    if not sections:
        return None
    return types.Hover(
        contents=types.MarkupContent(kind=types.MarkupKind.Markdown, value="\n\n---\n\n".join(sections)),
        range=positions.range(span) if span is not None else None,
    )


def _explain(code: str) -> str:
    from spark_dsl.codes import lookup

    doc = lookup(code)
    return doc.markdown() if doc is not None else f"`{code}`: no explanation is known"


def _code_in_comment(module: ast.Module, offset: int) -> tuple[str, Span] | None:
    """A code under the cursor in a comment such as `# spark: ignore[SPK402]`."""
    for comment in module.comments:
        if comment.span.start <= offset <= comment.span.end:
            for match in _CODE.finditer(comment.text):
                start = comment.span.start + match.start()
                if start <= offset <= start + len(match.group()):
                    return match.group(), Span(start, start + len(match.group()))
    return None


def _codes_at(analysis: Analysis, offset: int) -> list[str]:
    codes: list[str] = []
    own = analysis.source.name if analysis.source is not None else None
    for d in analysis.diagnostics:
        loc = d.location
        under = loc is not None and loc.file == own and loc.span.start <= offset <= loc.span.end
        if under and d.code not in codes:
            codes.append(d.code)
    return codes


# ---- what the cursor is on ----------------------------------------------------------


def _describe(spot: Spot, analysis: Analysis, offset: int) -> str | None:
    if spot.part in (Part.KEY, Part.VALUE):
        assert isinstance(spot.entry, ast.Attribute)
        return _attribute(spot, spot.entry, analysis, offset)
    if spot.part in (Part.BLOCK, Part.LABEL):
        assert isinstance(spot.entry, ast.Block)
        return _block(spot.path, spot.entry)
    if spot.part is Part.NAME:
        if isinstance(spot.statement, ast.Deployment):
            return _deployment(spot.statement, analysis)
        if isinstance(spot.statement, ast.Profile):
            return _profile_users(spot.statement, analysis)
    if spot.part is Part.EXTENDS:
        assert spot.ident is not None
        return _profile(spot.ident.name, analysis)
    if spot.part is Part.IMPORT:
        return _import(spot.statement, analysis)
    return None  # pragma: no cover - every part is handled above


def key_markdown(key: KeySpec) -> str:
    text = f"**{key.name}**: {key.doc}\n\ntype: `{key.type_name}`"
    if key.default:
        text += f"  \ndefault: {key.default}"  # two spaces: a Markdown line break
    return text


def block_markdown(title: str, spec: BlockSpec) -> str:
    lines = [f"**{title}**: {spec.doc}"]
    if spec.labels is not None:
        lines.append("\nkinds: " + ", ".join(f"`{k}`" for k in spec.labels))
    names = [*spec.keys, *spec.blocks]
    if names:
        lines.append("\nkeys: " + ", ".join(f"`{k}`" for k in names))
    if spec.map_of is not None:
        lines.append(f"\nholds `NAME = value` pairs; values are {spec.map_of.value}s")
    return "\n".join(lines)


def _attribute(spot: Spot, attr: ast.Attribute, analysis: Analysis, offset: int) -> str | None:
    spec = lookup_block(spot.path)
    if spec is None:
        return None
    name = attr.key.name
    if spec.map_of is not None:
        text = f"**{name}**: an entry of `{spec.name}` ({spec.doc})"
    else:
        key = spec.keys.get(name)
        if key is None:
            return None
        text = key_markdown(key)
        symbol = symbol_at(attr.value, offset) if spot.part is Part.VALUE else None
        detail = catalog_detail(key.name, symbol.name) if symbol is not None else None
        if symbol is not None and detail is None and key.name == "model" and spot.path == ():
            detail = _declared_model(symbol.name, analysis)
        if symbol is not None and detail:
            text += f"\n\n`{symbol.name}`: {detail}"
    if isinstance(spot.statement, ast.Deployment):
        dep = analysis.deployment(spot.statement)
        if dep is not None:
            values = resolved_values(dep, analysis.result.sources, analysis.plan(dep))
            value = values.get(".".join((*spot.path, name)))
            if value is not None:
                where = f" ({value.where})" if value.where else ""
                text += f"\n\nresolved: `{value.value}` from {value.origin}{where}"
    return text


def catalog_detail(key: str, name: str) -> str | None:
    """What the catalog knows about an accelerator or a model id."""
    from spark_dsl import catalog

    cat = catalog.load()
    if key == "accelerator" and name in cat.accelerators:
        acc = cat.accelerators[name]
        status = "validated" if acc.validated else "not validated"
        note = f"; {acc.note}" if acc.note else ""
        memory = "the host's memory (`runtime.host_memory`)" if acc.memory_gb is None else f"{acc.memory_gb:g} GB each"
        return f"{acc.display_name}, {acc.gpus_per_node} GPUs per node with {memory}; {status} for this recipe{note}"
    if key == "model" and name in cat.models:
        model = cat.models[name]
        return (
            f"{model.display_name}: {model.total_params_b:g}B parameters, "
            f"{model.active_params_b:g}B active, context up to {model.max_context:,} tokens; "
            f"checkpoints {', '.join(model.checkpoints)}"
        )
    return None


def _declared_model(name: str, analysis: Analysis) -> str | None:
    """Where a model is declared (`model NAME { }`), and its facts as written."""
    from spark_dsl.format.values import inline
    from spark_dsl.lsp.definition import find_model

    found = find_model(name, analysis)
    if found is None:
        return None
    source, decl = found
    line, _ = source.index.position(decl.name.span.start)
    facts = ", ".join(f"`{e.key.name} = {inline(e.value)}`" for e in decl.body.entries if isinstance(e, ast.Attribute))
    labels = [e.label.name for e in decl.body.entries if isinstance(e, ast.Block) and e.label is not None]
    checkpoints = f"; checkpoints {', '.join(labels)}" if labels else ""
    return f"model declared in {source.name}:{line}: {facts}{checkpoints}"


def _block(path: tuple[str, ...], block: ast.Block) -> str | None:
    parent = lookup_block(path)
    spec = parent.blocks.get(block.kind.name) if parent is not None else None
    if spec is None:
        return None
    if spec.labels is not None and block.label is not None and block.label.name in spec.labels:
        label = block.label.name
        return block_markdown(f"{block.kind.name} {label}", spec.labels[label])
    return block_markdown(block.kind.name, spec)


def _deployment(node: ast.Deployment, analysis: Analysis) -> str:
    lines = [f"**deployment {node.name.name}**"]
    dep = analysis.deployment(node)
    if dep is None:
        return lines[0]
    if dep.profiles:
        lines.append("\nprofiles: " + ", ".join(f"`{p}`" for p in dep.profiles))
    values = resolved_values(dep, analysis.result.sources, analysis.plan(dep))
    if values:
        lines += ["", "| key | value | from |", "|---|---|---|"]
        for value in values.values():
            where = f" ({value.where})" if value.where else ""
            shown = value.value.replace("|", "\\|")
            lines.append(f"| `{value.key}` | `{shown}` | {value.origin}{where} |")
    return "\n".join(lines)


def _profile_users(node: ast.Profile, analysis: Analysis) -> str:
    users = [d.name for d in analysis.result.deployments if node.name.name in d.profiles]
    text = f"**profile {node.name.name}**"
    if users:
        text += "\n\nused by: " + ", ".join(f"`{u}`" for u in users)
    return text


def _profile(name: str, analysis: Analysis) -> str | None:
    from spark_dsl.format.values import inline
    from spark_dsl.lsp.definition import find_profile

    found = find_profile(name, analysis)
    if found is None:
        return None
    source, profile = found
    line, _ = source.index.position(profile.name.span.start)
    lines = [f"**profile {name}** ({source.name}:{line})"]
    attrs = [e for e in profile.body.entries if isinstance(e, ast.Attribute)]
    blocks = [e for e in profile.body.entries if isinstance(e, ast.Block)]
    if attrs or blocks:
        lines.append("\n```spark")
        lines += [f"{a.key.name} = {inline(a.value)}" for a in attrs]
        lines += [f"{b.kind.name}{' ' + b.label.name if b.label else ''} {{ ... }}" for b in blocks]
        lines.append("```")
    return "\n".join(lines)


def _import(stmt: ast.Statement, analysis: Analysis) -> str:
    assert isinstance(stmt, ast.Import)
    target = (analysis.path.parent / stmt.path.value).resolve()
    source = analysis.source_at(target)
    if source is None:
        return f"**import** `{stmt.path.value}`: not loaded (see the diagnostic)"
    names = [p.name.name for p in source.module.profiles] if source.module else []
    listing = ", ".join(f"`{n}`" for n in names) or "none"
    return f"**import** `{source.name}`\n\nprofiles: {listing}"
