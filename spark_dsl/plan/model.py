"""The data of a plan: resolved values with their origins, pools, capacity and launches."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from spark_dsl.span import Location
from spark_dsl.values import Origin, SecretRef, Setting

if TYPE_CHECKING:
    from spark_dsl.catalog import Accelerator, Checkpoint, Model, Thresholds, Vendor
    from spark_dsl.loader import ResolvedDeployment

RECIPE_DEFAULT = "recipe default"


@dataclass(frozen=True, slots=True)
class Resolved:
    """A value and why it has it: `user`, `profile NAME`, `recipe default`, `workload policy: ...`."""

    value: Any
    origin: str
    location: Location | None = None
    profile: str | None = None

    @classmethod
    def written(cls, value: Any, origin: Origin, key_span: bool = False) -> Resolved:
        """A value the user (or one of their profiles) wrote, located at its value or its key."""
        span = origin.key_span if key_span else origin.span
        return cls(value, origin.describe(), Location(origin.file, span), origin.profile)

    @classmethod
    def from_setting(cls, setting: Setting, key_span: bool = False) -> Resolved:
        return cls.written(setting.value, setting.origin, key_span)

    @property
    def explicit(self) -> bool:
        """The user's own choice (in the spec or one of its profiles), not a default."""
        return self.location is not None


@dataclass(frozen=True, slots=True)
class Pool:
    """A group of nodes running one vLLM configuration: the server, or a prefill/decode pool."""

    role: str
    nodes: int
    first_rank: int
    tp: int
    ep: bool
    dp: int | None
    parallel: Resolved
    nodes_setting: Resolved | None = None

    @property
    def replica_gpus(self) -> int:
        return self.tp

    @property
    def dp_size(self) -> int:
        return self.dp or 1


@dataclass(frozen=True, slots=True)
class CapacityEstimate:
    """Weights, draft and KV cache of one replica (one tensor-parallel group) against its memory."""

    role: str
    replica_gpus: int
    memory_per_gpu_gb: float
    utilization: float
    weights_gb: float
    draft_gb: float
    kv_bytes_per_token: int
    sliding_bytes_per_token: int
    sliding_window: int
    sequence_tokens: int

    @property
    def memory_per_replica_gb(self) -> float:
        return round(self.replica_gpus * self.memory_per_gpu_gb * self.utilization, 3)

    @property
    def headroom_gb(self) -> float:
        return round(self.memory_per_replica_gb - self.weights_gb - self.draft_gb, 3)

    @property
    def sequence_bytes(self) -> int:
        tokens = self.sequence_tokens
        return self.kv_bytes_per_token * tokens + self.sliding_bytes_per_token * min(tokens, self.sliding_window)

    @property
    def sequence_gb(self) -> float:
        return round(self.sequence_bytes / 1e9, 3)

    @property
    def sequences_fit(self) -> int:
        if self.headroom_gb <= 0:
            return 0
        return int(self.headroom_gb * 1e9 // self.sequence_bytes)

    def as_dict(self) -> dict[str, Any]:
        return {
            "role": self.role,
            "replica_gpus": self.replica_gpus,
            "weights_gb": self.weights_gb,
            "draft_gb": self.draft_gb,
            "memory_per_replica_gb": self.memory_per_replica_gb,
            "headroom_gb": self.headroom_gb,
            "kv_bytes_per_token": self.kv_bytes_per_token,
            "sliding_kv_bytes_per_token": self.sliding_bytes_per_token,
            "sequence_tokens": self.sequence_tokens,
            "sequence_gb": self.sequence_gb,
            "sequences_fit": self.sequences_fit,
        }


@dataclass(frozen=True, slots=True)
class Launch:
    """One process a target runs: its role, node rank, exact argv and environment.

    `secrets` maps environment variables to the references they are read from at
    run time; they never enter `argv` or `env`.
    """

    role: str
    node_rank: int
    argv: tuple[str, ...]
    env: tuple[tuple[str, str], ...]
    secrets: tuple[tuple[str, SecretRef], ...] = ()
    port: int | None = None
    api_server: bool = True

    def as_dict(self) -> dict[str, Any]:
        return {
            "role": self.role,
            "node_rank": self.node_rank,
            "argv": list(self.argv),
            "env": dict(self.env),
            "secret_env": {
                name: {ref.kind: ref.name, **({"key": ref.key} if ref.key else {})} for name, ref in self.secrets
            },
        }


@dataclass
class Plan:
    """A deployment resolved against the recipe."""

    name: str
    deployment: ResolvedDeployment
    path: str
    model: Model
    accelerator: Accelerator
    checkpoint: Checkpoint | None
    settings: dict[str, Resolved]
    pools: list[Pool] = field(default_factory=list)
    disaggregated: bool = False
    capacity: list[CapacityEstimate] = field(default_factory=list)
    launches: list[Launch] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def setting(self, key: str) -> Resolved:
        return self.settings[key]

    def value(self, key: str) -> Any:
        s = self.settings.get(key)
        return None if s is None else s.value

    @property
    def total_nodes(self) -> int:
        return sum(p.nodes for p in self.pools)

    @property
    def long_context(self) -> bool:
        limit = self.value("max_model_len")
        return limit is not None and limit > self.thresholds.default_context

    @property
    def thresholds(self) -> Thresholds:
        from spark_dsl import catalog

        return catalog.load().thresholds

    @property
    def vendor(self) -> Vendor:
        """The catalog's facts for the accelerator's vendor (the recipe's path)."""
        from spark_dsl import catalog

        return catalog.load().vendor(self.path)
