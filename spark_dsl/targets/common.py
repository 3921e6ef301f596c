"""What every emitter shares: the job it renders, the image, secrets, the header and sizes."""

from __future__ import annotations

import textwrap
from typing import Any

from msgspec import Struct

from spark_dsl import catalog
from spark_dsl.plan.model import Block, Launch, Plan
from spark_dsl.text_escape import visible
from spark_dsl.values import SecretRef

MODEL_CACHE = "/root/.cache/huggingface"  # where vLLM's images keep Hugging Face downloads
GENERATOR = "spark build"
# Header lines are wrapped at this many characters (a list of ports or variables runs long), the
# continuation indented; a line that starts with a space is laid out already (a command) and kept,
# and so is a `Verbatim` line (a command to copy whole).
HEADER_WIDTH = 100


class Verbatim(str):
    """A header line kept on one line however long: a command a reader copies as it is."""


class TargetError(Exception):
    """This target cannot express this plan: the build reports it and writes nothing for it."""

    # SPK501 is shared with the rule that reports the same problem for declared targets.
    def __init__(self, message: str, code: str = "SPK501") -> None:
        super().__init__(message)
        self.code = code


class Job(Struct, frozen=True):
    """One target of one deployment: the plan, its launches, the spec's path, and the target's kind
    (its settings are the plan's `target KIND` part, defaults included)."""

    plan: Plan
    launches: tuple[Launch, ...]
    kind: str
    source: str

    @property
    def settings(self) -> Block:
        return self.plan.target(self.kind)

    def setting(self, key: str) -> Any:
        """A setting of the target: written, else its schema default, else None."""
        return self.settings.value(key)

    def map_setting(self, block: str) -> dict[str, str]:
        """A map block of the target (`labels { ... }`) in the order it was written."""
        return self.settings.block(block).mapping()

    @property
    def name(self) -> str:
        return self.plan.name

    def runtime_value(self, key: str) -> Any:
        return self.plan.runtime.value(key)

    @property
    def gpus(self) -> int:
        return int(self.plan.value("gpus"))

    @property
    def vendor(self) -> str:
        return self.plan.accelerator.vendor

    @property
    def runtime_facts(self) -> catalog.VendorRuntime:
        """How the runtimes reach this vendor's GPUs (the catalog's `vendors.<vendor>.runtime`)."""
        return self.plan.vendor.runtime

    @property
    def image(self) -> str:
        """`runtime.image`, else the catalog's image for the vendor, pinned to the vLLM version."""
        chosen = self.runtime_value("image")
        return str(chosen) if chosen else catalog.load().image(self.vendor)

    @property
    def router_image(self) -> str:
        """`runtime.router_image`, else the vLLM image (vllm-router is not known to ship in it)."""
        chosen = self.runtime_value("router_image")
        return str(chosen) if chosen else self.image

    def header(self, *lines: str, image: bool = True) -> list[str]:
        """Comment lines (without `#`) that open every output; `image` when the output names one.

        Every line is printable: a file name or value with a line break (or any control
        character) is shown escaped, so it can never end the comment and start a command.
        """
        out = [
            f"{self.name}: written by `{GENERATOR}` from {self.source}; edit the spec, not this file.",
            *lines,
        ]
        images = catalog.load().recipe.images
        if image and not self.runtime_value("image") and not images[self.vendor].confirmed:
            out.append(f"The image tag {self.image} is not confirmed upstream yet (see the catalog).")
        return [part for line in out for part in wrapped(visible(line), isinstance(line, Verbatim))]


def wrapped(line: str, verbatim: bool = False, width: int = HEADER_WIDTH) -> list[str]:
    """A header line as lines of at most `width` characters, broken between words only (a name,
    flag or address longer than that stays whole); continuations indented by two spaces."""
    if verbatim or len(line) <= width or line.startswith(" "):
        return [line]
    return textwrap.wrap(line, width, subsequent_indent="  ", break_long_words=False, break_on_hyphens=False)


def describe_secret(ref: SecretRef) -> str:
    if ref.kind == "env":
        return f"the environment variable {ref.name}"
    key = f", key {ref.key}" if ref.key else ""
    return f"secret {ref.name}{key}"


def api_launches(launches: tuple[Launch, ...]) -> list[Launch]:
    """Launches that serve HTTP (the router, the head of each pool), in rank order."""
    return [launch for launch in launches if launch.api_server and launch.port is not None]


def is_vllm(launch: Launch) -> bool:
    return launch.argv[:2] == ("vllm", "serve")


def binary_size(size: int, units: tuple[tuple[str, int], ...]) -> str | None:
    """The largest exact binary unit spelling (`64Gi`), or None when no unit divides it."""
    for suffix, factor in units:
        if size >= factor and size % factor == 0:
            return f"{size // factor}{suffix}"
    return None
