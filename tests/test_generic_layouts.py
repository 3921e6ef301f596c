"""Issue 32, "help that loops": Qwen3-30B-A3B over two H200 nodes, through the real `spark`.

On 1a493a8, SPK224's help ("use `gpus = 4`, and data parallelism for the other GPUs") led to
`dp(4) + tp(4) + ep`, which SPK203 refused with the Muse Spark Open recipe's reason although
vLLM 0.33.0 runs it (two replicas of TP 4 on each node), and docs/models.md described SPK203 as
a rule of every model."""

from __future__ import annotations

from pathlib import Path

from cli_helpers import spark, write

REPO = Path(__file__).resolve().parent.parent
SPEC = (
    "deployment qwen {{\n  model       = qwen3-30b-a3b\n  accelerator = h200\n  nodes       = 2\n"
    "  parallel    = {parallel}\n}}\n"
)


def _project(tmp_path: Path, parallel: str) -> Path:
    return write(tmp_path, {".git": "", "qwen.spark": SPEC.format(parallel=parallel)})


def test_dp4_tp4_ep_on_two_h200_nodes_is_clean_and_builds_two_replicas_per_node(tmp_path: Path) -> None:
    root = _project(tmp_path, "dp(4) + tp(4) + ep")
    checked = spark("check", "qwen.spark", cwd=root)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert "SPK203" not in checked.stdout and "no problems" in checked.stdout
    planned = spark("plan", "qwen.spark", cwd=root)
    assert planned.returncode == 0, planned.stdout + planned.stderr
    assert "--tensor-parallel-size 4" in planned.stdout
    assert "--data-parallel-size 4" in planned.stdout and "--data-parallel-size-local 2" in planned.stdout


def test_spk224_help_on_two_h200_nodes_leads_to_a_clean_spec(tmp_path: Path) -> None:
    root = _project(tmp_path, "dp(2) + tp + ep")
    first = spark("check", "qwen.spark", cwd=root)
    assert "SPK224" in first.stdout
    assert "use `parallel = dp(4) + tp(4) + ep`" in first.stdout, first.stdout
    assert "gpus = 4" not in first.stdout
    # What the help names, written as it says: the spec is then clean (no SPK203, no SPK217).
    (root / "qwen.spark").write_text(SPEC.format(parallel="dp(4) + tp(4) + ep"), encoding="utf-8")
    again = spark("check", "qwen.spark", cwd=root)
    assert again.returncode == 0 and "no problems" in again.stdout, again.stdout


def test_spk203_explains_itself_as_the_recipes_rule(tmp_path: Path) -> None:
    shown = spark("explain", "SPK203", cwd=tmp_path)
    assert shown.returncode == 0
    assert "Muse Spark Open" in shown.stdout
    assert "Other models may split a node into data-parallel replicas" in shown.stdout


def test_a_replica_that_would_span_two_nodes_is_refused_with_a_fix_that_fits(tmp_path: Path) -> None:
    # 1 x 16 ranks fill 2 x 8 GPUs, but vLLM keeps a data-parallel replica within its node.
    root = _project(tmp_path, "dp(1) + tp(16) + ep")
    checked = spark("check", "qwen.spark", cwd=root)
    assert "SPK217" in checked.stdout and "a replica would span two nodes" in checked.stdout, checked.stdout
    assert "use `parallel = dp(2) + tp + ep`" in checked.stdout
    (root / "qwen.spark").write_text(SPEC.format(parallel="dp(2) + tp + ep"), encoding="utf-8")
    again = spark("check", "qwen.spark", cwd=root)
    assert again.returncode == 0 and "error" not in again.stdout, again.stdout


def test_docs_models_md_lists_the_rules_as_the_code_scopes_them() -> None:
    from spark_dsl.rules_scope_doc import render_page  # here: 1a493a8 has no such module

    page = (REPO / "docs" / "models.md").read_text(encoding="utf-8")
    assert render_page(page) == page, "docs/models.md is stale: run `python -m spark_dsl.dev regen`"
    flat = " ".join(page.split())
    recipe_line = flat.split("of the recipe's model (`recipe.yaml`'s `model`): ", 1)[1].split(". Every", 1)[0]
    assert "SPK201-SPK214" in recipe_line  # SPK203 among the recipe's own
    assert "| SPK203 |" not in page
