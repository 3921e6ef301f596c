"""YAML built as data: PyYAML's safe dumper, key order as written, no anchors, comment headers."""

from __future__ import annotations

import re
from typing import Any

import yaml

from spark_dsl.targets.shell_words import quote


class _Dumper(yaml.SafeDumper):
    """Never writes `&anchor`/`*alias`: a repeated object is written out again in full."""

    def ignore_aliases(self, data: Any) -> bool:
        return True


# Plain scalars that some reader takes for a number, a boolean or null although PyYAML (YAML 1.1)
# writes them plain: YAML 1.2's core schema (`1e3`, `0o17`, `+.5`), Go's yaml.v3 of Compose
# (`0b101`, `0X1F`, `1_000`: `_` dropped, any base prefix) and yaml.v2 of Kubernetes tooling (`y`,
# `n`). Compose reads `1e-3` as 0.001 and refuses `1e3` in `command`. One pattern for all of
# them (digits, base prefixes, `_`, `.`, signs, exponents), a little wider than any: a spare
# pair of quotes changes nothing a reader sees.
_NUMBER_LIKE = re.compile(r"[-+]?\.?[0-9][0-9a-fA-FxXoObB_.+-]*|[-+]?\.(inf|Inf|INF)|\.(nan|NaN|NAN)")
_BOOLS_1_1 = ("y", "Y", "n", "N", "yes", "Yes", "YES", "no", "No", "NO", "on", "On", "ON", "off", "Off", "OFF")
_WORDS = frozenset(
    (*_BOOLS_1_1, "true", "True", "TRUE", "false", "False", "FALSE", "null", "Null", "NULL", "~"),
)


def typed_plain(text: str) -> bool:
    """Whether a YAML 1.1 or 1.2 reader could read `text`, written plain, as other than a string."""
    return text in _WORDS or _NUMBER_LIKE.fullmatch(text) is not None


def _text(dumper: yaml.SafeDumper, data: str) -> yaml.ScalarNode:
    # Line breaks and control characters read best, and unambiguously, as double-quoted escapes;
    # text a reader would type is single-quoted, as PyYAML quotes what YAML 1.1 would type.
    style = None if data.isprintable() else '"'
    if style is None and typed_plain(data):
        style = "'"
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
