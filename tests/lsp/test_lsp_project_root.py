"""The language server finds a file's project as `spark check` does: same root, same settings,
whatever folder the editor has open."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_helpers import WARNING, amd_repository, spark, write
from lsp_editor import Editor

from spark_dsl.lsp.documents import project_root
from spark_dsl.project import Projects

# The tests share one server (conftest.py), whose client runs in the session's event loop.
pytestmark = pytest.mark.asyncio(loop_scope="session")

SPEC = "deploy/specs/amd/mi355x.spark"


@pytest.mark.parametrize(
    ("marker", "codes"),
    [
        ({}, ["SPK112", "SPK115"]),  # no marker: the file's own folder is the root
        ({"deploy/spark.toml": ""}, []),
        ({"deploy/.git": ""}, []),
        ({"deploy/specs/amd/spark.toml": ""}, ["SPK112", "SPK115"]),
    ],
    ids=["none", "spark.toml-above", "git-above", "spark.toml-beside"],
)
async def test_editor_and_command_line_agree_on_the_root(
    editor: Editor, workspace: Path, marker: dict[str, str], codes: list[str]
) -> None:
    # The editor has a folder open above `workspace` and every marker: the server must not use it as the root.
    amd = amd_repository(workspace, marker)
    in_editor = sorted(str(d.code) for d in await editor.open(SPEC))
    r = spark("check", "mi355x.spark", "--format", "json", cwd=amd)
    on_command_line = sorted(d["code"] for d in json.loads(r.stdout)["diagnostics"])
    assert in_editor == on_command_line == codes
    assert project_root(workspace / SPEC) == Projects().of(workspace / SPEC).root


async def test_the_editor_applies_the_project_settings(editor: Editor, workspace: Path) -> None:
    write(workspace, {"team/spark.toml": 'ignore = ["SPK903"]\n', "team/a.spark": WARNING.format(name="a")})
    assert await editor.open("team/a.spark") == []
    assert spark("check", "a.spark", cwd=workspace / "team").stdout == "checked 1 file: no problems\n"
    write(workspace, {"loose/a.spark": WARNING.format(name="a")})
    assert [d.code for d in await editor.open("loose/a.spark")] == ["SPK903"]
