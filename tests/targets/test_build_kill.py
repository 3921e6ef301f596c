"""`spark build` killed with SIGKILL: every folder is wholly old or wholly new, the manifest records what
is on disk, and the next build succeeds and finishes the change.

Two tests: 50 kills at random moments of real builds of a copy of specs/, and one kill at each step
boundary of the write (staging, the in-flight manifest, each kind of swap, the commit, the clean-up,
and between the two renames of a system without `renameat2`), placed by a wrapper that SIGKILLs the
process from inside.
"""

from __future__ import annotations

import os
import random
import shutil
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from contextlib import suppress
from pathlib import Path

import pytest
from fs_helpers import assert_manifest_matches_disk, deployments, spec
from target_helpers import SPECS

KILLS = 50
TEAM = "profiles/team.spark"
EXTRA = "nvidia/extra.spark"


def run_build(project: Path, *args: str) -> None:
    command = [sys.executable, "-m", "spark_dsl", "build", *args]
    r = subprocess.run(command, cwd=project, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr


def assert_old_or_new(
    out: Path, old: dict[str, dict[str, bytes]], new: dict[str, dict[str, bytes]], when: str, recovered: bool = False
) -> None:
    """Each folder wholly old or wholly new, the manifest describing it; `recovered`: once the next
    build has put back a folder moved aside (the only gap, without `renameat2`, between two renames)."""
    on_disk = deployments(out, recovered)
    for name in old.keys() | new.keys():
        assert on_disk.get(name) in (old.get(name), new.get(name)), f"{when}: {name}/ is neither old nor new"
    assert set(on_disk) <= old.keys() | new.keys()
    assert_manifest_matches_disk(out, recovered)


def assert_finished(out: Path, new: dict[str, dict[str, bytes]], manifest: bytes, when: str) -> None:
    assert deployments(out) == new, f"{when}: the next build did not finish the change"
    assert (out / "manifest.json").read_bytes() == manifest
    assert sorted(p.name for p in out.iterdir() if p.name.startswith(".")) == []


# --- 50 kills at random moments ---------------------------------------------------------------


def use(project: Path, variant: str) -> None:
    """Variant B moves the team's port (every folder changes) and adds one spec (a folder to add and retire)."""
    team = (SPECS / TEAM).read_text()
    if variant == "B":
        team = team.replace("port    = 8000", "port    = 8001")
        assert "8001" in team
        (project / "specs" / EXTRA).write_text(spec("muse-extra", "  target shell {}\n  target compose {}"))
    else:
        (project / "specs" / EXTRA).unlink(missing_ok=True)
    (project / "specs" / TEAM).write_text(team)


def staging(out: Path) -> bool:
    """The build holds the lock: it is writing its new folders beside the old ones."""
    return any(name.startswith(".spark-build") for name in os.listdir(out))


def replaced(out: Path, inode: int) -> bool:
    try:
        return (out / "manifest.json").stat().st_ino != inode
    except FileNotFoundError:
        return False


STAGES = ("start", "staging", "swapping")


def start_and_kill(project: Path, stage: str, delay: float | None) -> tuple[bool, dict[str, float]]:
    """Starts a build and kills it `delay` seconds after `stage` began (no delay: lets it finish).

    Returns whether the kill came before the build ended, and when each stage began: `staging`
    when its first `.spark-build*` entry appears, `swapping` when the in-flight manifest replaces
    the old one, `committed` when the final manifest replaces that.
    """
    out = project / "out"
    inode = (out / "manifest.json").stat().st_ino
    process = subprocess.Popen(
        [sys.executable, "-m", "spark_dsl", "build", "specs", "-o", "out"],
        cwd=project,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    began = {"start": time.monotonic()}
    signals = {"staging": lambda: staging(out), "swapping": lambda: replaced(out, inode)}
    signals["committed"] = lambda: replaced(out, inode)
    for name in list(signals) if delay is None else STAGES[1 : STAGES.index(stage) + 1]:
        while not signals[name]() and process.poll() is None:
            time.sleep(0.0001)
        began[name] = time.monotonic()
        with suppress(FileNotFoundError):
            inode = (out / "manifest.json").stat().st_ino
    if delay is None:
        assert process.wait(timeout=120) == 0
        return False, began
    time.sleep(delay)
    killed = process.poll() is None
    process.kill()
    process.wait(timeout=60)
    return killed, began


def kill_lane(project: Path, seed: int, kills: int, windows: dict[str, float], golden, manifests) -> int:
    """`kills` builds of one project, each killed at a random moment, each followed by a whole build."""
    out = project / "out"
    rng = random.Random(seed)
    current, interrupted = "B", 0
    for kill in range(kills):
        new = "B" if current == "A" else "A"
        use(project, new)
        stage = STAGES[kill % 3]
        delay = rng.uniform(0, windows[stage] * 1.2)
        killed, _ = start_and_kill(project, stage, delay)
        interrupted += killed
        when = f"{project.name}, kill {kill} ({stage} + {delay:.4f}s)"
        assert_old_or_new(out, golden[current], golden[new], when)
        run_build(project, "specs", "-o", "out")
        assert_finished(out, golden[new], manifests[new], when)
        current = new
    return interrupted


def test_sigkill_at_50_random_moments_leaves_old_or_new_outputs_and_a_consistent_manifest(tmp_path: Path) -> None:
    lanes = [tmp_path / "lane-1", tmp_path / "lane-2"]  # two projects killed side by side, one per core
    for project in lanes:
        shutil.copytree(SPECS, project / "specs")
        # Each lane is a project as the repository is, so specs/amd may import ../profiles.
        (project / "spark.toml").write_text("", encoding="utf-8")
    first, out = lanes[0], lanes[0] / "out"
    use(first, "A")
    run_build(first, "specs", "-o", "out")
    golden = {"A": deployments(out)}
    manifests = {"A": (out / "manifest.json").read_bytes()}
    use(first, "B")  # a whole build, timed: how long each stage lasts
    _, began = start_and_kill(first, "swapping", None)
    golden["B"], manifests["B"] = deployments(out), (out / "manifest.json").read_bytes()
    assert golden["A"].keys() ^ golden["B"].keys() == {"muse-extra"}
    # Every deployment of the team profile changes; the CPU specs (specs/models/cpu-tiny-llama.spark)
    # use no profile and keep their folders, which a build must then leave as they are.
    team = {n for n in golden["A"] if not n.startswith("tiny-cpu")}
    assert team and all(golden["A"][n] != golden["B"][n] for n in team)
    windows = {
        "start": began["committed"] - began["start"],
        "staging": began["swapping"] - began["staging"],
        "swapping": began["committed"] - began["swapping"],
    }
    use(lanes[1], "B")
    run_build(lanes[1], "specs", "-o", "out")
    assert_finished(lanes[1] / "out", golden["B"], manifests["B"], "the second lane")

    with ThreadPoolExecutor(len(lanes)) as pool:
        runs = [
            pool.submit(kill_lane, project, 20240609 + i, KILLS // len(lanes), windows, golden, manifests)
            for i, project in enumerate(lanes)
        ]
        interrupted = sum(run.result() for run in runs)
    assert interrupted >= KILLS // 2, f"only {interrupted} of {KILLS} kills landed before the build ended"


# --- one kill at each step boundary -----------------------------------------------------------

# Runs `spark build` with one function of the transaction wrapped to SIGKILL the process on its Nth call.
KILLER = """
import os, signal, sys
from spark_dsl.targets import transaction
where, nth = os.environ["KILL_AT"].split(":")
calls = [0]
module = os if where == "rename" else transaction
real = getattr(module, where)
def dying(*args, **kwargs):
    calls[0] += 1
    if calls[0] == int(nth):
        os.kill(os.getpid(), signal.SIGKILL)
    return real(*args, **kwargs)
setattr(module, where, dying)
if os.environ.get("NO_RENAMEAT2"):
    transaction._renameat2 = lambda source, target, flags: None
from spark_dsl.cli import main
sys.argv[0] = "spark"
main()
"""

OLD_SPECS = {
    "a.spark": spec("alpha", "  target shell {}\n  target compose {}"),
    "b.spark": spec("beta", "  target shell {}"),
    "d.spark": spec("delta", "  target kubernetes {}"),
}
NEW_SPECS = {  # alpha changes, beta goes, gamma comes, delta stays
    "a.spark": spec("alpha", "  max_num_seqs = 64\n  target shell {}\n  target compose {}"),
    "c.spark": spec("gamma", "  target shell {}"),
    "d.spark": spec("delta", "  target kubernetes {}"),
}
POINTS = {
    "while staging the first folder": ("_stage:2", False),
    "before the in-flight manifest": ("write_manifest:1", False),
    "before the first swap": ("_swap_in:1", False),
    "between swaps": ("_swap_in:2", False),
    "before moving the retired folder aside": ("_retire:1", False),
    "before the final manifest": ("write_manifest:2", False),
    "while cleaning up": ("_remove:2", False),
    "between the two renames of a swap without renameat2": ("rename:2", True),
}


def write_specs(project: Path, specs: dict[str, str]) -> None:
    for old in project.glob("*.spark"):
        old.unlink()
    for name, text in specs.items():
        (project / name).write_text(text)


@pytest.fixture(scope="module")
def states(tmp_path_factory) -> dict[str, tuple[dict[str, dict[str, bytes]], bytes]]:
    """The outputs and manifest of the old and the new specs, built whole."""
    project = tmp_path_factory.mktemp("states")
    found = {}
    for state, specs in (("old", OLD_SPECS), ("new", NEW_SPECS)):
        write_specs(project, specs)
        run_build(project, ".", "-o", "out")
        found[state] = (deployments(project / "out"), (project / "out/manifest.json").read_bytes())
    return found


@pytest.mark.parametrize("point", sorted(POINTS))
def test_sigkill_at_each_step_of_the_write(tmp_path: Path, states, point: str) -> None:
    where, no_renameat2 = POINTS[point]
    write_specs(tmp_path, OLD_SPECS)
    run_build(tmp_path, ".", "-o", "out")
    write_specs(tmp_path, NEW_SPECS)
    env = {**os.environ, "KILL_AT": where, **({"NO_RENAMEAT2": "1"} if no_renameat2 else {})}
    r = subprocess.run(
        [sys.executable, "-c", KILLER, "build", ".", "-o", "out"], cwd=tmp_path, env=env, timeout=120, check=False
    )
    assert r.returncode == -9, f"the build was not killed {point}"
    (old, _), (new, manifest) = states["old"], states["new"]
    assert_old_or_new(tmp_path / "out", old, new, point, recovered=no_renameat2)
    check = subprocess.run(
        [sys.executable, "-m", "spark_dsl", "build", ".", "-o", "out", "--check"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert check.returncode == (0 if deployments(tmp_path / "out", True) == new else 1), check.stdout + check.stderr
    assert "error[" not in check.stderr + check.stdout, check.stderr  # nothing a build would refuse
    if no_renameat2:  # --check sees the folder the next build will put back, as that build will
        assert "would change missing: out/alpha/serve.sh" not in check.stdout
        assert "would change stale: out/alpha/serve.sh" in check.stdout
    run_build(tmp_path, ".", "-o", "out")
    assert_finished(tmp_path / "out", new, manifest, point)
