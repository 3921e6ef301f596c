"""The validator layer bites and passes: each real tool accepts a good file and
rejects a broken one with its own message. A missing tool fails these tests
(ToolMissing), it never skips them."""

from __future__ import annotations

import json
import os
import subprocess
import textwrap
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest
import yaml

try:
    from . import validators as v
    from .slurm_cluster import SlurmCluster, free_port_block
except ImportError:
    import validators as v
    from slurm_cluster import SlurmCluster, free_port_block


def write(tmp_path: Path, name: str, text: str) -> Path:
    p = tmp_path / name
    p.write_text(textwrap.dedent(text).lstrip("\n"))
    return p


# ---------------------------------------------------------------- shell
GOOD_SH = """
#!/usr/bin/env bash
set -euo pipefail
: "${HF_TOKEN:?set HF_TOKEN}"
export VLLM_USE_V2_MODEL_RUNNER=1
exec vllm serve "Inferact/Muse-Spark-Open" \\
  --port 8000 \\
  --tensor-parallel-size 8 \\
  "$@"
"""

BAD_SH = """
#!/usr/bin/env bash
MODEL=Inferact/Muse-Spark-Open
ARGS="--port 8000"
cd /models
vllm serve $MODEL $ARGS \\{trailing_space}
  --max-model-len 4096
""".format(trailing_space=" ")  # a space after the backslash breaks the continuation


def test_shell_clean_script_passes(tmp_path):
    p = write(tmp_path, "serve.sh", GOOD_SH)
    v.shellcheck(p).check()
    v.bash_syntax(p).check()


def test_shellcheck_flags_findings(tmp_path):
    r = v.shellcheck(write(tmp_path, "bad.sh", BAD_SH))
    assert not r.ok
    assert r.returncode == 1
    for code in ("SC2086", "SC1101", "SC2164"):  # unquoted var, space after \, cd without guard
        assert code in r.output, r.output
    with pytest.raises(v.ValidationFailed, match="SC2086"):
        r.check()


def test_bash_n_rejects_syntax_error(tmp_path):
    p = write(
        tmp_path,
        "broken.sh",
        """
        #!/usr/bin/env bash
        if [ -n "${X:-}" ]; then
          echo yes
        """,
    )
    r = v.bash_syntax(p)
    assert not r.ok and r.returncode == 2
    assert "unexpected end of file" in r.output
    sc = v.shellcheck(p)
    assert not sc.ok and "SC1046" in sc.output, sc.output


# ---------------------------------------------------------------- compose
GOOD_COMPOSE = """
name: spark
services:
  vllm:
    image: vllm/vllm-openai:v0.33.0
    entrypoint: ["vllm"]
    command: ["serve", "Inferact/Muse-Spark-Open", "--port", "8000", "--tensor-parallel-size", "8"]
    restart: unless-stopped
    ipc: host
    shm_size: 16gb
    ports: ["8000:8000"]
    environment:
      HF_TOKEN: ${HF_TOKEN:-}
      VLLM_USE_V2_MODEL_RUNNER: "1"
    volumes:
      - hf-cache:/root/.cache/huggingface
    deploy:
      resources:
        reservations:
          devices:
            - driver: nvidia
              count: 8
              capabilities: [gpu]
    healthcheck:
      test: ["CMD", "curl", "-fsS", "http://localhost:8000/health"]
      interval: 30s
      timeout: 10s
      retries: 3
      start_period: 30m
volumes:
  hf-cache: {}
"""


def test_compose_good_file_passes(tmp_path):
    p = write(tmp_path, "compose.yaml", GOOD_COMPOSE)
    v.compose_config(p).check()
    model = v.compose_model(p)
    svc = model["services"]["vllm"]
    assert svc["command"][:2] == ["serve", "Inferact/Muse-Spark-Open"]
    assert svc["deploy"]["resources"]["reservations"]["devices"][0]["count"] == 8


@pytest.mark.parametrize(
    ("old", "new", "message"),
    [
        pytest.param("    ipc: host\n", "    ipcc: host\n", "'ipcc' not allowed", id="unknown-key"),
        pytest.param("count: 8", "count: eight", 'invalid value "eight"', id="gpu-count"),
        pytest.param("hf-cache:/root", "other-cache:/root", "undefined volume", id="volume"),
        pytest.param(
            "    restart: unless-stopped\n",
            "    restart: unless-stopped\n    image: vllm/x:1\n",
            "already defined",
            id="duplicate-key",
        ),
        pytest.param('    ports: ["8000:8000"]\n', "    ports: 8000\n", "ports must be a array", id="type"),
    ],
)
def test_compose_bad_file_fails(tmp_path, old, new, message):
    assert old in GOOD_COMPOSE
    p = write(tmp_path, "compose.yaml", GOOD_COMPOSE.replace(old, new, 1))
    r = v.compose_config(p)
    assert not r.ok, r
    assert message in r.output, r.output


# ---------------------------------------------------------------- kubernetes
DEPLOYMENT = {
    "apiVersion": "apps/v1",
    "kind": "Deployment",
    "metadata": {"name": "spark", "namespace": "default", "labels": {"app": "spark"}},
    "spec": {
        "replicas": 1,
        "selector": {"matchLabels": {"app": "spark"}},
        "template": {
            "metadata": {"labels": {"app": "spark"}},
            "spec": {
                "nodeSelector": {"gpu": "h100"},
                "containers": [
                    {
                        "name": "vllm",
                        "image": "vllm/vllm-openai:v0.33.0",
                        "command": ["vllm"],
                        "args": ["serve", "Inferact/Muse-Spark-Open", "--port", "8000"],
                        "ports": [{"name": "http", "containerPort": 8000}],
                        "env": [
                            {
                                "name": "HF_TOKEN",
                                "valueFrom": {"secretKeyRef": {"name": "hf", "key": "token"}},
                            }
                        ],
                        "resources": {
                            "limits": {"nvidia.com/gpu": 8},
                            "requests": {"nvidia.com/gpu": "8"},
                        },
                        "volumeMounts": [{"name": "shm", "mountPath": "/dev/shm"}],
                        "startupProbe": {
                            "httpGet": {"path": "/health", "port": "http"},
                            "periodSeconds": 10,
                            "failureThreshold": 180,
                        },
                        "readinessProbe": {"httpGet": {"path": "/health", "port": 8000}},
                        "livenessProbe": {"httpGet": {"path": "/health", "port": 8000}},
                    }
                ],
                "volumes": [{"name": "shm", "emptyDir": {"medium": "Memory", "sizeLimit": "16Gi"}}],
            },
        },
    },
}
SERVICE = {
    "apiVersion": "v1",
    "kind": "Service",
    "metadata": {"name": "spark", "namespace": "default"},
    "spec": {
        "type": "ClusterIP",
        "selector": {"app": "spark"},
        "ports": [{"name": "http", "port": 8000, "targetPort": "http"}],
    },
}


def dump(tmp_path: Path, name: str, *docs) -> Path:
    p = tmp_path / name
    p.write_text(yaml.safe_dump_all(docs, sort_keys=False, explicit_start=True))
    return p


def mutated(obj: dict, path: str, value, *, delete: bool = False, rename: str | None = None) -> dict:
    """A deep copy of obj with the dotted path set / deleted / renamed."""
    obj = json.loads(json.dumps(obj))
    *parents, last = path.split(".")
    node = obj
    for key in parents:
        node = node[int(key)] if isinstance(node, list) else node[key]
    last_key = int(last) if isinstance(node, list) else last
    if delete:
        del node[last_key]
    elif rename:
        node[rename] = node.pop(last_key)
    else:
        node[last_key] = value
    return obj


def test_kubernetes_good_manifest_passes(tmp_path):
    v.kubernetes_validate(dump(tmp_path, "k8s.yaml", DEPLOYMENT, SERVICE)).check()


@pytest.mark.parametrize(
    ("doc", "message"),
    [
        (
            mutated(DEPLOYMENT, "spec.template.spec.containers.0.resources", None, rename="resoures"),
            "'resoures' was unexpected",
        ),
        (
            mutated(
                DEPLOYMENT,
                "spec.template.spec.containers.0.readinessProbe.httpGet.path",
                None,
                rename="paht",
            ),
            "'paht' was unexpected",
        ),
        (mutated(DEPLOYMENT, "spec.replicas", "one"), "'one' is not of type 'integer'"),
        (
            mutated(DEPLOYMENT, "spec.template.spec.containers", None, delete=True),
            "'containers' is a required property",
        ),
        (mutated(SERVICE, "spec.ports.0.port", "8000"), "'8000' is not of type 'integer'"),
        (mutated(DEPLOYMENT, "apiVersion", "extensions/v1beta1"), "Couldn't find schema"),
        (mutated(SERVICE, "kind", "Servise"), "Couldn't find schema"),
    ],
)
def test_kubernetes_bad_manifest_fails(tmp_path, doc, message):
    others = [SERVICE] if doc.get("kind") == "Deployment" else [DEPLOYMENT]
    r = v.kubernetes_validate(dump(tmp_path, "k8s.yaml", doc, *others))
    assert not r.ok, r
    assert message in r.output, r.output


def test_kubernetes_rejects_duplicate_key_and_bad_yaml(tmp_path):
    p = write(
        tmp_path,
        "dup.yaml",
        """
        apiVersion: v1
        kind: Service
        metadata:
          name: a
          name: b
        spec:
          ports: [{port: 80}]
        """,
    )
    r = v.kubernetes_validate(p)
    assert not r.ok and "duplicate key 'name'" in r.output, r.output
    r = v.kubernetes_validate(write(tmp_path, "bad.yaml", "kind: [Service\n"))
    assert not r.ok and "YAML" in r.output


# ---------------------------------------------------------------- LeaderWorkerSet
def pod_template(role: str) -> dict:
    return {
        "metadata": {"labels": {"app": "spark", "role": role}},
        "spec": {
            "containers": [
                {
                    "name": "vllm",
                    "image": "vllm/vllm-openai:v0.33.0",
                    "command": ["vllm"],
                    "args": [
                        "serve",
                        "Inferact/Muse-Spark-Open",
                        "--data-parallel-address",
                        "$(LWS_LEADER_ADDRESS)",
                    ],
                    "env": [{"name": "RANK", "value": "$(LWS_WORKER_INDEX)"}],
                    "ports": [{"containerPort": 8000}],
                    "resources": {"limits": {"nvidia.com/gpu": "8"}},
                    "volumeMounts": [{"name": "shm", "mountPath": "/dev/shm"}],
                }
            ],
            "volumes": [{"name": "shm", "emptyDir": {"medium": "Memory"}}],
        },
    }


LWS = {
    "apiVersion": "leaderworkerset.x-k8s.io/v1",
    "kind": "LeaderWorkerSet",
    "metadata": {"name": "spark", "namespace": "default", "labels": {"app": "spark"}},
    "spec": {
        "replicas": 1,
        "startupPolicy": "LeaderCreated",
        "rolloutStrategy": {
            "type": "RollingUpdate",
            "rollingUpdateConfiguration": {"maxUnavailable": 1, "maxSurge": "10%"},
        },
        "leaderWorkerTemplate": {
            "size": 2,
            "restartPolicy": "RecreateGroupOnPodRestart",
            "leaderTemplate": pod_template("leader"),
            "workerTemplate": pod_template("worker"),
        },
    },
}
LWT = "spec.leaderWorkerTemplate"


def test_leaderworkerset_good_passes(tmp_path):
    assert v.leaderworkerset_errors(LWS) == []
    v.kubernetes_validate(dump(tmp_path, "k8s.yaml", LWS, SERVICE)).check()


@pytest.mark.parametrize(
    ("doc", "message"),
    [
        (mutated(LWS, f"{LWT}.size", None, rename="sizee"), "'sizee' was unexpected"),
        (mutated(LWS, f"{LWT}.restartPolicy", "Always"), "'Always' is not one of"),
        (mutated(LWS, f"{LWT}.size", "2"), "'2' is not of type 'integer'"),
        (mutated(LWS, f"{LWT}.size", 0), "0 is less than the minimum of 1"),
        (
            mutated(LWS, f"{LWT}.workerTemplate", None, delete=True),
            "'workerTemplate' is a required property",
        ),
        (
            mutated(LWS, f"{LWT}.workerTemplate.spec.containers.0.resources", None, rename="resoures"),
            "workerTemplate (as v1 PodTemplate): template.spec.containers.0: Additional properties",
        ),
        (
            mutated(LWS, f"{LWT}.leaderTemplate.spec.containers.0.ports.0.containerPort", "8080"),
            "leaderTemplate (as v1 PodTemplate): template.spec.containers.0.ports.0.containerPort: '8080'",
        ),
        (
            mutated(LWS, "apiVersion", "leaderworkerset.x-k8s.io/v1beta1"),
            "'leaderworkerset.x-k8s.io/v1' was expected",
        ),
        (mutated(LWS, "metadata.labels", ["app"]), "metadata (as ObjectMeta)"),
        (mutated(LWS, f"{LWT}.subGroupPolicy", {"subGroupSize": 3}), "3 is greater than size 2"),
        (
            mutated(LWS, "spec.networkConfig", {"subdomainPolicy": "Private"}),
            "'Private' is not one of",
        ),
    ],
)
def test_leaderworkerset_bad_fails(tmp_path, doc, message):
    errors = v.leaderworkerset_errors(doc)
    assert any(message in e for e in errors), errors
    r = v.kubernetes_validate(dump(tmp_path, "k8s.yaml", doc, SERVICE))
    assert not r.ok and message in r.output, r.output


CLAIM = {
    "metadata": {"name": "cache"},
    "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Ti"}}},
}


@pytest.mark.parametrize(
    ("doc", "message"),
    [
        # Fields of later LeaderWorkerSet releases: valid for v1 today, unknown to a v0.6.0 controller.
        (mutated(LWS, f"{LWT}.volumeClaimTemplates", [CLAIM]), "'volumeClaimTemplates' was unexpected"),
        (mutated(LWS, f"{LWT}.restartPolicy", "RecreateGroupAfterStart"), "'RecreateGroupAfterStart' is not one of"),
        (
            mutated(LWS, "spec.rolloutStrategy.rollingUpdateConfiguration.partition", 1),
            "'partition' was unexpected",
        ),
    ],
)
def test_leaderworkerset_needs_what_the_minimum_version_has(tmp_path, doc, message):
    assert v.LWS_MINIMUM_VERSION == "v0.6.0"  # the version the Kubernetes headers name
    (error,) = v.leaderworkerset_errors(doc)
    assert message in error and "(LeaderWorkerSet v0.6.0, the minimum version spark names)" in error
    r = v.kubernetes_validate(dump(tmp_path, "k8s.yaml", doc, SERVICE))
    assert not r.ok and message in r.output, r.output


# ---------------------------------------------------------------- yamllint
def test_yamllint_good_passes(tmp_path):
    long_flag = "--speculative-config=" + json.dumps({"method": "dspark", "model": "x" * 150})
    p = dump(tmp_path, "k8s.yaml", DEPLOYMENT, SERVICE)
    v.yamllint(p).check()
    # vllm-config.yaml style: header comments with a long command line, no '---'
    cfg = write(
        tmp_path,
        "vllm-config.yaml",
        f"""
        # vllm serve Inferact/Muse-Spark-Open --config vllm-config.yaml {long_flag}
        port: 8000
        tensor-parallel-size: 8
        no-enable-prefix-caching: true
        on: true
        """,
    )
    v.yamllint(cfg).check()
    v.yamllint(write(tmp_path, "compose.yaml", GOOD_COMPOSE)).check()


@pytest.mark.parametrize(
    ("text", "rule"),
    [
        ("a: 1\nb: 2\na: 3\n", "key-duplicates"),
        ("a: 1   \n", "trailing-spaces"),
        ("a:\n   b: 1\n  c: 2\n", "syntax"),
        ("a: 1", "new-line-at-end-of-file"),
        ("a: yes\n", "truthy"),
        ("a: [1,2]\n", "commas"),
    ],
    ids=["dup-key", "trailing", "syntax", "eof-newline", "truthy", "commas"],
)
def test_yamllint_bad_fails(tmp_path, text, rule):
    r = v.yamllint(write(tmp_path, "bad.yaml", text))
    assert not r.ok, r
    assert f"({rule})" in r.output, r.output


# ---------------------------------------------------------------- missing tools fail
def test_missing_tool_is_an_error_not_a_skip():
    with pytest.raises(v.ToolMissing, match=r"install-validators\.sh"):
        v.find_tool("no-such-validator-xyz")


# ---------------------------------------------------------------- stub vllm
def test_stub_vllm_records_and_serves_health(vllm_stub):
    port = free_port_block(1)
    env = vllm_stub.with_env(
        SPARK_STUB_SERVE_SECONDS="1.5",
        SPARK_STUB_HEALTH_DELAY="0.5",
        HF_TOKEN="hf_test",
        VLLM_USE_V2_MODEL_RUNNER="1",
    )
    proc = subprocess.Popen(
        ["vllm", "serve", "m/x", f"--port={port}", "--max-model-len", "4096"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    try:
        codes = []
        end = time.monotonic() + 10
        while time.monotonic() < end and 200 not in codes:
            try:
                codes.append(urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=1).status)
            except urllib.error.HTTPError as e:
                codes.append(e.code)
            except OSError:
                pass
            time.sleep(0.05)
        assert 503 in codes and codes[-1] == 200, codes
    finally:
        assert proc.wait(15) == 0, proc.stdout.read()
    [rec] = vllm_stub.records()
    assert rec["argv"] == ["serve", "m/x", f"--port={port}", "--max-model-len", "4096"]
    assert rec["env"]["HF_TOKEN"] == "hf_test" and rec["env"]["VLLM_USE_V2_MODEL_RUNNER"] == "1"
    assert not any(k.startswith("SPARK_STUB_") for k in rec["env"])
    assert rec["serve"]["bound"] is True and rec["serve"]["port"] == port
    assert rec["exit_code"] == 0


def test_stub_router_and_version(vllm_stub):
    port = free_port_block(1)
    env = vllm_stub.with_env(SPARK_STUB_SERVE_SECONDS="0.2", SPARK_STUB_EXIT_CODE="0")
    out = subprocess.run(["vllm", "--version"], env=env, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "0.33.0"
    subprocess.run(["vllm-router", "--policy", "round_robin", "--port", str(port)], env=env, check=True)
    [router] = vllm_stub.records("vllm-router")
    assert router["argv"] == ["--policy", "round_robin", "--port", str(port)]
    assert router["serve"]["bound"] is True
    fail = subprocess.run(["vllm", "serve", "m", "--headless"], env=dict(env, SPARK_STUB_EXIT_CODE="3"))
    assert fail.returncode == 3


# ---------------------------------------------------------------- Slurm
SBATCH_HEAD = """
#!/usr/bin/env bash
#SBATCH --job-name=spark-test
#SBATCH --nodes={nodes}
#SBATCH --ntasks-per-node=1
#SBATCH --gpus-per-node={gpus}
#SBATCH --exclusive
#SBATCH --time={time}
#SBATCH --partition={partition}
#SBATCH --output=logs/%x-%j.out
"""

JOB_BODY = r"""
set -euo pipefail
mapfile -t nodes < <(scontrol show hostnames "$SLURM_JOB_NODELIST")
head="${nodes[0]}"
# Node names do not resolve here and every "node" is this host: the head binds on loopback.
address=127.0.0.1
port="${STUB_PORT:?set STUB_PORT}"
# One srun, one task per node; each rank picks its own launch.
# shellcheck disable=SC2016
srun --nodes=2 --ntasks=2 --ntasks-per-node=1 bash -c '
  common=(serve test/model --data-parallel-size 2 --data-parallel-size-local 1
          --data-parallel-address "$1" --data-parallel-rpc-port 13345 --port "$2")
  if [ "$SLURM_NODEID" -eq 0 ]; then
    exec vllm "${common[@]}"
  else
    exec vllm "${common[@]}" --headless --data-parallel-start-rank "$SLURM_NODEID"
  fi' _ "$address" "$port" &
step=$!
# The batch script runs on the first node: the head is on 127.0.0.1.
deadline=$((SECONDS + 30))
until curl -fsS -o /dev/null "http://127.0.0.1:${port}/health"; do
  if ((SECONDS > deadline)); then
    echo "head never became healthy" >&2
    kill "$step"
    exit 1
  fi
  sleep 0.2
done
echo "READY head=${head}"
wait "$step"
"""


def sbatch_script(tmp_path: Path, name: str = "job.sbatch", body: str = "srun true\n", **kw) -> Path:
    params = {"nodes": 2, "gpus": 8, "time": "00:10:00", "partition": "gpu", **kw}
    p = tmp_path / name
    p.write_text(SBATCH_HEAD.format(**params).lstrip("\n") + textwrap.dedent(body).lstrip("\n"))
    (tmp_path / "logs").mkdir(exist_ok=True)
    return p


@pytest.mark.slurm
def test_sbatch_test_only_accepts_good_two_node_script(slurm_cluster, tmp_path):
    r = slurm_cluster.test_only(sbatch_script(tmp_path, body=JOB_BODY))
    assert r.ok, r
    assert "on nodes node[1-2] in partition gpu" in r.output, r.output


@pytest.mark.slurm
@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"nodes": 3}, "Requested node configuration is not available"),
        ({"gpus": 16}, "Requested node configuration is not available"),
        ({"partition": "a100"}, "invalid partition specified"),
        ({"time": "1hour"}, "Invalid --time specification"),
    ],
)
def test_sbatch_test_only_rejects_bad_script(slurm_cluster, tmp_path, params, message):
    r = slurm_cluster.test_only(sbatch_script(tmp_path, **params))
    assert not r.ok, r
    assert message in r.output, r.output


@pytest.mark.slurm
def test_two_node_job_runs_stub_vllm_per_node(slurm_cluster, tmp_path, vllm_stub):
    script = sbatch_script(tmp_path, body=JOB_BODY)
    v.shellcheck(script).check()
    port = free_port_block(1)
    env = vllm_stub.with_env(
        STUB_PORT=str(port),
        SPARK_STUB_SERVE_SECONDS="2",
        SPARK_STUB_HEALTH_DELAY="0.3",
        HF_TOKEN="hf_test",
    )
    job = slurm_cluster.run_job(script, env=env, timeout=90)
    assert job.ok, job
    assert job.stdout_path == tmp_path / "logs" / f"spark-test-{job.job_id}.out"
    assert "READY head=node1" in job.output, job
    recs = vllm_stub.records()
    assert [r["slurm"]["SLURM_NODEID"] for r in recs] == ["0", "1"], recs
    assert [r["slurm"]["SLURM_PROCID"] for r in recs] == ["0", "1"]
    assert [r["slurm"]["SLURMD_NODENAME"] for r in recs] == ["node1", "node2"]
    common = [
        "serve",
        "test/model",
        "--data-parallel-size",
        "2",
        "--data-parallel-size-local",
        "1",
        "--data-parallel-address",
        "127.0.0.1",
        "--data-parallel-rpc-port",
        "13345",
        "--port",
        str(port),
    ]
    assert recs[0]["argv"] == common
    assert recs[1]["argv"] == [*common, "--headless", "--data-parallel-start-rank", "1"]
    assert recs[0]["serve"]["bound"] is True and recs[1]["serve"]["headless"] is True
    for r in recs:
        assert r["env"]["CUDA_VISIBLE_DEVICES"] == "0,1,2,3,4,5,6,7"
        assert r["env"]["HF_TOKEN"] == "hf_test"
        assert r["slurm"]["SLURM_JOB_ID"] == str(job.job_id)
        assert r["exit_code"] == 0


@pytest.mark.slurm
def test_failing_job_reports_its_exit_code(slurm_cluster, tmp_path, vllm_stub):
    script = sbatch_script(
        tmp_path,
        nodes=1,
        body="""
        set -euo pipefail
        srun vllm serve test/model --headless
        """,
    )
    job = slurm_cluster.run_job(script, env=vllm_stub.with_env(SPARK_STUB_EXIT_CODE="3", SPARK_STUB_SERVE_SECONDS="0"))
    assert not job.ok
    assert (job.state, job.exit_code) == ("FAILED", 3), job
    assert len(vllm_stub.records()) == 1


@pytest.mark.slurm
def test_cluster_stops_with_a_running_job_and_leaves_nothing(tmp_path):
    """A second, one-node cluster: up, a job still running, down: no process
    of it (daemons, slurmstepd, the job's own) remains."""
    c = SlurmCluster(tmp_path / "c1", nodes=1)
    try:
        c.start()
        assert c.run(["sinfo", "-h", "-o", "%D %t"]).stdout.split() == ["1", "idle"]
        job_id = c.submit(sbatch_script(tmp_path, nodes=1, body="srun sleep 300\n"))
        end = time.monotonic() + 30
        while c.job_fields(job_id).get("JobState") != "RUNNING" and time.monotonic() < end:
            time.sleep(0.1)
        assert c.job_fields(job_id).get("JobState") == "RUNNING"
        time.sleep(0.5)  # let srun start the step
        running = c.our_processes()
    finally:
        c.stop(check=True)
    assert len(running) >= 4, running  # munged, slurmctld, slurmd, job processes
    assert c.our_processes() == []
    assert all(not os.path.exists(f"/proc/{pid}") or _is_zombie(pid) for pid in running)


def _is_zombie(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] == "Z"
    except OSError:
        return True
