"""The options the subcommands share where they apply, as docs/cli.md describes them.

Each option here stores its value in the invocation's `Conventions` (spark_dsl.conventions, in
click's context), so commands gain `--color`, `--quiet`, `--output-file`, `--stdin-filename`, `-d`
and `--show-settings` without each growing a parameter; the CLI's helpers read them back.
"""

from __future__ import annotations

import io
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click

from spark_dsl.conventions import current

F = TypeVar("F", bound=Callable[..., Any])


def _store(name: str) -> Callable[[click.Context, click.Parameter, Any], None]:
    def callback(ctx: click.Context, param: click.Parameter, value: Any) -> None:
        if value is not None and value != () and value is not False:
            setattr(current(), name, value)

    return callback


def color_option(fn: F) -> F:
    return click.option(
        "--color",
        type=click.Choice(["auto", "always", "never"]),
        default="auto",
        show_default=True,
        expose_value=False,
        callback=_store("color"),
        help="Colour diagnostics: `auto` follows NO_COLOR, FORCE_COLOR, TERM=dumb and whether stdout is a terminal.",
    )(fn)


def quiet_option(fn: F) -> F:
    return click.option(
        "-q",
        "--quiet",
        is_flag=True,
        expose_value=False,
        callback=_store("quiet"),
        help="Print the diagnostics and the result only: no summary line, no progress notes.",
    )(fn)


class SafePath(click.Path):
    """click's Path, refusing a NUL (which click's own checks pass to `os.stat`, a ValueError
    traceback) before it looks at the file system. A real command line cannot carry a NUL; a
    program calling spark's commands in-process, or a shell `$'a\\0b'`, can."""

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if isinstance(value, str) and "\x00" in value:
            self.fail("a path cannot hold a NUL character", param, ctx)
        return super().convert(value, param, ctx)


def _no_nul(name: str) -> Callable[[click.Context, click.Parameter, Any], None]:
    """`_store(name)`, refusing a NUL in the value (it names a path)."""
    store = _store(name)

    def callback(ctx: click.Context, param: click.Parameter, value: Any) -> None:
        if isinstance(value, str) and "\x00" in value:
            raise click.BadParameter("a path cannot hold a NUL character", ctx, param)
        store(ctx, param, value)

    return callback


def _check_output(ctx: click.Context, param: click.Parameter, value: Path | None) -> None:
    """Checks the path now, so a folder, or a file in a folder that does not exist, is a usage
    error before anything runs; the file is written only when the command has run
    (ConventionsCommand), so reading the command line never creates it."""
    if value is None:
        return
    from spark_dsl.files import printable

    if value.is_dir():
        raise click.BadParameter(f"{printable(str(value))} is a directory", ctx, param)
    if not value.parent.is_dir():
        raise click.BadParameter(f"cannot write {printable(str(value))}: No such file or directory", ctx, param)
    current().output_path = value


class ConventionsCommand(click.Command):
    """A subcommand that records what it reads, and whose standard output goes to `--output-file`.

    The output is held in memory while the command runs and written when it ends, after the
    write gate (spark_dsl.write_gate) has made sure it is none of the files the run read: an
    output opened first truncated the spec it then checked."""

    def invoke(self, ctx: click.Context) -> Any:
        from spark_dsl import files

        files.start_read_log()
        try:
            path = current().output_path
            if path is None:
                return super().invoke(ctx)
            return self._into(ctx, path)
        finally:
            files.stop_read_log()

    def _into(self, ctx: click.Context, path: Path) -> Any:
        held = io.BytesIO()
        stream = io.TextIOWrapper(held, encoding="utf-8", newline="", write_through=True)
        saved, sys.stdout = sys.stdout, stream
        try:
            outcome = super().invoke(ctx)
        except SystemExit as stop:
            sys.stdout = saved
            if stop.code != click.UsageError.exit_code:  # a usage error (spark's is click's 2) writes nothing
                _deliver(ctx, path, held.getvalue())
            raise
        finally:
            sys.stdout = saved
        _deliver(ctx, path, held.getvalue())
        stream.detach()
        return outcome


def _deliver(ctx: click.Context, path: Path, data: bytes) -> None:
    """Writes the held output to `--output-file`, or refuses (exit 2) having written nothing."""
    from spark_dsl import write_gate
    from spark_dsl.files import os_problem, printable

    refused = write_gate.refusal(path, current().build_folder)
    if refused is not None:
        raise click.BadParameter(
            f"refusing to write {printable(str(path))}: {refused}; nothing was written (name a file "
            "the run does not read, outside any build output folder)",
            ctx,
            param_hint="'--output-file'",
        )
    try:
        write_gate.write_output(path, data)
    except (OSError, ValueError) as err:
        raise click.BadParameter(
            f"cannot write {printable(str(path))}: {os_problem(err).reason}", ctx, param_hint="'--output-file'"
        ) from None


def output_file_option(fn: F) -> F:
    return click.option(
        "--output-file",
        type=SafePath(dir_okay=False, path_type=Path),
        expose_value=False,
        callback=_check_output,
        help="Write what would go to standard output to this file instead (created or replaced).",
    )(fn)


def stdin_filename_option(fn: F) -> F:
    return click.option(
        "--stdin-filename",
        metavar="PATH",
        expose_value=False,
        callback=_no_nul("stdin_filename"),
        help="With `-` as the path: the file the text on standard input stands for (its name in "
        "diagnostics, its folder for imports, its project for settings).",
    )(fn)


def deployment_option(fn: F) -> F:
    return click.option(
        "-d",
        "--deployment",
        "only_deployments",
        multiple=True,
        metavar="NAME",
        expose_value=False,
        callback=_store("deployments"),
        shell_complete=_complete_deployments,
        help="Only this deployment (repeatable): its diagnostics and outputs, and those of no deployment.",
    )(fn)


def _complete_deployments(ctx: click.Context, param: click.Parameter, incomplete: str) -> list[Any]:
    from spark_dsl.completion import deployments

    return deployments(ctx, param, incomplete)


def deny_option(fn: F) -> F:
    return click.option(
        "--deny",
        "deny_levels",
        type=click.Choice(["warnings"]),
        multiple=True,
        expose_value=False,
        callback=_store("deny"),
        help="Make warnings fail the run.",
    )(fn)


def show_settings_option(fn: F) -> F:
    return click.option(
        "--show-settings",
        is_flag=True,
        expose_value=False,
        callback=_store("show_settings"),
        help="Print each project's root and settings, with where each comes from, and the files "
        "they apply to; check nothing.",
    )(fn)


def _selection(field_name: str) -> Callable[[click.Context, click.Parameter, Any], None]:
    """Stores `--select`, `--extend-select` or `--ignore` in the invocation's Selection, each value
    checked against the code registry (a usage error with a did-you-mean otherwise)."""

    def callback(ctx: click.Context, param: click.Parameter, value: tuple[str, ...]) -> None:
        if not value:
            return
        from msgspec.structs import replace

        from spark_dsl.code_selection import Selection, parse

        codes, problem = parse(value, ignoring=field_name == "ignore")
        if problem is not None:
            raise click.BadParameter(problem, ctx, param)
        conventions = current()
        conventions.selection = replace(conventions.selection or Selection(), **{field_name: codes})

    return callback


def _code_option(name: str, field_name: str, help_text: str) -> Callable[[F], F]:
    from spark_dsl import completion

    return click.option(
        name,
        f"{field_name}_codes",
        multiple=True,
        metavar="CODES",
        expose_value=False,
        callback=_selection(field_name),
        shell_complete=completion.codes,
        help=help_text,
    )


def selection_options(fn: F) -> F:
    """`--select`, `--extend-select` and `--ignore`, as ruff's (spark_dsl.code_selection)."""
    for option in (
        _code_option(
            "--ignore",
            "ignore",
            "Do not report these codes or prefixes (comma-separated or repeated), after every other "
            "selection; errors are always reported.",
        ),
        _code_option(
            "--extend-select",
            "extend_select",
            "Also report these codes or prefixes, even where the project's `ignore` leaves them out.",
        ),
        _code_option(
            "--select",
            "select",
            "Report only these codes or prefixes (SPK3, SPK302), replacing the project's `select` and "
            "`ignore`; errors are always reported.",
        ),
    ):
        fn = option(fn)
    return fn


def statistics_option(fn: F) -> F:
    return click.option(
        "--statistics",
        is_flag=True,
        expose_value=False,
        callback=_store("statistics"),
        help="Print the count of each code (most frequent first, `[*]` where --fix fixes one) "
        "instead of the diagnostics; text or json.",
    )(fn)


def exit_zero_option(fn: F) -> F:
    return click.option(
        "--exit-zero",
        is_flag=True,
        expose_value=False,
        callback=_store("exit_zero"),
        help="Exit 0 even when diagnostics are reported (a usage error still exits 2).",
    )(fn)
