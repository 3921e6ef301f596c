"""The abstract syntax tree: frozen records (msgspec Structs), every node carrying its source span."""

from __future__ import annotations

from msgspec import Struct

from spark_dsl.span import Span


class Ident(Struct, frozen=True):
    name: str
    span: Span


# ---- values ---------------------------------------------------------------


class Number(Struct, frozen=True):
    """A plain number: `value` is an int unless the literal has a decimal point."""

    text: str
    value: int | float
    span: Span


class Quantity(Struct, frozen=True):
    """A number with a unit suffix (`32K`, `64GiB`, `1h30m`), read by the key's type.

    `parts` holds (number text, unit) pairs: one for counts and sizes, several
    for chained durations.
    """

    text: str
    parts: tuple[tuple[str, str], ...]
    span: Span


class String(Struct, frozen=True):
    value: str
    span: Span


class Bool(Struct, frozen=True):
    value: bool
    span: Span


class Symbol(Struct, frozen=True):
    name: str
    span: Span


class ListValue(Struct, frozen=True):
    items: tuple[Value, ...]
    span: Span


class Arg(Struct, frozen=True):
    """A call argument; `name` is None for a positional one."""

    name: Ident | None
    value: Value
    span: Span


class Call(Struct, frozen=True):
    name: Ident
    args: tuple[Arg, ...]
    span: Span

    @property
    def positional(self) -> tuple[Value, ...]:
        return tuple(a.value for a in self.args if a.name is None)

    @property
    def named(self) -> dict[str, Arg]:
        return {a.name.name: a for a in self.args if a.name is not None}


class Combination(Struct, frozen=True):
    """Terms joined by `+` (`dp(2) + tp + ep`)."""

    terms: tuple[Value, ...]
    span: Span


Value = Number | Quantity | String | Bool | Symbol | ListValue | Call | Combination


# ---- bodies and statements --------------------------------------------------


class Attribute(Struct, frozen=True):
    """`key = value`; `key_quoted` is true for a quoted map key."""

    key: Ident
    value: Value
    span: Span
    key_quoted: bool = False


class Block(Struct, frozen=True):
    """`kind [label] { body }`."""

    kind: Ident
    label: Ident | None
    body: Body
    span: Span


class Body(Struct, frozen=True):
    entries: tuple[Attribute | Block, ...]
    span: Span


class Import(Struct, frozen=True):
    path: String
    span: Span


class Profile(Struct, frozen=True):
    name: Ident
    extends: tuple[Ident, ...]
    body: Body
    span: Span


class Deployment(Struct, frozen=True):
    name: Ident
    extends: tuple[Ident, ...]
    body: Body
    span: Span


class ModelDecl(Struct, frozen=True):
    """`model NAME { body }`: a model declared in the language (docs/models.md).

    `extends` is always empty (a model extends nothing); it is there so that code walking the
    named statements reads profiles, deployments and models alike."""

    name: Ident
    extends: tuple[Ident, ...]
    body: Body
    span: Span


Statement = Import | Profile | Deployment | ModelDecl


class Comment(Struct, frozen=True):
    """A `#` comment, kept for the formatter and for `# spark: ignore[...]`."""

    text: str
    span: Span


class Module(Struct, frozen=True):
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
