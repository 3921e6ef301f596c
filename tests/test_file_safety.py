"""Hostile file systems through the real `spark` command: every failure is a diagnostic or a usage error.

FIFOs, directories, symlink loops, names too long for the file system, NUL bytes in import
paths, unreadable files, names that are not UTF-8 and symlinks leading out of the project:
each run ends within its timeout with exit 1 or 2, never 3, and never a traceback.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

SPEC = """\
deployment muse-b200 {
  model       = muse-spark-open
  accelerator = b200
  target shell {}
}
"""
COMMANDS = (
    ["check"],
    ["check", "--format", "json"],
    ["plan"],
    ["build", "-o", "out"],
    ["fmt"],
    ["fmt", "--check"],
)


def spark(cwd: Path, *args: str | bytes, prefix: tuple[str, ...] = ()) -> subprocess.CompletedProcess[bytes]:
    """Runs the installed command in a fresh process; a hang fails the test at the timeout."""
    return subprocess.run(
        [*prefix, sys.executable, "-m", "spark_dsl", *args],
        cwd=cwd,
        capture_output=True,
        env={**os.environ, "NO_COLOR": "1"},
        timeout=20,
    )


def assert_handled(done: subprocess.CompletedProcess[bytes], code: int) -> str:
    """Exit `code`, no traceback and no internal-error report; returns stdout and stderr as text."""
    both = (done.stdout + done.stderr).decode("utf-8", "replace")
    assert "Traceback" not in both and "internal error" not in both, both
    assert done.returncode == code, both
    return both


@pytest.fixture
def here(tmp_path: Path) -> Path:
    (tmp_path / "ok.spark").write_text(SPEC, encoding="utf-8")
    return tmp_path


@pytest.mark.parametrize("command", COMMANDS, ids=" ".join)
def test_a_fifo_named_as_a_spec_is_a_usage_error_not_a_hang(here: Path, command: list[str]) -> None:
    os.mkfifo(here / "pipe.spark")
    both = assert_handled(spark(here, *command, "pipe.spark"), 2)
    assert "pipe.spark is a FIFO, not a regular file" in both


@pytest.mark.parametrize("command", COMMANDS, ids=" ".join)
def test_a_character_device_named_as_a_spec_is_a_usage_error(here: Path, command: list[str]) -> None:
    root = () if command[0] == "fmt" else ("--root", "/dev")  # /dev is outside the default root
    both = assert_handled(spark(here, *command, *root, "/dev/zero"), 2)
    assert "is a character device, not a regular file" in both


def test_an_imported_fifo_is_located_at_the_import(here: Path) -> None:
    os.mkfifo(here / "pipe.spark")
    (here / "main.spark").write_text('import "pipe.spark"\n' + SPEC, encoding="utf-8")
    for command in (["check"], ["plan"], ["build", "-o", "out"]):
        both = assert_handled(spark(here, *command, "main.spark"), 1)
        assert 'error[SPK120]: cannot read imported file "pipe.spark": it is a FIFO, not a regular file' in both
        assert "main.spark:1:8" in both


def test_an_imported_directory_is_not_reported_missing(here: Path) -> None:
    (here / "dir.spark").mkdir()
    (here / "main.spark").write_text('import "dir.spark"\n' + SPEC, encoding="utf-8")
    both = assert_handled(spark(here, "check", "main.spark"), 1)
    assert 'cannot read imported file "dir.spark": it is a directory, not a regular file' in both


def test_a_folder_scan_skips_fifos_and_reads_the_rest(here: Path) -> None:
    os.mkfifo(here / "pipe.spark")
    both = assert_handled(spark(here, "check", "."), 0)
    assert "checked 1 file: no problems" in both
    assert "skipped pipe.spark: it is a FIFO, not a regular file" in both
    assert_handled(spark(here, "fmt", "--check", "."), 0)


def test_an_import_path_longer_than_the_file_system_allows(here: Path) -> None:
    (here / "main.spark").write_text(f'import "{"a" * 300}.spark"\n' + SPEC, encoding="utf-8")
    for command in (["check"], ["plan"], ["build", "-o", "out"]):
        both = assert_handled(spark(here, *command, "main.spark"), 1)
        assert "error[SPK120]" in both and "name is too long" in both


def test_a_spec_named_with_a_name_too_long_is_a_usage_error(here: Path) -> None:
    name = "a" * 300 + ".spark"
    for command in (["check"], ["fmt"]):
        both = assert_handled(spark(here, *command, name), 2)
        assert "name is too long" in both


def test_an_import_through_a_symlink_loop(here: Path) -> None:
    (here / "loop1.spark").symlink_to("loop2.spark")
    (here / "loop2.spark").symlink_to("loop1.spark")
    (here / "main.spark").write_text('import "loop1.spark"\n' + SPEC, encoding="utf-8")
    both = assert_handled(spark(here, "check", "main.spark"), 1)
    assert "error[SPK120]" in both and "symbolic links" in both
    for command in (["check"], ["fmt"]):
        both = assert_handled(spark(here, *command, "loop1.spark"), 2)
        assert "symbolic links" in both


def test_a_nul_byte_in_an_import_path(here: Path) -> None:
    (here / "main.spark").write_text('import "ok\\u{0}.spark"\n' + SPEC, encoding="utf-8")
    both = assert_handled(spark(here, "check", "main.spark"), 1)
    assert "error[SPK120]" in both and "NUL" in both
    assert "main.spark:1:8" in both


def without_file_permission_override() -> tuple[str, ...]:
    """Root reads every file; dropping CAP_DAC_OVERRIDE and CAP_DAC_READ_SEARCH makes it honour modes."""
    setpriv = shutil.which("setpriv")
    assert setpriv, "setpriv (util-linux) is needed to run spark without permission overrides"
    caps = "-dac_override,-dac_read_search"
    return (setpriv, f"--bounding-set={caps}", f"--inh-caps={caps}") if os.geteuid() == 0 else ()


def test_an_unreadable_spec_named_or_imported(here: Path) -> None:
    secret = here / "secret.spark"
    secret.write_text(SPEC.replace("muse-b200", "secret"), encoding="utf-8")
    secret.chmod(0)
    (here / "main.spark").write_text('import "secret.spark"\n' + SPEC, encoding="utf-8")
    prefix = without_file_permission_override()
    for command in (["check"], ["plan"], ["build", "-o", "out"]):
        both = assert_handled(spark(here, *command, "main.spark", prefix=prefix), 1)
        assert 'error[SPK120]: cannot read imported file "secret.spark": permission denied' in both
        both = assert_handled(spark(here, *command, "secret.spark", prefix=prefix), 1)
        assert "error[SPK120]: cannot read secret.spark: permission denied" in both
    both = assert_handled(spark(here, "fmt", "secret.spark", prefix=prefix), 1)
    assert "secret.spark: cannot read: permission denied" in both


def test_a_spec_larger_than_the_limit_is_refused_unread(here: Path) -> None:
    big = here / "big.spark"
    big.write_bytes(b"# padding\n" * (1024 * 1024 + 1))
    (here / "main.spark").write_text('import "big.spark"\n' + SPEC, encoding="utf-8")
    both = assert_handled(spark(here, "check", "main.spark", "big.spark"), 1)
    assert 'cannot read imported file "big.spark": it is larger than 10 MiB' in both
    assert "cannot read big.spark: it is larger than 10 MiB" in both
    both = assert_handled(spark(here, "fmt", "big.spark"), 1)
    assert "larger than 10 MiB" in both


def non_utf8_project(here: Path) -> None:
    os.rename(here / "ok.spark", here / os.fsdecode(b"bad\xff.spark"))
    (here / os.fsdecode(b"err\xfe.spark")).write_text("deployment x {\n  gpus = 1\n}\n", encoding="utf-8")


def test_a_file_name_that_is_not_utf8_keeps_json_valid(here: Path) -> None:
    non_utf8_project(here)
    done = spark(here, "check", ".", "--format", "json")
    assert_handled(done, 1)
    doc = json.loads(done.stdout.decode("utf-8"))  # strict: raises on invalid UTF-8
    assert doc["files"] == ["bad\\xff.spark", "err\\xfe.spark"]
    assert {d["file"] for d in doc["diagnostics"]} == {"err\\xfe.spark"}
    for fmt in ("sarif", "github", "text"):
        done = spark(here, "check", ".", "--format", fmt)
        assert_handled(done, 1)
        shown = done.stdout.decode("utf-8")
        if fmt != "sarif":  # the name as every format but SARIF's percent-encoded URI shows it
            assert "err\\xfe.spark" in shown, shown
    done = spark(here, "plan", "bad\udcff.spark".encode("utf-8", "surrogateescape"), "--format", "json")
    assert_handled(done, 0)
    assert json.loads(done.stdout.decode("utf-8"))["deployments"][0]["file"] == "bad\\xff.spark"


def test_a_file_name_that_is_not_utf8_builds(here: Path) -> None:
    non_utf8_project(here)
    (here / os.fsdecode(b"err\xfe.spark")).unlink()
    assert_handled(spark(here, "build", ".", "-o", "out"), 0)
    header = (here / "out" / "muse-b200" / "serve.sh").read_bytes()
    assert b"\xff" not in header and b"from bad\\xff.spark" in header  # shown as diagnostics show it, UTF-8
    header.decode("utf-8")
    manifest = json.loads((here / "out" / "manifest.json").read_bytes().decode("utf-8"))
    assert os.fsencode(manifest["deployments"][0]["source"]).endswith(b"bad\xff.spark")  # the real name
    assert_handled(spark(here, "build", ".", "-o", "out"), 0)  # and the next build reads it back
    assert_handled(spark(here, "fmt", "--check", "."), 0)


def test_a_folder_scan_skips_symlinks_that_leave_the_root(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "s.spark").write_text('deployment s { gpus = "TOPSECRET" }\n', encoding="utf-8")
    project = tmp_path / "project"
    (project / "sub").mkdir(parents=True)
    (project / "ok.spark").write_text(SPEC, encoding="utf-8")
    (project / "link.spark").symlink_to("../outside/s.spark")
    (project / "inside.spark").symlink_to("ok.spark")
    (project / "sub" / "up").symlink_to("..")  # a loop a scan must not follow
    done = spark(project, "check", ".")
    both = assert_handled(done, 0)
    assert "TOPSECRET" not in both
    assert "skipped link.spark: it resolves outside the project root" in both
    assert "checked 1 file: no problems" in both  # inside.spark is ok.spark again
    both = assert_handled(spark(project, "check", "link.spark"), 2)
    assert "outside the project root" in both and "TOPSECRET" not in both
    both = assert_handled(spark(project, "fmt", "--check", "."), 0)
    assert "skipped link.spark: it resolves outside" in both


def test_a_root_that_cannot_be_looked_at_is_a_usage_error(here: Path) -> None:
    for root, reason in (("a" * 300, "name is too long"), ("ok.spark", "is a file")):
        both = assert_handled(spark(here, "check", "ok.spark", "--root", root), 2)
        assert reason in both


def test_a_folder_scan_names_a_folder_it_cannot_read(here: Path) -> None:
    private = here / "private"
    private.mkdir()
    (private / "hidden.spark").write_text("deployment broken {\n", encoding="utf-8")
    private.chmod(0)
    prefix = without_file_permission_override()
    for command in (["check"], ["fmt", "--check"]):
        both = assert_handled(spark(here, *command, ".", prefix=prefix), 0)
        assert "skipped private: the folder cannot be read: permission denied" in both


def test_a_folder_holding_only_specs_it_may_not_read_says_why(tmp_path: Path) -> None:
    (tmp_path / "outside.spark").write_text(SPEC, encoding="utf-8")
    project = tmp_path / "project"
    (project / "only-links").mkdir(parents=True)
    (project / "spark.toml").write_text("", encoding="utf-8")
    (project / "only-links" / "out.spark").symlink_to("../../outside.spark")
    private = project / "private"
    private.mkdir()
    (private / "a.spark").write_text(SPEC, encoding="utf-8")
    private.chmod(0)
    prefix = without_file_permission_override()
    both = assert_handled(spark(project, "check", "only-links", prefix=prefix), 2)
    assert "only-links holds no .spark file spark may read" in both
    assert "only-links/out.spark: it resolves outside the project root" in both
    both = assert_handled(spark(project, "check", "private", prefix=prefix), 2)
    assert "private: the folder cannot be read: permission denied" in both


def test_fmt_says_why_a_folder_of_only_skipped_specs_holds_nothing_to_format(tmp_path: Path) -> None:
    # `spark fmt` scans folders with the same code as `spark check`, so it gives the same reason.
    (tmp_path / "spark.toml").write_text("", encoding="utf-8")
    (tmp_path / "pipes").mkdir()
    os.mkfifo(tmp_path / "pipes" / "pipe.spark")
    both = assert_handled(spark(tmp_path, "fmt", "pipes"), 2)
    assert "pipes holds no .spark file spark may read (skipped pipes/pipe.spark:" in both


@pytest.mark.parametrize("size", [0, 1, 4095, 1024 * 1024 - 1, 1024 * 1024, 1024 * 1024 + 1, 3 * 1024 * 1024 + 7])
def test_a_spec_is_read_whole_at_every_size_around_the_read_size(tmp_path: Path, size: int) -> None:
    # read_spec stops at a short read once the open file's size is reached, without the
    # empty read that would confirm the end: every byte must still be there, on each side of
    # its 1 MiB reads.
    from spark_dsl.files import read_spec

    data = bytes(i % 251 for i in range(size))
    (tmp_path / "s.spark").write_bytes(data)
    assert read_spec(tmp_path / "s.spark") == data


def test_a_file_that_says_it_is_empty_is_read_to_its_end(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # /proc's files say they hold 0 bytes and come in short reads: the size is no end there.
    from spark_dsl import files

    (tmp_path / "s.spark").write_bytes(b"x" * 10_000)
    real_read, real_fstat = os.read, os.fstat

    def short_read(fd: int, n: int) -> bytes:
        return real_read(fd, min(n, 4096))

    def no_size(fd: int) -> os.stat_result:
        st = real_fstat(fd)
        return os.stat_result((st.st_mode, st.st_ino, st.st_dev, st.st_nlink, st.st_uid, st.st_gid, 0, 0, 0, 0))

    monkeypatch.setattr(os, "read", short_read)
    monkeypatch.setattr(os, "fstat", no_size)
    assert files.read_spec(tmp_path / "s.spark") == b"x" * 10_000


def test_a_file_longer_than_its_size_said_is_read_to_its_end(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # The first read asks for the size the open file gave and a byte more; a file that grew after
    # that (an editor still writing it) fills it, and is read on to its end.
    from spark_dsl import files

    data = bytes(i % 251 for i in range(3 * 1024 * 1024 + 5))
    (tmp_path / "s.spark").write_bytes(data)
    real_fstat = os.fstat
    asked: list[int] = []
    real_read = os.read

    def small_size(fd: int) -> os.stat_result:
        st = real_fstat(fd)
        return os.stat_result((st.st_mode, st.st_ino, st.st_dev, st.st_nlink, st.st_uid, st.st_gid, 100, 0, 0, 0))

    def counted(fd: int, n: int) -> bytes:
        asked.append(n)
        return real_read(fd, n)

    monkeypatch.setattr(os, "fstat", small_size)
    monkeypatch.setattr(os, "read", counted)
    assert files.read_spec(tmp_path / "s.spark") == data
    assert asked[0] == 101 and set(asked[1:]) == {1024 * 1024}
