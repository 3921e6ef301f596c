"""A realistic, valid `vllm serve` launch shared by the flag-table tier and the real-parser tier."""

from __future__ import annotations

import json

MODEL = "meta-models/Muse-Spark-Open-816B-A42B-NVFP4"
DSPARK = {
    "method": "dspark",
    "model": "Inferact/Muse-Spark-Open-DSpark",
    "num_speculative_tokens": 7,
}
GOOD = [
    "vllm", "serve", MODEL,
    "--tensor-parallel-size", "8",
    "--enable-expert-parallel",
    "--no-enable-prefix-caching",
    "--enable-chunked-prefill",
    "--max-model-len", "32768",
    "--speculative-config", json.dumps(DSPARK),
    "--attention-backend", "TRITON_ATTN",
    "--kv-cache-dtype", "fp8",
]  # fmt: skip
