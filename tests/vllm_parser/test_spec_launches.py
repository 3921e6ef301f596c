"""Every launch of specs/ parses with vLLM 0.33.0's own serve parser, and `plan --verify-vllm` bites."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from spark_dsl.pipeline import collect_paths, run

REPO = Path(__file__).resolve().parents[2]


def spec_launches() -> list[tuple[str, ...]]:
    result = run(collect_paths([str(REPO / "specs")], REPO), REPO)
    assert not result.has_errors
    return [
        launch.argv for _, launches in result.planned() for launch in launches if launch.argv[:2] == ("vllm", "serve")
    ]


def test_every_spec_launch_parses(vllm_verify: Any, vllm_assert_all_ok: Callable[[Any], None]) -> None:
    argvs = spec_launches()
    assert len(argvs) >= 15
    vllm_assert_all_ok(vllm_verify(argvs, []))


def test_every_vllm_config_file_parses_to_its_launch(
    vllm_verify: Any, vllm_assert_all_ok: Callable[[Any], None]
) -> None:
    # The committed targets/ are what `spark build specs -o targets` writes (a test keeps them current).
    result = run(collect_paths([str(REPO / "specs")], REPO), REPO)
    configs = []
    for plan, launches in result.planned():
        path = REPO / "targets" / plan.name / "vllm-config.yaml"
        if path.exists():
            (launch,) = launches
            configs.append({"path": path, "argv": launch.argv})
    assert len(configs) >= 5
    vllm_assert_all_ok(vllm_verify([], configs))


def _plan(*args: str, cwd: Path, python: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "spark_dsl", "plan", *args, "--verify-vllm", "--vllm-python", str(python)],
        cwd=cwd,
        capture_output=True,
        text=True,
        env={**os.environ, "NO_COLOR": "1"},
        timeout=600,
    )


def test_plan_verify_vllm_accepts_the_specs(vllm_python: Path) -> None:
    r = _plan("specs", cwd=REPO, python=vllm_python)
    assert r.returncode == 0, r.stderr
    assert "26 of 26 launches accepted" in r.stderr


def test_plan_verify_vllm_reports_a_flag_vllm_rejects(vllm_python: Path, tmp_path: Path) -> None:
    # An extra flag this vLLM does not know: the spec checks with a warning (SPK903), vLLM refuses it.
    (tmp_path / "a.spark").write_text(
        "deployment muse {\n  model = muse-spark-open\n  accelerator = b200\n"
        '  serve { extra_args = ["--enable-magic"] }\n}\n'
    )
    r = _plan("a.spark", cwd=tmp_path, python=vllm_python)
    assert r.returncode == 1
    assert "rejects the server launch (node 0) of muse" in r.stderr and "--enable-magic" in r.stderr
    assert "0 of 1 launches accepted" in r.stderr
