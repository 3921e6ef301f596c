"""Attaches comments to the items around them, so the printer can keep every comment in place."""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Sequence

from msgspec import Struct, field

from spark_dsl.span import Span
from spark_dsl.syntax import ast


class Leading(Struct):
    """A comment on its own line before an item; `blank_before` keeps a paragraph break."""

    comment: ast.Comment
    blank_before: bool = False


class Slot(Struct):
    """One item of a sequence (a statement, an entry, a list item) with the comments it owns."""

    item: object
    leading: list[Leading] = field(default_factory=list)
    trailing: ast.Comment | None = None
    blank_before: bool = False


class Layout(Struct):
    """The items of one container, plus the comments that belong to the container itself."""

    slots: list[Slot]
    open_trailing: ast.Comment | None = None
    dangling: list[Leading] = field(default_factory=list)


class CommentPool:
    """The comments of one file, sorted, looked up by range."""

    def __init__(self, text: str, comments: Sequence[ast.Comment]) -> None:
        self.text = text
        self.comments = sorted(comments, key=lambda c: c.span.start)
        self._starts = [c.span.start for c in self.comments]

    def within(self, start: int, end: int) -> list[ast.Comment]:
        """Comments that start in [start, end)."""
        lo = bisect_left(self._starts, start)
        hi = bisect_left(self._starts, end)
        return self.comments[lo:hi]

    def any_within(self, span: Span) -> bool:
        return bool(self.within(span.start, span.end))

    def same_line(self, a: int, b: int) -> bool:
        return "\n" not in self.text[a:b]

    def blank_between(self, a: int, b: int) -> bool:
        return self.text.count("\n", a, b) >= 2

    def distribute(
        self, items: Sequence[object], spans: Sequence[Span], start: int, end: int, anchored: bool
    ) -> Layout:
        """Gives each comment between `items` (inside [start, end)) to the item it belongs to.

        A comment on the line where the previous item (or, when `anchored`, the
        opening bracket at `start`) ends trails it; any other comment leads the
        next item, or dangles at the end of the container. Comments inside an
        item's span are the item's own business.
        """
        out = Layout([Slot(item) for item in items])
        prev_end: int | None = start if anchored else None
        prev_slot: Slot | None = None
        cursor = start
        bounds = [*(s.start for s in spans), end]
        for index, gap_end in enumerate(bounds):
            pending: list[Leading] = []
            for comment in self.within(cursor, gap_end):
                after_prev = prev_end is not None and self.same_line(prev_end, comment.span.start)
                if after_prev and not pending:
                    if prev_slot is None:
                        out.open_trailing = comment
                    else:
                        prev_slot.trailing = comment
                else:
                    pending.append(Leading(comment, self.blank_between(cursor, comment.span.start)))
                cursor = comment.span.end
            if index == len(items):
                out.dangling = pending
                break
            slot = out.slots[index]
            slot.leading = pending
            slot.blank_before = self.blank_between(cursor, gap_end)
            prev_slot, prev_end = slot, spans[index].end
            cursor = spans[index].end
        return out
