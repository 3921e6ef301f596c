"""Issue 31's write gate through the real `spark` command: no output ever replaces an input.

D1: `--output-file` was opened (and truncated) before the inputs were read, so naming the run's
own spec, a link to it or the build's manifest destroyed it. Every output a user names is now
checked, after the run has read everything, against the files it read (by device and inode):
a clash is a usage error (exit 2) that writes nothing. The same gate guards `spark model import
-o` and the folders `spark build -o` replaces. D11 (`spark check ""`) and D12 (hard links through
`--fix` and `fmt`) are here too: both are about which files a command touches.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.cli_helpers import CLEAN, PROFILE, SPEC, spark, write

COMMANDS = [["check"], ["check", "--format", "json"], ["plan"], ["build", "--format", "json", "-o", "out"]]


def project(tmp_path: Path) -> Path:
    return write(
        tmp_path,
        {
            ".git": "",
            "spark.toml": "",
            "specs/shared.spark": PROFILE,
            "specs/a/a.spark": SPEC.format(name="a", accelerator="b200"),
        },
    )


def snapshot(root: Path) -> dict[str, bytes]:
    """Every regular file below root but the build's outputs, by path."""
    return {
        str(p.relative_to(root)): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and not p.is_symlink() and "out" not in p.relative_to(root).parts
    }


def refused(result: object, name: str) -> None:
    out = result.stdout + result.stderr  # type: ignore[attr-defined]
    assert result.returncode == 2, out  # type: ignore[attr-defined]
    assert "Traceback" not in out
    assert f"refusing to write {name}" in out and "nothing was written" in out, out


@pytest.mark.parametrize("command", COMMANDS, ids=" ".join)
@pytest.mark.parametrize("output", ["specs/a/a.spark", "specs/shared.spark", "spark.toml", "link.spark", "hard.spark"])
def test_an_input_named_as_output_file_is_refused_and_unchanged(
    tmp_path: Path, command: list[str], output: str
) -> None:
    root = project(tmp_path)
    (root / "link.spark").symlink_to("specs/a/a.spark")
    os.link(root / "specs/a/a.spark", root / "hard.spark")
    before = snapshot(root)
    result = spark(*command, "specs/a/a.spark", "--output-file", output, cwd=root)
    refused(result, output)
    assert snapshot(root) == before


def test_the_manifest_named_as_output_file_is_refused_and_the_next_build_works(tmp_path: Path) -> None:
    root = project(tmp_path)
    assert spark("build", "specs/a/a.spark", "-o", "out", cwd=root).returncode == 0
    manifest = (root / "out/manifest.json").read_bytes()
    result = spark(
        "build", "specs/a/a.spark", "-o", "out", "--format", "json", "--output-file", "out/manifest.json", cwd=root
    )
    refused(result, "out/manifest.json")
    assert (root / "out/manifest.json").read_bytes() == manifest
    again = spark("build", "specs/a/a.spark", "-o", "out", cwd=root)
    assert again.returncode == 0, again.stdout + again.stderr


def test_an_output_file_that_is_no_input_gets_the_report(tmp_path: Path) -> None:
    root = project(tmp_path)
    result = spark("check", "specs/a/a.spark", "--format", "json", "--output-file", "report.json", cwd=root)
    assert result.returncode == 0 and result.stdout == ""
    assert '"errors": 0' in (root / "report.json").read_text()


def test_a_build_into_a_folder_holding_its_spec_is_refused(tmp_path: Path) -> None:
    """`-o specs --take-over` would replace the folder `specs/a` that holds the spec being built
    (a deployment named `a` builds into OUT/a)."""
    root = project(tmp_path)
    before = snapshot(root)
    result = spark("build", "specs/a/a.spark", "-o", "specs", "--take-over", cwd=root)
    assert result.returncode == 2, result.stdout + result.stderr
    assert "holds deployment folders with inputs of this run (specs/a/a.spark)" in result.stderr
    assert snapshot(root) == before


def test_model_import_never_writes_over_the_config_it_reads(tmp_path: Path) -> None:
    model = tmp_path / "model"
    model.mkdir()
    source = Path(__file__).parent / "data/hf_configs/llama-3.1-8b"
    text = (source / "config.json").read_bytes()
    (model / "config.json").write_bytes(text)
    (model / "model.safetensors.index.json").write_bytes((source / "model.safetensors.index.json").read_bytes())
    result = spark("model", "import", "model", "-o", "model/config.json", "--name", "m", cwd=tmp_path)
    assert result.returncode == 2, result.stdout + result.stderr
    assert "model-import/refused-output: refusing to write model/config.json" in result.stderr
    assert (model / "config.json").read_bytes() == text


def test_an_empty_path_is_a_usage_error_not_the_current_folder(tmp_path: Path) -> None:
    """D11: `spark check ""` (an unset variable in a CI script) checked the whole folder."""
    write(tmp_path, {"bad.spark": "deployment x {\n"})
    for command in (["check"], ["check", "--format", "json"], ["plan"], ["fmt", "--check"]):
        result = spark(*command, "", cwd=tmp_path)
        assert result.returncode == 2, (command, result.stdout, result.stderr)
        assert "an empty path names no file or folder" in result.stderr


# `fmt` re-indents the first; `check --fix` inserts the missing `=` of the second (a safe fix).
REWRITES = {
    "fmt": (CLEAN.format(name="a").replace("  model", "model"), CLEAN.format(name="a")),
    "check --fix": (CLEAN.format(name="a").replace("accelerator =", "accelerator  "), CLEAN.format(name="a")),
}


@pytest.mark.parametrize("command", sorted(REWRITES))
def test_writing_a_spec_keeps_its_hard_links(tmp_path: Path, command: str) -> None:
    """D12: `--fix` and `fmt` replaced the file by a rename, so its other hard links kept the old
    text. docs/fixes.md states the choice: a hard-linked spec is rewritten in place."""
    messy, expected = REWRITES[command]
    write(tmp_path, {"a.spark": messy})
    os.link(tmp_path / "a.spark", tmp_path / "b.spark")
    result = spark(*command.split(), "a.spark", cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    fixed = (tmp_path / "a.spark").read_text()
    assert fixed == expected
    assert (tmp_path / "b.spark").read_text() == fixed
    assert os.stat(tmp_path / "a.spark").st_ino == os.stat(tmp_path / "b.spark").st_ino
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.spark", "b.spark"]  # no copy left behind
