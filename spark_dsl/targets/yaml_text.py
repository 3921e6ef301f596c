"""YAML built as data: PyYAML's safe dumper, key order as written, no anchors, comment headers."""

from __future__ import annotations

from typing import Any

import yaml

from spark_dsl.targets.shell_words import quote


class _Dumper(yaml.SafeDumper):
    """Never writes `&anchor`/`*alias`: a repeated object is written out again in full."""

    def ignore_aliases(self, data: Any) -> bool:
        return True


def _text(dumper: yaml.SafeDumper, data: str) -> yaml.ScalarNode:
    # Line breaks and control characters read best, and unambiguously, as double-quoted escapes.
    style = None if data.isprintable() else '"'
    return dumper.represent_scalar("tag:yaml.org,2002:str", data, style=style)


_Dumper.add_representer(str, _text)


def _dump(document: Any) -> str:
    return yaml.dump(
        document,
        Dumper=_Dumper,
        sort_keys=False,
        default_flow_style=False,
        allow_unicode=True,
        # Never fold long scalars (JSON flag values) over several lines.
        width=1 << 16,
    )


def comment(lines: list[str]) -> str:
    """`# ` lines; any line break or control character inside a line is escaped, never emitted."""
    out = []
    for line in lines:
        safe = line if line.isprintable() else quote(line)
        out.append(f"# {safe}".rstrip() + "\n")
    return "".join(out)


def document(data: Any, header: list[str]) -> str:
    """One YAML document under a comment header."""
    return comment(header) + _dump(data)


def documents(items: list[Any], header: list[str]) -> str:
    """Several documents, each opened by `---`, under one comment header."""
    return comment(header) + "".join("---\n" + _dump(item) for item in items)
