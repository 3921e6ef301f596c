"""Data shipped with spark-dsl: the vLLM flag table and the real-parser checker script."""
