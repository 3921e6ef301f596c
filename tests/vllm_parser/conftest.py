"""The real-parser tier: launches parsed by the pinned vLLM's own argument parser.

Needs the venv that tools/vllm-parser/setup-env.sh builds (it prints the interpreter; export it
as SPARK_VLLM_PYTHON). Without it these tests FAIL rather than skip: CI builds it first.

For a test that proves a set of launches, use the `vllm_verify` fixture:

    @pytest.mark.vllm_parser
    def test_every_launch(vllm_verify):
        argvs, configs = ...  # argvs: [["vllm", "serve", MODEL, ...]]; configs: [{"path", "argv"}]
        assert_all_ok(vllm_verify(argvs, configs))

(`assert_all_ok` is importable as `from tests.vllm_parser.conftest import assert_all_ok` only if
`tests` is a package; the `vllm_assert_all_ok` fixture gives the same function without that.)
"""

from __future__ import annotations

import subprocess
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

from spark_dsl.catalog import VLLM_VERSION
from spark_dsl.vllm_verify import Verdict, default_python, verify_with_vllm

Verify = Callable[..., list[Verdict]]
HERE = Path(__file__).resolve().parent


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Every test in this folder belongs to the vllm_parser tier, marked or not."""
    for item in items:
        if HERE in Path(str(item.path)).resolve().parents:
            item.add_marker(pytest.mark.vllm_parser)


def verify_launches(
    argvs: Iterable[Sequence[str]],
    configs: Iterable[Mapping[str, Any]] = (),
    python: str | Path | None = None,
) -> list[Verdict]:
    """vLLM's verdicts on whole launches and on `--config` files (see spark_dsl.vllm_verify)."""
    return verify_with_vllm(argvs, configs, python if python is not None else default_python())


def assert_all_ok(verdicts: list[Verdict]) -> None:
    """Fail with every rejected launch and vLLM's reason, not just the first."""
    bad = [v for v in verdicts if not v.ok]
    if bad:
        lines = [
            f"- {' '.join(v.argv)}" + (f"  [config {v.config}]" if v.config else "") + f"\n    {v.error}" for v in bad
        ]
        pytest.fail(f"vLLM rejected {len(bad)} of {len(verdicts)} launches:\n" + "\n".join(lines))


@pytest.fixture(scope="session")
def vllm_python() -> Path:
    """The parser venv's interpreter, after checking it holds the pinned vLLM."""
    python = default_python()
    hint = (
        "run `bash tools/vllm-parser/setup-env.sh` and export SPARK_VLLM_PYTHON=<the path it "
        "prints> (the vllm_parser tier needs vLLM's real parser)"
    )
    if not python.exists():
        pytest.fail(f"no vLLM parser venv at {python}: {hint}", pytrace=False)
    found = subprocess.run(
        [str(python), "-c", "import importlib.metadata as m; print(m.version('vllm'))"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    if found.returncode != 0 or found.stdout.strip() != VLLM_VERSION:
        pytest.fail(
            f"{python} has vLLM {found.stdout.strip() or '(none)'}, the catalog pins "
            f"{VLLM_VERSION}: {hint}\n{found.stderr[-2000:]}",
            pytrace=False,
        )
    return python


@pytest.fixture(scope="session")
def vllm_verify(vllm_python: Path) -> Verify:
    """`vllm_verify(argvs, configs=())` -> list[Verdict], with the located parser venv."""

    def run(argvs: Iterable[Sequence[str]], configs: Iterable[Mapping[str, Any]] = ()) -> list[Verdict]:
        return verify_launches(argvs, configs, vllm_python)

    return run


@pytest.fixture(scope="session")
def vllm_assert_all_ok() -> Callable[[list[Verdict]], None]:
    return assert_all_ok
