"""`source.fixAll.spark`: every safe fix of a document at once, as `spark check --fix` makes them.

The rounds are spark_dsl.fixes' own (check, take the safe fixes, apply, check again until
nothing is left), run over the editor's buffers instead of the disk; the action's edit turns
the document's buffer into the text `spark check --fix` would write for its file. Unsafe
fixes are never part of it. Fixes the rounds make in other files (an import's own problems)
are left out: the action changes the document it was asked for, and the others get theirs
when they are open.
"""

from __future__ import annotations

from collections.abc import Sequence
from enum import Enum
from pathlib import Path

from lsprotocol import types

from spark_dsl.fixes import BOM, fix_run
from spark_dsl.lsp.client_text import minimal_edit
from spark_dsl.lsp.documents import document_path, resolvable
from spark_dsl.pipeline import RunResult, run
from spark_dsl.project import Projects

KIND = "source.fixAll.spark"
TITLE = "Fix all safe problems (spark check --fix)"


def fixed_text(uri: str, text: str, open_texts: dict[Path, str]) -> str | None:
    """The document's text after every safe fix; None when the document cannot be checked."""
    if not resolvable(uri):
        return None
    path = document_path(uri)
    buffers = {**open_texts, path: text}

    def check(fixed: dict[Path, str]) -> RunResult:
        return run([path], Projects(), {**buffers, **fixed})

    outcome = fix_run(check, unsafe=False)
    if path not in outcome.texts:
        return text
    # The loader reads a spec without its byte-order mark, and --fix writes the mark back.
    return (BOM if text.startswith(BOM) else "") + outcome.texts[path]


def fix_all_action(uri: str, text: str, open_texts: dict[Path, str], utf16: bool) -> types.CodeAction | None:
    """The action, or None when there is nothing safe to fix."""
    fixed = fixed_text(uri, text, open_texts)
    edit = minimal_edit(text, fixed, utf16) if fixed is not None else None
    if edit is None:
        return None
    return types.CodeAction(title=TITLE, kind=KIND, edit=types.WorkspaceEdit(changes={uri: [edit]}))


def wanted(only: Sequence[str] | None, kind: str) -> bool:
    """Whether a request's `context.only` asks for actions of `kind`: a kind is asked for by
    itself or by any kind it is a sub-kind of (`source` and `source.fixAll` ask for
    `source.fixAll.spark`)."""
    if not only:
        return True
    # Kinds the protocol names arrive as enum members, whose str() is not their value.
    asked = [k.value if isinstance(k, Enum) else k for k in only]
    return any(kind == k or kind.startswith(f"{k}.") for k in asked)
