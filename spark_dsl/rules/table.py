"""The rule table: every rule module, listed by name, and the rules they register, run over a plan.

As ruff's code table, adding a rule module means adding it here; nothing is found by scanning.
The rule modules import `spark_dsl.rules.registry` (the decorator) and never this module, so no
import goes in a circle."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from functools import cache

from spark_dsl import catalog
from spark_dsl.diagnostics import Diagnostic
from spark_dsl.plan.model import Plan
from spark_dsl.rules import (
    advice,
    amd,
    budget,
    capacity,
    cpu_backend,
    fabric,
    hardware,
    jobs,
    long_context,
    models,
    parallelism,
    production,
    router,
    safety,
    speculative,
    structure,
    targets,
    weights_access,
)
from spark_dsl.rules.registry import Rule, is_recipe_rule, registered, to_diagnostic

# The recipe's hard constraints (SPK2xx) are split by topic: hardware (SPK201, SPK202, SPK222),
# parallelism (SPK203, SPK217-SPK220), amd (SPK204-SPK209, SPK216), long_context (SPK211-SPK215),
# speculative (SPK210, SPK221). Order here does not matter: `all_rules` sorts by code.
RULE_MODULES = (
    advice,
    amd,
    budget,
    capacity,
    cpu_backend,
    fabric,
    hardware,
    jobs,
    long_context,
    models,
    parallelism,
    production,
    router,
    safety,
    speculative,
    structure,
    targets,
    weights_access,
)


# The rules a run may use when narrowed by `only`, else None (every rule).
_ONLY: ContextVar[frozenset[str] | None] = ContextVar("spark_dsl_only_rules", default=None)


@contextmanager
def only(codes: Iterable[str]) -> Iterator[None]:
    """Runs only the rules `codes` meanwhile, as ruff's tests run a rule's fixture with that rule
    alone: a rule's fixtures then never change when another rule is added (tests/fixtures/rules)."""
    token = _ONLY.set(frozenset(codes))
    try:
        yield
    finally:
        _ONLY.reset(token)


@cache
def all_rules() -> tuple[Rule, ...]:
    """Every rule, in code order. Each comes from a module of RULE_MODULES."""
    rules = registered()
    listed = {module.__name__ for module in RULE_MODULES}
    stray = sorted(code for code, r in rules.items() if r.check.__module__ not in listed)
    if stray:
        raise ValueError(f"rules {stray} come from modules missing from RULE_MODULES")
    return tuple(rules[c] for c in sorted(rules))


@cache
def generic_rules() -> tuple[Rule, ...]:
    """The rules for a model outside the recipe: all but the recipe's own (`recipe_only`)."""
    return tuple(r for r in all_rules() if not is_recipe_rule(r))


@cache
def _rules_for(recipe: bool, built: frozenset[str]) -> tuple[Rule, ...]:
    """The rules that can find something in a plan: the recipe's own only for its model, and a
    rule about one target's settings only where the plan builds that target."""
    rules = all_rules() if recipe else generic_rules()
    return tuple(r for r in rules if r.target is None or r.target in built)


def run_rules(plan: Plan) -> list[Diagnostic]:
    """Every rule's findings on a plan, with overlapping codes left out as RULES.md says.

    The recipe's own rules run only on plans of the recipe's model."""
    built = frozenset(plan.targets).union(plan.forced_targets)
    rules = _rules_for(plan.model.id == catalog.load().recipe.model, built)
    chosen = _ONLY.get()
    if chosen is not None:
        rules = tuple(r for r in rules if r.code in chosen)
    found = [(rule_, finding) for rule_ in rules for finding in rule_.check(plan)]
    if not found:
        return []
    fired = {rule_.code for rule_, _ in found}
    return [to_diagnostic(plan, r, f) for r, f in found if not (r.suppressed_by & fired)]
