"""The rustc-style text form of diagnostics, coloured only on a terminal."""

from __future__ import annotations

from spark_dsl.diagnostics import Diagnostic, Severity, count
from spark_dsl.loader import SourceFile
from spark_dsl.render import position
from spark_dsl.render.excerpt import excerpt
from spark_dsl.span import Location
from spark_dsl.text_escape import visible

_COLOURS = {
    Severity.ERROR: "\x1b[1;31m",
    Severity.WARNING: "\x1b[1;33m",
    Severity.INFO: "\x1b[1;36m",
    "note": "\x1b[1;32m",
    "gutter": "\x1b[1;34m",
    "bold": "\x1b[1m",
}
_RESET = "\x1b[0m"


class _Paint:
    def __init__(self, colour: bool) -> None:
        self.colour = colour

    def __call__(self, style: object, text: str) -> str:
        if not self.colour:
            return text
        return f"{_COLOURS[style]}{text}{_RESET}"  # type: ignore[index]


def _snippet(
    location: Location,
    label: str | None,
    sources: dict[str, SourceFile],
    paint: _Paint,
    style: object,
    width: int,
) -> list[str]:
    source = sources.get(location.file)
    pos = position(location, sources)
    pad = " " * width
    lines = [f"{pad}{paint('gutter', '-->')} {visible(location.file)}:{pos.line}:{pos.column}"]
    if source is None or pos.line > source.index.line_count:
        return lines
    # A pasted access token (SPK901) is not printed back, not even in the quoted line; a long
    # line is quoted only around the span (render/excerpt.py).
    line_start, line_end = source.index.line_bounds(pos.line)
    span = location.span
    quoted = excerpt(source.index.text, line_start, line_end, span.start, span.end)
    text = quoted.text
    carets = max(1, quoted.end - quoted.start)
    # Keep tabs in the caret line so the carets stay under the value; an escaped character
    # is as wide as its escape.
    head, marked = text[: quoted.start], text[quoted.start : quoted.start + carets]
    if head.isprintable():  # the common case, at C speed: one space per character
        prefix = " " * len(head)
    else:
        prefix = "".join("\t" if ch == "\t" else " " * len(visible(ch)) for ch in head)
    if not marked.isprintable():
        carets += sum(len(visible(ch, keep_tabs=True)) - 1 for ch in marked)
    bar = paint("gutter", "|")
    marker = paint(style, "^" * carets + (f" {visible(label)}" if label else ""))
    lines += [
        f"{pad} {bar}",
        f"{paint('gutter', str(pos.line).rjust(width))} {bar} {visible(text, keep_tabs=True)}",
        f"{pad} {bar} {prefix}{marker}",
    ]
    return lines


def render_one(d: Diagnostic, sources: dict[str, SourceFile], colour: bool = False) -> str:
    paint = _Paint(colour)
    locations = [d.location] + [n.location for n in d.notes]
    width = max((len(str(position(loc, sources).line)) for loc in locations if loc is not None), default=1)
    head = paint(d.severity, f"{d.severity.value}[{d.code}]") + paint("bold", f": {visible(d.message)}")
    out = [head]
    pad = " " * width
    if d.location is not None:
        out += _snippet(d.location, d.label, sources, paint, d.severity, width)
    tail: list[str] = []
    for note in d.notes:
        if note.location is not None and d.location is not None and note.location.file == d.location.file:
            tail.append(f"{pad} {paint('gutter', '=')} {paint('bold', 'note')}: {visible(note.message)}")
            tail += _snippet(note.location, None, sources, paint, "note", width)[1:]
        elif note.location is not None:
            tail.append(f"{pad} {paint('gutter', '=')} {paint('bold', 'note')}: {visible(note.message)}")
            tail += _snippet(note.location, None, sources, paint, "note", width)
        else:
            tail.append(f"{pad} {paint('gutter', '=')} {paint('bold', 'note')}: {visible(note.message)}")
    if d.help:
        tail.append(f"{pad} {paint('gutter', '=')} {paint('bold', 'help')}: {visible(d.help)}")
    if tail and d.location is not None:
        out.append(f"{pad} {paint('gutter', '|')}")
    out += tail
    return "\n".join(out) + "\n"


def summary(files: int, diagnostics: list[Diagnostic], output_errors: int = 0, dry: bool = False) -> str:
    """The last line. `output_errors` counts what stopped `spark build` writing (SPK520-SPK522,
    reported on stderr without a place in a spec), or would stop it (`dry`, for `--check`): a build
    that failed never says "no problems"."""
    c = count(diagnostics)
    noun = "file" if files == 1 else "files"
    failed = (
        f"build {'would fail' if dry else 'failed'}: {output_errors} output error{'s' if output_errors != 1 else ''}"
        if output_errors
        else ""
    )
    if not diagnostics:
        return f"checked {files} {noun}: {failed or 'no problems'}\n"
    parts = []
    for key, word in (("errors", "error"), ("warnings", "warning"), ("infos", "info")):
        if c[key]:
            parts.append(f"{c[key]} {word}{'s' if c[key] != 1 and word != 'info' else ''}")
    return f"checked {files} {noun}: {', '.join(parts)}" + (f"; {failed}" if failed else "") + "\n"


def render(
    diagnostics: list[Diagnostic],
    sources: dict[str, SourceFile],
    files: int,
    colour: bool = False,
    output_errors: int = 0,
    dry: bool = False,
) -> str:
    body = "\n".join(render_one(d, sources, colour) for d in diagnostics)
    return body + ("\n" if body else "") + summary(files, diagnostics, output_errors, dry)
