"""docs/files-and-limits.md's table of threat classes and surfaces, generated from spark_dsl.surface.

`python -m spark_dsl.surface_doc docs/files-and-limits.md` rewrites the part of the page between
the markers below; the prose around it is written by hand. tests/test_surface_inventory.py fails
when the page is stale.
"""

from __future__ import annotations

import sys
from pathlib import Path

from spark_dsl.surface import CLASSES, INVENTORY

BEGIN = "<!-- BEGIN GENERATED: python -m spark_dsl.surface_doc docs/files-and-limits.md -->"
END = "<!-- END GENERATED: surface inventory -->"


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def table() -> str:
    """The classes with what their suites throw, then every surface with its class and why."""
    out = [BEGIN, "", "| class | its hostile suite |", "|---|---|"]
    out += [f"| `{name}` | {_cell(suite)} |" for name, suite in CLASSES.items()]
    out += ["", "| surface | class | why |", "|---|---|---|"]
    out += [f"| `{_cell(key)}` | `{entry.threat}` | {_cell(entry.why)} |" for key, entry in INVENTORY.items()]
    out.append(END)
    return "\n".join(out)


def render_page(page: str) -> str:
    """The page with its generated part replaced (the markers must be there, once each)."""
    start, end = page.index(BEGIN), page.index(END) + len(END)
    return page[:start] + table() + page[end:]


if __name__ == "__main__":
    target = Path(sys.argv[1] if len(sys.argv) > 1 else "docs/files-and-limits.md")
    target.write_text(render_page(target.read_text(encoding="utf-8")), encoding="utf-8")
