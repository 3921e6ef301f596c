"""The VS Code extension in editors/ packages cleanly with `vsce package`, as a publisher would.

scripts/test.sh installs the extension's pinned build tools (`npm ci` in editors/: esbuild and
@vscode/vsce); without them this test fails, it does not skip.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
EDITORS = REPO / "editors"
TOOLS = EDITORS / "node_modules"

# Exactly what the .vsix carries: the manifest, its docs, the grammar, and one bundled script.
PACKAGED = {
    "extension/package.json",
    "extension/README.md",
    "extension/LICENSE.txt",
    "extension/dist/extension.js",
    "extension/language-configuration.json",
    "extension/spark.tmLanguage.json",
}


@pytest.fixture(scope="module")
def packaged(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """`vsce package` run on a copy of editors/ (so nothing is written into the work tree)."""
    vsce = TOOLS / ".bin" / "vsce"
    if not vsce.exists():
        pytest.fail("no vsce in editors/node_modules: run `bash scripts/test.sh` (or `npm ci` in editors/)")
    work = tmp_path_factory.mktemp("vsce")
    folder = work / "editors"
    shutil.copytree(EDITORS, folder, ignore=shutil.ignore_patterns("node_modules", "dist", "*.vsix"))
    (folder / "node_modules").symlink_to(TOOLS, target_is_directory=True)
    out = work / "spark.vsix"
    result = subprocess.run(
        [str(vsce), "package", "--out", str(out)],
        cwd=folder,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=300,
    )
    log = result.stdout + result.stderr
    assert result.returncode == 0, log
    return out, log


def test_vsce_packages_without_a_warning(packaged: tuple[Path, str]) -> None:
    _, log = packaged
    assert "WARNING" not in log, log
    for complaint in ("repository", "LICENSE", "README", ".vscodeignore", "bundle"):
        assert not [line for line in log.splitlines() if "WARN" in line and complaint in line], log


def test_the_vsix_holds_the_bundle_and_no_node_modules(packaged: tuple[Path, str]) -> None:
    vsix, _ = packaged
    names = set(zipfile.ZipFile(vsix).namelist())
    assert not [n for n in names if "node_modules" in n]
    assert {n for n in names if n.startswith("extension/")} == PACKAGED
    manifest = json.loads(zipfile.ZipFile(vsix).read("extension/package.json"))
    assert "extension/" + manifest["main"].removeprefix("./") in names
    assert manifest["repository"]["url"] == "https://github.com/spark-dsl/spark-dsl.git"
    assert manifest["license"] == "Apache-2.0"
    assert zipfile.ZipFile(vsix).read("extension/LICENSE.txt") == (REPO / "LICENSE").read_bytes()


def test_the_bundle_needs_nothing_but_vscode_and_node(packaged: tuple[Path, str]) -> None:
    # The language client is bundled in: the script loads only VS Code's API and Node's own modules.
    vsix, _ = packaged
    script = zipfile.ZipFile(vsix).read("extension/dist/extension.js").decode()
    builtins = set(
        json.loads(
            subprocess.run(
                ["node", "-p", "JSON.stringify(require('module').builtinModules)"],
                capture_output=True,
                text=True,
                check=True,
            ).stdout
        )
    )
    required = set(re.findall(r"""require\(\s*["']([^"']+)["']\s*\)""", script))
    assert "vscode" in required
    outside = {name for name in required - {"vscode"} if name.removeprefix("node:") not in builtins}
    assert outside == set(), f"the bundle loads modules the .vsix does not carry: {outside}"
    assert "LanguageClient" in script


def test_the_extension_license_is_the_project_license() -> None:
    assert (EDITORS / "LICENSE").read_bytes() == (REPO / "LICENSE").read_bytes()
