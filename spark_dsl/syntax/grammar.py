"""Where the grammar file is. A leaf, so the parser and the table generator both read it without
importing each other."""

from __future__ import annotations

from pathlib import Path


def grammar_path() -> Path:
    """The shipped grammar (inside the wheel) or the repository's own copy."""
    here = Path(__file__).resolve().parent.parent
    shipped = here / "grammar" / "spark.lark"
    return shipped if shipped.exists() else here.parent / "grammar" / "spark.lark"
