"""A rule's failing and fixed examples, as `spark explain`, hover and docs/rules.md show them, read
from the rule's fixture pair (`CODE.fail.spark`, `CODE.pass.spark`): an example is then what the
checker is tested on, by construction, never a text restated beside the rule.

The example is the fixture up to the end of its first `deployment` block (with the model or
profile it names, when the file declares one first), or, where the fixture marks them, the lines
between a `# example: begin` and a `# example: end` comment line. `# expect:` comments, which
speak to the tests, are left out.

The fixtures live in the checkout's tests/fixtures/rules; the wheel ships them as
`spark_dsl/rules/fixtures` (pyproject.toml), so an installed `spark explain` reads the same files.
"""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path
from textwrap import dedent

BEGIN = "# example: begin"
END = "# example: end"
_EXPECT = re.compile(r"\s*#\s*expect:.*$")


def fixtures() -> Path:
    """The folder of the rules' fixtures: the wheel's copy, else the checkout's."""
    here = Path(__file__).resolve().parent
    shipped = here / "fixtures"
    return shipped if shipped.is_dir() else here.parent.parent / "tests" / "fixtures" / "rules"


def excerpt(text: str) -> str:
    """The example a fixture shows: its marked lines, else all up to its first deployment's end."""
    lines = [_EXPECT.sub("", line).rstrip() for line in text.splitlines()]
    marked = [i for i, line in enumerate(lines) if line.strip() in (BEGIN, END)]
    if marked:
        if len(marked) != 2 or lines[marked[0]].strip() != BEGIN:
            raise ValueError(f"an example is marked by one `{BEGIN}` line and one `{END}` line after it")
        chosen = lines[marked[0] + 1 : marked[1]]
    else:
        chosen = lines[: _first_deployment_end(lines) + 1]
    return dedent("\n".join(chosen)).strip("\n") + "\n"


def _first_deployment_end(lines: list[str]) -> int:
    """The line of the `}` in the first column that closes the first deployment."""
    start = next((i for i, line in enumerate(lines) if line.startswith("deployment ")), None)
    if start is None:
        raise ValueError(f"no `deployment` block and no `{BEGIN}` marker to show")
    return next((i for i in range(start + 1, len(lines)) if lines[i] == "}"), len(lines) - 1)


@cache
def examples(code: str) -> tuple[str, str]:
    """The failing and the fixed example of the rule `code`."""
    failing, fixed = (
        excerpt((fixtures() / f"{code}.{kind}.spark").read_text(encoding="utf-8")) for kind in ("fail", "pass")
    )
    return failing, fixed
