"""Check `vllm serve` launches with vLLM's own argument parser (runs INSIDE the vLLM venv).

Shipped inside the package (spark_dsl/data/) so that an installed spark-dsl can find it; it is
never imported by spark_dsl itself, because it needs vLLM. spark_dsl.vllm_verify runs it in the
venv that tools/vllm-parser/setup-env.sh builds. Based on the checker in the project's design note
VLLM.md, Part B ("The snippet"), which was tried on the pinned release on a CPU-only box.

stdin:  {"argvs": [[...]], "configs": [{"path": str, "argv": [...]}], "expect_version": str?}
        Each argv is a whole launch: ["vllm", "serve", MODEL, ...].
        For a config, `argv` is the launch it must be equivalent to; the checker parses
        ["vllm", "serve", MODEL, "--config", path] (MODEL taken from that argv) and requires the
        parsed namespace to equal the one `argv` gives.
stdout: [{"argv": [...], "ok": bool, "error": str | null, "config": str | null}, ...]
        (argvs first, in order, then configs, in order).
Exit 0 when every verdict was produced (even if some are "not ok"); non-zero on a crash or on a
vLLM version different from `expect_version`.

Checks, in order, for each launch:
1. argparse, with abbreviations off (vLLM itself accepts unique prefixes; the compiler must not
   rely on that): unknown flags, bad numbers, bad JSON, pydantic-validated JSON configs, choices.
2. validate_parsed_serve_args (vLLM's own quick checks before loading anything).
3. The checks vLLM defers until a model exists, done here with vLLM's own enums and dataclasses:
   `--headless` with `--api-server-count`, the attention backend name, the quantization method,
   the kv-cache dtype, and the speculative config (method name, key names, value types).
"""

from __future__ import annotations

import contextlib
import dataclasses
import importlib
import io
import json
import os
import sys
import typing
from typing import Any

# Must be set before vLLM is imported: 0.26+ infers the CPU platform from it on a GPU-less box.
os.environ.setdefault("VLLM_TARGET_DEVICE", "cpu")
# With HF_HUB_OFFLINE on, EngineArgs.__post_init__ resolves the model id to a local snapshot and
# fails for every model not in the HF cache; with it off, nothing here touches the network.
os.environ.pop("HF_HUB_OFFLINE", None)
os.environ.setdefault("VLLM_LOGGING_LEVEL", "ERROR")
os.environ.setdefault("VLLM_NO_USAGE_STATS", "1")
os.environ.setdefault("DO_NOT_TRACK", "1")

# Verdicts that came back in the order the launches went in: one object per launch.
Verdict = dict[str, Any]


def _literals(tp: Any) -> set[Any]:
    """All the values of a (possibly nested) typing.Literal / Union of Literals."""
    out: set[Any] = set()
    for arg in typing.get_args(tp):
        out |= _literals(arg) if typing.get_args(arg) else {arg}
    return out


class Vllm:
    """vLLM's parser and the value sets of its deferred checks, loaded once (about 6 s)."""

    def __init__(self) -> None:
        from vllm import platforms

        if platforms.current_platform.is_unspecified():  # releases <= 0.25 ignore the env var
            from vllm.platforms.cpu import CpuPlatform

            platforms.current_platform = CpuPlatform()

        import vllm
        from pydantic import TypeAdapter
        from vllm.config import AttentionConfig, SpeculativeConfig
        from vllm.config import cache as cache_config
        from vllm.config.speculative import SpeculativeMethod
        from vllm.engine.arg_utils import EngineArgs
        from vllm.model_executor.layers.quantization import QUANTIZATION_METHODS
        from vllm.v1.attention.backends.registry import AttentionBackendEnum

        self.version: str = vllm.__version__
        self.AttentionConfig = AttentionConfig
        self.EngineArgs = EngineArgs
        self.validate_parsed_serve_args: Any = None
        for mod in ("common", "launchers", "openai"):  # moved between releases
            with contextlib.suppress(ImportError, AttributeError):
                self.validate_parsed_serve_args = importlib.import_module(
                    f"vllm.entrypoints.{mod}.cli_args"
                ).validate_parsed_serve_args
                break
        if self.validate_parsed_serve_args is None:
            raise ImportError("cannot find vLLM's validate_parsed_serve_args")

        self.quantization_methods: set[str] = set(QUANTIZATION_METHODS)
        self.kv_cache_dtypes: set[str] = set(getattr(cache_config, "KV_CACHE_DTYPES", ())) | set(
            _literals(cache_config.CacheDType)
        )
        self.attention_backends: set[str] = {m.name for m in AttentionBackendEnum}
        self.spec_methods: set[str] = {m for m in _literals(SpeculativeMethod) if m is not None}
        internal = {
            "target_model_config",
            "target_parallel_config",
            "draft_model_config",
            "draft_parallel_config",
            "draft_load_config",
        }
        fields = {f.name for f in dataclasses.fields(SpeculativeConfig)}
        self.spec_keys: set[str] = fields - internal
        hints = typing.get_type_hints(SpeculativeConfig)
        self.spec_types: dict[str, Any] = {}
        for name in self.spec_keys:
            with contextlib.suppress(Exception):  # some hints are not adaptable; skip those
                self.spec_types[name] = TypeAdapter(hints[name])

        self.top, self.serve = self.build_parser(strict=True)

    @staticmethod
    def build_parser(strict: bool = True) -> tuple[Any, Any]:
        """The top-level `vllm` parser with the `serve` subparser, shaped like vLLM's main()."""
        from vllm.entrypoints.cli.serve import ServeSubcommand
        from vllm.utils.argparse_utils import FlexibleArgumentParser

        top = FlexibleArgumentParser(prog="vllm")
        serve = ServeSubcommand().subparser_init(top.add_subparsers(dest="subparser"))
        serve.allow_abbrev = not strict  # real vLLM accepts unique prefixes; we do not
        return top, serve

    # -- checks -------------------------------------------------------------------------------

    def parse(self, argv: list[str]) -> Any:
        """argv as launched (["vllm", "serve", ...]) -> argparse namespace; raises on error."""
        if argv[:2] != ["vllm", "serve"]:
            raise ValueError("a launch must start with ['vllm', 'serve']")
        err = io.StringIO()
        try:
            with contextlib.redirect_stderr(err):
                return self.top.parse_args(list(argv[1:]))
        except SystemExit as e:
            lines = err.getvalue().strip().splitlines()
            raise ValueError(lines[-1] if lines else f"argparse exit {e.code}") from None

    def check_namespace(self, ns: Any) -> None:
        """vLLM's quick serve checks, then the checks it defers until a model exists."""
        self.validate_parsed_serve_args(ns)
        if ns.headless and (ns.api_server_count or 0) > 0:  # raised later by ServeSubcommand.cmd
            raise ValueError(f"--api-server-count={ns.api_server_count} cannot be used with --headless")
        ns.model = ns.model_tag or ns.model
        ea = self.EngineArgs.from_cli_args(ns)
        if ea.attention_backend is not None:
            self.AttentionConfig(backend=ea.attention_backend)
        if ea.quantization is not None and ea.quantization not in self.quantization_methods:
            raise ValueError(f"unknown --quantization {ea.quantization!r}")
        if ea.kv_cache_dtype not in self.kv_cache_dtypes:
            raise ValueError(f"unknown --kv-cache-dtype {ea.kv_cache_dtype!r}")
        self.check_speculative(ea)

    def check_speculative(self, ea: Any) -> None:
        spec = dict(ea.speculative_config or {})
        for key, attr in (
            ("method", "spec_method"),
            ("model", "spec_model"),
            ("num_speculative_tokens", "spec_tokens"),
        ):
            value = getattr(ea, attr, None)  # --spec-* exist from 0.25
            if value is None:
                continue
            if key in spec:
                raise ValueError(f"--{attr.replace('_', '-')} and --speculative-config['{key}'] are mutually exclusive")
            spec[key] = value
        spec = {k.replace("-", "_"): v for k, v in spec.items()}
        if bad := set(spec) - self.spec_keys:
            raise ValueError(f"unknown speculative-config keys {sorted(bad)}")
        if spec.get("method") is not None and spec["method"] not in self.spec_methods:
            raise ValueError(f"unknown speculative method {spec['method']!r}")
        for key, val in spec.items():
            if key in self.spec_types:
                self.spec_types[key].validate_python(val)
        n = spec.get("num_speculative_tokens")
        if n is not None and int(n) < 1:
            raise ValueError("num_speculative_tokens must be > 0")

    def check_argv(self, argv: list[str]) -> Any:
        ns = self.parse(argv)
        self.check_namespace(ns)
        return ns

    def check_config(self, path: str, argv: list[str]) -> list[str]:
        """Parse `vllm serve MODEL --config path` and compare it with argv's namespace."""
        model = argv[2:3] if len(argv) > 2 and not argv[2].startswith("-") else []
        from_config = vars(self.check_argv(["vllm", "serve", *model, "--config", path]))
        from_argv = vars(self.check_argv(argv))
        return _differences(from_config, from_argv)


def _differences(a: dict[str, Any], b: dict[str, Any]) -> list[str]:
    keys = sorted(set(a) | set(b))
    missing = object()
    return [
        f"{k}: config gives {a.get(k, missing)!r}, argv gives {b.get(k, missing)!r}"
        for k in keys
        if a.get(k, missing) != b.get(k, missing)
    ]


def _error(e: BaseException) -> str:
    text = " / ".join(str(e).splitlines()[:3]) or repr(e)
    return f"{type(e).__name__}: {text}"


def run(request: dict[str, Any], vllm: Vllm) -> list[Verdict]:
    verdicts: list[Verdict] = []
    for argv in request.get("argvs", []):
        try:
            vllm.check_argv(list(argv))
            verdicts.append({"argv": argv, "ok": True, "error": None, "config": None})
        except Exception as e:  # any failure is a verdict, not a crash
            verdicts.append({"argv": argv, "ok": False, "error": _error(e), "config": None})
    for item in request.get("configs", []):
        path, argv = item["path"], list(item["argv"])
        try:
            diffs = vllm.check_config(path, argv)
            error = "parsed namespace differs from the argv's: " + "; ".join(diffs) if diffs else None
            verdicts.append({"argv": argv, "ok": not diffs, "error": error, "config": path})
        except Exception as e:
            verdicts.append({"argv": argv, "ok": False, "error": _error(e), "config": path})
    return verdicts


def main() -> int:
    # vLLM logs to stdout; keep the real stdout for the JSON answer and send everything else,
    # C-level output included, to stderr.
    out = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)
    request = json.load(sys.stdin)
    vllm = Vllm()
    expected = request.get("expect_version")
    if expected is not None and vllm.version != expected:
        print(
            f"check_launches: this venv has vLLM {vllm.version}, expected {expected}; "
            "rebuild it with tools/vllm-parser/setup-env.sh",
            file=sys.stderr,
        )
        return 3
    json.dump(run(request, vllm), out)
    out.write("\n")
    out.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
