"""Graceful drain (`serve.drain`), rollouts that keep a replica serving (SPK539), and autoscaling
on queue depth or KV-cache usage with the dashboard showing the autoscaler's signal (issue 33,
items 3 and 4; docs/targets.md "Graceful drain", docs/production.md). Built by the real `spark`
command; every Kubernetes object strictly valid (Kubernetes 1.32, the LeaderWorkerSet schemas, the
vendored KEDA CRD), Compose through `docker compose config`, scripts through ShellCheck."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest
import validators as v
from cli_helpers import spark

SPEC = """\
deployment muse-pack {
  model       = muse-spark-open
  accelerator = b200
BODY
}
"""
TWO_NODES = "  nodes    = 2\n  parallel = dp(2) + tp + ep\n"
DISAGGREGATED = (
    '  runtime {\n    router_image = "registry.example.com/vllm-router:0.1.17"\n  }\n'
    "  disaggregation {\n    prefill {\n      nodes = 1\n    }\n    decode {\n      nodes = 1\n    }\n  }\n"
)


def build(tmp_path: Path, body: str) -> Path:
    (tmp_path / "pack.spark").write_text(SPEC.replace("BODY", body))
    proc = spark("build", "pack.spark", "-o", "out", cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return tmp_path / "out" / "muse-pack"


def kubernetes(folder: Path) -> list[dict]:
    manifest = folder / "kubernetes.yaml"
    v.check_all([v.kubernetes_validate(manifest), v.yamllint(manifest)])
    return v.load_yaml_documents(manifest)


def vllm_pods(docs: list[dict]) -> list[dict]:
    """Every pod spec that runs vLLM: Deployments' and both LeaderWorkerSet templates."""
    pods = []
    for doc in docs:
        if doc["kind"] == "Deployment":
            pods.append(doc["spec"]["template"]["spec"])
        elif doc["kind"] == "LeaderWorkerSet":
            group = doc["spec"]["leaderWorkerTemplate"]
            pods += [group["leaderTemplate"]["spec"], group["workerTemplate"]["spec"]]
    return [p for p in pods if p["containers"][0]["name"] == "vllm"]


def flag(args: list[str], name: str) -> str:
    assert args.count(name) == 1, args
    return args[args.index(name) + 1]


# ---- graceful drain --------------------------------------------------------------------------


@pytest.mark.parametrize("body", ["", TWO_NODES], ids=["deployment", "leaderworkerset"])
def test_every_vllm_pod_pauses_drains_and_is_given_the_time(tmp_path: Path, body: str) -> None:
    docs = kubernetes(build(tmp_path, body + "  target kubernetes {}\n"))
    pods = vllm_pods(docs)
    assert len(pods) == (2 if body else 1)
    for pod in pods:
        (container,) = pod["containers"]
        # vLLM 0.33.0 aborts in-flight requests at its default 0; the default drain is a minute.
        drain = int(flag(container["args"], "--shutdown-timeout"))
        pause = container["lifecycle"]["preStop"]["sleep"]["seconds"]
        assert (drain, pause) == (60, 30)
        # Kubernetes' own 30 s would kill mid-drain: the grace holds the pause, the drain and more.
        assert pod["terminationGracePeriodSeconds"] > pause + drain
    for deployment in [d for d in docs if d["kind"] == "Deployment"]:
        # An update's step (an old pod's stop, then a new pod's ready budget) is not "failed" at
        # Kubernetes' default 600 s while the new pod is still loading.
        probe = deployment["spec"]["template"]["spec"]["containers"][0]["startupProbe"]
        ready = probe["failureThreshold"] * probe["periodSeconds"]
        grace = deployment["spec"]["template"]["spec"]["terminationGracePeriodSeconds"]
        assert deployment["spec"]["progressDeadlineSeconds"] >= grace + ready > 600


def test_a_written_drain_sets_every_targets_stop_clock(tmp_path: Path) -> None:
    body = "  serve {\n    drain = 5m\n  }\n  target shell {}\n  target compose {}\n  target slurm {}\n"
    folder = build(tmp_path, body + "  target kubernetes {}\n")
    serve = (folder / "serve.sh").read_text()
    assert "--shutdown-timeout 300" in serve
    v.check_all([v.shellcheck(folder / "serve.sh"), v.shellcheck(folder / "job.sbatch")])
    # Slurm: every step gets SIGTERM a drain and a teardown before the time limit's kill.
    directives = [line for line in (folder / "job.sbatch").read_text().splitlines() if line.startswith("#SBATCH")]
    assert "#SBATCH --signal=TERM@330" in directives
    assert "--shutdown-timeout 300" in (folder / "job.sbatch").read_text()
    # Compose: `docker compose stop` waits the drain and the teardown, not its default 10 s.
    compose = v.compose_model(folder / "compose.yaml", env={"HF_TOKEN": "x"})
    (service,) = compose["services"].values()
    assert flag(service["command"], "--shutdown-timeout") == "300"
    assert service["stop_grace_period"] == "5m30s"
    (pod,) = vllm_pods(kubernetes(folder))
    assert pod["terminationGracePeriodSeconds"] == 30 + 300 + 30
    assert flag(pod["containers"][0]["args"], "--shutdown-timeout") == "300"


def test_the_flag_is_spark_s_own_and_extra_args_may_not_set_it(tmp_path: Path) -> None:
    (tmp_path / "pack.spark").write_text(
        SPEC.replace("BODY", '  serve {\n    extra_args = ["--shutdown-timeout=5"]\n  }\n  target shell {}\n')
    )
    proc = spark("check", "pack.spark", cwd=tmp_path)
    assert proc.returncode == 1
    assert "error[SPK902]" in proc.stdout and "set `serve.drain` instead" in proc.stdout


def _stub(folder: Path, name: str) -> None:
    """A server that takes a second to drain on SIGTERM, and says when it has."""
    path = folder / name
    path.write_text(
        "#!/usr/bin/env bash\n"
        f"trap 'sleep 1; touch \"$STUB_DIR/{name}.drained\"; exit 0' TERM\n"
        f'touch "$STUB_DIR/{name}.started"\n'
        "while :; do sleep 0.1; done\n"
    )
    path.chmod(0o755)


def test_the_script_stops_only_when_its_launches_have_drained(tmp_path: Path) -> None:
    folder = build(tmp_path, DISAGGREGATED + "  target shell {}\n")
    stubs = tmp_path / "bin"
    stubs.mkdir()
    for name in ("vllm", "vllm-router"):
        _stub(stubs, name)
    env = {
        **os.environ,
        "PATH": f"{stubs}:{os.environ['PATH']}",
        "STUB_DIR": str(stubs),
        "SPARK_NODE_ADDRESS": "127.0.0.1",
        "SPARK_DECODE_ADDRESS": "127.0.0.1",
        "VLLM_API_KEY": "k",
        "HF_TOKEN": "t",
    }
    script = subprocess.Popen(["bash", str(folder / "serve.sh"), "0"], env=env, start_new_session=True)
    try:
        deadline = time.monotonic() + 30
        while not all((stubs / f"{n}.started").exists() for n in ("vllm", "vllm-router")):
            assert time.monotonic() < deadline and script.poll() is None
            time.sleep(0.1)
        time.sleep(1)  # the script's traps come right after the launches start
        script.send_signal(signal.SIGTERM)
        assert script.wait(timeout=30) == 143
        # Whoever stopped the script (systemd, a supervisor) saw it end after the drain, not before.
        assert (stubs / "vllm.drained").exists() and (stubs / "vllm-router.drained").exists()
    finally:
        if script.poll() is None:
            os.killpg(script.pid, signal.SIGKILL)


# ---- rollouts --------------------------------------------------------------------------------


def test_a_rollout_without_a_surge_for_one_replica_warns_with_the_arithmetic(tmp_path: Path) -> None:
    (tmp_path / "pack.spark").write_text(SPEC.replace("BODY", "  target kubernetes {\n    gpu_budget = 8\n  }\n"))
    proc = spark("check", "pack.spark", cwd=tmp_path)
    assert "warning[SPK539]" in proc.stdout
    assert "replicas 1 - 1 stopped at a time + 0 surge = 0 serving" in proc.stdout
    assert "raise `gpu_budget` to 16 so one surge replica fits (2 replicas x 1 node x 8 GPUs = 16 GPUs)" in proc.stdout
    # The help's budget is one the warning no longer fires for, and the rollout then surges.
    (tmp_path / "pack.spark").write_text(SPEC.replace("BODY", "  target kubernetes {\n    gpu_budget = 16\n  }\n"))
    assert "SPK539" not in spark("check", "pack.spark", cwd=tmp_path).stdout
    (deployment,) = [d for d in kubernetes(build(tmp_path, "  target kubernetes {\n    gpu_budget = 16\n  }\n"))
                     if d["kind"] == "Deployment"]  # fmt: skip
    assert deployment["spec"]["strategy"]["rollingUpdate"] == {"maxSurge": 1, "maxUnavailable": 0}


def test_two_replicas_without_room_for_a_surge_keep_one_serving(tmp_path: Path) -> None:
    body = "  target kubernetes {\n    gpu_budget = 16\n    replicas   = 2\n  }\n"
    (tmp_path / "pack.spark").write_text(SPEC.replace("BODY", body))
    assert "SPK539" not in spark("check", "pack.spark", cwd=tmp_path).stdout
    (deployment,) = [d for d in kubernetes(build(tmp_path, body)) if d["kind"] == "Deployment"]
    # Recreate would stop both at once; one at a time keeps 2 - 1 = 1 serving, within 16 GPUs.
    assert deployment["spec"]["strategy"] == {
        "type": "RollingUpdate",
        "rollingUpdate": {"maxSurge": 0, "maxUnavailable": 1},
    }


# ---- autoscaling -----------------------------------------------------------------------------


def _autoscaled(tmp_path: Path, scale: str, body: str = "") -> list[dict]:
    target = (
        "  target kubernetes {\n    gpu_budget = 64\n    metrics {\n      dashboard = true\n    }\n"
        f"    autoscale {{\n      max = 3\n{scale}    }}\n  }}\n"
    )
    return kubernetes(build(tmp_path, body + target))


def _board(docs: list[dict]) -> list[dict]:
    (config,) = [d for d in docs if d["kind"] == "ConfigMap"]
    (text,) = config["data"].values()
    return json.loads(text)["panels"]


def test_kv_cache_usage_drives_keda_and_the_dashboard_shows_that_signal(tmp_path: Path) -> None:
    docs = _autoscaled(tmp_path, "      metric = kv_cache\n      via = keda\n", TWO_NODES)
    (scaled,) = [d for d in docs if d["kind"] == "ScaledObject"]
    (trigger,) = scaled["spec"]["triggers"]
    # A pod's usage is its engines' mean (one series per data-parallel engine), summed over the
    # leaders; KEDA divides by the replicas and aims at llm-d's 0.80.
    selector = 'namespace="default",spark_deployment="muse-pack",spark_component="server"'
    assert trigger["metadata"]["query"] == f"sum(avg by(pod)(vllm:kv_cache_usage_perc{{{selector}}}))"
    assert trigger["metadata"]["threshold"] == "0.8"
    (signal_panel,) = [p for p in _board(docs) if "Autoscaler" in p["title"]]
    assert signal_panel["targets"][0]["expr"] == f"avg(avg by(pod)(vllm:kv_cache_usage_perc{{{selector}}}))"
    steps = signal_panel["fieldConfig"]["defaults"]["thresholds"]["steps"]
    assert steps[-1]["value"] == 0.8 and signal_panel["fieldConfig"]["defaults"]["unit"] == "percentunit"


def test_the_default_signal_is_queue_depth_and_the_dashboard_shows_it(tmp_path: Path) -> None:
    docs = _autoscaled(tmp_path, "")
    (hpa,) = [d for d in docs if d["kind"] == "HorizontalPodAutoscaler"]
    (metric,) = hpa["spec"]["metrics"]
    assert metric["pods"]["metric"]["name"] == "vllm_num_requests_waiting"
    assert metric["pods"]["target"] == {"type": "AverageValue", "averageValue": "5"}
    panels = _board(docs)
    (signal_panel,) = [p for p in panels if "Autoscaler" in p["title"]]
    assert signal_panel["targets"][0]["expr"].startswith("avg(sum by(pod)(vllm:num_requests_waiting{")
    assert signal_panel["fieldConfig"]["defaults"]["thresholds"]["steps"][-1]["value"] == 5
    # The other signals stay on the board, and no two panels overlap.
    titles = {p["title"] for p in panels}
    assert {"server: Requests running", "server: KV-cache usage"} <= titles
    cells = [(p["gridPos"]["x"], p["gridPos"]["y"]) for p in panels]
    assert len(cells) == len(set(cells))


def test_kv_cache_through_an_hpa_is_a_fraction_and_running_is_still_a_choice(tmp_path: Path) -> None:
    (hpa,) = [d for d in _autoscaled(tmp_path, "      metric = kv_cache\n      target = 75\n")
              if d["kind"] == "HorizontalPodAutoscaler"]  # fmt: skip
    assert hpa["spec"]["metrics"][0]["pods"] == {
        "metric": {"name": "vllm_kv_cache_usage_perc"},
        "target": {"type": "AverageValue", "averageValue": "750m"},
    }
    (tmp_path / "running").mkdir()
    docs = _autoscaled(tmp_path / "running", "      metric = running\n      via = keda\n      target = 48\n")
    (scaled,) = [d for d in docs if d["kind"] == "ScaledObject"]
    assert scaled["spec"]["triggers"][0]["metadata"]["query"].startswith("sum(vllm:num_requests_running{")
    assert scaled["spec"]["triggers"][0]["metadata"]["threshold"] == "48"
