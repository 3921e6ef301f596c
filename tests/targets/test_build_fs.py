"""`spark build` writes only what it owns: user folders, hostile manifests, shared output folders,
read-only and full disks, concurrent builds. Every run goes through the real command."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from fs_helpers import (
    ALL_SINGLE_HOST,
    assert_manifest_matches_disk,
    deployments,
    fill,
    read_only,
    snapshot,
    spec,
    tmpfs,
)


@pytest.fixture
def repo(project) -> Path:
    return project(
        {
            "a.spark": spec("alpha", "  target shell {}\n  target compose {}"),
            "b.spark": spec("beta", "  target kubernetes {}"),
        }
    )


def refused(r: subprocess.CompletedProcess[str], code: str, *words: str) -> None:
    """A clear error: exit 1, the code, the words that name the problem, a help line, no traceback."""
    assert r.returncode == 1, r.stdout + r.stderr
    assert f"error[{code}]" in r.stderr, r.stderr
    assert "help:" in r.stderr, r.stderr
    for word in words:
        assert word in r.stderr, r.stderr
    assert "Traceback" not in r.stderr + r.stdout


# --- folders spark did not write --------------------------------------------------------------


def test_a_deployment_named_specs_built_into_dot_never_deletes_the_specs_folder(project, spark) -> None:
    folder = project({"specs/s.spark": spec("specs"), "specs/notes.md": "mine\n"})
    before = snapshot(folder)
    # The folder holds the run's own spec: the write gate refuses before the writer is asked
    # (issue 31), with or without --take-over, which would otherwise replace it.
    for take_over in ((), ("--take-over",)):
        r = spark("build", "specs", "-o", ".", *take_over, cwd=folder)
        assert r.returncode == 2, r.stdout + r.stderr
        assert "holds deployment folders with inputs of this run (specs/s.spark)" in r.stderr
        assert "Traceback" not in r.stderr
        assert snapshot(folder) == before  # not even a manifest or a lock file
    (folder / "specs/s.spark").rename(folder / "s.spark")  # the spec elsewhere: the folder is only unowned
    before = snapshot(folder)
    refused(spark("build", "s.spark", "-o", ".", cwd=folder), "SPK520", "specs/", "--take-over")
    assert snapshot(folder) == before


def test_a_folder_spark_did_not_write_is_replaced_only_with_take_over(repo: Path, spark) -> None:
    (repo / "out/alpha").mkdir(parents=True)
    (repo / "out/alpha/notes.txt").write_text("mine\n")
    before = snapshot(repo / "out")
    refused(spark("build", ".", "-o", "out", cwd=repo), "SPK520", "out/alpha/", "--take-over")
    assert snapshot(repo / "out") == before  # beta was not written either: the build stopped first
    r = spark("build", ".", "-o", "out", "--take-over", cwd=repo)
    assert r.returncode == 0, r.stderr
    assert sorted(deployments(repo / "out")) == ["alpha", "beta"]
    assert sorted(deployments(repo / "out")["alpha"]) == ["compose.yaml", "serve.sh"]
    assert_manifest_matches_disk(repo / "out")


def test_a_hand_edited_folder_is_not_replaced(repo: Path, spark) -> None:
    assert spark("build", ".", "-o", "out", cwd=repo).returncode == 0
    (repo / "out/alpha/serve.sh").write_text("# my fix\n")
    (repo / "a.spark").write_text(spec("alpha", "  max_num_seqs = 64\n  target shell {}\n  target compose {}"))
    before = snapshot(repo / "out")
    refused(spark("build", ".", "-o", "out", cwd=repo), "SPK520", "out/alpha/", "edited", "--take-over")
    assert snapshot(repo / "out") == before
    assert spark("build", ".", "-o", "out", "--take-over", cwd=repo).returncode == 0
    assert b"--max-num-seqs 64" in (repo / "out/alpha/serve.sh").read_bytes()


def test_a_hand_edited_folder_is_not_removed_when_its_spec_goes(repo: Path, spark) -> None:
    assert spark("build", ".", "-o", "out", cwd=repo).returncode == 0
    (repo / "out/beta/notes.txt").write_text("mine\n")
    (repo / "b.spark").unlink()
    before = snapshot(repo / "out")
    refused(spark("build", ".", "-o", "out", cwd=repo), "SPK520", "out/beta/", "--take-over")
    assert snapshot(repo / "out") == before
    r = spark("build", ".", "-o", "out", "--take-over", cwd=repo)
    assert r.returncode == 0 and "removed out/beta/" in r.stderr
    assert sorted(deployments(repo / "out")) == ["alpha"]


def test_check_names_the_folders_a_build_would_refuse(repo: Path, spark) -> None:
    (repo / "out/alpha").mkdir(parents=True)
    r = spark("build", ".", "-o", "out", "--check", cwd=repo)
    refused(r, "SPK520", "out/alpha/")
    assert not (repo / "out/manifest.json").exists()


def test_a_version_1_manifest_is_read_and_upgraded(repo: Path, spark) -> None:
    """Version 1 listed names without hashes, and sources relative to a root it did not record."""
    assert spark("build", ".", "-o", "out", cwd=repo).returncode == 0
    (repo / "out/gamma").mkdir()
    (repo / "out/gamma/serve.sh").write_text("# from a spec since deleted\n")
    entries = [("alpha", "a.spark", ["serve.sh", "compose.yaml"]), ("beta", "b.spark", ["kubernetes.yaml"])]
    entries.append(("gamma", "gone.spark", ["serve.sh"]))
    (repo / "out/manifest.json").write_text(
        _manifest(*({"name": n, "source": s, "files": f} for n, s, f in entries), version=1)
    )
    (repo / "out/beta/notes.txt").write_text("mine\n")
    (repo / "a.spark").write_text(spec("alpha", "  max_num_seqs = 64\n  target shell {}\n  target compose {}"))
    before = snapshot(repo / "out")
    refused(spark("build", ".", "-o", "out", cwd=repo), "SPK520", "out/beta/", "edited")  # not the files listed
    assert snapshot(repo / "out") == before
    (repo / "out/beta/notes.txt").unlink()
    r = spark("build", ".", "-o", "out", cwd=repo)
    assert r.returncode == 0 and "removed" not in r.stderr, r.stderr  # gamma's source is unknown: kept
    assert b"--max-num-seqs 64" in (repo / "out/alpha/serve.sh").read_bytes()
    doc = json.loads((repo / "out/manifest.json").read_text())
    assert doc["version"] == 2
    assert [(e["name"], e["source"]) for e in doc["deployments"]] == [
        ("alpha", "../a.spark"),
        ("beta", "../b.spark"),
        ("gamma", None),
    ]
    assert_manifest_matches_disk(repo / "out")


# --- hostile manifests ------------------------------------------------------------------------


def _entry(name: object, **more: object) -> dict[str, object]:
    return {"name": name, "source": "gone.spark", "files": ["serve.sh"], **more}


def _manifest(*entries: object, version: object = 1) -> str:
    return json.dumps({"generator": "spark build", "version": version, "deployments": list(entries)})


HOSTILE = {
    "dot-dot": _manifest(_entry("../victim")),
    "dot-dot-v2": _manifest(
        {"name": "../victim", "source": "../gone.spark", "files": {"serve.sh": "0" * 64}}, version=2
    ),
    "absolute": _manifest(_entry("{victim}")),
    "empty-name": _manifest(_entry("")),
    "dot": _manifest(_entry(".")),
    "separator": _manifest(_entry("a/b")),
    "trailing-newline": _manifest(_entry("alpha\n")),
    "upper-case": _manifest(_entry("Alpha")),
    "name-not-text": _manifest(_entry(5)),
    "files-not-a-list": _manifest(_entry("gamma", files="serve.sh")),
    "file-name-escapes": _manifest(_entry("gamma", files=["../../victim/keep.txt"])),
    "hash-not-hex": _manifest({"name": "gamma", "source": "../gone.spark", "files": {"serve.sh": "x" * 64}}, version=2),
    "duplicate-names": _manifest(_entry("gamma"), _entry("gamma")),
    "deployments-not-a-list": json.dumps({"version": 1, "deployments": {"gamma": {}}}),
    "unknown-version": _manifest(_entry("gamma"), version=99),
    "garbage": "{not json",
    "not-utf-8": b"\xff\xfe{}".decode("latin-1"),
    "empty-file": "",
}


def _hostile(project, case: str) -> Path:
    """A project whose output folder has a hostile manifest, a user file and a folder outside it."""
    folder = project({"a.spark": spec("alpha"), "victim/keep.txt": "precious\n", "out/mine.txt": "mine\n"})
    (folder / "out/gamma").mkdir()
    (folder / "out/gamma/serve.sh").write_text("gamma\n")
    text = HOSTILE[case].replace("{victim}", str(folder / "victim"))
    (folder / "out/manifest.json").write_bytes(text.encode("latin-1" if case == "not-utf-8" else "utf-8"))
    return folder


@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_a_hostile_manifest_is_an_error_and_deletes_nothing(project, spark, case: str) -> None:
    folder = _hostile(project, case)
    before = snapshot(folder)
    refused(spark("build", ".", "-o", "out", cwd=folder), "SPK521", "out/manifest.json")
    assert snapshot(folder) == before


@pytest.mark.parametrize("case", ["dot-dot", "absolute", "garbage"])
def test_take_over_and_check_refuse_a_hostile_manifest_too(project, spark, case: str) -> None:
    folder = _hostile(project, case)
    before = snapshot(folder)
    refused(spark("build", ".", "-o", "out", "--take-over", cwd=folder), "SPK521", "out/manifest.json")
    refused(spark("build", ".", "-o", "out", "--check", cwd=folder), "SPK521", "out/manifest.json")
    assert snapshot(folder) == before


def test_a_symlinked_manifest_is_an_error_and_is_left_alone(repo: Path, spark) -> None:
    assert spark("build", ".", "-o", "out", cwd=repo).returncode == 0
    (repo / "elsewhere.json").write_bytes((repo / "out/manifest.json").read_bytes())
    (repo / "out/manifest.json").unlink()
    (repo / "out/manifest.json").symlink_to("../elsewhere.json")
    (repo / "a.spark").write_text(spec("alpha", "  max_num_seqs = 64\n  target shell {}"))
    before = snapshot(repo)
    refused(spark("build", ".", "-o", "out", cwd=repo), "SPK521", "out/manifest.json", "symbolic link")
    assert snapshot(repo) == before


@pytest.mark.parametrize("which", ["retired", "produced"])
def test_a_symlinked_deployment_folder_is_never_followed_or_removed(repo: Path, spark, which: str) -> None:
    assert spark("build", ".", "-o", "out", cwd=repo).returncode == 0
    victim = repo / "victim"
    victim.mkdir()
    (victim / "kubernetes.yaml").write_bytes((repo / "out/beta/kubernetes.yaml").read_bytes())
    shutil.rmtree(repo / "out/beta")
    (repo / "out/beta").symlink_to(victim)  # a link to a copy of exactly what spark wrote there
    if which == "retired":
        (repo / "b.spark").unlink()
    else:
        (repo / "b.spark").write_text(spec("beta", "  max_num_seqs = 64\n  target kubernetes {}"))
    before = snapshot(repo)
    for take_over in ((), ("--take-over",)):
        refused(spark("build", ".", "-o", "out", *take_over, cwd=repo), "SPK522", "out/beta", "symbolic link")
        assert snapshot(repo) == before


@pytest.mark.parametrize("kind", ["link", "dangling-link", "folder"])
def test_a_lock_file_that_is_not_a_file_is_an_error_and_is_left_alone(repo: Path, spark, kind: str) -> None:
    assert spark("build", ".", "-o", "out", cwd=repo).returncode == 0
    (repo / "victim.txt").write_text("precious\n")
    lock = repo / "out/.spark-build.lock"
    if kind == "folder":
        lock.mkdir()
    else:
        lock.symlink_to("../victim.txt" if kind == "link" else "../nowhere")
    (repo / "a.spark").write_text(spec("alpha", "  max_num_seqs = 64\n  target shell {}\n  target compose {}"))
    before = snapshot(repo)
    reason = "is a folder" if kind == "folder" else "is a symbolic link"
    refused(spark("build", ".", "-o", "out", cwd=repo), "SPK522", ".spark-build.lock", reason)
    assert snapshot(repo) == before


# --- shared output folders --------------------------------------------------------------------


def test_specs_from_different_folders_keep_their_outputs_apart(project, spark) -> None:
    folder = project({"one/a.spark": spec("alpha"), "two/b.spark": spec("beta")})
    assert spark("build", "a.spark", "-o", "../out", cwd=folder / "one").returncode == 0
    r = spark("build", ".", "-o", "../out", cwd=folder / "two")  # another root, another folder
    assert r.returncode == 0 and "removed" not in r.stderr, r.stderr
    assert sorted(deployments(folder / "out")) == ["alpha", "beta"]
    r = spark("build", "two", "-o", "out", cwd=folder)  # the same spec under a third root
    assert r.returncode == 0 and "removed" not in r.stderr, r.stderr
    assert sorted(deployments(folder / "out")) == ["alpha", "beta"]
    assert_manifest_matches_disk(folder / "out")


def test_a_deleted_spec_retires_its_folder_only_in_a_build_that_covers_it(project, spark) -> None:
    folder = project({"one/a.spark": spec("alpha"), "one/c.spark": spec("gamma"), "two/b.spark": spec("beta")})
    assert spark("build", "one", "two", "-o", "out", cwd=folder).returncode == 0
    (folder / "one/a.spark").unlink()
    r = spark("build", ".", "-o", "../out", cwd=folder / "two")  # one/ is not this build's business
    assert r.returncode == 0 and "removed" not in r.stderr
    assert sorted(deployments(folder / "out")) == ["alpha", "beta", "gamma"]
    r = spark("build", ".", "-o", "../out", cwd=folder / "one")
    assert r.returncode == 0 and "removed ../out/alpha/" in r.stderr, r.stderr
    assert sorted(deployments(folder / "out")) == ["beta", "gamma"]


def test_a_spec_this_build_only_imports_keeps_its_folder(project, spark) -> None:
    folder = project({"b.spark": spec("beta"), "a.spark": 'import "b.spark"\n' + spec("alpha")})
    assert spark("build", "b.spark", "-o", "out", cwd=folder).returncode == 0
    r = spark("build", "a.spark", "-o", "out", cwd=folder)  # reads b.spark, builds only a.spark's deployments
    assert r.returncode == 0 and "removed" not in r.stderr, r.stderr
    assert sorted(deployments(folder / "out")) == ["alpha", "beta"]


def test_one_name_from_two_specs_is_refused(project, spark) -> None:
    folder = project({"one/a.spark": spec("alpha"), "two/a.spark": spec("alpha", "  target compose {}")})
    assert spark("build", "one", "-o", "out", cwd=folder).returncode == 0
    before = snapshot(folder / "out")
    refused(spark("build", "two", "-o", "out", cwd=folder), "SPK520", "out/alpha/", "one/a.spark")
    assert snapshot(folder / "out") == before
    assert spark("build", "two", "-o", "out", "--take-over", cwd=folder).returncode == 0
    assert sorted(deployments(folder / "out")["alpha"]) == ["compose.yaml"]


def test_a_spec_with_a_syntax_error_keeps_its_folder(repo: Path, spark) -> None:
    assert spark("build", ".", "-o", "out", cwd=repo).returncode == 0
    before = deployments(repo / "out")
    (repo / "a.spark").write_text("deployment alpha {\n")
    r = spark("build", ".", "-o", "out", cwd=repo)
    assert r.returncode == 1 and "removed" not in r.stderr
    assert deployments(repo / "out") == before
    assert_manifest_matches_disk(repo / "out")


# --- concurrency, read-only and full disks ----------------------------------------------------


def test_concurrent_builds_into_one_folder_are_serialised(project, spark) -> None:
    names = [f"d{i}" for i in range(6)]
    folder = project({f"{n}.spark": spec(n, ALL_SINGLE_HOST) for n in names})
    for seqs in (16, 64):
        for n in names:
            (folder / f"{n}.spark").write_text(spec(n, f"  max_num_seqs = {seqs}\n{ALL_SINGLE_HOST}"))
        command = [sys.executable, "-m", "spark_dsl", "build", "-o", "out"]
        runs = [subprocess.Popen([*command, f"{n}.spark"], cwd=folder, stderr=subprocess.PIPE) for n in names]
        errors = [(p.wait(timeout=120), p.stderr.read().decode() if p.stderr else "") for p in runs]
        assert [code for code, _ in errors] == [0] * len(names), errors
        assert sorted(p.name for p in (folder / "out").iterdir()) == [*names, "manifest.json"]
        assert all(f"--max-num-seqs {seqs}".encode() in d["serve.sh"] for d in deployments(folder / "out").values())
        assert_manifest_matches_disk(folder / "out")


def test_a_read_only_output_folder_is_a_clear_error(repo: Path, spark) -> None:
    with tmpfs(repo / "disk") as disk:
        assert spark("build", ".", "-o", "disk/out", cwd=repo).returncode == 0
        (repo / "a.spark").write_text(spec("alpha", "  max_num_seqs = 64\n  target shell {}\n  target compose {}"))
        before = snapshot(disk)
        read_only(disk)
        refused(spark("build", ".", "-o", "disk/out", cwd=repo), "SPK522", "disk/out", "Read-only file system")
        assert snapshot(disk) == before


def test_a_build_that_fills_the_disk_leaves_the_old_outputs(project, spark, tmp_path: Path) -> None:
    """With fewer and fewer free pages the build fails at every step in turn: staging, the manifest."""
    folder = project({"a.spark": spec("alpha", ALL_SINGLE_HOST), "b.spark": spec("beta", ALL_SINGLE_HOST)})
    assert spark("build", ".", "-o", "disk/out", cwd=folder).returncode == 0  # disk/ is a plain folder still
    shutil.move(folder / "disk/out", tmp_path / "old")
    for n in ("alpha", "beta", "gamma"):  # two folders to replace, one to add
        (folder / f"{n[0]}.spark").write_text(spec(n, f"  max_num_seqs = 64\n{ALL_SINGLE_HOST}"))
    outcomes = set()
    failures = []
    with tmpfs(folder / "disk", size="128k") as disk:
        for free_pages in (0, 4, 8, 10, 11, 12, 13, 14, 15):
            shutil.rmtree(disk / "out", ignore_errors=True)
            (disk / "filler").unlink(missing_ok=True)
            shutil.copytree(tmp_path / "old", disk / "out")
            before = snapshot(disk / "out")
            fill(disk, free_pages)
            r = spark("build", ".", "-o", "disk/out", cwd=folder)
            assert "Traceback" not in r.stderr
            if r.returncode == 0:
                outcomes.add("built")
                assert all(b"--max-num-seqs 64" in d["serve.sh"] for d in deployments(disk / "out").values())
                assert_manifest_matches_disk(disk / "out")
            else:
                outcomes.add("failed")
                assert snapshot(disk / "out") == before, f"with {free_pages} free pages"
                failures.append(r)
    assert outcomes == {"built", "failed"}
    for r in failures:
        refused(r, "SPK522", "No space left on device")
