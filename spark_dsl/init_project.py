"""`spark init`: a project in the current folder, chosen by flags, never by prompts.

Writes `spark.toml` (the output folder), a first spec (`specs/NAME.spark`), a `.gitignore` for
what a build leaves in the output folder, a `.pre-commit-config.yaml` running spark's two hooks,
and a GitHub workflow (`.github/workflows/spark.yml`) running `spark check`, `spark fmt --check`
and `spark build --check`. The outputs are meant to be committed, as docs/ci.md says: the
workflow's `spark build --check` fails when they are not what the specs compile to. The
defaults are the catalog's example (its first model on its first validated accelerator) and
the first target of the target table, which check clean; a gated model gets a `hf_token`.

It never replaces a file: every file it would write that exists is listed in one usage error
and nothing is written, unless `--force`. A path that resolves out of the current folder (a
symbolic link) is refused even then. Each file is created with `O_EXCL` (or replaced in one
step with --force: files.replace_text), and its folders made by write_gate.make_folders.
"""

from __future__ import annotations

import os
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

from msgspec import Struct

from spark_dsl import files

# The build's output folder, committed and checked by the workflow (docs/ci.md keeps `targets`).
OUTPUT = "targets"
SPECS = "specs"
WORKFLOW = ".github/workflows/spark.yml"
# Where the workflow installs spark-dsl from: its repository at the tag of this version.
SOURCE = "https://github.com/spark-dsl/spark-dsl"


class InitUsageError(Exception):
    """A flag naming nothing the tables know, or files that exist: exit 2, nothing written."""


class Choice(Struct, frozen=True):
    model: str
    accelerator: str
    target: str


def choose(model: str | None, accelerator: str | None, target: str | None) -> Choice:
    """The flags checked against their tables (the catalog, the target table), defaults filled in."""
    from spark_dsl import catalog
    from spark_dsl.targets.registry import all_targets, either

    cat = catalog.load()
    default_accelerator, default_model, _ = cat.examples()
    servers = [t.kind for t in all_targets() if not t.client]
    for flag, value, known in (
        ("--model", model, list(cat.models)),
        ("--accelerator", accelerator, list(cat.accelerators)),
        ("--target", target, servers),
    ):
        if value is not None and value not in known:
            raise InitUsageError(f"{flag} {files.printable(value)!r} is none of {either(known)}")
    return Choice(model or default_model, accelerator or default_accelerator, target or servers[0])


def spec_text(choice: Choice) -> tuple[str, str]:
    """The first spec's name and text, in `spark fmt` layout."""
    from spark_dsl import catalog
    from spark_dsl.format import format_text

    name = f"{choice.model}-{choice.accelerator}"
    model = catalog.load().models[choice.model]
    gated = any(c.gated for c in model.checkpoints.values())
    token = (
        '\n  runtime {\n    hf_token = secret("hf-token")  # the Hub gates the weights (SPK516)\n  }\n' if gated else ""
    )
    text = (
        "# The first deployment `spark init` wrote: `spark explain KEY` says what a key does,\n"
        "# docs/language.md lists them all.\n"
        f"deployment {name} {{\n  model       = {choice.model}\n  accelerator = {choice.accelerator}\n"
        f"{token}\n  target {choice.target} {{}}\n}}\n"
    )
    formatted = format_text(text, "<init>")
    return name, formatted.text if formatted.text is not None else text


def _install_line() -> str:
    try:
        return f'pip install "spark-dsl @ git+{SOURCE}@v{version("spark-dsl")}"'
    except PackageNotFoundError:  # a checkout run without installing: the default branch
        return f'pip install "spark-dsl @ git+{SOURCE}"'


def workflow_text() -> str:
    return f"""# Checks the specs and that the committed outputs are what they compile to (docs/ci.md).
name: spark
on:
  push:
    branches: [main]
  pull_request:

permissions:
  contents: read

jobs:
  spark:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v5
      - uses: actions/setup-python@v6
        with:
          python-version: "3.11"
      - run: {_install_line()}
      - name: Check specs
        run: spark check --format github --deny warnings
      - name: Formatting
        run: spark fmt --check --diff {SPECS}
      - name: Outputs up to date
        run: spark build --check --diff --format github
"""


PRE_COMMIT = """# spark's hooks (docs/ci.md), run with the spark installed here.
repos:
  - repo: local
    hooks:
      - id: spark-check
        name: spark check
        entry: spark check
        language: system
        files: \\.spark$
        require_serial: true
      - id: spark-fmt
        name: spark fmt
        entry: spark fmt
        language: system
        files: \\.spark$
"""


def project_files(choice: Choice) -> dict[str, str]:
    """Every file `spark init` writes, by path relative to the project's folder."""
    name, spec = spec_text(choice)
    return {
        "spark.toml": f'# spark-dsl settings (docs/configuration.md).\noutput = "{OUTPUT}"\n',
        f"{SPECS}/{name}.spark": spec,
        ".gitignore": (
            "# What a build leaves in its output folder while it runs, or after a kill.\n"
            f"/{OUTPUT}/.spark-build.lock\n/{OUTPUT}/.spark-build-*\n"
            "# What `spark fmt` leaves if killed while it replaces a spec.\n.spark-fmt-*.tmp\n"
        ),
        ".pre-commit-config.yaml": PRE_COMMIT,
        WORKFLOW: workflow_text(),
    }


def init(folder: Path, choice: Choice, force: bool) -> list[str]:
    """Writes the project's files into `folder`; the paths written. InitUsageError, having written
    nothing, when a file exists (without `force`) or a path leaves the folder."""
    wanted = project_files(choice)
    root = Path(os.path.realpath(folder))
    leaving = [rel for rel in wanted if not _inside(root, folder / rel)]
    if leaving:
        raise InitUsageError(
            f"{', '.join(leaving)} would be written outside {files.display(folder)} (a symbolic link); "
            "nothing was written"
        )
    existing = [rel for rel in wanted if os.path.lexists(folder / rel)]
    if existing and not force:
        raise InitUsageError(
            f"{', '.join(existing)} already exist{'s' if len(existing) == 1 else ''}; nothing was written "
            "(pass --force to replace them)"
        )
    for rel, text in wanted.items():
        _write(folder / rel, text, root)
    return list(wanted)


def _inside(root: Path, path: Path) -> bool:
    """Whether `path`, its links and `..` followed as far as it exists, stays inside `root`."""
    real = Path(os.path.realpath(path))
    return real == root or real.is_relative_to(root)


def _write(path: Path, text: str, root: Path) -> None:
    from spark_dsl import write_gate

    refused = write_gate.refusal(path) or write_gate.make_folders(path, root)
    if refused is not None:
        raise InitUsageError(f"cannot write {files.display(path)}: {refused}")
    try:
        if os.path.lexists(path):
            files.replace_text(path, text)
            return
        with open(path, "x", encoding="utf-8") as out:
            out.write(text)
    except (OSError, ValueError) as err:
        problem = files.os_problem(err)
        raise InitUsageError(f"cannot write {files.display(path)}: {problem.reason}") from None
