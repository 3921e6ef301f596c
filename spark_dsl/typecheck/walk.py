"""The body walk: each entry of a body against the schema table (unknown keys, duplicates,
blocks and their labels, free-form maps), each value handed to the reader of its kind."""

from __future__ import annotations

from typing import Any

from spark_dsl.diagnostics import Note, replacement
from spark_dsl.schema import BlockSpec, KeySpec
from spark_dsl.span import Location, Span
from spark_dsl.string_checks import content
from spark_dsl.syntax import ast
from spark_dsl.typecheck.context import Context, Invalid, describe
from spark_dsl.typecheck.names import ENV_NAME, env_name
from spark_dsl.typecheck.readers import READERS
from spark_dsl.values import Origin, Setting, TypedBody


class BodyChecker(Context):
    """Checks one body (of a deployment or a profile) in one file."""

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
                    fixes=(self.removal(f"remove this `{shown}`", entry.span),),
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
            except Invalid:
                out.mark_invalid(name)
        return out

    def read_value(self, key: KeySpec, value: ast.Value) -> Any:
        return READERS[key.kind](self, key, value)

    def _unknown(self, ident: ast.Ident, spec: BlockSpec, what: str, entry: Span) -> None:
        choices = [*spec.keys, *spec.blocks]
        where = f"a {spec.name} body" if spec.name != "deployment" else "a deployment"
        listing = ", ".join(f"`{c}`" for c in choices) or "nothing"
        self.suggest(
            "SPK101",
            f"unknown {what} `{ident.name}` in {where}",
            ident.span,
            ident.name,
            choices,
            f"{where} takes {listing}, or remove it",
            otherwise=self.removal(f"remove `{ident.name}`", entry),
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
                    fixes=(self.removal(f"remove `{attr.key.name} = ...`", attr.span),),
                )
            self._unknown(attr.key, spec, "key", attr.span)
            return
        self.entry = attr.span
        try:
            value = self.read_value(key, attr.value)
        finally:
            self.entry = None
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
                    fixes=(self.removal(f"remove `{kind} {{ ... }}`", block.span),),
                )
            self._unknown(block.kind, spec, "block", block.span)
            return
        label = block.label.name if block.label else None
        out.blocks[(kind, label)] = self.check(
            block.body,
            self._labelled(block, inner),
            block.kind.span.cover(block.label.span) if block.label else block.kind.span,
        )

    def _labelled(self, block: ast.Block, inner: BlockSpec) -> BlockSpec:
        """The body a block's label picks (`target kubernetes`); a block without kinds takes no label."""
        kind = block.kind.name
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
                self.suggest(
                    "SPK110",
                    f"unknown {kind} `{label}`",
                    block.label.span,
                    label,
                    tuple(inner.labels),
                    f"{kind} kinds are " + ", ".join(f"`{k}`" for k in inner.labels),
                )
                raise AssertionError  # pragma: no cover
            return labelled
        if block.label is not None:
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
        return inner

    def _map_entry(self, entry: ast.Attribute | ast.Block, spec: BlockSpec, out: TypedBody) -> None:
        if isinstance(entry, ast.Block):
            self.error(
                "SPK102",
                f'`{spec.name}` holds `name = "value"` pairs, not blocks',
                entry.kind.span,
                help=f'write `{entry.kind.name} = "value"`, or remove this block',
                fixes=(self.removal(f"remove `{entry.kind.name} {{ ... }}`", entry.span),),
            )
            return
        # A name reaches the outputs too (a variable's name, a label's key): no pasted token there.
        self.report(content(f"a name in `{spec.name}`", entry.key.name), entry.key.span)
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
                fixes=(self.rewrite("quote it", value, quote(inline(value)), safe=True),),
            )
            return
        self.report(content(f"`{entry.key.name}`", value.value), value.span)
        origin = Origin(self.file, value.span, entry.key.span, self.profile)
        out.settings[entry.key.name] = Setting(value.value, origin)
