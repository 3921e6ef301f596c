"""How `spark fmt` writes a file: through symlinks, atomically, keeping its mode; a folder it cannot
write is a clear error. Every run goes through the real command."""

from __future__ import annotations

import os
import stat
import subprocess
from pathlib import Path

UGLY = "deployment x {\nmodel=muse-spark-open\n   accelerator = b200\n}\n"
PRETTY = "deployment x {\n  model       = muse-spark-open\n  accelerator = b200\n}\n"


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_fmt_writes_through_a_symlink_and_keeps_the_link(tmp_path: Path, spark) -> None:
    (tmp_path / ".git").mkdir()  # one project: a link out of the project is not followed (issue 31)
    real = tmp_path / "real/deep/a.spark"
    real.parent.mkdir(parents=True)
    real.write_text(UGLY)
    real.chmod(0o640)
    (tmp_path / "links").mkdir()
    link = tmp_path / "links/a.spark"
    link.symlink_to("../real/deep/a.spark")
    r = spark("fmt", "links/a.spark")
    assert r.returncode == 0, r.stderr
    assert link.is_symlink() and os.readlink(link) == "../real/deep/a.spark"
    assert real.read_text() == PRETTY
    assert mode(real) == 0o640
    assert sorted(os.listdir(real.parent)) == ["a.spark"]  # no temporary file left behind
    assert sorted(os.listdir(link.parent)) == ["a.spark"]


def test_fmt_writes_through_a_chain_of_links(tmp_path: Path, spark) -> None:
    (tmp_path / "a.spark").write_text(UGLY)
    (tmp_path / "b.spark").symlink_to("a.spark")
    (tmp_path / "c.spark").symlink_to(tmp_path / "b.spark")
    assert spark("fmt", "c.spark").returncode == 0
    assert (tmp_path / "a.spark").read_text() == PRETTY
    assert (tmp_path / "b.spark").is_symlink() and (tmp_path / "c.spark").is_symlink()


def test_fmt_keeps_the_mode_of_a_regular_file(tmp_path: Path, spark) -> None:
    for name, bits in (("private.spark", 0o600), ("shared.spark", 0o664), ("odd.spark", 0o755)):
        (tmp_path / name).write_text(UGLY)
        (tmp_path / name).chmod(bits)
    assert spark("fmt", ".").returncode == 0
    assert {p.name: mode(p) for p in tmp_path.glob("*.spark")} == {
        "private.spark": 0o600,
        "shared.spark": 0o664,
        "odd.spark": 0o755,
    }


def test_fmt_writes_a_file_named_up_to_the_file_system_limit(tmp_path: Path, spark) -> None:
    name = "n" * 249 + ".spark"  # 255 bytes: the longest name the file system allows
    (tmp_path / name).write_text(UGLY)
    r = spark("fmt", name)
    assert r.returncode == 0, r.stderr
    assert (tmp_path / name).read_text() == PRETTY
    assert os.listdir(tmp_path) == [name]


def _mounted(path: Path, options: str) -> None:
    path.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", options, "tmpfs", str(path)], check=True)


def test_fmt_in_a_folder_it_cannot_write_is_a_clear_error(tmp_path: Path, spark) -> None:
    disk = tmp_path / "disk"
    _mounted(disk, "size=64k")
    try:
        (disk / "a.spark").write_text(UGLY)
        (disk / "b.spark").write_text(UGLY)
        subprocess.run(["mount", "-o", "remount,ro", str(disk)], check=True)
        r = spark("fmt", "disk")
        assert r.returncode == 1, r.stderr
        assert "Traceback" not in r.stderr and "internal error" not in r.stderr
        assert "error: disk/a.spark: cannot write: Read-only file system" in r.stderr
        assert "error: disk/b.spark: cannot write" in r.stderr  # the run goes on to the next file
        assert (disk / "a.spark").read_text() == UGLY
    finally:
        subprocess.run(["umount", "-l", str(disk)], check=True)


def test_fmt_on_a_full_disk_leaves_the_file_and_no_temporary(tmp_path: Path, spark) -> None:
    disk = tmp_path / "disk"
    _mounted(disk, "size=16k")
    try:
        (disk / "a.spark").write_text(UGLY)
        with open(disk / "filler", "wb") as filler:
            filler.write(b"\0" * (os.statvfs(disk).f_bavail * os.statvfs(disk).f_frsize))
        r = spark("fmt", "disk/a.spark")
        assert r.returncode == 1, r.stderr
        assert "error: disk/a.spark: cannot write: No space left on device" in r.stderr
        assert (disk / "a.spark").read_text() == UGLY
        assert sorted(os.listdir(disk)) == ["a.spark", "filler"]
    finally:
        subprocess.run(["umount", "-l", str(disk)], check=True)
