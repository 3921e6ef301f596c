"""The budget chain over every committed output: no waiter gives up before the deployment's ready
budget, and the clocks spark overrides are the pinned packages' own.

The defaults are read from the installed packages, not from our notes: vLLM 0.33.0's
`vllm.envs.VLLM_ENGINE_READY_TIMEOUT_S` (the parser venv) and vllm-router's
`RouterArgs.worker_startup_timeout_secs` (the real-engine venv). A new upstream default fails the
first test. The chain is read from the files as written (targets/), and a planted short budget in
each kind of file is caught.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest
import yaml

from spark_dsl.plan.managed import ENGINE_READY_DEFAULT_SECONDS, ENGINE_READY_ENV, ROUTER_STARTUP_DEFAULT_SECONDS
from spark_dsl.plan.weights import ready_budget
from spark_dsl.vllm_verify import default_python

REPO = Path(__file__).resolve().parents[2]
TARGETS = REPO / "targets"

# What each kind of text says of a wait, in seconds.
TEXT_WAITS = {
    "engine": re.compile(ENGINE_READY_ENV + r"""(?:=|: '?)(\d+)"""),
    "router": re.compile(r"--worker-startup-timeout-secs (\d+)"),
    "slurm wait": re.compile(r"deadline=\$\(\(SECONDS \+ (\d+)\)\)"),
    "smoke wait": re.compile(r"deadline=\$\(\(\$\(date \+%s\) \+ (\d+)\)\)"),
    "bench ready check": re.compile(r"--ready-check-timeout-sec[ ,'\"\n-]*(\d+)"),
}


def go_seconds(text: str) -> int:
    """A Compose (Go) duration: `1h4m22s`."""
    units = {"h": 3600, "m": 60, "s": 1}
    return sum(int(n) * units[u] for n, u in re.findall(r"(\d+)([hms])", text))


def waits(path: Path, text: str) -> list[tuple[str, int]]:
    """Every wait a file sets, by what waits."""
    found = [(what, int(n)) for what, pattern in TEXT_WAITS.items() for n in pattern.findall(text)]
    if path.suffix == ".yaml" and path.name != "vllm-config.yaml":
        for doc in yaml.safe_load_all(text):
            found += _yaml_waits(doc)
    return found


def _yaml_waits(node: object) -> list[tuple[str, int]]:
    out: list[tuple[str, int]] = []
    if isinstance(node, dict):
        probe = node.get("startupProbe")
        if isinstance(probe, dict):
            out.append(("startup probe", int(probe["failureThreshold"]) * int(probe["periodSeconds"])))
        check = node.get("healthcheck")
        if isinstance(check, dict) and "start_period" in check:
            out.append(("compose start period", go_seconds(check["start_period"])))
        for value in node.values():
            out += _yaml_waits(value)
        if node.get("name") == ENGINE_READY_ENV and "value" in node:
            out.append(("engine", int(node["value"])))
    elif isinstance(node, list):
        for flag, what in (
            ("--worker-startup-timeout-secs", "router"),
            ("--ready-check-timeout-sec", "bench ready check"),
        ):
            if flag in node:
                out.append((what, int(node[node.index(flag) + 1])))
        for value in node:
            out += _yaml_waits(value)
    return out


def launches_in(text: str) -> tuple[int, int]:
    """(vLLM server launches, router launches) a file starts."""
    # `vllm serve` in a script, or a container's args that start with `serve` (not `bench serve`).
    servers = len(re.findall(r"(?<!bench )vllm serve |args:\n\s*- serve\n", text))
    # A line that runs the router (in a script, possibly through `exec` or `srun`), or a container's.
    routers = len(re.findall(r"(?m)^\s*(?:exec |srun .*?)?vllm-router \\$|^\s*- vllm-router$", text))
    return servers, routers


def short_of(path: Path, text: str, budget: int) -> list[str]:
    """What in the file breaks the chain: a wait below the budget, a launch without its clock."""
    found = waits(path, text)
    problems = [f"{what} {seconds}s < {budget}s" for what, seconds in found if seconds < budget]
    servers, routers = launches_in(text)
    engine = [w for w in found if w[0] == "engine"]
    if servers and not engine:
        problems.append(f"{servers} vLLM launches, no {ENGINE_READY_ENV}")
    if routers and not [w for w in found if w[0] == "router"]:
        problems.append("a router without --worker-startup-timeout-secs")
    return problems


@pytest.fixture(scope="module")
def budgets() -> dict[str, int]:
    from spark_dsl.pipeline import run

    result = run(sorted((REPO / "specs").rglob("*.spark")), REPO)
    return {planned.plan.name: ready_budget(planned.plan).seconds for planned in result.planned()}


def test_the_pinned_packages_defaults_are_the_clocks_spark_overrides(cpu_bin: Path) -> None:
    vllm = subprocess.run(
        [str(default_python()), "-c", "import vllm.envs as e; print(e.VLLM_ENGINE_READY_TIMEOUT_S)"],
        capture_output=True,
        text=True,
        env={"PATH": "/usr/bin:/bin", "VLLM_TARGET_DEVICE": "cpu"},
    )
    assert vllm.returncode == 0, vllm.stderr
    router = subprocess.run(
        [
            str(cpu_bin / "python"),
            "-c",
            "from vllm_router.router_args import RouterArgs; print(RouterArgs.worker_startup_timeout_secs)",
        ],
        capture_output=True,
        text=True,
    )
    assert router.returncode == 0, router.stderr
    assert int(vllm.stdout.split()[-1]) == ENGINE_READY_DEFAULT_SECONDS
    assert int(router.stdout.split()[-1]) == ROUTER_STARTUP_DEFAULT_SECONDS


def committed() -> list[Path]:
    return sorted(p for p in TARGETS.glob("*/*") if p.name != "manifest.json")


@pytest.mark.parametrize("path", committed(), ids=lambda p: f"{p.parent.name}/{p.name}")
def test_every_committed_file_waits_the_whole_ready_budget(path: Path, budgets: dict[str, int]) -> None:
    text = path.read_text()
    budget = budgets[path.parent.name]
    assert short_of(path, text, budget) == []
    servers, _ = launches_in(text)
    # Every launch waits longer than vLLM and the router would by themselves: the override matters.
    assert all(seconds > ENGINE_READY_DEFAULT_SECONDS for _, seconds in waits(path, text)) or not servers


PLANTED = [
    ("muse-b200-pd/serve.sh", "VLLM_ENGINE_READY_TIMEOUT_S=3862", "VLLM_ENGINE_READY_TIMEOUT_S=300"),
    ("muse-b200-pd/serve.sh", "--worker-startup-timeout-secs 3862", "--worker-startup-timeout-secs 600"),
    ("muse-b200-pd/job.sbatch", "deadline=$((SECONDS + 3862))", "deadline=$((SECONDS + 2700))"),
    ("muse-b200-pd/kubernetes.yaml", "failureThreshold: 387", "failureThreshold: 60"),
    ("muse-b200/compose.yaml", "start_period: 1h4m22s", "start_period: 30m"),
    ("muse-b200-jobs/smoke.sh", "+ 3862))", "+ 60))"),
    ("muse-b200-jobs/bench.sh", "--ready-check-timeout-sec 3862", "--ready-check-timeout-sec 0"),
    ("muse-b200-dp2/serve.sh", "export VLLM_ENGINE_READY_TIMEOUT_S=3862\n", ""),
]


@pytest.mark.parametrize(("name", "good", "planted"), PLANTED, ids=[f"{n}:{p[:30]}" for n, _, p in PLANTED])
def test_a_planted_short_budget_is_caught(name: str, good: str, planted: str, budgets: dict[str, int]) -> None:
    path = TARGETS / name
    text = path.read_text()
    assert good in text
    assert short_of(path, text.replace(good, planted), budgets[path.parent.name]) != []
