"""Decodes the catalog's YAML into its records, checks the references between the files, and
writes the snapshot the compiler loads.

Run `python -m spark_dsl.dev regen` (or `python -m spark_dsl.catalog.build`) after editing a
catalog file; a test fails while the committed snapshot is stale.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import msgspec

from spark_dsl.catalog import AcceleratorsFile, ModelsFile, Recipe, located, references

CATALOG_DIR = Path(__file__).resolve().parent
# Each file and the record it decodes into: its shape, written once (spark_dsl/catalog/__init__.py).
SOURCES: dict[str, type[msgspec.Struct]] = {"models": ModelsFile, "accelerators": AcceleratorsFile, "recipe": Recipe}
SNAPSHOT = CATALOG_DIR / "snapshot.json"


class CatalogError(Exception):
    """A catalog file that does not decode into its record, or names what is not there: by file,
    field and value."""


def load_sources() -> dict[str, Any]:
    """Read and check every catalog file; the merged document on success."""
    merged: dict[str, Any] = {}
    problems = [problem for name, shape in SOURCES.items() for problem in _decode(name, shape, merged)]
    if problems:
        raise CatalogError("\n".join(problems))
    _check_references(merged)
    return merged


def _decode(name: str, shape: type[msgspec.Struct], merged: dict[str, Any]) -> list[str]:
    """The problem with one file's shape (msgspec stops at the first), or else the strings its
    patterns refuse (all of them); its data is merged once it decodes."""
    import yaml

    path = CATALOG_DIR / f"{name}.yaml"
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as err:
        return [f"{path.name}: not valid YAML: {err}"]
    try:
        msgspec.convert(data, shape)
    except msgspec.ValidationError as err:
        return [f"{path.name}: {located.describe(err, data, shape)}"]
    refused = [f"{path.name}: {problem}" for problem in located.mismatches(data, shape)]
    merged.update(data)
    return refused


def _check_references(data: dict[str, Any]) -> None:
    """What the records cannot say: references between entries (`references`), every fact's
    source, and a model's architecture facts agreeing with each other."""
    problems = references.problems(data)
    problems += _check_sources(data)
    for model_id, model in data["models"].items():
        problems += [
            f"models.yaml: models.{model_id}.architecture: {p}" for p in architecture_problems(model["architecture"])
        ]
    if problems:
        raise CatalogError("\n".join(problems))


def architecture_problems(arch: dict[str, Any]) -> list[str]:
    """Facts of one architecture that contradict each other (a config read wrong, a typo)."""
    problems = []
    chunked = arch.get("chunked_attention_layers", 0)
    if arch["full_attention_layers"] + arch["sliding_window_layers"] + chunked != arch["layers"]:
        problems.append(
            f"full_attention_layers {arch['full_attention_layers']} + sliding_window_layers "
            f"{arch['sliding_window_layers']} + chunked_attention_layers {chunked} is not layers {arch['layers']}"
        )
    if (arch["sliding_window"] > 0) != (arch["sliding_window_layers"] > 0):
        problems.append("sliding_window and sliding_window_layers are set together or not at all")
    if (arch.get("attention_chunk_size", 0) > 0) != (chunked > 0):
        problems.append("attention_chunk_size and chunked_attention_layers are set together or not at all")
    if ("kv_lora_rank" in arch) != ("qk_rope_head_dim" in arch):
        problems.append("kv_lora_rank and qk_rope_head_dim (multi-head latent attention) are set together")
    if (arch["routed_experts"] > 0) != (arch["kind"] == "sparse-moe"):
        problems.append(f"kind {arch['kind']!r} with {arch['routed_experts']} routed experts")
    if arch["experts_per_token"] > arch["routed_experts"] or (arch["routed_experts"] > 0) != (
        arch["experts_per_token"] > 0
    ):
        problems.append(f"experts_per_token {arch['experts_per_token']} of {arch['routed_experts']} routed experts")
    if arch["query_heads"] % arch["kv_heads"]:
        problems.append(f"query_heads {arch['query_heads']} is not a multiple of kv_heads {arch['kv_heads']}")
    return problems


# The facts of an accelerator that need a source (its name, vendor and node shape are not claims
# about the hardware the checks lean on); the optional ones where given. A null `memory_gb` (the
# host's memory, vLLM's CPU backend) is no fact to cite.
ACCELERATOR_FACTS = ("memory_gb", "fp8", "fp4", "weight_formats", "speculative_decoding")


def accelerator_facts(acc: dict[str, Any]) -> list[str]:
    return [f for f in ACCELERATOR_FACTS if acc.get(f) is not None]


MODEL_FACTS = ("total_params_b", "active_params_b", "max_context", "modalities")
CHECKPOINT_FACTS = ("repository", "weights_gb", "dtype")


def model_facts(model: dict[str, Any]) -> list[str]:
    """The dotted paths of a model's facts: what its `sources` must cover."""
    facts = [f for f in MODEL_FACTS if f in model]
    facts += [f"architecture.{k}" for k in model["architecture"]]
    facts += [f"checkpoints.{c}.{k}" for c in model["checkpoints"] for k in CHECKPOINT_FACTS]
    # Whether the Hub gates a repository is a fact too, cited where it is stated (SPK516 reads it).
    facts += [f"checkpoints.{c}.gated" for c, ckpt in model["checkpoints"].items() if "gated" in ckpt]
    facts += [f"draft.{k}" for k in model.get("draft") or {}]
    return facts


def _covers(key: str, fact: str) -> bool:
    return fact == key or fact.startswith(key + ".")


def _source_problems(where: str, facts: list[str], sources: dict[str, str], required: bool) -> list[str]:
    """A fact without a source (when `required`), or a source for no fact (a misspelt key)."""
    problems = [
        f"{where}.sources.{key}: names no fact (the facts are {', '.join(facts)})"
        for key in sources
        if not any(_covers(key, fact) for fact in facts)
    ]
    if required:
        problems += [
            f"{where}: {fact} has no source: add `sources: {{{fact}: URL}}` (or a prefix of it)"
            for fact in facts
            if not any(_covers(key, fact) for key in sources)
        ]
    return problems


def _check_sources(data: dict[str, Any]) -> list[str]:
    """Every fact of a shipped model (but the recipe's own, which the recipe states) and of every
    accelerator has a source; every source names a fact."""
    problems = []
    for model_id, model in data["models"].items():
        required = model_id != data["model"]
        problems += _source_problems(
            f"models.yaml: models.{model_id}", model_facts(model), model.get("sources", {}), required
        )
    for acc_id, acc in data["accelerators"].items():
        problems += _source_problems(
            f"accelerators.yaml: accelerators.{acc_id}", accelerator_facts(acc), acc.get("sources", {}), True
        )
    return problems


def render_snapshot(data: dict[str, Any]) -> str:
    return json.dumps(data, indent=1, sort_keys=True) + "\n"


def main() -> int:
    try:
        data = load_sources()
    except CatalogError as err:
        print(f"catalog error:\n{err}", file=sys.stderr)
        return 1
    SNAPSHOT.write_text(render_snapshot(data), encoding="utf-8")
    print(f"wrote {SNAPSHOT.relative_to(CATALOG_DIR.parent.parent)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
