"""Writes each code's explain text to a local Markdown file, so diagnostics can link to it.

The project has no public documentation site; the installed explain texts
are the rule docs, and an editor opens a `file:` link in a tab.
"""

from __future__ import annotations

import os
from functools import cache
from pathlib import Path

from spark_dsl.lsp.uris import file_uri


def _folder() -> Path:
    from spark_dsl import __version__

    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "spark-dsl" / __version__ / "rules"


@cache
def rule_doc_uri(code: str) -> str | None:
    """A `file:` URI of the code's explain text, or None if the code or the cache is unavailable."""
    from spark_dsl.codes import lookup

    doc = lookup(code)
    if doc is None:
        return None
    path = _folder() / f"{doc.code}.md"
    text = doc.markdown()
    try:
        # Rewritten when the text changed, as in an editable install between releases.
        if not path.is_file() or path.read_text(encoding="utf-8") != text:
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp = path.with_suffix(f".{os.getpid()}.tmp")
            tmp.write_text(text, encoding="utf-8")
            os.replace(tmp, path)
    except OSError:
        return None
    return file_uri(path)
