"""The user's `serve.extra_args`, read once as options with vLLM's flag table.

The compiler's own options are data from the start (plan/options.py); the user's extra arguments
are the one part of a launch written as words, so they are read here, the way vLLM's parser
takes them, for the rules that judge them (SPK902) and the vLLM config target that writes them as
keys. The launch keeps the words as given (`Launch.extra_args`): its argv shows what was written.
"""

from __future__ import annotations

from typing import Any

from msgspec import Struct


class ExtraOption(Struct, frozen=True):
    """One option of `extra_args`: where it is in the list and how many items it takes (itself and
    any values given apart), its name as written (no `=value`), vLLM's destination (None when the
    pinned vLLM does not know the name), whether it is the negative spelling of a switch, its
    values, whether it is a switch (vLLM takes no value after it), and whether fewer values follow
    it than vLLM needs."""

    index: int
    count: int
    name: str
    dest: str | None
    negative: bool
    values: tuple[str, ...]
    switch: bool
    missing: bool = False


class ExtraArgs(Struct, frozen=True):
    """`extra_args` read: its options in order, and the items no option takes (vLLM would refuse
    them as positional arguments), by index."""

    options: tuple[ExtraOption, ...]
    strays: tuple[int, ...]


def canonical(token: str) -> str:
    """The option a word names: `--max_model_len=8` -> `--max-model-len`; `-sc.method` -> `-sc`
    (vLLM's dotted JSON keys); underscores in a long option's name count as dashes."""
    name = token.split("=", 1)[0].split(".", 1)[0]
    return "--" + name[2:].replace("_", "-") if name.startswith("--") else name


def destination(token: str) -> str | None:
    """vLLM's destination of the option a word names, under any of its spellings."""
    # The flag table (and vllm_flags' dataclass) loads only for a spec with extra_args: a cold
    # `spark check` of specs without them stays light (tests/test_cli_check.py).
    from spark_dsl.vllm_flags import flag_table

    dest: str | None = flag_table()["options"].get(canonical(token))
    return dest


def _action(dest: str | None) -> dict[str, Any]:
    from spark_dsl.vllm_flags import flag_table

    return flag_table()["actions"][dest] if dest is not None else {}


def read(tokens: tuple[str, ...]) -> ExtraArgs:
    """`extra_args` as vLLM's parser takes it: an option takes the values after it that are not
    options themselves, as many as its arity allows (one, for an option vLLM does not know)."""
    from spark_dsl.vllm_flags import looks_like_option

    options: list[ExtraOption] = []
    strays: list[int] = []
    i = 0
    while i < len(tokens):
        token = tokens[i]
        if not looks_like_option(token):
            strays.append(i)
            i += 1
            continue
        option = _option(tokens, i)
        options.append(option)
        i += option.count
    return ExtraArgs(tuple(options), tuple(strays))


def _option(tokens: tuple[str, ...], index: int) -> ExtraOption:
    from spark_dsl.vllm_flags import looks_like_option

    token = tokens[index]
    name, eq, inline = token.partition("=")
    dest = destination(token)
    action = _action(dest)
    negative = canonical(token) in action.get("negative", ())
    nargs = action.get("nargs") if dest is not None else None
    switch = dest is not None and nargs == 0
    if eq or switch:
        return ExtraOption(index, 1, name, dest, negative, (inline,) if eq else (), switch)
    most, least = _arity(nargs, known=dest is not None)
    values: list[str] = []
    for following in tokens[index + 1 : index + 1 + most]:
        if looks_like_option(following):
            break
        values.append(following)
    return ExtraOption(index, 1 + len(values), name, dest, negative, tuple(values), False, len(values) < least)


def _arity(nargs: Any, known: bool) -> tuple[int, int]:
    """How many values an option takes apart at most and at least (argparse's `nargs`); an option
    the pinned vLLM does not know takes the one value after it, if one follows."""
    if not known:
        return 1, 0
    if nargs in ("+", "*"):
        return 1 << 30, 1 if nargs == "+" else 0
    if nargs == "?":
        return 1, 0
    count = 1 if nargs is None else int(nargs)
    return count, count
