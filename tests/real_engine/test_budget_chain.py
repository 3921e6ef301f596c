"""The budget chain over every committed output: no waiter gives up before the deployment's ready
budget, and the clocks spark overrides are the pinned packages' own.

The defaults are read from the installed packages, not from our notes: vLLM 0.33.0's
`vllm.envs.VLLM_ENGINE_READY_TIMEOUT_S` (the parser venv) and vllm-router's
`RouterArgs.worker_startup_timeout_secs` (the real-engine venv). A new upstream default fails the
first test. The chain is read from the files as written (targets/), and a planted short budget in
each kind of file is caught. The staging chain too: where one Job stages the weights into a shared
claim, every pod's wait for its marker outlasts the Job's own deadline (`weights.download_timeout`).
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest
import yaml

from spark_dsl.plan.managed import ENGINE_READY_DEFAULT_SECONDS, ENGINE_READY_ENV, ROUTER_STARTUP_DEFAULT_SECONDS
from spark_dsl.plan.weights import ready_budget
from spark_dsl.targets.kubernetes_staging import ROLE as STAGING_ROLE
from spark_dsl.targets.kubernetes_staging import WAIT_ENV as STAGING_WAIT_ENV
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


def _env_values(node: object, name: str) -> list[int]:
    if isinstance(node, dict):
        own = [int(node["value"])] if node.get("name") == name and "value" in node else []
        return own + [n for value in node.values() for n in _env_values(value, name)]
    if isinstance(node, list):
        return [n for value in node for n in _env_values(value, name)]
    return []


def staging_short(path: Path, text: str) -> list[str]:
    """The staging chain: every pod's wait for the weights outlasts the staging Job's deadline."""
    if path.suffix != ".yaml" or path.name == "vllm-config.yaml":
        return []
    docs = [d for d in yaml.safe_load_all(text) if d]
    jobs = [d for d in docs if d.get("kind") == "Job" and d["metadata"]["name"].endswith("-" + STAGING_ROLE)]
    pods_wait = _env_values(docs, STAGING_WAIT_ENV)
    problems = []
    for job in jobs:
        deadline = int(job["spec"]["activeDeadlineSeconds"])
        problems += [f"weights wait {w}s < the staging Job's {deadline}s" for w in pods_wait if w < deadline]
        if not pods_wait:
            problems.append("a staging Job that no pod waits for")
    return problems


def short_of(path: Path, text: str, budget: int) -> list[str]:
    """What in the file breaks the chain: a wait below the budget, a launch without its clock."""
    found = waits(path, text)
    problems = [f"{what} {seconds}s < {budget}s" for what, seconds in found if seconds < budget]
    problems += staging_short(path, text)
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
    # The P/D deployment stages its weights first: its budget (1688 s) counts no download.
    ("muse-b200-pd/serve.sh", "VLLM_ENGINE_READY_TIMEOUT_S=1688", "VLLM_ENGINE_READY_TIMEOUT_S=300"),
    ("muse-b200-pd/serve.sh", "--worker-startup-timeout-secs 1688", "--worker-startup-timeout-secs 600"),
    ("muse-b200-pd/job.sbatch", "deadline=$((SECONDS + 1688))", "deadline=$((SECONDS + 1500))"),
    ("muse-b200-pd/kubernetes.yaml", "failureThreshold: 169", "failureThreshold: 60"),
    # The pods' wait for the staging Job's marker, below the Job's own deadline (weights.download_timeout).
    ("muse-b200-pd/kubernetes.yaml", "value: '7800'", "value: '600'"),
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


# ---- the drain budget (`serve.drain`): every stop clock outlasts vLLM's own drain ------------------

SCRIPT_DRAIN = re.compile(r"--shutdown-timeout (\d+)")
SLURM_SIGNAL = re.compile(r"(?m)^#SBATCH --signal=TERM@(\d+)$")


def _flag_values(node: object, flag: str) -> list[int]:
    """The value after `flag` in every list of a YAML document (container args, Compose commands)."""
    if isinstance(node, dict):
        return [n for value in node.values() for n in _flag_values(value, flag)]
    if isinstance(node, list):
        own = [int(node[i + 1]) for i, item in enumerate(node[:-1]) if item == flag]
        return own + [n for value in node for n in _flag_values(value, flag)]
    return []


def _pods(node: object) -> list[dict]:
    if isinstance(node, dict):
        own = [node] if isinstance(node.get("containers"), list) else []
        return own + [p for value in node.values() for p in _pods(value)]
    if isinstance(node, list):
        return [p for value in node for p in _pods(value)]
    return []


def _pod_stop(pod: dict, drain: int) -> list[str]:
    """A vLLM pod pauses in preStop, then drains; the kubelet's kill comes after both, and more."""
    vllm = [c for c in pod["containers"] if c["name"] == "vllm"]
    if not vllm:
        return []
    pause = vllm[0].get("lifecycle", {}).get("preStop", {}).get("sleep", {}).get("seconds")
    if pause is None:
        return ["a vLLM pod without its preStop pause"]
    grace = pod.get("terminationGracePeriodSeconds", 30)  # Kubernetes' default
    return (
        [f"terminationGracePeriodSeconds {grace}s <= {pause}s pause + {drain}s drain"] if grace <= pause + drain else []
    )


def _yaml_stop(text: str, drain: int) -> list[str]:
    docs = [d for d in yaml.safe_load_all(text) if d]
    problems = [p for pod in _pods(docs) for p in _pod_stop(pod, drain)]
    for doc in docs:
        for service in (doc.get("services") or {}).values():
            if "--shutdown-timeout" in service.get("command", []):
                stop = go_seconds(service.get("stop_grace_period", "10s"))  # Compose's default
                problems += [f"stop_grace_period {stop}s <= {drain}s drain"] if stop <= drain else []
        if doc.get("kind") == "Deployment" and _pods(doc)[0]["containers"][0]["name"] == "vllm":
            pod = _pods(doc)[0]
            probe = pod["containers"][0]["startupProbe"]
            step = pod.get("terminationGracePeriodSeconds", 30) + probe["failureThreshold"] * probe["periodSeconds"]
            deadline = doc["spec"].get("progressDeadlineSeconds", 600)  # Kubernetes' default
            problems += (
                [f"progressDeadlineSeconds {deadline}s < {step}s: a stop and a start"] if deadline < step else []
            )
    return problems


def drain_short(path: Path, text: str, drain: int) -> list[str]:
    """What in the file stops a server before its drain: a launch without `--shutdown-timeout` or
    with another value, and a stop clock (kubelet, Compose, the Slurm time limit) at or below it."""
    servers, _ = launches_in(text)
    yaml_file = path.suffix == ".yaml" and path.name != "vllm-config.yaml"
    docs = list(yaml.safe_load_all(text)) if yaml_file else []
    flags = _flag_values(docs, "--shutdown-timeout") if yaml_file else [int(n) for n in SCRIPT_DRAIN.findall(text)]
    # vLLM's --config file: its key, beside the command line its header shows.
    flags += [int(n) for n in re.findall(r"(?m)^shutdown-timeout: (\d+)$", text)]
    problems = [f"--shutdown-timeout {n} != the drain {drain}" for n in flags if n != drain]
    if len(flags) < servers:
        problems.append(f"{servers} vLLM launches, {len(flags)} with --shutdown-timeout")
    if yaml_file:
        problems += _yaml_stop(text, drain)
    if path.name == "job.sbatch" and servers:
        signals = [int(n) for n in SLURM_SIGNAL.findall(text)]
        problems += [f"--signal=TERM@{n} <= the drain {drain}" for n in signals if n <= drain]
        problems += [] if signals else ["a Slurm job whose steps get no SIGTERM before the time limit"]
    return problems


@pytest.fixture(scope="module")
def drains() -> dict[str, int]:
    from spark_dsl.pipeline import run
    from spark_dsl.plan.drain import drain_budget

    result = run(sorted((REPO / "specs").rglob("*.spark")), REPO)
    return {planned.plan.name: drain_budget(planned.plan).drain for planned in result.planned()}


@pytest.mark.parametrize("path", committed(), ids=lambda p: f"{p.parent.name}/{p.name}")
def test_every_committed_file_outlasts_the_drain(path: Path, drains: dict[str, int]) -> None:
    text = path.read_text()
    assert drain_short(path, text, drains[path.parent.name]) == []
    # vLLM 0.33.0's own default aborts in-flight requests (shutdown_timeout 0, vllm/config/vllm.py:454).
    assert drains[path.parent.name] > 0


DRAIN_PLANTED = [
    ("muse-b200/serve.sh", r"--shutdown-timeout \d+", "--shutdown-timeout 0"),
    ("muse-b200-dp2/serve.sh", r" \\\n\s*--shutdown-timeout \d+", ""),
    ("muse-b200/kubernetes.yaml", r"terminationGracePeriodSeconds: \d+", "terminationGracePeriodSeconds: 30"),
    ("muse-b200/kubernetes.yaml", r"\n *progressDeadlineSeconds: \d+", ""),
    ("muse-b200-dp2/kubernetes.yaml", r"\n *lifecycle:\n *preStop:\n *sleep:\n *seconds: \d+", ""),
    ("muse-b200/compose.yaml", r"stop_grace_period: \S+", "stop_grace_period: 10s"),
    ("muse-b200-pd/job.sbatch", r"--signal=TERM@\d+", "--signal=TERM@30"),
]


@pytest.mark.parametrize(
    ("name", "pattern", "planted"), DRAIN_PLANTED, ids=[f"{n}:{p[:30]}" for n, p, _ in DRAIN_PLANTED]
)
def test_a_planted_short_drain_is_caught(name: str, pattern: str, planted: str, drains: dict[str, int]) -> None:
    path = TARGETS / name
    text = path.read_text()
    changed = re.sub(pattern, planted, text, count=1)
    assert changed != text
    assert drain_short(path, changed, drains[path.parent.name]) != []
