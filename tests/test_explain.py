"""`spark explain` is self-contained: an installed spark-dsl has no docs/ folder to point at."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
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
    assert "close codes: SPK2" in r.stderr  # which ones: tests/test_rules.py
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
        (
            "b200",
            ["accelerator `b200`", "NVIDIA B200", "8 GPUs with 180 GB each", "validated", "NVFP4 checkpoints run"],
        ),
        ("H200", ["accelerator `h200`", "does not validate H200", "SPK201", "NVFP4 checkpoints cannot run"]),
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


# A model declared in a spec (issue 15): `spark explain NAME` looks in the specs of the current
# folder, as `spark check` with no path does, or in the files and folders `--spec` names.
QWEN = """\
# Qwen/Qwen3-8B
model my-qwen {
  display_name = "Qwen3 8B"
  layers       = 36
  hidden_size  = 4096
  query_heads  = 32
  kv_heads     = 8
  head_dim     = 128
  max_context  = 40960
  checkpoint bf16 {
    repository = "Qwen/Qwen3-8B"
    size       = 16_381_470_720B
  }
}
"""
QWEN_DEPLOYMENT = """\
import "models/qwen.spark"

deployment qwen-h100 {
  model       = my-qwen
  accelerator = h100
  target shell {}
}
"""


def test_a_model_declared_in_the_project_is_explained_with_where_each_fact_is(
    spark: Callable[..., Any], project: Callable[[dict[str, str]], Any]
) -> None:
    project({"models/qwen.spark": QWEN, "deploy.spark": QWEN_DEPLOYMENT})
    r = spark("explain", "my-qwen")
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("model `my-qwen`\n"), r.stdout
    for words in (
        "declared:       models/qwen.spark:2",
        "name:           Qwen3 8B",
        "context:        up to 40,960 tokens",
        "layers:         36 layers, hidden size 4,096",
        "32 query heads, 8 KV heads of 128",
        "sliding window: none",
        "experts:        none (dense: no `ep`, SPK227)",
        "checkpoints:    bf16 (16.3815 GB)",
        "  sources:\n",
        "    layers: models/qwen.spark:4\n",
        "    max_context: models/qwen.spark:9\n",
        "    checkpoints.bf16.repository: models/qwen.spark:11\n",
        "    checkpoints.bf16.size: models/qwen.spark:12\n",
    ):
        assert words in r.stdout, (words, r.stdout)
    # A declaration states no parameter count: no row makes one up.
    assert "parameters" not in r.stdout and "0B total" not in r.stdout


def test_a_declared_model_is_found_through_the_imports_of_a_named_spec(
    spark: Callable[..., Any], project: Callable[[dict[str, str]], Any], tmp_path: Any
) -> None:
    project({"app/models/qwen.spark": QWEN, "app/deploy.spark": QWEN_DEPLOYMENT, "elsewhere/README": "x"})
    r = spark("explain", "my-qwen", "--spec", "../app/deploy.spark", "--format", "markdown", cwd=tmp_path / "elsewhere")
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("## model `my-qwen`\n"), r.stdout
    assert "- **declared**: ../app/models/qwen.spark:2" in r.stdout
    assert "  - head_dim: ../app/models/qwen.spark:8" in r.stdout


def test_a_declared_model_with_errors_is_a_usage_error_that_says_where(
    spark: Callable[..., Any], project: Callable[[dict[str, str]], Any]
) -> None:
    project({"qwen.spark": QWEN.replace("  kv_heads     = 8\n", "")})
    r = spark("explain", "my-qwen")
    assert r.returncode == 2
    assert "model `my-qwen` (qwen.spark:2) has errors" in r.stderr, r.stderr
    assert "SPK126" in r.stderr and "`spark check qwen.spark`" in r.stderr
    assert "Traceback" not in r.stderr


def test_a_name_neither_shipped_nor_declared_says_where_it_looked(
    spark: Callable[..., Any], project: Callable[[dict[str, str]], Any]
) -> None:
    project({"spark.toml": "", "models/qwen.spark": QWEN})
    r = spark("explain", "my-qwem")
    assert r.returncode == 2
    assert "or a model declared in the specs under ." in r.stderr, r.stderr
    assert "did you mean `my-qwen`?" in r.stderr
    r = spark("explain", "my-qwen", "--spec", "missing.spark")
    assert r.returncode == 2 and "missing.spark" in r.stderr and "Traceback" not in r.stderr


def test_a_spec_that_does_not_parse_does_not_hide_a_declared_model(
    spark: Callable[..., Any], project: Callable[[dict[str, str]], Any]
) -> None:
    project({"spark.toml": "", "models/qwen.spark": QWEN, "broken.spark": "deployment {{{\n"})
    r = spark("explain", "my-qwen")
    assert r.returncode == 0, r.stderr
    assert "declared:       models/qwen.spark:2" in r.stdout


# An accelerator outside the recipe (issue 15): its memory and formats with their sources, and
# what any model gets there; the recipe's advice is labelled as the recipe model's.
def test_an_accelerator_outside_the_recipe_shows_its_formats_and_sources(spark: Callable[..., Any]) -> None:
    r = spark("explain", "h100")
    assert r.returncode == 0, r.stderr
    for words in (
        "node:            8 GPUs with 80 GB each",
        "FP8:             yes: FP8 checkpoints run",
        "FP4:             no: NVFP4 checkpoints cannot run (SPK225)",
        "other models:    its first checkpoint unless `checkpoint` says, parallel = tp",
        "muse-spark-open: its recipe does not validate H100: an error unless `allow_unvalidated = true` "
        "(SPK201); no default checkpoint (SPK118); parallel = tp + ep",
        "  sources:\n",
        "    memory_gb: https://docs.nvidia.com/launchpad/ai/h100-mig/latest/h100-mig-gpu.html\n",
        "    fp8: https://nvidia.github.io/TransformerEngine/support_matrix.html\n",
    ):
        assert words in r.stdout, (words, r.stdout)
    # No row of the recipe's advice stands as if it applied to every model.
    labels = [line.split(":", 1)[0].strip() for line in r.stdout.splitlines()[1:] if not line.startswith("    ")]
    assert "recipe" not in labels and "checkpoint" not in labels and "parallel" not in labels, labels


def test_a_validated_accelerator_says_what_the_recipe_model_gets_there(spark: Callable[..., Any]) -> None:
    r = spark("explain", "mi355x")
    assert r.returncode == 0, r.stderr
    assert "FP8:             yes: FP8 checkpoints run" in r.stdout
    assert "FP4:             no: NVFP4 checkpoints cannot run (SPK225)" in r.stdout
    assert "muse-spark-open: validated by its recipe: checkpoint = mxfp4, parallel = tp" in r.stdout, r.stdout
    assert "    memory_gb: https://rocm.docs.amd.com/" in r.stdout


def test_without_a_project_marker_only_the_current_folders_own_specs_are_read(
    spark: Callable[..., Any], project: Callable[[dict[str, str]], Any], tmp_path: Any
) -> None:
    """A folder without spark.toml, [tool.spark] or .git above it may be a home folder or `/`: a
    mistyped name reads its own specs (and what they import), never every spec below it."""
    project(
        {
            "deploy.spark": QWEN_DEPLOYMENT,
            "models/qwen.spark": QWEN,
            "deep/other.spark": QWEN.replace("my-qwen", "my-deep"),
        }
    )
    r = spark("explain", "my-qwen")
    assert r.returncode == 0, r.stderr  # through deploy.spark's import
    assert "declared:       models/qwen.spark:2" in r.stdout
    r = spark("explain", "my-deep")
    assert r.returncode == 2
    assert "under . (no spark.toml, [tool.spark] or .git above it: its own files only)" in r.stderr, r.stderr
    r = spark("explain", "my-deep", "--spec", "deep")
    assert r.returncode == 0, r.stderr


def test_a_declared_model_is_looked_for_from_the_project_root_not_only_the_current_folder(
    spark: Callable[..., Any], project: Callable[[dict[str, str]], Any], tmp_path: Any
) -> None:
    project(
        {
            "spark.toml": "",
            "models/qwen.spark": QWEN,
            "deploy/qwen.spark": QWEN_DEPLOYMENT.replace('"models/', '"../models/'),
        }
    )
    r = spark("explain", "my-qwen", cwd=tmp_path / "deploy")
    assert r.returncode == 0, r.stderr
    assert "declared:       ../models/qwen.spark:2" in r.stdout, r.stdout


def test_the_explain_output_docs_models_md_shows_is_the_commands(
    spark: Callable[..., Any], project: Callable[[dict[str, str]], Any]
) -> None:
    page = (Path(__file__).resolve().parent.parent / "docs" / "models.md").read_text(encoding="utf-8")
    declaration = re.search(r"```spark file=models/llama\.spark\n(.*?)```", page, re.S)
    shown = re.search(r"spark explain my-llama\n.*?```text\n(.*?)```", page, re.S)
    assert declaration is not None and shown is not None
    project({"spark.toml": "", "models/llama.spark": declaration.group(1)})  # "from the project's root"
    r = spark("explain", "my-llama")
    assert r.returncode == 0, r.stderr
    assert r.stdout == shown.group(1)


def test_explain_works_from_a_folder_that_was_removed(tmp_path: Path) -> None:
    """A shipped name needs no specs, so the current folder is not asked for; a name that is no
    topic says the folder is gone. Both were a FileNotFoundError traceback."""
    import subprocess
    import sys

    gone = tmp_path / "gone"
    script = (
        "import os, sys\n"
        f"os.makedirs({str(gone)!r}, exist_ok=True); os.chdir({str(gone)!r}); os.rmdir({str(gone)!r})\n"
        "from spark_dsl.cli import main\n"
        "main(sys.argv[1:])\n"
    )
    found = subprocess.run([sys.executable, "-c", script, "explain", "b200"], capture_output=True, text=True)
    assert found.returncode == 0 and "b200" in found.stdout and "Traceback" not in found.stderr, found.stderr
    unknown = subprocess.run([sys.executable, "-c", script, "explain", "my-qwen"], capture_output=True, text=True)
    assert unknown.returncode == 2 and "Traceback" not in unknown.stderr, unknown.stderr
    assert "the current folder no longer exists" in unknown.stderr
