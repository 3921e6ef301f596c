"""Quick fixes: the edits a diagnostic carries, and `# spark: ignore[CODE]` for non-errors."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from lsprotocol import types

from spark_dsl.lsp.diagnostics import SOURCE
from spark_dsl.lsp.fix_all import KIND, wanted
from spark_dsl.lsp.positions import TextPositions
from spark_dsl.span import Span

# An own-line ignore comment, whose code list a new code joins instead of a second comment.
_IGNORE_LINE = re.compile(r"^(?P<indent>\s*)#\s*spark:\s*ignore\[(?P<codes>[A-Z0-9,\s]+)\]\s*$")


def _range(data: dict[str, Any]) -> types.Range:
    return types.Range(
        start=types.Position(line=data["start"]["line"], character=data["start"]["character"]),
        end=types.Position(line=data["end"]["line"], character=data["end"]["character"]),
    )


# The words an unsafe fix's title ends with: the editor must not pass one off as a safe one.
UNSAFE = "unsafe: may change what is deployed"


def fix_actions(diagnostic: types.Diagnostic, version: int | None) -> list[types.CodeAction]:
    """One action per fix in the diagnostic's data. Only a safe fix may be preferred (the one an
    editor applies without asking): the first safe one, the fix `spark check --fix` applies.
    An unsafe fix says so in its title and is never preferred. None when the diagnostic was
    published for another version of the document than `version`: its ranges are stale."""
    data = diagnostic.data if isinstance(diagnostic.data, dict) else {}
    if "version" in data and data["version"] != version:
        return []
    fixes = data.get("fixes") or []
    first_safe = next((i for i, fix in enumerate(fixes) if fix.get("safe") is True), None)
    actions = []
    for i, fix in enumerate(fixes):
        changes: dict[str, list[types.TextEdit]] = {}
        for edit in fix["edits"]:
            changes.setdefault(edit["uri"], []).append(
                types.TextEdit(range=_range(edit["range"]), new_text=edit["newText"])
            )
        title = fix["title"][:1].upper() + fix["title"][1:]
        actions.append(
            types.CodeAction(
                title=title if fix.get("safe") is True else f"{title} ({UNSAFE})",
                kind=types.CodeActionKind.QuickFix,
                diagnostics=[diagnostic],
                edit=types.WorkspaceEdit(changes=changes),
                is_preferred=i == first_safe,
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


def code_actions(
    params: types.CodeActionParams,
    text: str,
    version: int | None,
    positions: TextPositions,
    fix_all: Callable[[], types.CodeAction | None],
) -> list[types.CodeAction]:
    """The quick fixes of the diagnostics sent, and `source.fixAll.spark` when the request asks
    for source actions by kind (`source`, `source.fixAll`): working it out checks the document
    again, round after round, too much for every move of the cursor."""
    actions: list[types.CodeAction] = []
    only = params.context.only
    if only and wanted(only, KIND):
        action = fix_all()
        if action is not None:
            actions.append(action)
    if not wanted(only, types.CodeActionKind.QuickFix.value):
        return actions
    for diagnostic in params.context.diagnostics:
        if diagnostic.source != SOURCE:
            continue
        actions += fix_actions(diagnostic, version)
        ignore = ignore_action(diagnostic, params.text_document.uri, text, positions)
        if ignore is not None:
            actions.append(ignore)
    return actions
