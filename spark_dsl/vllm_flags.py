"""Check a `vllm serve` launch against the committed flag table of the pinned vLLM release.

The table, spark_dsl/data/vllm_flags.json, was dumped from vLLM's own serve parser by
tools/vllm-parser/dump_flags.py; it records every option string (hidden `--no-enable-X` aliases
included), its arity and choices, the value sets of the checks vLLM defers until a model is
loaded, and the names of vLLM's environment variables. This module needs no vLLM: the
authoritative proof is the real-parser tier (spark_dsl.vllm_verify); this is the fast check.

Stricter than vLLM where vLLM is lenient on purpose: abbreviated options (vLLM takes unique
prefixes) and an option given twice (vLLM warns, the last wins) are problems here.
"""

from __future__ import annotations

import contextlib
import json
import re
from bisect import bisect_left
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

__all__ = [
    "FlagProblem",
    "check_argv",
    "check_config",
    "flag_table",
    "known_env_var",
    "looks_like_option",
    "table_version",
]


# A dataclass, not a Struct as spark's other records are: this module runs in vLLM's own
# environment too, with the standard library only (tests/test_vllm_flags.py).
@dataclass(frozen=True)
class FlagProblem:
    """One thing vLLM would reject (or silently ignore) in a launch. `option` as written."""

    option: str
    message: str
    # The full spelling of an abbreviated option, or the nearest known one.
    suggestion: str | None = None


@cache
def flag_table() -> dict[str, Any]:
    """The committed flag table, read once."""
    # Beside this module, as the other shipped data is read (spark_dsl/targets/declared.py):
    # importlib.resources imports zipfile, tempfile and random first: about 5 ms of a build
    # (`python -X importtime`).
    text = (Path(__file__).parent / "data" / "vllm_flags.json").read_text("utf-8")
    table: dict[str, Any] = json.loads(text)
    return table


def table_version() -> str:
    """The vLLM release the flag table was dumped from."""
    return str(flag_table()["meta"]["vllm_version"])


@cache
def _env_vars() -> frozenset[str]:
    return frozenset(flag_table()["env_vars"])


def known_env_var(name: str) -> bool:
    """Whether vLLM reads this environment variable (a name in `vllm.envs`)."""
    return name in _env_vars()


# -- argv ----------------------------------------------------------------------------------------

_NEGATIVE_NUMBER = re.compile(r"^-\d+$|^-\d*\.\d+$")
_HUMAN_INT = re.compile(r"(\d+(?:\.\d+)?)([kmgt])|(\d+)([KMGT])|(-?\d+)")
_OPT_LEVELS = {"0", "1", "2", "3"}


def looks_like_option(token: str) -> bool:
    """What argparse takes for an option rather than a value (vLLM has no numeric options)."""
    return token.startswith("-") and len(token) > 1 and not _NEGATIVE_NUMBER.match(token) and " " not in token


def _normalise(name: str) -> str:
    """vLLM's spelling rule: underscores in a long option's name count as dashes."""
    return "--" + name[2:].replace("_", "-") if name.startswith("--") else name


def _close(word: str, candidates: list[str]) -> str | None:
    """The nearest candidate, if any is near (difflib is imported only when one is wanted)."""
    import difflib

    found = difflib.get_close_matches(word, candidates, n=1, cutoff=0.6)
    return found[0] if found else None


@cache
def _long_options() -> list[str]:
    """vLLM's long options, sorted: an abbreviation's completions are one run of the list."""
    return sorted(o for o in flag_table()["options"] if o.startswith("--"))


def _completions(name: str) -> list[str]:
    """The long options `name` abbreviates, found by bisection (a list can hold thousands of names)."""
    options = _long_options()
    i = bisect_left(options, name)
    found = []
    while i < len(options) and options[i].startswith(name):
        found.append(options[i])
        i += 1
    return found


# Unknown options of one list that get a "did you mean": each is a search of vLLM's ~500
# options, and a list can hold tens of thousands of options (a tenth of a second per thousand).
SUGGESTED_UNKNOWN = 20


def _unknown(name: str, suggest: bool = True) -> FlagProblem:
    prefixed = _completions(name) if len(name) > 2 else []
    if len(prefixed) == 1:
        return FlagProblem(name, f"abbreviated option: write {prefixed[0]} in full", prefixed[0])
    if prefixed:
        shown = ", ".join(prefixed[:5]) + (", ..." if len(prefixed) > 5 else "")
        return FlagProblem(name, f"abbreviated option (could be {shown}): write it in full")
    close = _close(name, list(flag_table()["options"])) if suggest else None
    hint = f"; did you mean {close}?" if close else ""
    return FlagProblem(name, f"unknown option for vllm serve {table_version()}{hint}", close)


def _check_type(option: str, type_name: str | None, value: str) -> str | None:
    """The error argparse's `type=` would raise for this value, for the simple types."""
    base = (type_name or "").removeprefix("optional[").removesuffix("]")
    if type_name and type_name.startswith("optional[") and value in ("", "None"):
        return None
    try:
        if base == "int":
            int(value)
        elif base == "float":
            float(value)
        elif base in ("human_readable_int", "human_readable_int_or_auto"):
            v = value.strip()
            if base.endswith("_or_auto") and (v == "-1" or v.lower() == "auto"):
                return None
            if not _HUMAN_INT.fullmatch(v):
                raise ValueError(v)
    except ValueError:
        kinds = {
            "human_readable_int": "integer (suffix k/m/g/t or K/M/G/T)",
            "human_readable_int_or_auto": "integer or 'auto'",
        }
        kind = kinds.get(base, base)
        return f"invalid {kind} value {value!r} for {option}"
    return None


def _check_choices(option: str, choices: list[Any], value: str) -> str | None:
    allowed = {"None" if c is None else str(c) for c in choices}
    if value in allowed or (value == "" and "None" in allowed):
        return None
    listed = sorted(allowed - {"None"})
    shown = ", ".join(listed[:12]) + (f", ... ({len(listed)} in all)" if len(listed) > 12 else "")
    return f"invalid choice {value!r} for {option} (choose from {shown})"


def _check_spec_config(option: str, spec: Any) -> list[FlagProblem]:
    deferred = flag_table()["deferred"]
    if not isinstance(spec, dict):
        return [FlagProblem(option, "--speculative-config must be a JSON object")]
    spec = {str(k).replace("-", "_"): v for k, v in spec.items()}
    problems = []
    if unknown := sorted(set(spec) - set(deferred["speculative_config_keys"])):
        problems.append(FlagProblem(option, f"unknown speculative-config keys {unknown}"))
    method = spec.get("method")
    if method is not None and method not in deferred["speculative_methods"]:
        close = _close(str(method), deferred["speculative_methods"])
        hint = f"; did you mean {close!r}?" if close else ""
        problems.append(FlagProblem(option, f"unknown speculative method {method!r}{hint}"))
    n = spec.get("num_speculative_tokens")
    if n is not None and (isinstance(n, bool) or not isinstance(n, int) or n < 1):
        problems.append(FlagProblem(option, "num_speculative_tokens must be an integer > 0"))
    return problems


def _check_deferred(option: str, dest: str, value: str) -> list[FlagProblem]:
    """Values argparse lets through and vLLM rejects later, when it builds its configs."""
    deferred = flag_table()["deferred"]
    if value in ("", "None") and dest in ("quantization", "attention_backend"):
        return []
    if dest == "quantization" and value not in deferred["quantization_methods"]:
        close = _close(value, deferred["quantization_methods"])
        hint = f"; did you mean {close!r}?" if close else ""
        return [FlagProblem(option, f"unknown quantization method {value!r}{hint}")]
    if dest == "kv_cache_dtype" and value not in deferred["kv_cache_dtypes"]:
        close = _close(value, deferred["kv_cache_dtypes"])
        hint = f"; did you mean {close!r}?" if close else ""
        return [FlagProblem(option, f"unknown kv-cache dtype {value!r}{hint}")]
    if dest == "attention_backend" and value.lower() != "auto" and value.upper() not in deferred["attention_backends"]:
        return [FlagProblem(option, f"unknown attention backend {value!r}")]
    if dest == "speculative_config":
        try:
            spec = json.loads(value)
        except json.JSONDecodeError as e:
            return [FlagProblem(option, f"--speculative-config is not valid JSON: {e}")]
        return _check_spec_config(option, spec)
    return []


def _scan(tokens: list[str]) -> tuple[list[FlagProblem], dict[str, str]]:
    """Walk option tokens as vLLM's parser would; returns problems and {dest: option seen}."""
    table = flag_table()
    options, actions = table["options"], table["actions"]
    problems: list[FlagProblem] = []
    seen: dict[str, str] = {}
    dotted: dict[str, dict[str, Any]] = {}
    unknown = 0
    i = 0
    while i < len(tokens):
        token = tokens[i]
        i += 1
        if token == "--":
            problems.append(FlagProblem(token, "'--' ends the options; vllm serve takes none after"))
            break
        if not looks_like_option(token):
            problems.append(FlagProblem(token, "unexpected positional argument"))
            continue
        name, eq, inline = token.partition("=")
        if token.startswith("-O") and token != "-O" and "-O" not in options:
            name, eq, inline = "--optimization-level", "=", token[3:] if eq else token[2:]
        elif token == "-O" and i < len(tokens) and tokens[i] in _OPT_LEVELS:
            name = "--optimization-level"
        name = _normalise(name)
        base, dot, path = name.partition(".")
        key = options.get(base)
        if key is None:
            problems.append(_unknown(base, suggest=unknown < SUGGESTED_UNKNOWN))
            unknown += 1
            if not eq and i < len(tokens) and not looks_like_option(tokens[i]):
                i += 1  # skip its value, so it is not reported as a stray positional
            continue
        action = actions[key]
        dest = action["dest"]
        if dest in seen and action["action"] != "_AppendAction" and not dot:
            problems.append(FlagProblem(token, f"given more than once (also as {seen[dest]})"))
        seen.setdefault(dest, base)

        nargs = action["nargs"]
        if nargs == 0:
            problem, i = _switch_problem(tokens, i, token, base, bool(dot), bool(eq))
            problems += [problem] if problem is not None else []
            continue

        values, i, problem = _take_values(tokens, i, base, nargs, inline if eq else None)
        if problem is not None:
            problems.append(problem)
            continue
        if dot:  # --json-arg.key value: vLLM folds these into one JSON object per option
            value: Any = values[0] if values else ""
            with contextlib.suppress(json.JSONDecodeError, TypeError):
                value = json.loads(value)
            dotted.setdefault(dest, {})[path.removesuffix("+")] = value
            continue
        for value in values:
            problems.extend(_check_value(base, dest, action, value))
    if "speculative_config" in dotted and "speculative_config" not in seen:
        problems.extend(_check_spec_config("--speculative-config", dotted["speculative_config"]))
    return problems, seen


def _switch_problem(
    tokens: list[str], i: int, token: str, base: str, dot: bool, eq: bool
) -> tuple[FlagProblem | None, int]:
    """A switch (`--enable-x`) given fields, an `=value`, or followed by a value (which the scan
    then skips, so it is not reported again as a stray positional); and where the scan goes on."""
    if dot:
        return FlagProblem(token, f"{base} is a switch; it has no fields"), i
    if eq:
        return FlagProblem(token, f"{base} is a switch and takes no value"), i
    if i < len(tokens) and not looks_like_option(tokens[i]):
        return FlagProblem(base, f"{base} is a switch and takes no value (got {tokens[i]!r})"), i + 1
    return None, i


def _take_values(
    tokens: list[str], i: int, base: str, nargs: Any, inline: str | None
) -> tuple[list[str], int, FlagProblem | None]:
    """The values one occurrence of an option takes, the way argparse collects them, the index the
    scan goes on from, and the problem when too few follow."""
    if inline is not None:
        return [inline], i, None
    values: list[str] = []
    if nargs in ("+", "*"):
        while i < len(tokens) and not looks_like_option(tokens[i]):
            values.append(tokens[i])
            i += 1
        if nargs == "+" and not values:
            return values, i, FlagProblem(base, f"{base} expects at least one value")
        return values, i, None
    if nargs == "?":
        if i < len(tokens) and not looks_like_option(tokens[i]):
            return [tokens[i]], i + 1, None
        return values, i, None
    want = 1 if nargs is None else int(nargs)
    while len(values) < want and i < len(tokens) and not looks_like_option(tokens[i]):
        values.append(tokens[i])
        i += 1
    if len(values) < want:
        return values, i, FlagProblem(base, f"{base} expects a value")
    return values, i, None


def _check_value(base: str, dest: str, action: dict[str, Any], value: str) -> list[FlagProblem]:
    """One value against the option's choices and type, then the checks vLLM defers to later."""
    choices = action["choices"]
    err = (choices is not None and _check_choices(base, choices, value)) or _check_type(base, action["type"], value)
    return [FlagProblem(base, err)] if err else _check_deferred(base, dest, value)


def _headless_problems(seen: dict[str, str]) -> list[FlagProblem]:
    if "headless" in seen and "api_server_count" in seen:
        return [
            FlagProblem(
                seen["api_server_count"],
                "--api-server-count cannot be used with --headless "
                "(vLLM rejects any count above 0; the compiler never emits it there)",
            )
        ]
    return []


def check_argv(argv: list[str]) -> list[FlagProblem]:
    """Problems in a whole launch, `["vllm", "serve", MODEL, *options]`; empty when it is fine."""
    if list(argv[:2]) != ["vllm", "serve"]:
        return [FlagProblem("", "a launch must start with 'vllm serve'")]
    if len(argv) < 3 or looks_like_option(argv[2]):
        return [FlagProblem("", "the model must be the first argument after 'vllm serve'")]
    problems, seen = _scan(list(argv[3:]))
    return problems + _headless_problems(seen)


def _config_tokens(mapping: dict[str, Any]) -> tuple[list[str], list[FlagProblem]]:
    """What vLLM's --config loader turns a YAML mapping into (load_config_file)."""
    table = flag_table()
    tokens: list[str] = []
    problems: list[FlagProblem] = []
    for key, value in mapping.items():
        option = "--" + str(key)
        if isinstance(value, bool):
            if value:
                tokens.append(option)
                continue
            # vLLM looks `--no-KEY` up in the top-level `vllm` parser, which has no serve
            # options, so `KEY: false` is dropped without a word and the default stays.
            action = table["actions"].get(table["options"].get(_normalise(option), ""), {})
            negative = [o for o in action.get("negative", []) if o.startswith("--no-")]
            fix = f"write '{negative[0][2:]}: true'" if negative else "leave the key out"
            problems.append(FlagProblem(option, f"'{key}: false' is silently dropped by vLLM's --config; {fix}"))
        elif isinstance(value, list):
            if value:
                tokens += [option, *map(str, value)]
        elif isinstance(value, dict):
            tokens += [option, json.dumps(value)]
        else:
            tokens += [option, str(value)]
    return tokens, problems


def check_config(mapping: dict[str, Any]) -> list[FlagProblem]:
    """Problems in a `vllm serve --config` YAML mapping (keys are option names without `--`)."""
    tokens, problems = _config_tokens(mapping)
    scanned, seen = _scan(tokens)
    return problems + scanned + _headless_problems(seen)
