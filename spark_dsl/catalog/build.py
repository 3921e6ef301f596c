"""Validates the catalog's YAML against its JSON Schemas and writes the snapshot the compiler loads.

Run `python -m spark_dsl.catalog.build` after editing a catalog file; a test fails
while the committed snapshot is stale.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

CATALOG_DIR = Path(__file__).resolve().parent
SOURCES = ("models", "accelerators", "recipe")
SNAPSHOT = CATALOG_DIR / "snapshot.json"


class CatalogError(Exception):
    """A catalog file that does not match its schema, named by file and field."""


def load_sources() -> dict[str, Any]:
    """Read and validate every catalog file; the merged document on success."""
    import jsonschema
    import yaml

    merged: dict[str, Any] = {}
    problems: list[str] = []
    for name in SOURCES:
        path = CATALOG_DIR / f"{name}.yaml"
        schema = json.loads((CATALOG_DIR / "schema" / f"{name}.schema.json").read_text())
        try:
            data = yaml.safe_load(path.read_text(encoding="utf-8"))
        except yaml.YAMLError as err:
            problems.append(f"{path.name}: not valid YAML: {err}")
            continue
        validator = jsonschema.Draft202012Validator(schema)
        for problem in sorted(validator.iter_errors(data), key=lambda e: list(e.absolute_path)):
            field = ".".join(str(p) for p in problem.absolute_path) or "(top level)"
            problems.append(f"{path.name}: {field}: {problem.message}")
        if isinstance(data, dict):
            merged.update(data)
    if problems:
        raise CatalogError("\n".join(problems))
    _check_references(merged)
    return merged


def _check_references(data: dict[str, Any]) -> None:
    """Cross-file facts a schema cannot express."""
    problems = []
    for vendor, path in data["paths"].items():
        if path["checkpoint"] not in data["validated_checkpoints"][vendor]:
            problems.append(
                f"recipe.yaml: paths.{vendor}.checkpoint: {path['checkpoint']!r} is not "
                f"in validated_checkpoints.{vendor}"
            )
    # The recipe's checkpoint facts are its model's; other models carry their own checkpoints.
    model_id = data["model"]
    recipe_model = data["models"].get(model_id)
    if recipe_model is None:
        problems.append(f"recipe.yaml: model: {model_id!r} is not in models.yaml")
    else:
        for ckpt in data["workload_policy"]:
            if ckpt not in recipe_model["checkpoints"]:
                problems.append(f"recipe.yaml: workload_policy.{ckpt}: no such checkpoint in models.{model_id}")
        model_checkpoints = set(recipe_model["checkpoints"])
        if set(data["checkpoints"]) != model_checkpoints:
            problems.append(
                f"recipe.yaml: checkpoints: {data['checkpoints']} are not the models' {sorted(model_checkpoints)}"
            )
    problems += _check_sources(data)
    problems += _check_hosts(data)
    for model_id, model in data["models"].items():
        problems += [
            f"models.yaml: models.{model_id}.architecture: {p}" for p in architecture_problems(model["architecture"])
        ]
    backends = {b["name"]: b["vendors"] for b in data["attention_backends"]}
    for vendor, facts in data["vendors"].items():
        alt = data["accelerators"].get(facts["validated_alternative"])
        # A vendor the recipe validates no accelerator of (the CPU) suggests another vendor's.
        own = any(a["vendor"] == vendor and a["validated"] for a in data["accelerators"].values())
        if alt is None or (own and alt["vendor"] != vendor) or not alt["validated"]:
            problems.append(
                f"recipe.yaml: vendors.{vendor}.validated_alternative: {facts['validated_alternative']!r} "
                f"is not a validated {vendor + ' ' if own else ''}accelerator"
            )
        instead = facts["attention_instead"]
        if instead != "auto" and vendor not in backends.get(instead, ()):
            problems.append(f"recipe.yaml: vendors.{vendor}.attention_instead: {instead!r} is not a {vendor} backend")
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


def _check_hosts(data: dict[str, Any]) -> list[str]:
    """An accelerator whose memory is the host's (`memory_gb: null`) has no GPU for a runtime to
    reach: its vendor names no Kubernetes GPU resource, Apptainer flag or Compose device."""
    problems = []
    for acc_id, acc in data["accelerators"].items():
        runtime = data["vendors"][acc["vendor"]]["runtime"]
        gpu = any(runtime[k] is not None for k in runtime)
        if (acc["memory_gb"] is None) == gpu:
            problems.append(
                f"accelerators.yaml: accelerators.{acc_id}.memory_gb: "
                + ("null, but vendors." if gpu else "set, but vendors.")
                + f"{acc['vendor']}.runtime {'reaches' if gpu else 'names no'} GPUs"
            )
    return problems


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
