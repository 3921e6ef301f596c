"""The `spark` command and `python -m spark_dsl`: the command line, started with the collector resting.

Importing the command line (click, msgspec and spark's modules) makes tens of thousands of objects
that live as long as the process: modules, classes, functions, their code. The cyclic collector
ran some 28 passes over them while they were made, about 8 ms of a cold `spark check` of one spec,
and freed nothing. So it rests while they are made, and they are frozen (left out of every later
pass, each still freed when its last reference goes) before it resumes: every command, `spark lsp`
too, then runs with the collector on, as a library caller's does. benchmarks/README.md has the
numbers.
"""

from __future__ import annotations

import gc


def main() -> None:
    gc.disable()
    try:
        from spark_dsl.cli import main as command
    finally:
        gc.freeze()
        gc.enable()
    command()


if __name__ == "__main__":
    main()
