"""The `spark` command line: click's command table, which parses options and runs each command.

`spark check`, and the run, formats and exit code every command that checks specs shares, are
in spark_dsl.check_command, without click, so that a plain `spark check PATH...` needs no click
(spark_dsl.__main__)."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any, NoReturn

import click

from spark_dsl import check_command, completion
from spark_dsl.check_command import (
    EXIT_ERRORS,
    CurrentFile,
    checked_run,
    emit_diagnostics,
    exit_code,
    internal_failure,
    usage,
)
from spark_dsl.cli_options import ConventionsCommand, SafePath

# `spark plan` formats, here so --help needs no import of the renderers.
PLAN_FORMATS = ("text", "json", "shell", "mermaid", "sarif", "github")
PLAN_FORMAT_HELP = (
    "text: every setting with its origin, capacity and launches, for people; json: the same for programs; "
    "shell: the exact environment and commands of one node (--node), to paste into bash; "
    "mermaid: a flowchart of the nodes, GPUs, roles, ports and router, for pull requests and docs; "
    "sarif, github: the diagnostics only, as `spark check` writes them."
)


def _root_option(fn: Any) -> Any:
    return click.option(
        "--root",
        type=SafePath(file_okay=False, path_type=Path),
        default=None,
        help="Project root that imports may not leave, for every file "
        "(default: each file's project root: the nearest folder above it with spark.toml, "
        "a pyproject.toml with [tool.spark], or .git; else the file's own folder).",
    )(fn)


def _conventions(fn: Any) -> Any:
    """The options every command that checks specs shares (docs/cli.md)."""
    from spark_dsl import cli_options

    for option in (
        cli_options.stdin_filename_option,
        cli_options.output_file_option,
        cli_options.quiet_option,
        cli_options.color_option,
    ):
        fn = option(fn)
    return fn


def _default_paths(ctx: click.Context, param: click.Parameter, value: tuple[str, ...]) -> tuple[str, ...]:
    """No path means the current folder, as in ruff and terraform; an empty path names nothing
    (`spark check ""` from an unset shell variable used to check the whole folder)."""
    if "" in value:
        raise click.BadParameter("an empty path names no file or folder; name one, or none for the current folder")
    return value or (".",)


def _show_settings(fn: Any) -> Any:
    from spark_dsl.cli_options import show_settings_option

    return show_settings_option(fn)


def _selection(fn: Any) -> Any:
    from spark_dsl.cli_options import selection_options

    return selection_options(fn)


def _deny(fn: Any) -> Any:
    from spark_dsl.cli_options import deny_option

    return deny_option(fn)


def _fmt_conventions(fn: Any) -> Any:
    from spark_dsl import cli_options

    return cli_options.stdin_filename_option(cli_options.quiet_option(fn))


def _check_only(fn: Any) -> Any:
    """`spark check`'s `--statistics` and `--exit-zero` (docs/cli.md says why plan and build have neither)."""
    from spark_dsl import cli_options

    return cli_options.statistics_option(cli_options.exit_zero_option(fn))


def _common(fn: Any) -> Any:
    from spark_dsl import cli_options

    fn = cli_options.deployment_option(fn)
    fn = cli_options.selection_options(fn)
    fn = _conventions(fn)
    fn = _root_option(fn)
    fn = click.option(
        "--format",
        "fmt",
        type=click.Choice(["text", "json", "sarif", "github"]),
        default="text",
        show_default=True,
        help="Diagnostics format.",
    )(fn)
    fn = click.option("--deny", type=click.Choice(["warnings"]), multiple=True, help="Make warnings fail the run.")(fn)
    fn = click.option("--no-color", is_flag=True, help="Same as --color never.")(fn)
    return fn


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="spark-dsl", prog_name="spark")
def main() -> None:
    """Compile `.spark` deployment specs into checked vLLM deployments."""


# Every subcommand sends its standard output to `--output-file`, when given, while it runs.
main.command_class = ConventionsCommand


@main.command()
@click.argument("paths", nargs=-1, callback=_default_paths)
@_common
@_show_settings
@_check_only
@click.option(
    "--fix",
    is_flag=True,
    help="Apply every safe fix (one that changes how the spec is written, not what it deploys), "
    "check again until nothing is left to fix, write the files and report each fix on stderr; "
    "what remains is reported as usual.",
)
@click.option(
    "--unsafe-fixes",
    is_flag=True,
    help="With --fix or --diff, also apply the fixes that change what the spec deploys "
    "(did-you-mean guesses, recipe settings, renames).",
)
@click.option(
    "--diff",
    "show_diff",
    is_flag=True,
    help="Write nothing; print the changes --fix would make as a unified diff (exit 1 if there are any).",
)
def check(
    paths: tuple[str, ...],
    root: Path | None,
    fmt: str,
    deny: tuple[str, ...],
    no_color: bool,
    fix: bool,
    unsafe_fixes: bool,
    show_diff: bool,
) -> None:
    """Parse, resolve and check files (a directory means every *.spark below it)."""
    check_command.check(paths, root, fmt, deny, no_color, fix, unsafe_fixes, show_diff)


@main.command()
@click.argument("topic", nargs=-1, metavar="[CODE|NAME]", shell_complete=completion.topics)
@click.option("--format", "fmt", type=click.Choice(["text", "markdown"]), default="text", show_default=True)
@click.option(
    "--list", "list_codes", is_flag=True, help="List every code with its severity and title (as no argument does)."
)
@click.option(
    "--spec",
    "specs",
    multiple=True,
    metavar="PATH",
    help="Look for a declared model in this .spark file (and its imports) or folder; repeatable "
    "(default: the current folder's project root, when NAME is no code, key, block or catalog entry).",
)
def explain(topic: tuple[str, ...], fmt: str, list_codes: bool, specs: tuple[str, ...]) -> None:
    """What a diagnostic code means: the recipe statement behind it, a failing and a fixed example.

    NAME may also be a key (max_model_len, serve.port), a block (serve, target slurm), an
    accelerator (b200), a model (muse-spark-open) or a checkpoint (nvfp4), explained from the
    schema and the catalog, or a model declared in a spec (`model NAME { ... }`), explained with
    the file and line of each fact. With no argument: every code with its severity and title.
    """
    from spark_dsl.explain_topics import ExplainUsageError
    from spark_dsl.explain_topics import explain as explain_text

    try:
        # `spark explain target slurm` names one block in two words.
        sys.stdout.write(explain_text(" ".join(topic) or None, fmt == "markdown", list_codes, specs))
    except ExplainUsageError as err:
        usage(str(err))


@main.command(name="fmt")
@click.argument("paths", nargs=-1, callback=_default_paths)
@_fmt_conventions
@click.option("--check", is_flag=True, help="Write nothing; list files that would change.")
@click.option("--diff", "show_diff", is_flag=True, help="Write nothing; print the changes.")
def fmt_command(paths: tuple[str, ...], check: bool, show_diff: bool) -> None:
    """Canonical formatting, comments kept, idempotent (`-` formats stdin to stdout)."""
    from spark_dsl.conventions import current
    from spark_dsl.format.command import FormatUsageError, format_paths

    try:
        conventions = current()
        code = format_paths(
            list(paths),
            check,
            show_diff,
            sys.stdout,
            sys.stderr,
            stdin_name=conventions.stdin_filename,
            quiet=conventions.quiet,
        )
    except FormatUsageError as err:
        usage(str(err))
    except BrokenPipeError:  # `spark fmt --diff | head`: the reader has seen enough
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        sys.exit(EXIT_ERRORS)
    except Exception as err:  # a formatter bug becomes exit 3, never a traceback
        internal_failure(err)
    sys.exit(code)


@main.command()
@click.option("--stdio", is_flag=True, help="Talk over stdin and stdout (the only transport).")
def lsp(stdio: bool) -> None:
    """Language server over stdio."""
    from importlib.util import find_spec

    missing = [name for name in ("pygls", "lsprotocol") if find_spec(name) is None]
    if missing:
        # Regular dependencies: only an install made with --no-deps lacks them. Name them with
        # the ranges spark-dsl's own metadata gives, so the fix installs what it was built for.
        from importlib.metadata import PackageNotFoundError, requires

        try:
            declared = requires("spark-dsl") or []
        except PackageNotFoundError:
            declared = []
        plain = [r.replace(" ", "") for r in declared if ";" not in r]  # not the extras' entries
        wanted = [next((r for r in plain if r.startswith(name)), name) for name in missing]
        usage(
            f"`spark lsp` needs {' and '.join(missing)}, which spark-dsl depends on but this "
            f"environment lacks: pip install {' '.join(repr(w) for w in wanted)}"
        )
    from spark_dsl.lsp.server import serve

    serve()


@main.command(name="init")
@click.option(
    "--model",
    default=None,
    shell_complete=completion.models,
    help="The first spec's model, a catalog id (default: the catalog's first).",
)
@click.option(
    "--accelerator",
    default=None,
    shell_complete=completion.accelerators,
    help="The first spec's accelerator (default: the catalog's first validated one).",
)
@click.option(
    "--target",
    default=None,
    shell_complete=completion.server_targets,
    help="The first spec's target (default: the first of the target table).",
)
@click.option("--force", is_flag=True, help="Replace files that exist (without it, nothing is written).")
def init_command(model: str | None, accelerator: str | None, target: str | None, force: bool) -> None:
    """Start a project in the current folder: spark.toml, a first spec in specs/, a .gitignore for
    the output folder, a .pre-commit-config.yaml and a GitHub workflow. Asks nothing; never
    replaces a file unless --force."""
    from spark_dsl import init_project

    try:
        choice = init_project.choose(model, accelerator, target)
        written = init_project.init(Path("."), choice, force)
    except init_project.InitUsageError as err:
        usage(str(err))
    except Exception as err:  # a bug becomes exit 3, never a traceback
        internal_failure(err)
    click.echo("".join(f"spark: wrote {path}\n" for path in written), err=True, nl=False)
    click.echo("spark: next: `spark check`, then `spark build` and commit its outputs (docs/ci.md)", err=True)


@main.group(name="model")
def model_group() -> None:
    """Models declared in the language (docs/models.md)."""


model_group.command_class = ConventionsCommand  # records its reads for `-o`'s write gate, as every command


@model_group.command(name="import")
@click.argument("path")
@click.option(
    "-o",
    "--output",
    type=SafePath(dir_okay=False, path_type=Path),
    default=None,
    help="Write the block to this file (created or replaced) instead of standard output.",
)
@click.option("--name", default=None, help="The model's name in the block (default: from the repository's name).")
@click.option(
    "--repo",
    "hub_id",
    metavar="ORG/NAME",
    default=None,
    help="The Hugging Face repository the block names (default: the cache's, else config.json's "
    "_name_or_path, else the folder's absolute path, which only this machine has).",
)
def model_import(path: str, output: Path | None, name: str | None, hub_id: str | None) -> None:
    """Write the `model` block of a Hugging Face model from its own config.json (and
    model.safetensors.index.json for the exact size), each fact's source in a comment. Reads a
    folder or the local Hugging Face cache; never downloads. `-o` creates missing folders inside
    the current folder's project. Bad input exits 2."""
    from spark_dsl import model_import as importer
    from spark_dsl.project import project_root

    CurrentFile.path = path
    try:
        text = importer.import_model(path, name, hub_id=hub_id)
        if output is None:
            click.echo(text, nl=False)
        else:
            importer.write_block(output, text, project_root(Path.cwd() / "spark.toml"))
    except importer.ImportProblem as problem:
        usage(str(problem))
    except Exception as err:  # a bug becomes exit 3 with the path's name, never a traceback
        internal_failure(err)


@main.command()
@click.argument("paths", nargs=-1, callback=_default_paths)
@click.option(
    "-d", "--deployment", "names", multiple=True, shell_complete=completion.deployments, help="Only these deployments."
)
@_root_option
@_conventions
@_selection
@_deny
@click.option(
    "--format", "fmt", type=click.Choice(PLAN_FORMATS), default="text", show_default=True, help=PLAN_FORMAT_HELP
)
@click.option(
    "--node",
    type=click.IntRange(min=0),
    help="Only the launches of this node rank (0 is the first); --format shell needs it on a multi-node deployment.",
)
@click.option("--no-color", is_flag=True, help="Same as --color never.")
@click.option(
    "--verify-vllm",
    is_flag=True,
    help="Also parse every launch with the vLLM installed here (its own serve parser).",
)
@click.option(
    "--vllm-python",
    type=SafePath(dir_okay=False, path_type=Path),
    help="Interpreter with vLLM installed (default: $SPARK_VLLM_PYTHON, else the one `vllm` on PATH runs).",
)
def plan(
    paths: tuple[str, ...],
    names: tuple[str, ...],
    root: Path | None,
    fmt: str,
    node: int | None,
    no_color: bool,
    verify_vllm: bool,
    vllm_python: Path | None,
) -> None:
    """The resolved deployment: every setting in effect with its origin, capacity arithmetic, and the
    exact vLLM launches; or one node's commands as bash, or a Mermaid drawing."""
    from spark_dsl.render import plan_formats

    result = checked_run(paths, root)
    try:
        plans = result.plans
        if names:
            unknown = sorted(set(names) - {p.name for p in plans} - {d.name for d in result.deployments})
            if unknown:
                usage(f"no deployment named {', '.join(unknown)} in {', '.join(paths)}")
            plans = [p for p in plans if p.name in names]
        planned = result.planned(plans)
        try:
            planned = plan_formats.on_node(planned, node)
            if fmt in ("shell", "mermaid"):
                sys.stdout.write(plan_formats.shell(planned, node) if fmt == "shell" else plan_formats.draw(planned))
        except plan_formats.PlanUsageError as err:
            usage(str(err))
        except plan_formats.NothingToRun as err:
            emit_diagnostics(result, "text", no_color, sys.stderr)
            click.echo(f"spark: error: {err}", err=True)
            sys.exit(EXIT_ERRORS)
        if fmt in ("shell", "mermaid"):
            if result.diagnostics:  # stdout holds only the script or the drawing
                emit_diagnostics(result, "text", no_color, sys.stderr)
        elif fmt in ("sarif", "github"):
            emit_diagnostics(result, fmt, no_color)
        elif fmt == "json":
            from spark_dsl.render.json_format import diagnostics_document
            from spark_dsl.render.plan import render_json

            doc = diagnostics_document([s.name for s in result.files], result.diagnostics, result.sources)
            sys.stdout.write(render_json(planned, doc, result.sources))
        else:
            from spark_dsl.render.plan import render_text

            sys.stdout.write(render_text(planned, result.sources))
            if result.diagnostics:
                emit_diagnostics(result, "text", no_color)
        rejected = _verify_with_local_vllm(planned, vllm_python) if verify_vllm else 0
    except Exception as err:
        internal_failure(err)
    sys.exit(EXIT_ERRORS if rejected else exit_code(result, ()))


def _vllm_interpreter(explicit: Path | None) -> Path:
    """The Python that runs the user's `vllm`: explicit, $SPARK_VLLM_PYTHON, or `vllm`'s shebang."""
    import shutil

    if explicit is not None:
        return explicit
    if os.environ.get("SPARK_VLLM_PYTHON"):
        return Path(os.environ["SPARK_VLLM_PYTHON"])
    exe = shutil.which("vllm")
    if exe:
        first = Path(exe).read_bytes().split(b"\n", 1)[0].decode("utf-8", "replace")
        if first.startswith("#!") and "python" in first:
            return Path(first[2:].strip().split()[0])
    usage("--verify-vllm needs vLLM: pass --vllm-python, set SPARK_VLLM_PYTHON, or put `vllm` on PATH")


def _verify_with_local_vllm(plans: list[Any], vllm_python: Path | None) -> int:
    """Parses every launch with the user's vLLM; reports rejections on stderr, returns their count."""
    from spark_dsl.vllm_verify import VllmVerifyError, verify_with_vllm

    launches = [(p, launch) for p, each in plans for launch in each if launch.argv[:2] == ("vllm", "serve")]
    python = _vllm_interpreter(vllm_python)
    try:
        verdicts = verify_with_vllm([launch.argv for _, launch in launches], python=python, expect_version=None)
    except VllmVerifyError as err:
        usage(str(err))
    rejected = 0
    for (plan_, launch), verdict in zip(launches, verdicts, strict=True):
        if not verdict.ok:
            rejected += 1
            click.echo(
                f"error: the vLLM at {python} rejects the {launch.role} launch (node {launch.node_rank}) "
                f"of {plan_.name}: {verdict.error}",
                err=True,
            )
    click.echo(f"vLLM at {python}: {len(launches) - rejected} of {len(launches)} launches accepted", err=True)
    return rejected


def _build_scope(result: Any, paths: tuple[str, ...], root: Path) -> Any:
    """The specs this build speaks for: named, read, and read with errors (whose folders it keeps)."""
    from spark_dsl.diagnostics import Severity
    from spark_dsl.targets import writer

    failed = {d.location.file for d in result.diagnostics if d.severity is Severity.ERROR and d.location}
    # The loader keeps each file at its resolved path already (one it could not resolve, at the
    # path as named: it has its error): resolving 10,000 of them again made as many new paths.
    read = {name: s.path for name, s in result.sources.items()}
    return writer.Scope(
        root.resolve(),
        tuple(Path(p).resolve() for p in paths),
        read=frozenset(read.values()),
        unsure=frozenset(path for name, path in read.items() if name in failed),
    )


def _build_places(result: Any, paths: tuple[str, ...], out_dir: Path | None, root: Path | None) -> tuple[Path, Path]:
    """The output folder (`-o`, else the project's `output`) and the root the outputs' source
    paths are relative to (`--root`, else the project root of the first path)."""
    from spark_dsl.conventions import STDIN, configured_output, stdin_path

    if out_dir is None:
        configured = configured_output(result, paths)
        if isinstance(configured, str):
            usage(configured)
        out_dir = configured
    if root is None:
        first = stdin_path(paths) if paths[0] == STDIN else Path(paths[0])
        root = result.projects.of(first or Path(".")).root
    return out_dir, root


def _refuse_inputs_in(result: Any, out_dir: Path) -> None:
    """A usage error, before anything is written, when a folder this build may replace or remove
    holds a file the run read (`spark build specs -o . --take-over` would replace the folder
    holding the spec); and `--output-file` may not point into the output folder at all."""
    from contextlib import suppress

    from spark_dsl import write_gate
    from spark_dsl.conventions import current
    from spark_dsl.files import printable
    from spark_dsl.targets.manifest import ManifestError, read

    current().build_folder = out_dir
    names = {d.name for d in result.deployments}
    with suppress(ManifestError):  # the build reports an untrusted manifest itself
        names |= set(read(out_dir, lambda name: None).entries)
    inside = write_gate.inputs_inside(out_dir, names)
    if inside:
        usage(
            f"the output folder {printable(str(out_dir))} holds deployment folders with inputs of this run "
            f"({', '.join(inside[:3])}); a build replaces those folders: choose another -o"
        )


def _handed_over(result: Any) -> Iterator[Any]:
    """The run's plans one at a time, each dropped from the run, with its launches, when the next
    is asked for (the build has rendered it by then); the run's resolved deployments go first."""
    plans, result.plans, result.deployments = result.plans, [], []
    plans.reverse()  # popped from the end: each in order, none copied
    while plans:
        plan = plans.pop()
        yield plan
        result.launches.pop(plan, None)
        del plan


def _report_output_problems(problems: list[Any]) -> None:
    for problem in problems:
        click.echo(f"spark: error[{problem.code}]: {problem.message}\n  = help: {problem.help}", err=True)


@main.command()
@click.argument("paths", nargs=-1, callback=_default_paths)
@click.option(
    "-t",
    "--target",
    "targets",
    multiple=True,
    metavar="TARGET",
    shell_complete=completion.targets,
    help="Build exactly this target for every deployment (repeatable).",
)
@click.option(
    "-o",
    "--output",
    "out_dir",
    type=SafePath(path_type=Path),
    default=None,
    help="Folder that receives one folder per deployment "
    "(default: the project's `output` setting, else `build` in the current folder).",
)
@click.option("--check", is_flag=True, help="Write nothing; list every file a build would change (exit 1 if any).")
@click.option(
    "--diff",
    "show_diff",
    is_flag=True,
    help="Write nothing; print a unified diff of every output a build would change (implies --check).",
)
@click.option(
    "--take-over",
    is_flag=True,
    help="Replace or remove deployment folders spark did not write or that were edited by hand.",
)
@_common
def build(
    paths: tuple[str, ...],
    targets: tuple[str, ...],
    out_dir: Path | None,
    check: bool,
    show_diff: bool,
    take_over: bool,
    root: Path | None,
    fmt: str,
    deny: tuple[str, ...],
    no_color: bool,
) -> None:
    """Check, then write each deployment's targets to OUTPUT/<deployment>/.

    With --check (or --diff) nothing is written: every output that is missing, stale or would be
    removed is listed (as a diff with --diff, as an annotation with --format github) and the exit
    status is 1 if there is any."""
    from spark_dsl.targets.registry import kinds

    unknown = [t for t in targets if t not in kinds()]
    if unknown:
        usage(f"unknown target {unknown[0]!r}; targets are {', '.join(kinds())}")
    forced = tuple(dict.fromkeys(targets))
    result = checked_run(paths, root, forced_targets=forced)
    out_dir, root = _build_places(result, paths, out_dir, root)
    _refuse_inputs_in(result, out_dir)
    try:
        from spark_dsl.conventions import current
        from spark_dsl.targets.build import build as render_outputs

        # Deployments with errors, and those `-d` left out, keep whatever folders they had.
        failing = sorted(
            {d.name for d in result.deployments if result.deployment_has_errors(d.name)} | current().left_out
        )

        def render(each: Any = None) -> tuple[Any, Any]:
            """Every output (handed to `each` as it is rendered, if given); the scope once all are.

            Streaming, the run lets go of each plan, its launches and its resolved deployment once
            rendered (nothing after the build reads them), so a build's memory is its check's."""
            plans = _handed_over(result) if each is not None else result.plans
            outcome = render_outputs(plans, result.launches, result.deployment_has_errors, failing, forced, root, each)
            result.add_build_diagnostics(outcome.diagnostics)
            return outcome, _build_scope(result, paths, root)

        if check or show_diff:
            _build_dry(result, render, out_dir, paths, take_over, show_diff, fmt, no_color, deny)
        _build_write(result, render, out_dir, take_over, fmt, no_color)
    except Exception as err:  # a bug becomes exit 3 with the file's name, never a traceback
        internal_failure(err)
    sys.exit(exit_code(result, deny))


def _build_dry(
    result: Any,
    render: Any,
    out_dir: Path,
    paths: tuple[str, ...],
    take_over: bool,
    show_diff: bool,
    fmt: str,
    no_color: bool,
    deny: tuple[str, ...],
) -> NoReturn:
    """`spark build --check` / `--diff`: list what a build would change, write nothing, exit."""
    from spark_dsl.targets import stale, writer

    outcome, scope = render()
    try:
        changes, problems = writer.check(out_dir, outcome.outputs, outcome.held, scope, take_over)
    except writer.OutputError as err:
        changes, problems = [], err.problems
    emit_diagnostics(result, fmt, no_color, output_errors=len(problems), dry=True)
    # Text and GitHub output keep stdout for the log; JSON and SARIF keep it for their document.
    stream = sys.stdout if fmt in ("text", "github") else sys.stderr
    if fmt == "github":
        stream.write(stale.github(changes, stale.build_command(paths, out_dir)))
    if show_diff:
        stream.write(stale.diff(changes))
    elif fmt != "github":
        stream.writelines(f"would change {change}\n" for change in changes)
    _report_output_problems(problems)
    sys.exit(EXIT_ERRORS if changes or problems else exit_code(result, deny))


def _build_write(result: Any, render: Any, out_dir: Path, take_over: bool, fmt: str, no_color: bool) -> None:
    """Stage each deployment as it is rendered (only its names and hashes stay in memory), then
    swap the folders in; an output folder that stops the build is exit 1 with its problems."""
    from spark_dsl.conventions import current
    from spark_dsl.targets import writer

    rendered = False
    try:
        with writer.open_build(
            out_dir,
            take_over,
            on_wait=lambda: click.echo(f"spark: waiting for another build of {out_dir} to finish", err=True),
        ) as staging:
            outcome, scope = render(staging.stage)
            rendered = True
            report = staging.commit(outcome.held, scope)
    except writer.OutputError as err:
        if not rendered:  # the output folder stopped the build first: its diagnostics still count
            render()
        emit_diagnostics(result, fmt, no_color, output_errors=len(err.problems))
        _report_output_problems(err.problems)
        sys.exit(EXIT_ERRORS)
    emit_diagnostics(result, fmt, no_color)
    if not current().quiet and report:
        # One write for every line: a build of 1,000 deployments reports 1,000 (one echo each was 5 ms).
        click.echo("".join(f"spark: {line}\n" for line in report), err=True, nl=False)
