"""Resolves `extends`: each profile merged over what it extends, once per profile, without recursion.

A profile's merged body does not depend on how it was reached, so it is computed once
and shared: a "diamond ladder" (`p2 extends a2, b2`, both of which extend `p1`, ...)
costs one merge per profile instead of one per path, of which there are 2^rungs.
The walk is depth first with an explicit stack, so a chain of any length never
touches Python's recursion limit, and colours the profiles: those on the walk's
current path are in progress, and reaching one of them again closes a cycle (SPK116).
A chain longer than MAX_EXTENDS_DEPTH profiles is SPK124, reported once at the link
that crosses the limit.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from msgspec import Struct, field

from spark_dsl.syntax import ast
from spark_dsl.values import TypedBody

if TYPE_CHECKING:
    from spark_dsl.loader import Loader, ProfileDef
    from spark_dsl.span import Span

MAX_EXTENDS_DEPTH = 1000
# Marks a body whose `extends` was refused, so the plan (and its rules) skip it.
BROKEN_EXTENDS = "extends"


class Resolved(Struct, frozen=True):
    """A profile merged over its ancestors, and the names it brought in (ancestors first)."""

    body: TypedBody
    profiles: tuple[str, ...]
    depth: int  # profiles on the longest chain from here, this one included
    too_deep: bool  # the chain crosses the limit here or below (reported once, where it crosses)


class _Frame(Struct):
    """A profile in progress: its parents taken so far, merged in order."""

    prof: ProfileDef
    scope: dict[str, ProfileDef]
    merged: TypedBody = field(default_factory=TypedBody)
    names: dict[str, None] = field(default_factory=dict)
    taken: int = 0
    depth: int = 1
    too_deep: bool = False
    deepest: ast.Ident | None = None  # the parent link of the longest chain

    @property
    def parents(self) -> tuple[ast.Ident, ...]:
        return self.prof.node.extends

    @property
    def current(self) -> ast.Ident:
        return self.parents[self.taken - 1]

    def take(self, parent: ast.Ident, resolved: Resolved) -> None:
        self.merged = self.merged.merged_with(resolved.body)
        self.names.update(dict.fromkeys(resolved.profiles))
        if resolved.depth + 1 > self.depth:
            self.depth, self.deepest = resolved.depth + 1, parent
        self.too_deep |= resolved.too_deep


def key(prof: ProfileDef) -> tuple[Path, str]:
    return prof.source.path, prof.node.name.name


class ExtendsResolver:
    """Merges profiles for one loader; results are kept for the whole run."""

    def __init__(self, loader: Loader) -> None:
        self.loader = loader
        self.done: dict[tuple[Path, str], Resolved] = {}
        # Links already reported as part of a cycle: a link on several cycles is reported once,
        # with the first cycle found (the message names the cycle, so it differs per cycle).
        self.cycle_links: set[tuple[str, Span, str | None]] = set()

    def profile(self, prof: ProfileDef, deployment: str | None) -> Resolved:
        """`prof` merged over everything it extends; diagnostics name `deployment` when given."""
        known = self.done.get(key(prof))
        if known is not None:
            return known
        path = [self._frame(prof)]
        on_path = {key(prof): 0}
        while path:
            frame = path[-1]
            if frame.taken < len(frame.parents):
                frame.taken += 1
                ident = frame.current
                parent = frame.scope.get(ident.name)
                if parent is None:
                    self.loader.unknown_profile(ident, frame.scope, frame.prof.source, deployment)
                elif key(parent) in self.done:
                    frame.take(ident, self.done[key(parent)])
                elif key(parent) in on_path:
                    self._cycle(path[on_path[key(parent)] :], ident, deployment)
                else:
                    on_path[key(parent)] = len(path)
                    path.append(self._frame(parent))
                continue
            finished = self._finish(frame, deployment)
            path.pop()
            del on_path[key(frame.prof)]
            if path:
                path[-1].take(path[-1].current, finished)
        return self.done[key(prof)]

    def _frame(self, prof: ProfileDef) -> _Frame:
        return _Frame(prof, self.loader.scope(prof.source))

    def _finish(self, frame: _Frame, deployment: str | None) -> Resolved:
        body = frame.merged.merged_with(self.loader.typed_profile(frame.prof))
        crosses = frame.depth > MAX_EXTENDS_DEPTH and not frame.too_deep
        if crosses:
            self._too_deep(frame, deployment)
        too_deep = frame.too_deep or crosses
        if too_deep:
            body.mark_invalid(BROKEN_EXTENDS)
        names = (*frame.names, frame.prof.node.name.name)
        resolved = Resolved(body, tuple(dict.fromkeys(names)), frame.depth, too_deep)
        self.done[key(frame.prof)] = resolved
        return resolved

    def _too_deep(self, frame: _Frame, deployment: str | None) -> None:
        assert frame.deepest is not None
        name = frame.prof.node.name.name
        self.loader.sink.error(
            "SPK124",
            f"`extends` chain of `{name}` is more than {MAX_EXTENDS_DEPTH:,} profiles long",
            frame.prof.source.name,
            frame.deepest.span,
            deployment=deployment,
            label=f"`{frame.deepest.name}` heads a chain of {frame.depth - 1:,} profiles",
            help=f"merge profiles of the chain into fewer: a chain holds at most {MAX_EXTENDS_DEPTH:,} profiles",
        )

    def _cycle(self, cycle: list[_Frame], closing: ast.Ident, deployment: str | None) -> None:
        """Reports every link of the cycle `cycle[0] -> ... -> cycle[-1] -> cycle[0]` at its `extends`."""
        names = [f.prof.node.name.name for f in cycle]
        links = [(f, f.current) for f in cycle[:-1]] + [(cycle[-1], closing)]
        for at, (frame, ident) in enumerate(links):
            link = (frame.prof.source.name, ident.span, deployment)
            if link in self.cycle_links:
                continue
            self.cycle_links.add(link)
            cycle_text = _cycle_text(names, (at + 1) % len(names))
            # Only a profile that names itself "extends itself"; a longer cycle is named link by link.
            message = f"profile `{ident.name}` extends itself" if len(names) == 1 else f"`extends` cycle {cycle_text}"
            self.loader.sink.error(
                "SPK116",
                message,
                frame.prof.source.name,
                ident.span,
                deployment=deployment,
                help=f"break the cycle {cycle_text}: remove this `extends` or another one of it",
            )


def _cycle_text(names: list[str], start: int) -> str:
    """The cycle from `names[start]` around to itself; a long one shortened, in constant work."""
    count = len(names)

    def nth(i: int) -> str:
        return names[(start + i) % count]

    if count <= 8:
        shown = [nth(i) for i in range(count)]
    else:
        shown = [nth(0), nth(1), nth(2), f"... ({count - 5} more)", nth(count - 2), nth(count - 1)]
    return " -> ".join([*shown, nth(0)])
