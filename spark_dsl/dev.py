"""Developer commands: `python -m spark_dsl.dev regen [--check]` runs every generator in order.

Each generated file follows from a table in the code (the grammar, the catalog, the target and
rule registries, the schema, the CLI, the committed specs), and a test fails when one is stale.
One command rewrites them all, in the order they depend on each other: the parse table and the
catalog snapshot first (everything reads them), then the shipped target declarations, the
reference pages, the committed `targets/`, and last the test snapshots. Each step runs in a
fresh interpreter, so a step reads what the steps before it wrote. `--check` writes nothing and
exits 1 naming every stale file; every staleness message in the tests points here.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

from msgspec import Struct

REPO = Path(__file__).resolve().parent.parent
COMMAND = "python -m spark_dsl.dev regen"


def snapshot_tests() -> list[str]:
    """The test files that own syrupy snapshot files (`__snapshots__/NAME.ambr` beside `NAME.py`, or
    a folder `__snapshots__/NAME/` of them, one a code), rewritten by running each whole (never
    with -k: syrupy would drop the others' entries)."""
    tests = REPO / "tests"
    owners = {ambr.parent.parent / f"{ambr.stem}.py" for ambr in tests.rglob("__snapshots__/*.ambr")}
    owners |= {ambr.parent.parent.parent / f"{ambr.parent.name}.py" for ambr in tests.rglob("__snapshots__/*/*.ambr")}
    return sorted(str(owner.relative_to(REPO)) for owner in owners)


class Step(Struct, frozen=True):
    """One generated file: its path in the repository, and its text from the current code."""

    name: str
    path: str
    render: Callable[[], str]


def _parse_table() -> str:
    from spark_dsl.syntax import table

    return table.render(table.generate())


def _catalog() -> str:
    from spark_dsl.catalog import build

    return build.render_snapshot(build.load_sources())


def _declared() -> str:
    from spark_dsl.targets import declared

    return declared.render(declared.generate())


def _keys() -> str:
    from spark_dsl import keys_reference

    return keys_reference.reference_markdown()


def _rules() -> str:
    from spark_dsl import codes

    return codes.reference_markdown()


def _page(module: str, path: str) -> Callable[[], str]:
    """A hand-written page with a generated part: the module's `render_page` rewrites that part."""

    def render() -> str:
        import importlib

        text = (REPO / path).read_text(encoding="utf-8")
        rendered = importlib.import_module(module)
        if module == "spark_dsl.cli_reference":
            from spark_dsl.cli import main

            return str(rendered.render_page(text, main))
        return str(rendered.render_page(text))

    return render


STEPS = (
    Step("parse-table", "spark_dsl/syntax/parse_table.json", _parse_table),
    Step("catalog", "spark_dsl/catalog/snapshot.json", _catalog),
    Step("declared", "spark_dsl/targets/declared.json", _declared),
    Step("keys", "docs/keys.md", _keys),
    Step("rules", "docs/rules.md", _rules),
    Step("cli", "docs/cli.md", _page("spark_dsl.cli_reference", "docs/cli.md")),
    Step("models", "docs/models.md", _page("spark_dsl.rules_scope_doc", "docs/models.md")),
    Step("surface", "docs/files-and-limits.md", _page("spark_dsl.surface_doc", "docs/files-and-limits.md")),
)


def stale_files() -> list[str]:
    """The generated files (and `targets/`) that differ from what the code generates now."""
    stale = [step.path for step in STEPS if (REPO / step.path).read_text(encoding="utf-8") != step.render()]
    built = _spark_build("--check")
    if built.returncode != 0:
        stale.append("targets/")
    return stale


def _spark_build(*extra: str) -> subprocess.CompletedProcess[str]:
    argv = [sys.executable, "-m", "spark_dsl", "build", "specs", "-o", "targets", *extra]
    return subprocess.run(argv, cwd=REPO, capture_output=True, text=True, check=False)


def write_step(name: str) -> None:
    (step,) = [s for s in STEPS if s.name == name]
    (REPO / step.path).write_text(step.render(), encoding="utf-8")


def regen(snapshots: bool) -> int:
    for step in STEPS:
        # A fresh interpreter per step: the catalog and registries are read once per process.
        subprocess.run([sys.executable, "-m", "spark_dsl.dev", "write", step.name], cwd=REPO, check=True)
        print(f"regen: {step.path}")
    built = _spark_build()
    if built.returncode != 0:
        sys.stderr.write(built.stdout + built.stderr)
        return 1
    print("regen: targets/")
    if snapshots:
        argv = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--snapshot-update", *snapshot_tests()]
        if subprocess.run(argv, cwd=REPO, check=False).returncode != 0:
            return 1
        print("regen: test snapshots")
    return 0


def main(argv: list[str]) -> int:
    if argv[:1] == ["write"] and len(argv) == 2:
        write_step(argv[1])
        return 0
    if argv[:1] != ["regen"] or not set(argv[1:]) <= {"--check", "--no-snapshots"}:
        print(f"usage: {COMMAND} [--check] [--no-snapshots]", file=sys.stderr)
        return 2
    if "--check" in argv:
        stale = stale_files()
        for path in stale:
            print(f"stale: {path}")
        if stale:
            print(f"run `{COMMAND}` and review the diff", file=sys.stderr)
        return 1 if stale else 0
    return regen(snapshots="--no-snapshots" not in argv)


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
