"""The options the subcommands share where they apply, as docs/cli.md describes them.

Each option here stores its value in the invocation's `Conventions` (in click's context),
so commands gain `--color`, `--quiet`, `--output-file`, `--stdin-filename`, `-d` and
`--show-settings` without each growing a parameter; the CLI's helpers read them back.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import click
from msgspec import Struct, field

F = TypeVar("F", bound=Callable[..., Any])

STDIN = "-"
STDIN_NAME = "<stdin>"
_KEY = "spark.conventions"


class Conventions(Struct):
    """What the shared options asked for in this invocation."""

    color: str = "auto"
    quiet: bool = False
    stdin_filename: str | None = None
    deployments: tuple[str, ...] = ()
    deny: tuple[str, ...] = ()
    show_settings: bool = False
    output_path: Path | None = None
    stdin_text: str | None = None
    # Names of deployments `-d` left out: a build keeps their folders as they are.
    left_out: set[str] = field(default_factory=set)


def current() -> Conventions:
    """This invocation's conventions (the defaults outside a command, as in unit tests)."""
    ctx = click.get_current_context(silent=True)
    if ctx is None:
        return Conventions()
    conventions = ctx.meta.get(_KEY)
    if conventions is None:
        conventions = ctx.meta[_KEY] = Conventions()
    assert isinstance(conventions, Conventions)
    return conventions


def _store(name: str) -> Callable[[click.Context, click.Parameter, Any], None]:
    def callback(ctx: click.Context, param: click.Parameter, value: Any) -> None:
        if value is not None and value != () and value is not False:
            setattr(current(), name, value)

    return callback


def colour_wanted(no_color: bool = False) -> bool:
    """Whether diagnostics on stdout get ANSI colour.

    `--color always|never` decides; `auto` (the default) follows the environment as Python 3.13
    itself does: a non-empty NO_COLOR turns colour off, else a non-empty FORCE_COLOR turns it on,
    else TERM=dumb turns it off, else colour goes only to a terminal. `--no-color` is
    `--color never`.
    """
    choice = "never" if no_color else current().color
    if choice != "auto":
        return choice == "always"
    if os.environ.get("NO_COLOR"):
        return False
    if os.environ.get("FORCE_COLOR"):
        return True
    if os.environ.get("TERM") == "dumb":
        return False
    return sys.stdout.isatty()


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


def _check_output(ctx: click.Context, param: click.Parameter, value: Path | None) -> None:
    """Checks the path now, so a folder, or a file in a folder that does not exist, is a usage
    error before anything runs; the file is opened only when the command runs
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
    """A subcommand whose standard output goes to `--output-file` while it runs."""

    def invoke(self, ctx: click.Context) -> Any:
        path = current().output_path
        if path is None:
            return super().invoke(ctx)
        from spark_dsl.files import printable

        try:
            handle = open(path, "w", encoding="utf-8", newline="")  # noqa: SIM115 - closed below
        except (OSError, ValueError) as err:
            reason = getattr(err, "strerror", None) or str(err)
            raise click.BadParameter(
                f"cannot write {printable(str(path))}: {reason}", ctx, param_hint="'--output-file'"
            ) from None
        saved, sys.stdout = sys.stdout, handle
        try:
            return super().invoke(ctx)
        finally:
            sys.stdout = saved
            handle.close()


def output_file_option(fn: F) -> F:
    return click.option(
        "--output-file",
        type=click.Path(dir_okay=False, path_type=Path),
        expose_value=False,
        callback=_check_output,
        help="Write what would go to standard output to this file instead (created or replaced).",
    )(fn)


def stdin_filename_option(fn: F) -> F:
    return click.option(
        "--stdin-filename",
        metavar="PATH",
        expose_value=False,
        callback=_store("stdin_filename"),
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
        help="Only this deployment (repeatable): its diagnostics and outputs, and those of no deployment.",
    )(fn)


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


# ---- standard input ---------------------------------------------------------------


class StdinError(Exception):
    """Standard input cannot be used as a spec: exit 2 with this message."""


def stdin_path(paths: tuple[str, ...]) -> Path | None:
    """The path standing for standard input when `-` is among the paths; None without `-`."""
    conventions = current()
    count = paths.count(STDIN)
    if count > 1:
        raise StdinError("`-` (standard input) can be named once")
    if count == 0:
        if conventions.stdin_filename is not None:
            raise StdinError("--stdin-filename names the file standard input stands for: pass `-` as the path too")
        return None
    if conventions.stdin_filename is not None:
        return Path(conventions.stdin_filename)
    return Path(STDIN_NAME)


def read_stdin() -> str:
    """Standard input as text, at most MAX_SPEC_BYTES of UTF-8, or a StdinError saying why not."""
    from spark_dsl import files

    data = files.read_stream(sys.stdin.buffer.read)
    if isinstance(data, files.Unreadable):
        raise StdinError(f"cannot read standard input: {data.reason}")
    try:
        return data.decode("utf-8").removeprefix("\ufeff")
    except UnicodeDecodeError as err:
        raise StdinError(f"standard input is not valid UTF-8 (byte {err.start})") from None


def stdin_text() -> str:
    """Standard input, read once per invocation (a `--fix` run checks it several times)."""
    conventions = current()
    if conventions.stdin_text is None:
        conventions.stdin_text = read_stdin()
    return conventions.stdin_text


# ---- what the options do to a run ------------------------------------------------------


def only_deployments(result: Any, names: tuple[str, ...], paths: tuple[str, ...]) -> str | None:
    """Narrows a run to the deployments `-d` names; the usage error when one is not there."""
    from spark_dsl.files import printable

    known = {d.name for d in result.deployments}
    unknown = sorted(set(names) - known)
    if unknown:
        shown = ", ".join(printable(n) for n in unknown)
        return f"no deployment named {shown} in {', '.join(printable(p) for p in paths)}"
    wanted = set(names)
    current().left_out = known - wanted
    result.deployments = [d for d in result.deployments if d.name in wanted]
    result.plans = [p for p in result.plans if p.name in wanted]
    result.diagnostics = [d for d in result.diagnostics if d.deployment is None or d.deployment in wanted]
    return None


def configured_output(result: Any, paths: tuple[str, ...]) -> Path | str:
    """`spark build`'s folder when `-o` is not given: the `output` setting of the named paths'
    project, relative to the current folder; a message when their projects disagree."""
    from spark_dsl.files import display

    stdin = stdin_path(paths)
    chosen = {
        result.projects.of(stdin if raw == STDIN and stdin is not None else Path(raw)).settings.output.value
        for raw in paths
    }
    if len(chosen) > 1:
        shown = ", ".join(sorted(display(p) for p in chosen))
        return f"the paths belong to projects with different `output` folders ({shown}): pass -o"
    (folder,) = chosen
    return Path(display(folder)) if folder.is_absolute() else folder


def show_settings(projects: Any, files: list[Path], fmt: str, deny: tuple[str, ...]) -> int:
    """Prints the settings `--show-settings` asks for; the exit code (1 when a configuration
    file has errors, which are printed too)."""
    from spark_dsl.diagnostics import Severity
    from spark_dsl.render import settings as render_settings

    by_home: dict[Path, list[Path]] = {}
    for path in files:
        by_home.setdefault(projects.of(path).home, []).append(path)
    found = projects.all()
    diagnostics = [d for project in found for d in project.settings.diagnostics]
    sources = {p.settings.source.name: p.settings.source for p in found if p.settings.source is not None}
    deny_warnings = "warnings" in deny
    if fmt == "json":
        from spark_dsl.render.json_format import diagnostics_document

        document = diagnostics_document([], diagnostics, sources)
        sys.stdout.write(render_settings.render_json(found, by_home, deny_warnings, document))
    else:
        sys.stdout.write(render_settings.render_text(found, by_home, deny_warnings))
        if diagnostics:
            from spark_dsl.render.text import render_one

            sys.stdout.write("\n".join(render_one(d, sources, colour_wanted()) for d in diagnostics))
    return 1 if any(d.severity is Severity.ERROR for d in diagnostics) else 0


def quiet_text(diagnostics: list[Any], sources: dict[str, Any], colour: bool) -> str:
    """The text format without its summary line, for `--quiet`."""
    from spark_dsl.render.text import render_one

    return "\n".join(render_one(d, sources, colour) for d in diagnostics)
