"""The target table: every output `spark build` can write, each declared by its own module.

A target module (`targets/shell.py`, `compose.py`, ...) ends with its declaration, `TARGET =
Target(...)`: its kind, the file it writes, whether it spans nodes, its settings and its renderer.
All else that names targets reads this table: the schema's `target KIND { }` bodies (and through
them the type checker, the language server, `spark explain` and docs/keys.md), the build's
renderers, order and file modes, SPK501 and the build's help, and `spark build -t`'s check.

The built-in modules are listed here by name. A check needs their declarations, not their
renderers, so the table reads them from `declared.json`, written from the modules by
`spark_dsl.targets.declared` (which says why), and a built-in's module is imported by the first
build that renders it. The schema, low in the layers, reads the table, while a target module (and
the file's decoder) imports the schema above it; a static import would go in a circle, so that
module too is imported by name. As with ruff's code table, a new target is a new module and a
line here, then the file written again; nothing is found by scanning. `register` adds one from
outside (an extension, a test) after the built-ins.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Sequence
from functools import cache
from typing import TYPE_CHECKING

from msgspec import Struct

if TYPE_CHECKING:
    from spark_dsl.schema import BlockSpec, KeySpec
    from spark_dsl.targets.common import Job

# The built-in targets, in the order the build writes them and messages list them.
TARGET_MODULES = (
    "spark_dsl.targets.shell",
    "spark_dsl.targets.compose",
    "spark_dsl.targets.slurm",
    "spark_dsl.targets.kubernetes",
    "spark_dsl.targets.vllm_config",
    "spark_dsl.targets.smoke",
    "spark_dsl.targets.bench",
    "spark_dsl.targets.smoke_job",
    "spark_dsl.targets.bench_job",
    "spark_dsl.targets.bench_slurm",
    "spark_dsl.targets.smoke_slurm",
)


class Target(Struct, frozen=True):
    """One target, as its module declares it.

    `doc` says what the file is (the schema's text for `target KIND`: docs, hover, explain);
    `keys` and `blocks` are the settings its block takes. `single_host` says why the target
    describes one host, as SPK501 and the build word it ("Compose runs on one host"); a target
    without one spans nodes. `executable` files are written with mode 0755. A `client` target runs no
    launch: it calls the running deployment (the smoke check, the benchmark), so it fits a plan of
    any size and is never offered as the way to run one. `pod_secrets` are the secret settings
    (`block.key`) the target's Kubernetes pods read: a pod has no host environment, so SPK505
    refuses `env(...)` for each of them wherever the target is built (declared or `-t`).
    `elsewhere` says why its launches do not see the files of the machine that runs spark (a
    container, a pod, a cluster's nodes): SPK515 warns when such a target would serve a model
    from an absolute path of that machine. `reads` are the settings outside its own block
    (`block.key`, or `target.KIND.key` of another target's block) that its file reads other than
    through the vLLM launch, which every target but a client runs: the key reference derives its
    "used by" column from them (docs/keys.md), and tests/test_keys_reference.py builds with and
    without each key to prove it.
    """

    kind: str
    file_name: str
    doc: str
    render: Callable[[Job], str]
    keys: tuple[KeySpec, ...] = ()
    blocks: tuple[BlockSpec, ...] = ()
    single_host: str = ""
    executable: bool = False
    client: bool = False
    pod_secrets: tuple[str, ...] = ()
    elsewhere: str = ""
    reads: tuple[str, ...] = ()

    @property
    def spans_nodes(self) -> bool:
        return not self.single_host


class _Table:
    """The targets added by `register`, and a count of changes that derived values key on."""

    added: dict[str, Target] = {}  # noqa: RUF012 - the one table, changed only through register
    generation = 0


@cache
def _built_in() -> tuple[Target, ...]:
    # By name, as the target modules were: the shipped declarations decode the schema's KeySpec.
    shipped: tuple[Target, ...] = importlib.import_module("spark_dsl.targets.declared").load()
    return shipped


def all_targets() -> tuple[Target, ...]:
    """Every target: the built-ins in TARGET_MODULES' order, then the registered ones in turn."""
    return (*_built_in(), *_Table.added.values())


def generation() -> int:
    """Changes with every `register` and `unregister`: the schema is derived again when it does."""
    return _Table.generation


def kinds() -> tuple[str, ...]:
    return tuple(t.kind for t in all_targets())


def find(kind: str) -> Target | None:
    return next((t for t in all_targets() if t.kind == kind), None)


def multi_node_kinds() -> tuple[str, ...]:
    """The targets that can run a deployment over several nodes."""
    return tuple(t.kind for t in all_targets() if t.spans_nodes and not t.client)


def elsewhere_targets() -> tuple[Target, ...]:
    """The targets whose launches run where this machine's files are not (`Target.elsewhere`)."""
    return tuple(t for t in all_targets() if t.elsewhere and not t.client)


def single_host_targets() -> tuple[Target, ...]:
    return tuple(t for t in all_targets() if not t.spans_nodes)


def register(target: Target) -> None:
    """Adds a target after the built-ins (an extension's, a test's): its kind and file are new."""
    for known in all_targets():
        if target.kind == known.kind or target.file_name == known.file_name:
            raise ValueError(f"target `{target.kind}` ({target.file_name}) clashes with `{known.kind}`")
    _Table.added[target.kind] = target
    _Table.generation += 1


def unregister(kind: str) -> None:
    """Removes a target `register` added (the built-ins stay)."""
    del _Table.added[kind]
    _Table.generation += 1


def either(words: Sequence[str]) -> str:
    """`a`, `a or b`, `a, b or c`: the choices a message offers."""
    if not words:
        return ""
    return f"{', '.join(words[:-1])} or {words[-1]}" if len(words) > 1 else words[0]
