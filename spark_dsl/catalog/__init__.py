"""The recipe's knowledge as data: typed views over the pre-validated catalog snapshot.

The YAML files beside this module are the source; `build.py` validates them
against their JSON Schemas and writes `snapshot.json`, which is all the compiler
reads (the cold `check` path never imports PyYAML or jsonschema).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

SNAPSHOT = Path(__file__).resolve().parent / "snapshot.json"


@dataclass(frozen=True, slots=True)
class Accelerator:
    id: str
    vendor: str
    generation: str
    display_name: str
    memory_gb: float
    gpus_per_node: int
    validated: bool
    fp4: bool
    note: str | None = None


@dataclass(frozen=True, slots=True)
class Checkpoint:
    id: str
    repository: str
    weights_gb: float
    confirmed: bool
    converts_from: str | None = None


@dataclass(frozen=True, slots=True)
class Architecture:
    kind: str
    layers: int
    hidden_size: int
    query_heads: int
    kv_heads: int
    head_dim: int
    full_attention_layers: int
    sliding_window_layers: int
    sliding_window: int
    routed_experts: int
    experts_per_token: int


@dataclass(frozen=True, slots=True)
class DraftModel:
    name: str
    repository: str
    weights_gb: float
    num_speculative_tokens: int


@dataclass(frozen=True, slots=True)
class Model:
    id: str
    display_name: str
    total_params_b: float
    active_params_b: float
    architecture: Architecture
    max_context: int
    modalities: tuple[str, ...]
    checkpoints: dict[str, Checkpoint]
    draft: DraftModel


@dataclass(frozen=True, slots=True)
class Catalog:
    models: dict[str, Model]
    accelerators: dict[str, Accelerator]
    recipe: dict[str, Any]

    @property
    def vllm_version(self) -> str:
        return str(self.recipe["vllm_version"])

    def path_defaults(self, vendor: str) -> dict[str, Any]:
        return dict(self.recipe["paths"][vendor])

    @property
    def thresholds(self) -> dict[str, Any]:
        return dict(self.recipe["thresholds"])

    def image(self, vendor: str) -> str:
        return f"{self.recipe['images'][vendor]['repository']}:v{self.vllm_version}"


def _model(model_id: str, raw: dict[str, Any]) -> Model:
    return Model(
        id=model_id,
        display_name=raw["display_name"],
        total_params_b=raw["total_params_b"],
        active_params_b=raw["active_params_b"],
        architecture=Architecture(**raw["architecture"]),
        max_context=raw["max_context"],
        modalities=tuple(raw["modalities"]),
        checkpoints={k: Checkpoint(id=k, **v) for k, v in raw["checkpoints"].items()},
        draft=DraftModel(**raw["draft"]),
    )


@cache
def load() -> Catalog:
    """The catalog, read once per process from the committed snapshot."""
    data = json.loads(SNAPSHOT.read_text(encoding="utf-8"))
    return Catalog(
        models={k: _model(k, v) for k, v in data["models"].items()},
        accelerators={k: Accelerator(id=k, **v) for k, v in data["accelerators"].items()},
        recipe={k: v for k, v in data.items() if k not in ("models", "accelerators")},
    )


def __getattr__(name: str) -> Any:
    # `VLLM_VERSION` stays a module attribute for scripts, read from the one pin.
    if name == "VLLM_VERSION":
        return load().vllm_version
    raise AttributeError(name)
