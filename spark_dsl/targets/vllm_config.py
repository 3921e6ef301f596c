"""The vLLM config target, `vllm-config.yaml`: one node's launch for `vllm serve --config`.

Its keys are the launch's options as the plan decided them (`Launch.options`, and the user's
`extra_args` as the plan reads them): no argv is parsed back here."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from spark_dsl.plan import extra_args
from spark_dsl.plan.extra_args import ExtraOption
from spark_dsl.plan.model import Launch
from spark_dsl.plan.options import negative
from spark_dsl.targets import placeholders, yaml_text
from spark_dsl.targets.common import Job, TargetError, Verbatim, describe_secret
from spark_dsl.targets.registry import Target
from spark_dsl.targets.shell_words import command_lines, joined, quote

FILE_NAME = "vllm-config.yaml"


def _scalar(text: str) -> Any:
    """An integer as YAML's integer when it reads back the same; anything else stays a string."""
    if text.isdigit() and str(int(text)) == text:
        return int(text)
    return text


def _compiler_keys(launch: Launch) -> Iterator[tuple[str, Any]]:
    """The compiler's options as keys: a switch turned off is its own `no-` key set to true, since
    vLLM's --config loader drops `key: false`."""
    for option in launch.options:
        if isinstance(option.value, bool):
            yield (option.flag if option.value else negative(option.flag)).removeprefix("--"), True
        else:
            yield option.flag.removeprefix("--"), _scalar(option.value)


def _extra_value(option: ExtraOption) -> Any:
    if option.missing:
        raise TargetError(f"`{option.name}` has no value")
    if not option.values:  # a switch, or an option whose value is optional: the loader's bare flag
        return True
    if len(option.values) > 1:
        return list(option.values)
    return _scalar(option.values[0])


def _extra_keys(launch: Launch) -> Iterator[tuple[str, Any]]:
    """The user's `extra_args` as keys, read once by the plan (plan/extra_args.py)."""
    read = extra_args.read(launch.extra_args)
    if read.strays:
        stray = launch.extra_args[read.strays[0]]
        raise TargetError(f"`{stray}` is a positional argument; a config file holds options only")
    for option in read.options:
        if not option.name.startswith("--"):
            raise TargetError(f"`{option.name}` is a short option; a config file holds options by their long names")
        yield option.name.removeprefix("--"), _extra_value(option)


def options(launch: Launch) -> dict[str, Any]:
    """The launch's options as the mapping that vLLM's --config loader turns back into its argv."""
    out: dict[str, Any] = {}
    for key, value in (*_compiler_keys(launch), *_extra_keys(launch)):
        if key in out:
            raise TargetError(f"`--{key}` is given twice; a config file holds each option once")
        out[key] = value
    return out


def render(job: Job) -> str:
    # One node only: the build refuses a plan over several nodes first (`single_host` below).
    if len(job.launches) != 1:
        raise TargetError(f"a vLLM config file holds one launch; {job.name} has {len(job.launches)}")
    launch = job.launches[0]
    if launch.command[:2] != ("vllm", "serve") or len(launch.command) != 3:
        raise TargetError("the launch is not `vllm serve MODEL ...`")
    texts = [*launch.argv, *(v for _, v in launch.env)]
    if placeholders.used(texts):
        raise TargetError("a config file has no run-time address to fill a placeholder with")
    model = quote(launch.command[2])
    environment = [f"  {name}={quote(value)}" for name, value in launch.env]
    environment += [f"  {name} from {describe_secret(ref)}" for name, ref in launch.secrets]
    header = job.header(
        Verbatim(f"Run: vllm serve {model} --config {FILE_NAME}"),  # a command to copy: never wrapped
        "The same launch as one command:",
        *("  " + line for line in joined(command_lines(launch.argv))),
        *(["Environment it needs:", *environment] if environment else []),
        image=False,
    )
    return yaml_text.document(options(launch), header)


TARGET = Target(
    "vllm-config",
    FILE_NAME,
    "a `vllm serve --config` file, `vllm-config.yaml`, for one node",
    render,
    single_host="a vLLM config file describes one node",
)
