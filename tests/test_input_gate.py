"""Issue 31's read gate through the real `spark` command: what spark reads stays in the project,
and no file, however deep, ends in a traceback.

D2: `root = "../../.."` let imports name any file of the machine, and SPK001 quoted an import of
`/proc/self/environ` (the CI job's environment) into the log. D3: a spark.toml or pyproject.toml
that is a symbolic link out of the project was followed, and SPK603 quoted its target. D6, D7: a
TOML or JSON file nested 100,000 levels deep was a RecursionError traceback (exit 1, exit 3).
D10: SPK542's help offered the very directive it refused.
"""

from __future__ import annotations

import json
from pathlib import Path

from tests.cli_helpers import CLEAN, PROFILE, SPEC, spark, write

SECRET = "TOPSECRET-31"
DEEP = 100_000


def no_traceback(result: object) -> str:
    out: str = result.stdout + result.stderr  # type: ignore[attr-defined]
    assert "Traceback" not in out and "internal error" not in out, out[-3000:]
    return out


def test_root_cannot_climb_above_the_repository(tmp_path: Path) -> None:
    outside = tmp_path / "secret.spark"
    outside.write_text(f"{SECRET} first line\n")
    repo = write(
        tmp_path / "repo",
        {
            ".git": "",
            "deploy/spark.toml": 'root = "../.."\n',
            "deploy/a.spark": 'import "../../secret.spark"\n' + CLEAN.format(name="a"),
        },
    )
    result = spark("check", "deploy/a.spark", cwd=repo)
    out = no_traceback(result)
    assert result.returncode == 1
    assert SECRET not in out
    assert '`root = "../.."` climbs above the repository root .' in out
    assert 'set `root = ".."` (the repository root) or a folder below it' in out
    assert 'import "../../secret.spark" leaves the project root' in out


def test_root_cannot_climb_at_all_without_a_repository(tmp_path: Path) -> None:
    (tmp_path / "environ.spark").write_text(f"{SECRET}\n")
    project = write(
        tmp_path / "p",
        {"spark.toml": 'root = "../../../../../../../../../.."\n', "a.spark": 'import "/proc/self/environ"\n'},
    )
    result = spark("check", "a.spark", cwd=project, env={"LEAK": SECRET})
    out = no_traceback(result)
    assert SECRET not in out
    assert "no repository (`.git`) above it lets a root go higher" in out
    assert "remove `root`" in out
    assert 'import "/proc/self/environ" leaves the project root' in out


def test_root_option_cannot_be_the_file_system_root(tmp_path: Path) -> None:
    write(tmp_path, {"a.spark": 'import "/proc/self/environ"\n'})
    result = spark("check", "--root", "/", "a.spark", cwd=tmp_path, env={"LEAK": SECRET})
    out = no_traceback(result)
    assert result.returncode == 2 and SECRET not in out
    assert "--root / is the file system's root" in out


def test_a_file_that_is_no_spec_is_never_quoted(tmp_path: Path) -> None:
    write(tmp_path, {".git": "", ".env": f"TOKEN={SECRET}\n", "a.spark": 'import ".env"\n' + CLEAN.format(name="a")})
    result = spark("check", "a.spark", cwd=tmp_path)
    out = no_traceback(result)
    assert result.returncode == 1 and SECRET not in out
    assert 'cannot read imported file ".env": it is not a `.spark` file' in out


def test_a_configuration_linked_from_outside_is_not_read(tmp_path: Path) -> None:
    (tmp_path / "outside.toml").write_text(f"{SECRET} = = =\n")
    for name, expect_error in (("spark.toml", True), ("pyproject.toml", False)):
        repo = write(tmp_path / name, {".git": "", "a.spark": CLEAN.format(name="a")})
        (repo / name).symlink_to(tmp_path / "outside.toml")
        result = spark("check", "a.spark", cwd=repo)
        out = no_traceback(result)
        assert SECRET not in out, name
        if expect_error:
            assert result.returncode == 1
            assert "spark.toml is a symbolic link to a file outside the project's repository" in out
        else:  # a linked pyproject.toml is no marker: the repository root (.git) decides, cleanly
            assert result.returncode == 0, out


def test_deep_toml_is_a_diagnostic(tmp_path: Path) -> None:
    # A pyproject.toml without [tool.spark] in a folder above the spec: root discovery parses it.
    above = write(tmp_path / "a", {"pyproject.toml": "x = " + "[" * DEEP + "\n", "b/c.spark": CLEAN.format(name="c")})
    result = spark("check", "b/c.spark", cwd=above)
    no_traceback(result)
    assert result.returncode == 0
    deep = write(tmp_path / "d", {"spark.toml": "include = " + "[" * DEEP + "\n", "c.spark": CLEAN.format(name="c")})
    for command in (["check"], ["build", "-o", "out"], ["fmt", "--check"]):
        result = spark(*command, "c.spark", cwd=deep)
        out = no_traceback(result)
        if command[0] != "fmt":  # fmt reads no settings for a named file
            assert result.returncode == 1, (command, out)
            assert "error[SPK603]: spark.toml cannot be read: it nests arrays or tables more than 64 levels" in out


def test_deep_config_json_is_a_usage_error(tmp_path: Path) -> None:
    model = tmp_path / "model"
    model.mkdir()
    (model / "config.json").write_text('{"a": ' + "[" * DEEP)
    result = spark("model", "import", "model", cwd=tmp_path)
    out = no_traceback(result)
    assert result.returncode == 2
    assert "model-import/too-deep: cannot read model/config.json: it nests arrays or tables more than 64" in out


def test_a_deep_manifest_is_an_untrusted_manifest(tmp_path: Path) -> None:
    write(tmp_path, {"a.spark": CLEAN.format(name="a"), "out/manifest.json": "[" * DEEP})
    result = spark("build", "a.spark", "-o", "out", cwd=tmp_path)
    out = no_traceback(result)
    assert result.returncode == 1
    assert "out/manifest.json cannot be read: it nests arrays or tables more than 64 levels deep" in out


def test_spk542_help_never_offers_the_refused_directive(tmp_path: Path) -> None:
    """D10: a known option with a value sbatch cannot read was offered back as its own fix."""
    spec = CLEAN.format(name="a").replace(
        "}\n", '  target slurm {\n    extra_directives = ["--mail-type=END FAIL"]\n  }\n}\n'
    )
    write(tmp_path, {"a.spark": spec})
    result = spark("check", "--format", "json", "a.spark", cwd=tmp_path)
    found = [d for d in json.loads(result.stdout)["diagnostics"] if d["code"] == "SPK542"]
    assert len(found) == 1, result.stdout
    assert "--mail-type=END FAIL" not in found[0]["help"]
    assert found[0]["help"] == "write `--mail-type=VALUE` with a VALUE of no whitespace, quotes or backslashes"
    # The help, applied, fixes it.
    write(tmp_path, {"a.spark": spec.replace("END FAIL", "END")})
    assert "SPK542" not in spark("check", "a.spark", cwd=tmp_path).stdout


def test_imports_inside_the_repository_still_work(tmp_path: Path) -> None:
    repo = write(
        tmp_path,
        {
            ".git": "",
            "deploy/spark.toml": 'root = ".."\n',
            "shared.spark": PROFILE,
            "deploy/a.spark": SPEC.format(name="a", accelerator="b200").replace("../shared", "../shared"),
        },
    )
    result = spark("check", "deploy/a.spark", cwd=repo)
    assert result.returncode == 0, result.stdout + result.stderr


def test_a_spec_without_a_project_at_the_top_imports_nothing(tmp_path: Path) -> None:
    """Standard input named `/x.spark` has `/` as its root: every file of the machine was inside it."""
    (tmp_path / "secret.spark").write_text(f"{SECRET} = 1\n")
    text = f'import "{str(tmp_path / "secret.spark").lstrip("/")}"\n'
    result = spark("check", "-", "--stdin-filename", "/x.spark", cwd=tmp_path, stdin=text)
    out = no_traceback(result)
    assert result.returncode == 1 and SECRET not in out
    assert "leaves the project root" in out and "give the spec a project" in out


def test_model_import_follows_no_link_out_of_the_model(tmp_path: Path) -> None:
    """A config.json linked to a JSON file elsewhere was read, and its `_name_or_path` printed."""
    source = Path(__file__).parent / "data/hf_configs/llama-3.1-8b"
    config = json.loads((source / "config.json").read_text())
    (tmp_path / "elsewhere.json").write_text(json.dumps({**config, "_name_or_path": f"{SECRET}/llama"}))
    model = tmp_path / "project/model"
    model.mkdir(parents=True)
    (model / "model.safetensors.index.json").write_bytes((source / "model.safetensors.index.json").read_bytes())
    (model / "config.json").symlink_to(tmp_path / "elsewhere.json")
    result = spark("model", "import", "model", cwd=tmp_path / "project")
    out = no_traceback(result)
    assert result.returncode == 2 and SECRET not in out
    assert "model-import/outside-model: model/config.json is a symbolic link out of the model's folder" in out
