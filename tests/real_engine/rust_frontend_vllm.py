"""A `vllm` for the Rust-frontend tests: vLLM 0.33.0's own code from `vllm serve ARGV` to its Rust
frontend, with one engine core that loads no weights. Runs in the parser venv
(tools/vllm-parser/setup-env.sh), which holds the 0.33.0 wheel and its `vllm-rs` binary.

    vllm serve MODEL [FLAGS...]          (as a generated serve.sh runs it, environment included)

What is vLLM's own, unchanged (vllm/entrypoints/cli/serve.py, `run_multi_api_server`, lines
269-365 of 0.33.0): the argument parser of `vllm serve`, `setup_server` (the HTTP listening
socket), `make_zmq_listener` (the frontend's input and output transports) and
`RustFrontendProcessManager` (vllm/v1/utils.py), which builds the `vllm-rs frontend --args-json`
command from the parsed arguments and the environment (`VLLM_ENGINE_READY_TIMEOUT_S` becomes
`engine_ready_timeout_secs`) and starts the binary, which inherits this process's environment.

What is not: the engine core. vLLM's engine loads the weights, then connects a DEALER socket to the
frontend's input transport and sends `EngineCoreReadyResponse` encoded with msgspec's msgpack
(vllm/v1/engine/core.py, lines 1947-1980). This one waits `SPARK_FAKE_LOAD_SECONDS` (the load),
then sends that same message with vLLM's own classes; it answers no request.

Exit status: the frontend's. The test reads the frontend's log on stderr.
"""

from __future__ import annotations

import os
import sys
import tempfile
import threading
import time
from pathlib import Path

os.environ.setdefault("VLLM_TARGET_DEVICE", "cpu")  # no GPU here: vLLM's CPU platform
os.environ.setdefault("VLLM_NO_USAGE_STATS", "1")
os.environ.setdefault("DO_NOT_TRACK", "1")

# The parser exactly as tests/vllm_parser builds it (spark_dsl/data/check_launches.py).
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "spark_dsl" / "data"))
from check_launches import Vllm


def engine_core(input_address: str, load_seconds: float, max_model_len: int) -> None:
    """Load (a sleep), then announce readiness as vLLM's engine core does."""
    import msgspec
    import zmq
    from vllm.utils.network_utils import make_zmq_socket
    from vllm.v1.engine import EngineCoreReadyResponse

    time.sleep(load_seconds)
    ready = EngineCoreReadyResponse(
        max_model_len=max_model_len,
        num_gpu_blocks=64,
        block_size=16,
        dp_stats_address=None,
        dtype="bfloat16",
        vllm_version="0.33.0",
        world_size=1,
        data_parallel_size=1,
        tensor_parallel_size=1,
        pipeline_parallel_size=1,
        decode_context_parallel_size=1,
        data_parallel_rank=0,
        max_num_seqs=8,
        max_num_batched_tokens=max_model_len,
        instance_id="spark-test",
        supports_lora=False,
        max_loras=0,
    )
    ctx = zmq.Context()
    identity = (0).to_bytes(length=2, byteorder="little")  # engine index 0, as core.py
    sock = make_zmq_socket(ctx, input_address, zmq.DEALER, identity=identity, bind=False)
    sock.send(msgspec.msgpack.encode(ready))
    print("spark-test engine core: ready sent", file=sys.stderr, flush=True)
    while True:  # hold the connection, answer nothing
        time.sleep(3600)


def main(argv: list[str]) -> int:
    import zmq
    from vllm import envs
    from vllm.entrypoints.openai.api_server import setup_server
    from vllm.utils.network_utils import make_zmq_listener
    from vllm.v1.utils import RustFrontendProcessManager

    top, _ = Vllm.build_parser(strict=True)
    args = top.parse_args(argv)
    assert args.subparser == "serve", argv
    if args.model_tag is not None:  # as vLLM's main() does before dispatching
        args.model = args.model_tag
    binary = envs.VLLM_RUST_FRONTEND_PATH if envs.VLLM_USE_RUST_FRONTEND else None
    if binary is None:
        print("rust_frontend_vllm: VLLM_USE_RUST_FRONTEND is not set", file=sys.stderr)
        return 2
    _, sock = setup_server(args, reuse_port=False)
    folder = tempfile.mkdtemp(prefix="spark-rs-")
    inputs = make_zmq_listener(f"ipc://{folder}/input", zmq.ROUTER)
    outputs = make_zmq_listener(f"ipc://{folder}/output", zmq.PULL)
    manager = RustFrontendProcessManager(
        binary_path=binary,
        sock=sock,
        args=args,
        input_listener=inputs,
        output_listener=outputs,
        engine_start_index=0,
        engine_count=1,
        data_parallel_size=1,
    )
    load = float(os.environ.get("SPARK_FAKE_LOAD_SECONDS", "0"))
    threading.Thread(target=engine_core, args=(inputs.address, load, args.max_model_len or 1024), daemon=True).start()
    return manager.processes[0]._proc.wait()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
