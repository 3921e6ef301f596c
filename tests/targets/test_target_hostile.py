"""Hostile values (quotes, `$(...)`, backticks, newlines, `;`) reach vLLM intact and run nothing.

test_target_every_setting.py pushes every string setting of the schema through every target.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
import validators as v
from target_helpers import compose_value, config_argv, copy_script, kubernetes_expand

from spark_dsl.pipeline import run


def spark_string(text: str) -> str:
    """`text` as a .spark string literal."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\t", "\\t") + '"'


def hostile_values(canary: Path) -> dict[str, str]:
    """Each value tries to run a command that would create a canary file."""
    return {
        "name": f'it\'s "x" $(touch {canary}/a) `touch {canary}/b`; touch {canary}/c\n${{HOME}} $$ \\ %x',
        "env": f"a'b\"c $(touch {canary}/d) `touch {canary}/e`;touch {canary}/f\n#x\t|y & $(LWS_LEADER_ADDRESS)",
        "path": f"/models/it's $(touch {canary}/g) `touch {canary}/h`; touch {canary}/i\nm",
    }


def spec_text(values: dict[str, str], name: str = "hostile", nodes: int = 1) -> str:
    parallel = "dp(2) + tp + ep" if nodes > 1 else "tp + ep"
    one_host = "" if nodes > 1 else "  target compose {}\n  target vllm-config {}"
    return f"""
deployment {name} {{
  model       = muse-spark-open
  accelerator = b200
  nodes       = {nodes}
  parallel    = {parallel}

  serve {{
    served_model_name = {spark_string(values["name"])}
    env {{
      MY_VAR = {spark_string(values["env"])}
    }}
  }}
  runtime {{
    model_path = {spark_string(values["path"])}
    hf_token   = secret("hf-token")
  }}

  target shell {{}}
  target slurm {{}}
  target kubernetes {{}}
{one_host}
}}
"""


@pytest.fixture
def hostile(tmp_path: Path, spark):
    canary = tmp_path / "canary"
    canary.mkdir()
    values = hostile_values(canary)
    (tmp_path / "one.spark").write_text(spec_text(values))
    (tmp_path / "two.spark").write_text(spec_text(values, "hostile-dp", nodes=2))
    built = spark("build", ".", "-o", "out", cwd=tmp_path)
    assert built.returncode == 0, built.stdout + built.stderr
    result = run([tmp_path / "one.spark", tmp_path / "two.spark"], tmp_path)
    return {
        "dir": tmp_path / "out",
        "canary": canary,
        "values": values,
        "plans": {p.plan.name: p for p in result.planned()},
    }


def test_the_plan_carries_the_values_as_written(hostile) -> None:
    (launch,) = hostile["plans"]["hostile"].launches
    assert launch.argv[2] == hostile["values"]["path"]
    assert launch.argv[launch.argv.index("--served-model-name") + 1] == hostile["values"]["name"]
    assert dict(launch.env)["MY_VAR"] == hostile["values"]["env"]


def test_every_hostile_output_still_passes_its_validators(hostile) -> None:
    out = hostile["dir"]
    checks = []
    for script in sorted(out.glob("*/*.s*")):
        checks += [v.shellcheck(script), v.bash_syntax(script)]
    for path in sorted(out.glob("*/*.yaml")):
        checks.append(v.yamllint(path))
    checks.append(v.compose_config(out / "hostile/compose.yaml", env={"HF_TOKEN": "t"}))
    checks += [v.kubernetes_validate(p) for p in sorted(out.glob("*/kubernetes.yaml"))]
    v.check_all(checks)


def assert_nothing_ran(hostile) -> None:
    assert list(hostile["canary"].iterdir()) == []


def test_shell_passes_the_values_to_vllm_intact(hostile, vllm_stub) -> None:
    # The data-parallel head runs alone here, so no worker could connect: argv and env are the point.
    env = vllm_stub.with_env(
        HF_TOKEN="t", SPARK_STUB_SERVE_SECONDS="0", SPARK_STUB_RECORD_ENV="MY_VAR", SPARK_STUB_NETWORK="0"
    )
    for script, args in (("hostile/serve.sh", []), ("hostile-dp/serve.sh", ["0", "10.0.0.1"])):
        proc = subprocess.run(["bash", str(hostile["dir"] / script), *args], env=env, capture_output=True, text=True)
        assert proc.returncode == 0, proc.stderr
    records = vllm_stub.records()
    assert len(records) == 2
    for record in records:
        assert record["argv"][1] == hostile["values"]["path"]
        assert record["argv"][record["argv"].index("--served-model-name") + 1] == hostile["values"]["name"]
        assert record["env"]["MY_VAR"] == hostile["values"]["env"]
    assert_nothing_ran(hostile)


@pytest.mark.slurm
def test_slurm_passes_the_values_to_vllm_intact(hostile, spec_cluster, job_dir: Path, vllm_stub) -> None:
    env = vllm_stub.with_env(
        HF_TOKEN="t",
        SPARK_STUB_SERVE_SECONDS="3",
        SPARK_STUB_RECORD_ENV="MY_VAR",
        SPARK_HEAD_ADDRESS="127.0.0.1",
    )
    job = spec_cluster.run_job(copy_script(hostile["dir"] / "hostile-dp/job.sbatch", job_dir), env=env, timeout=120)
    assert job.ok, job
    records = vllm_stub.records()
    assert len(records) == 2
    for record in records:
        assert record["argv"][1] == hostile["values"]["path"]
        assert record["env"]["MY_VAR"] == hostile["values"]["env"]
    head = next(r for r in records if "--headless" not in r["argv"])
    assert head["argv"][head["argv"].index("--served-model-name") + 1] == hostile["values"]["name"]
    assert_nothing_ran(hostile)


def test_compose_reads_back_the_values_intact(hostile) -> None:
    model = v.compose_model(hostile["dir"] / "hostile/compose.yaml", env={"HF_TOKEN": "t"})
    service = model["services"]["server"]
    argv = [compose_value(a) for a in [*service["entrypoint"], *service["command"]]]
    assert argv == list(hostile["plans"]["hostile"].launches[0].argv)
    assert compose_value(service["environment"]["MY_VAR"]) == hostile["values"]["env"]
    checkpoint = service["volumes"][1]
    assert compose_value(checkpoint["source"]) == compose_value(checkpoint["target"]) == hostile["values"]["path"]


def test_kubernetes_reads_back_the_values_intact(hostile) -> None:
    for name in ("hostile", "hostile-dp"):
        docs = v.load_yaml_documents(hostile["dir"] / name / "kubernetes.yaml")
        # A deployment over nodes starts with the claim its pods share; the workload follows.
        (workload, *_) = [d for d in docs if d["kind"] in ("Deployment", "LeaderWorkerSet")]
        spec = workload["spec"]
        template = (
            spec["template"] if workload["kind"] == "Deployment" else spec["leaderWorkerTemplate"]["leaderTemplate"]
        )
        (container,) = template["spec"]["containers"]
        values = {"LWS_LEADER_ADDRESS": "leader", "HF_TOKEN": "leaked"}
        args = [kubernetes_expand(a, values) for a in container["args"]]
        assert args[1] == hostile["values"]["path"]
        assert args[args.index("--served-model-name") + 1] == hostile["values"]["name"]
        env = {e["name"]: kubernetes_expand(e["value"], values) for e in container["env"] if "value" in e}
        assert env["MY_VAR"] == hostile["values"]["env"]  # `$(LWS_LEADER_ADDRESS)` stays literal


def test_vllm_config_reads_back_the_values_intact(hostile) -> None:
    path = hostile["dir"] / "hostile/vllm-config.yaml"
    (mapping,) = v.load_yaml_documents(path)
    (launch,) = hostile["plans"]["hostile"].launches
    assert config_argv(mapping) == list(launch.argv[3:])
    header = [line for line in path.read_text().splitlines() if line.startswith("#")]
    assert all("\n" not in line for line in header)
    run_line = next(line for line in header if line.startswith("# Run: "))
    shown = subprocess.run(
        ["bash", "-c", 'printf "%s\\0" ' + run_line.removeprefix("# Run: vllm serve ").split(" --config")[0]],
        capture_output=True,
        text=True,
    )
    assert shown.stdout.split("\0")[0] == hostile["values"]["path"]
    assert_nothing_ran(hostile)
