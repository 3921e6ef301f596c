"""The wheel ships the grammar and the catalog snapshot, and works from a clean install."""

from __future__ import annotations

import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def _built(kind: str, tree: Path, outdir: Path) -> Path:
    """The one distribution (`--wheel` or `--sdist`) that `python -m build` makes of `tree`."""
    subprocess.run(
        [sys.executable, "-m", "build", kind, "--outdir", str(outdir), str(tree)],
        check=True,
        capture_output=True,
        text=True,
    )
    (made,) = outdir.glob("spark_dsl-*.whl" if kind == "--wheel" else "spark_dsl-*.tar.gz")
    return made


def test_wheel_contains_grammar_and_catalog(tmp_path: Path) -> None:
    wheel = _built("--wheel", REPO, tmp_path)
    names = set(zipfile.ZipFile(wheel).namelist())
    assert "spark_dsl/grammar/spark.lark" in names
    assert "spark_dsl/catalog/snapshot.json" in names
    shipped = zipfile.ZipFile(wheel).read("spark_dsl/grammar/spark.lark").decode()
    assert shipped == (REPO / "grammar" / "spark.lark").read_text()
    # The parse table a clean parse reads instead of building Lark's parser (spark_dsl.syntax.table).
    table = zipfile.ZipFile(wheel).read("spark_dsl/syntax/parse_table.json").decode()
    assert table == (REPO / "spark_dsl" / "syntax" / "parse_table.json").read_text()
    # The built-in targets' declarations the table reads instead of importing the renderers.
    declared = zipfile.ZipFile(wheel).read("spark_dsl/targets/declared.json").decode()
    assert declared == (REPO / "spark_dsl" / "targets" / "declared.json").read_text()
    # The rules' fixtures, which `spark explain` shows as each rule's examples (spark_dsl.rules.examples).
    shipped_fixtures = {n.removeprefix("spark_dsl/rules/fixtures/") for n in names if "/rules/fixtures/" in n}
    assert shipped_fixtures == {p.name for p in (REPO / "tests" / "fixtures" / "rules").iterdir()}
    entry_points = next(n for n in names if n.endswith("entry_points.txt"))
    assert "spark = spark_dsl.__main__:main" in zipfile.ZipFile(wheel).read(entry_points).decode()


def _tracked_copy(dest: Path) -> Path:
    """The committed files of the work tree (as a fresh clone has them), copied to `dest`."""
    listed = subprocess.run(["git", "ls-files", "-z"], cwd=REPO, capture_output=True, check=True).stdout
    for name in filter(None, listed.decode().split("\0")):
        source = REPO / name
        if source.is_file():
            target = dest / name
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(source.read_bytes())
    return dest


def test_sdist_holds_the_project_and_nothing_from_node_modules(tmp_path: Path) -> None:
    tree = _tracked_copy(tmp_path / "tree")
    # What `npm ci` in editors/ leaves behind: README.md files deep in node_modules.
    stray = tree / "editors" / "node_modules" / "vscode-jsonrpc" / "README.md"
    stray.parent.mkdir(parents=True)
    stray.write_text("not ours\n")
    sdist = _built("--sdist", tree, tmp_path / "dist")
    with tarfile.open(sdist) as archive:
        names = {name.split("/", 1)[1] for name in archive.getnames() if "/" in name}
    assert {"README.md", "LICENSE", "pyproject.toml", "grammar/spark.lark", "spark_dsl/cli.py"} <= names
    assert not [name for name in names if "node_modules" in name]
    assert not [name for name in names if name.startswith(("editors/", "tools/"))]


def test_wheel_metadata_has_license_urls_and_the_language_server(tmp_path: Path) -> None:
    wheel = _built("--wheel", REPO, tmp_path)
    archive = zipfile.ZipFile(wheel)
    names = archive.namelist()
    license_file = next(n for n in names if n.endswith(".dist-info/licenses/LICENSE"))
    assert (
        "Apache License" in archive.read(license_file).decode() and "Version 2.0" in archive.read(license_file).decode()
    )
    metadata = archive.read(next(n for n in names if n.endswith(".dist-info/METADATA"))).decode()
    headers = metadata.split("\n\n", 1)[0].splitlines()
    assert "License-Expression: Apache-2.0" in headers
    assert "Project-URL: Repository, https://github.com/spark-dsl/spark-dsl" in headers
    assert any(h.startswith("Project-URL: Documentation, https://github.com/spark-dsl/spark-dsl") for h in headers)
    requires = [h.removeprefix("Requires-Dist: ") for h in headers if h.startswith("Requires-Dist: ")]
    # The language server is part of a plain install, not an extra.
    assert "pygls<3,>=2" in requires and "lsprotocol>=2025.0.0" in requires
    assert not any(h.startswith("Provides-Extra: lsp") for h in headers)


def test_license_is_the_apache_2_0_text() -> None:
    text = (REPO / "LICENSE").read_text(encoding="utf-8")
    assert text.lstrip().startswith("Apache License")
    assert "TERMS AND CONDITIONS FOR USE, REPRODUCTION, AND DISTRIBUTION" in text
    assert "END OF TERMS AND CONDITIONS" in text
    assert 'Licensed under the Apache License, Version 2.0 (the "License");' in text


def test_git_ignores_what_npm_and_vsce_leave_in_editors(tmp_path: Path) -> None:
    for name in ("editors/node_modules/x/index.js", "editors/dist/extension.js", "editors/spark-dsl-0.1.0.vsix"):
        ignored = subprocess.run(["git", "check-ignore", "-q", "--no-index", name], cwd=REPO)
        assert ignored.returncode == 0, f"{name} is not ignored"
