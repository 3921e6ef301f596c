"""Pipeline parallelism, `pp(N)` (issue 15: pipeline parallelism against layers): the term, the
node arithmetic, the layer check, the launches vLLM documents for a pipeline over nodes, and the
capacity of a replica that spans its stages. The committed spec specs/models/h100-llama-405b-
pipeline.spark runs on the test Slurm clusters with the other committed jobs (test_target_argv,
test_network_faithful)."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

from spark_dsl.diagnostics import Severity
from spark_dsl.pipeline import RunResult, run
from spark_dsl.plan.model import Planned
from spark_dsl.render import mermaid, plan_shell
from spark_dsl.render.plan import plan_dict

REPO = Path(__file__).resolve().parent.parent
SPEC = REPO / "specs" / "models" / "h100-llama-405b-pipeline.spark"

TINY = """model tiny {
  layers      = 4
  hidden_size = 2048
  query_heads = 32
  kv_heads    = 8
  head_dim    = 64
  max_context = 128k
  checkpoint bf16 {
    repository = "example-org/tiny"
    size       = 4GB
  }
}
"""


def _run(tmp_path: Path, body: str, models: str = TINY) -> RunResult:
    (tmp_path / "spec.spark").write_text(f"{models}\ndeployment d {{\n{body}}}\n", encoding="utf-8")
    return run([tmp_path / "spec.spark"], tmp_path)


def _codes(result: RunResult) -> list[str]:
    return [d.code for d in result.diagnostics]


def test_a_pipeline_over_two_nodes_checks_clean_and_places_every_gpu(tmp_path: Path) -> None:
    result = _run(tmp_path, "  model = tiny\n  accelerator = b200\n  nodes = 2\n  parallel = tp + pp(2)\n")
    assert result.diagnostics == []
    (pool,) = result.plans[0].pools
    assert (pool.tp, pool.pp, pool.dp, pool.replica_gpus) == (8, 2, None, 16)
    assert result.plans[0].value("parallel").spelled() == "tp + pp(2)"


def test_the_gpu_arithmetic_counts_the_stages(tmp_path: Path) -> None:
    result = _run(tmp_path, "  model = tiny\n  accelerator = b200\n  nodes = 1\n  parallel = tp + pp(2)\n")
    (d,) = result.diagnostics
    assert d.code == "SPK217"
    assert d.message == "dp x pp x tp = 1 x 2 x 8 = 16 ranks, but 1 node x 8 GPUs = 8"
    # One stage per node: on one node, no pipeline (the fix converges, test_fix_convergence).
    assert d.help == "use `parallel = tp`: one pipeline stage per node, TP = GPUs per node"
    three = _run(tmp_path, "  model = tiny\n  accelerator = b200\n  nodes = 3\n  parallel = tp + pp(2)\n")
    assert [d.help for d in three.diagnostics] == [
        "use `parallel = tp + pp(3)`: one pipeline stage per node, TP = GPUs per node"
    ]


def test_a_pipeline_is_what_extra_nodes_may_hold_instead_of_replicas(tmp_path: Path) -> None:
    # SPK218 (extra NVIDIA nodes need replicas) holds for tensor parallelism alone, not for stages.
    alone = _run(tmp_path, "  model = tiny\n  accelerator = b200\n  nodes = 2\n  parallel = tp\n")
    assert "SPK218" in _codes(alone)
    staged = _run(tmp_path, "  model = tiny\n  accelerator = b200\n  nodes = 2\n  parallel = tp + pp(2)\n")
    assert "SPK218" not in _codes(staged)


def test_more_stages_than_layers_is_spk229(tmp_path: Path) -> None:
    result = _run(tmp_path, "  model = tiny\n  accelerator = b200\n  nodes = 5\n  parallel = tp + pp(5)\n")
    assert _codes(result) == ["SPK229"]
    assert result.diagnostics[0].message == "5 pipeline stages but `tiny` has 4 layers"
    at_the_limit = _run(tmp_path, "  model = tiny\n  accelerator = b200\n  nodes = 4\n  parallel = tp + pp(4)\n")
    assert at_the_limit.diagnostics == []


def test_stages_with_replicas_is_spk230_and_its_fix_keeps_the_nodes(tmp_path: Path) -> None:
    result = _run(tmp_path, "  model = tiny\n  accelerator = b200\n  nodes = 4\n  parallel = dp(2) + tp + pp(2)\n")
    (d,) = result.diagnostics
    assert d.code == "SPK230"
    (fix,) = d.fixes
    assert [e.text for e in fix.edits] == ["dp(4) + tp"]


def test_pp_without_a_count_is_spk121_with_a_fix(tmp_path: Path) -> None:
    result = _run(tmp_path, "  model = tiny\n  accelerator = b200\n  parallel = tp + pp\n")
    (d,) = result.diagnostics
    assert (d.code, d.message, d.help) == ("SPK121", "`pp` needs the number of pipeline stages", "write e.g. `pp(2)`")
    assert [e.text for e in d.fixes[0].edits] == ["pp(2)"]
    zero = _run(tmp_path, "  model = tiny\n  accelerator = b200\n  parallel = tp + pp(0)\n")
    assert _codes(zero) == ["SPK121"]


def test_muse_spark_open_in_stages_is_outside_the_recipe(tmp_path: Path) -> None:
    body = "  model = muse-spark-open\n  accelerator = b200\n  nodes = 2\n  parallel = tp + pp(2) + ep\n"
    strict = _run(tmp_path, body, models="")
    (d,) = strict.diagnostics
    assert (d.code, d.severity) == ("SPK231", Severity.ERROR)
    assert d.help == ("use `parallel = dp(2) + tp + ep`, or set `allow_unvalidated = true` to proceed at your own risk")
    relaxed = _run(tmp_path, body + "  allow_unvalidated = true\n", models="")
    (d,) = relaxed.diagnostics
    assert (d.code, d.severity, d.help) == ("SPK231", Severity.WARNING, "use `parallel = dp(2) + tp + ep`")
    # A model outside the recipe has no recipe to leave.
    generic = _run(tmp_path, "  model = tiny\n  accelerator = b200\n  nodes = 2\n  parallel = tp + pp(2)\n")
    assert generic.diagnostics == []


def test_the_405b_spec_launches_one_pipeline_over_two_nodes() -> None:
    result = run([SPEC], REPO)
    assert result.diagnostics == []
    ((_, launches),) = result.planned()
    head, worker = launches
    common = ("--tensor-parallel-size", "8", "--pipeline-parallel-size", "2", "--distributed-executor-backend", "mp")
    rendezvous = ("--nnodes", "2", "--master-addr", "${SPARK_HEAD_ADDRESS}", "--master-port", "29501")
    assert head.argv == (
        "vllm", "serve", "meta-llama/Llama-3.1-405B-Instruct", "--port", "8000", *common,
        *rendezvous[:2], "--node-rank", "0", *rendezvous[2:], "--max-model-len", "32768", "--max-num-seqs", "16",
        "--shutdown-timeout", "60",
    )  # fmt: skip
    assert worker.argv == (
        "vllm", "serve", "meta-llama/Llama-3.1-405B-Instruct", *common,
        *rendezvous[:2], "--node-rank", "1", *rendezvous[2:], "--headless", "--max-model-len", "32768",
        "--max-num-seqs", "16", "--shutdown-timeout", "60",
    )  # fmt: skip
    assert (head.api_server, head.port, worker.api_server, worker.port) == (True, 8000, False, None)
    assert [launch.node_rank for launch in launches] == [0, 1]


def test_the_405b_capacity_counts_both_stages_worked_by_hand() -> None:
    result = run([SPEC], REPO)
    (est,) = result.plans[0].capacity
    # A replica is 8 GPUs x 2 stages: 16 x 80 GB x 0.92 = 1177.6 GB; 811 GB of BF16 weights.
    assert est.replica_gpus == 16 and est.memory_per_replica_gb == 1177.6
    assert est.headroom_gb == 366.6  # 1177.6 - 811
    # K and V x 8 KV heads x 128 x 2 bytes (BF16 cache) x 126 layers; 32,768 tokens a sequence.
    assert est.kv_bytes_per_token == 2 * 8 * 128 * 2 * 126 == 516_096
    assert est.sequence_gb == 16.911  # 516,096 x 32,768 = 16,911,433,728 B
    assert est.sequences_fit == 366_600_000_000 // 16_911_433_728 == 21
    ((plan, launches),) = result.planned()
    notes = plan_dict(Planned(plan, launches))["notes"]
    assert any("a pipeline replica counts the memory of all its stages together" in n for n in notes)


def test_the_drawing_and_the_node_script_name_the_pipeline() -> None:
    result = run([SPEC], REPO)
    planned = result.planned()
    drawing = mermaid.render(list(planned))
    assert "TP 8 + PP 2, stage 0" in drawing and "TP 8 + PP 2, stage 1" in drawing
    ((plan, launches),) = planned
    script = plan_shell.render_node(plan, launches, 1)
    assert "SPARK_HEAD_ADDRESS to the IPv4 address of node 0 (the pipeline head)" in script


def test_stages_where_vllm_refuses_them_are_spk232(tmp_path: Path) -> None:
    draft = TINY.replace(
        "  }\n}\n", '  }\n  draft {\n    method = dspark\n    repository = "o/d"\n    size = 1GB\n  }\n}\n'
    )
    adaptive = _run(
        tmp_path,
        "  model = tiny\n  accelerator = b200\n  nodes = 2\n  parallel = tp + pp(2)\n"
        "  speculative = dspark(adaptive)\n",
        models=draft,
    )
    (d,) = adaptive.diagnostics
    assert (d.code, d.help) == ("SPK232", "use `speculative = dspark` (a fixed draft length), or no pipeline")
    decode = _run(
        tmp_path,
        "  model = tiny\n  accelerator = b200\n  disaggregation {\n    connector = nixl\n    prefill { nodes = 1 }\n"
        "    decode { nodes = 2\n parallel = tp + pp(2) }\n  }\n",
    )
    (d,) = decode.diagnostics
    assert d.code == "SPK232" and "decode side" in d.message
    assert [e.text for e in d.fixes[0].edits] == ["dp(2) + tp"]
    prefill = "    prefill { nodes = 2\n parallel = tp + pp(2) }\n    decode { nodes = 1 }\n"
    body = f"  model = tiny\n  accelerator = b200\n  disaggregation {{\n    connector = nixl\n{prefill}  }}\n"
    assert _run(tmp_path, body).diagnostics == []  # a full-attention model's prefill may be staged
    windowed = TINY.replace("  max_context", "  sliding_window_layers = 2\n  sliding_window = 4K\n  max_context")
    assert _codes(_run(tmp_path, body, models=windowed)) == ["SPK232"]


def test_the_rendezvous_flags_are_the_users_where_no_pipeline_spans_nodes(tmp_path: Path) -> None:
    extra = '  serve { extra_args = ["--distributed-executor-backend", "ray", "--master-port", "1234"] }\n'
    assert _run(tmp_path, "  model = tiny\n  accelerator = b200\n" + extra).diagnostics == []
    staged = _run(tmp_path, "  model = tiny\n  accelerator = b200\n  nodes = 2\n  parallel = tp + pp(2)\n" + extra)
    assert _codes(staged) == ["SPK902", "SPK902"]
    assert {d.help for d in staged.diagnostics} == {
        "remove it: the compiler writes vLLM's multi-node rendezvous for a pipeline over nodes"
    }
    always = _run(tmp_path, '  model = tiny\n  accelerator = b200\n  serve { extra_args = ["-pp", "2"] }\n')
    (d,) = always.diagnostics
    assert d.help == "remove it, and set `parallel` (`pp(N)`) and `nodes` instead (see `spark explain SPK902`)"


def test_the_suggested_split_keeps_the_stages_only_while_the_layers_last(tmp_path: Path) -> None:
    two_layers = TINY.replace("layers      = 4", "layers      = 2")
    result = _run(tmp_path, "  model = tiny\n  accelerator = b200\n  nodes = 3\n  parallel = tp + pp(2)\n", two_layers)
    (d,) = result.diagnostics
    assert d.code == "SPK217" and d.help.startswith("use `parallel = dp(3) + tp`")  # pp(3) would be SPK229
    muse = _run(
        tmp_path, "  model = muse-spark-open\n  accelerator = b200\n  nodes = 4\n  parallel = tp + pp(2) + ep\n", ""
    )
    spk231 = next(d for d in muse.diagnostics if d.code == "SPK231")
    assert spk231.help.startswith("use `parallel = dp(4) + tp + ep`")  # replicas over the 4 nodes, not 2


def _stub_pipeline(port: int, worker_args: list[str], tmp_path: Path) -> tuple[int, int, str]:
    """Node rank 0 and one worker of the stub `vllm` on loopback; their exit codes and the head's stderr."""
    stub = str(REPO / "tests" / "stubs" / "vllm")
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith("SPARK_")},
        "SPARK_STUB_SERVE_SECONDS": "1",
        "SPARK_STUB_CONNECT_SECONDS": "4",
        "SPARK_STUB_RECORD_DIR": str(tmp_path),
    }
    group = ["--tensor-parallel-size", "8", "--pipeline-parallel-size", "2", "--nnodes", "2"]
    rendezvous = ["--master-addr", "127.0.0.1", "--master-port", str(port)]
    head = subprocess.Popen(
        [sys.executable, stub, "serve", "m", "--port", "0", *group, "--node-rank", "0", *rendezvous],
        env=env,
        stderr=subprocess.PIPE,
        text=True,
    )
    worker = subprocess.run(
        [sys.executable, stub, "serve", "m", *worker_args, "--node-rank", "1", *rendezvous, "--headless"],
        env=env,
        capture_output=True,
        timeout=30,
    )
    _, err = head.communicate(timeout=30)
    return head.returncode, worker.returncode, err


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_the_stub_pipeline_head_takes_only_a_node_of_its_own_group(tmp_path: Path) -> None:
    same = ["--tensor-parallel-size", "8", "--pipeline-parallel-size", "2", "--nnodes", "2"]
    assert _stub_pipeline(_free_port(), same, tmp_path)[:2] == (0, 0)
    # Another pool's worker (a KV-transfer role the head does not have) or another shape fails both.
    decode = [*same, "--kv-transfer-config", '{"kv_connector":"NixlConnector","kv_role":"kv_consumer"}']
    head, worker, err = _stub_pipeline(_free_port(), decode, tmp_path)
    assert (head, worker) == (1, 1) and "is not this pipeline's" in err
    wider = ["--tensor-parallel-size", "8", "--pipeline-parallel-size", "3", "--nnodes", "3"]
    assert _stub_pipeline(_free_port(), wider, tmp_path)[:2] == (1, 1)


def test_weights_too_big_for_a_node_point_at_a_pipeline_over_nodes(tmp_path: Path) -> None:
    text = SPEC.read_text(encoding="utf-8")
    model = text[text.index("model llama-3-1-405b") : text.index("deployment")]
    result = _run(tmp_path, "  model = llama-3-1-405b\n  accelerator = h100\n", models=model)
    (d,) = result.diagnostics
    # 811 GB over 8 x 80 GB x 0.92 = 588.8 GB a node: two stages hold it.
    assert d.code == "SPK301" and d.help.endswith("or a pipeline over 2 nodes: `nodes = 2` and `parallel = tp + pp(2)`")
    # Muse Spark Open's recipe has no pipeline to offer (SPK231).
    muse = _run(tmp_path, "  model = muse-spark-open\n  accelerator = b200\n  checkpoint = bf16\n", models="")
    assert "pipeline" not in next(d for d in muse.diagnostics if d.code == "SPK301").help


def test_one_stage_is_no_pipeline(tmp_path: Path) -> None:
    body = "  model = muse-spark-open\n  accelerator = b200\n  parallel = tp + pp(1) + ep\n"
    result = _run(tmp_path, body, models="")
    assert result.diagnostics == []  # not SPK231: one stage leaves nothing of the recipe
    ((_, (launch,)),) = result.planned()
    assert "--pipeline-parallel-size" not in launch.argv
