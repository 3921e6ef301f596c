"""What a client of a deployment needs, shared by the jobs that call it (smoke check, benchmark).

The endpoint is the API port of the process clients talk to: the router of a disaggregated
deployment, else the head of its one pool; both listen on `serve.port` (the plan's `api_port`).
Its address is not known when the spec is built (a host, a Service, a Slurm node), so the jobs
read it at run time; the port is the plan's, overridable for a tunnel or a test.
"""

from __future__ import annotations

from spark_dsl.plan.launches import api_port, model_id
from spark_dsl.plan.model import Plan
from spark_dsl.targets.common import describe_secret
from spark_dsl.targets.shell_words import expansion_text, quote
from spark_dsl.values import SecretRef

# The settings every client reads (`Target.reads`): what names the model it sends (the served
# name, else the checkpoint the model, accelerator and path pick), the port and key it calls
# with, and the ready budget it waits (which the draft's weights count in).
READS = (
    "model",
    "accelerator",
    "checkpoint",
    "speculative",
    "serve.port",
    "serve.served_model_name",
    "serve.api_key",
    "serve.ready_timeout",
    "runtime.model_path",
)

ADDRESS = "SPARK_API_ADDRESS"  # the host (name or IP) of the router or head
PORT = "SPARK_API_PORT"


def served_name(plan: Plan) -> str:
    """The model name clients send: `serve.served_model_name`, else what vLLM serves it as (the path)."""
    name = plan.serve.value("served_model_name")
    return str(name) if name else model_id(plan)


def api_key(plan: Plan) -> SecretRef | None:
    """The deployment's own API key reference (`serve.api_key`): the jobs read the same secret."""
    ref = plan.serve.value("api_key")
    return ref if isinstance(ref, SecretRef) else None


def takes_images(plan: Plan) -> bool:
    return "image" in tuple(plan.value("modalities") or ())


def address_lines(plan: Plan, script: str) -> list[str]:
    """Bash: the endpoint's address from the first argument or the environment, else a clear error;
    `base_url` built from it and the plan's port."""
    usage = f"{script}: pass the address of the API server (its router or head) as the first argument or set {ADDRESS}"
    return [
        f'{ADDRESS}="${{1:-${{{ADDRESS}:-}}}}"',
        f'if [ -z "${{{ADDRESS}}}" ]; then',
        f"  echo {quote(usage)} >&2",
        "  exit 2",
        "fi",
        f'{PORT}="${{{PORT}:-{api_port(plan)}}}"',
        f'base_url="http://${{{ADDRESS}}}:${{{PORT}}}"',
    ]


def key_check(ref: SecretRef) -> str:
    """Bash: fail fast, naming the variable, when the key's variable is unset or empty."""
    name = ref.env_name
    return f': "${{{name}:?{expansion_text(f"set {name} ({describe_secret(ref)}), the API key")}}}"'
