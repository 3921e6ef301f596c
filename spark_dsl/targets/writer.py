"""Writes deployment folders atomically under a manifest, or reports what a build would change."""

from __future__ import annotations

import ctypes
import json
import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from spark_dsl.targets.build import EXECUTABLE, DeploymentOutput

MANIFEST = "manifest.json"
_TEMP_PREFIX = ".spark-build-"
_RENAME_EXCHANGE = 2
_AT_FDCWD = -100


class OutputError(Exception):
    """The output folder cannot be written as asked (a file where a folder should be, ...)."""


@dataclass(frozen=True, slots=True)
class Change:
    """One path a build would change: `missing`, `stale`, `unexpected` or `removed`."""

    kind: str
    path: Path

    def __str__(self) -> str:
        return f"{self.kind}: {self.path.as_posix()}{'/' if self.kind == 'removed' else ''}"


def _mode(file_name: str) -> int:
    return 0o755 if file_name in EXECUTABLE else 0o644


def _encoded(output: DeploymentOutput) -> dict[str, bytes]:
    return {name: text.encode("utf-8") for name, text in output.files.items()}


def read_manifest(out_dir: Path) -> dict[str, dict[str, object]]:
    """The deployments the previous build wrote, by name ({} when there is no readable manifest)."""
    try:
        data = json.loads((out_dir / MANIFEST).read_text(encoding="utf-8"))
        return {entry["name"]: entry for entry in data["deployments"]}
    except (OSError, ValueError, KeyError, TypeError):
        return {}


def manifest_text(outputs: list[DeploymentOutput], carried: dict[str, dict[str, Any]]) -> str:
    """The manifest: every deployment folder this output directory holds, sorted by name."""
    entries = {o.name: {"name": o.name, "source": o.source, "files": list(o.files)} for o in outputs}
    for name, entry in carried.items():
        entries.setdefault(name, entry)
    doc = {
        "generator": "spark build",
        "version": 1,
        "deployments": [entries[name] for name in sorted(entries)],
    }
    return json.dumps(doc, indent=2, ensure_ascii=False) + "\n"


def _folder_matches(folder: Path, files: dict[str, bytes]) -> bool:
    if not folder.is_dir() or folder.is_symlink():
        return False
    present = sorted(p.name for p in folder.iterdir())
    if present != sorted(files):
        return False
    for name, data in files.items():
        path = folder / name
        if not path.is_file() or path.read_bytes() != data:
            return False
        if (path.stat().st_mode & 0o111 != 0) != (_mode(name) & 0o111 != 0):
            return False
    return True


def _exchange(a: Path, b: Path) -> bool:
    """Swap two paths in one step (Linux renameat2); False where the system cannot."""
    try:
        renameat2 = ctypes.CDLL(None, use_errno=True).renameat2
    except (OSError, AttributeError):
        return False
    result = renameat2(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE)
    return bool(result == 0)


def _replace_folder(out_dir: Path, name: str, files: dict[str, bytes]) -> None:
    """The folder becomes wholly new: written beside it, then swapped in, never edited in place."""
    final = out_dir / name
    if final.is_symlink() or (final.exists() and not final.is_dir()):
        raise OutputError(f"{final} exists and is not a folder; move it away")
    fresh = Path(tempfile.mkdtemp(prefix=f"{_TEMP_PREFIX}{name}-", dir=out_dir))
    try:
        for file_name, data in files.items():
            path = fresh / file_name
            path.write_bytes(data)
            path.chmod(_mode(file_name))
        fresh.chmod(0o755)
        if not final.exists():
            fresh.rename(final)
            return
        if _exchange(fresh, final):
            shutil.rmtree(fresh)  # it now holds the previous outputs
            return
        old = Path(tempfile.mkdtemp(prefix=f"{_TEMP_PREFIX}{name}-old-", dir=out_dir))
        old.rmdir()
        final.rename(old)
        fresh.rename(final)
        shutil.rmtree(old)
    finally:
        if fresh.exists():
            shutil.rmtree(fresh)


def _write_manifest(out_dir: Path, text: str) -> None:
    handle, tmp = tempfile.mkstemp(prefix=_TEMP_PREFIX, dir=out_dir)
    with os.fdopen(handle, "w", encoding="utf-8") as f:
        f.write(text)
    os.chmod(tmp, 0o644)
    os.replace(tmp, out_dir / MANIFEST)


@dataclass(frozen=True, slots=True)
class Scope:
    """Which earlier deployments this build speaks for: specs it read, or specs that are gone.

    Building one file never retires the folders of specs it did not read.
    """

    root: Path
    inputs: tuple[Path, ...]

    def covers(self, source: object) -> bool:
        if not isinstance(source, str):
            return False
        path = (self.root / source).resolve()
        if not path.exists():
            return True
        return any(path == i or path.is_relative_to(i) for i in self.inputs)


def _retired(
    previous: dict[str, dict[str, object]],
    outputs: list[DeploymentOutput],
    held: set[str],
    scope: Scope,
) -> list[str]:
    """Folders an earlier build wrote that no spec produces any more (never one with errors now)."""
    produced = {o.name for o in outputs}
    return sorted(
        name
        for name, entry in previous.items()
        if name not in produced and name not in held and scope.covers(entry.get("source"))
    )


def write(out_dir: Path, outputs: list[DeploymentOutput], held: set[str], scope: Scope) -> list[str]:
    """Write every deployment folder, drop retired ones, then the manifest; returns what changed."""
    if out_dir.exists() and not out_dir.is_dir():
        raise OutputError(f"{out_dir} exists and is not a folder")
    out_dir.mkdir(parents=True, exist_ok=True)
    for leftover in sorted(out_dir.glob(f"{_TEMP_PREFIX}*")):  # from a build that was killed
        if leftover.is_dir():
            shutil.rmtree(leftover)
        else:
            leftover.unlink()
    previous = read_manifest(out_dir)
    report = []
    for output in outputs:
        files = _encoded(output)
        folder = out_dir / output.name
        if _folder_matches(folder, files):
            continue
        _replace_folder(out_dir, output.name, files)
        report.append(f"wrote {folder.as_posix()}/ ({', '.join(output.files)})")
    for name in _retired(previous, outputs, held, scope):
        folder = out_dir / name
        if folder.is_dir() and not folder.is_symlink():
            shutil.rmtree(folder)
            report.append(f"removed {folder.as_posix()}/ (no spec produces it any more)")
    retired = set(_retired(previous, outputs, held, scope))
    carried = {name: entry for name, entry in previous.items() if name not in retired}
    text = manifest_text(outputs, carried)
    manifest = out_dir / MANIFEST
    if not manifest.is_file() or manifest.read_text(encoding="utf-8") != text:
        _write_manifest(out_dir, text)
    return report


def check(out_dir: Path, outputs: list[DeploymentOutput], held: set[str], scope: Scope) -> list[Change]:
    """Every path `write` would change, writing nothing."""
    changes: list[Change] = []
    previous = read_manifest(out_dir)
    for output in outputs:
        folder = out_dir / output.name
        files = _encoded(output)
        for name, data in files.items():
            path = folder / name
            if not path.is_file():
                changes.append(Change("missing", path))
            elif path.read_bytes() != data or (path.stat().st_mode & 0o111 != 0) != (_mode(name) & 0o111 != 0):
                changes.append(Change("stale", path))
        if folder.is_dir():
            for extra in sorted(p.name for p in folder.iterdir() if p.name not in files):
                changes.append(Change("unexpected", folder / extra))
    for name in _retired(previous, outputs, held, scope):
        if (out_dir / name).exists():
            changes.append(Change("removed", out_dir / name))
    retired = set(_retired(previous, outputs, held, scope))
    carried = {name: entry for name, entry in previous.items() if name not in retired}
    manifest = out_dir / MANIFEST
    text = manifest_text(outputs, carried)
    if not manifest.is_file():
        changes.append(Change("missing", manifest))
    elif manifest.read_text(encoding="utf-8") != text:
        changes.append(Change("stale", manifest))
    return changes
