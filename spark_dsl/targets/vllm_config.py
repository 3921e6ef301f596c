"""The vLLM config target, `vllm-config.yaml`: one node's launch for `vllm serve --config`."""

from __future__ import annotations

from typing import Any

from spark_dsl.targets import placeholders, yaml_text
from spark_dsl.targets.common import Job, TargetError, Verbatim, describe_secret, is_vllm
from spark_dsl.targets.registry import Target
from spark_dsl.targets.shell_words import command_lines, joined, quote

FILE_NAME = "vllm-config.yaml"


_UNKNOWN = "unknown"


def _arity(option: str) -> int | str | None:
    """How many values an option takes, from the pinned vLLM's flag table (`unknown` if absent)."""
    # The flag table is read here, not at import: the checker imports this module for its
    # declaration and never needs the table.
    from spark_dsl.vllm_flags import flag_table

    table = flag_table()
    dest = table["options"].get(option)
    if dest is None:
        return _UNKNOWN
    nargs: int | str | None = table["actions"][dest]["nargs"]
    return nargs


def _looks_like_option(token: str) -> bool:
    return token.startswith("--")


def _scalar(text: str) -> Any:
    """An integer as YAML's integer when it reads back the same; anything else stays a string."""
    if text.isdigit() and str(int(text)) == text:
        return int(text)
    return text


def options(argv: tuple[str, ...]) -> dict[str, Any]:
    """Options as the mapping that vLLM's --config loader turns back into the same argv."""
    out: dict[str, Any] = {}
    tokens = list(argv)
    i = 0
    while i < len(tokens):
        token = tokens[i]
        i += 1
        if not _looks_like_option(token):
            raise TargetError(f"`{token}` is a positional argument; a config file holds options only")
        name, eq, inline = token.partition("=")
        key = name[2:]
        if key in out:
            raise TargetError(f"`{name}` is given twice; a config file holds each option once")
        nargs = _arity(name)
        has_value = i < len(tokens) and not _looks_like_option(tokens[i])
        if eq:
            out[key] = _scalar(inline)
        elif nargs == 0 or (nargs == _UNKNOWN and not has_value):
            # vLLM drops `key: false`, so a switch turned off is its own `no-` key set to true.
            out[key] = True
        elif nargs in ("+", "*"):
            values = []
            while i < len(tokens) and not _looks_like_option(tokens[i]):
                values.append(tokens[i])
                i += 1
            out[key] = _scalar(values[0]) if len(values) == 1 else values
        elif i >= len(tokens):
            raise TargetError(f"`{name}` has no value")
        else:
            out[key] = _scalar(tokens[i])
            i += 1
    return out


def render(job: Job) -> str:
    # One node only: the build refuses a plan over several nodes first (`single_host` below).
    if len(job.launches) != 1:
        raise TargetError(f"a vLLM config file holds one launch; {job.name} has {len(job.launches)}")
    launch = job.launches[0]
    if not is_vllm(launch) or len(launch.argv) < 3:
        raise TargetError("the launch is not `vllm serve MODEL ...`")
    texts = [*launch.argv, *(v for _, v in launch.env)]
    if placeholders.used(texts):
        raise TargetError("a config file has no run-time address to fill a placeholder with")
    model = quote(launch.argv[2])
    environment = [f"  {name}={quote(value)}" for name, value in launch.env]
    environment += [f"  {name} from {describe_secret(ref)}" for name, ref in launch.secrets]
    header = job.header(
        Verbatim(f"Run: vllm serve {model} --config {FILE_NAME}"),  # a command to copy: never wrapped
        "The same launch as one command:",
        *("  " + line for line in joined(command_lines(launch.argv))),
        *(["Environment it needs:", *environment] if environment else []),
        image=False,
    )
    return yaml_text.document(options(launch.argv[3:]), header)


TARGET = Target(
    "vllm-config",
    FILE_NAME,
    "a `vllm serve --config` file, `vllm-config.yaml`, for one node",
    render,
    single_host="a vLLM config file describes one node",
)
