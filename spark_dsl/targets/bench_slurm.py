"""The benchmark as a Slurm batch job, `bench.sbatch`: bench.sh's body under `#SBATCH` lines.

One task on one node, no GPUs: the benchmark is a client. The partition, account and QOS are the
deployment's own (`target slurm`), so the job lands where the deployment's nodes can be reached;
its time limit is BENCH_TIME. Submit it with the address of the deployment's head (or router):
`sbatch bench.sbatch HEAD_ADDRESS` (sbatch passes arguments after the script to it). The node
running it needs `vllm` on its PATH.
"""

from __future__ import annotations

from spark_dsl.targets import bench, endpoint
from spark_dsl.targets.common import Job, TargetError
from spark_dsl.targets.registry import Target
from spark_dsl.targets.slurm import slurm_time

FILE_NAME = "bench.sbatch"
BENCH_TIME = 3600  # an hour: ten rounds of the concurrency, with room for a long output length
OUTPUT = "bench-%j.out"


# What a client job reads of `target slurm` (`Target.reads`): where it is queued.
SLURM_READS = ("target.slurm.partition", "target.slurm.account", "target.slurm.qos")


def client_directives(job: Job, role: str, seconds: int, output: str) -> list[str]:
    """The `#SBATCH` lines of a client job (the benchmark, the smoke check): one task on one node,
    no GPUs, in the deployment's own partition, account and QOS (`target slurm`), so it lands where
    the deployment's nodes can be reached."""
    slurm = job.plan.target("slurm")
    return [
        _directive("job-name", f"{job.name}-{role}"),
        _directive("nodes", 1),
        _directive("ntasks", 1),
        _directive("time", slurm_time(seconds)),
        *(_directive(key, slurm.value(key)) for key in _queue_keys() if slurm.value(key)),
        _directive("output", output),
    ]


def _queue_keys() -> list[str]:
    return [path.removeprefix("target.slurm.") for path in SLURM_READS]


def _directive(option: str, value: str | int) -> str:
    text = f"--{option}={value}"
    if not text.isprintable() or any(ch.isspace() for ch in text):
        raise TargetError(f"`{option}` holds a character that cannot go into an #SBATCH line")
    return f"#SBATCH {text}"


def render(job: Job) -> str:
    header = job.header(
        bench.summary(job),
        f"Submit with `sbatch {FILE_NAME} HEAD_ADDRESS` (or export {endpoint.ADDRESS}); the summary goes to {OUTPUT}.",
        *bench.usage_lines(FILE_NAME)[1:],
        image=False,
    )
    directives = client_directives(job, "bench", BENCH_TIME, OUTPUT)
    lines = [
        "#!/usr/bin/env bash",
        *directives,
        *(f"# {line}" for line in header),
        *bench.body_lines(job.plan, FILE_NAME),
    ]
    return "\n".join(lines) + "\n"


TARGET = Target(
    "bench-slurm",
    FILE_NAME,
    "a Slurm batch script, `bench.sbatch`, that runs `vllm bench serve` on one node",
    render,
    client=True,
    reads=(*bench.READS, *SLURM_READS),
)
