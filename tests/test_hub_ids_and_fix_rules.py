"""Issue 32, items 1 and 2, through the real `spark` command: a Hugging Face id names a model,
SPK117 leads to `spark model import`, and fixes stay fixes (docs/fixes.md): none replaces the
model or the accelerator, none is an info's, none is reported once superseded, and what they
write is in `spark fmt` layout."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

from tests.cli_helpers import spark, write

CONFIGS = Path(__file__).resolve().parent / "data" / "hf_configs"
LLAMA_70B = "meta-llama/Llama-3.1-70B-Instruct"


def _deployment(model: str, accelerator: str, *extra: str) -> str:
    lines = [f"  model = {model}", f"  accelerator = {accelerator}", *(f"  {e}" for e in extra)]
    return "deployment d {\n" + "\n".join(lines) + "\n}\n"


def _diagnostics(folder: Path, *args: str) -> list[dict]:
    r = spark("check", "--format", "json", *args, cwd=folder)
    return json.loads(r.stdout)["diagnostics"]


# ---------------------------------------------------------------------------- Hugging Face ids


def test_a_hub_id_names_the_shipped_model_whose_repository_it_is(tmp_path: Path) -> None:
    for written in ('"Qwen/Qwen3-30B-A3B"', '"qwen/qwen3-30b-a3b"'):  # the Hub compares ids without case
        write(tmp_path, {"a.spark": _deployment(written, "h200")})
        assert not [d for d in _diagnostics(tmp_path, "a.spark") if d["code"] == "SPK117"]
        plan = spark("plan", "a.spark", cwd=tmp_path)
        assert plan.returncode == 0, plan.stdout + plan.stderr
        assert re.search(r"^\s+model\s+qwen3-30b-a3b\s", plan.stdout, re.M), plan.stdout


def test_an_unknown_hub_id_is_told_the_import_command_and_following_it_works(tmp_path: Path) -> None:
    # A cache entry for a repository spark does not ship (facts of a dense 8B model).
    snapshot = tmp_path / "hub" / "models--acme--Tiny-Dense" / "snapshots" / "abc123"
    shutil.copytree(CONFIGS / "llama-3.1-8b", snapshot)
    (snapshot.parent.parent / "refs").mkdir()
    (snapshot.parent.parent / "refs" / "main").write_text("abc123")
    project = tmp_path / "project"
    spec = _deployment('"acme/Tiny-Dense"', "h100")
    write(project, {"specs/a.spark": spec, "spark.toml": ""})
    (d,) = _diagnostics(project, "specs/a.spark")
    assert d["code"] == "SPK117" and not d.get("fixes")
    assert "no model is declared in this file or its imports" in d["help"]
    command = re.search(r"run `spark model import (\S+) -o (\S+)`", d["help"])
    line = re.search(r'add `(import "[^"]+")`', d["help"])
    assert command and line and "`model tiny-dense { }` block" in d["help"], d["help"]
    assert command.groups() == ("acme/Tiny-Dense", "specs/models/tiny-dense.spark")
    (project / "specs" / "models").mkdir()  # `-o` creating its folder is issue 32's item 4
    env = {"HF_HUB_CACHE": str(tmp_path / "hub")}
    made = spark("model", "import", *command.groups()[:1], "-o", command.group(2), cwd=project, env=env)
    assert made.returncode == 0, made.stderr
    # With the declaration imported, the id names it: the deployment checks and plans.
    (project / "specs" / "a.spark").write_text(line.group(1) + "\n" + spec)
    r = spark("check", "specs/a.spark", cwd=project)
    assert "SPK117" not in r.stdout and r.returncode == 0, r.stdout
    assert re.search(r"^\s+model\s+tiny-dense\s", spark("plan", "specs/a.spark", cwd=project).stdout, re.M)


def test_spk117_lists_the_declared_models_and_suggests_no_other_model(tmp_path: Path) -> None:
    # The declaration docs/models.md shows (`my-llama`, Llama 3.1 8B Instruct).
    page = (CONFIGS.parents[2] / "docs" / "models.md").read_text()
    declared = page.split("```spark file=models/llama.spark\n")[1].split("```")[0]
    write(tmp_path, {"models/llama.spark": declared})
    for model in (f'"{LLAMA_70B}"', "llama-3-1-70b"):
        write(tmp_path, {"a.spark": 'import "models/llama.spark"\n' + _deployment(model, "h200", "nodes = 2")})
        (d,) = _diagnostics(tmp_path, "a.spark")
        assert d["code"] == "SPK117" and not d.get("fixes")
        assert "declared here: `my-llama`" in d["help"] and "spark model import" in d["help"]
        assert re.search(r"`model \S+ \{ \}`", d["help"]), d["help"]
        # Llama 3.1 70B is not a misspelt Llama 3.1 8B: naming it would make every number wrong.
        assert "llama-3-1-8b" not in d["message"] and "Llama-3.1-8B" not in d["message"]


def test_explain_spk117_leads_to_a_model_block_and_model_import(tmp_path: Path) -> None:
    text = spark("explain", "SPK117", cwd=tmp_path).stdout
    assert "model NAME { }" in text and "spark model import" in text, text


# ---------------------------------------------------------------------------- fixes stay fixes


def test_unsafe_fixes_never_replace_the_model_or_the_accelerator(tmp_path: Path) -> None:
    cases = {
        "hub.spark": _deployment(f'"{LLAMA_70B}"', "h200", "nodes = 2"),
        "typo.spark": _deployment("muse-spark-opn", "h2000"),
        "wrong-type.spark": _deployment("3", "4"),
        "unvalidated.spark": _deployment("muse-spark-open", "h200", "checkpoint = mxfp4"),
    }
    write(tmp_path, cases)
    spark("check", "--fix", "--unsafe-fixes", *cases, cwd=tmp_path)
    for name, text in cases.items():
        after = (tmp_path / name).read_text()
        for key in ("model", "accelerator"):
            (before,) = re.findall(rf"^\s*{key}\s*=\s*(.*)$", text, re.M)
            assert re.findall(rf"^\s*{key}\s*=\s*(.*)$", after, re.M) == [before], (name, after)
    # The help may name another one (a did-you-mean): a suggestion, never a fix, even an unsafe one.
    for d in _diagnostics(tmp_path, "typo.spark", "wrong-type.spark"):
        assert not d.get("fixes"), d


def test_the_same_name_in_other_capitals_is_still_a_safe_fix(tmp_path: Path) -> None:
    write(tmp_path, {"a.spark": _deployment("Muse-Spark-Open", "B200")})
    r = spark("check", "--fix", "a.spark", cwd=tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    assert (tmp_path / "a.spark").read_text() == _formatted(tmp_path, _deployment("muse-spark-open", "b200"))


def _formatted(folder: Path, text: str) -> str:
    (folder / "fmt.spark").write_text(text)
    spark("fmt", "fmt.spark", cwd=folder)
    return (folder / "fmt.spark").read_text()


def test_fix_never_applies_an_info(tmp_path: Path) -> None:
    spec = _deployment("qwen3-30b-a3b", "h200")
    write(tmp_path, {"a.spark": spec})
    infos = [d for d in _diagnostics(tmp_path, "a.spark") if d["severity"] == "info" and d.get("fixes")]
    assert infos, "the example needs an info that carries a fix"
    r = spark("check", "--fix", "--unsafe-fixes", "a.spark", cwd=tmp_path)
    assert not any(f"fixed {d['code']}" in r.stderr for d in infos), r.stderr
    assert "gpus" not in (tmp_path / "a.spark").read_text()
    assert "can be fixed" not in spark("check", "a.spark", cwd=tmp_path).stderr


def test_a_superseded_fix_is_not_reported(tmp_path: Path) -> None:
    # SPK121 writes `dp(2)`, and then SPK217 makes the same value `tp`: only `tp` was applied.
    write(tmp_path, {"a.spark": _deployment("muse-spark-open", "b200", "parallel = dp + tp")})
    r = spark("check", "--fix", "--unsafe-fixes", "a.spark", cwd=tmp_path)
    assert "dp(2)" not in r.stderr and "fixed SPK217 (unsafe): use `parallel = tp`" in r.stderr, r.stderr
    assert "fixed 1 problem in 1 file" in r.stderr
    assert re.search(r"^\s*parallel\s*=\s*tp$", (tmp_path / "a.spark").read_text(), re.M)
    # The spec: one `checkpoint` fix at most.
    write(tmp_path, {"b.spark": _deployment("muse-spark-open", "h200", "allow_unvalidated = true")})
    r = spark("check", "--diff", "--unsafe-fixes", "b.spark", cwd=tmp_path)
    assert len(re.findall(r"checkpoint = ", r.stderr)) <= 1, r.stderr


def test_what_a_fix_writes_is_in_fmt_layout(tmp_path: Path) -> None:
    cases = {
        "a.spark": _deployment("muse-spark-open", "b200", "parallel = dp + tp"),
        "b.spark": _deployment("muse-spark-open", "mi300x", "nodes = 2"),
        "c.spark": "deployment d {\n  model = muse-spark-open\n  accelerator   b200\n}\n",
    }
    write(tmp_path, cases)
    diff = spark("check", "--diff", "--unsafe-fixes", *cases, cwd=tmp_path)
    spark("check", "--fix", "--unsafe-fixes", *cases, cwd=tmp_path)
    for name in cases:
        after = (tmp_path / name).read_text()
        assert after != cases[name] and _formatted(tmp_path, after) == after, after
        assert f"+{after.splitlines()[1]}\n" in diff.stdout  # --diff shows the same layout
