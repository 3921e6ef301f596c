"""YAML built as data: block style, key order as written, no anchors, comment headers.

The text is PyYAML's (`safe_dump` with `sort_keys=False`, `default_flow_style=False`,
`allow_unicode=True` and no line folding) with the scalar quoting rules below, byte for byte.
PyYAML's emitter is pure Python and examines every character of every scalar, which made it
most of a build's time; so the documents the targets build (mappings and lists of strings,
integers, booleans and None) are written here, and PyYAML writes only what this writer does not
know for certain: a string outside a small safe alphabet (each distinct one once, remembered),
a float, and any other shape (the whole document). tests/targets/test_yaml_writer.py compares both
writers on the committed targets' documents, on hostile values and on generated documents.

`BlockText` marks a string the generator wrote itself (a script, a dashboard's JSON) to be written as a
literal block scalar (`|`), one line of the text per line of YAML, so a reviewer reads it as text
and no line runs on; a text a block cannot hold exactly falls back to the quoting rules below.
"""

from __future__ import annotations

from functools import cache
from typing import TYPE_CHECKING, Any

from spark_dsl.patterns import lazy_regex
from spark_dsl.targets.shell_words import quote, remembered

if TYPE_CHECKING:
    import yaml


# Plain scalars that some reader takes for a number, a boolean or null although PyYAML (YAML 1.1)
# writes them plain: YAML 1.2's core schema (`1e3`, `0o17`, `+.5`), Go's yaml.v3 of Compose
# (`0b101`, `0X1F`, `1_000`: `_` dropped, any base prefix) and yaml.v2 of Kubernetes tooling (`y`,
# `n`). Compose reads `1e-3` as 0.001 and refuses `1e3` in `command`. One pattern for all of
# them (digits, base prefixes, `_`, `.`, signs, exponents), a little wider than any: a spare
# pair of quotes changes nothing a reader sees.
_NUMBER_LIKE = lazy_regex(r"[-+]?\.?[0-9][0-9a-fA-FxXoObB_.+-]*|[-+]?\.(inf|Inf|INF)|\.(nan|NaN|NAN)")
_BOOLS_1_1 = ("y", "Y", "n", "N", "yes", "Yes", "YES", "no", "No", "NO", "on", "On", "ON", "off", "Off", "OFF")
_WORDS = frozenset(
    (*_BOOLS_1_1, "true", "True", "TRUE", "false", "False", "FALSE", "null", "Null", "NULL", "~"),
)


def typed_plain(text: str) -> bool:
    """Whether a YAML 1.1 or 1.2 reader could read `text`, written plain, as other than a string."""
    return text in _WORDS or _NUMBER_LIKE.fullmatch(text) is not None


class BlockText(str):
    """A multi-line text to write as a literal block scalar (`|`) where one reads back the same."""


def block_fits(text: str) -> bool:
    """Whether a literal block holds `text` exactly, line for line.

    A block cannot hold a line that ends in a space or tab (PyYAML refuses it: the reader would strip
    it), a control character (no escapes in a block) or a line break other than `\n` (a reader
    turns `\r` and NEL into `\n`); such a text, a hostile value's, is quoted instead. A text of one
    line reads best quoted, as any other value.
    """
    return "\n" in text and text.replace("\n", "").isprintable() and " \n" not in text and not text.endswith(" ")


def _text(dumper: yaml.SafeDumper, data: str) -> yaml.ScalarNode:
    # Line breaks and control characters read best, and unambiguously, as double-quoted escapes;
    # text a reader would type is single-quoted, as PyYAML quotes what YAML 1.1 would type.
    style = None if data.isprintable() else '"'
    if style is None and typed_plain(data):
        style = "'"
    return dumper.represent_scalar("tag:yaml.org,2002:str", data, style=style)


def _block(dumper: yaml.SafeDumper, data: BlockText) -> yaml.ScalarNode:
    if block_fits(data):
        return dumper.represent_scalar("tag:yaml.org,2002:str", str(data), style="|")
    return _text(dumper, str(data))


# PyYAML is imported on first use, not with this module: `spark check` imports the target modules
# for their declarations (the schema's `target` bodies) and never writes YAML.
@cache
def _dumper() -> type[yaml.SafeDumper]:
    import yaml

    class Dumper(yaml.SafeDumper):
        """Never writes `&anchor`/`*alias`: a repeated object is written out again in full."""

        def ignore_aliases(self, data: Any) -> bool:
            return True

    Dumper.add_representer(str, _text)
    Dumper.add_representer(BlockText, _block)
    return Dumper


@cache
def _resolver() -> yaml.resolver.Resolver:
    import yaml

    return yaml.resolver.Resolver()


def _pyyaml(document: Any) -> str:
    """The reference: PyYAML's own emitter."""
    import yaml

    return yaml.dump(
        document,
        Dumper=_dumper(),
        sort_keys=False,
        default_flow_style=False,
        allow_unicode=True,
        # Never fold long scalars (JSON flag values) over several lines.
        width=1 << 16,
    )


# ---- the writer ---------------------------------------------------------------------------------

# Strings of this alphabet that PyYAML's scalar analysis lets stand plain in block context: no
# space, quote, line break or `#`; no indicator first (`-` only before another character, so
# never `- `); no `:` last (`: ` and a final `:` are indicators). `---` and `...` open a document
# and are left to PyYAML.
_SIMPLE = lazy_regex(r"(?!---|\.\.\.)(?:[A-Za-z0-9_./=+]|-(?=.))[A-Za-z0-9_./=:@+-]*(?<!:)")
_STR_TAG = "tag:yaml.org,2002:str"
# PyYAML folds a line longer than the width and gives a key of 128 characters or more a `? `
# line of its own; far below both, a scalar is written the same on any line of the document.
_SHORT = 1000
_KEY_SHORT = 120


class _Unknown(Exception):
    """A value this writer leaves to PyYAML: the whole document is written by PyYAML."""


def _plain_is_str(text: str) -> bool:
    """Whether a YAML 1.1 reader takes `text`, written plain, for a string (PyYAML's resolver)."""
    import yaml

    tag: str = _resolver().resolve(yaml.ScalarNode, text, (True, False))  # type: ignore[no-untyped-call]
    return tag == _STR_TAG


def _string(text: str, key: bool) -> str:
    """A string as PyYAML writes it, as a mapping key or as a value."""
    if len(text) >= (_KEY_SHORT if key else _SHORT):
        raise _Unknown
    if _SIMPLE.fullmatch(text):
        # Printable, so `_text` chose no style, or `'` for what a reader would type; single
        # quotes need no escape in this alphabet.
        return text if not typed_plain(text) and _plain_is_str(text) else f"'{text}'"
    if key:
        written = _pyyaml({text: 0})
        if written.startswith("?") or not written.endswith(": 0\n"):
            raise _Unknown
        return written[: -len(": 0\n")]
    written = _pyyaml([text])
    if not written.startswith("- ") or written.count("\n") != 1:
        raise _Unknown
    return written[2:-1]


# Strings as written, remembered (shell_words.remembered): most recur in every deployment (keys,
# flags, images).
_KEYS: dict[str, str] = {}
_VALUES: dict[str, str] = {}


def _key_text(text: str) -> str:
    return _string(text, True)


def _value_text(text: str) -> str:
    return _string(text, False)


# Exact types: PyYAML's safe dumper refuses a subclass (a str subclass, an OrderedDict), and so
# does this writer, by leaving the document to PyYAML.
def _scalar(value: Any) -> str:
    kind = type(value)
    if kind is str:
        return _VALUES.get(value) or remembered(_VALUES, value, _value_text)
    if value is True:
        return "true"
    if value is False:
        return "false"
    if value is None:
        return "null"
    if kind is int:
        return str(value)
    if kind is dict and not value:
        return "{}"
    if kind is list and not value:
        return "[]"
    raise _Unknown


def _literal(text: BlockText, indent: int) -> str:
    """A `BlockText` that fits (`block_fits`) as PyYAML writes it, its lines at `indent`: `|`, then `2` when
    the text starts with a space or a line break (the indentation is not the text's), then `-` when no
    line break ends it; a text ending in two breaks (PyYAML's `|+` and a `...` after the document)
    is left to PyYAML."""
    if text == "\n" or text.endswith("\n\n"):
        raise _Unknown
    hints = ("2" if text[0] in " \n" else "") + ("" if text.endswith("\n") else "-")
    pad = " " * indent
    lines = text.removesuffix("\n").split("\n")
    return f"|{hints}\n" + "".join(f"{pad}{line}\n" if line else "\n" for line in lines)


def _block_value(value: BlockText, indent: int) -> str:
    """The text after `key: ` or `- ` of a `BlockText` value whose lines go at `indent`, line break included."""
    if block_fits(value):
        return _literal(value, indent)
    return _scalar(str(value)) + "\n"


def _key(value: Any) -> str:
    if type(value) is not str:
        raise _Unknown
    return _KEYS.get(value) or remembered(_KEYS, value, _key_text)


def _mapping(data: dict[Any, Any], indent: int, lead: str, out: list[str]) -> None:
    """A non-empty mapping: the first key after `lead`, the others at `indent`."""
    # The remembered texts are read here, not through `_key` and `_scalar`: a build writes some
    # hundred keys per deployment, and the two calls for each were a quarter of this writer's time.
    keys, values = _KEYS, _VALUES
    pad = " " * indent
    prefix = lead
    for key, value in data.items():
        written = keys.get(key) if type(key) is str else None
        if written is None:
            written = _key(key)
        kind = type(value)
        if kind is str:
            out.append(f"{prefix}{written}: {values.get(value) or _scalar(value)}\n")
        elif kind is dict and value:
            out.append(f"{prefix}{written}:\n")
            _mapping(value, indent + 2, " " * (indent + 2), out)
        elif kind is list and value:
            out.append(f"{prefix}{written}:\n")
            _sequence(value, indent, pad, out)  # a list in a mapping is not indented
        elif kind is BlockText:
            out.append(f"{prefix}{written}: {_block_value(value, indent + 2)}")
        else:
            out.append(f"{prefix}{written}: {_scalar(value)}\n")
        prefix = pad


def _sequence(items: list[Any], indent: int, lead: str, out: list[str]) -> None:
    """A non-empty list: the first `- ` after `lead`, the others at `indent`."""
    values = _VALUES
    pad = " " * indent
    prefix = lead
    for item in items:
        kind = type(item)
        if kind is str:
            out.append(f"{prefix}- {values.get(item) or _scalar(item)}\n")
        elif kind is dict and item:
            _mapping(item, indent + 2, prefix + "- ", out)
        elif kind is list and item:
            _sequence(item, indent + 2, prefix + "- ", out)
        elif kind is BlockText:
            out.append(f"{prefix}- {_block_value(item, indent + 2)}")
        else:
            out.append(f"{prefix}- {_scalar(item)}\n")
        prefix = pad


def _dump(document: Any) -> str:
    """`document` as PyYAML writes it (see the module's docstring)."""
    out: list[str] = []
    try:
        if type(document) is dict and document:
            _mapping(document, 0, "", out)
        elif type(document) is list and document:
            _sequence(document, 0, "", out)
        else:
            raise _Unknown
    except _Unknown:
        return _pyyaml(document)
    return "".join(out)


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
