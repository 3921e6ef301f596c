"""A run resolves each spec through its folder's remembered answer (spark_dsl.project): one lstat
of the name instead of one per folder above it. Whatever the path, the answer is the one a full
`files.resolve` (Path.resolve) gives: symlinks at any place, `..`, missing names, loops, NULs."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from spark_dsl import files
from spark_dsl.project import Projects


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    (tmp_path / "real" / "deep").mkdir(parents=True)
    (tmp_path / "real" / "a.spark").write_text("")
    (tmp_path / "real" / "deep" / "b.spark").write_text("")
    (tmp_path / "linked").symlink_to(tmp_path / "real")  # a folder reached through a symlink
    (tmp_path / "real" / "alias.spark").symlink_to("deep/b.spark")  # a spec that is a symlink
    (tmp_path / "real" / "chain.spark").symlink_to("alias.spark")
    (tmp_path / "real" / "dangling.spark").symlink_to("nowhere.spark")
    (tmp_path / "real" / "loop.spark").symlink_to("loop.spark")
    (tmp_path / "real" / "a.txt").write_text("")
    return tmp_path


CASES = [
    "real/a.spark",
    "linked/a.spark",
    "linked/deep/b.spark",
    "linked/deep/../a.spark",
    "real/deep/..",
    "real/alias.spark",
    "linked/chain.spark",
    "real/dangling.spark",
    "real/missing.spark",
    "real/a.txt/inside.spark",  # a file used as a folder
    "linked/loop.spark",
    "real/nul\0.spark",
    "real",
    ".",
    "..",
    "linked/deep/..",
]


@pytest.mark.parametrize("relative", CASES)
@pytest.mark.parametrize("absolute", [True, False], ids=["absolute", "relative"])
def test_a_run_resolves_a_path_as_path_resolve_does(
    tree: Path, relative: str, absolute: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tree)
    path = tree / relative if absolute else Path(relative)
    projects = Projects()
    # Twice: the first answer is computed, the second remembered; a sibling first fills the
    # folder's entry, so the quick way is taken for the path itself.
    projects.resolved(path.parent / "a.spark")
    assert projects.resolved(path) == files.resolve(path)
    assert projects.resolved(path) == files.resolve(path)


def test_a_second_spec_in_a_folder_costs_one_lstat(tree: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Its reason to be: once the folder is known, a spec in it is one lstat of its name (a full
    resolve looks at every folder from the root down, some ten here)."""
    (tree / "real" / "c.spark").write_text("")
    projects = Projects()
    projects.resolved(tree / "real" / "a.spark")
    expected = (tree / "real" / "c.spark").resolve()
    seen: list[str] = []
    real_lstat = os.lstat

    def counting(path: str, *args: object, **kwargs: object) -> os.stat_result:
        seen.append(os.fspath(path))
        return real_lstat(path)

    monkeypatch.setattr(os, "lstat", counting)
    assert projects.resolved(tree / "real" / "c.spark") == expected
    assert seen == [str(expected)]


DISPLAYED = [
    "/w/p/specs/a.spark",
    "/w/p",
    "/w/pp/a.spark",  # a sibling whose name starts like the folder's
    "/w/p/../q/a.spark",
    "/w/p/./a.spark",
    "/w/p//a.spark",
    "/w/p/specs/",
    "/w/p/.hidden/a.spark",
    "/elsewhere/a.spark",
    "/",
    "specs/a.spark",
]


@pytest.mark.parametrize("cwd", ["/w/p", "/", "/w/p/specs", "/w/.p"])
@pytest.mark.parametrize("path", DISPLAYED)
def test_a_file_is_named_relative_to_the_current_folder_as_relpath_names_it(path: str, cwd: str) -> None:
    # `display` cuts the current folder off a normal absolute path itself (a run names every
    # spec) and leaves every other path to relpath: the names must be relpath's all the same.
    assert files.display(path, cwd) == os.path.relpath(path, cwd)
    assert files.display(Path(path), cwd) == os.path.relpath(Path(path), cwd)
