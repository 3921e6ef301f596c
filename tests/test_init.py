"""`spark init` (issue 32, item 7), through the real command in a fresh repository: what it writes
checks clean, its workflow passes actionlint, and it never replaces a file unless --force."""

from __future__ import annotations

from pathlib import Path

import pytest
import validators as v
import yaml
from cli_helpers import spark

CHECKOUT = Path(__file__).resolve().parents[1]
WRITTEN = {
    "spark.toml",
    "specs/muse-spark-open-b200.spark",
    ".gitignore",
    ".pre-commit-config.yaml",
    ".github/workflows/spark.yml",
}


def _repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    (root / ".git").mkdir(parents=True)
    return root


def _files(root: Path) -> set[str]:
    return {str(p.relative_to(root)) for p in root.rglob("*") if p.is_file() and ".git" not in p.parts[-2:-1]}


def test_init_then_check_passes(tmp_path: Path) -> None:
    root = _repo(tmp_path)
    done = spark("init", cwd=root)
    assert (done.returncode, done.stdout) == (0, ""), done.stderr
    assert _files(root) == WRITTEN
    assert "spark: wrote .github/workflows/spark.yml" in done.stderr
    checked = spark("check", cwd=root)
    assert (checked.returncode, checked.stdout) == (0, "checked 1 file: no problems\n")
    assert spark("check", "--deny", "warnings", cwd=root).returncode == 0
    assert spark("fmt", "--check", "specs", cwd=root).returncode == 0
    # The workflow's last step: once built, the outputs are what the specs compile to.
    built = spark("build", cwd=root)
    assert built.returncode == 0, built.stdout + built.stderr
    assert (root / "targets" / "muse-spark-open-b200").is_dir()  # spark.toml's `output`
    assert spark("build", "--check", cwd=root).returncode == 0


def test_the_workflow_passes_actionlint_and_runs_check_and_build_check(tmp_path: Path) -> None:
    root = _repo(tmp_path)
    assert spark("init", cwd=root).returncode == 0
    workflow = root / ".github" / "workflows" / "spark.yml"
    linted = v.actionlint(workflow)
    assert linted.ok, linted.output
    steps = yaml.safe_load(workflow.read_text())["jobs"]["spark"]["steps"]
    runs = [step["run"] for step in steps if "run" in step]
    assert "spark check --format github --deny warnings" in runs
    assert "spark build --check --diff --format github" in runs


def test_the_pre_commit_hooks_are_the_ones_spark_ships(tmp_path: Path) -> None:
    root = _repo(tmp_path)
    assert spark("init", cwd=root).returncode == 0
    (repo,) = yaml.safe_load((root / ".pre-commit-config.yaml").read_text())["repos"]
    shipped = {h["id"]: h for h in yaml.safe_load((CHECKOUT / ".pre-commit-hooks.yaml").read_text())}
    assert [h["id"] for h in repo["hooks"]] == list(shipped)
    for hook in repo["hooks"]:
        assert (hook["entry"], hook["files"]) == (shipped[hook["id"]]["entry"], shipped[hook["id"]]["files"])


def test_the_gitignore_covers_what_a_build_leaves_in_the_output_folder(tmp_path: Path) -> None:
    root = _repo(tmp_path)
    assert spark("init", cwd=root).returncode == 0
    ignored = (root / ".gitignore").read_text().splitlines()
    assert "/targets/.spark-build.lock" in ignored and "/targets/.spark-build-*" in ignored
    assert 'output = "targets"' in (root / "spark.toml").read_text()


def test_init_never_overwrites_a_file(tmp_path: Path) -> None:
    root = _repo(tmp_path)
    (root / ".gitignore").write_text("mine\n")
    (root / "spark.toml").write_text("# mine\n")
    done = spark("init", cwd=root)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr == (
        "spark: error: spark.toml, .gitignore already exist; nothing was written (pass --force to replace them)\n"
    )
    assert _files(root) == {".gitignore", "spark.toml"}
    assert (root / ".gitignore").read_text() == "mine\n"
    forced = spark("init", "--force", cwd=root)
    assert forced.returncode == 0, forced.stderr
    assert _files(root) == WRITTEN and (root / ".gitignore").read_text() != "mine\n"


def test_force_never_writes_through_a_link_out_of_the_folder(tmp_path: Path) -> None:
    root = _repo(tmp_path)
    outside = tmp_path / "outside.txt"
    outside.write_text("keep\n")
    (root / ".gitignore").symlink_to(outside)
    done = spark("init", "--force", cwd=root)
    assert done.returncode == 2
    assert ".gitignore would be written outside" in done.stderr and "nothing was written" in done.stderr
    assert outside.read_text() == "keep\n" and _files(root) == {".gitignore"}  # the link, as it was
    assert (root / ".gitignore").is_symlink()


def test_flags_choose_the_first_spec_and_a_gated_model_gets_a_token(tmp_path: Path) -> None:
    root = _repo(tmp_path)
    done = spark("init", "--model", "llama-3-1-8b", "--accelerator", "h100", "--target", "kubernetes", cwd=root)
    assert done.returncode == 0, done.stderr
    spec = (root / "specs" / "llama-3-1-8b-h100.spark").read_text()
    assert 'hf_token = secret("hf-token")' in spec and "target kubernetes {}" in spec
    checked = spark("check", cwd=root)
    assert (checked.returncode, checked.stdout) == (0, "checked 1 file: no problems\n")


@pytest.mark.parametrize(
    ("flag", "value", "listing"),
    [
        ("--model", "llama-3.1-8b", "muse-spark-open, "),
        ("--accelerator", "h1000", "b200"),
        ("--target", "smoke", "shell, compose"),  # a client target serves nothing
    ],
)
def test_a_flag_naming_nothing_is_a_usage_error(tmp_path: Path, flag: str, value: str, listing: str) -> None:
    root = _repo(tmp_path)
    done = spark("init", flag, value, cwd=root)
    assert done.returncode == 2 and done.stderr.startswith(f"spark: error: {flag} '{value}' is none of ")
    assert listing in done.stderr and _files(root) == set()
