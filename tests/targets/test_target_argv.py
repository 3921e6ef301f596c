"""What each target runs equals the plan's launches exactly: scripts run with the stub `vllm`,
Compose, Kubernetes and vLLM config files read back (TARGETS.md)."""

from __future__ import annotations

import json
import os
import shlex
import socket
import subprocess
import sys
from pathlib import Path

import pytest
import validators as v
from target_helpers import (
    REPO,
    TARGETS,
    committed,
    compose_value,
    config_argv,
    copy_script,
    expected_argv,
    expected_env,
    kubernetes_expand,
    scheduling_of,
)

from spark_dsl.plan import weights
from spark_dsl.plan.model import Launch, Plan, Planned

SECRETS = {"HF_TOKEN": "hf_test_token", "VLLM_API_KEY": "api_test_key"}
# Addresses a shell user passes in; the Slurm test points every address at this host.
ADDRESSES = {
    "SPARK_HEAD_ADDRESS": "10.0.0.1",
    "SPARK_PREFILL_ADDRESS": "10.0.0.2",
    "SPARK_DECODE_ADDRESS": "10.0.0.3",
}
LOOPBACK = dict.fromkeys(ADDRESSES, "127.0.0.1")
# What each rank binds and advertises: its own node's address, and the interface that holds it
# (Gloo's and NCCL's). The shell test passes both in; in the one-host Slurm cluster every node is this
# host, whose loopback interface the job is pointed at.
NODE_ADDRESS = {"SPARK_NODE_ADDRESS": "10.0.0.9", "SPARK_NODE_INTERFACE": "ib9"}
ON_LOOPBACK = {"SPARK_ADDRESS_INTERFACE": "lo"}


def ids(path: Path) -> str:
    return path.parent.name


def clean_env(base: dict[str, str]) -> dict[str, str]:
    """The caller's environment without any vLLM or Spark variable, plus the test secrets."""
    env = {
        k: val for k, val in base.items() if k.startswith("SPARK_STUB_") or not k.startswith(("VLLM_", "SPARK_", "HF_"))
    }
    return {**env, **SECRETS}


def assert_runs_as_planned(record: dict, launch: Launch, values: dict[str, str]) -> None:
    assert [record["prog"], *record["argv"]] == expected_argv(launch, values)
    env = record["env"]
    for name, value in expected_env(launch, values).items():
        assert env.get(name) == value, name
    for name, ref in launch.secrets:
        assert env[name] == SECRETS[ref.env_name]
    managed = {k for k in env if k.startswith("VLLM_")} - set(SECRETS)
    assert managed == {k for k in expected_env(launch, values) if k.startswith("VLLM_")}


# ---- shell ------------------------------------------------------------------------------------


def run_shell(script: Path, rank: int | None, env: dict[str, str], args: list[str]) -> None:
    argv = ["bash", str(script), *([str(rank)] if rank is not None else []), *args]
    proc = subprocess.run(argv, env=env, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr


@pytest.mark.parametrize("script", committed("*/serve.sh"), ids=ids)
def test_shell_script_runs_each_rank_as_planned(script: Path, plans: dict[str, Planned], vllm_stub) -> None:
    launches = plans[script.parent.name].launches
    ranks = sorted({launch.node_rank for launch in launches})
    multi = len(launches) > 1
    for rank in ranks:
        record_dir = vllm_stub.dir / f"rank{rank}"
        env = clean_env(vllm_stub.with_env(SPARK_STUB_RECORD_DIR=str(record_dir), SPARK_STUB_SERVE_SECONDS="1"))
        # Each rank runs alone here, so no peer could answer: the argv is what this test compares
        # (test_network_faithful.py runs them together).
        env.update(SPARK_STUB_NETWORK="0", **NODE_ADDRESS)
        used = [name for name in ADDRESSES if f"[{name.removeprefix('SPARK_')}]" in script.read_text()]
        if rank % 2:  # odd ranks read everything from the environment, even ranks from arguments
            env.update({name: ADDRESSES[name] for name in used}, SPARK_NODE_RANK=str(rank))
            run_shell(script, None, env, [])
        else:
            run_shell(script, rank if multi else None, env, [ADDRESSES[n] for n in used] if multi else [])
        records = v.load_stub_records(record_dir)
        on_rank = [launch for launch in launches if launch.node_rank == rank]
        assert sorted(r["prog"] for r in records) == sorted(launch.argv[0] for launch in on_rank)
        for launch in on_rank:
            (record,) = [r for r in records if r["prog"] == launch.argv[0]]
            assert_runs_as_planned(record, launch, ADDRESSES | NODE_ADDRESS)


@pytest.mark.parametrize("script", [s for s in committed("*/serve.sh") if "HF_TOKEN" in s.read_text()], ids=ids)
def test_shell_script_names_a_missing_secret(script: Path, vllm_stub) -> None:
    env = clean_env(vllm_stub.env)
    del env["HF_TOKEN"]
    proc = subprocess.run(["bash", str(script), "0", *ADDRESSES.values()], env=env, capture_output=True, text=True)
    assert proc.returncode != 0
    assert "HF_TOKEN: set HF_TOKEN (secret hf-token)" in proc.stderr
    assert vllm_stub.records(None) == []


def test_multi_node_shell_script_refuses_an_unknown_rank(vllm_stub) -> None:
    proc = subprocess.run(
        ["bash", str(TARGETS / "muse-b200-dp2/serve.sh"), "7", "10.0.0.1"],
        env=clean_env(vllm_stub.env),
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 2 and "must be one of 0 1, got '7'" in proc.stderr
    assert vllm_stub.records(None) == []


def test_multi_node_shell_script_names_the_interface_that_holds_its_address(vllm_stub, tmp_path: Path) -> None:
    """Without SPARK_NODE_INTERFACE a rank finds, on its host, the interface that holds its address
    (loopback's here), and refuses an address no interface of the host holds."""
    built = tmp_path / "built"
    spec = REPO / "specs/nvidia/b200-data-parallel-2-nodes.spark"
    proc = subprocess.run(
        [sys.executable, "-m", "spark_dsl", "build", str(spec), "-o", str(built), "-t", "shell", "--root", str(REPO)],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stderr
    script = str(built / "muse-b200-dp2/serve.sh")
    env = clean_env(vllm_stub.with_env(SPARK_STUB_NETWORK="0", SPARK_STUB_SERVE_SECONDS="0"))
    ran = subprocess.run(
        ["bash", script, "1", "127.0.0.1"],
        env=env | {"SPARK_NODE_ADDRESS": "127.0.0.1"},
        capture_output=True,
        text=True,
    )
    assert ran.returncode == 0, ran.stderr
    (record,) = vllm_stub.records(None)
    assert record["env"]["VLLM_HOST_IP"] == "127.0.0.1"
    assert (record["env"]["GLOO_SOCKET_IFNAME"], record["env"]["NCCL_SOCKET_IFNAME"]) == ("lo", "=lo")
    # 192.0.2.0/24 is TEST-NET-1 (RFC 5737): no interface of this host holds it.
    refused = subprocess.run(
        ["bash", script, "1", "127.0.0.1"],
        env=env | {"SPARK_NODE_ADDRESS": "192.0.2.77"},
        capture_output=True,
        text=True,
    )
    assert refused.returncode != 0
    assert "holds 192.0.2.77; set SPARK_NODE_INTERFACE" in refused.stderr
    assert len(vllm_stub.records(None)) == 1


OVERRIDDEN = """\
deployment dp2-bond {
  model       = muse-spark-open
  accelerator = b200
  nodes       = 2
  parallel    = dp(2) + tp + ep
  serve {
    env {
      GLOO_SOCKET_IFNAME = "bond0"
      VLLM_HOST_IP       = "10.1.2.3"
    }
  }
  target slurm {}
}
"""


def test_the_specs_own_interface_and_host_ip_win(tmp_path: Path) -> None:
    (tmp_path / "spark.toml").write_text("")
    (tmp_path / "dp2.spark").write_text(OVERRIDDEN)
    proc = subprocess.run(
        [sys.executable, "-m", "spark_dsl", "plan", str(tmp_path / "dp2.spark"), "--format", "json"],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    (deployment,) = json.loads(proc.stdout)["deployments"]
    for launch in deployment["launches"]:
        env = launch["env"]
        assert (env["GLOO_SOCKET_IFNAME"], env["VLLM_HOST_IP"]) == ("bond0", "10.1.2.3")
        assert env["NCCL_SOCKET_IFNAME"] == "=${SPARK_NODE_INTERFACE}"  # not given: spark's


# ---- Slurm ------------------------------------------------------------------------------------


@pytest.mark.slurm
@pytest.mark.parametrize("script", committed("*/job.sbatch"), ids=ids)
def test_slurm_job_runs_every_rank_as_planned(
    script: Path, plans: dict[str, Planned], spec_cluster, job_dir: Path, vllm_stub
) -> None:
    plan, launches = plans[script.parent.name]
    for launch in launches:
        if launch.port is not None:
            assert port_free(launch.port), f"port {launch.port} is taken; the job's stubs need it"
    # Node names do not resolve here: every address points at this host, where both "nodes" run.
    env = clean_env(vllm_stub.with_env(SPARK_STUB_SERVE_SECONDS="4")) | LOOPBACK | ON_LOOPBACK
    with scheduling_of(spec_cluster, script):  # the features and reservation the job asks for
        job = spec_cluster.run_job(copy_script(script, job_dir), env=env, timeout=120)
    assert job.ok, job
    assert f"spark: {plan.name} is ready" in job.output
    records = v.load_stub_records(vllm_stub.dir, None)
    # A job that stages its weights downloads each repository once, before the launches.
    downloads = [r["argv"] for r in records if r["prog"] == "hf"]
    assert sorted(downloads) == sorted(["download", r] for r in weights.staging(plan).repositories) or not (
        weights.staging(plan).download
    )
    records = [r for r in records if r["prog"] != "hf"]
    assert len(records) == len(launches), records
    for launch in launches:
        node = f"node{launch.node_rank + 1}"
        (record,) = [r for r in records if r["slurm"]["SLURMD_NODENAME"] == node and r["prog"] == launch.argv[0]]
        assert_runs_as_planned(
            record, launch, LOOPBACK | {"SPARK_NODE_ADDRESS": "127.0.0.1", "SPARK_NODE_INTERFACE": "lo"}
        )
        assert record["slurm"]["SLURM_JOB_ID"] == str(job.job_id)
        assert record["exit_code"] == 0


def port_free(port: int) -> bool:
    """Nobody listens on the port (the stub, like a server, binds through TIME_WAIT leftovers)."""
    with socket.socket() as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


# ---- Compose ----------------------------------------------------------------------------------


@pytest.mark.parametrize("path", committed("*/compose.yaml"), ids=ids)
def test_compose_command_and_environment_read_back_as_planned(path: Path, plans: dict[str, Planned]) -> None:
    launches = plans[path.parent.name].launches
    model = v.compose_model(path, env=SECRETS)
    assert sorted(model["services"]) == sorted(launch.role for launch in launches)
    for launch in launches:
        service = model["services"][launch.role]
        argv = [compose_value(a) for a in [*service["entrypoint"], *service["command"]]]
        assert argv == list(launch.argv)
        want = dict(launch.env) | {name: SECRETS[ref.env_name] for name, ref in launch.secrets}
        assert {k: compose_value(val) for k, val in service["environment"].items()} == want


# ---- Kubernetes -------------------------------------------------------------------------------


def containers_by_launch(path: Path, planned: Planned) -> list[tuple[Launch, dict, dict[str, str]]]:
    """Each launch with the container that runs it and the values the cluster gives `$(...)`."""
    plan, launches = planned
    docs = v.load_yaml_documents(path)
    out = []
    for launch in launches:
        pool = next((p for p in plan.pools if p.role == launch.role), None)
        name = plan.name if launch.role == "server" else f"{plan.name}-{launch.role}"
        (doc,) = [d for d in docs if d["kind"] in ("Deployment", "LeaderWorkerSet") and d["metadata"]["name"] == name]
        values = {"SPARK_POD_IP": "10.1.1.1"}
        if doc["kind"] == "LeaderWorkerSet":
            assert pool is not None
            index = launch.node_rank - pool.first_rank
            key = "leaderTemplate" if index == 0 else "workerTemplate"
            template = doc["spec"]["leaderWorkerTemplate"][key]
            values |= {"LWS_LEADER_ADDRESS": "leader.lws", "LWS_WORKER_INDEX": str(index)}
        else:
            template = doc["spec"]["template"]
        (container,) = template["spec"]["containers"]
        out.append((launch, container, values))
    return out


def placeholder_values(plan: Plan, launch: Launch, values: dict[str, str]) -> dict[str, str]:
    """How TARGETS.md/docs/targets.md fill each placeholder inside that launch's pod."""
    if launch.role == "router":
        return {f"SPARK_{p.role.upper()}_ADDRESS": f"{plan.name}-{p.role}" for p in plan.pools}
    own = "SPARK_HEAD_ADDRESS" if launch.role == "server" else f"SPARK_{launch.role.upper()}_ADDRESS"
    # A pool's head is the pod itself in a leader (or a lone pod), the group leader in a worker;
    # what a pod binds and advertises is always its own IP.
    head = values["SPARK_POD_IP"] if values.get("LWS_WORKER_INDEX", "0") == "0" else values["LWS_LEADER_ADDRESS"]
    return {own: head, "SPARK_NODE_ADDRESS": values["SPARK_POD_IP"], "SPARK_NODE_INTERFACE": "eth0"}


@pytest.mark.parametrize("path", committed("*/kubernetes.yaml"), ids=ids)
def test_kubernetes_args_and_env_read_back_as_planned(path: Path, plans: dict[str, Planned]) -> None:
    planned = plans[path.parent.name]
    for launch, container, values in containers_by_launch(path, planned):
        plan = planned.plan
        fill = placeholder_values(plan, launch, values)
        # Without `command` (fabric = efa) the image's ENTRYPOINT runs the args: `vllm serve` in vLLM's.
        command = container.get("command", ["vllm", "serve"])
        argv = [kubernetes_expand(a, values) for a in [*command, *container["args"]]]
        assert argv == expected_argv(launch, fill)
        plain = {e["name"]: kubernetes_expand(e["value"], values) for e in container.get("env", []) if "value" in e}
        assert plain == expected_env(launch, fill)
        refs = {
            e["name"]: e["valueFrom"]["secretKeyRef"]
            for e in container.get("env", [])
            if "valueFrom" in e and "secretKeyRef" in e["valueFrom"]
        }
        assert refs == {name: {"name": ref.name, "key": ref.key or "value"} for name, ref in launch.secrets}


# ---- vLLM config ------------------------------------------------------------------------------


@pytest.mark.parametrize("path", committed("*/vllm-config.yaml"), ids=ids)
def test_vllm_config_reads_back_as_the_planned_launch(path: Path, plans: dict[str, Planned]) -> None:
    (launch,) = plans[path.parent.name].launches
    run_line = next(line for line in path.read_text().splitlines() if line.startswith("# Run: "))
    command = shlex.split(run_line.removeprefix("# Run: "))
    assert command[-2:] == ["--config", "vllm-config.yaml"]
    (mapping,) = v.load_yaml_documents(path)
    assert [*command[:-2], *config_argv(mapping)] == list(launch.argv)
    header = path.read_text().split("\n# Environment it needs:\n", 1)[1]
    for name, value in launch.env:
        assert f"#   {name}={shlex.quote(value)}\n" in header
    assert os.sep not in path.name
