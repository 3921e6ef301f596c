"""What `job.sbatch` prepares on its nodes before any launch: the locked-memory check RDMA needs, and
pyxis's named container, imported once per node and reused by every step.

Both are written as shell lines the Slurm target places; docs/targets.md ("Fabric", "Slurm (`job.sbatch`)")
gives the sources.
"""

from __future__ import annotations

import hashlib
import re

from spark_dsl.targets.common import Job
from spark_dsl.targets.pod_resources import RDMA_FABRICS, fabric
from spark_dsl.targets.shell_words import quote

# Slurm FAQ, "Why is my MPI job failing due to the locked memory (memlock) limit being too low?"
# (slurm.schedmd.com/faq.html#memlock): by default Slurm gives a job the resource limits of the shell
# that submitted it (PropagateResourceLimits), a login node's small RLIMIT_MEMLOCK included, and RDMA
# must pin (lock) the memory it registers.
MEMLOCK_FAQ = "https://slurm.schedmd.com/faq.html#memlock"
# Enroot names a container's folder after it and pyxis reads `NAME:FLAGS` (pyxis `args.c`,
# spank_option_container_name): the name keeps to lower-case letters, digits and `-`.
_UNSAFE = re.compile(r"[^a-z0-9]+")
_SLUG_LENGTH = 40


def memlock_check(job: Job) -> list[str]:
    """Lines that stop the job before any step when RDMA is in use and the job's locked-memory limit
    (`ulimit -l`, which its steps inherit) is not unlimited, with the ways to lift it."""
    chosen = fabric(job)
    if chosen not in RDMA_FABRICS:
        return []
    return [
        f"# fabric = {chosen}: RDMA pins the memory it registers, so the locked-memory limit must be unlimited;",
        "# Slurm gives the job the submitting shell's limit unless told otherwise (PropagateResourceLimits).",
        'if [ "$(ulimit -l)" != unlimited ]; then',
        "  {",
        f'    echo "spark: fabric = {chosen} needs an unlimited locked-memory limit; this job has $(ulimit -l) KiB."',
        '    echo "  Run \\`ulimit -l unlimited\\` in the shell that runs sbatch,"',
        '    echo "  or submit with \\`sbatch --propagate=NONE\\` to take the nodes\' own limit,"',
        '    echo "  or ask the admins for PropagateResourceLimitsExcept=MEMLOCK and LimitMEMLOCK=infinity"',
        f'    echo "  in slurmd.service ({MEMLOCK_FAQ})."',
        "  } >&2",
        "  exit 1",
        "fi",
        "",
    ]


def container_name(job: Job, image: str) -> str:
    """pyxis's `--container-name` for steps of `image`: the deployment's name, made safe, and a digest
    of the name and the image, so another image (or deployment) never reuses this one's container."""
    slug = _UNSAFE.sub("-", job.name.lower()).strip("-")[:_SLUG_LENGTH].strip("-") or "deployment"
    digest = hashlib.sha256(f"{job.name}\0{image}".encode()).hexdigest()[:12]
    return f"spark-{slug}-{digest}"


def import_step(job: Job) -> list[str]:
    """pyxis: one step that imports the vLLM image once on every node into the named container that
    the steps after it reuse (pyxis README, `--container-name`: an existing container of that name is
    used and the import skipped), so no two steps on a node import it at the same time."""
    if job.setting("container") != "pyxis":
        return []
    nodes = job.plan.total_nodes
    image = job.image
    return [
        "",
        "# pyxis: import the image once on each node; every step below reuses it by --container-name.",
        f"srun --nodes={nodes} --ntasks={nodes} --ntasks-per-node=1 --container-image={quote(image)}"
        f" --container-name={container_name(job, image)} true",
    ]
