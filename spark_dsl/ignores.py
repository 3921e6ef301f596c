"""`# spark: ignore[CODE, ...]`: which diagnostics a comment silences, and which ignores do nothing.

An ignore comment silences warnings and infos of its codes that start on its own line or on
the line below. Errors are never silenced. An ignore that cannot do anything is itself a
warning, SPK125 (as ruff's RUF100), with a safe fix that removes it:

- a code that is not a diagnostic code (`SPK999`, `spk402`);
- an error code (syntax codes, and codes that are errors by default), or a code that fired as
  an error on the lines the comment covers;
- a warning or info code that did not fire there. This is judged only where the run checked
  everything that could fire: not in profiles (a deployment outside this run may use them),
  not in files the run only imports, not in a deployment with errors (its checks stop early,
  and a fixed error can bring a warning back), and never for the codes only `spark build`
  reports (SPK513).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from msgspec import Struct

from spark_dsl.diagnostics import Diagnostic, Edit, Fix, Severity
from spark_dsl.ignore_codes import UNUSED_IGNORE
from spark_dsl.loader import SourceFile
from spark_dsl.patterns import lazy_regex
from spark_dsl.span import Location, Span

# Wider than the codes it honours, so a misspelt code (`spk402`, `SPK40`) is reported, not passed over.
_DIRECTIVE = lazy_regex(r"#\s*spark:\s*ignore\[(?P<codes>[^\]\n]*)\]")
_CODE = lazy_regex(r"SPK\d{3}")


class IgnoredCode(Struct, frozen=True):
    """One code of one ignore comment: as written, where, and the comment around it."""

    code: str
    span: Span
    line: int
    directive: Span
    comment: Span
    # The directive's code list, for removing one code and its comma.
    others: tuple[Span, ...]


def entries(source: SourceFile) -> list[IgnoredCode]:
    """Every code of every ignore comment in a file, in file order."""
    out: list[IgnoredCode] = []
    if source.module is None:
        return out
    for comment in source.module.comments:
        # Most comments are prose: the literal test spares them the pattern (and a file without
        # a directive its compilation).
        m = _DIRECTIVE.search(comment.text) if "ignore[" in comment.text else None
        if m is None:
            continue
        base = comment.span.start
        line, _ = source.index.position(base)
        spans = []
        for part in re.finditer(r"[^,\s]+", m.group("codes")):
            spans.append(Span(base + m.start("codes") + part.start(), base + m.start("codes") + part.end()))
        directive = Span(base + m.start(), base + m.end())
        for span in spans:
            code = source.text[span.start : span.end]
            out.append(IgnoredCode(code, span, line, directive, comment.span, tuple(spans)))
    return out


def ignored_codes(source: SourceFile) -> dict[int, set[str]]:
    """Line number -> the well-formed codes silenced by ignore comments on that line."""
    out: dict[int, set[str]] = {}
    for entry in entries(source):
        if _CODE.fullmatch(entry.code):
            out.setdefault(entry.line, set()).add(entry.code)
    return out


def silence(
    diagnostics: list[Diagnostic], sources: Iterable[SourceFile]
) -> tuple[list[Diagnostic], set[tuple[str, int, str]]]:
    """Drops warnings and infos silenced on their line or the line above; errors always stay.

    Also returns which ignores silenced something, as (file, comment line, code).
    """
    by_name = {s.name: s for s in sources}
    cache: dict[str, dict[int, set[str]]] = {}
    kept: list[Diagnostic] = []
    used: set[tuple[str, int, str]] = set()
    for d in diagnostics:
        source = by_name.get(d.location.file) if d.location is not None else None
        if d.severity is Severity.ERROR or d.location is None or d.code.startswith("SPK0") or source is None:
            kept.append(d)
            continue
        if d.location.file not in cache:
            cache[d.location.file] = ignored_codes(source)
        ignores = cache[d.location.file]
        line, _ = source.index.position(d.location.span.start)
        hit = next((at for at in (line, line - 1) if d.code in ignores.get(at, ())), None)
        if hit is None:
            kept.append(d)
        else:
            used.add((d.location.file, hit, d.code))
    return kept, used


class Judged(Struct, frozen=True):
    """What a run knows about the places its ignore comments cover."""

    # The lines of the files named in the run where every check ran (file -> lines).
    complete: dict[str, set[int]]
    # (file, line) -> codes that fired there as errors.
    errors: dict[tuple[str, int], set[str]]


def judged_places(
    named: Iterable[SourceFile], diagnostics: list[Diagnostic], sources: dict[str, SourceFile], clean: set[str]
) -> Judged:
    """The lines where a silent warning proves an ignore unused, and where errors fired.

    `named` are the files the run was given; `clean` names the deployments whose checks all ran
    (planned, no error). Lines of profiles and of other deployments are not complete.
    """
    from spark_dsl.syntax import ast

    errors: dict[tuple[str, int], set[str]] = {}
    for d in diagnostics:
        if d.severity is Severity.ERROR and d.location is not None and d.location.file in sources:
            line, _ = sources[d.location.file].index.position(d.location.span.start)
            errors.setdefault((d.location.file, line), set()).add(d.code)
    complete: dict[str, set[int]] = {}
    for source in named:
        if source.module is None:
            continue
        lines = set(range(1, source.index.line_count + 1))
        for statement in source.module.statements:
            if isinstance(statement, ast.Import):
                continue
            first, last = (source.index.position(at)[0] for at in (statement.span.start, statement.span.end))
            span = set(range(first, last + 1))
            checked = isinstance(statement, ast.Deployment) and statement.name.name in clean
            if checked and not any((source.name, line) in errors for line in span):
                continue
            lines -= span
        complete[source.name] = lines
    return Judged(complete, errors)


def unused(
    sources: dict[str, SourceFile], used: set[tuple[str, int, str]], judged: Judged, fired: set[tuple[str, int, str]]
) -> list[Diagnostic]:
    """SPK125 for every ignored code that cannot silence anything.

    `fired` holds the warnings and infos left after silencing, as (file, line, code): a known code
    written in small letters whose capitals would silence one of them gets capitals as its fix.
    """
    found = [(source, entry) for source in sources.values() for entry in entries(source)]
    if not found:
        return []  # the common case: no registry to load (a cold `spark check` stays light)
    from spark_dsl.codes import registry
    from spark_dsl.targets.codes import BUILD_CODES

    known = registry()
    build_only = {doc.code for doc in BUILD_CODES}
    out: list[Diagnostic] = []
    for source, entry in found:
        code = entry.code
        if (source.name, entry.line, code) in used or code == UNUSED_IGNORE:
            continue
        covered = (entry.line, entry.line + 1)
        upper = code.upper()
        if upper != code and upper in known and any((source.name, at, upper) in fired for at in covered):
            out.append(_capitals(source.name, entry))
            continue
        doc = known.get(upper)
        fired_as_error = any(upper in judged.errors.get((source.name, at), ()) for at in covered)
        if doc is None:
            message = f"`{_shown(code)}` in `# spark: ignore[...]` is not a diagnostic code"
            help_text = "remove it; `spark explain` lists every code"
        elif upper.startswith("SPK0") or doc.severity == "error" or fired_as_error:
            message = f"`{code}` is an error{' here' if fired_as_error else ''}, and errors are never silenced"
            help_text = "remove the ignore and fix the error"
        elif upper not in build_only and all(at in judged.complete.get(source.name, ()) for at in covered):
            message = f"`{code}` does not fire on this line or the next, so this ignore silences nothing"
            help_text = "remove the ignore"
        else:
            continue
        edit = Edit(Location(source.name, _removal(source.text, entry)), "")
        out.append(
            Diagnostic(
                UNUSED_IGNORE,
                Severity.WARNING,
                message,
                Location(source.name, entry.span),
                label="silences nothing",
                help=help_text,
                fixes=(Fix(f"remove `{_shown(code)}` from the ignore", (edit,), True),),
            )
        )
    return out


def _capitals(file: str, entry: IgnoredCode) -> Diagnostic:
    """A known code in small letters silences nothing: the fix writes it in capitals."""
    upper = entry.code.upper()
    return Diagnostic(
        UNUSED_IGNORE,
        Severity.WARNING,
        f"`{entry.code}` in `# spark: ignore[...]` silences nothing: codes are written in capitals",
        Location(file, entry.span),
        label="silences nothing",
        help=f"write `{upper}`",
        fixes=(Fix(f"write `{upper}`", (Edit(Location(file, entry.span), upper),), True),),
    )


def _shown(code: str) -> str:
    return code.replace("`", "'")


def _removal(text: str, entry: IgnoredCode) -> Span:
    """What to delete to drop one code: it and its comma, or the directive when it is the only code.

    A directive alone in its comment goes with the comment (and with the line, when the comment
    is all the line holds); words after it stay a comment.
    """
    others = entry.others
    if len(others) > 1:
        index = others.index(entry.span)
        if index + 1 < len(others):
            return Span(entry.span.start, others[index + 1].start)  # `SPK1, ` before the next code
        return Span(others[index - 1].end, entry.span.end)  # `, SPK9` after the previous code
    directive, comment = entry.directive, entry.comment
    if text[comment.start : directive.start].strip():  # `# note  # spark: ignore[X]` keeps `# note`
        before = directive.start
        while before > comment.start and text[before - 1] in " \t":
            before -= 1
        return Span(before, directive.end)
    rest = text[directive.end : comment.end]
    if rest.strip():
        after = directive.end + len(rest) - len(rest.lstrip(" \t"))
        if rest.lstrip().startswith("#"):  # `# spark: ignore[X]  # note` keeps `# note`
            return Span(directive.start, after)
        inner = text[directive.start + 1 : directive.end]
        words = directive.start + 1 + len(inner) - len(inner.lstrip(" \t"))
        return Span(words, after)  # `# spark: ignore[X] because ...` keeps `# because ...`
    line_start = text.rfind("\n", 0, comment.start) + 1
    if not text[line_start : comment.start].strip():  # the comment is the whole line: drop the line
        line_end = text.find("\n", comment.end)
        return Span(line_start, len(text) if line_end == -1 else line_end + 1)
    before = comment.start
    while before > line_start and text[before - 1] in " \t":
        before -= 1
    return Span(before, comment.end)
