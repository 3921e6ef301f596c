"""The data of a plan: resolved values with their origins, pools, capacity and launches."""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Literal, NamedTuple, get_args, overload

from msgspec import Struct, field
from msgspec.structs import force_setattr

# The catalog at module level: rules ask a plan for its vendor and thresholds some 25 times per
# plan, and an import statement inside those properties cost about a fifth of each.
from spark_dsl import catalog
from spark_dsl.plan.options import Option, rendered
from spark_dsl.plan.template import with_ranks
from spark_dsl.schema import deployment_schema
from spark_dsl.span import Location
from spark_dsl.values import Origin, SecretRef, Setting, TypedBody

if TYPE_CHECKING:
    from spark_dsl.catalog import Accelerator, Checkpoint, Model, Thresholds, Vendor
    from spark_dsl.loader import ResolvedDeployment
    from spark_dsl.schema import BlockSpec

RECIPE_DEFAULT = "recipe default"
# The settings plan/resolve.py gives every plan, on the recipe's paths and off them: `Plan.setting`
# types these as set, and a plan built without one fails where it is built, not where it is read.
AlwaysResolved = Literal[
    "model", "accelerator", "gpus", "nodes", "modalities", "parallel", "speculative", "kv_cache_dtype"
]
ALWAYS_RESOLVED: tuple[str, ...] = get_args(AlwaysResolved)


class Resolved(Struct, frozen=True):
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


DEFAULT = "default"


class Block(Struct, frozen=True):
    """A block of the spec as the plan hands it on: each key's value, written or defaulted.

    A key the spec leaves out takes its schema `fallback` (the one definition of each default),
    with the origin `default`; a block the spec leaves out has no body, and its defaults still
    apply. `setting` is only what the user (or a profile) wrote, with where.
    """

    spec: BlockSpec
    body: TypedBody | None = None

    @property
    def declared(self) -> bool:
        """Whether the spec (or one of its profiles) writes this block."""
        return self.body is not None

    def header(self, value: Any) -> Resolved | None:
        """The block itself as a written value to point at (None when the spec leaves it out)."""
        o = self.body.origin if self.body is not None else None
        return None if o is None else Resolved.written(value, o)

    def setting(self, key: str) -> Setting | None:
        """What the spec wrote for the key, with where (None when it leaves the key out)."""
        return None if self.body is None else self.body.settings.get(key)

    def resolved(self, key: str) -> Resolved | None:
        """The key's value with its origin: written, else the schema's default, else None."""
        s = self.setting(key)
        if s is not None:
            return Resolved.from_setting(s)
        fallback = self.spec.keys[key].fallback
        return None if fallback is None else Resolved(fallback, DEFAULT)

    def value(self, key: str) -> Any:
        s = self.setting(key)
        return self.spec.keys[key].fallback if s is None else s.value

    def block(self, kind: str, label: str | None = None) -> Block:
        nested = self.spec.blocks[kind]
        spec = nested.labels[label] if label is not None and nested.labels is not None else nested
        return Block(spec, None if self.body is None else self.body.blocks.get((kind, label)))

    def labelled(self, kind: str) -> dict[str, Block]:
        """The blocks written with a label (`target slurm { }`), by label, in written order."""
        labels = self.spec.blocks[kind].labels or {}
        if self.body is None:
            return {}
        return {
            label: Block(labels[label], body)
            for (k, label), body in self.body.blocks.items()
            if k == kind and label is not None and label in labels
        }

    def entries(self) -> Mapping[str, Setting]:
        """A map block's entries (`env { ... }`, `labels { ... }`) as written, in written order."""
        return {} if self.body is None else self.body.settings

    def mapping(self) -> dict[str, Any]:
        """A map block's values by key, in written order."""
        return {key: s.value for key, s in self.entries().items()}


class Pool(Struct, frozen=True):
    """A group of nodes running one vLLM configuration: the server, or a prefill/decode pool."""

    role: str
    nodes: int
    first_rank: int
    tp: int
    ep: bool
    dp: int | None
    parallel: Resolved
    nodes_setting: Resolved | None = None
    pp: int = 1  # pipeline stages: a replica spans `pp` nodes of `tp` GPUs each

    @property
    def replica_gpus(self) -> int:
        return self.tp * self.pp

    @property
    def dp_size(self) -> int:
        return self.dp or 1


class CapacityEstimate(Struct, frozen=True):
    """Weights, draft and KV cache of one replica (one tensor-parallel group) against its memory.

    The last four fields follow from the others and are computed when the estimate is made
    (`__post_init__`; any value passed for them is replaced): the capacity rules and the plan's
    printout read them some twenty times per plan, and as properties each reading did the
    arithmetic again (3% of a clean check)."""

    role: str
    replica_gpus: int
    memory_per_gpu_gb: float
    utilization: float
    weights_gb: float
    draft_gb: float
    # Bytes per token of the layers that keep every token (full attention, MLA), over the replica.
    kv_bytes_per_token: int
    # Bytes per token of the sliding-window layers, and the tokens vLLM reserves for each of them
    # per sequence (the window less one, plus the tokens in flight, plus a block: capacity.py).
    sliding_bytes_per_token: int
    sliding_tokens: int
    sequence_tokens: int
    # Bytes per token of the chunked-local-attention layers (Llama 4), and the tokens reserved for each.
    chunked_bytes_per_token: int = 0
    chunked_tokens: int = 0
    # What those layers keep per sequence without the tokens in flight: the in-flight tokens are
    # one batch's (or one per pipeline stage), held once however many sequences share the batch.
    sliding_steady_tokens: int = 0
    chunked_steady_tokens: int = 0
    memory_per_replica_gb: float = 0.0
    headroom_gb: float = 0.0
    sequence_bytes: int = 0
    sequences_fit: int = 0

    def __post_init__(self) -> None:
        memory = round(self.replica_gpus * self.memory_per_gpu_gb * self.utilization, 3)
        headroom = round(memory - self.weights_gb - self.draft_gb, 3)
        tokens = self.sequence_tokens
        # One sequence: what vLLM's startup check reserves (`max_memory_usage_bytes`). Each further
        # one: its full layers and its window or chunk, the in-flight tokens being held already.
        sequence = self.kv_bytes_per_token * tokens + self.windowed_bytes
        steady = (
            self.kv_bytes_per_token * tokens
            + self.sliding_bytes_per_token * self.sliding_steady_tokens
            + self.chunked_bytes_per_token * self.chunked_steady_tokens
        )
        room = headroom * 1e9
        fit = 0 if room < sequence or sequence <= 0 else 1 + int((room - sequence) // steady)
        force_setattr(self, "memory_per_replica_gb", memory)
        force_setattr(self, "headroom_gb", headroom)
        force_setattr(self, "sequence_bytes", sequence)
        force_setattr(self, "sequences_fit", fit)

    @property
    def windowed_bytes(self) -> int:
        """What one sequence's sliding-window and chunked layers hold, whatever its length."""
        return self.sliding_bytes_per_token * self.sliding_tokens + self.chunked_bytes_per_token * self.chunked_tokens

    @property
    def sequence_gb(self) -> float:
        return round(self.sequence_bytes / 1e9, 3)

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
            "sliding_kv_tokens": self.sliding_tokens,
            "chunked_kv_bytes_per_token": self.chunked_bytes_per_token,
            "chunked_kv_tokens": self.chunked_tokens,
            "sequence_tokens": self.sequence_tokens,
            "sequence_gb": self.sequence_gb,
            "sequences_fit": self.sequences_fit,
        }


class Launch(Struct, frozen=True):
    """One process a target runs: its role, node rank, exact argv and environment.

    The argv is data first: `command` is the words that start the process (`vllm serve MODEL`),
    `options` what the compiler decides, in order, and `extra_args` the user's `serve.extra_args`
    as given. `template` is the words of those three, the argv every node of the pool shares: the
    values that tell its nodes apart are rank placeholders (plan/template.py's RANKS), and `ranks`
    holds this node's values for them. `argv` is the template with those values in place, what
    runs on this node. `secrets` maps environment variables to the references they are read from
    at run time; they never enter `argv` or `env`.
    """

    role: str
    node_rank: int
    command: tuple[str, ...]
    env: tuple[tuple[str, str], ...]
    secrets: tuple[tuple[str, SecretRef], ...] = ()
    port: int | None = None
    api_server: bool = True
    ranks: tuple[tuple[str, str], ...] = ()
    options: tuple[Option, ...] = ()
    extra_args: tuple[str, ...] = ()
    # Derived from the fields above (whatever a caller passes is replaced), so comparing them
    # compares nothing new.
    template: tuple[str, ...] = ()
    argv: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        template = (*self.command, *rendered(self.options), *self.extra_args)
        force_setattr(self, "template", template)
        force_setattr(self, "argv", with_ranks(template, dict(self.ranks)) if self.ranks else template)

    def option(self, flag: str) -> str | bool | None:
        """The value the compiler gives `flag` on this node (its ranks in place), None without one."""
        value = next((option.value for option in self.options if option.flag == flag), None)
        if isinstance(value, str) and self.ranks:
            (value,) = with_ranks((value,), dict(self.ranks))
        return value

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


class Plan(Struct, frozen=True, eq=False):
    """A deployment resolved against the recipe: the complete, immutable hand-off to the rules, the
    launches, the targets and the renderers.

    The spec's blocks are its parts (`serve`, `runtime`, `weights`, `workload`, the declared
    `targets`): every key written or defaulted, each default defined once in the schema. Nothing
    after the plan reads the typed body; `deployment` stays to name the spec's file and syntax,
    which fixes edit and headers name. Plans compare by identity (the pipeline keys each one's
    launches by it).
    """

    name: str
    deployment: ResolvedDeployment
    path: str
    model: Model
    accelerator: Accelerator
    checkpoint: Checkpoint | None
    settings: Mapping[str, Resolved]
    spec: Block
    pools: tuple[Pool, ...] = ()
    disaggregated: bool = False
    capacity: tuple[CapacityEstimate, ...] = ()
    # The targets `spark build -t` builds for this run whether or not the spec declares them: the
    # rules about where a target runs (SPK505) hold for those too.
    forced_targets: tuple[str, ...] = ()
    # The parts already asked for: each is a pure function of `spec`, and the rules ask for the
    # same few dozens of times per plan (a memo, not state: nothing a reader sees changes).
    _memo: dict[Any, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        missing = [key for key in ALWAYS_RESOLVED if key not in self.settings]
        if missing:
            raise ValueError(f"plan {self.name!r} is built without {', '.join(missing)} (Plan.setting promises them)")

    def _part(self, kind: str, label: str | None = None) -> Block:
        part: Block | None = self._memo.get((kind, label))
        if part is None:
            part = self._memo[(kind, label)] = self.spec.block(kind, label)
        return part

    @property
    def serve(self) -> Block:
        return self._part("serve")

    @property
    def runtime(self) -> Block:
        return self._part("runtime")

    @property
    def weights(self) -> Block:
        return self._part("weights")

    @property
    def targets(self) -> Mapping[str, Block]:
        """The declared targets, by kind, in the order the spec writes them."""
        declared: Mapping[str, Block] | None = self._memo.get("targets")
        if declared is None:
            declared = self._memo["targets"] = MappingProxyType(self.spec.labelled("target"))
        return declared

    def builds(self, kind: str) -> bool:
        """Whether this run builds `target KIND`: the spec declares it or `-t` forces it."""
        return kind in self.targets or kind in self.forced_targets

    def target(self, kind: str) -> Block:
        """The `target KIND` block, or an empty one (so its defaults apply) when not declared."""
        return self.targets.get(kind) or self._part("target", kind)

    @overload
    def setting(self, key: AlwaysResolved) -> Resolved: ...
    @overload
    def setting(self, key: str) -> Resolved | None: ...
    def setting(self, key: str) -> Resolved | None:
        """The key's value with its origin; None where the plan sets no value, leaving it to vLLM.

        The one way to read a setting (docs/architecture.md, "Reading a setting"): it has no
        KeyError path. A key of ALWAYS_RESOLVED is typed as set (the plan is built with each);
        any other is `Resolved | None`, so mypy makes the reader say what an unset key means."""
        return self.settings.get(key)

    def value(self, key: str) -> Any:
        """The key's value; where the plan sets none, the schema's `fallback` for the key (the one
        definition of each default: `allow_unvalidated` is false), else None, vLLM's own choice."""
        s = self.settings.get(key)
        if s is not None:
            return s.value
        spec = deployment_schema().keys.get(key)
        return None if spec is None else spec.fallback

    @property
    def total_nodes(self) -> int:
        return sum(p.nodes for p in self.pools)

    @property
    def long_context(self) -> bool:
        limit = self.value("max_model_len")
        return limit is not None and limit > self.thresholds.default_context

    @property
    def thresholds(self) -> Thresholds:
        return catalog.load().thresholds

    @property
    def vendor(self) -> Vendor:
        """The catalog's facts for the accelerator's vendor (the recipe's path)."""
        return catalog.load().vendor(self.path)


class Planned(NamedTuple):
    """A plan and the processes its targets run: none when the plan's rules found errors."""

    plan: Plan
    launches: tuple[Launch, ...]
