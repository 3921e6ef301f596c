"""The built-in targets' declarations, shipped as data so a check imports no renderer.

Each target module ends with its declaration, `TARGET = Target(...)`, the one place a target is
declared. A check reads only what the declarations say (kinds, files, settings, which targets span
nodes, which secrets pods read), but importing the 11 modules to get it also imported every
renderer and their helpers (shell quoting, YAML text, staging, launch ports): about 30 modules, a
fifth of a cold `spark check` of one spec's own imports. So the declarations are written out once,
when a target changes:

    python -m spark_dsl.targets.declared > spark_dsl/targets/declared.json

and the target table reads that file. A built-in's renderer stands in as a `ModuleRenderer`,
which imports its module on the first build that writes the target's file.
tests/targets/test_declared_table.py fails when the shipped file is not what the modules declare.
"""

from __future__ import annotations

import importlib
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import msgspec
from msgspec import Struct

from spark_dsl.schema import BlockSpec, KeySpec, Kind
from spark_dsl.targets.registry import TARGET_MODULES, Target
from spark_dsl.values import Volume

if TYPE_CHECKING:
    from spark_dsl.targets.common import Job

DECLARED_FILE = Path(__file__).with_name("declared.json")


class ModuleRenderer(Struct, frozen=True):
    """A built-in target's renderer: its module's declared one, imported on the first call."""

    module: str

    def __call__(self, job: Job) -> str:
        declared: Target = importlib.import_module(self.module).TARGET
        return declared.render(job)


class Declared(Struct, frozen=True, omit_defaults=True, forbid_unknown_fields=True):
    """One target as the file holds it: every field of its `Target` but the renderer, and its module.

    The fields are Target's; the test comparing the file with the modules fails when they part.
    """

    module: str
    kind: str
    file_name: str
    doc: str
    keys: tuple[KeySpec, ...] = ()
    blocks: tuple[BlockSpec, ...] = ()
    single_host: str = ""
    executable: bool = False
    client: bool = False
    pod_secrets: tuple[str, ...] = ()
    elsewhere: str = ""
    reads: tuple[str, ...] = ()


def load() -> tuple[Target, ...]:
    """The built-in targets, in TARGET_MODULES' order, from the shipped file (read again on each
    call: the target table keeps what it reads).

    The file is decoded to plain values and the records made here. msgspec's typed decoding
    builds its picture of every record type on first use, reading their annotations through
    `typing`: 1.5 ms of a cold check, 20 times the decoding itself. Every field goes to its
    record's constructor by name, so an unknown one still fails; and
    tests/targets/test_declared_table.py compares each target with its module's declaration,
    field by field, typed defaults included."""
    shipped = msgspec.json.decode(DECLARED_FILE.read_bytes())
    return tuple(_target(raw) for raw in shipped)


# Each takes the freshly decoded dict of its record and pops what needs converting; the rest
# goes to the constructor as it is.
def _target(fields: dict[str, Any]) -> Target:
    module = fields.pop("module")
    keys = tuple(_key(k) for k in fields.pop("keys", ()))
    blocks = tuple(_block(b) for b in fields.pop("blocks", ()))
    pod_secrets = tuple(fields.pop("pod_secrets", ()))
    reads = tuple(fields.pop("reads", ()))
    return Target(
        render=ModuleRenderer(module), keys=keys, blocks=blocks, pod_secrets=pod_secrets, reads=reads, **fields
    )


def _key(fields: dict[str, Any]) -> KeySpec:
    fallback = fields.pop("fallback", None)
    if isinstance(fallback, list):
        fallback = tuple(fallback)
    elif isinstance(fallback, dict):
        fallback = Volume(**fallback)
    kind = Kind(fields.pop("kind"))
    return KeySpec(kind=kind, symbols=tuple(fields.pop("symbols", ())), fallback=fallback, **fields)


def _block(fields: dict[str, Any]) -> BlockSpec:
    keys = {name: _key(k) for name, k in fields.pop("keys", {}).items()}
    blocks = {name: _block(b) for name, b in fields.pop("blocks", {}).items()}
    labels = fields.pop("labels", None)
    if labels is not None:
        labels = {name: _block(b) for name, b in labels.items()}
    map_of = fields.pop("map_of", None)
    return BlockSpec(keys=keys, blocks=blocks, labels=labels, map_of=None if map_of is None else Kind(map_of), **fields)


def generate() -> tuple[Declared, ...]:
    """The declarations as the target modules make them now (imports every renderer)."""
    declared = []
    for module in TARGET_MODULES:
        target = getattr(importlib.import_module(module), "TARGET", None)
        if not isinstance(target, Target):
            raise TypeError(f"{module} declares no `TARGET = Target(...)`")
        fields = {name: getattr(target, name) for name in Declared.__struct_fields__ if name != "module"}
        declared.append(Declared(module, **fields))
    return tuple(declared)


def render(declared: tuple[Declared, ...]) -> str:
    return msgspec.json.format(msgspec.json.encode(declared), indent=1).decode() + "\n"


if __name__ == "__main__":
    sys.stdout.write(render(generate()))
