"""`fabric = efa`'s Kubernetes launches, as the pod runs them (the image's ENTRYPOINT, `vllm serve`,
then the container's args), parsed by vLLM 0.33.0's own serve parser: accepted, and the KV transfer
config they give is the one NixlConnector reads its backends from, LIBFABRIC (vLLM's
`nixl/base_worker.py`, `get_from_extra_config("backends", ["UCX"])`)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import validators as v
import yaml

from spark_dsl.vllm_verify import checker_script

SPEC = """\
deployment muse-pd {
  model       = muse-spark-open
  accelerator = b200

  runtime {
    router_image = "registry.example.com/vllm-router:0.1.17"
    fabric       = FABRIC
  }
  disaggregation {
    prefill {
      nodes = 1
    }
    decode {
      nodes    = 2
      parallel = dp(2) + tp + ep
    }
  }

  target kubernetes {}
}
"""
# Run in the parser venv: each argv through vLLM's `vllm serve` parser (check_launches builds it as
# vLLM's main() does), then the backends NixlConnector would read from the parsed KVTransferConfig.
BACKENDS = """\
import importlib.util, json, sys
spec = importlib.util.spec_from_file_location("check_launches", sys.argv[1])
module = importlib.util.module_from_spec(spec)
spec.loader.exec_module(module)
top, _ = module.Vllm.build_parser()
out = []
for argv in json.load(sys.stdin):
    config = top.parse_args(argv[1:]).kv_transfer_config
    out.append([type(config).__name__, config.get_from_extra_config("backends", ["UCX"])])
print(json.dumps(out))
"""


# vLLM's image's ENTRYPOINT (vllm-project/vllm, docker/Dockerfile, the `vllm-openai` stage), which
# runs a container's args when it gives no `command`.
IMAGE_ENTRYPOINT = ["vllm", "serve"]
# What the kubelet puts for `$(NAME)` in a worker pod of the decode group (its LWS index is 1).
POD = {"SPARK_POD_IP": "10.0.0.2", "LWS_LEADER_ADDRESS": "muse-pd-decode-0.muse-pd-decode", "LWS_WORKER_INDEX": "1"}


def expand(arg: str) -> str:
    """`$(NAME)` as the kubelet expands it in args (`$$` is a literal `$`)."""
    return re.sub(r"\$\$|\$\(([A-Za-z_][A-Za-z0-9_]*)\)", lambda m: POD[m.group(1)] if m.group(1) else "$", arg)


def pod_argvs(tmp_path: Path, fabric: str) -> list[list[str]]:
    """What each vLLM pod of kubernetes.yaml runs: its command (else the image's entrypoint) and args."""
    (tmp_path / "a.spark").write_text(SPEC.replace("FABRIC", fabric), encoding="utf-8")
    argv = [sys.executable, "-m", "spark_dsl", "build", "a.spark", "-o", "out"]
    built = subprocess.run(argv, cwd=tmp_path, capture_output=True, text=True)
    assert built.returncode == 0, built.stdout + built.stderr
    docs = list(yaml.safe_load_all((tmp_path / "out/muse-pd/kubernetes.yaml").read_text()))
    containers = [c for _, pod in v.pod_templates(docs) for c in pod["spec"]["containers"] if c["name"] == "vllm"]
    out = [[expand(a) for a in [*c.get("command", IMAGE_ENTRYPOINT), *c["args"]]] for c in containers]
    return out


def test_efa_pods_run_vllm_serve_with_nixl_on_libfabric(
    tmp_path: Path, vllm_python: Path, vllm_verify: Any, vllm_assert_all_ok: Callable[[Any], None]
) -> None:
    argvs = pod_argvs(tmp_path, "efa")
    assert len(argvs) == 3 and all(argv[:2] == ["vllm", "serve"] for argv in argvs)
    vllm_assert_all_ok(vllm_verify(argvs, []))
    parsed = subprocess.run(
        [str(vllm_python), "-c", BACKENDS, str(checker_script())],
        input=json.dumps(argvs),
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert parsed.returncode == 0, parsed.stderr[-3000:]
    assert json.loads(parsed.stdout.splitlines()[-1]) == [["KVTransferConfig", ["LIBFABRIC"]]] * 3
