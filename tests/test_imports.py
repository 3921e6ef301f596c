"""The import contracts in `.importlinter` hold: each layer imports only from the layers below it.

`lint-imports` (import-linter) checks them; a second test breaks a copy of the package on purpose,
so a contract that checked nothing would fail here too.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LINT_IMPORTS = ["-c", "import sys; from importlinter.cli import lint_imports_command; sys.exit(lint_imports_command())"]


def lint_imports(cwd: Path, package_parent: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(package_parent)}
    return subprocess.run(
        [sys.executable, *LINT_IMPORTS, "--no-cache"], cwd=cwd, env=env, capture_output=True, text=True, check=False
    )


def test_the_import_contracts_are_kept() -> None:
    result = lint_imports(ROOT, ROOT)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "0 broken" in result.stdout


def test_an_import_against_the_layers_breaks_the_contract(tmp_path: Path) -> None:
    shutil.copytree(ROOT / "spark_dsl", tmp_path / "spark_dsl")
    shutil.copy(ROOT / ".importlinter", tmp_path)
    span = tmp_path / "spark_dsl" / "span.py"
    span.write_text(span.read_text(encoding="utf-8") + "\nfrom spark_dsl import cli  # noqa: E402\n", encoding="utf-8")
    result = lint_imports(tmp_path, tmp_path)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "spark_dsl.span -> spark_dsl.cli" in result.stdout, result.stdout


def test_no_module_imports_itself_back() -> None:
    """No import cycle between modules (import-linter's layers see only imports across layers).

    grimp is the import graph import-linter is built on; imports under `if TYPE_CHECKING:` are left
    out, as in `.importlinter`."""
    import grimp

    graph = grimp.build_graph("spark_dsl", cache_dir=None, exclude_type_checking_imports=True)
    cycles = sorted(
        " -> ".join(chain)
        for module in graph.modules
        for imported in graph.find_modules_directly_imported_by(module)
        if (chain := graph.find_shortest_chain(importer=imported, imported=module)) is not None and module < imported
    )
    assert cycles == []
