"""The registry of diagnostic codes and their explain texts: one source for `explain`, hover, SARIF and docs."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache


@dataclass(frozen=True, slots=True)
class CodeDoc:
    """A code's explain text, in four fixed sections."""

    code: str
    severity: str
    title: str
    checks: str
    basis: str
    failing: str
    fixed: str

    def markdown(self) -> str:
        return (
            f"## {self.code}: {self.title}\n\n"
            f"Default severity: {self.severity}\n\n"
            f"### What it checks\n\n{self.checks}\n\n"
            f"### Why\n\n{self.basis}\n\n"
            f"### Failing example\n\n```\n{self.failing.rstrip()}\n```\n\n"
            f"### Fix\n\n```\n{self.fixed.rstrip()}\n```\n"
        )

    def text(self) -> str:
        def indent(block: str) -> str:
            return "\n".join("    " + line if line else "" for line in block.rstrip().splitlines())

        return (
            f"{self.code} ({self.severity}): {self.title}\n\n"
            f"What it checks:\n{indent(self.checks)}\n\n"
            f"Why:\n{indent(self.basis)}\n\n"
            f"Failing example:\n{indent(self.failing)}\n\n"
            f"Fix:\n{indent(self.fixed)}\n"
        )


@cache
def registry() -> dict[str, CodeDoc]:
    """Every code the compiler can report, by code, in code order."""
    from spark_dsl import front_end_codes

    docs: dict[str, CodeDoc] = {}
    sources = [front_end_codes.CODES]
    try:
        from spark_dsl.rules import registry as rule_registry
    except ImportError:  # the rules layer is optional while it is being built
        pass
    else:
        sources.append([rule.doc for rule in rule_registry.all_rules()])
    for group in sources:
        for doc in group:
            if doc.code in docs:
                raise ValueError(f"diagnostic code {doc.code} is defined twice")
            docs[doc.code] = doc
    return dict(sorted(docs.items()))


def lookup(code: str) -> CodeDoc | None:
    return registry().get(code.strip().upper())


def close_codes(code: str) -> list[str]:
    """Codes near an unknown one: the nearest numbers in its range, else similar spellings."""
    from difflib import get_close_matches

    code = code.strip().upper()
    known = list(registry())
    digits = code[3:]
    if code.startswith("SPK") and digits.isdigit() and len(digits) == 3:
        same_range = [c for c in known if c[3] == digits[0]]
        same_range.sort(key=lambda c: (abs(int(c[3:]) - int(digits)), c))
        if same_range:
            return same_range[:5]
    return get_close_matches(code, known, n=5, cutoff=0.5)
