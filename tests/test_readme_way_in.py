"""Issue 32, "No way in": the README leads to the tutorial first, says that any model vLLM serves
can be deployed, and names `spark model import`, docs/models.md and docs/production.md; its
install line makes the virtual environment it needs. (The tutorial itself is executed by
tests/test_tutorial.py; the README's install and test commands by tests/test_install.py and
scripts/test.sh.)"""

from __future__ import annotations

import re
from pathlib import Path

from cli_helpers import spark

REPO = Path(__file__).resolve().parent.parent
README = (REPO / "README.md").read_text(encoding="utf-8")
LINKS = re.findall(r"\]\(([^)]+)\)", README)


def test_the_first_link_is_the_tutorial_and_it_exists() -> None:
    assert LINKS[0] == "docs/tutorial.md"
    assert (REPO / LINKS[0]).is_file()


def test_it_says_any_vllm_model_works_and_how() -> None:
    assert "Any model vLLM serves can be deployed" in README
    assert "`spark\nmodel import`" in README or "`spark model import`" in README
    for page in ("docs/models.md", "docs/production.md"):
        assert page in LINKS, f"the README never links {page}"


def test_the_install_line_makes_its_virtual_environment() -> None:
    block = re.search(r"```sh\n(.*?)```", README.split("## Try it", 1)[1], re.S)
    assert block is not None
    assert block.group(1).startswith("python3 -m venv .venv && . .venv/bin/activate\n")


def test_the_command_the_readme_names_is_there(tmp_path: Path) -> None:
    """`spark model import` is a command of the installed `spark`, with the help the README promises."""
    done = spark("model", "import", "--help", cwd=tmp_path)
    assert done.returncode == 0
    assert "config.json" in done.stdout
