"""The abstract syntax tree: frozen dataclasses, every node carrying its source span."""

from __future__ import annotations

from dataclasses import dataclass

from spark_dsl.span import Span


@dataclass(frozen=True, slots=True, init=False)
class Ident:
    name: str
    span: Span

    # Written out through the slots' descriptors, as Span's is (spark_dsl/span.py): every name
    # of a spec is one, the most made node of a parse.
    def __init__(self, name: str, span: Span) -> None:
        _set_name(self, name)
        _set_span(self, span)


_set_name = Ident.__dict__["name"].__set__
_set_span = Ident.__dict__["span"].__set__


# ---- values ---------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Number:
    """A plain number: `value` is an int unless the literal has a decimal point."""

    text: str
    value: int | float
    span: Span


@dataclass(frozen=True, slots=True)
class Quantity:
    """A number with a unit suffix (`32K`, `64GiB`, `1h30m`), read by the key's type.

    `parts` holds (number text, unit) pairs: one for counts and sizes, several
    for chained durations.
    """

    text: str
    parts: tuple[tuple[str, str], ...]
    span: Span


@dataclass(frozen=True, slots=True)
class String:
    value: str
    span: Span


@dataclass(frozen=True, slots=True)
class Bool:
    value: bool
    span: Span


@dataclass(frozen=True, slots=True)
class Symbol:
    name: str
    span: Span


@dataclass(frozen=True, slots=True)
class ListValue:
    items: tuple[Value, ...]
    span: Span


@dataclass(frozen=True, slots=True)
class Arg:
    """A call argument; `name` is None for a positional one."""

    name: Ident | None
    value: Value
    span: Span


@dataclass(frozen=True, slots=True)
class Call:
    name: Ident
    args: tuple[Arg, ...]
    span: Span

    @property
    def positional(self) -> tuple[Value, ...]:
        return tuple(a.value for a in self.args if a.name is None)

    @property
    def named(self) -> dict[str, Arg]:
        return {a.name.name: a for a in self.args if a.name is not None}


@dataclass(frozen=True, slots=True)
class Combination:
    """Terms joined by `+` (`dp(2) + tp + ep`)."""

    terms: tuple[Value, ...]
    span: Span


Value = Number | Quantity | String | Bool | Symbol | ListValue | Call | Combination


# ---- bodies and statements --------------------------------------------------


@dataclass(frozen=True, slots=True)
class Attribute:
    """`key = value`; `key_quoted` is true for a quoted map key."""

    key: Ident
    value: Value
    span: Span
    key_quoted: bool = False


@dataclass(frozen=True, slots=True)
class Block:
    """`kind [label] { body }`."""

    kind: Ident
    label: Ident | None
    body: Body
    span: Span


@dataclass(frozen=True, slots=True)
class Body:
    entries: tuple[Attribute | Block, ...]
    span: Span


@dataclass(frozen=True, slots=True)
class Import:
    path: String
    span: Span


@dataclass(frozen=True, slots=True)
class Profile:
    name: Ident
    extends: tuple[Ident, ...]
    body: Body
    span: Span


@dataclass(frozen=True, slots=True)
class Deployment:
    name: Ident
    extends: tuple[Ident, ...]
    body: Body
    span: Span


@dataclass(frozen=True, slots=True)
class ModelDecl:
    """`model NAME { body }`: a model declared in the language (docs/models.md).

    `extends` is always empty (a model extends nothing); it is there so that code walking the
    named statements reads profiles, deployments and models alike."""

    name: Ident
    extends: tuple[Ident, ...]
    body: Body
    span: Span


Statement = Import | Profile | Deployment | ModelDecl


@dataclass(frozen=True, slots=True)
class Comment:
    """A `#` comment, kept for the formatter and for `# spark: ignore[...]`."""

    text: str
    span: Span


@dataclass(frozen=True, slots=True)
class Module:
    """One parsed file."""

    statements: tuple[Statement, ...]
    comments: tuple[Comment, ...]
    span: Span

    @property
    def imports(self) -> tuple[Import, ...]:
        return tuple(s for s in self.statements if isinstance(s, Import))

    @property
    def profiles(self) -> tuple[Profile, ...]:
        return tuple(s for s in self.statements if isinstance(s, Profile))

    @property
    def deployments(self) -> tuple[Deployment, ...]:
        return tuple(s for s in self.statements if isinstance(s, Deployment))

    @property
    def models(self) -> tuple[ModelDecl, ...]:
        return tuple(s for s in self.statements if isinstance(s, ModelDecl))
