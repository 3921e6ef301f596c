"""The Docker Compose target, `compose.yaml`: one service per launch on one host."""

from __future__ import annotations

import re
from typing import Any

from spark_dsl.plan import drain, weights
from spark_dsl.plan.model import Launch
from spark_dsl.schema import KeySpec, Kind
from spark_dsl.targets import placeholders, yaml_text
from spark_dsl.targets.common import (
    MODEL_CACHE,
    Job,
    TargetError,
    binary_size,
    describe_secret,
    is_vllm,
)
from spark_dsl.targets.registry import Target

FILE_NAME = "compose.yaml"
CACHE_VOLUME = "model-cache"
# Docker reads `g`/`m`/`k` in shm_size as powers of 1024.
_SHM_UNITS = (("g", 1 << 30), ("m", 1 << 20), ("k", 1 << 10))


def literal(text: str) -> str:
    """Compose interpolates `$`; doubling it lets a literal reach the container unchanged."""
    return text.replace("$", "$$")


def interpolation_text(text: str) -> str:
    """The message of `${NAME:?message}`: Compose has no escape for `}` there and would
    interpolate a `$`, so anything but plain words and punctuation becomes `?` (the names in it
    are checked, SPK123, so this changes nothing a valid spec writes)."""
    return re.sub(r"[^\w .,()/-]", "?", text, flags=re.ASCII)


def render(job: Job) -> str:
    # One host only: the build refuses a plan over several nodes first (`single_host` below).
    if not job.launches:
        raise TargetError("the plan has no launch to run")
    services = {_service_name(launch): _service(job, launch) for launch in job.launches}
    data: dict[str, Any] = {"name": job.setting("project") or job.name, "services": services}
    if _cache_source(job) is None:
        data["volumes"] = {CACHE_VOLUME: {}}
    header = job.header(
        "Start with `docker compose up -d`; secrets come from the host environment.",
    )
    return yaml_text.document(data, header)


def _service_name(launch: Launch) -> str:
    return launch.role


def _cache_source(job: Job) -> str | None:
    """The host folder for the model cache, or None for a named volume."""
    chosen = job.setting("model_cache") or job.runtime_value("model_cache")
    return str(chosen) if chosen else None


def _service(job: Job, launch: Launch) -> dict[str, Any]:
    if placeholders.used([*launch.argv, *(v for _, v in launch.env)]):
        raise TargetError("Compose has no run-time address to fill a placeholder with")
    service: dict[str, Any] = {
        "image": literal(job.image),
        "entrypoint": [literal(launch.argv[0])],
        "command": [literal(arg) for arg in launch.argv[1:]],
        "restart": job.setting("restart"),
        "ipc": "host",
    }
    shm = job.runtime_value("shm_size")
    if shm:
        service["shm_size"] = binary_size(int(shm), _SHM_UNITS) or str(shm)
    if launch.port is not None:
        service["ports"] = [f"{launch.port}:{launch.port}"]
    environment = {name: literal(value) for name, value in launch.env}
    for name, ref in launch.secrets:
        message = interpolation_text(f"set {ref.env_name} ({describe_secret(ref)})")
        environment[name] = f"${{{ref.env_name}:?{message}}}"
    if environment:
        service["environment"] = environment
    if is_vllm(launch):
        service["volumes"] = _volumes(job, launch)
        service.update(_devices(job))
        # `docker compose stop` kills after 10 s by default (the Compose file reference,
        # services.stop_grace_period): vLLM gets its drain (`--shutdown-timeout`) and a teardown.
        service["stop_grace_period"] = go_duration(drain.drain_budget(job.plan).stop)
    if launch.port is not None:
        service["healthcheck"] = _healthcheck(job, launch.port)
    return service


def _volumes(job: Job, launch: Launch) -> list[dict[str, Any]]:
    source = _cache_source(job)
    if source is None:
        volumes: list[dict[str, Any]] = [{"type": "volume", "source": CACHE_VOLUME, "target": MODEL_CACHE}]
    else:
        volumes = [
            {
                "type": "bind",
                "source": literal(source),
                "target": MODEL_CACHE,
                "bind": {"create_host_path": True},
            }
        ]
    model = launch.argv[2]
    if model.startswith("/"):
        # A local checkpoint is read where the spec says it is, inside the container too.
        volumes.append({"type": "bind", "source": literal(model), "target": literal(model), "read_only": True})
    return volumes


def _devices(job: Job) -> dict[str, Any]:
    facts = job.runtime_facts
    if facts.compose_devices is not None:
        return {
            "devices": list(facts.compose_devices.devices),
            "group_add": list(facts.compose_devices.group_add),
            "security_opt": list(facts.compose_devices.security_opt),
        }
    if facts.compose_gpu_driver is None:
        return {}  # no GPU to reach (vLLM's CPU backend)
    reservation = {"driver": facts.compose_gpu_driver, "count": job.gpus, "capabilities": ["gpu"]}
    return {"deploy": {"resources": {"reservations": {"devices": [reservation]}}}}


def _healthcheck(job: Job, port: int) -> dict[str, Any]:
    # python3 is in every vLLM image; curl is not guaranteed to be.
    probe = f"import urllib.request as u; u.urlopen('http://localhost:{port}/health', timeout=5)"
    return {
        "test": ["CMD", "python3", "-c", probe],
        "interval": "30s",
        "timeout": "10s",
        "retries": 3,
        # Failed checks count only after this: the ready budget, as every other waiter's.
        "start_period": go_duration(int(job.setting("start_period") or weights.ready_budget(job.plan).seconds)),
    }


def go_duration(seconds: int) -> str:
    """A duration as Compose (Go) reads it: hours, minutes and seconds, never days."""
    parts = [(seconds // 3600, "h"), (seconds % 3600 // 60, "m"), (seconds % 60, "s")]
    return "".join(f"{n}{unit}" for n, unit in parts if n) or "0s"


TARGET = Target(
    "compose",
    FILE_NAME,
    "a Docker Compose file, `compose.yaml`, one service per launch on one host",
    render,
    keys=(
        KeySpec("project", Kind.STRING, "Compose project name", default="the deployment name"),
        KeySpec(
            "restart",
            Kind.SYMBOL,
            "restart policy",
            symbols=("no", "always", "on-failure", "unless-stopped"),
            fallback="unless-stopped",
        ),
        KeySpec("model_cache", Kind.STRING, "host path for the model cache", default="a named volume"),
        KeySpec(
            "start_period",
            Kind.DURATION,
            "health-check start period",
            default="the deployment's ready budget (`serve.ready_timeout`)",
        ),
    ),
    single_host="Compose runs on one host",
    elsewhere="a Compose service sees its image and its volumes, not the host's folders",
    reads=("runtime.image", "runtime.model_cache", "runtime.shm_size"),
)
