"""TOML and JSON read with a nesting limit, so no file can make a parser recurse until Python stops it.

tomllib parses arrays and inline tables by recursion, and so does `json`'s C scanner: a
`pyproject.toml` of 100,000 `[` (root discovery parses every one above a spec), a
`config.json` of 100,000 `[` (`spark model import`) or a build manifest of them raised
RecursionError, a traceback. Each text is pre-scanned first: strings and comments are skipped,
and the brackets that open an array or a table counted. A text nested deeper than MAX_NESTING
is refused with the offset of the bracket that goes too deep, before the parser sees it. The
scan is an approximation of each grammar (it needs only to find brackets outside strings), so
a RecursionError the parser raises all the same is caught and refused too: none escapes.

No file spark reads nests more than a handful of levels: a Hugging Face config.json 3 or 4, a
manifest 4, a `[tool.spark]` table 3.
"""

from __future__ import annotations

import re
from typing import Any

from msgspec import Struct

from spark_dsl.patterns import lazy_regex

MAX_NESTING = 64

# What the scan must see: strings and comments (skipped whole, their brackets are text) and the
# brackets. Possessive repeats: a long string is one match with no backtracking state.
_JSON_TOKENS = lazy_regex(r'"(?:[^"\\]++|\\.)*+"?|[\[\]{}]', re.S)
_TOML_TOKENS = lazy_regex(
    r'"""(?:[^"\\]++|\\.|"(?!""))*+(?:"""|$)'
    r"|'''(?:[^']++|'(?!''))*+(?:'''|$)"
    r'|"(?:[^"\\\n]++|\\.)*+"?'
    r"|'[^'\n]*+'?"
    r"|#[^\n]*+"
    r"|[\[\]{}]",
    re.S,
)


class TooDeep(Struct, frozen=True):
    """A text nested past MAX_NESTING: where the bracket that goes too deep is (None: the parser said so)."""

    offset: int | None

    def reason(self) -> str:
        where = f" (the bracket at offset {self.offset:,})" if self.offset is not None else ""
        return f"it nests arrays or tables more than {MAX_NESTING} levels deep{where}"

    help = "flatten the file: no setting spark reads nests more than a few levels"


def too_deep(text: str, tokens: re.Pattern[str]) -> TooDeep | None:
    """The first bracket that opens level MAX_NESTING + 1, if any."""
    if text.count("[") + text.count("{") <= MAX_NESTING:
        return None  # too few brackets to go too deep: most files, with no scan (C-speed counts)
    depth = 0
    for match in tokens.finditer(text):
        bracket = match.group()
        if bracket in "[{":
            depth += 1
            if depth > MAX_NESTING:
                return TooDeep(match.start())
        elif bracket in "]}":
            depth = max(depth - 1, 0)
    return None


def load_toml(text: str) -> dict[str, Any] | ValueError | TooDeep:
    """The TOML document, tomllib's error (a ValueError), or TooDeep; never raises."""
    deep = too_deep(text, _TOML_TOKENS)
    if deep is not None:
        return deep
    import tomllib

    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as err:
        return err
    except RecursionError:
        return TooDeep(None)


def load_json(text: str) -> Any | ValueError | TooDeep:
    """The JSON value, json's error (a ValueError), or TooDeep; never raises."""
    deep = too_deep(text, _JSON_TOKENS)
    if deep is not None:
        return deep
    import json

    try:
        return json.loads(text)
    except ValueError as err:
        return err
    except RecursionError:
        return TooDeep(None)
