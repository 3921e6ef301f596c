"""`spark check --fix` and `--diff`: apply the fixes diagnostics carry, check again, repeat.

A round checks the files (as fixed so far, through the loader's overlays), takes each
diagnostic's first fix that may be applied (safe ones, unsafe ones too with
`--unsafe-fixes`), leaves out fixes whose edits touch an edit already taken this round
(the next round finds them again if they still apply), and applies the rest. Rounds stop when
nothing is left to apply; a round that returns to an earlier text, or the twentieth round,
stops them too (fixes that undo each other), and the outcome says so.
Nothing is written until the last round: `--diff` prints the change, `--fix` writes each
changed file in one step, through symbolic links, as `spark fmt` does.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TextIO

from msgspec import Struct, field

from spark_dsl import files
from spark_dsl.diagnostics import Diagnostic, Edit, Fix, Severity
from spark_dsl.loader import SourceFile
from spark_dsl.pipeline import RunResult
from spark_dsl.span import Span

MAX_ROUNDS = 20
BOM = "\ufeff"


class Applied(Struct, frozen=True):
    """One fix applied: where its diagnostic was (in the text of its round) and what it did."""

    file: str
    line: int
    column: int
    code: str
    message: str
    safe: bool


class FixOutcome(Struct):
    """The last round's check of the fixed texts, and what changed on the way there."""

    result: RunResult
    originals: dict[Path, SourceFile] = field(default_factory=dict)
    texts: dict[Path, str] = field(default_factory=dict)
    applied: list[Applied] = field(default_factory=list)
    converged: bool = True

    @property
    def changed(self) -> list[Path]:
        """The files whose fixed text differs from what was read, in the order they were read."""
        return [p for p, s in self.originals.items() if p in self.texts and self.texts[p] != s.text]


def usable_fix(d: Diagnostic, unsafe: bool, sources: dict[str, SourceFile]) -> Fix | None:
    """The fix `--fix` applies for a diagnostic: its first one that is allowed and edits read files.

    An info's fix is never applied: an info is a suggestion (`gpus = 4` to hold each KV head once
    halves the GPUs a node serves with), which an editor offers and the author takes or leaves."""
    if d.severity is Severity.INFO:
        return None
    for fix in d.fixes:
        if (fix.safe or unsafe) and fix.edits and all(e.location.file in sources for e in fix.edits):
            return fix
    return None


def apply_edits(text: str, edits: Iterable[Edit]) -> str:
    """The text with non-overlapping edits applied (from the end, so offsets stay valid)."""
    for edit in sorted(edits, key=lambda e: (e.location.span.start, e.location.span.end), reverse=True):
        span = edit.location.span
        text = text[: span.start] + edit.text + text[span.end :]
    return text


def _touches(a: Span, b: Span) -> bool:
    """Whether two edits overlap or meet: either could change what the other expects."""
    return a.start <= b.end and b.start <= a.end


def _round(result: RunResult, unsafe: bool) -> list[tuple[Diagnostic, Fix]]:
    """The fixes of this round: one per diagnostic, none touching another."""
    taken: dict[str, list[Span]] = {}
    chosen: list[tuple[Diagnostic, Fix]] = []
    for d in result.diagnostics:
        fix = usable_fix(d, unsafe, result.sources)
        if fix is None:
            continue
        spans = [(e.location.file, e.location.span) for e in fix.edits]
        if any(_touches(span, other) for file, span in spans for other in taken.get(file, ())):
            continue
        for file, span in spans:
            taken.setdefault(file, []).append(span)
        chosen.append((d, fix))
    return chosen


def fix_run(check: Callable[[dict[Path, str]], RunResult], unsafe: bool) -> FixOutcome:
    """Rounds of check-and-fix over in-memory texts; `check(overlays)` runs the pipeline.

    The fixed files are then put in `spark fmt` layout (a fix writes `key = value` without
    aligning it) and checked once more, so the report's places are those of the written text."""
    texts: dict[Path, str] = {}
    outcome = FixOutcome(check(texts))
    seen: set[tuple[tuple[Path, str], ...]] = set()
    written = _Written()
    for _ in range(MAX_ROUNDS):
        result = outcome.result
        for source in result.sources.values():
            outcome.originals.setdefault(source.path, source)
        chosen = _round(result, unsafe)
        if not chosen:
            break
        edits: dict[str, list[Edit]] = {}
        for _, fix in chosen:
            for edit in fix.edits:
                edits.setdefault(edit.location.file, []).append(edit)
        written.apply(edits, [(fix, _applied(d, fix, result.sources)) for d, fix in chosen])
        for name, file_edits in edits.items():
            source = result.sources[name]
            texts[source.path] = apply_edits(source.text, file_edits)
        state = tuple(sorted(texts.items()))
        if state in seen:
            outcome.converged = False
            break
        seen.add(state)
        outcome.result = check(texts)
        outcome.texts = dict(texts)
    else:
        outcome.converged = False
    outcome.applied = written.kept()
    _format(outcome, check)
    return outcome


class _Written:
    """The fixes applied so far, each with the spans of text it wrote (in the latest text), so a
    later round's fix that rewrites a setting an earlier one wrote replaces it in the report:
    `checkpoint = bf16-to-mxfp4` added, then made `nvfp4`, is reported once, as `nvfp4`."""

    def __init__(self) -> None:
        self.entries: list[tuple[Applied, list[tuple[str, int, int, str]]]] = []
        self.dropped: set[int] = set()

    def apply(self, edits: dict[str, list[Edit]], chosen: list[tuple[Fix, Applied]]) -> None:
        for index, (_, regions) in enumerate(self.entries):
            if index not in self.dropped and any(_rewrites(r, edits.get(r[0], ())) for r in regions):
                self.dropped.add(index)
            regions[:] = [(f, *_shifted(start, end, edits.get(f, ())), t) for f, start, end, t in regions]
        for fix, applied in chosen:
            regions = [(e.location.file, *_landing(e, edits[e.location.file]), e.text) for e in fix.edits if e.text]
            self.entries.append((applied, regions))

    def kept(self) -> list[Applied]:
        return [a for i, (a, _) in enumerate(self.entries) if i not in self.dropped]


def _rewrites(region: tuple[str, int, int, str], edits: Iterable[Edit]) -> bool:
    """Whether an edit changes text an earlier fix wrote as one setting or value (a written block,
    `{ ... }`, stays reported: a later fix of one of its values does not undo the rest)."""
    _, start, end, text = region
    if "{" in text or "}" in text:
        return False
    return any(
        e.location.span.start < end and start < max(e.location.span.end, e.location.span.start + 1) for e in edits
    )


def _landing(edit: Edit, edits: list[Edit]) -> tuple[int, int]:
    """Where an edit's text lies once all of its round's edits (which do not overlap) are made."""
    shift = sum(
        len(e.text) - (e.location.span.end - e.location.span.start)
        for e in edits
        if e.location.span.end <= edit.location.span.start and e is not edit
    )
    start = edit.location.span.start + shift
    return start, start + len(edit.text)


def _shifted(start: int, end: int, edits: Iterable[Edit]) -> tuple[int, int]:
    """A span of the text before a round's edits, in the text after them."""
    new_start, new_end = start, end
    for e in edits:
        span, delta = e.location.span, len(e.text) - (e.location.span.end - e.location.span.start)
        if span.end <= start:
            new_start += delta
        if span.end <= end:
            new_end += delta
    return new_start, max(new_start, new_end)


def _format(outcome: FixOutcome, check: Callable[[dict[Path, str]], RunResult]) -> None:
    """Every changed file in `spark fmt` layout; checked again when that moved anything."""
    from spark_dsl.format import FormatterBug, format_text

    texts = dict(outcome.texts)
    for path in outcome.changed:
        try:
            formatted = format_text(texts[path], outcome.originals[path].name).text
        except FormatterBug:  # left as the fixes wrote it; `spark fmt` reports the bug
            continue
        if formatted is not None:
            texts[path] = formatted
    if texts != outcome.texts:
        outcome.texts = texts
        outcome.result = check(texts)


def _applied(d: Diagnostic, fix: Fix, sources: dict[str, SourceFile]) -> Applied:
    where = d.location or fix.edits[0].location
    line, column = sources[where.file].index.position(where.span.start)
    return Applied(where.file, line, column, d.code, fix.message, fix.safe)


def write_fixed(outcome: FixOutcome, err: TextIO, stdin: Path | None = None, out: TextIO | None = None) -> int:
    """Writes every changed file; returns how many could not be written (each is reported).

    Standard input (`stdin`, the path standing for it) is never written to disk: its text goes to
    `out`, fixed or not, since a filter must not swallow its input.
    """
    failed = 0
    standing_in = stdin.resolve() if stdin is not None else None
    if standing_in is not None and out is not None:
        source = outcome.originals.get(standing_in)
        if source is not None:
            out.write(outcome.texts.get(standing_in, source.text))
    for path in outcome.changed:
        if path == standing_in:
            continue
        source = outcome.originals[path]
        shown = files.printable(source.name)
        data = files.read_spec(path)
        on_disk = None if isinstance(data, files.Unreadable) else data.decode("utf-8", "replace")
        if on_disk is None or on_disk.removeprefix(BOM) != source.text:
            err.write(f"error: {shown}: changed while spark was fixing it; left untouched\n")
            failed += 1
            continue
        bom = BOM if on_disk.startswith(BOM) else ""
        try:
            files.replace_text(path, bom + outcome.texts[path])
        except OSError as problem:
            err.write(f"error: {shown}: cannot write: {problem.strerror or problem}; left untouched\n")
            failed += 1
    return failed


def write_diff(outcome: FixOutcome, out: TextIO) -> None:
    """A unified diff of every file the fixes would change."""
    import difflib  # only when a diff is asked for: a plain `spark check` stays light

    for path in outcome.changed:
        source = outcome.originals[path]
        shown = files.printable(source.name)
        out.writelines(
            difflib.unified_diff(
                source.text.splitlines(keepends=True),
                outcome.texts[path].splitlines(keepends=True),
                fromfile=f"{shown} (original)",
                tofile=f"{shown} (fixed)",
            )
        )


def _problems(n: int) -> str:
    return f"{n} problem{'s' if n != 1 else ''}"


def report(outcome: FixOutcome, dry: bool, err: TextIO) -> None:
    """What the fixes changed (or would change), one line per fix, then a summary."""
    verb = "would fix" if dry else "fixed"
    for a in outcome.applied:
        kind = "" if a.safe else " (unsafe)"
        err.write(f"{files.printable(a.file)}:{a.line}:{a.column}: {verb} {a.code}{kind}: {a.message}\n")
    changed = len(outcome.changed)
    if outcome.applied:
        err.write(f"{verb} {_problems(len(outcome.applied))} in {changed} file{'s' if changed != 1 else ''}\n")
    else:
        err.write("nothing to fix\n")
    if not outcome.converged:
        err.write(
            f"warning: the fixes did not settle after {MAX_ROUNDS} rounds (they undo each other); "
            "what is shown is the last round (this is a bug in spark-dsl; please report it)\n"
        )


def availability(result: RunResult, unsafe: bool) -> str | None:
    """The hint after a check: how many problems `--fix` (and `--unsafe-fixes`) would fix."""
    safe = sum(1 for d in result.diagnostics if usable_fix(d, False, result.sources) is not None)
    more = sum(
        1
        for d in result.diagnostics
        if usable_fix(d, False, result.sources) is None and usable_fix(d, True, result.sources) is not None
    )
    if unsafe:
        safe, more = safe + more, 0
    parts = []
    if safe:
        flags = "--fix --unsafe-fixes" if unsafe else "--fix"
        parts.append(f"{_problems(safe)} can be fixed with `spark check {flags}`")
    if more:
        parts.append(f"{more} more with `--unsafe-fixes`")
    return "; ".join(parts) if parts else None
