"""The committed vLLM flag table and the fast (vLLM-free) launch check built on it.

The real-parser proof of the same launches is tests/vllm_parser/ (marker vllm_parser).
"""

from __future__ import annotations

import ast
import json
import re
import sys
from pathlib import Path

import pytest
from launch_samples import DSPARK, GOOD, MODEL

from spark_dsl import vllm_flags
from spark_dsl.catalog import VLLM_VERSION
from spark_dsl.vllm_flags import FlagProblem, check_argv, check_config, known_env_var
from spark_dsl.vllm_verify import VllmVerifyError, default_python, verify_with_vllm

REPO = Path(__file__).resolve().parent.parent
TABLE = REPO / "spark_dsl" / "data" / "vllm_flags.json"


def with_options(*options: str) -> list[str]:
    return ["vllm", "serve", MODEL, *options]


def options_of(problems: list[FlagProblem]) -> list[str]:
    return [p.option for p in problems]


# -- the table -----------------------------------------------------------------------------------


def test_table_is_for_the_pinned_vllm_version() -> None:
    assert vllm_flags.table_version() == VLLM_VERSION
    meta = vllm_flags.flag_table()["meta"]
    assert meta["generated_by"] == "tools/vllm-parser/dump_flags.py"
    assert re.fullmatch(r"\d{4}-\d{2}-\d{2}", meta["generated_on"])


def test_table_is_stored_sorted_and_stable() -> None:
    text = TABLE.read_text(encoding="utf-8")
    table = json.loads(text)
    assert text == json.dumps(table, indent=1, sort_keys=True) + "\n"
    for entry in table["actions"].values():
        assert entry["option_strings"] == sorted(entry["option_strings"])
    assert table["env_vars"] == sorted(table["env_vars"])


def test_table_has_the_hidden_boolean_aliases() -> None:
    table = vllm_flags.flag_table()
    key = table["options"]["--no-enable-prefix-caching"]
    entry = table["actions"][key]
    assert entry["dest"] == "enable_prefix_caching"
    assert entry["boolean_pair"] and not entry["takes_value"]
    assert "--no-enable-prefix-caching" in entry["hidden"]  # not in --help, still parsed
    assert set(entry["negative"]) == {"--no-enable-prefix-caching", "--disable-prefix-caching"}
    assert table["actions"][table["options"]["-tp"]]["dest"] == "tensor_parallel_size"


def test_env_vars() -> None:
    assert known_env_var("VLLM_USE_RUST_FRONTEND")
    assert known_env_var("VLLM_USE_V2_MODEL_RUNNER")
    assert known_env_var("VLLM_ROCM_MUSE_MOE_ONLINE_QUANT")
    assert not known_env_var("VLLM_ATTENTION_BACKEND")  # gone: vLLM ignores it silently


# -- check_argv ----------------------------------------------------------------------------------


def test_a_realistic_launch_is_accepted() -> None:
    assert check_argv(GOOD) == []


@pytest.mark.parametrize(
    "options",
    [
        ["--tensor-parallel-size=8", "-ep", "--disable-prefix-caching"],
        ["-O3", "--max-model-len", "32k", "--max-num-batched-tokens", "16k"],
        ["--limit-mm-per-prompt.image", "0", "--language-model-only"],
        ["--headless", "--data-parallel-start-rank", "8", "--data-parallel-size", "16"],
        ["--quantization", "modelopt_fp4", "--kv-cache-dtype", "fp8_e4m3"],
        ["--attention-backend", "rocm_aiter_fa", "--gpu-memory-utilization", "0.92"],
        ["--spec-method", "dspark", "--spec-tokens", "7"],
    ],
)
def test_other_good_launches(options: list[str]) -> None:
    assert check_argv(with_options(*options)) == []


@pytest.mark.parametrize(
    ("options", "bad", "words"),
    [
        (["--enable-expert-paralel"], "--enable-expert-paralel", "mean --enable-expert-parallel"),
        (["--tensor-parallel", "8"], "--tensor-parallel", "abbreviated"),
        (["--quantization", "nvfp4"], "--quantization", "unknown quantization method 'nvfp4'"),
        (["--kv-cache-dtype", "fp9"], "--kv-cache-dtype", "unknown kv-cache dtype 'fp9'"),
        (["--headless", "--api-server-count", "2"], "--api-server-count", "--headless"),
        (["--attention-backend", "AITER"], "--attention-backend", "unknown attention backend"),
        (["-sc", '{"method": "dspark_adaptive"}'], "-sc", "dspark_adaptive"),
        (["-sc", '{"method": "dspark", "adaptive": true}'], "-sc", "keys"),
        (["--uvicorn-log-level", "loud"], "--uvicorn-log-level", "invalid choice"),
        (["--max-model-len"], "--max-model-len", "expects a value"),
        (["--max-model-len", "--enforce-eager"], "--max-model-len", "expects a value"),
        (["--enable-chunked-prefill", "true"], "--enable-chunked-prefill", "takes no value"),
        (["--enable-chunked-prefill=false"], "--enable-chunked-prefill=false", "takes no value"),
        (["--max-num-seqs", "1k"], "--max-num-seqs", "invalid int"),
        (["--max-model-len", "1.5M"], "--max-model-len", "invalid"),
        (["-tp", "8", "--tensor-parallel-size", "4"], "--tensor-parallel-size", "more than once"),
    ],
)  # fmt: skip
def test_bad_launches_are_rejected(options: list[str], bad: str, words: str) -> None:
    problems = check_argv(with_options(*options))
    assert bad in options_of(problems), problems
    assert any(words in p.message for p in problems), problems


def test_model_must_be_positional() -> None:
    assert check_argv(["vllm", "serve", "--tensor-parallel-size", "8"])
    assert check_argv(["vllm", "run", MODEL])


# -- check_config --------------------------------------------------------------------------------


def test_config_false_for_a_boolean_pair_is_flagged() -> None:
    problems = check_config({"enable-prefix-caching": False, "tensor-parallel-size": 8})
    assert options_of(problems) == ["--enable-prefix-caching"]
    assert "no-enable-prefix-caching: true" in problems[0].message


def test_equivalent_config_is_accepted() -> None:
    config = {
        "tensor-parallel-size": 8,
        "enable-expert-parallel": True,
        "no-enable-prefix-caching": True,
        "enable-chunked-prefill": True,
        "max-model-len": 32768,
        "speculative-config": DSPARK,
        "attention-backend": "TRITON_ATTN",
        "kv-cache-dtype": "fp8",
    }
    assert check_config(config) == []


def test_config_keys_are_checked_like_options() -> None:
    problems = check_config({"tensor-paralel-size": 8, "quantization": "nvfp4"})
    assert options_of(problems) == ["--tensor-paralel-size", "--quantization"]


# -- one version pin -----------------------------------------------------------------------------


def test_parser_tier_derives_the_version_from_the_catalog() -> None:
    setup = (REPO / "tools" / "vllm-parser" / "setup-env.sh").read_text(encoding="utf-8")
    assert "from spark_dsl.catalog import VLLM_VERSION" in setup
    assert VLLM_VERSION not in setup
    assert ".".join(VLLM_VERSION.split(".")[:2]) not in setup
    assert not re.search(r"vllm==\d", setup)  # pinned as vllm==$version
    for rel in (
        "tools/vllm-parser/dump_flags.py",
        "spark_dsl/data/check_launches.py",
        "spark_dsl/vllm_flags.py",
        "spark_dsl/vllm_verify.py",
        "tests/vllm_parser/conftest.py",
        "tests/vllm_parser/test_real_parser.py",
    ):
        assert VLLM_VERSION not in (REPO / rel).read_text(encoding="utf-8"), rel


def test_default_parser_env_is_named_after_the_version(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SPARK_VLLM_PYTHON", raising=False)
    monkeypatch.delenv("SPARK_VLLM_ENV", raising=False)
    assert default_python().parent.parent.name == f"vllm-{VLLM_VERSION}"


def test_missing_parser_env_is_an_error_not_a_verdict(tmp_path: Path) -> None:
    with pytest.raises(VllmVerifyError, match=r"setup-env\.sh"):
        verify_with_vllm([GOOD], python=tmp_path / "no-such-python")


def test_flag_check_needs_only_the_standard_library() -> None:
    tree = ast.parse((REPO / "spark_dsl" / "vllm_flags.py").read_text(encoding="utf-8"))
    imported = {
        (node.module if isinstance(node, ast.ImportFrom) else alias.name).split(".")[0]
        for node in ast.walk(tree)
        if isinstance(node, ast.Import | ast.ImportFrom)
        for alias in node.names
    }
    assert imported <= set(sys.stdlib_module_names) | {"__future__"}, imported
