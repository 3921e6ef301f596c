"""A fabric that carries every byte (issue 33, item 2) and pyxis's named container (item 5), through
the real `spark check` and `spark build`:

- SPK560 warns when traffic between nodes would run over TCP: no `runtime.fabric` under an expert- or
  data-parallel layout over nodes, or under prefill/decode disaggregation;
- `fabric = efa` selects NIXL's LIBFABRIC backend, keeps the image's ENTRYPOINT on Kubernetes and
  requests `hugepages-2Mi` (strictly valid for Kubernetes 1.32 and LeaderWorkerSet v0.6.0);
- job.sbatch stops before any step when RDMA is in use and the locked-memory limit is not unlimited
  (a real Slurm cluster, the limit propagated from the submitting process as the Slurm FAQ says);
- under pyxis one step imports the image on every node into a named container every later step reuses.
"""

from __future__ import annotations

import json
import os
import re
import resource
import subprocess
from pathlib import Path

import pytest
import validators as v
from cli_helpers import spark

# A prefill node and a decode pool of two nodes (data and expert parallel): every kind of traffic
# between nodes, as the issue's `dp(2) + tp + ep` and P/D.
PD = """\
deployment muse-pd {{
  model       = muse-spark-open
  accelerator = b200
{runtime}
  disaggregation {{
    prefill {{
      nodes = 1
    }}
    decode {{
      nodes    = 2
      parallel = dp(2) + tp + ep
    }}
  }}

  target shell {{}}
  target slurm {{{slurm}}}
  target kubernetes {{{kubernetes}}}
}}
"""
ROUTER = 'router_image = "registry.example.com/vllm-router:0.1.17"'


def spec(fabric: str | None, slurm: str = "", kubernetes: str = "", router: str = ROUTER) -> str:
    lines = [router, f"fabric = {fabric}" if fabric else ""]
    body = "".join(f"    {line}\n" for line in lines if line)
    runtime = f"  runtime {{\n{body}  }}\n" if body else ""
    return PD.format(runtime=runtime, slurm=slurm, kubernetes=kubernetes)


def build(tmp_path: Path, text: str, name: str = "muse-pd") -> Path:
    tmp_path.mkdir(parents=True, exist_ok=True)
    (tmp_path / "a.spark").write_text(text, encoding="utf-8")
    done = spark("build", "a.spark", "-o", "out", cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    return tmp_path / "out" / name


def vllm_containers(path: Path) -> list[dict]:
    """Every vLLM container of kubernetes.yaml: Deployments' and both LeaderWorkerSet templates'."""
    templates = v.pod_templates(v.load_yaml_documents(path))
    return [c for _, pod in templates for c in pod["spec"]["containers"] if c["name"] == "vllm"]


def kv_configs(path: Path) -> list[dict]:
    """Every `--kv-transfer-config` value a file passes, parsed: the vLLM containers' args of
    kubernetes.yaml, the single-quoted words of a shell file."""
    if path.suffix == ".yaml":
        args = [c["args"] for c in vllm_containers(path)]
        return [json.loads(a[i + 1]) for a in args for i, w in enumerate(a) if w == "--kv-transfer-config"]
    return [json.loads(m) for m in re.findall(r"--kv-transfer-config '(\{[^']*\})'", path.read_text())]


# ---- SPK560 -----------------------------------------------------------------------------------


def test_spk560_warns_that_the_ep_all_to_all_and_the_kv_transfer_run_over_tcp(tmp_path: Path) -> None:
    (tmp_path / "a.spark").write_text(spec(None), encoding="utf-8")
    done = spark("check", "a.spark", cwd=tmp_path)
    out = done.stdout + done.stderr
    assert done.returncode == 0, out  # a warning: the build still goes ahead
    assert out.count("warning[SPK560]") == 2, out
    assert (
        "warning[SPK560]: the expert-parallel all-to-all between the 2 nodes of the decode pool runs over TCP"
        " on the pod or host network: `runtime.fabric` is not set\n  --> a.spark:14:18\n" in out
    )
    assert "14 |       parallel = dp(2) + tp + ep\n   |                  ^^^^^^^^^^^^^^^ no fabric" in out
    assert (
        "warning[SPK560]: the KV transfer from the prefill pods to the decode pods runs over TCP on the pod"
        " or host network: `runtime.fabric` is not set\n --> a.spark:8:3\n" in out
    )
    assert "8 |   disaggregation {\n  |   ^^^^^^^^^^^^^^ no fabric" in out
    help_line = (
        "= help: set `runtime { fabric = ... }` to the network between the nodes (`infiniband`, `roce` or"
        " `efa`), or `fabric = tcp` if TCP is meant"
    )
    assert out.count(help_line) == 2
    # The help fixes it: any fabric, `tcp` included (TCP on purpose), silences it.
    for fabric in ("infiniband", "roce", "efa", "tcp"):
        (tmp_path / "a.spark").write_text(spec(fabric), encoding="utf-8")
        quiet = spark("check", "a.spark", cwd=tmp_path)
        assert quiet.returncode == 0 and "SPK560" not in quiet.stdout + quiet.stderr, fabric
    explained = spark("explain", "SPK560", cwd=tmp_path)
    assert explained.returncode == 0 and "Data Parallel Deployment" in explained.stdout


def test_spk560_leaves_out_what_does_not_cross_nodes_every_forward_pass(tmp_path: Path) -> None:
    """A dense model's data-parallel replicas are independent (vLLM's "Data Parallel Deployment"), a
    pipeline sends one activation per stage, a build with no networked target runs nothing: none
    warns, while a mixture-of-experts model under `dp(2)` without `ep` does."""
    two_nodes = "accelerator = b200\n  nodes = 2\n  target slurm {}\n"
    texts = {
        "dense-dp": f"model = llama-3-1-8b\n  parallel = dp(2) + tp\n  {two_nodes}",
        "moe-dp": f"model = muse-spark-open\n  parallel = dp(2) + tp\n  {two_nodes}",
        "no-target": "model = muse-spark-open\n  accelerator = b200\n  nodes = 2\n  parallel = dp(2) + tp + ep\n",
        "compose": "model = muse-spark-open\n  accelerator = b200\n  parallel = tp + ep\n  target compose {}\n",
    }
    warned = {}
    for name, body in texts.items():
        (tmp_path / f"{name}.spark").write_text(f"deployment {name} {{\n  {body}}}\n", encoding="utf-8")
        done = spark("check", f"{name}.spark", cwd=tmp_path)
        warned[name] = "SPK560" in done.stdout + done.stderr
    assert warned == {"dense-dp": False, "moe-dp": True, "no-target": False, "compose": False}


# ---- fabric = efa -----------------------------------------------------------------------------


def test_efa_selects_nixl_libfabric_in_every_target(tmp_path: Path) -> None:
    efa = build(tmp_path / "efa", spec("efa"))
    ib = build(tmp_path / "ib", spec("infiniband"))
    for name in ("serve.sh", "job.sbatch", "kubernetes.yaml"):
        configs = kv_configs(efa / name)
        assert len(configs) >= 3, name  # the prefill rank and the two decode ranks
        assert {c["kv_role"] for c in configs} == {"kv_producer", "kv_consumer"}
        # vLLM's NixlConnector reads `kv_connector_extra_config.backends`, default ["UCX"].
        assert all(c["kv_connector_extra_config"] == {"backends": ["LIBFABRIC"]} for c in configs), name
        # InfiniBand stays on UCX, NIXL's default: no extra config.
        assert all("kv_connector_extra_config" not in c for c in kv_configs(ib / name)), name


def test_efa_pods_keep_the_image_entrypoint_and_request_hugepages(tmp_path: Path) -> None:
    efa = build(tmp_path / "efa", spec("efa"))
    ib = build(tmp_path / "ib", spec("infiniband"))
    for folder in (efa, ib):
        v.kubernetes_validate(folder / "kubernetes.yaml").check()  # Kubernetes 1.32 + LWS, strict
    servers = vllm_containers(efa / "kubernetes.yaml")
    assert len(servers) == 3  # prefill, decode leader, decode worker
    for container in servers:
        # No `command`: the image's ENTRYPOINT (`vllm serve` in vLLM's image) runs the arguments.
        assert "command" not in container
        assert container["args"][0] == "meta-models/Muse-Spark-Open-816B-A42B-NVFP4"
        resources = container["resources"]
        assert resources["limits"]["hugepages-2Mi"] == resources["requests"]["hugepages-2Mi"] == "5120Mi"
        assert "memory" in resources["requests"]  # Kubernetes takes huge pages beside CPU or memory
    header = (efa / "kubernetes.yaml").read_text().split("\n---\n", 1)[0]
    assert "# fabric = efa: the vLLM containers give only arguments, so the image's ENTRYPOINT runs them" in header
    docs = v.load_yaml_documents(efa / "kubernetes.yaml")
    (router,) = [d for d in docs if d["kind"] == "Deployment" and d["metadata"]["name"] == "muse-pd-router"]
    assert router["spec"]["template"]["spec"]["containers"][0]["command"] == ["vllm-router"]
    for container in vllm_containers(ib / "kubernetes.yaml"):
        assert container["command"] == ["vllm"] and container["args"][0] == "serve"
        assert not {"hugepages-2Mi"} & {*container["resources"]["limits"], *container["resources"]["requests"]}


@pytest.mark.parametrize(("setting", "quantity"), [("1GiB", "1024Mi"), ("3MiB", "4Mi"), ("0MiB", None)])
def test_the_hugepages_setting_sizes_the_request(tmp_path: Path, setting: str, quantity: str | None) -> None:
    """`hugepages` is the node's amount: whole 2 MiB pages, rounded up; 0 asks for none."""
    folder = build(tmp_path, spec("efa", kubernetes=f"\n    hugepages = {setting}\n  "))
    v.kubernetes_validate(folder / "kubernetes.yaml").check()
    for container in vllm_containers(folder / "kubernetes.yaml"):
        resources = container["resources"]
        assert resources["limits"].get("hugepages-2Mi") == resources["requests"].get("hugepages-2Mi") == quantity


# ---- Slurm: the locked-memory check -----------------------------------------------------------

# The test cluster's two nodes, data and expert parallel across them.
TWO_NODES = """\
deployment muse-dp2 {{
  model       = muse-spark-open
  accelerator = b200
  nodes       = 2
  parallel    = dp(2) + tp + ep

  runtime {{
    fabric = {fabric}
  }}

  target slurm {{
    partition = "gpu"
  }}
}}
"""


def test_the_job_stops_before_any_step_when_memlock_is_not_unlimited(
    tmp_path: Path, spec_cluster, job_dir: Path, vllm_stub
) -> None:
    """A real Slurm cluster: sbatch propagates the submitting process's RLIMIT_MEMLOCK (64 KiB here)
    to the job (Slurm FAQ, `memlock`); the job names the limit and the fixes, and starts nothing."""
    folder = build(tmp_path, TWO_NODES.format(fabric="infiniband"), name="muse-dp2")
    text = (folder / "job.sbatch").read_text(encoding="utf-8")
    v.shellcheck(folder / "job.sbatch").check()
    assert text.index('if [ "$(ulimit -l)" != unlimited ]') < text.index("srun ")
    script = job_dir / "job.sbatch"
    script.write_text(text, encoding="utf-8")
    env = {k: val for k, val in vllm_stub.env.items() if k != "BASH_ENV"}  # this machine's own limit
    soft, hard = resource.getrlimit(resource.RLIMIT_MEMLOCK)
    resource.setrlimit(resource.RLIMIT_MEMLOCK, (64 << 10, hard))
    try:
        job = spec_cluster.run_job(script, env=env, timeout=60)
    finally:
        resource.setrlimit(resource.RLIMIT_MEMLOCK, (soft, hard))
    assert job.state == "FAILED" and job.exit_code == 1, job
    assert "spark: fabric = infiniband needs an unlimited locked-memory limit; this job has 64 KiB." in job.output, (
        job.output
    )
    assert "submit with `sbatch --propagate=NONE`" in job.output
    assert "PropagateResourceLimitsExcept=MEMLOCK" in job.output
    assert "https://slurm.schedmd.com/faq.html#memlock" in job.output
    assert vllm_stub.records(None) == []  # no step ran
    # Without a fabric there is nothing to pin and no check.
    tcp = build(tmp_path / "tcp", TWO_NODES.format(fabric="tcp"), name="muse-dp2")
    assert "ulimit -l" not in (tcp / "job.sbatch").read_text()


# ---- pyxis: one named container per node ------------------------------------------------------

STUB_SRUN = """#!/usr/bin/env bash
# The address probe answers for each node; any other step is recorded, one NUL-separated argv a file.
case " $* " in *" bash -c "*)
  n=1; for a in "$@"; do case "$a" in --nodes=*) n="${a#--nodes=}" ;; esac; done
  for ((i = 0; i < n; i++)); do echo "$i 10.0.0.$((i + 1)) eth$i"; done; exit 0 ;;
esac
printf '%s\\0' "$@" > "$RECORDS/srun-$(date +%s%N)-$$"
"""


def run_with_stub_srun(script: Path, tmp_path: Path, nodes: int) -> list[list[str]]:
    """job.sbatch run by bash with a recording `srun` (no pyxis here): every step's argv, in order."""
    bin_dir, records = tmp_path / "bin", tmp_path / "records"
    bin_dir.mkdir()
    records.mkdir()
    for name, body in (("srun", STUB_SRUN), ("curl", "#!/usr/bin/env bash\nexit 0\n")):
        (bin_dir / name).write_text(body)
        (bin_dir / name).chmod(0o755)
    env = {
        "PATH": f"{bin_dir}:{os.environ['PATH']}",
        "RECORDS": str(records),
        "SLURM_JOB_CPUS_PER_NODE": f"8(x{nodes})",
        "HF_TOKEN": "t",
        "VLLM_API_KEY": "k",
    }
    done = subprocess.run(["bash", str(script)], env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return [p.read_bytes().decode().split("\0")[:-1] for p in sorted(records.iterdir())]


def option(argv: list[str], name: str) -> str | None:
    return next((a.split("=", 1)[1] for a in argv if a.startswith(f"--{name}=")), None)


# The longest deployment name (SPK108: a DNS-1123 label of 40 characters at most).
LONG = "muse-pd-" + "x" * 32
# The router from an image of its own, or from the vLLM image when that image has it too.
OWN_IMAGE = "registry.example.com/vllm-with-router:0.33.0"
ROUTERS = {"router-image": ROUTER, "one-image": f'image = "{OWN_IMAGE}"\n    router_image = "{OWN_IMAGE}"'}


@pytest.mark.parametrize("case", sorted(ROUTERS))
def test_pyxis_imports_the_image_once_per_node_and_every_step_reuses_it(tmp_path: Path, case: str) -> None:
    text = spec("tcp", slurm="\n    container = pyxis\n  ", router=ROUTERS[case])
    text = text.replace("target kubernetes {}", "").replace("deployment muse-pd", f"deployment {LONG}")
    folder = build(tmp_path, text, name=LONG)
    v.shellcheck(folder / "job.sbatch").check()
    steps = run_with_stub_srun(folder / "job.sbatch", tmp_path, nodes=3)
    image = OWN_IMAGE if case == "one-image" else "vllm/vllm-openai:v0.33.0"
    name = option(steps[0], "container-name")
    # The first step imports the image on all three nodes, before any launch.
    assert steps[0] == [
        "--nodes=3",
        "--ntasks=3",
        "--ntasks-per-node=1",
        f"--container-image={image}",
        f"--container-name={name}",
        "true",
    ]
    # A name enroot and pyxis take (no `:`, no `/`): the deployment's, lower-cased, and a digest.
    assert name is not None and re.fullmatch(rf"spark-{LONG}-[0-9a-f]{{12}}", name)
    launches = steps[1:]
    assert len(launches) == 4  # the router and three vLLM ranks
    for argv in launches:
        if option(argv, "container-image") == image:
            assert option(argv, "container-name") == name, argv  # reused: imported once per node
    (router_step,) = [argv for argv in launches if "vllm-router" in argv]
    if case == "router-image":  # another image: a container of its own, never the vLLM image's
        assert option(router_step, "container-image") == "registry.example.com/vllm-router:0.1.17"
        assert re.fullmatch(rf"spark-{LONG}-[0-9a-f]{{12}}", option(router_step, "container-name") or "")
        assert option(router_step, "container-name") != name
    else:
        assert option(router_step, "container-name") == name
