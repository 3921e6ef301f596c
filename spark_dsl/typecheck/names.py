"""The names a spec gives that land in the outputs as names: Secrets, their keys, environment
variables. Each has its pattern and the nearest valid spelling, which the fix writes."""

from __future__ import annotations

import re

from spark_dsl.patterns import lazy_regex

# Used with fullmatch: `$` would also accept a trailing newline (`secret("hf-token\n")`).
ENV_NAME = lazy_regex(r"[A-Za-z_][A-Za-z0-9_]*")
# A Secret's name is also, upper-cased with `_` for `-`, the variable a host target reads it from.
SECRET_NAME = lazy_regex(r"[a-z]([a-z0-9-]*[a-z0-9])?")
# The keys Kubernetes accepts in a Secret (`[-._a-zA-Z0-9]+`, at most 253): inert in every target.
SECRET_KEY = lazy_regex(r"[-._a-zA-Z0-9]+")


def secret_name(name: str) -> str | None:
    """The nearest Secret name: lowercase, other characters to `-`, starting with a letter."""
    cleaned = re.sub(r"[^a-z0-9-]+", "-", name.lower()).lstrip("-0123456789")[:63].strip("-")
    return cleaned or None


def env_name(name: str) -> str | None:
    """The nearest environment variable name: other characters to `_`, no leading digit."""
    cleaned = re.sub(r"[^A-Za-z0-9_]+", "_", name).lstrip("0123456789").strip("_")
    return cleaned or None


def kubernetes_secret_key(key: str) -> str | None:
    """The nearest key a Secret holds: other characters to `-`."""
    cleaned = re.sub(r"[^-._a-zA-Z0-9]+", "-", key).strip("-")[:253]
    return cleaned or None
