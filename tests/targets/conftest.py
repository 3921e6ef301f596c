"""Fixtures of the target tests: the spec plans, and a Slurm cluster whose partitions are the ones
the specs name."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from target_helpers import committed, spec_plans

from spark_dsl.plan.model import Planned

try:
    from slurm_cluster import SlurmCluster
except ImportError:  # pragma: no cover - tests/ as a package
    from ..slurm_cluster import SlurmCluster


@pytest.fixture(scope="session")
def plans() -> dict[str, Planned]:
    return spec_plans()


@pytest.fixture(scope="session")
def spec_cluster(tmp_path_factory):
    """A 2-node cluster with every partition a committed job.sbatch asks for, plus `gpu`."""
    wanted = {"gpu"}
    for script in committed("*/job.sbatch"):
        m = re.search(r"^#SBATCH --partition=(\S+)$", script.read_text(), re.MULTILINE)
        if m:
            wanted.update(m.group(1).split(","))
    cluster = SlurmCluster(tmp_path_factory.mktemp("spec-slurm"), nodes=2, partitions=sorted(wanted))
    cluster.start()
    try:
        yield cluster
    finally:
        cluster.stop(check=True)


@pytest.fixture
def job_dir(tmp_path: Path) -> Path:
    """A submit folder with the `logs/` the job scripts write to."""
    (tmp_path / "logs").mkdir()
    return tmp_path
