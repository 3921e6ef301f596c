"""`target slurm { constraint, reservation, exclude, extra_directives }` (issue 16, item 4): each lands
in job.sbatch as one `#SBATCH` line, which the test cluster's real sbatch reads; the checker's
codes (SPK541-SPK543) have their fixture pairs in tests/fixtures/rules/."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
import validators as v

SPEC = """\
deployment muse-sched {
  model       = muse-spark-open
  accelerator = b200

  target slurm {
    partition = "gpu"
    SCHEDULING
  }
}
"""


def build(tmp_path: Path, scheduling: str) -> Path:
    tmp_path.mkdir(parents=True, exist_ok=True)
    spec = tmp_path / "sched.spark"
    spec.write_text(SPEC.replace("SCHEDULING", scheduling))
    out = tmp_path / "out"
    argv = [sys.executable, "-m", "spark_dsl", "build", str(spec), "-o", str(out), "--root", str(tmp_path)]
    proc = subprocess.run(argv, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return out / "muse-sched" / "job.sbatch"


def directives(script: Path) -> list[str]:
    return re.findall(r"^#SBATCH (.*)$", script.read_text(), re.MULTILINE)


def test_each_setting_is_one_directive_before_the_output(tmp_path: Path) -> None:
    script = build(
        tmp_path,
        'constraint = "b200&ib"\n    reservation = "maint"\n    exclude = "node[1-2],gpu07"\n'
        '    extra_directives = ["--mail-type=END", "--mail-user=ops@example.com", "--requeue"]',
    )
    found = directives(script)
    assert found[found.index("--partition=gpu") + 1 :] == [
        "--constraint=b200&ib",
        "--reservation=maint",
        "--exclude=node[1-2],gpu07",
        "--mail-type=END",
        "--mail-user=ops@example.com",
        "--requeue",
        "--output=logs/%x-%j.out",
    ]
    v.shellcheck(script).check()


@pytest.mark.slurm
def test_the_real_sbatch_schedules_exclude_and_extra_directives(tmp_path: Path, spec_cluster) -> None:
    # Two nodes: excluding node2 leaves node1 for the one-node deployment.
    script = build(tmp_path, 'exclude = "node2"\n    extra_directives = ["--mail-type=END", "--comment=spark"]')
    (tmp_path / "out" / "muse-sched" / "logs").mkdir()
    result = spec_cluster.test_only(script)
    assert result.ok, result
    assert "node1" in result.output


@pytest.mark.slurm
def test_the_real_sbatch_reads_the_reservation_and_the_exclusion(tmp_path: Path, spec_cluster) -> None:
    # The cluster has no reservation `maint`, and excluding both nodes leaves none: sbatch says so,
    # which shows it read each directive as written.
    reservation = spec_cluster.test_only(build(tmp_path / "r", 'reservation = "maint"'))
    assert not reservation.ok and "reservation" in reservation.output.lower(), reservation
    everything = spec_cluster.test_only(build(tmp_path / "x", 'exclude = "node[1-2]"'))
    assert not everything.ok, everything
