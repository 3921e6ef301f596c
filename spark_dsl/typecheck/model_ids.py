"""`model = "org/name"`: a Hugging Face id names the model whose weights live there.

vLLM users think in Hub ids (`vllm serve Qwen/Qwen3-30B-A3B`). An id resolves to the shipped
model one of whose checkpoints has that repository, else to a model declared in scope
(`model NAME { checkpoint bf16 { repository = "..." } }`) that has it. The Hub matches ids
without regard to case, so this does too. The id names the model only: which of its
checkpoints is served is still `checkpoint`'s choice, as for `model = NAME`.

An id nothing here has gets SPK117 with the way to declare it: `spark model import` (which
reads the local Hugging Face cache) or a `model NAME { }` block written by hand.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Mapping
from functools import cache

from spark_dsl.syntax import ast


@cache
def shipped() -> dict[str, str]:
    """Every shipped checkpoint's repository, as its publisher spells it, -> its model's id."""
    from spark_dsl import catalog

    found: dict[str, str] = {}
    for model in catalog.load().models.values():
        for ckpt in model.checkpoints.values():
            found.setdefault(ckpt.repository, model.id)
    return found


@cache
def _shipped_lower() -> dict[str, str]:
    return {repo.lower(): model for repo, model in shipped().items()}


def declared(models: Iterable[tuple[str, ast.ModelDecl]]) -> dict[str, str]:
    """The repositories of declared models' checkpoints, as written, -> the model's name.

    Read from the syntax tree: a declaration is type-checked where it is written, and a
    repository that is not a plain string there is that check's to report."""
    found: dict[str, str] = {}
    for name, node in models:
        for entry in node.body.entries:
            if not (isinstance(entry, ast.Block) and entry.kind.name == "checkpoint"):
                continue
            for attr in entry.body.entries:
                if not (isinstance(attr, ast.Attribute) and attr.key.name == "repository"):
                    continue
                if isinstance(attr.value, ast.String):
                    found.setdefault(attr.value.value, name)
    return found


def resolve(word: str, repositories: Mapping[str, str]) -> str | None:
    """The model a Hub id names: a shipped one first (its facts are cited), then a declared one."""
    if "/" not in word:
        return None
    key = word.lower()
    return _shipped_lower().get(key) or next((m for r, m in repositories.items() if r.lower() == key), None)


def near_choices(word: str, choices: Iterable[str]) -> tuple[str, ...]:
    """The names a did-you-mean may offer for `word`: those with the same numbers in them.

    A model's numbers are its size and version: `llama-3-1-70b` is not a misspelt
    `llama-3-1-8b` but another model, and naming it would make every capacity number wrong."""
    numbers = re.findall(r"\d+", word)
    return tuple(c for c in choices if re.findall(r"\d+", c) == numbers)


def is_hub_id(word: str) -> bool:
    from spark_dsl.model_names import REPOSITORY

    return REPOSITORY.match(word) is not None


def import_help(word: str, file: str, models: tuple[str, ...]) -> str:
    """SPK117's help for a Hub id no model has: the import command and the line that uses it."""
    from spark_dsl.model_names import derived_name

    name = derived_name(word.rsplit("/", 1)[-1])
    # Imports are relative to the importing file's folder; `-o` is relative to where spark runs.
    folder = os.path.dirname(file) if not file.startswith("<") else ""
    output = os.path.join(folder, "models", f"{name}.spark")
    listing = _declared_listing(models)
    return (
        f"declare it: run `spark model import {word} -o {output}` (reads the local Hugging Face "
        f'cache), add `import "models/{name}.spark"` and write `model = {name}`; or write a '
        f"`model {name} {{ }}` block (docs/models.md){listing}"
    )


def unknown_help(listing: str, models: tuple[str, ...]) -> str:
    """SPK117's help for a name: the shipped models, the declared ones, and how to declare one."""
    return (
        f"the catalog ships {listing}{_declared_listing(models)}; for another model write a "
        "`model NAME { }` block, or generate it with `spark model import ORG/NAME` "
        "(docs/models.md); other weights of a shipped model are `runtime { model_path }`"
    )


def _declared_listing(models: tuple[str, ...]) -> str:
    if not models:
        return "; no model is declared in this file or its imports"
    return f"; declared here: {', '.join(f'`{m}`' for m in models)}"
