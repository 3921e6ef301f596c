"""`spark check --statistics`: one line per code reported, with its count, as `ruff --statistics`.

Most frequent first, then by code. `[*]` marks a code one of whose diagnostics has a safe fix
(`spark check --fix` would fix it), as ruff marks its fixable rules. The title comes from the code
registry (`spark explain CODE` has the rest).
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence

from spark_dsl.diagnostics import Diagnostic


def counts(diagnostics: Sequence[Diagnostic]) -> list[tuple[str, int, bool]]:
    """(code, count, has a safe fix) for every code, most frequent first."""
    counted = Counter(d.code for d in diagnostics)
    fixable = {d.code for d in diagnostics if any(fix.safe for fix in d.fixes)}
    return sorted(((code, n, code in fixable) for code, n in counted.items()), key=lambda row: (-row[1], row[0]))


def render_text(diagnostics: Sequence[Diagnostic]) -> str:
    from spark_dsl.codes import lookup

    rows = counts(diagnostics)
    if not rows:
        return ""
    width = len(str(rows[0][1]))
    lines = []
    for code, n, fixable in rows:
        doc = lookup(code)
        marker = "[*]" if fixable else "[ ]"
        lines.append(f"{n:>{width}}\t{code}\t{doc.severity if doc else '':<7}\t{marker} {doc.title if doc else ''}")
    return "\n".join(lines) + "\n"


def render_json(diagnostics: Sequence[Diagnostic]) -> str:
    from spark_dsl.codes import lookup

    rows = []
    for code, n, fixable in counts(diagnostics):
        doc = lookup(code)
        rows.append(
            {
                "code": code,
                "severity": doc.severity if doc else None,
                "title": doc.title if doc else None,
                "count": n,
                "fixable": fixable,
            }
        )
    return json.dumps(rows, indent=2) + "\n"
