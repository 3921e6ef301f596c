"""The one table from a key's `Kind` to the reader that checks its value and returns it typed.

A reader is a plain function `(context, key spec, value) -> typed value`; it reports through the
context, which raises once the diagnostic is in the sink. A new kind is a reader, in the module of
its family, and a row here.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from spark_dsl.schema import KeySpec, Kind
from spark_dsl.syntax import ast
from spark_dsl.typecheck.context import Context
from spark_dsl.typecheck.numbers import read_fraction, read_integer, unit_reader
from spark_dsl.typecheck.parallel import read_parallel
from spark_dsl.typecheck.secrets import read_secret
from spark_dsl.typecheck.speculative import read_speculative
from spark_dsl.typecheck.strings import read_bool, read_string, read_string_list
from spark_dsl.typecheck.symbols import read_model, read_symbol, read_symbol_list
from spark_dsl.typecheck.volumes import read_volume

if TYPE_CHECKING:
    from collections.abc import Callable

    # Only a type: building the alias at run time would cost every cold start its subscriptions.
    Reader = Callable[[Context, KeySpec, ast.Value], Any]

READERS: dict[Kind, Reader] = {
    Kind.INTEGER: read_integer,
    Kind.COUNT: unit_reader("count", "32K"),
    Kind.SIZE: unit_reader("size", "64GiB"),
    Kind.DURATION: unit_reader("duration", "4h"),
    Kind.FRACTION: read_fraction,
    Kind.BOOL: read_bool,
    Kind.STRING: read_string,
    Kind.SYMBOL: read_symbol,
    Kind.MODEL: read_model,
    Kind.SYMBOL_LIST: read_symbol_list,
    Kind.STRING_LIST: read_string_list,
    Kind.PARALLEL: read_parallel,
    Kind.SPECULATIVE: read_speculative,
    Kind.SECRET: read_secret,
    Kind.VOLUME: read_volume,
}
