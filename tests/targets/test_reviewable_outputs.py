"""The committed outputs read as a reviewer reads a diff (issue 33, item 6): targets/ is committed so
that every change shows line by line, so no line runs over 200 characters where its format allows a
break. The dashboard's JSON is indented, in a literal block; a script inside YAML (`sh -c`) is a
literal block of its lines and passes ShellCheck like the script files (test_target_validators.py);
header lists are wrapped. yamllint runs with the project's rules and `line-length: {max: 200}`.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
import validators as v
import yaml
from target_helpers import TARGETS, kubernetes_expand

LINE_LIMIT = 200
# Header lines (common.Job.header) are wrapped at 100 characters, after `# `.
HEADER_LIMIT = 100 + len("# ")
SHELLS = ("sh", "bash", "/bin/sh", "/bin/bash")


def files() -> list[Path]:
    found = sorted(p for p in TARGETS.rglob("*") if p.is_file())
    assert len(found) >= 30  # every deployment's outputs, so no check below passes vacuously
    return found


def yaml_files() -> list[Path]:
    return [p for p in files() if p.suffix == ".yaml"]


def breakable(line: str) -> bool:
    """Whether a line holds a break: a space after its indentation, comment mark or list dash (as
    yamllint's allow-non-breakable-words counts; one long word, a base64 image, has none)."""
    text = line.lstrip(" ").lstrip("#").lstrip("- ")
    return " " in text


def test_no_committed_line_runs_over_200_characters_where_it_can_break() -> None:
    over = [
        f"{path.relative_to(TARGETS)}:{number}: {len(line)} characters"
        for path in files()
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if len(line) > LINE_LIMIT and breakable(line)
    ]
    assert over == []


def test_every_committed_yaml_passes_yamllint_with_lines_of_200(tmp_path: Path) -> None:
    config = yaml.safe_load(v.YAMLLINT_CONFIG.read_text())
    # A long one-word value (`key: word`) is no exception: a block scalar breaks it.
    config["rules"]["line-length"] = {
        "max": LINE_LIMIT,
        "allow-non-breakable-words": True,
        "allow-non-breakable-inline-mappings": False,
    }
    strict = tmp_path / "yamllint-200.yaml"
    strict.write_text(yaml.safe_dump(config))
    assert yaml_files()
    v.yamllint(TARGETS, strict).check()  # yamllint walks the folder's *.yaml files


def header(path: Path) -> list[str]:
    """The comment lines that open a file (after a shebang and `#SBATCH` lines): its header."""
    lines = path.read_text(encoding="utf-8").splitlines()
    out = []
    for line in lines[1:] if lines[0].startswith("#!") else lines:
        if line.startswith("#SBATCH"):
            continue
        if not line.startswith("#"):
            break
        out.append(line)
    return out


def test_header_lines_are_wrapped() -> None:
    long = [
        f"{path.relative_to(TARGETS)}: {line[:60]}..."
        for path in files()
        if path.suffix != ".json"
        for line in header(path)
        # `#   ` opens a line laid out already (vllm-config.yaml's command, one option a line).
        if len(line) > HEADER_LIMIT and not line.startswith("#   ") and breakable(line)
    ]
    assert long == []
    # The longest list, P/D's ports, is still whole: every port on some line of the header.
    ports = " ".join(header(TARGETS / "muse-b200-pd" / "kubernetes.yaml"))
    for port in ("8000", "8100", "8200", "5600", "5601"):
        assert f" {port} (" in ports


# ---- the texts inside the YAML ------------------------------------------------------------------


def nodes(node: yaml.Node) -> Iterator[yaml.Node]:
    yield node
    if isinstance(node, yaml.SequenceNode):
        for item in node.value:
            yield from nodes(item)
    elif isinstance(node, yaml.MappingNode):
        for key, value in node.value:
            yield from nodes(key)
            yield from nodes(value)


def shell_commands(path: Path) -> Iterator[tuple[str, yaml.ScalarNode]]:
    """(shell, script node) of every `[sh, -c, SCRIPT, ...]` list in a YAML file: a Job's or a pod's
    command, a Compose command."""
    for document in yaml.compose_all(path.read_text(encoding="utf-8")):
        for node in nodes(document):
            if not isinstance(node, yaml.SequenceNode) or len(node.value) < 3:
                continue
            shell, flag, script = node.value[:3]
            scalars = all(isinstance(n, yaml.ScalarNode) for n in (shell, flag, script))
            if scalars and shell.value in SHELLS and flag.value == "-c":
                yield shell.value.rsplit("/", 1)[-1], script


def embedded_scripts() -> list[tuple[Path, str, yaml.ScalarNode]]:
    return [(path, shell, node) for path in yaml_files() for shell, node in shell_commands(path)]


def test_scripts_inside_the_yaml_are_literal_blocks_that_pass_shellcheck(tmp_path: Path) -> None:
    scripts = embedded_scripts()
    assert {path.name for path, _, _ in scripts} >= {"smoke-job.yaml", "bench-job.yaml"}
    checks = []
    for number, (path, shell, node) in enumerate(scripts):
        assert node.style == "|", f"{path.relative_to(TARGETS)}:{node.start_mark.line + 1}"
        assert "\n" in node.value  # one statement a line
        # What the container runs: the kubelet's `$$` is `$` (Compose's too); no `$(NAME)` is set here.
        text = kubernetes_expand(node.value, {})
        script = tmp_path / f"{number}-{path.parent.name}-{path.stem}.sh"
        script.write_text(text if text.startswith("#!") else f"#!/bin/{shell}\n{text}")
        checks.append(v.shellcheck(script, shell=shell))
    v.check_all(checks)


def test_the_dashboard_is_indented_json_in_a_literal_block() -> None:
    path = TARGETS / "muse-b200-prod" / "kubernetes.yaml"
    boards = [
        (key, value)
        for document in yaml.compose_all(path.read_text(encoding="utf-8"))
        for node in nodes(document)
        if isinstance(node, yaml.MappingNode)
        for key, value in node.value
        if key.value.endswith(".json")
    ]
    assert len(boards) == 1
    _, node = boards[0]
    assert node.style == "|"
    board = json.loads(node.value)
    # Reads back as exactly the indented JSON: one key or item a line.
    assert node.value == json.dumps(board, indent=2) + "\n"
    assert board["panels"]


@pytest.mark.parametrize(
    "value",
    ["muse\nkind: Secret", "trailing space ", "tab\there", "nel\x85line", "bidi\u202eoverride", "a\r\nb"],
)
def test_a_block_holds_only_what_reads_back_exactly(value: str) -> None:
    """The writer's literal block for the generator's own texts (yaml_text.BlockText) falls back to
    quoting for a text a block would change: a hostile value inside a script still reads back."""
    from spark_dsl.targets import yaml_text

    script = yaml_text.BlockText(f"set -eu\necho '{value}'\n")
    written = yaml_text.document({"command": ["sh", "-c", script]}, ["header"])
    assert yaml.safe_load(written) == {"command": ["sh", "-c", str(script)]}
    assert ("- |\n" in written) == yaml_text.block_fits(script)
