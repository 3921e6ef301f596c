"""spark-dsl: compile `.spark` deployment specs into checked vLLM deployments."""

__version__ = "0.1.0"
