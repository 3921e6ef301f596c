"""A catalog file's decoding error or refused string, said as the file's field and the value
written there.

msgspec's message names the expected type and a path, but a path through a mapping reads
`$.accelerators[...].memory_gb`: which entry is left out, and so is the value. This module walks
the path through the YAML data and the record types together, finds the entry (the first one
that does not decode, which is the one msgspec stopped at), and says
`accelerators.b200.memory_gb: 'lots': expected ...`. The records' string patterns are checked
here too (`mismatches`), against the JSON Schema msgspec makes from them. Build time only.
"""

from __future__ import annotations

import re
import types
from collections.abc import Mapping
from typing import TYPE_CHECKING, Annotated, Any, Union, get_args, get_origin, get_type_hints

import msgspec

from spark_dsl.catalog import KEYED

if TYPE_CHECKING:
    from collections.abc import Iterable, Iterator

    import jsonschema

# `Expected ... - at `$.a[...].b``, `... - at `key` in `$.a``, or no path at all (the top level).
_ERROR = re.compile(r"^(?P<message>.*?)(?: - at `(?P<key>key)` in `(?P<keyed>[^`]*)`| - at `(?P<path>[^`]*)`)?$", re.S)
_STEP = re.compile(r"\.(?P<field>[A-Za-z_][A-Za-z0-9_]*)|\[(?P<index>\d+|\.\.\.)\]")
_UNKNOWN = re.compile(r"^Object contains unknown field `(?P<name>[^`]+)`$")


def describe(err: msgspec.ValidationError, data: Any, shape: Any) -> str:
    """`PATH: VALUE: what is wrong` for an error of `msgspec.convert(data, shape)`."""
    found = _ERROR.match(str(err))
    assert found is not None  # the pattern's path part is optional: every message matches
    message, path = found["message"], found["keyed"] or found["path"] or "$"
    where, value, shape = _walk(data, shape, path)
    if found["key"]:
        key = next(k for k in value if not _decodes(k, _key_type(shape)))
        return f"{_dotted(where)}: the key {key!r}: {_lower(message)}"
    unknown = _UNKNOWN.match(message)
    if unknown:
        name = unknown["name"]
        return f"{_dotted([*where, name])}: {value[name]!r}: unknown field; {_fields(shape)}"
    if message.startswith("Object missing required field"):
        return f"{_dotted(where)}: {_lower(message)}"
    return f"{_dotted(where)}: {value!r}: {_lower(message)}"


def mismatches(data: Any, shape: Any) -> list[str]:
    """`PATH: VALUE does not match PATTERN` for each string of decoded `data` that its pattern
    (`catalog.matching`) refuses, checked against the JSON Schema made from `shape`."""
    import jsonschema

    validator = jsonschema.Draft202012Validator(msgspec.json.schema(shape))
    return [_refused(e) for e in _leaves(validator.iter_errors(data))]


def _leaves(errors: Iterable[jsonschema.ValidationError]) -> Iterator[jsonschema.ValidationError]:
    """The errors themselves; of a union (`anyOf`: a pattern or null) the branch's own errors, as
    the data decoded, so it is of the string branch's type and the refusal is its pattern."""
    for error in errors:
        if error.validator == "anyOf":
            yield from _leaves(e for e in error.context if e.validator != "type")
        else:
            yield error


def _refused(error: jsonschema.ValidationError) -> str:
    where = _dotted([str(p) for p in error.absolute_path])
    key = "the key " if "propertyNames" in error.absolute_schema_path else ""
    return f"{where}: {key}{error.message}"


def _walk(data: Any, shape: Any, path: str) -> tuple[list[str], Any, Any]:
    """The concrete steps of msgspec's path (each `[...]` made the entry's key), and the value and
    the type found at its end."""
    where: list[str] = []
    for step in _STEP.finditer(path[1:]):
        shape = _narrow(shape, data)
        if step["field"]:
            name = step["field"]
            data, shape = data[name], _field_type(shape, name)
        elif step["index"] == "...":
            value_type = get_args(shape)[1]
            name = next(k for k, v in data.items() if not _decodes(v, value_type))
            data, shape = data[name], value_type
        else:
            name = step["index"]
            data, shape = data[int(name)], get_args(shape)[0]
        where.append(str(name))
    return where, data, _narrow(shape, data)


def _narrow(shape: Any, data: Any) -> Any:
    """The type `data` is read as: `Annotated` unwrapped, and of a union (`Record | None`) the
    member for a mapping or a list, where there is one."""
    while get_origin(shape) is Annotated:
        shape = get_args(shape)[0]
    if get_origin(shape) in (Union, types.UnionType):
        members = [_narrow(m, data) for m in get_args(shape) if m is not type(None)]
        containers = [m for m in members if _is_record(m) or get_origin(m) in (dict, Mapping, tuple)]
        return containers[0] if len(containers) == 1 else shape
    return shape


def _is_record(shape: Any) -> bool:
    return isinstance(shape, type) and issubclass(shape, msgspec.Struct)


def _field_type(record: Any, name: str) -> Any:
    by_name = {f.encode_name: f.name for f in msgspec.structs.fields(record)}
    return get_type_hints(record, include_extras=True)[by_name[name]]


def _key_type(shape: Any) -> Any:
    return get_args(_narrow(shape, {}))[0]


def _fields(record: Any) -> str:
    if not _is_record(record):
        return "no field is allowed here"
    keyed = KEYED.get(record)
    names = [f.encode_name for f in msgspec.structs.fields(record) if f.name != keyed]
    return f"the fields are {', '.join(names)}"


def _decodes(value: Any, shape: Any) -> bool:
    try:
        msgspec.convert(value, shape)
    except msgspec.ValidationError:
        return False
    return True


def _dotted(where: list[str]) -> str:
    return ".".join(where) or "(top level)"


def _lower(message: str) -> str:
    return message[:1].lower() + message[1:]
