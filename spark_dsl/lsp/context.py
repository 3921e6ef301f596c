"""Reads what is being typed at the cursor from the raw text, which is rarely valid while typing."""

from __future__ import annotations

import re
from enum import Enum

from msgspec import Struct, field

from spark_dsl.model_schema import MODEL_ROOT
from spark_dsl.model_schema import lookup as lookup_block

_TOKEN = re.compile(
    r"""
     (?P<comment>\#[^\n]*)
    |(?P<string>"(?:\\.|[^"\\\n])*"?)
    |(?P<name>[A-Za-z][A-Za-z0-9_-]*)
    |(?P<number>[0-9][0-9_.A-Za-z]*)
    |(?P<newline>\n)
    |(?P<punct>[{}()\[\]=+,])
    |(?P<other>[^\s])
    |\s+
    """,
    re.VERBOSE,
)
_WORD = re.compile(r"[A-Za-z0-9_-]*\Z")
_IMPORT = re.compile(r'^\s*import\s+"(?P<partial>[^"]*)\Z')
_EXTENDS = re.compile(
    r"^\s*(?:deployment|profile)\s+[A-Za-z][\w-]*\s+extends\s+(?:[A-Za-z][\w-]*\s*,\s*)*"
    r"(?P<partial>[A-Za-z][\w-]*)?\Z"
)
_VALUE = re.compile(r'^\s*(?P<key>"[^"]*"|[A-Za-z][\w-]*)\s*=\s*(?P<value>.*)\Z')
_TARGET = re.compile(r"^\s*(?P<kind>[A-Za-z][\w-]*)\s+(?P<partial>[A-Za-z][\w-]*)?\Z")
_KEY = re.compile(r"^\s*(?P<partial>[A-Za-z][\w-]*)?\Z")


class Want(Enum):
    STATEMENT = "statement"  # at the top level: `deployment`, `profile`, `model`, `import`
    KEY = "key"  # a key or block of the body the cursor is in
    VALUE = "value"  # a value for `key`
    LABEL = "label"  # the label of a block that takes one (`target KIND`)
    PROFILE = "profile"  # a profile after `extends`
    IMPORT = "import"  # a file path inside `import "..."`


class TypingContext(Struct, frozen=True):
    want: Want
    start: int  # where the partial word being replaced starts
    path: tuple[str, ...] | None = None  # schema path of the body, None at the top level
    key: str | None = None  # the key being assigned, or the block kind being labelled
    present: frozenset[str] = field(default_factory=frozenset)  # keys already in this body
    in_list: bool = False


class _Frame(Struct):
    path: tuple[str, ...] | None  # None when the block is unknown to the schema
    present: set[str] = field(default_factory=set)


def _frames(text: str, offset: int) -> list[_Frame]:
    """The bodies that are open at `offset`, outermost first, with the keys set in each."""
    frames: list[_Frame] = []
    line: list[tuple[str, str]] = []  # significant tokens of the current line
    previous: list[tuple[str, str]] = []  # those of the last non-empty line
    for match in _TOKEN.finditer(text, 0, offset):
        kind = match.lastgroup
        value = match.group()
        if kind in (None, "comment", "other"):
            continue
        if kind == "newline":
            if line:
                previous, line = line, []
            continue
        if value == "{":
            header = line or previous
            frames.append(_open(frames, [v for k, v in header if k in ("name", "string")]))
            line, previous = [], []
            continue
        if value == "}":
            if frames:
                frames.pop()
            line, previous = [], []
            continue
        if value == "=" and len(line) == 1 and frames:
            frames[-1].present.add(line[0][1].strip('"'))
        line.append((kind, value))
    return frames


def _open(frames: list[_Frame], header: list[str]) -> _Frame:
    if not frames:
        if header[:1] == ["model"]:  # a model declaration's body has its own schema
            return _Frame((MODEL_ROOT,))
        top = bool(header) and header[0] in ("deployment", "profile")
        return _Frame(() if top else None)
    parent = frames[-1].path
    if parent is None or not header:
        return _Frame(None)
    spec = lookup_block(parent)
    block = spec.blocks.get(header[0]) if spec is not None else None
    if block is None:
        return _Frame(None)
    if block.labels is not None and len(header) > 1:
        # Labelled blocks repeat (`target shell`, `target slurm`): the kind stays on offer.
        return _Frame((*parent, header[0], header[1].strip('"')))
    frames[-1].present.add(header[0])
    return _Frame((*parent, header[0]))


def _later_keys(text: str, offset: int) -> set[str]:
    """Keys set after the cursor in the same body, so completion does not offer them again."""
    keys: set[str] = set()
    depth = 0
    line: list[str] = []
    for match in _TOKEN.finditer(text, offset):
        value = match.group()
        kind = match.lastgroup
        if kind == "newline":
            line = []
        elif value == "{":
            if depth == 0 and line:
                keys.add(line[0])
            depth += 1
        elif value == "}":
            if depth == 0:
                break
            depth -= 1
        elif value == "=" and depth == 0 and len(line) == 1:
            keys.add(line[0].strip('"'))
        elif kind in ("name", "string", "number", "punct"):
            line.append(value)
    return keys


def typing_context(text: str, offset: int) -> TypingContext | None:
    """What the user is typing at `offset`, or None inside a comment or where nothing fits."""
    line_start = text.rfind("\n", 0, offset) + 1
    prefix = text[line_start:offset]
    if "#" in _strip_strings(prefix):
        return None
    if m := _IMPORT.match(prefix):
        return TypingContext(Want.IMPORT, offset - len(m["partial"]))
    word = _WORD.search(prefix)
    start = offset - len(word.group()) if word else offset
    if _EXTENDS.match(prefix):
        return TypingContext(Want.PROFILE, start)
    frames = _frames(text, offset)
    if not frames:
        return TypingContext(Want.STATEMENT, start) if _KEY.match(prefix) else None
    frame = frames[-1]
    if frame.path is None:
        return None
    if m := _VALUE.match(prefix):
        value = _strip_strings(m["value"])
        if value.count('"') % 2:
            return None  # inside a string
        in_list = value.count("[") > value.count("]")
        return TypingContext(Want.VALUE, start, frame.path, m["key"].strip('"'), in_list=in_list)
    if (m := _TARGET.match(prefix)) and m["kind"] not in frame.present:
        spec = lookup_block(frame.path)
        block = spec.blocks.get(m["kind"]) if spec is not None else None
        if block is not None and block.labels is not None:
            return TypingContext(Want.LABEL, start, frame.path, m["kind"])
    if _KEY.match(prefix):
        present = frozenset(frame.present | _later_keys(text, offset))
        return TypingContext(Want.KEY, start, frame.path, present=present)
    return None


def _strip_strings(text: str) -> str:
    """The text with complete string literals blanked, so `#` and `[` inside them do not count."""
    return re.sub(r'"(?:\\.|[^"\\])*"', '""', text)
