"""The recipe's knowledge as data; the compiler reads a pre-validated snapshot of it."""

# Placeholder until the catalog snapshot lands; the one pinned vLLM version.
VLLM_VERSION = "0.33.0"
