"""`spark build`: what it writes, what it refuses, atomic folders, the manifest and `--check`."""

from __future__ import annotations

import errno
import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from target_helpers import REPO

from spark_dsl import cli
from spark_dsl.targets import build as build_module
from spark_dsl.targets import registry as target_table
from spark_dsl.targets import transaction

ONE_NODE = """
deployment {name} {{
  model       = muse-spark-open
  accelerator = b200
{extra}
}}
"""
TWO_NODES = """
deployment {name} {{
  model       = muse-spark-open
  accelerator = b200
  nodes       = 2
  parallel    = dp(2) + tp + ep
{extra}
}}
"""


CHANGED_ALPHA = "  max_num_seqs = 64\n  target shell {}\n  target compose {}"


def spec(template: str, name: str, extra: str = "  target shell {}") -> str:
    return template.format(name=name, extra=extra)


def tree(folder: Path) -> dict[str, bytes]:
    """Every file below a folder, by relative path."""
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


@pytest.fixture
def repo(project):
    return project(
        {
            "a.spark": spec(ONE_NODE, "alpha", "  target shell {}\n  target compose {}"),
            "b.spark": spec(ONE_NODE, "beta", "  target kubernetes {}"),
        }
    )


def invoke(folder: Path, *args: str):
    """The CLI in this process (so tests can replace parts of it), run inside `folder`."""
    old = Path.cwd()
    os.chdir(folder)
    try:
        return CliRunner().invoke(cli.main, list(args), catch_exceptions=False)
    finally:
        os.chdir(old)


def test_build_writes_each_declared_target_and_a_manifest(repo: Path, spark) -> None:
    r = spark("build", ".", "-o", "out", cwd=repo)
    assert r.returncode == 0, r.stderr
    assert sorted(tree(repo / "out")) == [
        "alpha/compose.yaml",
        "alpha/serve.sh",
        "beta/kubernetes.yaml",
        "manifest.json",
    ]
    manifest = json.loads((repo / "out/manifest.json").read_text())

    def sha(rel: str) -> str:
        return hashlib.sha256((repo / "out" / rel).read_bytes()).hexdigest()

    assert manifest["version"] == 2
    assert manifest["deployments"] == [  # sources relative to the output folder, files with their hashes
        {
            "name": "alpha",
            "source": "../a.spark",
            "files": {"serve.sh": sha("alpha/serve.sh"), "compose.yaml": sha("alpha/compose.yaml")},
        },
        {"name": "beta", "source": "../b.spark", "files": {"kubernetes.yaml": sha("beta/kubernetes.yaml")}},
    ]
    assert "wrote out/alpha/ (serve.sh, compose.yaml)" in r.stderr
    assert os.access(repo / "out/alpha/serve.sh", os.X_OK)


def test_default_output_folder_is_build(repo: Path, spark) -> None:
    assert spark("build", "a.spark", cwd=repo).returncode == 0
    assert (repo / "build/alpha/serve.sh").is_file()


def test_a_second_identical_build_changes_nothing(repo: Path, spark) -> None:
    spark("build", ".", "-o", "out", cwd=repo)
    stamps = {p: p.stat().st_mtime_ns for p in (repo / "out").rglob("*")}
    r = spark("build", ".", "-o", "out", cwd=repo)
    assert r.returncode == 0 and "wrote" not in r.stderr
    assert {p: p.stat().st_mtime_ns for p in (repo / "out").rglob("*")} == stamps


def test_forced_targets_replace_the_declared_ones(repo: Path, spark) -> None:
    r = spark("build", ".", "-o", "out", "-t", "slurm", "-t", "vllm-config", cwd=repo)
    assert r.returncode == 0, r.stdout
    assert sorted(tree(repo / "out")) == [
        "alpha/job.sbatch",
        "alpha/vllm-config.yaml",
        "beta/job.sbatch",
        "beta/vllm-config.yaml",
        "manifest.json",
    ]


def test_unknown_forced_target_is_a_usage_error(repo: Path, spark) -> None:
    r = spark("build", ".", "-t", "helm", cwd=repo)
    assert r.returncode == 2 and "unknown target 'helm'" in r.stderr
    assert not (repo / "build").exists()


def test_nothing_to_build_is_an_info_and_writes_nothing(project, spark) -> None:
    folder = project({"a.spark": spec(ONE_NODE, "alpha", "")})
    r = spark("build", ".", "-o", "out", "--format", "json", cwd=folder)
    assert r.returncode == 0
    (diagnostic,) = json.loads(r.stdout)["diagnostics"]
    assert (diagnostic["code"], diagnostic["severity"], diagnostic["line"]) == ("SPK513", "info", 2)
    assert tree(folder / "out") == {
        "manifest.json": b'{\n  "generator": "spark build",\n  "version": 2,\n  "deployments": []\n}\n'
    }


def test_nothing_to_build_can_be_silenced(project, spark) -> None:
    folder = project({"a.spark": "# spark: ignore[SPK513]\n" + spec(ONE_NODE, "alpha", "").lstrip()})
    r = spark("build", ".", "-o", "out", cwd=folder)
    assert r.returncode == 0 and "SPK513" not in r.stdout


def test_compose_refuses_a_multi_node_deployment(project, spark) -> None:
    folder = project({"dp.spark": spec(TWO_NODES, "dp", "  target shell {}\n  target compose {}")})
    r = spark("build", ".", "-o", "out", cwd=folder)
    assert r.returncode == 1
    assert "error[SPK501]: `target compose` cannot run `dp`: it needs 2 nodes" in r.stdout
    assert not (folder / "out/dp").exists()


@pytest.mark.parametrize("target", ["compose", "vllm-config"])
def test_a_forced_single_host_target_fails_at_the_deployment_name(project, spark, target: str) -> None:
    folder = project({"dp.spark": spec(TWO_NODES, "dp")})
    r = spark("build", ".", "-o", "out", "-t", "shell", "-t", target, "--format", "json", cwd=folder)
    assert r.returncode == 1
    # The one error (SPK560 also warns: the expert all-to-all crosses the nodes without a fabric).
    (diagnostic,) = [d for d in json.loads(r.stdout)["diagnostics"] if d["severity"] == "error"]
    assert diagnostic["code"] == "SPK501"
    assert (diagnostic["line"], diagnostic["column"]) == (2, 12)  # the name after `deployment`
    assert diagnostic["message"].startswith(f"target `{target}` cannot build `dp`")
    assert not (folder / "out/dp").exists()  # not even the shell script


def test_forced_kubernetes_with_an_env_secret_is_spk505(project, spark) -> None:
    extra = '  runtime {\n    hf_token = env("HF_TOKEN")\n  }'
    folder = project({"a.spark": spec(ONE_NODE, "alpha", extra)})
    r = spark("build", ".", "-o", "out", "-t", "kubernetes", "--format", "json", cwd=folder)
    assert r.returncode == 1
    assert [d["code"] for d in json.loads(r.stdout)["diagnostics"]] == ["SPK505"]


def _env_secret(path: str) -> str:
    """The body lines that set the secret key `block.key` from a host variable."""
    block, key = path.split(".")
    return f'  {block} {{\n    {key} = env("SPARK_SECRET")\n  }}'


# Each target whose pods read secrets, with each secret it reads (its declaration's `pod_secrets`).
POD_SECRETS = [(t.kind, _env_secret(s)) for t in target_table.all_targets() for s in t.pod_secrets]


@pytest.mark.parametrize(("forced", "secret"), POD_SECRETS)
def test_a_forced_pod_target_reports_spk505_at_the_secret_and_writes_nothing(project, spark, forced, secret) -> None:
    """SPK505 is the rules' (as every check is), for a target forced with -t as for a declared one:
    located at the env(...) that a pod cannot read, with its fix, and the deployment keeps its
    folder. The target modules raised it before, unlocated, and a smoke or bench Job's only then."""
    folder = project({"a.spark": spec(ONE_NODE, "alpha", secret)})
    r = spark("build", ".", "-o", "out", "-t", forced, "--format", "json", cwd=folder)
    assert r.returncode == 1, r.stdout
    (found,) = json.loads(r.stdout)["diagnostics"]
    assert found["code"] == "SPK505"
    line = spec(ONE_NODE, "alpha", secret).splitlines()[found["line"] - 1]
    assert line[found["column"] - 1 :].startswith("env("), (line, found)  # at the env(...) itself
    assert "secret(" in found["help"]
    assert not (folder / "out" / "alpha").exists()


def test_a_declared_smoke_job_with_an_env_key_is_spk505_in_spark_check(project, spark) -> None:
    """`spark check` says it, not only the build: the Job's pod cannot read the host's variable."""
    secret = '  serve {\n    api_key = env("VLLM_KEY")\n  }\n  target smoke-job {}'
    folder = project({"a.spark": spec(ONE_NODE, "alpha", secret)})
    r = spark("check", "a.spark", "--format", "json", cwd=folder)
    assert r.returncode == 1
    assert [d["code"] for d in json.loads(r.stdout)["diagnostics"]] == ["SPK505"]


def test_a_deployment_with_errors_keeps_its_previous_outputs(repo: Path, spark) -> None:
    spark("build", ".", "-o", "out", cwd=repo)
    before = tree(repo / "out")
    (repo / "a.spark").write_text(spec(ONE_NODE, "alpha", "  gpus = 3\n  target shell {}"))
    (repo / "b.spark").write_text(spec(ONE_NODE, "beta", '  target kubernetes {\n    namespace = "x"\n  }'))
    r = spark("build", ".", "-o", "out", cwd=repo)
    assert r.returncode == 1 and "error[" in r.stdout
    after = tree(repo / "out")
    assert {k: v for k, v in after.items() if k.startswith("alpha/")} == {
        k: v for k, v in before.items() if k.startswith("alpha/")
    }
    assert after["beta/kubernetes.yaml"] != before["beta/kubernetes.yaml"]  # beta is fine: rewritten
    assert "alpha" in [d["name"] for d in json.loads(after["manifest.json"])["deployments"]]


def test_a_failing_emitter_leaves_every_previous_output_intact(repo: Path, monkeypatch) -> None:
    assert invoke(repo, "build", ".", "-o", "out").exit_code == 0
    before = tree(repo / "out")
    (repo / "b.spark").write_text(spec(ONE_NODE, "beta", "  max_num_seqs = 64\n  target kubernetes {}"))
    (repo / "a.spark").write_text(
        spec(ONE_NODE, "alpha", "  max_num_seqs = 64\n  target shell {}\n  target compose {}")
    )
    calls = []
    real = build_module.render_plan

    def second_one_fails(plan, launches, kinds, source):
        calls.append(plan.name)
        if len(calls) == 2:
            raise RuntimeError("emitter crashed")
        return real(plan, launches, kinds, source)

    monkeypatch.setattr(build_module, "render_plan", second_one_fails)
    r = invoke(repo, "build", ".", "-o", "out")
    assert r.exit_code == 3
    assert "internal error" in r.output and "emitter crashed" in r.output
    assert calls == ["alpha", "beta"]
    assert tree(repo / "out") == before


def test_a_build_interrupted_while_swapping_folders_changes_nothing(repo: Path, monkeypatch) -> None:
    assert invoke(repo, "build", ".", "-o", "out").exit_code == 0
    before = tree(repo / "out")
    (repo / "a.spark").write_text(
        spec(ONE_NODE, "alpha", "  max_num_seqs = 64\n  target shell {}\n  target compose {}")
    )
    (repo / "b.spark").write_text(spec(ONE_NODE, "beta", "  max_num_seqs = 64\n  target kubernetes {}"))
    real = transaction._swap_in
    done = []

    def dies_on_the_second(out_dir, write):
        if done:
            raise KeyboardInterrupt  # what Ctrl-C does halfway through
        done.append(write.name)
        real(out_dir, write)

    monkeypatch.setattr(transaction, "_swap_in", dies_on_the_second)
    interrupted = invoke(repo, "build", ".", "-o", "out")
    assert interrupted.exit_code == 1 and "Aborted" in interrupted.output  # click's answer to Ctrl-C
    assert done == ["alpha"]
    assert tree(repo / "out") == before  # alpha swapped back: every folder and the manifest as they were
    assert [p.name for p in (repo / "out").iterdir() if p.name.startswith(".")] == []
    monkeypatch.setattr(transaction, "_swap_in", real)
    assert invoke(repo, "build", ".", "-o", "out").exit_code == 0


def test_a_build_whose_final_manifest_cannot_be_written_changes_nothing(repo: Path, monkeypatch) -> None:
    assert invoke(repo, "build", ".", "-o", "out").exit_code == 0
    before = tree(repo / "out")
    (repo / "a.spark").write_text(spec(ONE_NODE, "alpha", CHANGED_ALPHA))
    (repo / "b.spark").unlink()
    (repo / "c.spark").write_text(spec(ONE_NODE, "gamma"))  # a replace, a removal and an addition
    real = transaction.write_manifest
    texts = []

    def full_at_the_commit(out_dir, text):
        texts.append(text)
        if len(texts) == 2:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        real(out_dir, text)

    monkeypatch.setattr(transaction, "write_manifest", full_at_the_commit)
    r = invoke(repo, "build", ".", "-o", "out")
    assert r.exit_code == 1 and "error[SPK522]: cannot write out: No space left on device" in r.output
    # in-flight, then final (each handed over in pieces, which `str` joins)
    assert '"previous"' in str(texts[0]) and '"previous"' not in str(texts[1])
    assert tree(repo / "out") == before
    assert [p.name for p in (repo / "out").iterdir() if p.name.startswith(".")] == []


def test_check_lists_missing_stale_unexpected_and_retired(repo: Path, spark) -> None:
    r = spark("build", ".", "-o", "out", "--check", cwd=repo)
    assert r.returncode == 1
    assert "would change missing: out/alpha/serve.sh" in r.stdout
    assert "would change missing: out/manifest.json" in r.stdout
    assert not (repo / "out").exists()
    spark("build", ".", "-o", "out", cwd=repo)
    assert spark("build", ".", "-o", "out", "--check", cwd=repo).returncode == 0
    (repo / "out/alpha/serve.sh").write_text("edited\n")
    (repo / "out/alpha/notes.txt").write_text("mine\n")
    (repo / "b.spark").unlink()
    r = spark("build", ".", "-o", "out", "--check", cwd=repo)
    assert r.returncode == 1
    lines = [line for line in r.stdout.splitlines() if line.startswith("would change")]
    assert lines == [
        "would change stale: out/alpha/serve.sh",
        "would change unexpected: out/alpha/notes.txt",
        "would change removed: out/beta/",
        "would change stale: out/manifest.json",
    ]
    assert (repo / "out/alpha/serve.sh").read_text() == "edited\n"


def test_check_in_json_keeps_stdout_for_the_document(repo: Path, spark) -> None:
    r = spark("build", ".", "-o", "out", "--check", "--format", "json", cwd=repo)
    assert r.returncode == 1
    assert json.loads(r.stdout)["diagnostics"] == []
    assert "would change missing: out/alpha/serve.sh" in r.stderr


def test_a_deployment_no_spec_produces_is_removed_but_not_others(repo: Path, spark) -> None:
    spark("build", ".", "-o", "out", cwd=repo)
    (repo / "b.spark").write_text(spec(ONE_NODE, "gamma", "  target kubernetes {}"))
    r = spark("build", "b.spark", "-o", "out", cwd=repo)  # only b.spark: alpha is not in scope
    assert r.returncode == 0
    assert "removed out/beta/" in r.stderr
    assert sorted(p.name for p in (repo / "out").iterdir()) == ["alpha", "gamma", "manifest.json"]
    names = [d["name"] for d in json.loads((repo / "out/manifest.json").read_text())["deployments"]]
    assert names == ["alpha", "gamma"]


def test_folders_the_manifest_does_not_list_are_never_touched(repo: Path, spark) -> None:
    (repo / "out/mine").mkdir(parents=True)
    (repo / "out/mine/keep.txt").write_text("x")
    assert spark("build", ".", "-o", "out", cwd=repo).returncode == 0
    assert (repo / "out/mine/keep.txt").read_text() == "x"


def test_an_output_path_that_is_a_file_is_an_error_not_a_traceback(repo: Path, spark) -> None:
    (repo / "out").write_text("not a folder")
    r = spark("build", ".", "-o", "out", cwd=repo)
    assert r.returncode == 1
    assert "cannot write out" in r.stderr and "Traceback" not in r.stderr


def test_builds_under_different_hash_seeds_are_byte_identical(tmp_path: Path) -> None:
    outputs = []
    for seed in ("0", "1", "4242"):
        out = tmp_path / f"seed-{seed}"
        env = {**os.environ, "PYTHONHASHSEED": seed, "NO_COLOR": "1"}
        r = subprocess.run(
            [sys.executable, "-m", "spark_dsl", "build", "specs", "-o", str(out)],
            cwd=REPO,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert r.returncode == 0, r.stderr
        outputs.append(tree(out))
    assert outputs[0] == outputs[1] == outputs[2]
    # Every committed output and the manifest: the build is the whole of targets/.
    assert len(outputs[0]) == len([p for p in (REPO / "targets").rglob("*") if p.is_file()])


SHARED_PROFILE = """\
profile base {{
{body}
}}

deployment d1 extends base {{
  model       = muse-spark-open
  accelerator = b200
  target shell {{}}
}}

deployment d2 extends base {{
  model       = muse-spark-open
  accelerator = b200
  target shell {{}}
}}
"""


@pytest.mark.parametrize(
    ("body", "forced", "code"),
    [
        ('  serve {\n    api_key = env("VLLM_API_KEY")\n  }', ("-t", "kubernetes"), "SPK505"),
        ('  target slurm {\n    partition = "gpu b200"\n  }', (), "SPK507"),
    ],
    ids=["forced-kubernetes", "declared-slurm"],
)
def test_an_error_in_a_shared_profile_holds_every_deployment_that_extends_it(
    project, spark, body, forced, code
) -> None:
    """The error is one place, so it is reported once (for the first deployment), but both
    deployments have it: neither is rendered, and the build exits 1. The build asked the second
    for launches it never had and failed with exit 3 (a KeyError naming the whole plan)."""
    folder = project({"p.spark": SHARED_PROFILE.format(body=body)})
    r = spark("build", ".", "-o", "out", *forced, "--format", "json", cwd=folder)
    assert r.returncode == 1, r.stdout + r.stderr
    assert "internal error" not in r.stderr and "Traceback" not in r.stderr
    assert [d["code"] for d in json.loads(r.stdout)["diagnostics"]] == [code]
    assert not (folder / "out" / "d1").exists() and not (folder / "out" / "d2").exists()
