"""vLLM's own parser rejects what it must, accepts the good launch, and agrees with the table.

All launches go through one checker run (vLLM's import costs seconds; each launch ~20 ms).
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from launch_samples import DSPARK, GOOD, MODEL

from spark_dsl import vllm_flags
from spark_dsl.vllm_verify import Verdict

pytestmark = pytest.mark.vllm_parser

REPO = Path(__file__).resolve().parents[2]
GOOD_YAML = """\
tensor-parallel-size: 8
enable-expert-parallel: true
no-enable-prefix-caching: true
enable-chunked-prefill: true
max-model-len: 32768
speculative-config:
  method: dspark
  model: Inferact/Muse-Spark-Open-DSpark
  num_speculative_tokens: 7
attention-backend: TRITON_ATTN
kv-cache-dtype: fp8
"""
NO_PREFIX_CACHING = ["vllm", "serve", MODEL, "--no-enable-prefix-caching"]

# name -> (argv, words the rejection must contain); None: must be accepted.
ARGVS: dict[str, tuple[list[str], str | None]] = {
    "good": (GOOD, None),
    "data-parallel worker": (
        ["vllm", "serve", MODEL, "-dp", "16", "-dpl", "8", "--headless", "-dpr", "8"],
        None,
    ),
    "misspelled flag": (
        ["vllm", "serve", MODEL, "--enable-expert-paralel"],
        "unrecognized arguments: --enable-expert-paralel",
    ),
    "abbreviated flag": (
        ["vllm", "serve", MODEL, "--tensor-parallel", "8"],
        "unrecognized arguments: --tensor-parallel",
    ),
    "nvfp4 is no quantization method": (
        ["vllm", "serve", MODEL, "--quantization", "nvfp4"],
        "nvfp4",
    ),
    "no dspark_adaptive method": (
        ["vllm", "serve", MODEL, "-sc", json.dumps({**DSPARK, "method": "dspark_adaptive"})],
        "dspark_adaptive",
    ),
    "headless with api servers": (
        ["vllm", "serve", MODEL, "--headless", "--api-server-count", "2"],
        "--headless",
    ),
    "unknown kv-cache dtype": (["vllm", "serve", MODEL, "--kv-cache-dtype", "fp9"], "fp9"),
    "unknown attention backend": (
        ["vllm", "serve", MODEL, "--attention-backend", "AITER"],
        "AITER",
    ),
    "value given to a switch": (
        ["vllm", "serve", MODEL, "--enable-chunked-prefill", "true"],
        "unrecognized arguments: true",
    ),
}  # fmt: skip


@pytest.fixture(scope="module")
def verdicts(vllm_verify, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Verdict]:
    folder = tmp_path_factory.mktemp("vllm-configs")
    (folder / "good.yaml").write_text(GOOD_YAML, encoding="utf-8")
    (folder / "false.yaml").write_text("enable-prefix-caching: false\n", encoding="utf-8")
    (folder / "no.yaml").write_text("no-enable-prefix-caching: true\n", encoding="utf-8")
    configs = {
        "good config": {"path": folder / "good.yaml", "argv": GOOD},
        "false is dropped": {"path": folder / "false.yaml", "argv": NO_PREFIX_CACHING},
        "no- spelling": {"path": folder / "no.yaml", "argv": NO_PREFIX_CACHING},
    }
    got = vllm_verify([argv for argv, _ in ARGVS.values()], list(configs.values()))
    assert len(got) == len(ARGVS) + len(configs)
    return dict(zip([*ARGVS, *configs], got, strict=True))


@pytest.mark.parametrize("name", [n for n, (_, words) in ARGVS.items() if words is None])
def test_accepted(verdicts: dict[str, Verdict], name: str) -> None:
    assert verdicts[name].ok, verdicts[name].error


@pytest.mark.parametrize("name", [n for n, (_, words) in ARGVS.items() if words is not None])
def test_rejected(verdicts: dict[str, Verdict], name: str) -> None:
    verdict, words = verdicts[name], ARGVS[name][1]
    assert not verdict.ok
    assert words in (verdict.error or ""), verdict.error


def test_equivalent_config_parses_to_the_same_namespace(verdicts: dict[str, Verdict]) -> None:
    assert verdicts["good config"].ok, verdicts["good config"].error
    assert verdicts["no- spelling"].ok, verdicts["no- spelling"].error


def test_config_false_is_dropped_by_vllm(verdicts: dict[str, Verdict]) -> None:
    # VLLM.md gotcha 1: `enable-prefix-caching: false` leaves the value at None (vLLM's default,
    # normally on), so it differs from --no-enable-prefix-caching, which sets False.
    verdict = verdicts["false is dropped"]
    assert not verdict.ok
    assert "enable_prefix_caching: config gives None, argv gives False" in (verdict.error or "")
    assert vllm_flags.check_config({"enable-prefix-caching": False})  # the fast check knows


@pytest.mark.parametrize("name", list(ARGVS))
def test_fast_check_agrees_with_vllm(verdicts: dict[str, Verdict], name: str) -> None:
    problems = vllm_flags.check_argv(ARGVS[name][0])
    assert (problems == []) == verdicts[name].ok, (problems, verdicts[name].error)


def test_committed_flag_table_matches_a_fresh_dump(vllm_python: Path) -> None:
    committed = vllm_flags.flag_table()
    fresh = subprocess.run(
        [str(vllm_python), str(REPO / "tools" / "vllm-parser" / "dump_flags.py"),
         "--date", committed["meta"]["generated_on"]],
        capture_output=True, text=True, timeout=600, check=True,
    )  # fmt: skip
    table = json.loads(fresh.stdout)
    assert table["meta"]["vllm_version"] == committed["meta"]["vllm_version"]
    for part in ("options", "actions", "positionals", "deferred", "env_vars"):
        assert table[part] == committed[part], (
            f"spark_dsl/data/vllm_flags.json is stale ({part}); regenerate it with tools/vllm-parser/dump_flags.py"
        )
