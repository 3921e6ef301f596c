"""Prove launches against vLLM's real argument parser, in the venv setup-env.sh builds.

The checker, spark_dsl/data/check_launches.py, imports vLLM, so it runs in that venv's
interpreter (a subprocess), never in this process. It is shipped inside the package so that an
installed spark-dsl can find it.
"""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Iterable, Mapping, Sequence
from importlib import resources
from pathlib import Path
from typing import Any

from msgspec import Struct

from spark_dsl.catalog import VLLM_VERSION

__all__ = ["Verdict", "VllmVerifyError", "checker_script", "default_python", "verify_with_vllm"]


class Verdict(Struct, frozen=True):
    """vLLM's verdict on one launch; `config` is set for a `--config` file's verdict."""

    argv: tuple[str, ...]
    ok: bool
    error: str | None
    config: str | None = None


class VllmVerifyError(RuntimeError):
    """The checker could not run (missing venv, wrong vLLM version, crash): not a verdict."""


def default_python() -> Path:
    """$SPARK_VLLM_PYTHON, else the interpreter of setup-env.sh's default venv."""
    if env := os.environ.get("SPARK_VLLM_PYTHON"):
        return Path(env)
    root = Path(os.environ.get("SPARK_VLLM_ENV", Path.home() / f".cache/spark-dsl/vllm-{VLLM_VERSION}"))
    return root / "bin" / "python"


def checker_script() -> Path:
    """Path of check_launches.py as installed (the package is a directory, never a zip here)."""
    return Path(str(resources.files("spark_dsl.data").joinpath("check_launches.py")))


def verify_with_vllm(
    argvs: Iterable[Sequence[str]],
    configs: Iterable[Mapping[str, Any]] = (),
    python: str | os.PathLike[str] | None = None,
    *,
    timeout: float = 900,
    expect_version: str | None = VLLM_VERSION,
) -> list[Verdict]:
    """Verdicts for each argv (`["vllm", "serve", MODEL, ...]`), then for each config.

    A config is `{"path": <vllm-config.yaml>, "argv": <the launch it must equal>}`; its verdict is
    ok when `vllm serve MODEL --config path` parses and gives the same namespace as the argv.
    `expect_version=None` accepts whatever vLLM the interpreter has (a user checking their own).
    """
    request: dict[str, Any] = {
        "argvs": [list(a) for a in argvs],
        "configs": [{"path": os.fspath(c["path"]), "argv": list(c["argv"])} for c in configs],
    }
    if expect_version is not None:
        request["expect_version"] = expect_version
    interpreter = os.fspath(python if python is not None else default_python())
    if not Path(interpreter).exists():
        raise VllmVerifyError(
            f"no vLLM parser interpreter at {interpreter}: run tools/vllm-parser/setup-env.sh "
            "and set SPARK_VLLM_PYTHON to the path it prints"
        )
    try:
        proc = subprocess.run(
            [interpreter, os.fspath(checker_script())],
            input=json.dumps(request),
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as e:
        raise VllmVerifyError(f"the vLLM checker did not run: {e}") from e
    if proc.returncode != 0:
        tail = "\n".join(proc.stderr.strip().splitlines()[-15:])
        raise VllmVerifyError(f"the vLLM checker exited {proc.returncode}:\n{tail}")
    try:
        raw = json.loads(proc.stdout)
    except json.JSONDecodeError as e:
        raise VllmVerifyError(f"the vLLM checker printed no JSON: {proc.stdout[:500]!r}") from e
    return [Verdict(tuple(v["argv"]), bool(v["ok"]), v.get("error"), v.get("config")) for v in raw]
