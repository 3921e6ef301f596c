"""docs/models.md's "Which rules apply" block, written from the rule table: which rules are the
recipe's own (`@recipe_only`) and what every other model-facing rule (SPK2xx, SPK3xx) checks, so
the page says what the code does. `python -m spark_dsl.rules_scope_doc docs/models.md` rewrites
the block; tests/test_convergence_grid.py fails while it is stale."""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

from spark_dsl.rules.registry import Rule, is_recipe_rule
from spark_dsl.rules.table import all_rules

BEGIN = "<!-- BEGIN GENERATED: python -m spark_dsl.rules_scope_doc docs/models.md -->"
END = "<!-- END GENERATED: rules by scope -->"
# The rules about a model and its layout; the others (front end, targets, production) read no
# model fact and are the same for every model.
MODEL_FACING = ("SPK2", "SPK3", "SPK4")


def _ranges(codes: list[str]) -> str:
    """`SPK201, SPK202, SPK204-SPK214`: consecutive codes joined."""
    out: list[list[int]] = []
    for n in sorted(int(c[3:]) for c in codes):
        if out and out[-1][-1] == n - 1:
            out[-1].append(n)
        else:
            out.append([n])
    return ", ".join(f"SPK{r[0]}" if len(r) == 1 else f"SPK{r[0]}-SPK{r[-1]}" for r in out)


def _row(rule_: Rule) -> str:
    severity = "" if rule_.severity.value == "error" else f" ({rule_.severity.value})"
    return f"| {rule_.code}{severity} | {rule_.doc.title} |"


def block() -> str:
    rules = [r for r in all_rules() if r.code.startswith(MODEL_FACING)]
    recipe = [r.code for r in rules if is_recipe_rule(r)]
    generic = [r for r in rules if not is_recipe_rule(r)]
    intro = (
        "The recipe's own rules are marked `@recipe_only` where they are declared and run only on plans "
        f"of the recipe's model (`recipe.yaml`'s `model`): {_ranges(recipe)}. Every other rule about a "
        "model and its layout reads the model's facts and applies to every model (`spark explain CODE` "
        "gives each rule's whole text):"
    )
    out = [BEGIN, "", *textwrap.wrap(intro, 100), "", "| code | reports |", "|---|---|"]
    out += [_row(r) for r in generic]
    out.append(END)
    return "\n".join(out)


def render_page(page: str) -> str:
    """The page with its generated part replaced (the markers must be there, once each)."""
    start, end = page.index(BEGIN), page.index(END) + len(END)
    return page[:start] + block() + page[end:]


if __name__ == "__main__":
    target = Path(sys.argv[1] if len(sys.argv) > 1 else "docs/models.md")
    target.write_text(render_page(target.read_text(encoding="utf-8")), encoding="utf-8")
