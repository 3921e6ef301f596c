"""Helpers of the file-system tests of `spark build`: exact tree snapshots, small disks, manifest checks."""

from __future__ import annotations

import hashlib
import json
import os
import stat
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

PAGE = 4096

ONE_NODE = """deployment {name} {{
  model       = muse-spark-open
  accelerator = b200
{extra}
}}
"""
ALL_SINGLE_HOST = "  target shell {}\n  target compose {}\n  target kubernetes {}\n  target vllm-config {}"


def spec(name: str, extra: str = "  target shell {}") -> str:
    return ONE_NODE.format(name=name, extra=extra)


def snapshot(folder: Path) -> dict[str, tuple[object, ...]]:
    """Everything below a folder as it is on disk, links not followed: names, kinds, bytes and modes."""
    found: dict[str, tuple[object, ...]] = {}
    for dirpath, dirnames, filenames in os.walk(folder, followlinks=False):
        for name in sorted(dirnames + filenames):
            path = Path(dirpath) / name
            info = path.lstat()
            rel = path.relative_to(folder).as_posix()
            if stat.S_ISLNK(info.st_mode):
                found[rel] = ("link", os.readlink(path))
            elif stat.S_ISDIR(info.st_mode):
                found[rel] = ("dir", stat.S_IMODE(info.st_mode))
            else:
                found[rel] = ("file", path.read_bytes(), stat.S_IMODE(info.st_mode))
    return found


def deployments(out: Path, recovered: bool = False) -> dict[str, dict[str, bytes]]:
    """The deployment folders of an output folder (spark's own dot-names left out), file by file.

    `recovered`: as the next build sees them, a folder that a killed build moved aside and that the
    manifest still lists put back.
    """
    found = {
        d.name: {f.name: f.read_bytes() for f in sorted(d.iterdir())}
        for d in sorted(out.iterdir())
        if d.is_dir() and not d.is_symlink() and not d.name.startswith(".")
    }
    if recovered:
        listed = {e["name"] for e in json.loads((out / "manifest.json").read_text(encoding="utf-8"))["deployments"]}
        for aside in out.glob(".spark-build-old-*"):
            name = aside.name.removeprefix(".spark-build-old-")
            if name not in found and name in listed:
                found[name] = {f.name: f.read_bytes() for f in sorted(aside.iterdir())}
    return dict(sorted(found.items()))


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def assert_manifest_matches_disk(out: Path, recovered: bool = False) -> None:
    """Every deployment folder on disk is listed, and each listed folder holds one recorded state."""
    doc = json.loads((out / "manifest.json").read_text(encoding="utf-8"))
    listed = {entry["name"]: entry for entry in doc["deployments"]}
    on_disk = deployments(out, recovered)
    assert set(on_disk) <= set(listed), f"folders the manifest does not list: {set(on_disk) - set(listed)}"
    assert all(isinstance(entry["files"], dict) for entry in listed.values()), "no content hashes recorded"
    for name, files in on_disk.items():
        hashes = {file: sha256(data) for file, data in files.items()}
        recorded = [listed[name]["files"]] + ([listed[name]["previous"]] if "previous" in listed[name] else [])
        assert hashes in recorded, f"{name}/ holds none of the states the manifest records for it"
    assert doc["version"] == 2


@contextmanager
def tmpfs(path: Path, size: str = "64k") -> Iterator[Path]:
    """A small file system of its own (the tests run as root), unmounted whatever happens."""
    path.mkdir(parents=True, exist_ok=True)
    subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size},mode=0755", "tmpfs", str(path)], check=True)
    try:
        yield path
    finally:
        subprocess.run(["umount", "-l", str(path)], check=True)


def read_only(path: Path) -> None:
    subprocess.run(["mount", "-o", "remount,ro", str(path)], check=True)


def fill(mount: Path, leave_pages: int) -> None:
    """Takes all but `leave_pages` free pages of a tmpfs with one file."""
    free = os.statvfs(mount).f_bavail * os.statvfs(mount).f_frsize
    size = max(0, free - leave_pages * PAGE)
    with open(mount / "filler", "wb") as handle:
        handle.write(b"\0" * size)
