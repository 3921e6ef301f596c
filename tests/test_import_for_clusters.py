"""Issue 32, items 4 and 5: a model imported for a cluster, and a gated model, through the real
`spark` command.

- a folder import names the Hub id with `--repo`; without it, the machine's absolute path reaches
  the block, and a target that runs elsewhere (each target's `elsewhere`, from the target table)
  warns (SPK515);
- float32 and float16 checkpoints import, sized as vLLM serves them (16 bits);
- `parameters` and `active_parameters` are in the block, and `spark explain` shows them;
- `-o models/x.spark` makes `models/` inside the project, never outside it;
- a gated repository (the catalog's `gated`, cited) deployed without `hf_token` warns (SPK516).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from cli_helpers import spark

CONFIGS = Path(__file__).resolve().parent / "data" / "hf_configs"
LLAMA = CONFIGS / "llama-3.1-8b"
# Llama 3.1 8B's model.safetensors.index.json: metadata.total_size, bytes of its BF16 weights.
LLAMA_BYTES = 16_060_522_496


def _lines(text: str) -> list[str]:
    return [" ".join(line.split()) for line in text.splitlines()]


def _repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    (root / ".git").mkdir(parents=True)
    return root


def _deployment(target: str, extra: str = "") -> str:
    return (
        'import "models/llama.spark"\n\n'
        f"deployment llama {{\n  model       = my-llama\n  accelerator = h100\n{extra}  target {target} {{}}\n}}\n"
    )


# --------------------------------------------------------------------------- --repo and SPK515


def test_a_folder_import_names_the_hub_id_given_with_repo(tmp_path: Path) -> None:
    done = spark("model", "import", str(LLAMA), "--name", "my-llama", "--repo", "meta-llama/Llama-3.1-8B-Instruct",
                 cwd=tmp_path)  # fmt: skip
    assert done.returncode == 0, done.stderr
    lines = _lines(done.stdout)
    assert 'repository = "meta-llama/Llama-3.1-8B-Instruct" # --repo' in lines
    assert 'display_name = "Llama-3.1-8B-Instruct" # the repository\'s name' in lines
    assert str(LLAMA) not in done.stdout.split("\n", 1)[1]  # only the header says where it was read


def test_a_repo_that_is_no_repository_id_is_a_usage_error(tmp_path: Path) -> None:
    done = spark("model", "import", str(LLAMA), "--name", "my-llama", "--repo", "/home/me/llama", cwd=tmp_path)
    assert done.returncode == 2 and done.stdout == ""
    assert 'model-import/bad-repo: --repo "/home/me/llama" is not a Hugging Face repository id' in done.stderr
    assert "help: pass the id the Hub shows for the model" in done.stderr


def _elsewhere() -> list[str]:
    from spark_dsl.targets.registry import elsewhere_targets

    return [t.kind for t in elsewhere_targets()]


def test_the_targets_that_run_elsewhere_are_launch_targets_but_not_the_shell() -> None:
    """Each target declares it (`Target.elsewhere`); the shell script runs on this machine."""
    from spark_dsl.targets.registry import find

    assert _elsewhere() and "shell" not in _elsewhere()
    assert not any(target.client for target in map(find, _elsewhere()) if target is not None)


@pytest.mark.parametrize("target", _elsewhere())
def test_a_cluster_target_serving_this_machines_folder_warns(tmp_path: Path, target: str) -> None:
    root = _repo(tmp_path)
    folder = tmp_path / "checkpoints" / "llama"
    shutil.copytree(LLAMA, folder)
    written = spark("model", "import", str(folder), "--name", "my-llama", "-o", "models/llama.spark", cwd=root)
    assert written.returncode == 0, written.stderr
    assert f'repository = "{folder}"' in (root / "models" / "llama.spark").read_text()
    (root / "spec.spark").write_text(_deployment(target, '  runtime {\n    hf_token = secret("hf")\n  }\n'))
    checked = spark("check", "spec.spark", cwd=root)
    assert checked.returncode == 0, checked.stdout  # a warning
    assert (
        f'warning[SPK515]: model `my-llama` serves "{folder}", a folder of the machine that wrote the spec, '
        f"but `target {target}` runs elsewhere"
    ) in checked.stdout
    assert " --> spec.spark:4:17" in checked.stdout  # at the deployment's `model = my-llama`
    assert "help: name the Hub repository in the model's checkpoint" in checked.stdout
    assert "checked 1 file: 1 warning" in checked.stdout
    # The help, applied (the Hub id), leaves nothing; a target on this machine never warned.
    again = spark("model", "import", str(folder), "--name", "my-llama", "--repo", "meta-llama/Llama-3.1-8B",
                  "-o", "models/llama.spark", cwd=root)  # fmt: skip
    assert again.returncode == 0, again.stderr
    assert "no problems" in spark("check", "spec.spark", cwd=root).stdout


def test_a_local_path_on_the_machine_that_serves_it_is_fine(tmp_path: Path) -> None:
    root = _repo(tmp_path)
    assert (
        spark("model", "import", str(LLAMA), "--name", "my-llama", "-o", "models/llama.spark", cwd=root).returncode == 0
    )
    (root / "spec.spark").write_text(_deployment("shell", '  runtime {\n    hf_token = secret("hf")\n  }\n'))
    checked = spark("check", "spec.spark", cwd=root)
    assert (checked.returncode, checked.stdout.splitlines()[-1]) == (0, "checked 1 file: no problems")


# --------------------------------------------------------------------------- dtypes and parameters


def _checkpoint(tmp_path: Path, dtype: str, total: int) -> Path:
    folder = tmp_path / dtype
    folder.mkdir()
    config = json.loads((LLAMA / "config.json").read_text())
    (folder / "config.json").write_text(json.dumps({**config, "torch_dtype": dtype}))
    (folder / "model.safetensors.index.json").write_text(json.dumps({"metadata": {"total_size": total}}))
    return folder


def test_float32_and_float16_checkpoints_import_sized_as_vllm_serves_them(tmp_path: Path) -> None:
    # The same 8,030,261,248 weights stored in 4 bytes (float32) and in 2 (float16). vLLM 0.33.0's
    # `--dtype auto` serves float32 as bfloat16 (`_resolve_auto_dtype`: "Downcast for float32
    # models" to the platform's first supported dtype) and float16 as it is: 2 bytes each.
    weights = LLAMA_BYTES // 2
    f32 = spark("model", "import", str(_checkpoint(tmp_path, "float32", weights * 4)), "--name", "f32", cwd=tmp_path)
    assert f32.returncode == 0, f32.stderr
    lines = _lines(f32.stdout)
    index = "model.safetensors.index.json: metadata.total_size"
    assert (
        "checkpoint bf16 { # config.json: torch_dtype (float32, served as bfloat16 by vLLM's --dtype auto: "
        "bf16, half the stored bytes)"
    ) in lines
    assert f"size = {LLAMA_BYTES}B # {index} x 2/4 (served in 16 bits)" in lines
    assert f"parameters = {weights} # {index} / 4 bytes a stored weight" in lines
    f16 = spark("model", "import", str(_checkpoint(tmp_path, "float16", LLAMA_BYTES)), "--name", "f16", cwd=tmp_path)
    assert f16.returncode == 0, f16.stderr
    lines = _lines(f16.stdout)
    assert "checkpoint bf16 { # config.json: torch_dtype (float16: the bytes of bf16)" in lines
    assert f"size = {LLAMA_BYTES}B # {index}" in lines
    assert f"parameters = {weights} # {index} / 2 bytes a stored weight" in lines


def test_a_float32_import_plans_the_served_weights(tmp_path: Path) -> None:
    root = _repo(tmp_path)
    folder = _checkpoint(tmp_path, "float32", LLAMA_BYTES * 2)
    written = spark("model", "import", str(folder), "--name", "my-llama", "--repo", "acme/llama-f32",
                    "-o", "models/llama.spark", cwd=root)  # fmt: skip
    assert written.returncode == 0, written.stderr
    (root / "spec.spark").write_text(_deployment("shell"))
    planned = spark("plan", "spec.spark", "--format", "json", cwd=root)
    assert planned.returncode == 0, planned.stdout + planned.stderr
    (plan,) = json.loads(planned.stdout)["deployments"]
    assert plan["capacity"]["weights_gb"] == LLAMA_BYTES / 1e9  # not the 32.12 GB on disk


@pytest.mark.parametrize(
    ("fixture", "total", "active"),
    [
        # Dense: every parameter is active; total_size 16,060,522,496 B / 2 B.
        ("llama-3.1-8b", 8_030_261_248, 8_030_261_248),
        # 61,064,245,248 B / 2 = 30,532,122,624; less (128 - 8) x 3 x 2048 x 768 x 48 layers =
        # 27,179,089,920 routed-expert weights a token skips: 3,353,032,704 (Qwen: "3.3B activated").
        ("qwen3-30b-a3b", 30_532_122_624, 30_532_122_624 - 120 * 3 * 2048 * 768 * 48),
        # 93,405,585,408 B / 2 = 46,702,792,704; less (8 - 2) x 3 x 4096 x 14336 x 32 layers:
        # 12,879,925,248 (Mistral AI: "12.9B active").
        ("mixtral-8x7b-v0.1", 46_702_792_704, 46_702_792_704 - 6 * 3 * 4096 * 14336 * 32),
    ],
)
def test_parameters_and_active_parameters_are_recorded(tmp_path: Path, fixture: str, total: int, active: int) -> None:
    done = spark("model", "import", str(CONFIGS / fixture), "--name", "m", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    values = {
        line.split(" = ")[0]: line.split(" = ")[1].split(" #")[0] for line in _lines(done.stdout) if " = " in line
    }
    assert (int(values["parameters"]), int(values["active_parameters"])) == (total, active)


def test_explain_shows_the_declared_parameters(tmp_path: Path) -> None:
    root = _repo(tmp_path)
    args = ("model", "import", str(CONFIGS / "qwen3-30b-a3b"), "--name", "my-qwen", "-o", "models/qwen.spark")
    assert spark(*args, cwd=root).returncode == 0
    explained = spark("explain", "my-qwen", cwd=root)
    assert explained.returncode == 0, explained.stderr
    assert "parameters:     30.5321B total, 3.35303B active" in explained.stdout


# --------------------------------------------------------------------------- -o's folders


def test_o_creates_missing_folders_inside_the_project(tmp_path: Path) -> None:
    root = _repo(tmp_path)
    (root / "deploy").mkdir()
    done = spark(
        "model", "import", str(LLAMA), "--name", "my-llama", "-o", "models/llama/8b.spark", cwd=root / "deploy"
    )
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")
    assert (root / "deploy" / "models" / "llama" / "8b.spark").read_text().startswith("# Imported by")
    # Up and out of the folder it was run in, but inside the repository: still the project.
    up = spark("model", "import", str(LLAMA), "--name", "my-llama", "-o", "../shared/8b.spark", cwd=root / "deploy")
    assert up.returncode == 2 and "climbs with `..`" in up.stderr and not (root / "shared").exists()


def test_o_never_creates_folders_outside_the_project(tmp_path: Path) -> None:
    root = _repo(tmp_path)
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (root / "link").symlink_to(outside)
    for target in (str(tmp_path / "elsewhere" / "new" / "x.spark"), "link/new/x.spark"):
        done = spark("model", "import", str(LLAMA), "--name", "my-llama", "-o", target, cwd=root)
        assert done.returncode == 2, target
        assert "spark: error: model-import/refused-output: refusing to write" in done.stderr
        assert "spark creates folders only inside the project" in done.stderr
        assert "nothing was written" in done.stderr
    assert list(outside.iterdir()) == []


def test_the_models_md_example_works_in_a_fresh_repository(tmp_path: Path) -> None:
    # docs/models.md: `spark model import meta-llama/Llama-3.1-8B-Instruct --name my-llama -o
    # models/llama.spark`, from a Hugging Face cache that holds the repository.
    cache = tmp_path / "hub"
    snapshot = cache / "models--meta-llama--Llama-3.1-8B-Instruct" / "snapshots" / "abc123"
    shutil.copytree(LLAMA, snapshot)
    (snapshot.parent.parent / "refs").mkdir()
    (snapshot.parent.parent / "refs" / "main").write_text("abc123")
    root = _repo(tmp_path)
    command = "spark model import meta-llama/Llama-3.1-8B-Instruct --name my-llama -o models/llama.spark"
    docs = (Path(__file__).resolve().parents[1] / "docs" / "models.md").read_text()
    assert command in docs
    done = spark(*command.split()[1:], cwd=root, env={"HF_HUB_CACHE": str(cache)})
    assert (done.returncode, done.stderr) == (0, "")
    assert 'repository = "meta-llama/Llama-3.1-8B-Instruct"' in (root / "models" / "llama.spark").read_text()


# --------------------------------------------------------------------------- gated models


def test_the_catalogs_meta_llama_repositories_are_gated_and_cited() -> None:
    from spark_dsl import catalog

    meta = [
        (model, label, ckpt)
        for model in catalog.load().models.values()
        for label, ckpt in model.checkpoints.items()
        if ckpt.repository.startswith("meta-llama/")
    ]
    assert meta
    for model, label, ckpt in meta:
        assert ckpt.gated, (model.id, label)
        assert model.sources[f"checkpoints.{label}.gated"] == f"https://huggingface.co/{ckpt.repository}"


def test_a_gated_model_without_a_token_warns(tmp_path: Path) -> None:
    root = _repo(tmp_path)
    body = (
        "deployment llama {{\n  model       = llama-3-1-8b\n  accelerator = h100\n{extra}  target kubernetes {{}}\n}}\n"
    )
    (root / "spec.spark").write_text(body.format(extra=""))
    checked = spark("check", "spec.spark", cwd=root)
    assert checked.returncode == 0, checked.stdout
    assert (
        'warning[SPK516]: model `llama-3-1-8b` downloads "meta-llama/Llama-3.1-8B", a gated Hugging Face '
        "repository, and the deployment gives no `runtime.hf_token`"
    ) in checked.stdout
    assert " --> spec.spark:2:17" in checked.stdout
    assert 'help: add `runtime { hf_token = secret("hf-token") }`' in checked.stdout
    denied = spark("check", "spec.spark", "--deny", "warnings", cwd=root)
    assert denied.returncode == 1
    # The help, applied; and weights the spec names by path are not downloaded.
    for extra in (
        '  runtime {\n    hf_token = secret("hf-token")\n  }\n',
        '  runtime {\n    model_path = "/models/llama"\n  }\n',
    ):
        (root / "spec.spark").write_text(body.format(extra=extra))
        assert spark("check", "spec.spark", cwd=root).stdout.splitlines()[-1] == "checked 1 file: no problems"


def test_an_open_model_needs_no_token(tmp_path: Path) -> None:
    root = _repo(tmp_path)
    (root / "spec.spark").write_text("deployment m {\n  model       = mistral-7b-v0-1\n  accelerator = h100\n}\n")
    assert "SPK516" not in spark("check", "spec.spark", cwd=root).stdout
