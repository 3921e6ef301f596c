"""Helpers of the target tests: the spec plans, the committed outputs, placeholder substitution."""

from __future__ import annotations

import re
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

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


@contextmanager
def scheduling_of(cluster: Any, script: Path) -> Iterator[None]:
    """The node features and the reservation a job's `--constraint` and `--reservation` name, on the
    test cluster while the job is tested (a reservation held on would keep the other jobs off)."""
    text = script.read_text()
    constraint = re.search(r"^#SBATCH --constraint=(\S+)$", text, re.MULTILINE)
    reservation = re.search(r"^#SBATCH --reservation=(\S+)$", text, re.MULTILINE)
    partition = re.search(r"^#SBATCH --partition=(\S+)$", text, re.MULTILINE)
    nodes = f"node[1-{cluster.n}]"
    if constraint:
        features = ",".join(sorted(set(re.findall(r"[A-Za-z0-9_.-]+", constraint.group(1)))))
        update = [
            "scontrol",
            "update",
            f"NodeName={nodes}",
            f"AvailableFeatures={features}",
            f"ActiveFeatures={features}",
        ]
        done = cluster.run(update)
        assert done.returncode == 0, done.stdout + done.stderr
    names = reservation.group(1).split(",") if reservation else []
    for name in names:
        create = ["scontrol", "create", "reservation", f"ReservationName={name}", f"Nodes={nodes}"]
        create += ["StartTime=now", "Duration=60", "Users=root", "Flags=IGNORE_JOBS"]
        create += [f"PartitionName={partition.group(1).split(',')[0]}"] if partition else []
        done = cluster.run(create)
        assert done.returncode == 0, done.stdout + done.stderr
    try:
        yield
    finally:
        for name in names:
            cluster.run(["scontrol", "delete", f"ReservationName={name}"])
        if constraint:
            cluster.run(["scontrol", "update", f"NodeName={nodes}", "AvailableFeatures=", "ActiveFeatures="])
