"""The `--format json` document of CLI.md."""

from __future__ import annotations

import json
from typing import Any

from spark_dsl.diagnostics import Diagnostic, count
from spark_dsl.loader import SourceFile
from spark_dsl.render import position
from spark_dsl.text_escape import json_document


def diagnostic_dict(d: Diagnostic, sources: dict[str, SourceFile]) -> dict[str, Any]:
    out: dict[str, Any] = {"code": d.code, "severity": d.severity.value, "message": d.message}
    if d.location is not None:
        pos = position(d.location, sources)
        out.update(
            file=d.location.file,
            line=pos.line,
            column=pos.column,
            end_line=pos.end_line,
            end_column=pos.end_column,
        )
    if d.deployment is not None:
        out["deployment"] = d.deployment
    if d.label:
        out["label"] = d.label
    if d.help:
        out["help"] = d.help
    notes = []
    for note in d.notes:
        entry: dict[str, Any] = {"message": note.message}
        if note.location is not None:
            pos = position(note.location, sources)
            entry.update(file=note.location.file, line=pos.line, column=pos.column)
        notes.append(entry)
    out["notes"] = notes
    if d.fixes:
        out["fixes"] = [
            {
                "message": fix.message,
                # `spark check --fix` applies safe fixes; the others need `--unsafe-fixes`.
                "safe": fix.safe,
                "edits": [
                    {
                        "file": e.location.file,
                        **_range(position(e.location, sources)),
                        "text": e.text,
                    }
                    for e in fix.edits
                ],
            }
            for fix in d.fixes
        ]
    return out


def _range(pos: Any) -> dict[str, int]:
    return {
        "line": pos.line,
        "column": pos.column,
        "end_line": pos.end_line,
        "end_column": pos.end_column,
    }


def diagnostics_document(
    files: list[str], diagnostics: list[Diagnostic], sources: dict[str, SourceFile]
) -> dict[str, Any]:
    return {
        "version": 1,
        "files": files,
        "diagnostics": [diagnostic_dict(d, sources) for d in diagnostics],
        "summary": count(diagnostics),
    }


def render(files: list[str], diagnostics: list[Diagnostic], sources: dict[str, SourceFile]) -> str:
    document = diagnostics_document(files, diagnostics, sources)
    return json_document(json.dumps(document, indent=1, ensure_ascii=False)) + "\n"
