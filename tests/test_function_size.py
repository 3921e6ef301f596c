"""Small units (issue 13, item 4): no function in spark_dsl is over 60 lines unless a comment right
above it (or above its decorators) starts with `# Long:` and says why, so a long function is a
decision someone wrote down, not something that grew."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "spark_dsl"
LIMIT = 60


def _long_functions(path: Path) -> list[str]:
    """`file:line name (N lines)` for each function over the limit without a `# Long:` reason."""
    text = path.read_text(encoding="utf-8")
    lines = text.splitlines()
    found = []
    for node in ast.walk(ast.parse(text)):
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        length = (node.end_lineno or node.lineno) - node.lineno + 1
        if length <= LIMIT:
            continue
        first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
        above = lines[first - 2].strip() if first >= 2 else ""
        # A reason may run over several comment lines: the first of them starts with `# Long:`.
        i = first - 2
        while i > 0 and lines[i - 1].strip().startswith("#") and not above.startswith("# Long:"):
            i -= 1
            above = lines[i].strip()
        if not above.startswith("# Long:"):
            found.append(f"{path.relative_to(PACKAGE)}:{node.lineno} {node.name} ({length} lines)")
    return found


def test_no_function_is_long_without_a_written_reason() -> None:
    found = [each for path in sorted(PACKAGE.rglob("*.py")) for each in _long_functions(path)]
    assert not found, "split these, or write `# Long: why` right above them:\n" + "\n".join(found)


def test_the_scan_finds_a_long_function_and_reads_its_reason(tmp_path: Path) -> None:
    global PACKAGE
    body = "".join(f"    x{i} = {i}\n" for i in range(LIMIT))
    sample = tmp_path / "sample.py"
    sample.write_text(f"def grown():\n{body}\n\n# Long: one table of data.\n@staticmethod\ndef kept():\n{body}")
    saved, PACKAGE = PACKAGE, tmp_path
    try:
        assert _long_functions(sample) == [f"sample.py:1 grown ({LIMIT + 1} lines)"]
    finally:
        PACKAGE = saved
