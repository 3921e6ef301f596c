"""The `spark` command and `python -m spark_dsl`: the command line, started with the collector resting.

Importing the command line (click, msgspec and spark's modules) makes tens of thousands of objects
that live as long as the process: modules, classes, functions, their code. The cyclic collector
ran some 28 passes over them while they were made, about 8 ms of a cold `spark check` of one spec,
and freed nothing. So it rests while they are made, and they are frozen (left out of every later
pass, each still freed when its last reference goes) before it resumes: every command, `spark lsp`
too, then runs with the collector on, as a library caller's does. benchmarks/README.md has the
numbers.

A plain `spark check PATH...` (`plain_check`), what a pre-commit hook and CI run, is run without
click: click's import and the command table were about an eighth of a cold check of one spec.
Every other invocation, and any with an option, is click's to parse (spark_dsl.cli).
"""

from __future__ import annotations

import gc
import os
import sys
from collections.abc import Mapping


def plain_check(argv: list[str], environ: Mapping[str, str]) -> tuple[str, ...] | None:
    """The paths of a `spark check` that click need not parse (as click would pass them to the
    command: none means `.`), or None when click must.

    Plain means `check` followed by paths only, none starting with `-` (an option, `--`, or `-`
    for standard input); on a system whose shell expands wildcards (click expands them itself on
    Windows); and no shell-completion request in the environment (click answers one, in
    `_SPARK_COMPLETE` or the variable its program name gives)."""
    if os.name == "nt" or not argv or argv[0] != "check":
        return None
    paths = argv[1:]
    if any(not path or path.startswith("-") for path in paths):  # an empty path is click's to refuse
        return None
    if any(name.startswith("_") and name.endswith("_COMPLETE") for name in environ):
        return None
    return tuple(paths) or (".",)


def main() -> None:
    paths = plain_check(sys.argv[1:], os.environ)
    gc.disable()
    try:
        if paths is None:
            from spark_dsl.cli import main as command
        else:
            from spark_dsl.check_command import check_plain
    finally:
        gc.freeze()
        gc.enable()
    if paths is None:
        command()
    else:
        check_plain(paths)


if __name__ == "__main__":
    main()
