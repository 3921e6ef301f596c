"""`spark check`, and what every command that checks specs shares, without click.

The run over the paths, the diagnostics in the chosen format and the exit code are here, not in
spark_dsl.cli, so that a plain `spark check PATH...` (no option) runs without importing click:
click and the command table spark_dsl.cli declares were about an eighth of a cold check of one
spec, and a pre-commit hook runs exactly that. spark_dsl.__main__ decides which invocations are
plain; every other one is parsed by click, whose `check` calls `check` below with what it parsed.
"""

from __future__ import annotations

import errno
import sys
from pathlib import Path
from typing import Any, NoReturn

from spark_dsl import conventions as invocation

EXIT_OK, EXIT_ERRORS, EXIT_USAGE, EXIT_INTERNAL = 0, 1, 2, 3


def echo_error(message: str) -> None:
    """A line on stderr, flushed, as `click.echo(message, err=True)` writes it: spark's messages
    hold no ANSI codes (paths are `printable`, an exception's text `visible`), which is all click
    would strip."""
    sys.stderr.write(f"{message}\n")
    sys.stderr.flush()


class CurrentFile:
    """The file being processed, so an internal failure can name it."""

    path: str = "(no file)"


class _Runs:
    """Whether this process has frozen a run's objects (see `run_frozen`)."""

    frozen = False


def internal_failure(err: BaseException) -> NoReturn:
    from spark_dsl.text_escape import visible  # an exception's text may quote a spec's value

    echo_error(
        f"spark: internal error while processing {CurrentFile.path}: "
        f"{visible(f'{type(err).__name__}: {err}')} (this is a bug in spark-dsl; please report it)"
    )
    sys.exit(EXIT_INTERNAL)


def usage(message: str) -> NoReturn:
    echo_error(f"spark: error: {message}")
    sys.exit(EXIT_USAGE)


def checked_run(
    paths: tuple[str, ...],
    root: Path | None,
    overlays: dict[Path, str] | None = None,
    forced_targets: tuple[str, ...] = (),
) -> Any:
    """Runs the pipeline over the paths (`-` is standard input); usage errors exit 2, internal
    failures exit 3. `-d`, `--show-settings` and the project settings apply here; `forced_targets`
    are `spark build -t`'s, which the rules check as if declared."""
    from spark_dsl.files import printable
    from spark_dsl.pipeline import UsageError, collect_paths
    from spark_dsl.project import Projects

    CurrentFile.path = "(no file)"  # not the last run's, when commands run in one process
    if root is not None:
        check_root(root)
    projects = Projects(forced=root, selection=invocation.current().selection)
    conventions = invocation.current()
    skipped: list[str] = []
    try:
        stdin = invocation.stdin_path(paths)
        files = collect_paths([p for p in paths if p != invocation.STDIN], projects, skipped)
        if stdin is not None:
            if root is not None and not stdin.resolve().is_relative_to(root.resolve()):
                raise UsageError(f"--stdin-filename {printable(str(stdin))} is outside the project root (see --root)")
            left = projects.escape(str(stdin), stdin.resolve(), folder=False) if root is None else None
            if left is not None:  # its project would be the link target's, with that project's settings
                raise UsageError(
                    f"--stdin-filename {printable(str(stdin))} resolves outside the project root {printable(str(left))}"
                )
            files = [f for f in files if f.resolve() != stdin.resolve()]
            files.insert(0 if paths[0] == invocation.STDIN else len(files), stdin)
            overlays = {stdin: invocation.stdin_text(), **(overlays or {})}
    except (UsageError, invocation.StdinError) as err:
        usage(str(err))
    for line in skipped:
        echo_error(f"spark: {line}")
    if conventions.show_settings:
        import click  # --show-settings is an option: click parsed this command

        ctx = click.get_current_context()
        sys.exit(invocation.show_settings(projects, files, ctx.params.get("fmt", "text"), ctx.params.get("deny", ())))

    result = run_frozen(files, projects, overlays, forced_targets)
    if conventions.deployments:
        problem = invocation.only_deployments(result, conventions.deployments, paths)
        if problem is not None:
            usage(problem)
    return result


def check_root(root: Path) -> None:
    """`--root` must be a folder that can be looked at: a usage error (exit 2) otherwise."""
    import stat

    from spark_dsl.files import Unreadable, inspect, printable

    status = inspect(root)
    if isinstance(status, Unreadable):
        usage(f"cannot use --root {printable(str(root))}: {status.reason}")
    if not stat.S_ISDIR(status.st_mode):
        usage(f"--root {printable(str(root))} is not a directory")
    real = root.resolve()
    if real == Path(real.anchor):
        usage(
            f"--root {printable(str(root))} is the file system's root, from which imports could name "
            "any file; name the project's folder"
        )


def run_frozen(files: list[Path], projects: Any, overlays: dict[Path, str] | None, forced: tuple[str, ...]) -> Any:
    """The pipeline's run, its objects frozen for the rest of the command; a bug exits 3.

    The run's objects (a few hundred per spec) live until the command exits. The pipeline keeps
    the cyclic collector off while it runs (`pipeline.run`); switched back on with all of them in its youngest
    generation, its next passes (and the one at exit) walked them all for nothing: 60 ms of a
    check of 1,000 specs. Frozen, they are left out of every pass, and each is still freed when
    its last reference goes. Only a process's first run freezes: frozen objects in a reference
    cycle are never collected, so a process that runs again (`check --fix` rounds, a test's
    CliRunner, 10,000 of them in the fuzz test) leaves its later runs to the collector and keeps
    one run's cycles at most (a collection before each run cost each a full pass instead)."""
    import gc

    from spark_dsl.files import printable
    from spark_dsl.pipeline import run

    def note(path: Path) -> None:
        CurrentFile.path = printable(str(path))

    # A flag, not gc.get_freeze_count(): the `spark` command froze its imports' objects already.
    first = not _Runs.frozen
    try:
        return run(files, projects, overlays, on_file=note, forced_targets=forced)
    except Exception as err:
        internal_failure(err)
    finally:
        if first:
            _Runs.frozen = True
            gc.freeze()


def emit_diagnostics(
    result: Any, fmt: str, no_color: bool, stream: Any = None, output_errors: int = 0, dry: bool = False
) -> None:
    """`output_errors`: problems that stopped a build writing (or would, `dry`), counted in the text summary."""

    files = [s.name for s in result.files]
    if stream is not None:  # text for people on another stream (stderr beside a script on stdout)
        from spark_dsl.render.text import render as render_text

        stream.write(
            render_text(
                result.diagnostics, result.sources, len(files), invocation.colour_wanted(no_color) and stream.isatty()
            )
        )
    elif fmt == "json":
        from spark_dsl.render.json_format import render

        sys.stdout.write(render(files, result.diagnostics, result.sources))
    elif fmt == "sarif":
        from spark_dsl.render.sarif import render as render_sarif

        sys.stdout.write(render_sarif(result.diagnostics, result.sources))
    elif fmt == "github":
        from spark_dsl.render.github import render as render_github

        sys.stdout.write(render_github(result.diagnostics, result.sources))
    elif invocation.current().quiet:
        sys.stdout.write(invocation.quiet_text(result.diagnostics, result.sources, invocation.colour_wanted(no_color)))
    else:
        from spark_dsl.render.text import render as render_text

        sys.stdout.write(
            render_text(
                result.diagnostics, result.sources, len(files), invocation.colour_wanted(no_color), output_errors, dry
            )
        )


def exit_code(result: Any, deny: tuple[str, ...]) -> int:
    """1 for errors, and for warnings under `--deny warnings` or a project's `warnings-as-errors`."""
    from spark_dsl.diagnostics import Severity

    if result.has_errors:
        return EXIT_ERRORS
    denied = "warnings" in deny or "warnings" in invocation.current().deny
    if denied and any(d.severity is Severity.WARNING for d in result.diagnostics):
        return EXIT_ERRORS
    return EXIT_ERRORS if result.has_denied_warnings else EXIT_OK


def _fix_hint(result: Any, unsafe_fixes: bool) -> str | None:
    """How many problems `--fix` would fix; a clean run has none to count, and a clean check then
    never imports spark_dsl.fixes."""
    if not result.diagnostics:
        return None
    from spark_dsl import fixes

    return fixes.availability(result, unsafe_fixes)


def check(
    paths: tuple[str, ...],
    root: Path | None = None,
    fmt: str = "text",
    deny: tuple[str, ...] = (),
    no_color: bool = False,
    fix: bool = False,
    unsafe_fixes: bool = False,
    show_diff: bool = False,
) -> NoReturn:
    """`spark check`: parse, resolve and check files (a directory means every *.spark below it),
    then exit. The defaults are what click parses from a plain `spark check PATH...`
    (tests/test_plain_check.py holds them to it)."""
    if invocation.current().statistics and fmt not in ("text", "json"):
        usage(f"--statistics writes text or json, not --format {fmt}")
    if not (fix or show_diff):
        result = checked_run(paths, root)
        try:
            if invocation.current().statistics:
                _emit_statistics(result, fmt)
            else:
                emit_diagnostics(result, fmt, no_color)
            hint = _fix_hint(result, unsafe_fixes)
            if hint and fmt == "text" and not invocation.current().quiet:
                echo_error(f"spark: {hint}")
        except Exception as err:
            internal_failure(err)
        _exit(exit_code(result, deny))
    from contextlib import nullcontext, redirect_stdout

    from spark_dsl import fixes

    outcome = fixes.fix_run(lambda overlays: checked_run(paths, root, overlays), unsafe_fixes)
    stdin, quiet = invocation.stdin_path(paths), invocation.current().quiet
    try:
        if show_diff:
            fixes.write_diff(outcome, sys.stdout)
            if not quiet:
                fixes.report(outcome, True, sys.stderr)
            _exit(EXIT_ERRORS if outcome.changed else EXIT_OK)
        # `spark check --fix -` is a filter: the fixed text on stdout, the report on stderr.
        unwritten = fixes.write_fixed(outcome, sys.stderr, stdin, sys.stdout)
        if not quiet:
            fixes.report(outcome, False, sys.stderr)
        with redirect_stdout(sys.stderr) if stdin is not None else nullcontext():
            if invocation.current().statistics:
                _emit_statistics(outcome.result, fmt)
            else:
                emit_diagnostics(outcome.result, fmt, no_color)
    except Exception as err:
        internal_failure(err)
    # A file --fix could not write is no diagnostic: --exit-zero leaves its 1.
    if unwritten:
        sys.exit(EXIT_ERRORS)
    _exit(exit_code(outcome.result, deny))


def _exit(code: int) -> NoReturn:
    """Exits with `code`, or 0 for diagnostics under `--exit-zero` (usage errors stay 2, bugs 3)."""
    sys.exit(EXIT_OK if code == EXIT_ERRORS and invocation.current().exit_zero else code)


def _emit_statistics(result: Any, fmt: str) -> None:
    """`--statistics`: the count of each code instead of the diagnostics (ruff's table)."""
    from spark_dsl.render import statistics

    diagnostics = result.diagnostics
    sys.stdout.write(statistics.render_json(diagnostics) if fmt == "json" else statistics.render_text(diagnostics))


class _QuietFlush:
    """A standard stream whose flush ignores a closed pipe (click's `PacifyFlushWrapper`): the
    interpreter's flush at exit would otherwise print an exception after the command ended."""

    def __init__(self, stream: Any) -> None:
        self._stream = stream

    def flush(self) -> None:
        try:
            self._stream.flush()
        except OSError as err:
            if err.errno != errno.EPIPE:
                raise

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


def check_plain(paths: tuple[str, ...]) -> NoReturn:
    """`spark check PATH...` without click (spark_dsl.__main__ picks the invocations that come
    here), answering an interrupt and a closed pipe as click's standalone mode does."""
    try:
        check(paths)
    except (EOFError, KeyboardInterrupt):
        sys.stderr.write("\nAborted!\n")  # click's blank line first closes the terminal's `^C`
        sys.stderr.flush()
        sys.exit(EXIT_ERRORS)
    except OSError as err:
        if err.errno != errno.EPIPE:
            raise
        sys.stdout, sys.stderr = _QuietFlush(sys.stdout), _QuietFlush(sys.stderr)
        sys.exit(EXIT_ERRORS)
