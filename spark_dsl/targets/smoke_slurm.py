"""The smoke check as a Slurm batch job, `smoke.sbatch`: smoke.sh's checks under `#SBATCH` lines.

One task on one node in the deployment's own partition, account and QOS (as `bench.sbatch`), so
the check runs from where the cluster's clients are. Submit it with the address of the deployment's
head (or router): `sbatch smoke.sbatch HEAD_ADDRESS`; the result goes to its output file and the
job's exit state. The checks are smoke.sh's POSIX sh, run by bash here.
"""

from __future__ import annotations

from spark_dsl.targets import endpoint, smoke
from spark_dsl.targets.bench_slurm import SLURM_READS, client_directives
from spark_dsl.targets.common import Job
from spark_dsl.targets.registry import Target

FILE_NAME = "smoke.sbatch"
SMOKE_TIME = 15 * 60  # three requests, each allowed curl's 300 s
OUTPUT = "smoke-%j.out"


def render(job: Job) -> str:
    header = job.header(
        smoke.summary(job),
        f"Submit with `sbatch {FILE_NAME} HEAD_ADDRESS` (or export {endpoint.ADDRESS}); the result goes to "
        f"{OUTPUT} and the job's exit state. The port is {endpoint.PORT}, else the spec's.",
        image=False,
    )
    directives = client_directives(job, "smoke", SMOKE_TIME, OUTPUT)
    lines = ["#!/usr/bin/env bash", *directives, *(f"# {line}" for line in header), *smoke.body_lines(job, FILE_NAME)]
    return "\n".join(lines) + "\n"


TARGET = Target(
    "smoke-slurm",
    FILE_NAME,
    "a Slurm batch script, `smoke.sbatch`, that runs the smoke check on one node",
    render,
    client=True,
    reads=(*smoke.READS, *SLURM_READS),
)
