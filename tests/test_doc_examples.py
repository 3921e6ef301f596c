"""Every example in docs/*.md and README.md is checked, so no doc statement goes stale unnoticed.

The marker convention (docs/writing-docs.md):

- a fence tagged `spark` is a whole `.spark` file; `spark check` must report no diagnostic;
- `spark expect=SPK001,SPK106` claims exactly those codes (in any order, repeats counted);
- `spark file=profiles/common.spark` also writes the block at that path in the page's project
  before any block is checked, so other examples on the page can import it;
- `sh`/`bash` blocks must pass `bash -n`, `yaml` blocks must load, `json` blocks must parse, and
  every `spark ...` command in them (and in `run:` lines) must parse with the real CLI;
- every fence names its language (an untagged fence could hide a spec).

docs/rules.md is generated from the explain texts (tests/test_docs.py keeps it current); its
failing and fixed examples are excerpts, and tests/fixtures/codes holds a whole file per code.
"""

from __future__ import annotations

import json
import re
import shlex
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import click
import pytest
import yaml

from spark_dsl.cli import main

REPO = Path(__file__).resolve().parent.parent
PAGES = [*sorted((REPO / "docs").glob("*.md")), REPO / "README.md"]
GENERATED = {"rules.md"}
FENCE = re.compile(r"^```([^\n]*)\n(.*?)^```[ \t]*$", re.M | re.S)
ATTRIBUTES = {"expect", "file"}
# Languages whose blocks are only shown, with no tool here to check them.
# `jsonc` is VS Code's settings: JSON with comments, which no JSON parser here reads.
SHOWN_ONLY = {"jsonc", "lua", "text"}


@dataclass(frozen=True)
class Block:
    page: Path
    line: int
    language: str
    attributes: dict[str, str] = field(default_factory=dict)
    text: str = ""

    @property
    def where(self) -> str:
        return f"{self.page.relative_to(REPO)}:{self.line}"


def _blocks(page: Path) -> list[Block]:
    source = page.read_text(encoding="utf-8")
    found = []
    for match in FENCE.finditer(source):
        language, *words = match.group(1).split() or [""]
        attributes = dict(word.split("=", 1) if "=" in word else (word, "") for word in words)
        line = source.count("\n", 0, match.start()) + 1
        found.append(Block(page, line, language, attributes, match.group(2)))
    return found


def _all(language: str | tuple[str, ...]) -> list[Block]:
    wanted = (language,) if isinstance(language, str) else language
    return [b for page in PAGES if page.name not in GENERATED for b in _blocks(page) if b.language in wanted]


def _ids(blocks: list[Block]) -> list[str]:
    return [b.where for b in blocks]


SPARK = _all("spark")
SHELL = _all(("sh", "bash"))
YAML = _all("yaml")


def test_every_fence_names_its_language() -> None:
    bare = []
    for page in PAGES:
        if page.name in GENERATED:
            continue
        source = page.read_text(encoding="utf-8")
        for match in FENCE.finditer(source):
            if not match.group(1).strip():
                bare.append(f"{page.relative_to(REPO)}:{source.count(chr(10), 0, match.start()) + 1}")
    assert bare == [], f"tag these fences (`spark` for a spec): {bare}"


def test_the_docs_hold_spark_examples() -> None:
    assert len(SPARK) >= 3
    assert [b for b in SPARK if "expect" in b.attributes], "no example claims a diagnostic"


@pytest.mark.parametrize("block", SPARK, ids=_ids(SPARK))
def test_spark_example_checks_as_it_claims(block: Block, tmp_path: Path) -> None:
    unknown = set(block.attributes) - ATTRIBUTES
    assert not unknown, f"{block.where}: unknown attribute {unknown}; use expect=... or file=..."
    for other in _blocks(block.page):
        if other.language == "spark" and "file" in other.attributes:
            path = tmp_path / other.attributes["file"]
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(other.text, encoding="utf-8")
    name = block.attributes.get("file") or f"example-{block.line}.spark"
    (tmp_path / name).write_text(block.text, encoding="utf-8")
    result = subprocess.run(
        [sys.executable, "-m", "spark_dsl", "check", "--format", "json", name],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode in (0, 1), result.stderr
    found = sorted(d["code"] for d in json.loads(result.stdout)["diagnostics"])
    claimed = sorted(filter(None, block.attributes.get("expect", "").split(",")))
    assert found == claimed, f"{block.where} claims {claimed or 'no diagnostic'}, `spark check` reports {found}"


def _spark_commands(text: str) -> list[list[str]]:
    """Each `spark ...` command in shell text, up to its first redirection or operator."""
    commands = []
    for line in text.splitlines():
        line = re.sub(r"(^|\s)#.*", "", line)
        for segment in re.split(r"&&|\|\||;|\|", line):
            segment = re.sub(r"^\s*(-\s*)?(run:\s*)?(\$\s+)?", "", segment)
            if not segment.startswith("spark "):
                continue
            words = []
            for word in shlex.split(segment):
                if re.match(r"^\d?[<>]", word):
                    break
                words.append(word)
            commands.append(words[1:])
    return commands


def _parses(args: list[str]) -> str | None:
    """None when the CLI accepts these arguments (nothing runs), else click's complaint."""
    with click.Context(main) as group:
        command = main.get_command(group, args[0])
        if command is None:
            return f"no command `{args[0]}`"
        try:
            command.make_context(args[0], args[1:], parent=group).close()
        except click.ClickException as err:
            return err.format_message()
    return None


@pytest.mark.parametrize("block", SHELL + YAML, ids=_ids(SHELL + YAML))
def test_commands_in_examples_are_valid(block: Block, tmp_path: Path) -> None:
    if block.language == "yaml":
        loaded = yaml.safe_load(block.text)
        assert loaded, block.where
        steps = [step for job in (loaded.get("jobs") or {}).values() for step in job.get("steps", [])]
        text = "\n".join(step["run"] for step in steps if "run" in step)
    else:
        script = tmp_path / "example.sh"
        script.write_text(block.text, encoding="utf-8")
        syntax = subprocess.run(["bash", "-n", str(script)], capture_output=True, text=True)
        assert syntax.returncode == 0, f"{block.where}: {syntax.stderr}"
        text = block.text
    for args in _spark_commands(text):
        assert _parses(args) is None, f"{block.where}: `spark {' '.join(args)}`: {_parses(args)}"


def test_json_examples_parse() -> None:
    blocks = _all("json")
    assert blocks
    for block in blocks:
        json.loads(block.text)


def test_every_language_is_checked_or_declared_shown_only() -> None:
    # `mermaid` blocks are parsed by Mermaid itself in tests/test_plan_mermaid.py.
    # `toml` blocks (docs/configuration.md) are read by spark_dsl.config in tests/test_cli_docs.py.
    checked = {"spark", "sh", "bash", "yaml", "json", "mermaid", "toml"}
    languages = {b.language for page in PAGES if page.name not in GENERATED for b in _blocks(page)}
    assert languages <= checked | SHOWN_ONLY, languages - checked - SHOWN_ONLY


def test_a_wrong_claim_fails() -> None:
    # The checker of claims itself: a clean spec claimed to fail, and a command with a bad option.
    assert _spark_commands("spark check specs --format sarif > out || test -s out") == [
        ["check", "specs", "--format", "sarif"]
    ]
    assert _parses(["check", "specs", "--format", "sarif"]) is None
    assert _parses(["check", "specs", "--format", "xml"]) is not None
    assert _parses(["nope"]) is not None


def test_the_slurm_time_format_is_what_targets_md_says(tmp_path: Path) -> None:
    row = next(line for line in (REPO / "docs/targets.md").read_text().splitlines() if line.startswith("| `time` |"))
    assert "`04:00:00`" in row and "`1-12:00:00`" in row, row
    for time, written in (("4h", "04:00:00"), ("36h", "1-12:00:00")):
        spec = tmp_path / f"t{time}.spark"
        spec.write_text(
            "deployment muse {\n  model = muse-spark-open\n  accelerator = b200\n"
            f"  target slurm {{ time = {time} }}\n}}\n",
            encoding="utf-8",
        )
        out = tmp_path / f"out-{time}"
        built = subprocess.run(
            [sys.executable, "-m", "spark_dsl", "build", spec.name, "-o", out.name],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert built.returncode == 0, built.stdout + built.stderr
        assert f"#SBATCH --time={written}\n" in (out / "muse" / "job.sbatch").read_text()
