"""A launch's options are data (`Launch.options`), and its argv is rendered from them.

The snapshot holds every committed spec's launches as the argv of the compiler that still wrote
the argv by hand (recorded before the options existed): rendering from the options must give the
same words. The vLLM config target and SPK902 read those options (and the one reading of the
user's `extra_args`); neither walks an argv with the flag table's parser again.
"""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any

import pytest
import yaml

from spark_dsl import vllm_flags
from spark_dsl.pipeline import collect_paths, run
from spark_dsl.plan.model import Launch
from spark_dsl.plan.options import Option
from spark_dsl.plan.template import Template
from spark_dsl.rules.safety import managed_flags
from spark_dsl.targets import vllm_config
from spark_dsl.targets.common import TargetError

REPO = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def plans() -> dict[str, Any]:
    """The committed specs' plans, with their launches, by deployment name."""
    result = run(collect_paths([str(REPO / "specs")], REPO), REPO)
    assert not result.has_errors, [d.message for d in result.diagnostics]
    return {planned.plan.name: planned for planned in result.planned()}


def _launch_lines(planned: Any) -> str:
    """Each launch's argv template and its node's argv, one word a line; compiler-written text that
    holds a placeholder (a Template, the only text the targets fill) is marked."""
    out = []
    for launch in planned.launches:
        out.append(f"{launch.role} node {launch.node_rank}")
        out += [f"  template {word}" + (" (filled)" if isinstance(word, Template) else "") for word in launch.template]
        out += [f"  argv {word}" for word in launch.argv]
    return "\n".join(out)


def test_argv_of_every_committed_spec_is_unchanged(plans: dict[str, Any], snapshot: Any) -> None:
    assert {name: _launch_lines(planned) for name, planned in sorted(plans.items())} == snapshot


# ---- no argv parsed back -----------------------------------------------------------------------

# vLLM's argv walkers in the flag table module: what reading an argv back would call.
ARGV_PARSERS = ("check_argv", "check_config", "_scan", "_take_values")


def refuse_argv_parsers(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every argv walker of the flag table module raises when called."""

    def refuse(*_: object, **__: object) -> None:
        raise AssertionError("an argv was parsed back with the flag table's parser")

    for name in ARGV_PARSERS:
        monkeypatch.setattr(vllm_flags, name, refuse)


@pytest.fixture
def no_argv_parser(monkeypatch: pytest.MonkeyPatch) -> None:
    refuse_argv_parsers(monkeypatch)


def _imports(module: Any) -> set[str]:
    tree = ast.parse(Path(module.__file__).read_text(encoding="utf-8"))
    found = {alias.name for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names}
    return found | {node.module or "" for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)}


def test_the_vllm_config_target_never_reads_the_flag_table() -> None:
    assert "spark_dsl.vllm_flags" not in _imports(vllm_config)


@pytest.mark.usefixtures("no_argv_parser")
def test_vllm_config_keys_are_the_committed_launches_options(
    plans: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Without the flag table at all (no committed spec has `extra_args`), each committed
    vllm-config.yaml is still the mapping of its launch's options."""
    monkeypatch.setattr(vllm_flags, "flag_table", lambda: pytest.fail("the flag table was read"))
    files = sorted((REPO / "targets").glob("*/vllm-config.yaml"))
    assert files
    for path in files:
        (launch,) = plans[path.parent.name].launches
        assert vllm_config.options(launch) == yaml.safe_load(path.read_text(encoding="utf-8")), path


@pytest.mark.usefixtures("no_argv_parser")
def test_vllm_config_writes_options_as_keys_and_extra_args_as_read() -> None:
    launch = Launch(
        "server",
        0,
        ("vllm", "serve", "m"),
        (),
        options=(Option("--port", "8000"), Option("--enable-prefix-caching", False), Option("--headless")),
        extra_args=("--uvicorn-log-level", "warning", "--enable-log-requests", "--served_model_name=x", "--seed", "-1"),
    )
    assert launch.argv[3:9] == (
        "--port",
        "8000",
        "--no-enable-prefix-caching",
        "--headless",
        "--uvicorn-log-level",
        "warning",
    )
    assert vllm_config.options(launch) == {
        "port": 8000,
        "no-enable-prefix-caching": True,
        "headless": True,
        "uvicorn-log-level": "warning",
        "enable-log-requests": True,
        "served_model_name": "x",
        "seed": "-1",
    }


def test_spk902_reads_extra_args_as_options(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A managed flag under an alias, with an `=value`, and with a list of values: each found, and
    each fix takes exactly the items its option takes, with no argv walked. (The plan is built
    first: SPK903 checks the user's words with vLLM's parser, as it should.)"""
    args = ["--max_model_len=8", "--served-model-name", "a", "b", "--enable-log-requests", "-tp", "2"]
    written = "[" + ", ".join(f'"{arg}"' for arg in args) + "]"
    spec = tmp_path / "d.spark"
    spec.write_text(
        f"deployment d {{\n  model = muse-spark-open\n  accelerator = b200\n  serve {{ extra_args = {written} }}\n}}\n"
    )
    (plan,) = run(collect_paths([str(spec)], tmp_path), tmp_path).plans
    refuse_argv_parsers(monkeypatch)
    found = list(managed_flags(plan))
    assert [f.message.split("`")[1] for f in found] == ["--max_model_len=8", "--served-model-name", "-tp"]
    text = spec.read_text()
    left = []
    for finding in found:
        assert finding.fix is not None
        (edit,) = finding.fix.edits
        fixed = text[: edit.location.span.start] + edit.text + text[edit.location.span.end :]
        left.append(fixed.split("extra_args = ")[1].split(" }")[0])
    assert left == [
        '["--served-model-name", "a", "b", "--enable-log-requests", "-tp", "2"]',
        '["--max_model_len=8", "--enable-log-requests", "-tp", "2"]',
        '["--max_model_len=8", "--served-model-name", "a", "b", "--enable-log-requests"]',
    ]


@pytest.mark.parametrize(
    ("extra", "error"),
    [
        (("--port", "1"), "`--port` is given twice"),
        (("--enable-log-requests", "stray"), "`stray` is a positional argument"),
        (("--uvicorn-log-level",), "`--uvicorn-log-level` has no value"),
        (("-q", "1"), "`-q` is a short option"),
    ],
)
def test_vllm_config_refuses_what_a_config_file_cannot_hold(extra: tuple[str, ...], error: str) -> None:
    launch = Launch("server", 0, ("vllm", "serve", "m"), (), options=(Option("--port", "8000"),), extra_args=extra)
    with pytest.raises(TargetError, match=error):
        vllm_config.options(launch)
