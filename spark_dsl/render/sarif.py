"""The `--format sarif` log: SARIF 2.1.0, one rule per code with help from the explain registry."""

from __future__ import annotations

import json
import os
from functools import cache
from pathlib import Path
from typing import Any
from urllib.parse import quote

from spark_dsl.diagnostics import Diagnostic, Fix, Severity
from spark_dsl.loader import SourceFile
from spark_dsl.render import Position, position
from spark_dsl.span import Location
from spark_dsl.text_escape import json_document

SCHEMA_URI = "https://json.schemastore.org/sarif-2.1.0.json"
# Results name files relative to the repository; code scanning resolves them against its checkout.
SOURCE_ROOT = "%SRCROOT%"
# The project's canonical home (also in pyproject's [project.urls]).
INFORMATION_URI = "https://github.com/spark-dsl/spark-dsl"
_LEVELS = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "note"}


@cache
def repository_root(start: Path) -> Path | None:
    """The nearest folder at or above `start` holding `.git` (a folder, or a file for worktrees)."""
    for folder in (start, *start.parents):
        if (folder / ".git").exists():
            return folder
    return None


def repository_path(location_file: str, sources: dict[str, SourceFile]) -> str:
    """A file's path relative to its repository (else to the current folder), with `/`."""
    source = sources.get(location_file)
    if source is None:
        return Path(location_file).as_posix()
    path = source.path.resolve()
    base = repository_root(Path.cwd().resolve()) or repository_root(path.parent) or Path.cwd()
    try:
        return path.relative_to(base.resolve()).as_posix()
    except ValueError:
        return Path(os.path.relpath(path)).as_posix()


def artifact_uri(location_file: str, sources: dict[str, SourceFile]) -> str:
    """The repository path as an RFC 3986 relative reference: everything but letters, digits, `-._~`
    and `/` percent-encoded from UTF-8, so a space, `,`, `#`, `%` or `ü` stays part of the path."""
    # fsencode: a name that is not UTF-8 is percent-encoded from its own bytes, not refused.
    return quote(os.fsencode(repository_path(location_file, sources)), safe="/")


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("spark-dsl")
    except PackageNotFoundError:  # pragma: no cover - running from a bare checkout
        return "0.0.0"


def _region(pos: Position) -> dict[str, int]:
    return {
        "startLine": pos.line,
        "startColumn": pos.column,
        "endLine": pos.end_line,
        "endColumn": pos.end_column,
    }


def _physical(location: Location, sources: dict[str, SourceFile]) -> dict[str, Any]:
    return {
        "artifactLocation": {
            "uri": artifact_uri(location.file, sources),
            "uriBaseId": SOURCE_ROOT,
        },
        "region": _region(position(location, sources)),
    }


def _rule(code: str) -> dict[str, Any]:
    from spark_dsl.codes import lookup

    doc = lookup(code)
    if doc is None:
        return {"id": code}
    level = {"error": "error", "warning": "warning"}.get(doc.severity, "note")
    return {
        "id": code,
        "name": "".join(word.capitalize() for word in doc.title.replace("'", "").split()),
        "shortDescription": {"text": doc.title},
        "fullDescription": {"text": doc.checks.strip()},
        "help": {"text": doc.text(), "markdown": doc.markdown()},
        "defaultConfiguration": {"level": level},
    }


def _fix(fix: Fix, sources: dict[str, SourceFile]) -> dict[str, Any]:
    by_file: dict[str, list[dict[str, Any]]] = {}
    for edit in fix.edits:
        by_file.setdefault(edit.location.file, []).append(
            {
                "deletedRegion": _region(position(edit.location, sources)),
                "insertedContent": {"text": edit.text},
            }
        )
    return {
        "description": {"text": fix.message},
        "artifactChanges": [
            {
                "artifactLocation": {"uri": artifact_uri(f, sources), "uriBaseId": SOURCE_ROOT},
                "replacements": replacements,
            }
            for f, replacements in by_file.items()
        ],
        # Not a SARIF field: whether `spark check --fix` applies it without `--unsafe-fixes`.
        "properties": {"safe": fix.safe},
    }


def _message(d: Diagnostic) -> str:
    lines = [d.message]
    lines += [f"note: {n.message}" for n in d.notes if n.location is None]
    if d.help:
        lines.append(f"help: {d.help}")
    return "\n".join(lines)


def _result(d: Diagnostic, rule_index: int, sources: dict[str, SourceFile]) -> dict[str, Any]:
    result: dict[str, Any] = {
        "ruleId": d.code,
        "ruleIndex": rule_index,
        "level": _LEVELS[d.severity],
        "message": {"text": _message(d)},
    }
    if d.location is not None:
        result["locations"] = [{"physicalLocation": _physical(d.location, sources)}]
    related = [
        {
            "id": index,
            "physicalLocation": _physical(note.location, sources),
            "message": {"text": note.message},
        }
        for index, note in enumerate(n for n in d.notes if n.location is not None)
        if note.location is not None
    ]
    if related:
        result["relatedLocations"] = related
    if d.fixes:
        result["fixes"] = [_fix(fix, sources) for fix in d.fixes]
    if d.deployment is not None:
        result["properties"] = {"deployment": d.deployment}
    return result


def sarif_log(diagnostics: list[Diagnostic], sources: dict[str, SourceFile]) -> dict[str, Any]:
    """The SARIF log of one `spark check` run."""
    codes = sorted({d.code for d in diagnostics})
    index = {code: i for i, code in enumerate(codes)}
    driver = {
        "name": "spark",
        "fullName": "spark-dsl: the .spark deployment language compiler",
        "version": _version(),
        "informationUri": INFORMATION_URI,
        "rules": [_rule(code) for code in codes],
    }
    return {
        "$schema": SCHEMA_URI,
        "version": "2.1.0",
        "runs": [
            {
                "tool": {"driver": driver},
                "columnKind": "unicodeCodePoints",
                "results": [_result(d, index[d.code], sources) for d in diagnostics],
            }
        ],
    }


def render(diagnostics: list[Diagnostic], sources: dict[str, SourceFile]) -> str:
    return json_document(json.dumps(sarif_log(diagnostics, sources), indent=1, ensure_ascii=False)) + "\n"
