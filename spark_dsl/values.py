"""Typed values of a checked spec: what the plan reads, each remembering its origin."""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache
from typing import Any

from msgspec import Struct, field

from spark_dsl.span import Span


class Origin(Struct, frozen=True):
    """Where a value was written: its file and span, and the profile that supplied it."""

    file: str
    span: Span
    key_span: Span
    profile: str | None = None

    def describe(self) -> str:
        return f"profile {self.profile}" if self.profile else "user"


# `parallel`'s terms, defined once: the checker reads them from a spec, the plan from the catalog.
PARALLEL_TERMS = ("tp", "pp", "ep", "dp")


class Parallel(Struct, frozen=True):
    """`tp`, `tp(N)`, `pp(N)`, `ep`, `dp(N)` combined, or `auto`.

    `tp` is None when the user wrote plain `tp` (TP = GPUs per node) or left
    it out entirely (`has_tp` tells which). `pp` is the pipeline stages, None
    when unwritten (one stage).
    """

    tp: int | None = None
    has_tp: bool = False
    ep: bool = False
    dp: int | None = None
    auto: bool = False
    pp: int | None = None

    @classmethod
    def of_terms(cls, terms: Mapping[str, int | None]) -> Parallel:
        """The one reading of `parallel`'s terms: each written term by name, with its count (None
        for a bare `tp` or `ep`). The checker calls it with the terms of a spec, `parse_parallel`
        with those of a spelling."""
        tp, dp, pp = terms.get("tp"), terms.get("dp"), terms.get("pp")
        return cls(tp=tp, has_tp="tp" in terms, ep="ep" in terms, dp=dp, pp=pp)

    def spelled(self) -> str:
        if self.auto:
            return "auto"
        terms = []
        if self.dp is not None:
            terms.append(f"dp({self.dp})")
        if self.has_tp:
            terms.append("tp" if self.tp is None else f"tp({self.tp})")
        if self.pp is not None:
            terms.append(f"pp({self.pp})")
        if self.ep:
            terms.append("ep")
        return " + ".join(terms)


@cache  # a few catalog spellings, asked for by several rules of every plan
def parse_parallel(text: str) -> Parallel:
    """A spelling of `parallel`, as the catalog writes it (`tp+ep`) or `Parallel.spelled` does
    (`dp(2) + tp(4) + ep`), or `auto`. The catalog's schema admits only known terms; another is a
    ValueError naming it."""
    if text.strip() == "auto":
        return Parallel(auto=True)
    terms: dict[str, int | None] = {}
    for term in text.replace(" ", "").split("+"):
        name, _, count = term.partition("(")
        if name not in PARALLEL_TERMS:
            raise ValueError(f"`{name}` in `{text}` is not a parallelism term ({', '.join(PARALLEL_TERMS)})")
        terms[name] = int(count.removesuffix(")")) if count else None
    return Parallel.of_terms(terms)


# The `speculative` key's modes, defined once: the checker accepts these (and `dspark(...)`).
SPECULATIVE_MODES = ("none", "dspark", "auto")


class Speculative(Struct, frozen=True):
    mode: str  # one of SPECULATIVE_MODES
    adaptive: bool = False
    tokens: int | None = None

    def spelled(self) -> str:
        if self.mode != "dspark" or not (self.adaptive or self.tokens):
            return self.mode
        args = (["adaptive"] if self.adaptive else []) + ([f"tokens = {self.tokens}"] if self.tokens else [])
        return f"dspark({', '.join(args)})"


class SecretRef(Struct, frozen=True):
    """`secret("name", key = "k")` or `env("NAME")`: resolved by the target at run time."""

    kind: str  # "secret" | "env"
    name: str
    key: str | None = None

    @property
    def env_name(self) -> str:
        """The environment variable a shell-like target reads it from."""
        return self.name if self.kind == "env" else self.name.upper().replace("-", "_")


class Volume(Struct, frozen=True):
    kind: str  # "pvc" | "hostpath" | "emptydir"
    name: str | None = None


def spelled(value: Any) -> str:
    """A typed value as a spec would spell it: `true`, `tp + ep`, `secret("x", key = "k")`, `pvc("c")`."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (Parallel, Speculative)):
        return value.spelled()
    if isinstance(value, SecretRef):
        key = f', key = "{value.key}"' if value.key else ""
        return f'{value.kind}("{value.name}"{key})'
    if isinstance(value, Volume):
        return value.kind if value.name is None else f'{value.kind}("{value.name}")'
    if isinstance(value, tuple):
        return "[" + ", ".join(spelled(v) for v in value) + "]"
    return str(value)


class Setting(Struct, frozen=True):
    value: Any
    origin: Origin


class TypedBody(Struct):
    """A checked body: settings by key, nested bodies by (kind, label)."""

    settings: dict[str, Setting] = field(default_factory=dict)
    blocks: dict[tuple[str, str | None], TypedBody] = field(default_factory=dict)
    origin: Origin | None = None
    # Keys whose value was rejected by the checker, so later stages stay quiet about them. Most
    # bodies have none: they share one empty set (a set of their own costs 216 bytes per body,
    # six bodies a spec), and `mark_invalid` gives a body its own.
    invalid: frozenset[str] | set[str] = frozenset()

    def mark_invalid(self, key: str) -> None:
        if not isinstance(self.invalid, set):
            self.invalid = set(self.invalid)
        self.invalid.add(key)

    def has_invalid(self) -> bool:
        """Whether any value in this body or a nested one was rejected by the checker."""
        if self.invalid:
            return True
        # A loop, not any(): a generator per body cost more than the walk.
        for block in self.blocks.values():  # noqa: SIM110
            if block.has_invalid():
                return True
        return False

    def get(self, key: str) -> Setting | None:
        return self.settings.get(key)

    def value(self, key: str, default: Any = None) -> Any:
        s = self.settings.get(key)
        return default if s is None else s.value

    def block(self, kind: str, label: str | None = None) -> TypedBody | None:
        return self.blocks.get((kind, label))

    def labelled(self, kind: str) -> dict[str, TypedBody]:
        return {lbl: b for (k, lbl), b in self.blocks.items() if k == kind and lbl is not None}

    def merged_with(self, later: TypedBody) -> TypedBody:
        """`later` on top of this body: attributes replace, blocks merge, lists replace."""
        out = TypedBody(dict(self.settings), dict(self.blocks), later.origin or self.origin)
        if self.invalid or later.invalid:
            out.invalid = (self.invalid - set(later.settings)) | later.invalid
        out.settings.update(later.settings)
        for key, block in later.blocks.items():
            mine = out.blocks.get(key)
            out.blocks[key] = block if mine is None else mine.merged_with(block)
        return out
