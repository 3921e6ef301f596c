"""Shell completion of values (click's `_SPARK_COMPLETE` protocol; docs/cli.md says how to enable it).

Every list is derived from its table: codes from the code registry, targets from the target
registry, models and accelerators from the catalog. Deployment names come from the specs in the
paths already on the command line (else the current folder), read cheaply: a line scan for
`deployment NAME`, no parse, at most `_MAX_FILES` files of at most `_MAX_BYTES` each, skipping the
folders a scan skips by default, so a keypress never waits on a large tree.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

_MAX_FILES = 500
_MAX_BYTES = 256 * 1024
_DEPLOYMENT = re.compile(r"^[ \t]*deployment[ \t]+([A-Za-z_][A-Za-z0-9_.-]*)", re.MULTILINE)


def _items(values: Any, incomplete: str) -> list[Any]:
    from click.shell_completion import CompletionItem

    return [CompletionItem(v) for v in values if v.startswith(incomplete)]


def codes(ctx: Any, param: Any, incomplete: str) -> list[Any]:
    """Codes for `--select`/`--ignore`/`--extend-select`, each with its title (no error for
    `--ignore`); after a comma, the next code of the list (`SPK301,SPK4` offers `SPK301,SPK401`,
    ...); a lowercase `spk` completes to the codes' capitals."""
    from click.shell_completion import CompletionItem

    from spark_dsl.codes import registry

    head, comma, last = incomplete.rpartition(",")
    wanted = last.upper()
    ignoring = param is not None and param.name == "ignore_codes"  # errors cannot be ignored
    return [
        CompletionItem(head + comma + code, help=doc.title)
        for code, doc in registry().items()
        if code.startswith(wanted) and not (ignoring and doc.severity == "error")
    ]


def topics(ctx: Any, param: Any, incomplete: str) -> list[Any]:
    """`spark explain`'s topic: a code, a model or an accelerator."""
    from spark_dsl.catalog import load

    catalog = load()
    return [*codes(ctx, param, incomplete), *_items([*catalog.models, *catalog.accelerators], incomplete)]


def models(ctx: Any, param: Any, incomplete: str) -> list[Any]:
    from spark_dsl.catalog import load

    return _items(list(load().models), incomplete)


def accelerators(ctx: Any, param: Any, incomplete: str) -> list[Any]:
    from spark_dsl.catalog import load

    return _items(list(load().accelerators), incomplete)


def targets(ctx: Any, param: Any, incomplete: str) -> list[Any]:
    from spark_dsl.targets.registry import kinds

    return _items(kinds(), incomplete)


def server_targets(ctx: Any, param: Any, incomplete: str) -> list[Any]:
    """The target kinds that serve a model (`spark init --target`), not the client jobs."""
    from spark_dsl.targets.registry import all_targets

    return _items([t.kind for t in all_targets() if not t.client], incomplete)


def deployments(ctx: Any, param: Any, incomplete: str) -> list[Any]:
    """The deployments declared in the specs of the paths given so far, else of the current folder."""
    named = [p for p in _typed_paths(ctx) if p and p != "-"] or ["."]
    found: dict[str, None] = {}
    for spec in _specs(named):
        try:
            with spec.open("rb") as handle:
                text = handle.read(_MAX_BYTES).decode("utf-8", "replace")
        except OSError:
            continue
        found.update(dict.fromkeys(_DEPLOYMENT.findall(text)))
    return _items(sorted(found), incomplete)


def _typed_paths(ctx: Any) -> list[str]:
    """The paths on the command line so far. Before an option still waiting for its value
    (`spark check a.spark -d <TAB>`), click's parse leaves them unparsed in `ctx.args`, and
    `paths` holds its default, `.`, which then stands for nothing typed."""
    parsed = list(ctx.params.get("paths") or ())
    if not ctx.args:
        return parsed
    return [*ctx.args, *(p for p in parsed if p != ".")]


def _specs(paths: list[str]) -> Iterator[Path]:
    """Up to `_MAX_FILES` `.spark` files under the paths, outside the folders a scan skips."""
    from spark_dsl.config import DEFAULT_EXCLUDE

    left = _MAX_FILES
    for raw in paths:
        path = Path(raw)
        if path.is_file():
            left -= 1
            yield path
            continue
        for folder, subfolders, names in os.walk(path):
            subfolders[:] = sorted(d for d in subfolders if d not in DEFAULT_EXCLUDE and not d.startswith("."))
            for name in sorted(names):
                if name.endswith(".spark"):
                    left -= 1
                    yield Path(folder, name)
                if left <= 0:
                    return
