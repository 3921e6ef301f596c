"""Regular expressions compiled when first used, not when their module loads.

`re.compile` runs the pure-Python `re._parser` and `re._compiler`: 0.1-0.3 ms a pattern, and the
modules on `spark check`'s path declare some thirty patterns, most of which a clean spec never
reaches (the Slurm directive checks, the YAML writer's, the project file's header syntax). A
`lazy_regex(...)` stands in for the compiled object: its first method call compiles it, and every
call after goes straight to the compiled pattern's method.
"""

from __future__ import annotations

import re
from typing import Any, cast


class _Deferred:
    def __init__(self, source: str, flags: int) -> None:
        self._source = source
        self._flags = flags
        self._compiled: re.Pattern[str] | None = None

    def __getattr__(self, name: str) -> Any:
        # Reached only for a name the instance does not have yet (`match`, `fullmatch`, ...): the
        # compiled pattern's attribute is kept on the instance, so later calls never come here.
        if self._compiled is None:
            self._compiled = re.compile(self._source, self._flags)
        value = getattr(self._compiled, name)
        setattr(self, name, value)
        return value


def lazy_regex(source: str, flags: int = 0) -> re.Pattern[str]:
    """`re.compile(source, flags)`, compiled on first use and kept by the stand-in."""
    return cast("re.Pattern[str]", _Deferred(source, flags))
