"""Diagnostics: what every stage reports instead of raising, with spans, notes and fixes."""

from __future__ import annotations

from enum import StrEnum

from msgspec import Struct, field

from spark_dsl.span import Location, Span


class Severity(StrEnum):
    ERROR = "error"
    WARNING = "warning"
    INFO = "info"


class Edit(Struct, frozen=True):
    """Replace the text at `location` with `text` (an insertion when the span is empty)."""

    location: Location
    text: str


class Fix(Struct, frozen=True):
    """A machine-applicable change, so editors never parse message text.

    `safe` fixes only change how the spec is written, never what it deploys (an `=` where `:`
    was typed, quotes dropped, an ignore comment that does nothing removed): `spark check --fix`
    applies them. Every other fix picks a value for the user (a did-you-mean guess, a recipe
    setting, a rename) and is applied only with `--unsafe-fixes`.
    """

    message: str
    edits: tuple[Edit, ...]
    safe: bool = False


class Note(Struct, frozen=True):
    message: str
    location: Location | None = None


class Diagnostic(Struct, frozen=True):
    code: str
    severity: Severity
    message: str
    location: Location | None
    label: str | None = None
    help: str | None = None
    notes: tuple[Note, ...] = ()
    fixes: tuple[Fix, ...] = ()
    deployment: str | None = None

    @property
    def sort_key(self) -> tuple[str, int, int, str]:
        loc = self.location
        if loc is None:
            return ("", -1, -1, self.code)
        return (loc.file, loc.span.start, loc.span.end, self.code)


class DiagnosticSink(Struct):
    """Collects diagnostics for one run; stages append, nobody raises."""

    items: list[Diagnostic] = field(default_factory=list)

    def add(self, diagnostic: Diagnostic) -> None:
        self.items.append(diagnostic)

    def error(self, code: str, message: str, file: str | None, span: Span | None, **extra: object) -> Diagnostic:
        """Records an error (the only severity the front end reports directly)."""
        location = Location(file, span) if file is not None and span is not None else None
        diagnostic = Diagnostic(code, Severity.ERROR, message, location, **extra)  # type: ignore[arg-type]
        self.items.append(diagnostic)
        return diagnostic


def replacement(message: str, file: str, span: Span, text: str, *, safe: bool = False) -> Fix:
    """A fix that replaces one span with new text (an unsafe one unless said otherwise)."""
    return Fix(message, (Edit(Location(file, span), text),), safe)


def count(diagnostics: list[Diagnostic]) -> dict[str, int]:
    counts = {"errors": 0, "warnings": 0, "infos": 0}
    for d in diagnostics:
        counts[{"error": "errors", "warning": "warnings", "info": "infos"}[d.severity.value]] += 1
    return counts
