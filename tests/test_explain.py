"""`spark explain` is self-contained: an installed spark-dsl has no docs/ folder to point at."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import pytest

from spark_dsl.codes import registry


def test_list_names_every_code_with_its_severity_and_title(spark: Callable[..., Any]) -> None:
    r = spark("explain", "--list")
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    entries = [line.split(maxsplit=2) for line in lines if re.match(r"SPK\d{3} ", line)]
    assert [code for code, _, _ in entries] == list(registry())
    for code, severity, title in entries:
        doc = registry()[code]
        assert (severity, title) == (doc.severity, doc.title)
    # Grouped by range, under the same headings as the rule reference.
    assert "SPK2xx: The recipe's hard constraints" in lines


def test_an_unknown_code_points_at_the_list_not_at_a_file(spark: Callable[..., Any]) -> None:
    r = spark("explain", "SPK299")
    assert r.returncode == 2
    assert "close codes: SPK232, SPK231, SPK230" in r.stderr
    assert "`spark explain` lists every code" in r.stderr
    assert "docs/" not in r.stderr


def test_no_argument_lists_every_code_with_its_title(spark: Callable[..., Any]) -> None:
    r = spark("explain")
    assert r.returncode == 0, r.stderr
    listed = [line.split(maxsplit=2) for line in r.stdout.splitlines() if re.match(r"SPK\d{3} ", line)]
    assert [(code, title) for code, _, title in listed] == [(c, d.title) for c, d in registry().items()]
    assert r.stdout == spark("explain", "--list").stdout
    # and says what else it explains
    assert "spark explain NAME" in r.stdout


@pytest.mark.parametrize(
    ("name", "words"),
    [
        ("max_model_len", ["key `max_model_len`", "context limit in tokens", "default: by recipe path"]),
        ("serve.port", ["key `serve { port }`", "default: 8000", "<= 65535"]),
        ("nodes", ["key `nodes`", "key `disaggregation { decode { nodes } }`"]),
        ("target slurm", ["block `target slurm`", "partition"]),
        ("slurm", ["block `target slurm`"]),
        ("b200", ["accelerator `b200`", "NVIDIA B200", "8 GPUs with 180 GB each", "validated", "nvfp4"]),
        ("H200", ["accelerator `h200`", "not validated", "SPK201", "NVFP4 cannot run"]),
        ("muse-spark-open", ["model `muse-spark-open`", "1,048,576 tokens", "16 KV heads", "256 routed"]),
        ("nvfp4", ["checkpoint `nvfp4`", "533 GB", "validated on:    NVIDIA"]),
        # A shipped model's facts, each with where it comes from (issue 15).
        (
            "llama-3-1-8b",
            [
                "model `llama-3-1-8b`",
                "32 layers",
                "32 query heads, 8 KV heads of 128",
                "  sources:\n",
                "    architecture: https://huggingface.co/meta-llama/Llama-3.1-8B/blob/main/config.json\n",
                "    checkpoints.bf16.weights_gb: https://huggingface.co/meta-llama/Llama-3.1-8B/blob/main/"
                "model.safetensors.index.json\n",
            ],
        ),
        ("mistral-7b-v0-1", ["sliding window: 4,096 tokens on 32 of 32 layers"]),
        ("muse-spark-open", ["  sources:\n    every fact: the recipe (spark_dsl/catalog/models.yaml)"]),
    ],
)
def test_a_key_block_accelerator_model_or_checkpoint_is_explained(
    spark: Callable[..., Any], name: str, words: list[str]
) -> None:
    r = spark("explain", name)
    assert r.returncode == 0, r.stderr
    for word in words:
        assert word in r.stdout, (word, r.stdout)


def test_a_key_is_explained_from_the_schema_in_markdown_too(spark: Callable[..., Any]) -> None:
    r = spark("explain", "max_num_seqs", "--format", "markdown")
    assert r.returncode == 0 and r.stdout.startswith("## key `max_num_seqs`\n\n- **what**: ")


def test_an_unknown_name_is_a_usage_error_with_a_did_you_mean(spark: Callable[..., Any]) -> None:
    r = spark("explain", "max_model_lenght")
    assert r.returncode == 2
    assert "did you mean `max_model_len`?" in r.stderr and "Traceback" not in r.stderr


def test_a_code_and_list_together_is_a_usage_error(spark: Callable[..., Any]) -> None:
    r = spark("explain", "SPK212", "--list")
    assert r.returncode == 2
    assert "not both" in r.stderr
