"""Quick fixes: the edits a diagnostic carries, and `# spark: ignore[CODE]` for non-errors."""

from __future__ import annotations

import re
from typing import Any

from lsprotocol import types

from spark_dsl.lsp.diagnostics import SOURCE
from spark_dsl.lsp.positions import TextPositions
from spark_dsl.span import Span

# An own-line ignore comment, whose code list a new code joins instead of a second comment.
_IGNORE_LINE = re.compile(r"^(?P<indent>\s*)#\s*spark:\s*ignore\[(?P<codes>[A-Z0-9,\s]+)\]\s*$")


def _range(data: dict[str, Any]) -> types.Range:
    return types.Range(
        start=types.Position(line=data["start"]["line"], character=data["start"]["character"]),
        end=types.Position(line=data["end"]["line"], character=data["end"]["character"]),
    )


def fix_actions(diagnostic: types.Diagnostic) -> list[types.CodeAction]:
    """One action per fix in the diagnostic's data; a lone fix is the preferred one."""
    data = diagnostic.data if isinstance(diagnostic.data, dict) else {}
    fixes = data.get("fixes") or []
    actions = []
    for fix in fixes:
        changes: dict[str, list[types.TextEdit]] = {}
        for edit in fix["edits"]:
            changes.setdefault(edit["uri"], []).append(
                types.TextEdit(range=_range(edit["range"]), new_text=edit["newText"])
            )
        actions.append(
            types.CodeAction(
                title=fix["title"][:1].upper() + fix["title"][1:],
                kind=types.CodeActionKind.QuickFix,
                diagnostics=[diagnostic],
                edit=types.WorkspaceEdit(changes=changes),
                is_preferred=len(fixes) == 1,
            )
        )
    return actions


def ignore_edit(text: str, line: int, code: str, positions: TextPositions) -> types.TextEdit:
    """The edit that silences `code` on a 0-based line: extend the comment above, or add one."""
    lines = text.split("\n")
    current = lines[line] if line < len(lines) else ""
    above = _IGNORE_LINE.match(lines[line - 1].rstrip("\r")) if line > 0 else None
    if above is not None:
        codes = [c.strip() for c in above["codes"].split(",") if c.strip()]
        if code not in codes:
            codes.append(code)
        start = positions.offset(types.Position(line=line - 1, character=0))
        end = start + len(lines[line - 1].rstrip("\r"))
        comment = f"{above['indent']}# spark: ignore[{', '.join(codes)}]"
        return types.TextEdit(range=positions.range(Span(start, end)), new_text=comment)
    indent = current[: len(current) - len(current.lstrip())]
    at = types.Position(line=line, character=0)
    return types.TextEdit(range=types.Range(start=at, end=at), new_text=f"{indent}# spark: ignore[{code}]\n")


def ignore_action(
    diagnostic: types.Diagnostic, uri: str, text: str, positions: TextPositions
) -> types.CodeAction | None:
    data = diagnostic.data if isinstance(diagnostic.data, dict) else {}
    if not data.get("ignorable") or not isinstance(diagnostic.code, str):
        return None
    edit = ignore_edit(text, diagnostic.range.start.line, diagnostic.code, positions)
    return types.CodeAction(
        title=f"Ignore {diagnostic.code} here",
        kind=types.CodeActionKind.QuickFix,
        diagnostics=[diagnostic],
        edit=types.WorkspaceEdit(changes={uri: [edit]}),
    )


def code_actions(params: types.CodeActionParams, text: str, positions: TextPositions) -> list[types.CodeAction]:
    actions: list[types.CodeAction] = []
    only = params.context.only
    quickfix = types.CodeActionKind.QuickFix.value
    if only and not any(quickfix == k or quickfix.startswith(f"{k}.") for k in only):
        return actions
    for diagnostic in params.context.diagnostics:
        if diagnostic.source != SOURCE:
            continue
        actions += fix_actions(diagnostic)
        ignore = ignore_action(diagnostic, params.text_document.uri, text, positions)
        if ignore is not None:
            actions.append(ignore)
    return actions
