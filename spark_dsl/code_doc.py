"""A diagnostic code's explain text. A leaf: every table of codes (front end, configuration, build,
rules) imports this, and the registry in `spark_dsl.codes` imports those tables, so the type lives
apart from the registry and no import goes in a circle."""

from __future__ import annotations

from msgspec import Struct


class CodeDoc(Struct, frozen=True):
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
