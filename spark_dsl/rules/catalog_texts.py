"""Catalog facts as the rules' explain texts name them: accelerator lists, checkpoints, thresholds
and model facts, each written from `catalog.load()` when a text is shown.

A rule whose `checks`, `basis` or title names such a fact passes a function that writes the text
(`@rule(checks=lambda: f"... {catalog_texts.unvalidated_gpus()} ...")`), never the fact itself:
adding an accelerator to accelerators.yaml then changes every text that lists accelerators, and
tests/test_catalog_texts.py adds a throwaway one to prove it (docs/dev/changes.md, "An accelerator").
"""

from __future__ import annotations

from collections.abc import Iterable

from spark_dsl import catalog


def number(n: float) -> str:
    """A number as the texts write it: `32,768`, `0.92`."""
    return f"{n:,}"


def spelled(names: Iterable[str], last: str = "and") -> str:
    """`A, B and C`."""
    items = list(names)
    return "".join(items) if len(items) < 2 else ", ".join(items[:-1]) + f" {last} " + items[-1]


def _gpus() -> list[catalog.Accelerator]:
    """The catalog's GPUs, in its order: every accelerator but vLLM's CPU backend."""
    return [a for a in catalog.load().accelerators.values() if not a.on_host]


def unvalidated_gpus() -> str:
    """`H100, H200, ...`: the GPUs the catalog knows and the recipe does not validate."""
    return ", ".join(a.id.upper() for a in _gpus() if not a.validated)


def generation(name: str) -> str:
    """An architecture as its vendor writes it: `Blackwell`, `CDNA4` (an acronym where it has a
    number)."""
    return name.upper() if any(c.isdigit() for c in name) else name.capitalize()


def validated_by_generation() -> str:
    """`NVIDIA Blackwell (B200, B300) and AMD CDNA4 (MI350X, MI355X)`: the validated accelerators,
    by vendor and architecture."""
    groups: dict[tuple[str, str], list[str]] = {}
    for a in catalog.load().validated_accelerators():
        groups.setdefault((a.vendor, a.generation), []).append(a.id.upper())
    return spelled(f"{vendor.upper()} {generation(gen)} ({', '.join(ids)})" for (vendor, gen), ids in groups.items())


def validated_on(vendor: str) -> str:
    """`MI350X/MI355X`: the accelerators the recipe validates of one vendor."""
    return "/".join(a.id.upper() for a in catalog.load().validated_accelerators() if a.vendor == vendor)


def fp4_generations() -> str:
    """`Blackwell`: the architectures with the FP4 (NVFP4) a `needs_fp4` checkpoint needs."""
    return spelled(dict.fromkeys(generation(a.generation) for a in _gpus() if a.fp4), "or")


def generations_with(capability: str) -> str:
    """`Hopper, Blackwell, CDNA3 and CDNA4`: the GPU architectures with `fp8` (or `fp4`), each
    once, in the catalog's order of first appearance."""
    return spelled(dict.fromkeys(generation(a.generation) for a in _gpus() if getattr(a, capability)))


def generations_without(*capabilities: str) -> str:
    """`Ampere, as the A100-80GB`: GPU architectures with none of the capabilities, each with its
    first accelerator as the example."""
    firsts: dict[str, str] = {}
    for a in _gpus():
        if not any(getattr(a, c) for c in capabilities):
            firsts.setdefault(generation(a.generation), a.id.upper())
    return spelled(f"{gen}, as the {first}" for gen, first in firsts.items())


def checkpoint(name: str) -> str:
    """A recipe checkpoint as the texts call it: `NVFP4`, `MXFP4`, `load-time BF16-to-MXFP4`
    (converted while loading). The names are the catalog's, so no format is spelled here."""
    ckpt = catalog.load().recipe_model().checkpoints[name]
    if ckpt.converts_from is not None:
        return f"load-time {ckpt.converts_from.upper()}-to-{ckpt.dtype.upper()}"
    return name.upper()


def validating_vendors() -> list[str]:
    """The vendors with validated accelerators, in the catalog's order (NVIDIA first)."""
    return list(dict.fromkeys(a.vendor for a in catalog.load().validated_accelerators()))


def validated_checkpoints(vendor: str) -> str:
    """`MXFP4, load-time BF16-to-MXFP4 and BF16`: what the recipe validates on a vendor."""
    return spelled(checkpoint(c) for c in catalog.load().validated_checkpoints(vendor))


def thresholds() -> catalog.Thresholds:
    return catalog.load().thresholds


def default_context() -> str:
    """`32,768`: the context above which AMD takes the long-context configuration."""
    return number(thresholds().default_context)


def model(model_id: str | None = None) -> catalog.Model:
    """A shipped model; the recipe's without an id."""
    cat = catalog.load()
    return cat.models[model_id] if model_id is not None else cat.recipe_model()


def latent_attention_models() -> str:
    """`DeepSeek-V3, Kimi K2 Instruct`: the shipped models with multi-head latent attention."""
    return ", ".join(m.display_name for m in catalog.load().models.values() if m.architecture.mla)


def size(gb: float) -> str:
    """`533 GB`, `1.64 TB`: a size as the recipe writes it."""
    return f"{gb / 1000:g} TB" if gb >= 1000 else f"{gb:g} GB"
