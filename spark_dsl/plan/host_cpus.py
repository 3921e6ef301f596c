"""vLLM's CPU backend: the host CPUs each node's ranks bind their OpenMP threads to.

`runtime.cpu_cores` is a Linux CPU list (`0-31`, `0-15,32-47`, as `taskset -c` and cpusets write
it). Each node's launch runs `tp x local data-parallel replicas` ranks, and vLLM reads their CPUs
from `VLLM_CPU_OMP_THREADS_BIND`, one list per rank separated by `|` (`0-31|32-63`), rank 0 first
and, with data parallelism, the local replicas in turn (`vllm/utils/ompmultiprocessing.py`,
`OMPProcessManager._parse_omp_threads_bind_env`). The CPUs are split into equal runs in their
order; any left over are bound to no rank, which leaves them to the API server.
"""

from __future__ import annotations

import re

from spark_dsl.plan.model import Pool

# vLLM's own variable for the binding (`vllm/envs.py`): `auto` (its default) binds each rank to a
# NUMA node of its own, `nobind` leaves the threads to OpenMP.
THREADS_BIND_ENV = "VLLM_CPU_OMP_THREADS_BIND"
# A CPU id past this is no host's (Linux's NR_CPUS is at most 8192): a typo, not a machine.
MOST_CPUS = 8192
_PART = re.compile(r"(\d+)(?:-(\d+))?")


def parse(text: str) -> list[int] | str:
    """The CPU ids of a Linux CPU list, in its order, or what is wrong with it."""
    ids: list[int] = []
    for part in text.split(","):
        m = _PART.fullmatch(part.strip())
        if m is None:
            return f"`{part.strip()}` is not a CPU id or a range `FIRST-LAST`"
        first, last = int(m.group(1)), int(m.group(2) or m.group(1))
        if last < first:
            return f"the range `{part.strip()}` runs backwards"
        if last >= MOST_CPUS:
            return f"CPU {last} is past the {MOST_CPUS} CPUs Linux numbers"
        ids += range(first, last + 1)
    if len(set(ids)) != len(ids):
        return "a CPU is listed twice"
    return ids


def local_ranks(pool: Pool) -> int:
    """The ranks one node of the pool runs: its tensor-parallel group times its local replicas."""
    if pool.dp is None:
        return pool.tp
    local = pool.dp if pool.nodes == 1 else max(pool.dp // pool.nodes, 1)
    return pool.tp * local


def _spelled(ids: list[int]) -> str:
    """`0-3,8` for [0, 1, 2, 3, 8]: consecutive ids as ranges."""
    runs: list[list[int]] = []
    for cpu in ids:
        if runs and cpu == runs[-1][1] + 1:
            runs[-1][1] = cpu
        else:
            runs.append([cpu, cpu])
    return ",".join(str(a) if a == b else f"{a}-{b}" for a, b in runs)


def binding(ids: list[int], ranks: int) -> str:
    """`VLLM_CPU_OMP_THREADS_BIND` for `ranks` ranks over these CPUs: equal runs, in order."""
    size = len(ids) // ranks
    return "|".join(_spelled(ids[i * size : (i + 1) * size]) for i in range(ranks))
