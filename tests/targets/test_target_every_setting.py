"""Every string setting of the schema, pushed into every target that carries it with the nastiest
value its checks allow, arrives byte-identical and runs nothing.

The settings are read from the schema (spark_dsl/schema.py) and the targets each one changes from
docs/keys.md's table (spark_dsl/keys_reference.py), so a string key added later is pushed through
its targets by this test unchanged: with the default hostile value of its kind, unless VALUES names
the narrower value its checks allow, in the deployments PLACES names if it needs a context.

Read-back, per target:
- serve.sh runs under `LC_ALL=C` with a `vllm` that records its argv and environment as bytes;
- job.sbatch runs with a recording `srun` (the container image, mounts, `env` assignments and the
  launch) and its `#SBATCH` lines are read as sbatch reads them;
- compose.yaml is read by `docker compose config` (compose-go, YAML 1.2);
- kubernetes.yaml is read by PyYAML (YAML 1.1) and by Go's yaml.v3 (inside a Compose extension
  field) to the same documents, `$(NAME)` and `$$` expanded as the kubelet does;
- vllm-config.yaml is read as vLLM reads it (PyYAML), and the commands of its header run with the
  recording `vllm`.
A canary folder stays empty: no `$(...)`, backtick or `;` in any value ever ran.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import textwrap
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import validators as v
from target_helpers import compose_value, config_argv, kubernetes_expand

from spark_dsl.keys_reference import used_by
from spark_dsl.pipeline import run
from spark_dsl.schema import BlockSpec, Kind, deployment_schema
from spark_dsl.targets import registry as target_table

MODEL_CACHE = "/root/.cache/huggingface"
STRING_KINDS = (Kind.STRING, Kind.STRING_LIST, Kind.SECRET, Kind.VOLUME)


# ---- the settings, from the schema ----------------------------------------------------------


@dataclass(frozen=True, slots=True)
class StringSetting:
    path: str  # dotted, as docs/keys.md names it: `serve.host`, `target.kubernetes.labels`
    kind: Kind
    is_map: bool  # a map block (`serve.env`): `NAME = "value"` lines


def string_settings(block: BlockSpec | None = None, prefix: str = "") -> list[StringSetting]:
    """Every key and map block of the schema that holds user text."""
    block = block or deployment_schema()
    found = [
        StringSetting(prefix + name, key.kind, False) for name, key in block.keys.items() if key.kind in STRING_KINDS
    ]
    for name, inner in block.blocks.items():
        if inner.map_of in STRING_KINDS:
            found.append(StringSetting(prefix + name, inner.map_of, True))
        for label, body in (inner.labels or {}).items():
            found += string_settings(body, f"{prefix}{name}.{label}.")
        found += string_settings(inner, f"{prefix}{name}.")
    return found


SETTINGS = {s.path: s for s in string_settings()}


# ---- the values -------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Secret:
    name: str
    key: str

    @property
    def variable(self) -> str:
        """The host variable a host target reads the secret from."""
        return self.name.upper().replace("-", "_")


@dataclass(frozen=True, slots=True)
class HostPath:
    path: str


def nasty(canary: Path, tag: str) -> str:
    """Quotes, `$()`, backticks, `${X}`, a placeholder, `%`, `#`, non-ASCII and invisible
    characters, YAML-typed text: everything but `,` and `:` (mount lists split there, SPK908)."""
    return (
        f'{tag} it\'s "q" $(touch {canary}/{tag}1) `touch {canary}/{tag}2`; touch {canary}/{tag}3 '
        "${HOME} $$ ${SPARK_HEAD_ADDRESS} $(LWS_LEADER_ADDRESS) %x #y 1e3 é\u00a0漢\u202e \\ |&<>*?~"
    )


def default_value(setting: StringSetting, canary: Path) -> Any:
    """The hostile value of a setting's kind, for a key VALUES does not name."""
    tag = setting.path.replace(".", "_").replace("-", "_")
    if setting.is_map:
        return {f"X_{tag.upper()}": nasty(canary, tag)}
    if setting.kind is Kind.STRING_LIST:
        return [nasty(canary, tag)]
    if setting.kind is Kind.SECRET:
        return Secret(tag.replace("_", "-"), "0X1F")
    if setting.kind is Kind.VOLUME:
        return HostPath("/mnt/" + nasty(canary, tag))
    return nasty(canary, tag)


# Keys whose checks allow less than the default, or whose default would prove less. Each value is
# distinct from every other (a test checks), so a value found in an output is that key's.
VALUES: dict[str, Callable[[Path], Any]] = {
    # A second line and a tab in the name clients use.
    "serve.served_model_name": lambda c: nasty(c, "served_model_name") + "\nsecond\tline",
    # vLLM flags and their values (a config file holds options only); `1e3` is YAML-typed.
    "serve.extra_args": lambda c: ["--chat-template", nasty(c, "extra_args"), "--revision", "1e3"],
    # Variable names (SPK102); values that YAML 1.1, 1.2 or Go's yaml.v2/v3 would type.
    "serve.env": lambda c: {
        "MY_VAR": nasty(c, "env") + "\n", "SMALL": "1e-3", "OCTAL": "0o17", "BOOL": "yes", "Y": "y"
    },
    # Secret names are DNS labels starting with a letter, keys Secret keys (SPK123): YAML-typed
    # ones (`on`, `null`) that are the host variables ON and NULL.
    "serve.api_key": lambda c: Secret("on", "4e3"),
    "runtime.hf_token": lambda c: Secret("null", "0o20"),
    # Paths: Compose mounts a local model path; the caches are folders. Compose and Kubernetes
    # take `,` and `:` in a path, which the Slurm containers' mount lists cannot (SPK908).
    "runtime.model_path": lambda c: "/models/" + nasty(c, "model_path"),
    "runtime.model_cache": lambda c: "/cache/" + nasty(c, "model_cache"),
    "target.compose.model_cache": lambda c: "/host/" + nasty(c, "compose_cache") + " a:b,c",  # SPK511: a path
    "target.kubernetes.model_cache": lambda c: HostPath("/mnt/" + nasty(c, "kubernetes_cache") + " a:b,c"),
    # Names the platforms accept (SPK502, SPK503, SPK504, SPK507, SPK509, SPK510), YAML-typed.
    "target.compose.project": lambda c: "1e5",
    "target.slurm.partition": lambda c: "2e5,0b101",
    "target.slurm.account": lambda c: "0o21",
    "target.slurm.qos": lambda c: "nil.0",
    "target.slurm.output": lambda c: "logs/0o22-%x.out",
    # Slurm's operators and host lists (SPK541), sbatch's own options (SPK542, SPK543), YAML-typed.
    "target.slurm.constraint": lambda c: "6e3&ib|[a*2]",
    "target.slurm.reservation": lambda c: "7e3,0o23",
    "target.slurm.exclude": lambda c: "node[1-2],8e3",
    "target.slurm.extra_directives": lambda c: ["--comment=9e3", "--mail-type=END,FAIL"],
    "target.kubernetes.namespace": lambda c: "2e3",
    "target.kubernetes.labels": lambda c: {"example.com/tier": "3e3"},
    "target.kubernetes.node_selector": lambda c: {"example.com/gpu": "Off"},
    # A device-plugin resource name is a key of `resources.limits`: a qualified name.
    "target.kubernetes.rdma_resource": lambda c: "rdma/5e3",
    # The production pack (SPK530, SPK536): object names, label keys and values, a taint effect.
    "target.kubernetes.priority_class": lambda c: "1e7",
    "target.kubernetes.service_account": lambda c: "0o25",
    "target.kubernetes.pull_secrets": lambda c: ["2e7", "null.1"],
    "target.kubernetes.spread_over": lambda c: "example.com/3e7",
    "target.kubernetes.tolerations": lambda c: {"example.com/4e7": "NoExecute"},
    "target.kubernetes.node_affinity": lambda c: {"example.com/5e7": "6e7"},
    "target.kubernetes.metrics.labels": lambda c: {"example.com/7e7": "8e7"},
    # A Linux CPU list (SPK240); one rank binds it whole, so it arrives as written.
    "runtime.cpu_cores": lambda c: "0-3,9",
}  # fmt: skip


def leaves(value: Any) -> list[str]:
    """The strings of a value that must arrive somewhere."""
    if isinstance(value, Secret):
        return [value.name, value.key]
    if isinstance(value, HostPath):
        return [value.path]
    if isinstance(value, dict):
        return [*value, *value.values()]
    if isinstance(value, list):
        return list(value)
    return [value]


def value_of(setting: StringSetting, canary: Path) -> Any:
    make = VALUES.get(setting.path)
    return make(canary) if make is not None else default_value(setting, canary)


# ---- the spec: each setting in the deployments that give it a context -------------------------

# Every target that runs a launch, from the target table.
LAUNCHING = [t.kind for t in target_table.all_targets() if not t.client]
BASE = ["model       = muse-spark-open", "accelerator = b200", "parallel    = tp + ep"]
# Block path -> lines every deployment starts with; a setting's lines are added to its block.
DEPLOYMENTS: dict[str, dict[tuple[str, ...], list[str]]] = {
    # One node, every target: Slurm in pyxis.
    "every": {(): BASE, **{(f"target {kind}",): [] for kind in LAUNCHING}, ("target slurm",): ["container = pyxis"]},
    # Slurm in Apptainer (`--bind`, `docker://IMAGE`), and on the host (`HF_HOME`).
    "every-apptainer": {(): BASE, ("target slurm",): ["container = apptainer"]},
    "every-host": {(): BASE, ("target slurm",): []},
    # Compose's own model_cache replaces runtime.model_cache there.
    "every-cache": {(): BASE, ("target compose",): []},
    # Prefill/decode with a router, over InfiniBand, with the claim spark creates.
    # KEDA's trigger, where `autoscale.prometheus` lands (with the monitor its query reads).
    "every-keda": {(): BASE, ("target kubernetes", "metrics"): [], ("target kubernetes", "autoscale"): ["via = keda"]},
    "every-pd": {
        (): BASE,
        ("disaggregation", "prefill"): ["nodes = 1"],
        ("disaggregation", "decode"): ["nodes = 1"],
        ("runtime",): ["fabric = infiniband"],
        ("target slurm",): ["container = pyxis"],
        ("target kubernetes",): ['model_cache = pvc("model-cache")', "cache_size  = 1TiB"],
    },
}
# vLLM's CPU backend, every target, for the settings only it reads.
DEPLOYMENTS["every-cpu"] = {
    (): ["model       = llama-3-1-8b", "accelerator = cpu"],
    ("runtime",): ["host_memory = 64GiB"],
    **{(f"target {kind}",): [] for kind in LAUNCHING},
}
# Where a setting goes, when not where DEFAULT_PLACES puts it.
PLACES = {
    "runtime.image": ("every", "every-apptainer"),  # Slurm on the host runs no image
    "target.compose.model_cache": ("every-cache",),
    "runtime.router_image": ("every-pd",),  # only a P/D deployment has a router
    "target.kubernetes.storage_class": ("every-pd",),  # of the claim spark creates
    "target.kubernetes.rdma_resource": ("every-pd",),  # with `fabric = infiniband`
    "target.kubernetes.autoscale.prometheus": ("every-keda",),  # used with `via = keda` only
    "runtime.cpu_cores": ("every-cpu",),  # vLLM's CPU backend only
}


def block_path(path: str) -> tuple[str, ...]:
    """`target.slurm.partition` -> ("target slurm", "partition")."""
    parts = path.split(".")
    return (f"target {parts[1]}", *parts[2:]) if parts[0] == "target" else tuple(parts)


def declared(deployment: str) -> set[str]:
    """The targets a deployment declares."""
    return {block[0].removeprefix("target ") for block in DEPLOYMENTS[deployment] if block and " " in block[0]}


def places(path: str) -> tuple[str, ...]:
    if path in PLACES:
        return PLACES[path]
    where = block_path(path)
    if where[0].startswith("target "):
        kind = where[0].removeprefix("target ")
        return tuple(
            name
            for name in DEPLOYMENTS
            if kind in declared(name) and name not in ("every-cache", "every-pd", "every-keda", "every-cpu")
        )
    return ("every", "every-apptainer", "every-host")


def spark_string(text: str) -> str:
    """`text` as a .spark string literal (control characters as `\\u{..}`)."""
    out = []
    for ch in text:
        if ch in '"\\':
            out.append("\\" + ch)
        elif ch == "\n":
            out.append("\\n")
        elif not ch.isprintable():
            out.append(f"\\u{{{ord(ch):x}}}")
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


def spark_value(value: Any) -> str:
    if isinstance(value, Secret):
        return f'secret("{value.name}", key = "{value.key}")'
    if isinstance(value, HostPath):
        return f"hostpath({spark_string(value.path)})"
    if isinstance(value, list):
        return "[" + ", ".join(spark_string(item) for item in value) + "]"
    return spark_string(value)


def render_blocks(blocks: dict[tuple[str, ...], list[str]], at: tuple[str, ...], indent: str) -> list[str]:
    out = [indent + line for line in blocks.get(at, [])]
    children = [b for b in blocks if len(b) == len(at) + 1 and b[: len(at)] == at]
    # Parents without lines of their own (`disaggregation`) appear through their children.
    parents = {b[: len(at) + 1] for b in blocks if len(b) > len(at) + 1 and b[: len(at)] == at}
    for child in sorted(set(children) | parents):
        out += [f"{indent}{child[-1]} {{", *render_blocks(blocks, child, indent + "  "), f"{indent}}}"]
    return out


def spec(values: dict[str, Any]) -> str:
    texts = []
    for name, base in DEPLOYMENTS.items():
        blocks = {at: list(lines) for at, lines in base.items()}
        for path, value in values.items():
            if name not in places(path):
                continue
            where = block_path(path)
            if SETTINGS[path].is_map:
                lines = [f"{json.dumps(k)} = {spark_string(x)}" for k, x in value.items()]
                blocks.setdefault(where, []).extend(lines)
            else:
                blocks.setdefault(where[:-1], []).append(f"{where[-1]} = {spark_value(value)}")
        texts.append("\n".join([f"deployment {name} {{", *render_blocks(blocks, (), "  "), "}", ""]))
    return "\n".join(texts)


# ---- build and read back ----------------------------------------------------------------------

# A `vllm` that only records its argv and environment as bytes (tests/stubs/vllm also binds the
# `--host` it is given, which a hostile host name cannot be).
RECORDER = """#!/usr/bin/env python3
import json, os, sys, time
name = "vllm-%020d-%d" % (time.time_ns(), os.getpid())  # in the order the processes ran
with open(os.path.join(os.environ["SPARK_TEST_RECORDS"], name), "w") as f:
    json.dump({"argv": [os.fsencode(a).hex() for a in sys.argv[1:]],
               "env": {k.hex(): x.hex() for k, x in os.environb.items()}}, f)
"""
STUB_SLURM = {
    # The job's address probe (`srun --nodes=N ... bash -c "$probe"`) answers for N nodes, with each
    # node's interface when the probe looks it up; a launch step is recorded, NUL-separated.
    "srun": 'case " $* " in *" bash -c "*)\n'
    '  n=1; for a in "$@"; do case "$a" in --nodes=*) n="${a#--nodes=}" ;; esac; done\n'
    '  nic=""; case "$*" in *spark_node_interface*) nic=" eth" ;; esac\n'
    '  for ((i = 0; i < n; i++)); do echo "$i 10.0.0.$((i + 1))${nic:+$nic$i}"; done; exit 0 ;;\nesac\n'
    'printf "%s\\0" "$@" > "$SPARK_TEST_RECORDS/srun-$$"',
    "curl": "exit 0",
    "vllm": None,  # the RECORDER
}  # fmt: skip


@dataclass
class Run:
    """What reached the processes a file starts: each process's argv and environment, as bytes."""

    argvs: list[list[bytes]]
    envs: list[dict[bytes, bytes]]


def stubs(folder: Path) -> Path:
    bin_dir = folder / "bin"
    bin_dir.mkdir()
    for prog, body in STUB_SLURM.items():
        (bin_dir / prog).write_text(RECORDER if body is None else f"#!/usr/bin/env bash\n{body}\n")
        (bin_dir / prog).chmod(0o755)
    return bin_dir


def run_recorded(
    argv: list[str], folder: Path, cwd: Path, secrets: dict[str, str], extra: dict[str, str] | None = None
) -> Run:
    """Runs `argv` under `LC_ALL=C` with the recording stubs first in PATH and the secrets' host
    variables set; those variables are left out of the recorded environments, so a secret's value
    is found there only where the file passed it on (`HF_TOKEN="${NULL}"`)."""
    records = folder / "records"
    records.mkdir()
    full_env = {
        "PATH": f"{stubs(folder)}:{os.environ['PATH']}",
        "LC_ALL": "C",
        "SPARK_TEST_RECORDS": str(records),
        "BASH_ENV": str(v.UNLIMITED_MEMLOCK),  # `ulimit -l` as an RDMA node answers it (every-pd)
        **secrets,
        **(extra or {}),
    }
    proc = subprocess.run(argv, cwd=cwd, env=full_env, capture_output=True, timeout=60)
    assert proc.returncode == 0, proc.stderr.decode(errors="replace")
    out = Run([], [])
    for record in sorted(records.iterdir()):
        if record.name.startswith("vllm-"):
            data = json.loads(record.read_text())
            out.argvs.append([b"vllm", *(bytes.fromhex(a) for a in data["argv"])])
            env = {bytes.fromhex(k): bytes.fromhex(x) for k, x in data["env"].items()}
            out.envs.append({k: x for k, x in env.items() if k.decode() not in secrets})
        else:
            out.argvs.append(record.read_bytes().split(b"\0")[:-1])
    return out


def header_commands(path: Path) -> str:
    """The commands vllm-config.yaml's header tells the user to run, as one bash script: the
    environment it needs, then `Run: ...`, then `The same launch as one command`."""
    lines = [line[2:] for line in path.read_text(encoding="utf-8").splitlines() if line.startswith("# ")]
    env_at = lines.index("Environment it needs:") if "Environment it needs:" in lines else len(lines)
    command_at = lines.index("The same launch as one command:")
    exports = [f"export {line.strip()}" for line in lines[env_at + 1 :] if re.match(r"  [A-Za-z_]\w*=", line)]
    run_line = next(line.removeprefix("Run: ") for line in lines if line.startswith("Run: "))
    one_command = "\n".join(line.strip() for line in lines[command_at + 1 : env_at])
    return "\n".join([*exports, run_line, one_command, ""])


class _Leaked(dict[str, str]):
    """Any `$(NAME)` the kubelet would fill: a value's own `$(...)` must never be filled."""

    def get(self, key: str, default: Any = None) -> str:
        return "leaked"


def strings(node: Any, expand: Callable[[str], str] = lambda s: s) -> set[str]:
    """Every string of a document, mapping keys included."""
    if isinstance(node, str):
        return {expand(node)}
    if isinstance(node, list):
        return set().union(*(strings(x, expand) for x in node))
    if isinstance(node, dict):
        return {str(k) for k in node} | set().union(*(strings(x, expand) for x in node.values()))
    return set()


def kubernetes_strings(node: Any) -> set[str]:
    """Every string of a manifest, a container's command, args and env as the kubelet expands them."""
    if isinstance(node, list):
        return set().union(*(kubernetes_strings(x) for x in node))
    if not isinstance(node, dict):
        return strings(node)
    container = "image" in node and "name" in node
    out = {str(k) for k in node}
    for key, value in node.items():
        if container and key in ("command", "args", "env"):
            out |= strings(value, lambda s: kubernetes_expand(s, _Leaked()))
        else:
            out |= kubernetes_strings(value)
    return out


def go_yaml_documents(path: Path) -> list[Any]:
    """The documents of a YAML file as Go's yaml.v3 (YAML 1.2) reads them: each embedded in a
    Compose extension field, read back by `docker compose config` (`$` doubled against Compose's
    interpolation, and undoubled after)."""
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    body = "".join(line for line in lines if not line.startswith("#"))
    docs = body.removeprefix("---\n").split("\n---\n")
    body = "".join(f"x-doc{i}:\n" + textwrap.indent(d.replace("$", "$$"), "  ") + "\n" for i, d in enumerate(docs))
    wrapper = path.with_name(path.stem + "-go.yaml")
    wrapper.write_text("services:\n  s:\n    image: busybox\n" + body, encoding="utf-8")
    model = v.compose_model(wrapper)

    def undouble(node: Any) -> Any:
        if isinstance(node, str):
            return compose_value(node)
        if isinstance(node, list):
            return [undouble(x) for x in node]
        if isinstance(node, dict):
            return {k: undouble(x) for k, x in node.items()}
        return node

    return [undouble(model[f"x-doc{i}"]) for i in range(len(docs))]


def compose_config(path: Path, secrets: dict[str, str]) -> dict[str, Any]:
    """`docker compose config` without `-p`: the project is the file's `name`."""
    proc = subprocess.run(
        [v.compose_binary(), "-f", str(path), "config", "--format", "json"],
        env={**os.environ, **secrets},
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stderr
    model: dict[str, Any] = json.loads(proc.stdout)
    return model


class Every:
    """The built outputs, and what each target delivered, read back once and kept."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.canary = folder / "canary"
        self.canary.mkdir()
        self.values = {path: value_of(setting, self.canary) for path, setting in SETTINGS.items()}
        # Each secret's host variable, set to a value of its own.
        secrets = [value for value in self.values.values() if isinstance(value, Secret)]
        self.secrets = {secret.variable: f"{secret.name} secret value" for secret in secrets}
        (folder / "every.spark").write_text(spec(self.values), encoding="utf-8")
        built = subprocess.run(
            [sys.executable, "-m", "spark_dsl", "build", "every.spark", "-o", "out"],
            cwd=folder,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert built.returncode == 0, built.stdout + built.stderr
        self.out = folder / "out"
        self.plans = {p.plan.name: p for p in run([folder / "every.spark"], folder).planned()}
        self._runs: dict[tuple[str, str], Run] = {}
        self._arrived: dict[tuple[str, str], set[bytes]] = {}

    def launch(self, deployment: str = "every") -> Any:
        (launch,) = self.plans[deployment].launches
        return launch

    def run(self, deployment: str, target: str) -> Run:
        """The processes serve.sh, job.sbatch or vllm-config.yaml's header starts, recorded."""
        if (deployment, target) not in self._runs:
            folder = self.folder / f"run-{deployment}-{target}"
            folder.mkdir()
            where = self.out / deployment
            extra = None
            if target == "shell":
                argv = ["bash", str(where / "serve.sh")]
            elif target == "slurm":
                argv = ["bash", str(where / "job.sbatch")]
                # What sbatch tells the script: the CPUs it holds on each of its nodes.
                nodes = re.search(r"^#SBATCH --nodes=(\d+)$", (where / "job.sbatch").read_text(), re.M)
                assert nodes is not None
                extra = {"SLURM_JOB_CPUS_PER_NODE": f"8(x{nodes.group(1)})"}
            else:
                (folder / "header.sh").write_text(header_commands(where / "vllm-config.yaml"), encoding="utf-8")
                argv = ["bash", str(folder / "header.sh")]
            self._runs[deployment, target] = run_recorded(argv, folder, where, self.secrets, extra)
            self.assert_nothing_ran()
        return self._runs[deployment, target]

    def arrived(self, deployment: str, target: str) -> set[bytes]:
        """Every value the target delivered, each whole: an argument, a variable's name or value,
        a YAML string, the value of `--opt=VALUE` or `NAME=VALUE`, a mount's source."""
        if (deployment, target) in self._arrived:
            return self._arrived[deployment, target]
        where = self.out / deployment
        found: set[bytes] = set()
        if target in ("shell", "slurm", "vllm-config"):
            recorded = self.run(deployment, target)
            for argv in recorded.argvs:
                for arg in argv:
                    found |= {arg, *arg.split(b"=", 1), arg.removeprefix(b"docker://")}
                    if arg.startswith((b"--container-mounts=", b"--bind=")):
                        found |= {mount.split(b":")[0] for mount in arg.split(b"=", 1)[1].split(b",")}
            for env in recorded.envs:
                found |= set(env) | set(env.values())
        if target == "slurm":
            for line in (where / "job.sbatch").read_bytes().splitlines():
                if line.startswith(b"#SBATCH --"):
                    found.add(line.removeprefix(b"#SBATCH "))  # an extra directive arrives whole
                if line.startswith(b"#SBATCH --") and b"=" in line:
                    found.add(line.split(b"=", 1)[1])
        if target == "compose":
            model = compose_config(where / "compose.yaml", self.secrets)
            found |= {s.encode() for s in strings(model, compose_value)}
        if target == "kubernetes":
            docs = v.load_yaml_documents(where / "kubernetes.yaml")
            assert go_yaml_documents(where / "kubernetes.yaml") == docs  # YAML 1.2 sees what 1.1 sees
            found |= {s.encode() for s in kubernetes_strings(docs)}
        if target == "vllm-config":
            (mapping,) = v.load_yaml_documents(where / "vllm-config.yaml")
            found |= {s.encode() for s in config_argv(mapping)}
        self._arrived[deployment, target] = found
        return found

    def assert_nothing_ran(self) -> None:
        assert sorted(p.name for p in self.canary.iterdir()) == []


@pytest.fixture(scope="module")
def every(tmp_path_factory: pytest.TempPathFactory) -> Every:
    return Every(tmp_path_factory.mktemp("every"))


# ---- every setting, every target that uses it ---------------------------------------------


def expected(every: Every, value: Any, target: str) -> list[str]:
    """What of a setting's value must arrive in a target."""
    if isinstance(value, Secret):
        if target == "kubernetes":
            return [value.name, value.key]  # a secretKeyRef
        if target == "vllm-config":
            return []  # the header names the variable to set; nothing runs it (checked below)
        return [every.secrets[value.variable]]  # `${ON:?...}` read from the host
    return leaves(value)


def test_every_value_is_distinct(every: Every) -> None:
    """A value found in an output is that setting's: no two settings share one."""
    found = [text for value in every.values.values() for text in leaves(value)]
    assert len(found) == len(set(found))


@pytest.mark.parametrize("path", sorted(SETTINGS))
def test_every_string_setting_arrives_byte_identical_in_every_target_that_uses_it(every: Every, path: str) -> None:
    use = used_by(path)
    assert use is not None, f"{path}: no `used by` entry in spark_dsl/keys_reference.py"
    value = every.values[path]
    checked = 0
    for deployment in places(path):
        for target in sorted(set(use.targets) & declared(deployment)):
            arrived = every.arrived(deployment, target)
            missing = [text for text in expected(every, value, target) if text.encode() not in arrived]
            assert not missing, f"{path} in {deployment}/{target}: {missing} did not arrive as written"
            checked += 1
    # A setting no declared target uses would prove nothing: give it a place (PLACES) that has one.
    assert checked, f"{path}: none of {use.targets} is declared where PLACES puts it ({places(path)})"
    every.assert_nothing_ran()


# ---- each target, whole: what arrives is the plan, and the plan is the spec ---------------------


def test_the_plan_holds_each_value_as_written(every: Every) -> None:
    val, launch = every.values, every.launch()
    argv = list(launch.argv)
    assert argv[2] == val["runtime.model_path"]
    assert argv[argv.index("--host") + 1] == val["serve.host"]
    assert argv[argv.index("--served-model-name") + 1] == val["serve.served_model_name"]
    assert argv[-4:] == val["serve.extra_args"]
    assert {k: dict(launch.env)[k] for k in val["serve.env"]} == val["serve.env"]


def test_serve_sh_passes_every_byte_under_the_c_locale(every: Every) -> None:
    recorded, launch = every.run("every", "shell"), every.launch()
    (argv,) = recorded.argvs
    (env,) = recorded.envs
    assert argv == [a.encode() for a in launch.argv]
    assert {name: env[name.encode()] for name, _ in launch.env} == {n: x.encode() for n, x in launch.env}
    assert env[b"HF_TOKEN"] == every.secrets["NULL"].encode()
    assert env[b"VLLM_API_KEY"] == every.secrets["ON"].encode()
    assert env[b"HF_HOME"] == every.values["runtime.model_cache"].encode()


@pytest.mark.parametrize("name", ["every", "every-apptainer", "every-host"])
def test_job_sbatch_passes_every_byte_to_srun(every: Every, name: str) -> None:
    # The launch's step; under pyxis one step before it imports the image (`... true`).
    (record,) = [argv for argv in every.run(name, "slurm").argvs if argv[-1] != b"true"]
    launch, val = every.launch(name), every.values
    cache, image = val["runtime.model_cache"], val["runtime.image"]
    if name == "every":
        assert f"--container-image={image}".encode() in record
        assert f"--container-mounts={cache}:{MODEL_CACHE}".encode() in record
    elif name == "every-apptainer":
        assert f"--bind={cache}:{MODEL_CACHE}".encode() in record
        assert f"docker://{image}".encode() in record
    else:
        assert f"HF_HOME={cache}".encode() in record
    start = record.index(b"env") + 1
    end = record.index(b"vllm")
    assignments = dict(a.decode().split("=", 1) for a in record[start:end])
    assert {k: assignments[k] for k, _ in launch.env} == dict(launch.env)
    assert record[end:] == [a.encode() for a in launch.argv]
    if name == "every":
        script = (every.out / name / "job.sbatch").read_text(encoding="utf-8")
        directives = [line for line in script.splitlines() if line.startswith("#SBATCH")]
        for key in ("partition", "account", "qos", "output", "constraint", "reservation", "exclude"):
            assert f"#SBATCH --{key}={val['target.slurm.' + key]}" in directives
        for extra in val["target.slurm.extra_directives"]:
            assert f"#SBATCH {extra}" in directives


def test_compose_config_reads_back_every_value(every: Every) -> None:
    val, launch = every.values, every.launch()
    model = compose_config(every.out / "every/compose.yaml", every.secrets)
    assert model["name"] == val["target.compose.project"]  # YAML 1.2 would read a plain `1e5` as 100000
    service = model["services"]["server"]
    assert compose_value(service["image"]) == val["runtime.image"]
    argv = [compose_value(a) for a in [*service["entrypoint"], *service["command"]]]
    assert argv == list(launch.argv)
    environment = {k: compose_value(x) for k, x in service["environment"].items()}
    assert {k: environment[k] for k, _ in launch.env} == dict(launch.env)
    assert (environment["HF_TOKEN"], environment["VLLM_API_KEY"]) == (every.secrets["NULL"], every.secrets["ON"])
    cache, model_path = service["volumes"]
    assert compose_value(cache["source"]) == val["runtime.model_cache"]
    assert compose_value(model_path["source"]) == compose_value(model_path["target"]) == val["runtime.model_path"]
    (service,) = compose_config(every.out / "every-cache/compose.yaml", every.secrets)["services"].values()
    assert compose_value(service["volumes"][0]["source"]) == val["target.compose.model_cache"]


def test_kubernetes_reads_back_every_value_in_yaml_1_1_and_1_2(every: Every) -> None:
    val, launch = every.values, every.launch()
    path = every.out / "every/kubernetes.yaml"
    docs = v.load_yaml_documents(path)
    assert go_yaml_documents(path) == docs  # Go's YAML 1.2 reader sees exactly what PyYAML sees
    v.check_all([v.kubernetes_validate(path)])
    deployment = docs[0]
    assert deployment["metadata"]["namespace"] == val["target.kubernetes.namespace"]
    assert deployment["metadata"]["labels"].items() >= val["target.kubernetes.labels"].items()
    pod = deployment["spec"]["template"]
    annotations = val["target.kubernetes.annotations"]
    assert {k: pod["metadata"]["annotations"][k] for k in annotations} == annotations
    assert pod["spec"]["nodeSelector"] == val["target.kubernetes.node_selector"]
    volumes = {vol["name"]: vol for vol in pod["spec"]["volumes"]}
    assert volumes["model-cache"]["hostPath"]["path"] == val["target.kubernetes.model_cache"].path
    (container,) = pod["spec"]["containers"]
    assert container["image"] == val["runtime.image"]
    kubelet = {"LWS_LEADER_ADDRESS": "leaked", "SPARK_POD_IP": "leaked", "HOME": "leaked"}
    args = [kubernetes_expand(a, kubelet) for a in [*container["command"], *container["args"]]]
    assert args == list(launch.argv)
    env = {e["name"]: e for e in container["env"]}
    for name, value in launch.env:
        assert kubernetes_expand(env[name]["value"], kubelet) == value, name
    refs = {name: env[name]["valueFrom"]["secretKeyRef"] for name in ("HF_TOKEN", "VLLM_API_KEY")}
    assert refs == {"HF_TOKEN": {"name": "null", "key": "0o20"}, "VLLM_API_KEY": {"name": "on", "key": "4e3"}}


def test_vllm_config_reads_back_every_option_as_vllm_does(every: Every) -> None:
    launch = every.launch()
    path = every.out / "every/vllm-config.yaml"
    (mapping,) = v.load_yaml_documents(path)
    assert config_argv(mapping) == list(launch.argv[3:])
    assert all(isinstance(value, (str, int, bool)) for value in mapping.values())
    # The header's commands, run: `Run: vllm serve MODEL --config ...`, then the one-line launch.
    recorded = every.run("every", "vllm-config")
    run_line, one_command = recorded.argvs
    assert run_line == [a.encode() for a in [*launch.argv[:3], "--config", "vllm-config.yaml"]]
    assert one_command == [a.encode() for a in launch.argv]
    for env in recorded.envs:
        assert {name: env[name.encode()] for name, _ in launch.env} == {n: x.encode() for n, x in launch.env}
    header = [line for line in path.read_text(encoding="utf-8").splitlines() if line.startswith("#")]
    assert "#   HF_TOKEN from secret null, key 0o20" in header


def test_the_router_image_and_cluster_names_read_back(every: Every) -> None:
    """`runtime.router_image`, `storage_class` and `rdma_resource` in a P/D deployment: Kubernetes
    read by both YAML readers, and the router step Slurm starts in its container."""
    val = every.values
    path = every.out / "every-pd/kubernetes.yaml"
    docs = v.load_yaml_documents(path)
    assert go_yaml_documents(path) == docs
    claim = next(d for d in docs if d["kind"] == "PersistentVolumeClaim")
    assert claim["spec"]["storageClassName"] == val["target.kubernetes.storage_class"]
    pods = [d["spec"]["template"]["spec"] for d in docs if d["kind"] == "Deployment"]
    containers = [c for pod in pods for c in pod["containers"]]
    assert val["runtime.router_image"] in [c["image"] for c in containers]
    limits = [c["resources"]["limits"] for c in containers if c["name"] == "vllm"]
    assert limits and all(val["target.kubernetes.rdma_resource"] in limit for limit in limits)
    steps = every.run("every-pd", "slurm").argvs
    router = next(step for step in steps if b"vllm-router" in step)
    assert f"--container-image={val['runtime.router_image']}".encode() in router
