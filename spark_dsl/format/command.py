"""What `spark fmt PATH... [--check] [--diff]` does with files: format, compare, write or report."""

from __future__ import annotations

import difflib
import stat
import sys
from pathlib import Path
from typing import TextIO

from msgspec import Struct

from spark_dsl import files
from spark_dsl.format import format_text

STDIN = "-"


class FormatUsageError(Exception):
    """A path that does not exist or a folder without `.spark` files: exit 2."""


class Tally(Struct):
    changed: int = 0
    unchanged: int = 0
    failed: int = 0


def spark_files(paths: list[str], skipped: list[str] | None = None) -> list[str]:
    """The files named by the arguments, folders searched for `*.spark`, `-` for stdin.

    A named path that is missing, cannot be looked at or is not a regular file is a usage
    error. A folder scan stays inside the folder: it does not enter symlinked folders,
    and leaves out (listing them in `skipped`) symlinks that lead out of it, FIFOs and devices;
    it leaves out what the project's `include` and `exclude` settings leave out, as `spark check` does.
    """
    from spark_dsl.project import Projects

    projects = Projects()
    found: list[str] = []
    try:
        for raw in paths:
            if raw == STDIN:
                found.append(raw)
                continue
            status = files.named(raw)
            folder = stat.S_ISDIR(status.st_mode)
            if not folder:
                files.require_regular(raw, status)
            left = projects.escape(raw, files.named_real(raw), folder)
            if left is not None:  # fmt writes what it reads: never a file out of the project it is named in
                raise files.NamedPathError(
                    f"{files.printable(raw)} resolves outside the project root {files.printable(str(left))}"
                )
            if folder:
                inside = files.named_real(raw)
                # fmt writes what it reads: a symlinked file is followed only inside the scanned folder.
                below = projects.scan(Path(raw), inside, boundary=inside)
                found.extend(p.as_posix() for p in files.scanned_or_error(raw, *below, skipped))
                continue
            found.append(raw)
    except files.NamedPathError as err:
        raise FormatUsageError(str(err)) from None
    return list(dict.fromkeys(found))


def format_paths(
    paths: list[str],
    check: bool,
    diff: bool,
    out: TextIO,
    err: TextIO,
    *,
    stdin_name: str | None = None,
    quiet: bool = False,
) -> int:
    """Formats every file; exit code 1 for syntax errors, or for changes under --check/--diff.

    `stdin_name` (`--stdin-filename`) is how standard input is named in messages; `quiet` leaves
    out the "reformatted" lines and the summary, keeping errors.
    """
    shown = files.printable(stdin_name) if stdin_name else "<stdin>"
    if stdin_name is not None and STDIN not in paths:
        raise FormatUsageError("--stdin-filename names the file standard input stands for: pass `-` as the path too")
    if paths.count(STDIN) > 1:
        raise FormatUsageError("`-` (standard input) can be named once")
    tally = Tally()
    skipped: list[str] = []
    names = spark_files(paths, skipped)
    err.writelines(f"{line}\n" for line in skipped)
    for name in names:
        _format_one(name, shown if name == STDIN else files.printable(name), check, diff, out, err, tally, quiet)
    if not quiet:
        _summary(tally, check or diff, err)
    if tally.failed or ((check or diff) and tally.changed):
        return 1
    return 0


def _read(name: str, shown: str, err: TextIO, tally: Tally) -> str | None:
    """The file's text; None, reported and counted, when it cannot be read (never blocks on a FIFO)."""
    data = files.read_stream(sys.stdin.buffer.read) if name == STDIN else files.read_spec(Path(name))
    if isinstance(data, files.Unreadable):
        err.write(f"error: {shown}: cannot read: {data.reason}\n")
    else:
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError as problem:
            err.write(f"error: {shown}: not valid UTF-8 (byte {problem.start}); left untouched\n")
    tally.failed += 1
    return None


def _format_one(
    name: str, shown: str, check: bool, diff: bool, out: TextIO, err: TextIO, tally: Tally, quiet: bool
) -> None:
    """Formats one file (`-`: standard input to standard output); `shown` is its name in messages."""
    text = _read(name, shown, err, tally)
    if text is None:
        return
    result = format_text(text, shown)
    if result.text is None:
        _report_syntax_error(shown, text, result, err)
        tally.failed += 1
        if name == STDIN and not (check or diff):
            out.write(text)  # a filter must not swallow its input
        return
    changed = result.text != text
    tally.changed += changed
    tally.unchanged += not changed
    if diff and changed:
        out.writelines(
            difflib.unified_diff(
                text.splitlines(keepends=True),
                result.text.splitlines(keepends=True),
                fromfile=f"{shown} (original)",
                tofile=f"{shown} (formatted)",
            )
        )
    if check and changed and not diff:
        out.write(f"would reformat {shown}\n")
    if check or diff:
        return
    if name == STDIN:
        out.write(result.text)
    elif changed:
        if _replace(Path(name), result.text, err):
            if not quiet:
                err.write(f"reformatted {shown}\n")
        else:
            tally.changed -= 1
            tally.failed += 1


def _report_syntax_error(shown: str, text: str, result: object, err: TextIO) -> None:
    from spark_dsl.loader import SourceFile
    from spark_dsl.render.text import render_one

    diagnostic = getattr(result, "diagnostic", None)
    if diagnostic is None:  # pragma: no cover - a failed parse always says why
        err.write(f"error: {shown}: cannot be parsed; left untouched\n")
        return
    source = SourceFile(Path(shown), shown, text.removeprefix("\ufeff"), None)
    err.write(render_one(diagnostic, {shown: source}))
    err.write(f"{shown}: not formatted because of the syntax error above\n")


def _replace(path: Path, text: str, err: TextIO) -> bool:
    """Writes the formatted text in one step (see `files.replace_text`); a file that cannot be
    written is reported and left as it was."""
    try:
        files.replace_text(path, text)
        return True
    except OSError as problem:
        err.write(f"error: {files.printable(str(path))}: cannot write: {problem.strerror or problem}; left untouched\n")
        return False


def _summary(tally: Tally, dry: bool, err: TextIO) -> None:
    def files(n: int) -> str:
        return f"{n} file{'s' if n != 1 else ''}"

    parts = []
    if tally.changed:
        parts.append(f"{files(tally.changed)} {'would be reformatted' if dry else 'reformatted'}")
    if tally.unchanged:
        parts.append(f"{files(tally.unchanged)} already formatted")
    if tally.failed:
        parts.append(f"{files(tally.failed)} with errors left untouched")
    if parts:
        err.write(", ".join(parts) + "\n")
