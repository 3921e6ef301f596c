"""Turns pipeline diagnostics into LSP diagnostics: code, rule-doc link, notes, and fix data."""

from __future__ import annotations

from typing import Any

from lsprotocol import types

from spark_dsl.diagnostics import Diagnostic, Severity
from spark_dsl.lsp.documents import Analysis
from spark_dsl.lsp.positions import TextPositions
from spark_dsl.lsp.rule_docs import rule_doc_uri
from spark_dsl.span import Location

SOURCE = "spark"
_SEVERITIES = {
    Severity.ERROR: types.DiagnosticSeverity.Error,
    Severity.WARNING: types.DiagnosticSeverity.Warning,
    Severity.INFO: types.DiagnosticSeverity.Information,
}


class PositionsByFile:
    """Position converters for the files of one run, built on first use."""

    def __init__(self, analysis: Analysis, encoding: str) -> None:
        self.analysis = analysis
        self.encoding = encoding
        self._cache: dict[str, TextPositions] = {}

    def get(self, file: str) -> TextPositions | None:
        if file not in self._cache:
            source = self.analysis.result.sources.get(file)
            if source is None:
                return None
            self._cache[file] = TextPositions(source.text, self.encoding, source.index)
        return self._cache[file]

    def location(self, location: Location) -> types.Location | None:
        uri = self.analysis.uri_of(location.file)
        positions = self.get(location.file)
        if uri is None or positions is None:
            return None
        return types.Location(uri=uri, range=positions.range(location.span))


def _range_data(r: types.Range) -> dict[str, Any]:
    return {
        "start": {"line": r.start.line, "character": r.start.character},
        "end": {"line": r.end.line, "character": r.end.character},
    }


def _fix_data(d: Diagnostic, files: PositionsByFile) -> list[dict[str, Any]]:
    """Each fix as plain JSON (URI, range, new text, whether it is safe), so code actions need no lookup."""
    fixes = []
    for fix in d.fixes:
        edits = []
        for edit in fix.edits:
            where = files.location(edit.location)
            if where is None:
                break
            edits.append({"uri": where.uri, "range": _range_data(where.range), "newText": edit.text})
        else:
            fixes.append({"title": fix.message, "edits": edits, "safe": fix.safe})
    return fixes


def ignorable(d: Diagnostic) -> bool:
    """Only warnings and infos may be silenced by a comment; syntax problems never."""
    return d.severity is not Severity.ERROR and not d.code.startswith("SPK0")


_START = types.Range(start=types.Position(line=0, character=0), end=types.Position(line=0, character=0))


def to_lsp(d: Diagnostic, files: PositionsByFile) -> types.Diagnostic:
    own = files.get(d.location.file) if d.location is not None else None
    where = own.range(d.location.span) if own is not None and d.location is not None else _START
    message = d.message
    if d.label:
        message += f" ({d.label})"
    message += "".join(f"\nnote: {n.message}" for n in d.notes if n.location is None)
    if d.help:
        message += f"\nhelp: {d.help}"
    related = []
    for note in d.notes:
        if note.location is not None and (loc := files.location(note.location)) is not None:
            related.append(types.DiagnosticRelatedInformation(location=loc, message=note.message))
    href = rule_doc_uri(d.code)
    return types.Diagnostic(
        range=where,
        severity=_SEVERITIES[d.severity],
        code=d.code,
        code_description=types.CodeDescription(href=href) if href else None,
        source=SOURCE,
        message=message,
        related_information=related or None,
        # The version the fixes' ranges belong to: a code action asked with older diagnostics
        # (the client had not yet received these) must not apply them to a newer buffer.
        data={"fixes": _fix_data(d, files), "ignorable": ignorable(d), "version": files.analysis.version},
    )


def lsp_diagnostics(analysis: Analysis, encoding: str) -> list[types.Diagnostic]:
    files = PositionsByFile(analysis, encoding)
    return [to_lsp(d, files) for d in analysis.diagnostics]
