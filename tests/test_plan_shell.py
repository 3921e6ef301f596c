"""`spark plan --node N --format shell`: pasted into bash with tests/stubs/vllm on PATH and the
run-time values exported, it runs exactly the argv and environment the plan JSON gives that node.

Bash runs the text from its standard input, as a terminal paste does; the stub records what each
process received (argv and every environment variable).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from validators import STUBS_DIR, load_stub_records

from spark_dsl.cli import main
from spark_dsl.targets import placeholders

REPO = Path(__file__).resolve().parent.parent
SPEC_FILES = sorted(p for p in (REPO / "specs").rglob("*.spark") if "profiles" not in p.parts)
# Distinct values for every run-time placeholder and secret, so a swapped variable shows.
ADDRESSES = {
    placeholders.HEAD: "10.0.0.1",
    placeholders.PREFILL: "10.0.1.1",
    placeholders.DECODE: "10.0.2.1",
    placeholders.NODE_ADDRESS: "10.9.9.9",
    placeholders.NODE_INTERFACE: "ib9",
}
SECRETS = {"HF_TOKEN": "hf-secret-value", "VLLM_API_KEY": "api-secret-value", "MY_TOKEN": "from-env"}
# What bash itself puts into a child's environment.
BASH_OWN = {"PWD", "SHLVL", "_", "OLDPWD"}


def cli(*args: str, cwd: Path = REPO) -> Any:
    """The CLI in-process (the whole sweep would take minutes as processes), from `cwd`."""
    old = Path.cwd()
    os.chdir(cwd)
    try:
        return CliRunner().invoke(main, list(args), catch_exceptions=False)
    finally:
        os.chdir(old)


def plan_json(spec: Path, cwd: Path = REPO) -> list[dict[str, Any]]:
    r = cli("plan", str(spec), "--format", "json", cwd=cwd)
    assert r.exit_code == 0, r.output
    deployments: list[dict[str, Any]] = json.loads(r.stdout)["deployments"]
    return deployments


def fill(text: str) -> str:
    """A JSON argv or env value with the compiler's placeholders replaced by the exported values."""
    for name, value in ADDRESSES.items():
        text = text.replace(f"${{{name}}}", value)
    return text


def paste(script: str, folder: Path, env: dict[str, str] | None = None, interactive: bool = False) -> Any:
    """`script` fed to bash on its standard input, under a bare environment: PATH with the stubs
    first, the placeholders and secrets exported (unless `env` says otherwise)."""
    records = folder / "records"
    records.mkdir(exist_ok=True)
    base = {
        "PATH": f"{STUBS_DIR}:{os.path.dirname(sys.executable)}:/usr/bin:/bin",
        "LC_ALL": "C",
        "HOME": str(folder),
        "SPARK_STUB_RECORD_DIR": str(records),
        "SPARK_STUB_RECORD_ENV": "*",
        "SPARK_STUB_NETWORK": "0",
        "SPARK_STUB_SERVE_SECONDS": "0",
        **ADDRESSES,
        **SECRETS,
        **(env or {}),
    }
    argv = ["bash", "-i"] if interactive else ["bash"]
    proc = subprocess.run(argv, input=script, env=base, cwd=folder, capture_output=True, text=True, timeout=120)
    return proc, base


def records(folder: Path) -> list[dict[str, Any]]:
    return [r for r in load_stub_records(folder / "records") if r.get("finished")]


def launched(record: dict[str, Any]) -> list[str]:
    return [record["prog"], *record["argv"]]


def expected_env(launch: dict[str, Any], base: dict[str, str]) -> dict[str, str]:
    """The bare environment, then the launch's environment, then its secrets from their variables."""
    env = {**base, **{name: fill(value) for name, value in launch["env"].items()}}
    for name, ref in launch["secret_env"].items():
        source = ref["env"] if "env" in ref else ref["secret"].upper().replace("-", "_")
        env[name] = base[source]
    return env


def check_node(spec: Path, deployment: dict[str, Any], node: int, tmp_path: Path) -> None:
    r = cli("plan", str(spec), "-d", deployment["name"], "--node", str(node), "--format", "shell")
    assert r.exit_code == 0, r.output
    folder = tmp_path / f"{deployment['name']}-{node}"
    folder.mkdir()
    proc, base = paste(r.stdout, folder)
    assert proc.returncode == 0, proc.stderr
    expected = [launch for launch in deployment["launches"] if launch["node_rank"] == node]
    found = sorted(records(folder), key=lambda rec: rec["prog"])
    expected.sort(key=lambda launch: launch["argv"][0])
    assert [launched(rec) for rec in found] == [[fill(a) for a in launch["argv"]] for launch in expected]
    for rec, launch in zip(found, expected, strict=True):
        env = {k: v for k, v in rec["env"].items() if k not in BASH_OWN and not k.startswith("SPARK_STUB_")}
        want = {k: v for k, v in expected_env(launch, base).items() if not k.startswith("SPARK_STUB_")}
        assert env == want


@pytest.mark.parametrize("spec", SPEC_FILES, ids=lambda p: p.stem)
def test_every_node_of_every_spec_runs_what_the_plan_json_says(spec: Path, tmp_path: Path) -> None:
    for deployment in plan_json(spec):
        nodes = sorted({launch["node_rank"] for launch in deployment["launches"]})
        assert nodes, deployment["name"]
        for node in nodes:
            check_node(spec, deployment, node, tmp_path)


def test_node_1_of_the_prefill_decode_spec_through_the_real_command(spark: Callable[..., Any], tmp_path: Path) -> None:
    """The acceptance case, with the `spark` a user runs: node 1 is the decode pool."""
    spec = REPO / "specs/nvidia/b200-prefill-decode.spark"
    shell = spark("plan", str(spec), "--node", "1", "--format", "shell", cwd=REPO)
    assert shell.returncode == 0, shell.stderr
    assert 'VLLM_NIXL_SIDE_CHANNEL_HOST="${SPARK_NODE_ADDRESS}"' in shell.stdout
    assert "'${" not in shell.stdout  # no run-time value in single quotes
    plan = json.loads(spark("plan", str(spec), "--format", "json", cwd=REPO).stdout)
    (launch,) = [x for x in plan["deployments"][0]["launches"] if x["node_rank"] == 1]
    proc, _ = paste(shell.stdout, tmp_path)
    assert proc.returncode == 0, proc.stderr
    (rec,) = records(tmp_path)
    assert launched(rec) == [fill(a) for a in launch["argv"]]
    assert rec["env"]["VLLM_NIXL_SIDE_CHANNEL_HOST"] == ADDRESSES[placeholders.NODE_ADDRESS]
    assert rec["env"]["VLLM_API_KEY"] == SECRETS["VLLM_API_KEY"]


HOSTILE = r"""it's "q" $(touch CANARY/a) `touch CANARY/b`; touch CANARY/c ${SPARK_NODE_ADDRESS} $HOME \ é"""


def test_values_the_spec_wrote_reach_the_process_as_written(tmp_path: Path) -> None:
    """Quotes, `$(...)`, backticks, `;`, a placeholder's spelling and `$HOME` in user values: bash
    passes them through as text (only compiler-written placeholders are variables)."""
    canary = tmp_path / "canary"
    canary.mkdir()
    value = HOSTILE.replace("CANARY", str(canary))
    quoted = value.replace("\\", "\\\\").replace('"', '\\"')
    spec = tmp_path / "hostile.spark"
    spec.write_text(
        "deployment hostile {\n  model = muse-spark-open\n  accelerator = b200\n"
        f'  serve {{\n    served_model_name = "{quoted}"\n    api_key = env("MY_TOKEN")\n'
        f'    extra_args = ["--chat-template", "{quoted}"]\n'
        f'    env {{\n      MY_SETTING = "{quoted}"\n    }}\n  }}\n'
        "  target shell {}\n}\n",
        encoding="utf-8",
    )
    (deployment,) = plan_json(spec, cwd=tmp_path)
    launch = deployment["launches"][0]
    assert value in launch["argv"] and launch["env"]["MY_SETTING"] == value
    r = cli("plan", str(spec), "--format", "shell", cwd=tmp_path)
    assert r.exit_code == 0, r.output
    proc, _ = paste(r.stdout, tmp_path)
    assert proc.returncode == 0, proc.stderr
    (rec,) = records(tmp_path)
    assert launched(rec) == launch["argv"]  # no placeholder of the plan: nothing to fill
    assert rec["env"]["MY_SETTING"] == value
    assert rec["env"]["VLLM_API_KEY"] == SECRETS["MY_TOKEN"]  # env("MY_TOKEN") read from MY_TOKEN
    assert list(canary.iterdir()) == []


@pytest.mark.parametrize("interactive", [False, True], ids=["script", "terminal"])
def test_a_missing_run_time_value_stops_the_node_before_anything_starts(tmp_path: Path, interactive: bool) -> None:
    """Node 0 of P/D needs the decode pool's address: unset, bash names it and starts neither the
    router nor the prefill server, also in an interactive shell (which would go on to the next line)."""
    r = cli("plan", "specs/nvidia/b200-prefill-decode.spark", "--node", "0", "--format", "shell")
    assert r.exit_code == 0, r.output
    proc, _ = paste(r.stdout, tmp_path, {placeholders.DECODE: ""}, interactive=interactive)
    assert "SPARK_DECODE_ADDRESS: set SPARK_DECODE_ADDRESS to the IPv4 address of node 1 (the first node of" in (
        proc.stderr
    )
    assert load_stub_records(tmp_path / "records") == []


def test_the_shell_form_says_which_node_and_deployment(spark: Callable[..., Any]) -> None:
    pd = "specs/nvidia/b200-prefill-decode.spark"
    both = spark("plan", pd, "specs/nvidia/b200-nvfp4.spark", "--format", "shell", cwd=REPO)
    assert both.returncode == 2
    assert "--format shell prints one deployment; pick one with -d NAME (found: muse-b200-pd, muse-b200)" in (
        both.stderr
    )
    no_node = spark("plan", pd, "--format", "shell", cwd=REPO)
    assert no_node.returncode == 2
    assert "deployment muse-b200-pd runs on 2 nodes; pick one with --node 0 to --node 1" in no_node.stderr
    too_far = spark("plan", pd, "--node", "2", "--format", "shell", cwd=REPO)
    assert too_far.returncode == 2
    assert "deployment muse-b200-pd runs on nodes 0-1; there is no --node 2" in too_far.stderr
    single = spark("plan", "specs/nvidia/b200-nvfp4.spark", "--format", "shell", cwd=REPO)
    assert single.returncode == 0 and single.stdout.startswith("# muse-b200, node 0 of 1 (server)")


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ("accelerator = h100", "deployment bad has errors, so node 0 has nothing to run"),
        ("accelerator = b200\n  nodes = 0", "no deployment could be planned, so there is nothing to run"),
    ],
    ids=["planned", "unplanned"],
)
def test_a_deployment_with_errors_has_nothing_to_run(
    spark: Callable[..., Any], tmp_path: Path, body: str, message: str
) -> None:
    (tmp_path / "bad.spark").write_text(f"deployment bad {{\n  model = muse-spark-open\n  {body}\n}}\n")
    r = spark("plan", "bad.spark", "--format", "shell")
    assert r.returncode == 1
    assert r.stdout == ""
    assert message in r.stderr
    assert "error[" in r.stderr  # the diagnostics that say why, on stderr


def test_node_filters_the_text_and_json_plans(spark: Callable[..., Any]) -> None:
    pd = "specs/nvidia/b200-prefill-decode.spark"
    text = spark("plan", pd, "--node", "1", cwd=REPO)
    assert text.returncode == 0, text.stderr
    assert "launch decode on node 1:" in text.stdout and "on node 0" not in text.stdout
    doc = json.loads(spark("plan", pd, "--node", "0", "--format", "json", cwd=REPO).stdout)
    assert [(x["role"], x["node_rank"]) for x in doc["deployments"][0]["launches"]] == [
        ("router", 0),
        ("prefill", 0),
    ]


@pytest.mark.parametrize(
    ("spec", "node"),
    [("nvidia/b200-prefill-decode", 0), ("nvidia/b200-prefill-decode", 1), ("nvidia/b200-data-parallel-2-nodes", 1)],
)
def test_shell_snapshot(spec: str, node: int, snapshot: Any) -> None:
    r = cli("plan", f"specs/{spec}.spark", "--node", str(node), "--format", "shell")
    assert r.exit_code == 0, r.output
    assert r.stdout == snapshot


def test_the_example_in_plan_md_is_the_current_output() -> None:
    page = (REPO / "docs" / "plan.md").read_text(encoding="utf-8")
    example = page.split("prints, for the decode node of that deployment:\n\n```bash\n", 1)[1].split("```", 1)[0]
    r = cli("plan", "specs/nvidia/b200-prefill-decode.spark", "--node", "1", "--format", "shell")
    assert r.stdout == example
