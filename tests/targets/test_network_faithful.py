"""The multi-node Slurm jobs come up on a cluster whose nodes are separate hosts on a network.

Each node of the test cluster is a network namespace with its own IPv4 address and a Debian-style
/etc/hosts (`127.0.1.1 <its own name>`), see tests/slurm_cluster.py. The stub `vllm` binds and
connects where vLLM 0.33.0 does (tests/stubs/vllm): the data-parallel head binds its RPC socket on
`--data-parallel-address`, every headless engine connects to it, every NIXL rank binds its side
channel on `VLLM_NIXL_SIDE_CHANNEL_HOST`, and the router's first request makes the decode connect
to the prefill's advertised side channel. A rank that binds loopback, or a name, fails here as on
a real cluster.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
import validators as v
from target_helpers import REPO, TARGETS, committed, copy_script

try:
    from slurm_cluster import SlurmCluster
except ImportError:  # pragma: no cover - tests/ as a package
    from ..slurm_cluster import SlurmCluster

SECRETS = {"HF_TOKEN": "hf_test_token", "VLLM_API_KEY": "api_test_key"}
WIDE_DECODE = Path(__file__).parent / "network" / "pd-wide-decode.spark"
DATA_PARALLEL = REPO / "specs" / "nvidia" / "b200-data-parallel-2-nodes.spark"
PIPELINE = REPO / "specs" / "models" / "h100-llama-405b-pipeline.spark"


@pytest.fixture(scope="module")
def network_cluster(tmp_path_factory):
    """Three nodes, each its own host on one network, with the partitions the jobs ask for."""
    wanted = {"gpu"}
    for script in [*committed("*/job.sbatch"), WIDE_DECODE]:
        wanted.update(re.findall(r'partition\s*=\s*"?([\w-]+)', script.read_text()))
    cluster = SlurmCluster(tmp_path_factory.mktemp("net-slurm"), nodes=3, partitions=sorted(wanted), network=True)
    cluster.start()
    try:
        yield cluster
    finally:
        cluster.stop(check=True)


def clean_env(base: dict[str, str]) -> dict[str, str]:
    env = {k: val for k, val in base.items() if k.startswith("SPARK_STUB_") or not k.startswith(("VLLM_", "SPARK_"))}
    return {**env, **SECRETS}


def run(
    cluster: SlurmCluster, script: Path, job_dir: Path, stub, extra: dict[str, str] | None = None
) -> tuple[v.Result, list[dict]]:
    env = clean_env(stub.with_env(SPARK_STUB_SERVE_SECONDS="8", SPARK_STUB_CONNECT_SECONDS="6")) | (extra or {})
    job = cluster.run_job(copy_script(script, job_dir), env=env, timeout=120)
    return job, v.load_stub_records(stub.dir, None)


def built_job(spec: Path, out: Path) -> Path:
    """The `job.sbatch` the current compiler makes of `spec` (not the committed one)."""
    proc = subprocess.run(
        [sys.executable, "-m", "spark_dsl", "build", str(spec), "-o", str(out), "-t", "slurm", "--root", str(REPO)],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stderr
    (script,) = out.glob("*/job.sbatch")
    return script


def by_node(records: list[dict], prog: str = "vllm") -> dict[str, dict]:
    return {r["slurm"]["SLURMD_NODENAME"]: r for r in records if r["prog"] == prog}


@pytest.mark.slurm
def test_two_node_data_parallel_job_comes_up(network_cluster, job_dir: Path, vllm_stub) -> None:
    job, records = run(network_cluster, TARGETS / "muse-b200-dp2" / "job.sbatch", job_dir, vllm_stub)
    assert job.ok, job
    assert "spark: muse-b200-dp2 is ready" in job.output
    head, worker = by_node(records)["node1"], by_node(records)["node2"]
    address = network_cluster.node_address(1)
    assert head["network"]["bound"] == [
        {"what": "data-parallel RPC socket", "host": address, "address": address, "port": 13345}
    ]
    assert head["network"]["engines_from"] == [network_cluster.node_address(2)]
    assert worker["network"]["handshake"] == f"{address}:13345"
    assert all(r["exit_code"] == 0 for r in records)


@pytest.mark.slurm
def test_two_node_pipeline_job_comes_up(network_cluster, job_dir: Path, vllm_stub) -> None:
    job, records = run(network_cluster, TARGETS / "llama-405b-h100-pp2" / "job.sbatch", job_dir, vllm_stub)
    assert job.ok, job
    assert "spark: llama-405b-h100-pp2 is ready" in job.output
    head, worker = by_node(records)["node1"], by_node(records)["node2"]
    address = network_cluster.node_address(1)
    # torch's TCP store listens on every interface; the head and the worker reach it at the head's
    # address. The head's message queue binds on its VLLM_HOST_IP, the node's own address, and the
    # worker reaches it there.
    store, queue = head["network"]["bound"]
    assert store == {"what": "pipeline master store", "host": "0.0.0.0", "address": "0.0.0.0", "port": 29501}
    assert (queue["what"], queue["address"]) == ("message queue", address)
    assert head["env"]["VLLM_HOST_IP"] == address and worker["env"]["VLLM_HOST_IP"] == network_cluster.node_address(2)
    assert head["network"]["pipeline_nodes_from"] == [network_cluster.node_address(2)]
    assert worker["network"]["pipeline_joined"] == f"{address}:29501"
    assert worker["network"]["message_queue"] == head["network"]["message_queue"]
    assert all(r["exit_code"] == 0 for r in records)


@pytest.mark.slurm
def test_prefill_decode_job_comes_up(network_cluster, job_dir: Path, vllm_stub) -> None:
    job, records = run(network_cluster, TARGETS / "muse-b200-pd" / "job.sbatch", job_dir, vllm_stub)
    assert job.ok, job
    servers = by_node(records)
    prefill, decode = network_cluster.node_address(1), network_cluster.node_address(2)
    assert servers["node1"]["network"]["bound"] == [
        {"what": "NIXL side channel", "host": prefill, "address": prefill, "port": 5600}
    ]
    assert servers["node2"]["network"]["bound"] == [
        {"what": "NIXL side channel", "host": decode, "address": decode, "port": 5601}
    ]
    # The router's first request: the decode reached the prefill's advertised side channel.
    assert servers["node2"]["network"]["nixl_handshake"] == f"{prefill}:5600 ({prefill}): nixl-metadata"
    (router,) = by_node(records, "vllm-router").values()
    assert "first_request" in router["network"] and router["exit_code"] == 0


@pytest.mark.slurm
def test_prefill_decode_job_with_a_two_node_decode_pool_comes_up(
    network_cluster, job_dir: Path, vllm_stub, tmp_path: Path
) -> None:
    built = tmp_path / "built"
    proc = subprocess.run(
        [sys.executable, "-m", "spark_dsl", "build", str(WIDE_DECODE), "-o", str(built), "--root", str(REPO)],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stderr
    job, records = run(network_cluster, built / "muse-pd-wide-decode" / "job.sbatch", job_dir, vllm_stub)
    assert job.ok, job
    servers = by_node(records)
    decode_head, decode_worker = network_cluster.node_address(2), network_cluster.node_address(3)
    # Each decode engine binds its side channel on its own node, at the base port + its DP rank.
    assert {b["what"]: (b["address"], b["port"]) for b in servers["node3"]["network"]["bound"]} == {
        "NIXL side channel": (decode_worker, 5602)
    }
    assert servers["node2"]["network"]["engines_from"] == [decode_worker]
    assert servers["node3"]["network"]["handshake"] == f"{decode_head}:13345"
    assert all(r["exit_code"] == 0 for r in records)


# The interface variables a rank of a pool over several nodes needs, and the address it advertises.
INTERFACE_ENV = ("GLOO_SOCKET_IFNAME", "NCCL_SOCKET_IFNAME", "VLLM_HOST_IP")


@pytest.mark.slurm
@pytest.mark.parametrize(
    ("spec", "spread"),
    [(DATA_PARALLEL, {"node1", "node2"}), (PIPELINE, {"node1", "node2"}), (WIDE_DECODE, {"node2", "node3"})],
    ids=["data-parallel", "pipeline", "pd-wide-decode"],
)
def test_each_rank_of_a_pool_over_nodes_names_the_interface_of_its_address(
    network_cluster, job_dir: Path, vllm_stub, tmp_path: Path, spec: Path, spread: set[str]
) -> None:
    # Gloo binds what the host name resolves to unless GLOO_SOCKET_IFNAME names an interface
    # (torch's ProcessGroupGloo.cpp, createDefaultDevice), and a node's own name is 127.0.1.1 here.
    job, records = run(network_cluster, built_job(spec, tmp_path / "built"), job_dir, vllm_stub)
    assert job.ok, job
    servers = by_node(records)
    assert spread <= set(servers)
    for node, record in servers.items():
        env = record["env"]
        if node not in spread:  # a pool on one node talks to no other node over Gloo or NCCL
            assert not set(INTERFACE_ENV) & set(env), (node, env)
            continue
        i = int(node.removeprefix("node"))
        address = network_cluster.node_address(i)
        interface = env["GLOO_SOCKET_IFNAME"]
        # The interface that holds the rank's advertised address, as the rank itself sees its node.
        assert env["VLLM_HOST_IP"] == address, node
        assert record["interfaces"].get(interface) == address, (node, interface, record["interfaces"])
        assert interface == network_cluster.network.interface(i)
        assert env["NCCL_SOCKET_IFNAME"] == f"={interface}"  # NCCL's exact-name form
    assert all(r["exit_code"] == 0 for r in records)


@pytest.mark.slurm
def test_every_serve_step_gets_all_of_its_nodes_cpus(network_cluster, job_dir: Path, vllm_stub, tmp_path: Path) -> None:
    # From Slurm 22.05 srun takes its CPUs per task from SRUN_CPUS_PER_TASK (and from 23.11 from
    # SLURM_CPUS_PER_TASK, which `sbatch -c` sets) instead of giving a step its nodes' CPUs; a site's
    # job template often exports it. The P/D job also starts the router on node 1 before the
    # prefill server, with --overlap.
    script = built_job(WIDE_DECODE, tmp_path / "built")
    job, records = run(network_cluster, script, job_dir, vllm_stub, {"SRUN_CPUS_PER_TASK": "1"})
    assert job.ok, job
    servers = by_node(records)
    assert sorted(servers) == ["node1", "node2", "node3"]
    for node, record in servers.items():
        # The job holds each whole node (`--exclusive`): the step may run on every CPU of it.
        assert record["slurm"]["SLURM_JOB_CPUS_PER_NODE"] == f"{network_cluster.cpus}(x3)"
        assert record["cpus"] == network_cluster.cpus, (node, record["cpus"])
        assert record["slurm"]["SLURM_CPUS_ON_NODE"] == str(network_cluster.cpus)
    (router,) = by_node(records, "vllm-router").values()
    assert router["exit_code"] == 0 and "first_request" in router["network"]


STAGED = """\
deployment muse-staged {{
  model       = muse-spark-open
  accelerator = b200
  nodes       = 2
  parallel    = dp(2) + tp + ep

  serve {{
    api_key = secret("vllm-api-key")
  }}
  runtime {{
    hf_token    = secret("hf-token")
    model_cache = "{cache}"
  }}
  weights {{
    download         = true
    download_timeout = 10m
  }}

  target slurm {{
    partition = "b200"
  }}
}}
"""


@pytest.mark.slurm
def test_staging_downloads_each_repository_once_before_any_launch(
    network_cluster, job_dir: Path, vllm_stub, tmp_path: Path
) -> None:
    cache = tmp_path / "shared-hf-cache"
    spec = tmp_path / "staged.spark"
    spec.write_text(STAGED.format(cache=cache))
    built = tmp_path / "built"
    proc = subprocess.run(
        [sys.executable, "-m", "spark_dsl", "build", str(spec), "-o", str(built), "--root", str(tmp_path)],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stderr
    job, records = run(network_cluster, built / "muse-staged" / "job.sbatch", job_dir, vllm_stub)
    assert job.ok, job
    downloads = [r for r in records if r["prog"] == "hf"]
    assert sorted(tuple(r["argv"]) for r in downloads) == [
        ("download", "Inferact/Muse-Spark-Open-DSpark"),
        ("download", "meta-models/Muse-Spark-Open-816B-A42B-NVFP4"),
    ]
    assert {r["env"]["HF_HOME"] for r in downloads} == {str(cache)}
    assert {r["slurm"]["SLURMD_NODENAME"] for r in downloads} == {"node1"}
    servers = [r for r in records if r["prog"] == "vllm"]
    assert len(servers) == 2 and {r["env"]["HF_HOME"] for r in servers} == {str(cache)}
    assert max(r["finished"] for r in downloads) < min(r["started"] for r in servers)
