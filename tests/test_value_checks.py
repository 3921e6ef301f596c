"""Values a target, vLLM or the platform would refuse, or that would leak or run something, are
located errors at check time (through the real `spark` command), and none reaches an output."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

TOKEN = "hf_" + "QwErTyUiOpAsDfGhJkLzXcVbNmQwErTyUi"  # the shape of a Hugging Face access token


def spec(serve: str = "", runtime: str = "", targets: str = "target shell {}") -> str:
    return f"""deployment muse {{
  model       = muse-spark-open
  accelerator = b200
  parallel    = tp + ep
  serve {{
{serve}
  }}
  runtime {{
{runtime}
  }}
  {targets}
}}
"""


def check(spark, tmp_path: Path, text: str, *args: str):
    (tmp_path / "muse.spark").write_text(text, encoding="utf-8")
    return spark("check", "muse.spark", "--format", "json", *args)


def codes(result) -> list[str]:
    return [d["code"] for d in json.loads(result.stdout)["diagnostics"] if d["severity"] == "error"]


def assert_error(spark, tmp_path: Path, text: str, code: str) -> dict:
    result = check(spark, tmp_path, text)
    assert result.returncode == 1, result.stdout + result.stderr
    found = [d for d in json.loads(result.stdout)["diagnostics"] if d["code"] == code]
    assert found, result.stdout
    d = found[0]
    assert d["help"] and d["file"] == "muse.spark" and d["line"] > 1
    return d


def assert_clean(spark, tmp_path: Path, text: str) -> None:
    result = check(spark, tmp_path, text)
    assert result.returncode == 0, result.stdout + result.stderr


# ---- names: anchored, and safe in every target -----------------------------------------------


@pytest.mark.parametrize(
    "runtime",
    [
        'hf_token = secret("hf-token\\n")',
        'hf_token = env("HF_TOKEN\\n")',
        'hf_token = secret("1password")',  # HF_TOKEN's variable would be `1PASSWORD`
        'hf_token = secret("hf-token", key = "x $(touch CANARY) }")',
        'hf_token = secret("hf-token", key = "token\\n")',
    ],
)
def test_secret_names_and_keys_are_checked(spark, tmp_path: Path, runtime: str) -> None:
    d = assert_error(spark, tmp_path, spec(runtime=runtime), "SPK123")
    assert d["help"]


def test_an_env_key_with_a_trailing_newline_is_not_a_variable_name(spark, tmp_path: Path) -> None:
    d = assert_error(spark, tmp_path, spec(serve='env { "X\\n" = "1" }'), "SPK102")
    assert "not an environment variable name" in d["message"]


def test_a_secret_key_kubernetes_accepts_passes(spark, tmp_path: Path) -> None:
    assert_clean(spark, tmp_path, spec(runtime='hf_token = secret("hf-token", key = "hf_token.v-2")'))


# ---- token-shaped literals -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("serve", "runtime"),
    [
        ("", f'hf_token = env("{TOKEN}")'),
        (f'env {{ MY_TOKEN = "{TOKEN}" }}', ""),
        (f'env {{ {TOKEN} = "1" }}', ""),
        (f'extra_args = ["--chat-template", "{TOKEN}"]', ""),
        (f'served_model_name = "muse {TOKEN}"', ""),
    ],
)
def test_a_pasted_token_is_a_literal_secret_and_never_printed(spark, tmp_path: Path, serve: str, runtime: str) -> None:
    text = spec(serve=serve, runtime=runtime)
    assert_error(spark, tmp_path, text, "SPK901")
    for fmt in ("text", "json", "github", "sarif"):
        shown = spark("check", "muse.spark", "--format", fmt)
        assert TOKEN not in shown.stdout + shown.stderr, fmt
    plan = spark("plan", "muse.spark", "--format", "json")
    assert plan.returncode == 1
    assert TOKEN not in plan.stdout + plan.stderr
    built = spark("build", "muse.spark", "-o", "out")
    assert built.returncode == 1 and not list((tmp_path / "out").rglob("*.sh"))


def test_a_token_lookalike_is_not_a_secret(spark, tmp_path: Path) -> None:
    assert_clean(spark, tmp_path, spec(serve='env { NAME = "hf_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx" }'))


def test_an_organisation_token_is_shown_by_its_whole_prefix(spark, tmp_path: Path) -> None:
    token = "api_org_" + TOKEN.split("_", 1)[1]
    d = assert_error(spark, tmp_path, spec(serve=f'env {{ ORG = "{token}" }}'), "SPK901")
    assert f"`{token[:10]}...`" in d["message"]  # `api_org_` and two characters, as `hf_` shows


# ---- values vLLM or the platform would refuse ---------------------------------------------


@pytest.mark.parametrize(
    ("serve", "runtime"),
    [
        ('served_model_name = "muse\\u{0}"', ""),
        ('env { A = "x\\u{0}y" }', ""),
        ('extra_args = ["--chat-template", "\\u{0}"]', ""),
        ("", 'model_path = "/models/\\u{0}"'),
    ],
)
def test_a_nul_character_is_an_error(spark, tmp_path: Path, serve: str, runtime: str) -> None:
    assert_error(spark, tmp_path, spec(serve=serve, runtime=runtime), "SPK905")


@pytest.mark.parametrize(
    ("serve", "runtime", "targets"),
    [
        ('host = ""', "", "target shell {}"),
        ('served_model_name = ""', "", "target shell {}"),
        ("", 'image = ""', "target compose {}"),
        ("", 'model_path = ""', "target shell {}"),
        ("", "", 'target kubernetes { namespace = "" }'),
        ("", "", 'target slurm { output = "" }'),
    ],
)
def test_an_empty_value_is_an_error_not_a_silent_default(
    spark, tmp_path: Path, serve: str, runtime: str, targets: str
) -> None:
    d = assert_error(spark, tmp_path, spec(serve=serve, runtime=runtime, targets=targets), "SPK906")
    assert "empty" in d["message"]


@pytest.mark.parametrize(
    ("serve", "runtime"),
    [
        ('host = "-x"', ""),
        ('served_model_name = "--muse"', ""),
        ("", 'model_path = "-models"'),
    ],
)
def test_a_value_vllm_would_take_for_an_option_is_an_error(spark, tmp_path: Path, serve: str, runtime: str) -> None:
    d = assert_error(spark, tmp_path, spec(serve=serve, runtime=runtime), "SPK907")
    assert d["help"]


@pytest.mark.parametrize("value", ["-1", "-x y", "x-", "-"])
def test_values_vllm_reads_as_values_pass(spark, tmp_path: Path, value: str) -> None:
    # argparse takes a negative number, or a word with a space, as a value (checked against
    # vLLM's own parser in tests/vllm_parser/test_option_values.py).
    assert_clean(spark, tmp_path, spec(serve=f'served_model_name = "{value}"'))


@pytest.mark.parametrize("cache", ["/data/a,b", "/data/a:ro", "c:/x"])
@pytest.mark.parametrize("container", ["pyxis", "apptainer"])
def test_a_model_cache_a_mount_list_would_split_is_an_error(spark, tmp_path: Path, cache: str, container: str) -> None:
    text = spec(runtime=f'model_cache = "{cache}"', targets=f"target slurm {{ container = {container} }}")
    assert_error(spark, tmp_path, text, "SPK908")


def test_a_model_cache_with_separators_is_fine_where_nothing_splits_it(spark, tmp_path: Path) -> None:
    assert_clean(spark, tmp_path, spec(runtime='model_cache = "/data/a,b:c"', targets="target compose {}"))


# ---- durations a platform takes as "none at all" -----------------------------------------------


@pytest.mark.parametrize(
    ("targets", "key", "default", "converged"),
    [
        # Prometheus refuses a zero scrape interval.
        ("target kubernetes { metrics { interval = 0s } }", "interval", "30s", "30s"),
        # The job would give up on /health before its first poll. Its default is the ready budget,
        # computed from the checkpoint, so the fix is the least value; SPK546's fix then raises it
        # to the budget (600 s + 543.6 GB at 0.5 and 0.25 GB/s).
        ("target slurm { ready_timeout = 0s }", "ready_timeout", "1s", "1h4m22s"),
        # `timeout 0` runs the download without any limit.
        ("target slurm {}\n  weights { download = true\n download_timeout = 0s }", "download_timeout", "2h", "2h"),
    ],
)
def test_a_zero_duration_is_an_error_whose_fix_is_the_default(
    spark, tmp_path: Path, targets: str, key: str, default: str, converged: str
) -> None:
    d = assert_error(spark, tmp_path, spec(targets=targets), "SPK105")
    assert d["message"] == f"`{key}` must be at least 1s, found `0s`"
    assert d["help"] == "use a value from 1s up"
    (fix,) = d["fixes"]
    assert [e["text"] for e in fix["edits"]] == [default]
    result = check(spark, tmp_path, (tmp_path / "muse.spark").read_text(), "--fix", "--unsafe-fixes")
    assert result.returncode == 0, result.stdout
    assert f"{key} = {converged}" in (tmp_path / "muse.spark").read_text()
