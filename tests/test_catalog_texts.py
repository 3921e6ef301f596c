"""Explain texts follow the catalog (issue 34, item 2; docs/dev/changes.md, "An accelerator").

A throwaway accelerator is added to the catalog in memory, and every explain text that lists
accelerators must then name it wherever it joins the list: a text "lists" the narrowest group of
catalog accelerators (by vendor, architecture, validation and number formats) that covers the
accelerators it names. The recipe's thresholds get throwaway values the same way."""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterator

import msgspec
import pytest

from spark_dsl import catalog, codes

# What a group of accelerators shares: the catalog's facts that rules and texts select by.
_FACTS = ("vendor", "generation", "validated", "fp4", "fp8", "on_host")


def _texts() -> dict[str, str]:
    """Every code's title, `checks` and `basis`, written from the catalog as it is now."""
    codes.registry.cache_clear()
    try:
        parts = ("title", "checks", "basis")
        return {f"{code} {part}": getattr(doc, part) for code, doc in codes.registry().items() for part in parts}
    finally:
        codes.registry.cache_clear()


def _named(text: str, ids: list[str]) -> set[str]:
    """The accelerators a text names; none where its list ends in `...` (examples, not the list)."""
    found = {i for i in ids if re.search(rf"(?<![\w-]){re.escape(i)}(?![\w-])", text, re.IGNORECASE)}
    if any(re.search(rf"(?<![\w-]){re.escape(i)}, \.\.\.", text, re.IGNORECASE) for i in found):
        return set()
    return found


def _groups(accelerators: dict[str, catalog.Accelerator]) -> Iterator[frozenset[str]]:
    """Every group of accelerators that agree on some of `_FACTS`."""
    for n in range(len(_FACTS) + 1):
        for facts in itertools.combinations(_FACTS, n):
            keys = {tuple(getattr(a, f) for f in facts) for a in accelerators.values()}
            for key in keys:
                yield frozenset(i for i, a in accelerators.items() if tuple(getattr(a, f) for f in facts) == key)


def _listed_groups(named: set[str], groups: list[frozenset[str]]) -> list[frozenset[str]]:
    """The narrowest groups that cover the named accelerators: the lists the text spells out."""
    covering = [g for g in groups if named <= g]
    narrowest = min(len(g) for g in covering)
    return [g for g in covering if len(g) == narrowest]


def _with_accelerator(cat: catalog.Catalog, new: catalog.Accelerator) -> catalog.Catalog:
    return msgspec.structs.replace(cat, accelerators={**cat.accelerators, new.id: new})


# Throwaway accelerators, each a copy of one the catalog has under a new id, so it joins that
# one's groups: a validated Blackwell, a validated AMD one, an unvalidated GPU.
THROWAWAYS = {"b400": "b200", "mi400x": "mi355x", "h300": "h100"}


@pytest.mark.parametrize(("new_id", "like"), THROWAWAYS.items())
def test_a_throwaway_accelerator_joins_every_list_it_belongs_to(
    monkeypatch: pytest.MonkeyPatch, new_id: str, like: str
) -> None:
    cat = catalog.load()
    ids = list(cat.accelerators)
    groups = list(_groups(cat.accelerators))
    before = _texts()
    listing = {k: t for k, t in before.items() if len(_named(t, ids)) >= 2}
    assert listing, "no explain text lists accelerators: the test proves nothing"
    new = msgspec.structs.replace(cat.accelerators[like], id=new_id, display_name=new_id.upper())
    grown = _with_accelerator(cat, new)
    monkeypatch.setattr(catalog, "load", lambda: grown)
    after = _texts()
    stale = []
    for key, text in listing.items():
        # The copy joins every group of the accelerator it copies.
        joins = any(like in g for g in _listed_groups(_named(text, ids), groups))
        if joins and new_id not in _named(after[key], [*ids, new_id]):
            stale.append(f"{key}: {after[key]}")
    assert not stale, "explain texts that list accelerators but not the new one:\n" + "\n".join(stale)


# Throwaway values no text holds by chance, for the thresholds texts name.
THRESHOLDS = {
    "default_context": 40960,
    "long_context_max_num_seqs": 13,
    "ep_from_concurrency": 37,
    "dspark_until_concurrency": 71,
    "kv_headroom_fraction": 0.17,
}


def _spellings(value: float) -> set[str]:
    """How a text writes a threshold: `32,768` or `32`; `10%` or `0.1`."""
    return {f"{value:,}", f"{value}"} if isinstance(value, int) else {f"{value:.0%}", f"{value:g}"}


def _holds(text: str, value: float) -> bool:
    return any(re.search(rf"(?<![\d.,]){re.escape(s)}(?![\d,]|\.\d)", text) for s in _spellings(value))


@pytest.mark.parametrize(("name", "value"), THRESHOLDS.items())
def test_a_threshold_changes_every_text_that_names_it(monkeypatch: pytest.MonkeyPatch, name: str, value: float) -> None:
    """A text that shows the new value shows no trace of the old one: none is half derived."""
    cat = catalog.load()
    old = getattr(cat.thresholds, name)
    recipe = msgspec.structs.replace(cat.recipe, thresholds=msgspec.structs.replace(cat.thresholds, **{name: value}))
    monkeypatch.setattr(catalog, "load", lambda: msgspec.structs.replace(cat, recipe=recipe))
    showing = {k: t for k, t in _texts().items() if _holds(t, value)}
    assert showing, f"no explain text names `{name}`"
    stale = {k: t for k, t in showing.items() if _holds(t, old)}
    assert not stale, stale
