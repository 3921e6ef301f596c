"""Dump the flag table of `vllm serve` from vLLM's real parser (runs INSIDE the vLLM venv).

    "$SPARK_VLLM_PYTHON" tools/vllm-parser/dump_flags.py > spark_dsl/data/vllm_flags.json

Builds the same parser as spark_dsl/data/check_launches.py (FlexibleArgumentParser + the serve
subparser) and walks the option strings the serve parser has registered, which include the
aliases hidden from --help: `--no-enable-X` of every EnableDisableAction (help now shows
`--disable-X`) and `--no-X` of every BooleanOptionalAction. Also records the value sets of the
checks vLLM defers until a model exists (argparse takes any string there), and the names in
`vllm.envs`. The output is deterministic: sorted keys and lists, and the date comes from
SOURCE_DATE_EPOCH or --date when given.

Options:
  --date YYYY-MM-DD   the date to record (default: SOURCE_DATE_EPOCH, else today, UTC)
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "spark_dsl" / "data"))

import check_launches  # noqa: E402  (sets VLLM_TARGET_DEVICE before vLLM is imported)

SCHEMA = 1


def _type_name(fn: Any) -> str | None:
    """A readable, stable name for an argparse `type=` callable."""
    if fn is None:
        return None
    if fn is json.loads:
        return "json"
    name = getattr(fn, "__qualname__", None) or type(fn).__qualname__
    closure = getattr(fn, "__closure__", None) or ()
    inner = [c.cell_contents for c in closure if callable(c.cell_contents)]
    if name == "optional_type.<locals>._optional_type" and inner:
        return f"optional[{_type_name(inner[0])}]"
    if "<locals>" in name:
        name = name.split(".<locals>.", 1)[0]
    return name


def _json_value(v: Any) -> Any:
    return v if v is None or isinstance(v, str | int | float | bool) else str(v)


def _sort_key(v: Any) -> tuple[bool, bool, float, str]:
    """Numbers in numeric order, then strings, then None."""
    is_number = isinstance(v, int | float) and not isinstance(v, bool)
    return (v is None, not is_number, float(v) if is_number else 0.0, str(v))


def actions_table(serve: argparse.ArgumentParser) -> tuple[dict[str, str], dict[str, Any]]:
    """option string -> action key, and action key -> its description."""
    by_action: dict[int, tuple[argparse.Action, list[str]]] = {}
    for opt, action in serve._option_string_actions.items():
        by_action.setdefault(id(action), (action, []))[1].append(opt)

    options: dict[str, str] = {}
    actions: dict[str, Any] = {}
    for action, registered in by_action.values():
        key = action.dest
        if key in actions:  # two actions writing one dest: keep them apart
            key = f"{action.dest}@{min(registered)}"
        visible = set(action.option_strings)  # vLLM trims hidden aliases from this list
        boolean_pair = isinstance(action, argparse.BooleanOptionalAction)
        negative = set(getattr(action, "negative_option_strings", ()))
        if boolean_pair and not negative:  # plain BooleanOptionalAction: --no-X sets False
            negative = {o for o in registered if o.startswith("--no-")}
        nargs = action.nargs
        actions[key] = {
            "dest": action.dest,
            "action": type(action).__name__,
            "option_strings": sorted(registered),
            "hidden": sorted(set(registered) - visible),
            "negative": sorted(negative),
            "boolean_pair": boolean_pair,
            "nargs": nargs,
            "takes_value": nargs != 0,
            "choices": (
                None if action.choices is None else sorted((_json_value(c) for c in action.choices), key=_sort_key)
            ),
            "type": _type_name(action.type),
            "required": bool(action.required),
        }
        for opt in registered:
            options[opt] = key
    return dict(sorted(options.items())), dict(sorted(actions.items()))


def dump(date: str) -> dict[str, Any]:
    vllm = check_launches.Vllm()
    import torch
    import vllm.envs as envs

    options, actions = actions_table(vllm.serve)
    positionals = [{"dest": a.dest, "nargs": a.nargs} for a in vllm.serve._actions if not a.option_strings]
    return {
        "meta": {
            "schema": SCHEMA,
            "vllm_version": vllm.version,
            "generated_by": "tools/vllm-parser/dump_flags.py",
            "generated_on": date,
            "how": (
                "vLLM's own `vllm serve` parser (FlexibleArgumentParser + ServeSubcommand, "
                "VLLM_TARGET_DEVICE=cpu) built in the venv of tools/vllm-parser/setup-env.sh; "
                "every option string registered with the serve subparser, hidden aliases "
                "included; deferred value sets from vLLM's enums; env vars from "
                "vllm.envs.environment_variables"
            ),
            "python": platform.python_version(),
            "torch": torch.__version__,
        },
        "options": options,
        "actions": actions,
        "positionals": positionals,
        # argparse takes any string for these; vLLM checks them once a model is loaded.
        "deferred": {
            "attention_backends": sorted(vllm.attention_backends),
            "attention_backend_notes": "case-insensitive (upper-cased); 'auto' means automatic",
            "kv_cache_dtypes": sorted(vllm.kv_cache_dtypes),
            "quantization_methods": sorted(vllm.quantization_methods),
            "speculative_config_keys": sorted(vllm.spec_keys),
            "speculative_methods": sorted(vllm.spec_methods),
        },
        "env_vars": sorted(envs.environment_variables),
    }


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--date", help="date to record, YYYY-MM-DD")
    args = p.parse_args()
    if args.date:
        date = dt.date.fromisoformat(args.date).isoformat()
    elif "SOURCE_DATE_EPOCH" in os.environ:
        stamp = int(os.environ["SOURCE_DATE_EPOCH"])
        date = dt.datetime.fromtimestamp(stamp, dt.UTC).date().isoformat()
    else:
        date = dt.datetime.now(dt.UTC).date().isoformat()

    out = os.fdopen(os.dup(1), "w")  # vLLM logs to stdout: keep it for the JSON only
    os.dup2(2, 1)
    table = dump(date)
    json.dump(table, out, indent=1, sort_keys=True)
    out.write("\n")
    out.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
