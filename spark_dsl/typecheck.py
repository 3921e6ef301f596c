"""Checks a body against the schema table: keys, types, units and symbols (SPK1xx), into typed values."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from spark_dsl.diagnostics import DiagnosticSink, Fix, Note, replacement
from spark_dsl.schema import BlockSpec, KeySpec, Kind
from spark_dsl.span import Location, Span
from spark_dsl.string_checks import Problem, content
from spark_dsl.string_checks import setting as setting_problem
from spark_dsl.syntax import ast
from spark_dsl.units import UnitError, accepted_suffixes, read_quantity
from spark_dsl.values import (
    SPECULATIVE_MODES,
    Origin,
    Parallel,
    SecretRef,
    Setting,
    Speculative,
    TypedBody,
    Volume,
)

# Used with fullmatch: `$` would also accept a trailing newline (`secret("hf-token\n")`).
ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# A Secret's name is also, upper-cased with `_` for `-`, the variable a host target reads it from.
SECRET_NAME = re.compile(r"[a-z]([a-z0-9-]*[a-z0-9])?")
# The keys Kubernetes accepts in a Secret (`[-._a-zA-Z0-9]+`, at most 253): inert in every target.
SECRET_KEY = re.compile(r"[-._a-zA-Z0-9]+")


def secret_name(name: str) -> str | None:
    """The nearest Secret name: lowercase, other characters to `-`, starting with a letter."""
    cleaned = re.sub(r"[^a-z0-9-]+", "-", name.lower()).lstrip("-0123456789")[:63].strip("-")
    return cleaned or None


def env_name(name: str) -> str | None:
    """The nearest environment variable name: other characters to `_`, no leading digit."""
    cleaned = re.sub(r"[^A-Za-z0-9_]+", "_", name).lstrip("0123456789").strip("_")
    return cleaned or None


def kubernetes_secret_key(key: str) -> str | None:
    """The nearest key a Secret holds: other characters to `-`."""
    cleaned = re.sub(r"[^-._a-zA-Z0-9]+", "-", key).strip("-")[:253]
    return cleaned or None


# The largest integer a float (and a JSON reader) holds exactly: every integer setting stays at
# or below it, so the plan's float arithmetic can neither overflow nor round a value.
MAX_INTEGER = 2**53


def did_you_mean(word: str, choices: list[str] | tuple[str, ...]) -> str | None:
    # A word that differs only in case is that word (`B200` is `b200`, never the nearer-looking `h200`).
    lowered = {c.lower(): c for c in choices}
    if word.lower() in lowered:
        return lowered[word.lower()]
    # difflib is imported only when a name is wrong: clean files never pay for it.
    from difflib import get_close_matches

    close = get_close_matches(word, list(choices), n=1, cutoff=0.6)
    return close[0] if close else None


def describe(value: ast.Value) -> str:
    """How a value reads in a message: its kind and its text."""
    match value:
        case ast.Number():
            return f"number `{value.text}`"
        case ast.Quantity():
            return f"quantity `{value.text}`"
        case ast.String():
            return f'string "{value.value}"'
        case ast.Bool():
            return f"boolean `{str(value.value).lower()}`"
        case ast.Symbol():
            return f"`{value.name}`"
        case ast.ListValue():
            return "a list"
        case ast.Call():
            return f"`{value.name.name}(...)`"
        case ast.Combination():
            return "a combination with `+`"
    return "a value"  # pragma: no cover


class _Invalid(Exception):
    """Raised inside value readers once their diagnostic is reported."""


@dataclass
class BodyChecker:
    """Checks one body (of a deployment or a profile) in one file."""

    file: str
    sink: DiagnosticSink
    profile: str | None = None
    deployment: str | None = None
    # The file's text, for fixes that remove a whole line.
    text: str = ""
    # The setting being read, for a fix that removes it.
    _entry: Span | None = None

    # ---- reporting --------------------------------------------------------

    def error(self, code: str, message: str, span: Span, **extra: Any) -> None:
        self.sink.error(code, message, self.file, span, deployment=self.deployment, **extra)
        raise _Invalid

    def _report(self, problem: Problem | None, span: Span) -> None:
        """A string's problem at `span`, with its fix: the string rewritten, or the setting removed."""
        if problem is None:
            return
        fixes: tuple[Fix, ...] = ()
        if problem.replacement is not None:
            from spark_dsl.format.values import quote

            fixes = (replacement(f"write {quote(problem.replacement)}", self.file, span, quote(problem.replacement)),)
        elif problem.remove and self._entry is not None:
            fixes = (self._removal("remove the setting", self._entry),)
        self.error(problem.code, problem.message, span, help=problem.help, fixes=fixes)

    def _suggest(
        self,
        code: str,
        message: str,
        span: Span,
        word: str,
        choices: tuple[str, ...] | list[str],
        help_text: str,
        quote: str = "",
        otherwise: Fix | None = None,
        close_help: str = "",
    ) -> None:
        """An unknown word: a did-you-mean with its replacement (safe when only the case differs),
        else the `otherwise` fix when the caller has one. `close_help`, with `{close}` for the near
        spelling, replaces `help_text` when there is one (a long list would bury it)."""
        close = did_you_mean(word, choices)
        fixes: tuple[Fix, ...] = (otherwise,) if otherwise is not None else ()
        if close is not None:
            message += f"; did you mean `{close}`?"
            if close_help:
                help_text = close_help.replace("{close}", close)
            same = close.lower() == word.lower()
            fixes = (replacement(f"replace with `{close}`", self.file, span, f"{quote}{close}{quote}", safe=same),)
        self.error(code, message, span, help=help_text, fixes=fixes)

    def _removal(self, message: str, span: Span) -> Fix:
        """The unsafe fix that removes a whole setting or block."""
        from spark_dsl.edits import removal_span

        return replacement(message, self.file, removal_span(self.text, span), "")

    def _value(self, message: str, value: ast.Value, text: str, safe: bool = False) -> Fix:
        return replacement(message, self.file, value.span, text, safe=safe)

    # ---- bodies -------------------------------------------------------------

    def check(self, body: ast.Body, spec: BlockSpec, header: Span | None = None) -> TypedBody:
        out = TypedBody(origin=Origin(self.file, header or body.span, header or body.span, self.profile))
        seen: dict[tuple[bool, str, str | None], Span] = {}
        for entry in body.entries:
            label = entry.label.name if isinstance(entry, ast.Block) and entry.label else None
            name = entry.key.name if isinstance(entry, ast.Attribute) else entry.kind.name
            ident = entry.key if isinstance(entry, ast.Attribute) else entry.kind
            slot = (isinstance(entry, ast.Block), name, label)
            if slot in seen:
                shown = f"{name} {label}" if label else name
                self.sink.error(
                    "SPK106",
                    f"duplicate `{shown}` in this body",
                    self.file,
                    ident.span,
                    deployment=self.deployment,
                    label="set again here",
                    help=f"keep one `{shown}`; a key may appear once per body",
                    notes=(Note("first set here", Location(self.file, seen[slot])),),
                    fixes=(self._removal(f"remove this `{shown}`", entry.span),),
                )
                continue
            seen[slot] = ident.span
            try:
                if spec.map_of is not None:
                    self._map_entry(entry, spec, out)
                elif isinstance(entry, ast.Attribute):
                    self._attribute(entry, spec, out)
                else:
                    self._block(entry, spec, out)
            except _Invalid:
                out.mark_invalid(name)
        return out

    def _unknown(self, ident: ast.Ident, spec: BlockSpec, what: str, entry: Span) -> None:
        choices = [*spec.keys, *spec.blocks]
        where = f"a {spec.name} body" if spec.name != "deployment" else "a deployment"
        listing = ", ".join(f"`{c}`" for c in choices) or "nothing"
        self._suggest(
            "SPK101",
            f"unknown {what} `{ident.name}` in {where}",
            ident.span,
            ident.name,
            choices,
            f"{where} takes {listing}, or remove it",
            otherwise=self._removal(f"remove `{ident.name}`", entry),
            close_help="write `{close}`, or remove it",
        )

    def _attribute(self, attr: ast.Attribute, spec: BlockSpec, out: TypedBody) -> None:
        key = spec.keys.get(attr.key.name)
        if key is None:
            if attr.key.name in spec.blocks or attr.key.name == "target":
                self.error(
                    "SPK102",
                    f"`{attr.key.name}` is a block, not an attribute",
                    attr.key.span,
                    help=f"write `{attr.key.name} {{ ... }}`, or remove this line",
                    fixes=(self._removal(f"remove `{attr.key.name} = ...`", attr.span),),
                )
            self._unknown(attr.key, spec, "key", attr.span)
            return
        self._entry = attr.span
        try:
            value = self.read_value(key, attr.value)
        finally:
            self._entry = None
        origin = Origin(self.file, attr.value.span, attr.key.span, self.profile)
        out.settings[key.name] = Setting(value, origin)

    def _block(self, block: ast.Block, spec: BlockSpec, out: TypedBody) -> None:
        kind = block.kind.name
        inner = spec.blocks.get(kind)
        if inner is None:
            if kind in spec.keys:
                self.error(
                    "SPK102",
                    f"`{kind}` is an attribute, not a block",
                    block.kind.span,
                    help=f"write `{kind} = value`, or remove this block",
                    fixes=(self._removal(f"remove `{kind} {{ ... }}`", block.span),),
                )
            self._unknown(block.kind, spec, "block", block.span)
            return
        label = block.label.name if block.label else None
        if inner.labels is not None:
            if block.label is None:
                kinds = ", ".join(inner.labels)
                first = next(iter(inner.labels))
                at = Span(block.kind.span.end, block.kind.span.end)
                self.error(
                    "SPK110",
                    f"`{kind}` needs a label naming what to build",
                    block.kind.span,
                    help=f"write `{kind} KIND {{ ... }}` with KIND one of {kinds}",
                    fixes=(replacement(f"write `{kind} {first}`", self.file, at, f" {first}"),),
                )
            assert block.label is not None and label is not None
            labelled = inner.labels.get(label)
            if labelled is None:
                self._suggest(
                    "SPK110",
                    f"unknown {kind} `{label}`",
                    block.label.span,
                    label,
                    tuple(inner.labels),
                    f"{kind} kinds are " + ", ".join(f"`{k}`" for k in inner.labels),
                )
                return
            inner = labelled
        elif block.label is not None:
            self.error(
                "SPK110",
                f"`{kind}` takes no label, found `{label}`",
                block.label.span,
                help=f"write `{kind} {{ ... }}`",
                fixes=(
                    replacement(
                        "remove the label", self.file, Span(block.kind.span.end, block.label.span.end), "", safe=True
                    ),
                ),
            )
        out.blocks[(kind, label)] = self.check(
            block.body, inner, block.kind.span.cover(block.label.span) if block.label else block.kind.span
        )

    def _map_entry(self, entry: ast.Attribute | ast.Block, spec: BlockSpec, out: TypedBody) -> None:
        if isinstance(entry, ast.Block):
            self.error(
                "SPK102",
                f'`{spec.name}` holds `name = "value"` pairs, not blocks',
                entry.kind.span,
                help=f'write `{entry.kind.name} = "value"`, or remove this block',
                fixes=(self._removal(f"remove `{entry.kind.name} {{ ... }}`", entry.span),),
            )
            return
        # A name reaches the outputs too (a variable's name, a label's key): no pasted token there.
        self._report(content(f"a name in `{spec.name}`", entry.key.name), entry.key.span)
        if spec.name == "env" and not ENV_NAME.fullmatch(entry.key.name):
            fixed = env_name(entry.key.name)
            self.error(
                "SPK102",
                f"`{entry.key.name}` is not an environment variable name",
                entry.key.span,
                help="use letters, digits and `_`, not starting with a digit" + (f", e.g. `{fixed}`" if fixed else ""),
                fixes=(replacement(f"rename to `{fixed}`", self.file, entry.key.span, fixed),) if fixed else (),
            )
        value = entry.value
        if not isinstance(value, ast.String):
            from spark_dsl.format.values import inline, quote

            self.error(
                "SPK102",
                f"`{spec.name}` values are strings, found {describe(value)}",
                value.span,
                help=f'quote it: `{entry.key.name} = "..."`',
                # The value as written, quoted: what an environment variable or a label holds anyway.
                fixes=(self._value("quote it", value, quote(inline(value)), safe=True),),
            )
            return
        self._report(content(f"`{entry.key.name}`", value.value), value.span)
        origin = Origin(self.file, value.span, entry.key.span, self.profile)
        out.settings[entry.key.name] = Setting(value.value, origin)

    # ---- values -------------------------------------------------------------

    def wrong_type(self, key: KeySpec, value: ast.Value, example: str, safe: bool = False) -> None:
        """A value of the wrong type; the fix writes the help's example (`safe` when the example
        is the same value in the right type, as `false` for "false")."""
        self.error(
            "SPK102",
            f"`{key.name}` takes a {key.type_name}, found {describe(value)}",
            value.span,
            help=f"write e.g. `{key.name} = {example}`",
            fixes=(self._value(f"write `{key.name} = {example}`", value, example, safe=safe),),
        )

    def read_value(self, key: KeySpec, value: ast.Value) -> Any:
        reader = _READERS[key.kind]
        return reader(self, key, value)

    def _integer(self, key: KeySpec, value: ast.Value) -> int:
        if isinstance(value, ast.Quantity):
            number = value.parts[0][0]
            self.error(
                "SPK104",
                f"`{key.name}` takes a plain number, found `{value.text}`",
                value.span,
                help=f"write the number without a unit, e.g. `{key.name} = {number}`",
                fixes=(self._value(f"write `{number}`", value, number),),
            )
        if not isinstance(value, ast.Number):
            self.wrong_type(key, value, "8")
        assert isinstance(value, ast.Number)
        if isinstance(value.value, float):
            whole = value.text.split(".")[0]
            self.error(
                "SPK105",
                f"`{key.name}` takes a whole number, found `{value.text}`",
                value.span,
                help=f"drop the fraction: `{whole}`",
                fixes=(self._value(f"write `{whole}`", value, whole),),
            )
        return self._in_range(key, int(value.value), value)

    def _in_range(self, key: KeySpec, number: int, value: ast.Value) -> int:
        text = value.text if isinstance(value, (ast.Number, ast.Quantity)) else str(number)
        # The fix: the key's default when it is a number in range, else the nearest bound.
        default = int(key.default) if key.default.isdigit() else None
        if key.minimum is not None and number < key.minimum:
            fixed = str(default if default is not None and default >= key.minimum else key.minimum)
            self.error(
                "SPK105",
                f"`{key.name}` must be at least {key.minimum}, found `{text}`",
                value.span,
                help=f"use a value from {key.minimum}" + (f" to {key.maximum}" if key.maximum is not None else " up"),
                fixes=(self._value(f"write `{fixed}`", value, fixed),),
            )
        if key.maximum is not None and number > key.maximum:
            fixed = str(default if default is not None and default <= key.maximum else key.maximum)
            self.error(
                "SPK105",
                f"`{key.name}` must be at most {key.maximum}, found `{text}`",
                value.span,
                help=f"use a value from {key.minimum or 0} to {key.maximum}, e.g. `{fixed}`",
                fixes=(self._value(f"write `{fixed}`", value, fixed),),
            )
        self._below_ceiling(key.name, number, text, value.span)
        return number

    def _below_ceiling(self, name: str, number: int, text: str, span: Span) -> None:
        """Every integer is at most 2^53, checked before the plan's arithmetic turns any into a float."""
        if number > MAX_INTEGER:
            self.error(
                "SPK105",
                f"`{name}` must be at most 2^53 ({MAX_INTEGER}), found `{text}`",
                span,
                help="no setting takes a number this large; write the value the setting needs",
            )

    @staticmethod
    def _unit(family: str, example: str) -> Any:
        """A reader for a unit family: plain counts pass, suffixes read by `family`."""

        def read(self: BodyChecker, key: KeySpec, value: ast.Value) -> int:
            if isinstance(value, ast.Number):
                if family == "count":
                    if isinstance(value.value, float):
                        whole = str(round(value.value))
                        self.error(
                            "SPK105",
                            f"`{key.name}` takes a whole number, found `{value.text}`",
                            value.span,
                            help=f"write a whole count, e.g. `{whole}`",
                            fixes=(self._value(f"write `{whole}`", value, whole),),
                        )
                    return self._in_range(key, int(value.value), value)
                # The example's unit after the number written: `64` -> `64GiB`.
                with_unit = value.text + example.lstrip("0123456789._")
                self.error(
                    "SPK104",
                    f"`{key.name}` needs a unit, found `{value.text}`",
                    value.span,
                    help=f"{family} values take {accepted_suffixes(family)}, e.g. `{with_unit}`",
                    fixes=(self._value(f"write `{with_unit}`", value, with_unit),),
                )
            if not isinstance(value, ast.Quantity):
                self.wrong_type(key, value, example)
            assert isinstance(value, ast.Quantity)
            result = read_quantity(family, value.text, value.parts)
            if isinstance(result, UnitError):
                code = "SPK105" if "whole" in result.message or "fractional" in result.message else "SPK104"
                fixes: tuple[Fix, ...] = ()
                if result.replacement is not None:
                    fixes = (self._value(f"write `{result.replacement}`", value, result.replacement, result.safe),)
                self.error(code, result.message, value.span, help=result.help, fixes=fixes)
            assert isinstance(result, int)
            return self._in_range(key, result, value)

        return read

    def _fraction(self, key: KeySpec, value: ast.Value) -> float:
        if not isinstance(value, ast.Number):
            self.wrong_type(key, value, "0.9")
        assert isinstance(value, ast.Number)
        number = float(value.value)
        if not 0 < number <= 1:
            self.error(
                "SPK105",
                f"`{key.name}` must be in (0, 1], found `{value.text}`",
                value.span,
                help="write a fraction such as `0.9` (not a percentage)",
                fixes=(self._value("write `0.9`", value, "0.9"),),
            )
        return number

    def _bool(self, key: KeySpec, value: ast.Value) -> bool:
        if not isinstance(value, ast.Bool):
            example = "true"
            same = isinstance(value, ast.String) and value.value in ("true", "false")
            if isinstance(value, ast.String) and same:
                example = value.value
            self.wrong_type(key, value, example, safe=same)
        assert isinstance(value, ast.Bool)
        return value.value

    def _string(self, key: KeySpec, value: ast.Value) -> str:
        if not isinstance(value, ast.String):
            example = f'"{value.name}"' if isinstance(value, ast.Symbol) else '"..."'
            self.wrong_type(key, value, example, safe=isinstance(value, ast.Symbol))
        assert isinstance(value, ast.String)
        self._report(setting_problem(key.name, value.value, key.default), value.span)
        return value.value

    def _symbol(self, key: KeySpec, value: ast.Value) -> str:
        if isinstance(value, ast.String) and value.value in key.symbols:
            self.error(
                "SPK102",
                f'`{key.name}` takes a name, not a string: found "{value.value}"',
                value.span,
                help=f"drop the quotes: `{key.name} = {value.value}`",
                fixes=(replacement("drop the quotes", self.file, value.span, value.value, safe=True),),
            )
        if not isinstance(value, ast.Symbol):
            self.wrong_type(key, value, key.symbols[0])
        assert isinstance(value, ast.Symbol)
        if value.name not in key.symbols:
            self._unknown_symbol(key, value.name, value.span)
        return value.name

    def _unknown_symbol(self, key: KeySpec, word: str, span: Span) -> None:
        listing = ", ".join(f"`{s}`" for s in key.symbols)
        chosen = key.default if key.default in key.symbols else key.symbols[0]
        self._suggest(
            "SPK103",
            f"`{word}` is not a valid `{key.name}`",
            span,
            word,
            key.symbols,
            f"`{key.name}` takes one of {listing}",
            otherwise=replacement(f"write `{chosen}`", self.file, span, chosen),
        )

    def _model(self, key: KeySpec, value: ast.Value) -> str:
        if isinstance(value, ast.Symbol):
            word, span, quote = value.name, value.span, ""
        elif isinstance(value, ast.String):
            word, span, quote = value.value, value.span, '"'
        else:
            self.wrong_type(key, value, key.symbols[0])
            raise AssertionError  # pragma: no cover
        if word not in key.symbols:
            listing = ", ".join(f"`{s}`" for s in key.symbols)
            self._suggest(
                "SPK117",
                f"unknown model `{word}`",
                span,
                word,
                key.symbols,
                f"the catalog knows {listing}; to serve other weights of a known model "
                'set `runtime { model_path = "..." }`',
                quote,
                otherwise=replacement(f"write `{key.symbols[0]}`", self.file, span, key.symbols[0]),
            )
        return word

    def _symbol_list(self, key: KeySpec, value: ast.Value) -> tuple[str, ...]:
        if isinstance(value, ast.Symbol):
            self.error(
                "SPK102",
                f"`{key.name}` takes a list, found `{value.name}`",
                value.span,
                help=f"write `{key.name} = [{value.name}]`",
                fixes=(replacement("make it a list", self.file, value.span, f"[{value.name}]", safe=True),),
            )
        if not isinstance(value, ast.ListValue):
            self.wrong_type(key, value, f"[{key.symbols[0]}]")
        assert isinstance(value, ast.ListValue)
        items: list[str] = []
        for index, item in enumerate(value.items):
            if not isinstance(item, ast.Symbol):
                self.wrong_type(key, item, f"[{key.symbols[0]}]")
            assert isinstance(item, ast.Symbol)
            if item.name not in key.symbols:
                self._unknown_symbol(key, item.name, item.span)
            if item.name in items:
                from spark_dsl.edits import list_item_removal

                self.error(
                    "SPK106",
                    f"`{item.name}` appears twice in `{key.name}`",
                    item.span,
                    help="list each item once",
                    # A list of modalities is a set: the second mention means nothing.
                    fixes=(replacement("remove it", self.file, list_item_removal(value.items, index), "", safe=True),),
                )
            items.append(item.name)
        return tuple(items)

    def _string_list(self, key: KeySpec, value: ast.Value) -> tuple[str, ...]:
        if not isinstance(value, ast.ListValue):
            self.wrong_type(key, value, '["--flag", "value"]')
        assert isinstance(value, ast.ListValue)
        out = []
        for item in value.items:
            if not isinstance(item, ast.String):
                self.wrong_type(key, item, '["--flag", "value"]')
            assert isinstance(item, ast.String)
            self._report(content(f"an item of `{key.name}`", item.value), item.span)
            out.append(item.value)
        return tuple(out)

    def _call_args(self, call: ast.Call, allowed: dict[str, str], max_positional: int) -> None:
        """Rejects unknown named arguments and surplus positional ones."""
        fn = call.name.name
        for arg in call.args:
            if arg.name is not None and arg.name.name not in allowed:
                names = ", ".join(f"`{n}`" for n in allowed) or "no named arguments"
                self._suggest(
                    "SPK121",
                    f"`{fn}` has no argument `{arg.name.name}`",
                    arg.name.span,
                    arg.name.name,
                    tuple(allowed),
                    f"`{fn}` takes {names}",
                )
        if len(call.positional) > max_positional:
            from spark_dsl.edits import list_item_removal

            extra = call.positional[max_positional]
            index = next(i for i, a in enumerate(call.args) if a.value is extra)
            self.error(
                "SPK121",
                f"`{fn}` takes at most {max_positional} positional argument" + ("s" if max_positional != 1 else ""),
                extra.span,
                help=f"remove the extra argument from `{fn}(...)`",
                fixes=(replacement("remove it", self.file, list_item_removal(call.args, index), ""),),
            )

    def _count_arg(self, fn: str, value: ast.Value) -> int:
        if not isinstance(value, ast.Number) or isinstance(value.value, float) or value.value < 1:
            self.error(
                "SPK121",
                f"`{fn}(...)` takes a whole number of at least 1, found {describe(value)}",
                value.span,
                help=f"write e.g. `{fn}(2)`",
                fixes=(self._value("write `2`", value, "2"),),
            )
        assert isinstance(value, ast.Number)
        self._below_ceiling(f"{fn}(...)", int(value.value), value.text, value.span)
        return int(value.value)

    def _parallel(self, key: KeySpec, value: ast.Value) -> Parallel:
        if isinstance(value, ast.Symbol) and value.name == "auto":
            return Parallel(auto=True)
        terms = value.terms if isinstance(value, ast.Combination) else (value,)
        tp: int | None = None
        has_tp = ep = False
        dp: int | None = None
        seen: set[str] = set()
        for term in terms:
            args: tuple[ast.Arg, ...]
            if isinstance(term, ast.Symbol):
                name, args = term.name, ()
            elif isinstance(term, ast.Call):
                name, args = term.name.name, term.args
            else:
                self.wrong_type(key, term, "tp + ep")
                raise AssertionError  # pragma: no cover
            span = term.span if isinstance(term, ast.Symbol) else term.name.span
            # Dropping a term takes its `+` with it; the terms left are a parallelism of their own.
            without = self._term_removal(value, term)
            if name not in ("tp", "ep", "dp"):
                if name == "auto":
                    self.error(
                        "SPK122",
                        "`auto` cannot be combined with other terms",
                        term.span,
                        help="write `parallel = auto` alone, or spell out the terms",
                        fixes=(without,) if without else (),
                    )
                self._suggest(
                    "SPK122",
                    f"`{name}` is not a parallelism term",
                    span,
                    name,
                    ("tp", "ep", "dp"),
                    "combine `tp`, `tp(N)`, `ep` and `dp(N)` with `+`, or write `auto`",
                    otherwise=without or self._value("write `auto`", value, "auto"),
                )
            if name in seen:
                self.error(
                    "SPK122",
                    f"`{name}` appears twice in `parallel`",
                    term.span,
                    help=f"keep one `{name}` term",
                    fixes=(without,) if without else (),
                )
            seen.add(name)
            assert isinstance(term, (ast.Symbol, ast.Call))
            if isinstance(term, ast.Call):
                self._call_args(term, {}, 1 if name != "ep" else 0)
            if name == "tp":
                has_tp = True
                if args:
                    tp = self._count_arg("tp", args[0].value)
            elif name == "ep":
                ep = True
            else:
                if not args:
                    self.error(
                        "SPK121",
                        "`dp` needs the number of data-parallel replicas",
                        term.span,
                        help="write e.g. `dp(2)`",
                        fixes=(replacement("write `dp(2)`", self.file, term.span, "dp(2)"),),
                    )
                dp = self._count_arg("dp", args[0].value)
        return Parallel(tp=tp, has_tp=has_tp, ep=ep, dp=dp)

    def _term_removal(self, value: ast.Value, term: ast.Value) -> Fix | None:
        """The fix that drops one term of a `+` combination, with the `+` beside it."""
        if not isinstance(value, ast.Combination) or len(value.terms) < 2:
            return None
        terms = value.terms
        i = terms.index(term)
        span = (
            Span(term.span.start, terms[i + 1].span.start)
            if i + 1 < len(terms)
            else Span(terms[i - 1].span.end, term.span.end)
        )
        return replacement(f"drop `{self.text[term.span.start : term.span.end]}`", self.file, span, "")

    def _speculative(self, key: KeySpec, value: ast.Value) -> Speculative:
        modes = SPECULATIVE_MODES
        if isinstance(value, ast.Symbol):
            if value.name not in modes:
                self._suggest(
                    "SPK103",
                    f"`{value.name}` is not a valid `speculative`",
                    value.span,
                    value.name,
                    (*modes, "dspark(adaptive)"),
                    "`speculative` takes `none`, `dspark`, `dspark(adaptive)` or `auto`",
                    otherwise=self._value("write `auto`", value, "auto"),
                )
            return Speculative(value.name)
        if not isinstance(value, ast.Call):
            self.wrong_type(key, value, "dspark")
        assert isinstance(value, ast.Call)
        if value.name.name != "dspark":
            self._suggest(
                "SPK103",
                f"`{value.name.name}(...)` is not a valid `speculative`",
                value.name.span,
                value.name.name,
                ("dspark",),
                "only `dspark` takes arguments: `dspark(adaptive)`, `dspark(tokens = 4)`",
                otherwise=replacement("write `dspark`", self.file, value.name.span, "dspark"),
            )
        self._call_args(value, {"tokens": "draft tokens per step"}, 1)
        adaptive = False
        for pos in value.positional:
            if not (isinstance(pos, ast.Symbol) and pos.name == "adaptive"):
                self.error(
                    "SPK121",
                    f"`dspark` takes `adaptive` as its positional argument, found {describe(pos)}",
                    pos.span,
                    help="write `dspark(adaptive)`",
                    fixes=(self._value("write `adaptive`", pos, "adaptive"),),
                )
            adaptive = True
        tokens = None
        if "tokens" in value.named:
            tokens = self._count_arg("tokens", value.named["tokens"].value)
        return Speculative("dspark", adaptive=adaptive, tokens=tokens)

    def _secret(self, key: KeySpec, value: ast.Value) -> SecretRef:
        if isinstance(value, ast.String):
            self.error(
                "SPK901",
                f"`{key.name}` is a literal secret; it would be written into every output",
                value.span,
                help=f'store it outside the spec and refer to it: `{key.name} = secret("name")` or `env("NAME")`',
            )
        if not isinstance(value, ast.Call) or value.name.name not in ("secret", "env"):
            self.wrong_type(key, value, 'secret("name")')
        assert isinstance(value, ast.Call)
        fn = value.name.name
        self._call_args(value, {"key": "key inside the Secret"} if fn == "secret" else {}, 1)
        if not value.positional or not isinstance(value.positional[0], ast.String):
            # An unquoted name (`secret(vllm-key)` reads as a symbol) is the user's own: quote it.
            first = value.positional[0] if value.positional else None
            name = first.name if isinstance(first, ast.Symbol) else ("hf-token" if fn == "secret" else "HF_TOKEN")
            example = f'{fn}("{name}")'
            self.error(
                "SPK121",
                f"`{fn}(...)` needs a name as a string",
                value.span,
                help=f"write `{example}`",
                fixes=(self._value(f"write `{example}`", value, example),),
            )
        arg = value.positional[0]
        assert isinstance(arg, ast.String)
        name = arg.value
        self._report(content(f"`{fn}(...)`", name), arg.span)
        if fn == "secret" and (not SECRET_NAME.fullmatch(name) or len(name) > 63):
            fixed = secret_name(name)
            self.error(
                "SPK123",
                f'secret name "{name}" is not a DNS label that starts with a letter',
                arg.span,
                help="use lowercase letters, digits and `-`, starting with a letter (at most 63), "
                f"e.g. `{fixed or 'hf-token'}`",
                fixes=(self._value(f'write "{fixed}"', arg, f'"{fixed}"'),) if fixed else (),
            )
        if fn == "env" and not ENV_NAME.fullmatch(name):
            fixed = env_name(name)
            self.error(
                "SPK123",
                f'"{name}" is not an environment variable name',
                arg.span,
                help=f"use letters, digits and `_`, not starting with a digit, e.g. `{fixed or 'HF_TOKEN'}`",
                fixes=(self._value(f'write "{fixed}"', arg, f'"{fixed}"'),) if fixed else (),
            )
        secret_key = None
        if "key" in value.named:
            k = value.named["key"].value
            if not isinstance(k, ast.String) or not k.value:
                self.error(
                    "SPK121",
                    "`key` takes a string",
                    k.span,
                    help='write `key = "token"`',
                    fixes=(self._value('write `"token"`', k, '"token"'),),
                )
            assert isinstance(k, ast.String)
            self._report(content("`key`", k.value), k.span)
            if not SECRET_KEY.fullmatch(k.value) or len(k.value) > 253:
                fixed = kubernetes_secret_key(k.value)
                self.error(
                    "SPK123",
                    f'secret key "{k.value}" is not a key Kubernetes accepts',
                    k.span,
                    help=f"use letters, digits, `-`, `_` and `.` (at most 253), e.g. `{fixed or 'token'}`",
                    fixes=(self._value(f'write "{fixed}"', k, f'"{fixed}"'),) if fixed else (),
                )
            secret_key = k.value
        return SecretRef(fn, name, secret_key)

    def _volume(self, key: KeySpec, value: ast.Value) -> Volume:
        if isinstance(value, ast.Symbol) and value.name == "emptydir":
            return Volume("emptydir")
        kinds = ("pvc", "hostpath", "emptydir")
        if isinstance(value, ast.Call) and value.name.name in ("pvc", "hostpath"):
            fn = value.name.name
            what, example = ("claim name", "model-cache") if fn == "pvc" else ("path", "/models")
            self._call_args(value, {}, 1)
            arg = value.positional[0] if value.positional else None
            if not isinstance(arg, ast.String) or not arg.value:
                self.error(
                    "SPK121",
                    f"`{fn}(...)` needs a {what} as a string",
                    value.span,
                    help=f'write `{fn}("{example}")`',
                    fixes=(self._value(f'write `{fn}("{example}")`', value, f'{fn}("{example}")'),),
                )
            assert isinstance(arg, ast.String)
            self._report(content(f"`{fn}(...)`", arg.value), arg.span)
            return Volume(value.name.name, arg.value)
        word = value.name if isinstance(value, ast.Symbol) else value.name.name if isinstance(value, ast.Call) else ""
        if word:
            self._suggest(
                "SPK103",
                f"`{word}` is not a valid `{key.name}`",
                value.span,
                word,
                kinds,
                '`model_cache` takes `pvc("name")`, `hostpath("/path")` or `emptydir`',
                otherwise=self._value("write `emptydir`", value, "emptydir"),
            )
        self.wrong_type(key, value, 'pvc("model-cache")')
        raise AssertionError  # pragma: no cover


_READERS: dict[Kind, Any] = {
    Kind.INTEGER: BodyChecker._integer,
    Kind.COUNT: BodyChecker._unit("count", "32K"),
    Kind.SIZE: BodyChecker._unit("size", "64GiB"),
    Kind.DURATION: BodyChecker._unit("duration", "4h"),
    Kind.FRACTION: BodyChecker._fraction,
    Kind.BOOL: BodyChecker._bool,
    Kind.STRING: BodyChecker._string,
    Kind.SYMBOL: BodyChecker._symbol,
    Kind.MODEL: BodyChecker._model,
    Kind.SYMBOL_LIST: BodyChecker._symbol_list,
    Kind.STRING_LIST: BodyChecker._string_list,
    Kind.PARALLEL: BodyChecker._parallel,
    Kind.SPECULATIVE: BodyChecker._speculative,
    Kind.SECRET: BodyChecker._secret,
    Kind.VOLUME: BodyChecker._volume,
}
