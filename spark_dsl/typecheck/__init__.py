"""Checks a body against the schema table: keys, types, units and symbols (SPK1xx), into typed values.

`walk` walks a body entry by entry; each value goes to the reader of its key's kind, one table in
`readers` (`numbers`, `symbols`, `strings`, `parallel`, `speculative`, `secrets`, `volumes`), with
the arguments of call values in `calls` and the checks on names in `names`. Every reader reports
through the `context` it is given. docs/architecture.md draws the map.
"""

from __future__ import annotations

from spark_dsl.typecheck.context import describe, did_you_mean
from spark_dsl.typecheck.names import ENV_NAME, SECRET_KEY, SECRET_NAME, env_name, kubernetes_secret_key, secret_name
from spark_dsl.typecheck.numbers import MAX_INTEGER
from spark_dsl.typecheck.walk import BodyChecker

__all__ = [
    "ENV_NAME",
    "MAX_INTEGER",
    "SECRET_KEY",
    "SECRET_NAME",
    "BodyChecker",
    "describe",
    "did_you_mean",
    "env_name",
    "kubernetes_secret_key",
    "secret_name",
]
