"""The `--format github` form: a workflow-command annotation per diagnostic, escaped."""

from __future__ import annotations

from spark_dsl.diagnostics import Diagnostic, Severity
from spark_dsl.files import printable
from spark_dsl.loader import SourceFile
from spark_dsl.render import position
from spark_dsl.render.sarif import repository_path
from spark_dsl.text_escape import visible

_COMMANDS = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "notice"}


def escape_data(text: str) -> str:
    """A command's message: `%`, CR and LF would end or corrupt the command."""
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _line(text: str) -> str:
    """One line of an annotation: control characters from the spec shown, never acted on (the log
    viewer renders ANSI sequences, and a raw line break would start a fake line)."""
    return visible(text)


def escape_property(text: str) -> str:
    """A property value: also `:` and `,`, which separate the properties and the message."""
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


def _title(d: Diagnostic) -> str:
    from spark_dsl.codes import lookup

    doc = lookup(d.code)
    return f"{d.code}: {doc.title}" if doc is not None else d.code


def _message(d: Diagnostic, sources: dict[str, SourceFile]) -> str:
    lines = [_line(d.message)]
    for note in d.notes:
        where = ""
        if note.location is not None:
            pos = position(note.location, sources)
            where = f" ({printable(repository_path(note.location.file, sources))}:{pos.line}:{pos.column})"
        lines.append(f"note: {_line(note.message)}{where}")
    if d.help:
        lines.append(f"help: {_line(d.help)}")
    if d.deployment:
        lines.append(f"in deployment {d.deployment}")
    return "\n".join(lines)


def annotation(d: Diagnostic, sources: dict[str, SourceFile]) -> str:
    """One `::error file=...,line=...::message` line."""
    properties: list[tuple[str, str]] = []
    if d.location is not None:
        pos = position(d.location, sources)
        properties += [
            ("file", printable(repository_path(d.location.file, sources))),
            ("line", str(pos.line)),
            ("col", str(pos.column)),
            ("endLine", str(pos.end_line)),
            ("endColumn", str(pos.end_column)),
        ]
    properties.append(("title", _title(d)))
    props = ",".join(f"{key}={escape_property(value)}" for key, value in properties)
    return f"::{_COMMANDS[d.severity]} {props}::{escape_data(_message(d, sources))}\n"


def render(diagnostics: list[Diagnostic], sources: dict[str, SourceFile]) -> str:
    return "".join(annotation(d, sources) for d in diagnostics)
