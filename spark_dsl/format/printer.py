"""Prints a parsed module in the canonical layout, every comment kept.

The layout: two-space indentation, one attribute or block per line, `=`
aligned across a run of consecutive attributes (a blank line or a block ends
the run), one blank line between profiles and deployments, at most one blank
line kept where the author wrote several, trailing comments two spaces after
the code, and files ending in exactly one newline.
"""

from __future__ import annotations

from spark_dsl.format.comments import CommentPool, Leading, Slot
from spark_dsl.format.values import INDENT, ValuePrinter, name_or_quoted, quote, trailing
from spark_dsl.syntax import ast


class Printer:
    """Prints one module; build one per file."""

    def __init__(self, text: str, module: ast.Module) -> None:
        self.text = text
        self.module = module
        self.pool = CommentPool(text, module.comments)
        self.values = ValuePrinter(self.pool)
        self.lines: list[str] = []

    def print(self) -> str:
        statements = self.module.statements
        layout = self.pool.distribute(statements, [s.span for s in statements], 0, len(self.text), anchored=False)
        previous: ast.Statement | None = None
        for slot in layout.slots:
            assert isinstance(slot.item, (ast.Import, ast.Profile, ast.Deployment, ast.ModelDecl))
            # Imports may sit together; anything else gets a blank line of its own.
            apart = previous is not None and not (
                isinstance(previous, ast.Import) and isinstance(slot.item, ast.Import)
            )
            self._statement(slot.item, slot, first=previous is None, apart=apart)
            previous = slot.item
        self._comments(layout.dangling, 0, first=previous is None)
        return "\n".join(self.lines) + "\n" if self.lines else ""

    # ---- emitting -----------------------------------------------------------

    def _blank(self) -> None:
        if self.lines and self.lines[-1] != "":
            self.lines.append("")

    def _comments(self, comments: list[Leading], indent: int, first: bool, apart: bool = False) -> bool:
        """Emits own-line comments; returns whether anything was emitted."""
        for index, lead in enumerate(comments):
            at_start = first and index == 0
            if not at_start and (lead.blank_before or (index == 0 and apart)):
                self._blank()
            self.lines.append(INDENT * indent + lead.comment.text.rstrip())
        return bool(comments)

    def _lead_in(self, slot: Slot, hoisted: list[Leading], indent: int, first: bool, apart: bool = False) -> None:
        """The comments before an item and the blank line the author left before it."""
        had_leading = self._comments(slot.leading, indent, first, apart)
        opens = first and not had_leading
        if not opens and (slot.blank_before or (apart and not had_leading)):
            self._blank()
        self._comments(hoisted, indent, first=True)

    def _hoisted(self, start: int, end: int) -> list[Leading]:
        """Comments inside an item's header, which move above the item."""
        return [Leading(c) for c in self.pool.within(start, end)]

    # ---- statements ---------------------------------------------------------

    def _statement(self, stmt: ast.Statement, slot: Slot, first: bool, apart: bool) -> None:
        if isinstance(stmt, ast.Import):
            self._lead_in(slot, self._hoisted(stmt.span.start, stmt.span.end), 0, first, apart)
            self.lines.append(f"import {quote(stmt.path.value)}" + trailing(slot.trailing))
            return
        if isinstance(stmt, ast.ModelDecl):
            self._lead_in(slot, self._hoisted(stmt.span.start, stmt.body.span.start), 0, first, apart)
            self._body(stmt.body, f"model {stmt.name.name}", 0)
            self.lines[-1] += trailing(slot.trailing)
            return
        keyword = "profile" if isinstance(stmt, ast.Profile) else "deployment"
        header = f"{keyword} {stmt.name.name}"
        if stmt.extends:
            header += " extends " + ", ".join(p.name for p in stmt.extends)
        self._lead_in(slot, self._hoisted(stmt.span.start, stmt.body.span.start), 0, first, apart)
        self._body(stmt.body, header, 0)
        self.lines[-1] += trailing(slot.trailing)

    def _body(self, body: ast.Body, header: str, indent: int) -> None:
        layout = self.pool.distribute(
            body.entries,
            [e.span for e in body.entries],
            body.span.start + 1,
            body.span.end - 1,
            anchored=True,
        )
        pad = INDENT * indent
        if not layout.slots and layout.open_trailing is None and not layout.dangling:
            self.lines.append(f"{pad}{header} {{}}")
            return
        self.lines.append(f"{pad}{header} {{" + trailing(layout.open_trailing))
        widths = _key_widths(layout.slots)
        for index, slot in enumerate(layout.slots):
            self._entry(slot, indent + 1, first=index == 0, width=widths[index])
        self._comments(layout.dangling, indent + 1, first=not layout.slots)
        self.lines.append(pad + "}")

    def _entry(self, slot: Slot, indent: int, first: bool, width: int) -> None:
        entry = slot.item
        pad = INDENT * indent
        if isinstance(entry, ast.Block):
            header = entry.kind.name
            if entry.label is not None:
                header += " " + name_or_quoted(entry.label.name)
            self._lead_in(slot, self._hoisted(entry.span.start, entry.body.span.start), indent, first)
            self._body(entry.body, header, indent)
            self.lines[-1] += trailing(slot.trailing)
            return
        assert isinstance(entry, ast.Attribute)
        key = _key_text(entry).ljust(width)
        column = len(pad) + len(key) + 3
        value_lines, in_value = self.values.render(entry.value, indent, column)
        hoisted = self._hoisted(entry.span.start, entry.value.span.start) + in_value
        self._lead_in(slot, hoisted, indent, first)
        self.lines.append(f"{pad}{key} = {value_lines[0]}")
        self.lines += value_lines[1:]
        self.lines[-1] += trailing(slot.trailing)


def _key_text(attr: ast.Attribute) -> str:
    return quote(attr.key.name) if attr.key_quoted else attr.key.name


def _key_widths(slots: list[Slot]) -> list[int]:
    """The key column width of each attribute: the longest key of its run."""
    widths = [0] * len(slots)
    run: list[int] = []

    def close() -> None:
        width = max((len(_key_text(slots[i].item)) for i in run), default=0)  # type: ignore[arg-type]
        for i in run:
            widths[i] = width
        run.clear()

    for index, slot in enumerate(slots):
        paragraph = slot.blank_before or any(lead.blank_before for lead in slot.leading)
        if not isinstance(slot.item, ast.Attribute) or (paragraph and index > 0):
            close()
        if isinstance(slot.item, ast.Attribute):
            run.append(index)
    close()
    return widths
