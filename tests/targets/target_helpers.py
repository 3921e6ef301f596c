"""Helpers of the target tests: the spec plans, the committed outputs, placeholder substitution."""

from __future__ import annotations

import shutil
from pathlib import Path

from spark_dsl.pipeline import collect_paths, run
from spark_dsl.plan.model import Launch, Planned
from spark_dsl.targets import placeholders

REPO = Path(__file__).resolve().parents[2]
SPECS = REPO / "specs"
TARGETS = REPO / "targets"


def spec_plans() -> dict[str, Planned]:
    """The committed specs' plans, with their launches, by deployment name."""
    result = run(collect_paths([str(SPECS)], REPO), REPO)
    assert not result.has_errors, [d.message for d in result.diagnostics]
    return {planned.plan.name: planned for planned in result.planned()}


def committed(pattern: str) -> list[Path]:
    """Files under targets/ matching a glob, sorted (the tests' parameters)."""
    return sorted(TARGETS.glob(pattern))


def substituted(text: str, values: dict[str, str]) -> str:
    """A plan value with its placeholders replaced, as the tests compare it."""
    return placeholders.fill(text, lambda name: values[name])


def expected_argv(launch: Launch, values: dict[str, str]) -> list[str]:
    return [substituted(arg, values) for arg in launch.argv]


def expected_env(launch: Launch, values: dict[str, str]) -> dict[str, str]:
    return {name: substituted(value, values) for name, value in launch.env}


def copy_script(source: Path, folder: Path) -> Path:
    target = folder / source.name
    shutil.copy2(source, target)
    return target


def kubernetes_expand(text: str, values: dict[str, str]) -> str:
    """What the kubelet makes of a command/args/env string: `$(NAME)` from `values`, `$$` to `$`,
    any other `$` (or an unknown name) kept as written."""
    out, i = [], 0
    while i < len(text):
        ch = text[i]
        if ch != "$" or i + 1 == len(text):
            out.append(ch)
            i += 1
        elif text[i + 1] == "$":
            out.append("$")
            i += 2
        elif text[i + 1] == "(" and ")" in text[i + 2 :]:
            end = text.index(")", i + 2)
            name = text[i + 2 : end]
            out.append(values.get(name, text[i : end + 1]))
            i = end + 1
        else:
            out.append(ch)
            i += 1
    return "".join(out)


def config_argv(mapping: dict[str, object]) -> list[str]:
    """The options vLLM's `--config` loader makes of a YAML mapping (true switches, str values)."""
    out: list[str] = []
    for key, value in mapping.items():
        if value is True:
            out.append(f"--{key}")
        elif isinstance(value, list):
            out += [f"--{key}", *map(str, value)]
        else:
            out += [f"--{key}", str(value)]
    return out


def compose_value(text: str) -> str:
    """A string of `docker compose config` output as the container gets it: the normalized model
    writes every literal `$` as `$$` (checked: `v${X}` with X='q$r' comes out as `vq$$r`)."""
    return text.replace("$$", "$")
