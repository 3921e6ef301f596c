"""`spark build --check --diff` prints a unified diff of every output a build would change, which
`git apply` turns into exactly what the build writes; `--format github` annotates each one."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

ALPHA = """deployment alpha {
  model       = muse-spark-open
  accelerator = b200
EXTRA  target shell {}
  target compose {}
}
"""
BETA = """deployment beta {
  model       = muse-spark-open
  accelerator = b200
  target kubernetes {}
}
"""


def tree(folder: Path) -> dict[str, tuple[bytes, bool]]:
    """Every file below a folder: bytes and executable bit."""
    return {
        p.relative_to(folder).as_posix(): (p.read_bytes(), os.access(p, os.X_OK))
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


@pytest.fixture
def repo(project):
    return project({"a.spark": ALPHA.replace("EXTRA", ""), "b.spark": BETA})


def test_the_diff_applied_is_the_build(repo: Path, spark) -> None:
    """Stale, missing, unexpected, removed, a lost executable bit and the manifest, all in one diff."""
    assert spark("build", ".", "-o", "out", cwd=repo).returncode == 0
    (repo / "a.spark").write_text(ALPHA.replace("EXTRA", "  max_num_seqs = 8\n"))  # both files stale
    (repo / "out/alpha/notes.txt").write_text("mine\n")  # unexpected: the build removes it
    (repo / "b.spark").unlink()  # beta's folder is retired
    os.chmod(repo / "out/alpha/serve.sh", 0o644)
    r = spark("build", ".", "-o", "out", "--check", "--diff", cwd=repo)
    assert r.returncode == 1, r.stderr
    # The hand-edited folder is a problem the build would stop at: the summary says so.
    summary, diff = r.stdout.split("\n", 1)
    assert summary == "checked 1 file: build would fail: 1 output error"
    assert "diff --git a/out/alpha/serve.sh b/out/alpha/serve.sh\nold mode 100644\nnew mode 100755\n" in diff
    assert "+  --max-num-seqs 8 \\\n" in diff
    assert "diff --git a/out/alpha/notes.txt b/out/alpha/notes.txt\ndeleted file mode 100644\n" in diff
    assert "--- a/out/beta/kubernetes.yaml\n+++ /dev/null\n" in diff
    assert "--- a/out/manifest.json\n+++ b/out/manifest.json\n" in diff
    assert "would change" not in r.stdout  # the diff says it all
    # Nothing was written; applied with git, the diff gives what the build writes.
    assert (repo / "out/alpha/notes.txt").exists()
    shutil.copytree(repo / "out", repo / "built")
    built = spark("build", ".", "-o", "built", "--take-over", cwd=repo)
    assert built.returncode == 0, built.stderr
    (repo / "patch.diff").write_text(diff)
    applied = subprocess.run(["git", "apply", "patch.diff"], cwd=repo, capture_output=True, text=True)
    assert applied.returncode == 0, applied.stderr
    assert tree(repo / "out") == tree(repo / "built")
    assert spark("build", ".", "-o", "out", "--check", "--diff", cwd=repo).returncode == 0


def test_a_missing_output_is_a_new_file(repo: Path, spark) -> None:
    r = spark("build", "a.spark", "-o", "out", "--diff", cwd=repo)  # --diff alone checks too
    assert r.returncode == 1
    assert not (repo / "out").exists()
    assert "diff --git a/out/alpha/serve.sh b/out/alpha/serve.sh\nnew file mode 100755\n--- /dev/null\n" in r.stdout


def test_an_up_to_date_folder_has_an_empty_diff(repo: Path, spark) -> None:
    spark("build", ".", "-o", "out", cwd=repo)
    r = spark("build", ".", "-o", "out", "--check", "--diff", cwd=repo)
    assert r.returncode == 0
    assert "diff" not in r.stdout


def test_the_diff_shows_control_characters_as_escapes(repo: Path, spark) -> None:
    """An edited output is shown, never played: an escape sequence in it cannot drive the terminal."""
    spark("build", ".", "-o", "out", cwd=repo)
    (repo / "out/alpha/compose.yaml").write_bytes(b"\x1b[2J\x1b]0;owned\x07 fine\r\nno newline")
    r = spark("build", ".", "-o", "out", "--check", "--diff", cwd=repo)
    assert r.returncode == 1
    assert "\x1b" not in r.stdout and "\x07" not in r.stdout and "\r" not in r.stdout
    assert "-\\u{1b}[2J\\u{1b}]0;owned\\u{7} fine\\u{d}\n-no newline\n\\ No newline at end of file\n" in r.stdout


def test_machine_formats_keep_stdout_for_their_document(repo: Path, spark) -> None:
    r = spark("build", ".", "-o", "out", "--check", "--diff", "--format", "json", cwd=repo)
    assert r.returncode == 1
    assert json.loads(r.stdout)["diagnostics"] == []
    assert "+++ b/out/alpha/serve.sh" in r.stderr


def test_github_format_annotates_every_stale_output(repo: Path, spark) -> None:
    spark("build", ".", "-o", "out", cwd=repo)
    (repo / "a.spark").write_text(ALPHA.replace("EXTRA", "  max_num_seqs = 8\n"))
    (repo / "b.spark").unlink()
    r = spark("build", ".", "-o", "out", "--check", "--format", "github", cwd=repo)
    assert r.returncode == 1
    command = "run `spark build . -o out` and commit the result"
    stale = "title=spark build%3A output stale"
    assert r.stdout.splitlines() == [
        f"::error file=out/alpha/serve.sh,{stale}::out/alpha/serve.sh is stale; {command}",
        f"::error file=out/alpha/compose.yaml,{stale}::out/alpha/compose.yaml is stale; {command}",
        "::error file=out/beta/,title=spark build%3A output removed::out/beta/ belongs to a deployment this build "
        f"no longer produces (it would be removed); {command}",
        f"::error file=out/manifest.json,{stale}::out/manifest.json is stale; {command}",
    ]


def test_github_annotations_escape_the_output_path(project, spark) -> None:
    """`%`, `,` and `:` in a folder name cannot end the file property or forge a second command."""
    root = project({"a.spark": ALPHA.replace("EXTRA", "")})
    r = spark("build", "a.spark", "-o", "o,u:t%0A::x", "--check", "--format", "github", cwd=root)
    assert r.returncode == 1
    (first, *_) = r.stdout.splitlines()
    assert first.startswith("::error file=o%2Cu%3At%250A%3A%3Ax/alpha/serve.sh,title=")
    assert all(line.startswith("::error file=") for line in r.stdout.splitlines())
