"""Issue 32, item 9: the ruff habits, through the real `spark` command.

`--select`, `--extend-select` and `--ignore` on the command line (layered over spark.toml as
ruff's are, checked against the code registry), `--statistics`, `--exit-zero`, and shell
completion of codes, deployments, targets, models and accelerators (click's `_SPARK_COMPLETE`
protocol, as bash asks for it). Each of these was missing at 1a493a8.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cli_helpers import CLEAN, ERROR, WARNING, spark, write

from spark_dsl.catalog import load
from spark_dsl.codes import registry
from spark_dsl.targets.registry import kinds


@pytest.fixture
def proj(tmp_path: Path) -> Path:
    """Two specs with SPK903 (a warning), one with SPK103 (an error), one clean."""
    return write(
        tmp_path,
        {
            ".git": "",
            "warned.spark": WARNING.format(name="warned"),
            "warned-too.spark": WARNING.format(name="warned-too"),
            "broken.spark": ERROR.format(name="broken"),
            "clean.spark": CLEAN.format(name="clean"),
        },
    )


def codes_in(text: str) -> set[str]:
    reported = (line for line in text.splitlines() if line.startswith(("warning[", "error[")))
    return {line.split("[", 1)[1].split("]", 1)[0] for line in reported}


# ---- --select, --extend-select, --ignore --------------------------------------------------------


def test_ignore_leaves_a_warning_out_and_select_keeps_only_its_codes(proj: Path) -> None:
    assert codes_in(spark("check", cwd=proj).stdout) == {"SPK903", "SPK103"}
    assert codes_in(spark("check", "--ignore", "SPK903", cwd=proj).stdout) == {"SPK103"}
    assert codes_in(spark("check", "--ignore", "SPK9", cwd=proj).stdout) == {"SPK103"}
    # --select SPK3 leaves SPK903 out, but never the error: errors are always reported.
    selected = spark("check", "--select", "SPK3", cwd=proj)
    assert codes_in(selected.stdout) == {"SPK103"}
    assert selected.returncode == 1


def test_codes_are_comma_separated_or_repeated(proj: Path) -> None:
    for args in (["--select", "SPK3,SPK903"], ["--select", "SPK3", "--select", "SPK903"]):
        assert codes_in(spark("check", *args, cwd=proj).stdout) == {"SPK903", "SPK103"}


def test_the_command_line_layers_over_spark_toml_as_ruff_s_does(proj: Path) -> None:
    (proj / "spark.toml").write_text('ignore = ["SPK903"]\n', encoding="utf-8")
    assert codes_in(spark("check", cwd=proj).stdout) == {"SPK103"}
    # --extend-select brings back what the project's ignore left out ...
    assert codes_in(spark("check", "--extend-select", "SPK903", cwd=proj).stdout) == {"SPK903", "SPK103"}
    # ... --select replaces the project's select and ignore ...
    assert codes_in(spark("check", "--select", "SPK9", cwd=proj).stdout) == {"SPK903", "SPK103"}
    # ... and --ignore comes last of all.
    out = spark("check", "--select", "SPK9", "--ignore", "SPK903", cwd=proj).stdout
    assert codes_in(out) == {"SPK103"}


def test_an_unknown_code_is_a_usage_error_with_a_did_you_mean(proj: Path) -> None:
    done = spark("check", "--select", "spk903", cwd=proj)
    assert done.returncode == 2
    assert '"spk903" is not a diagnostic code; did you mean `SPK903`?' in done.stderr
    assert "spark explain --list" in done.stderr
    done = spark("check", "--ignore", "SPK903,SPKX", cwd=proj)
    assert done.returncode == 2
    assert '"SPKX" is not a diagnostic code' in done.stderr
    assert "Traceback" not in done.stderr


def test_errors_can_never_be_ignored(proj: Path) -> None:
    done = spark("check", "--ignore", "SPK103", cwd=proj)
    assert done.returncode == 2
    assert '"SPK103" names only errors, and errors cannot be ignored' in done.stderr


@pytest.mark.parametrize("command", ["plan", "build"])
def test_plan_and_build_take_the_selection_too(proj: Path, command: str) -> None:
    args = ["warned.spark", *(["-o", "out"] if command == "build" else [])]
    assert "SPK903" in spark(command, *args, cwd=proj).stdout
    done = spark(command, *args, "--ignore", "SPK903", cwd=proj)
    assert done.returncode == 0, done.stderr
    assert "SPK903" not in done.stdout
    assert spark(command, *args, "--select", "SPK9O3", cwd=proj).returncode == 2


# ---- --statistics ---------------------------------------------------------------------------------


def test_statistics_counts_each_code_most_frequent_first(proj: Path) -> None:
    done = spark("check", "--statistics", cwd=proj)
    assert done.returncode == 1  # the exit code is the check's
    doc = registry()
    assert done.stdout.splitlines() == [
        f"2\tSPK903\twarning\t[ ] {doc['SPK903'].title}",
        f"1\tSPK103\terror  \t[ ] {doc['SPK103'].title}",
    ]
    as_json = json.loads(spark("check", "--statistics", "--format", "json", cwd=proj).stdout)
    assert [(row["code"], row["count"]) for row in as_json] == [("SPK903", 2), ("SPK103", 1)]


def test_statistics_follow_the_selection_and_refuse_a_diagnostics_only_format(proj: Path) -> None:
    assert spark("check", "--statistics", "--ignore", "SPK903", cwd=proj).stdout.startswith("1\tSPK103\t")
    assert spark("check", "clean.spark", "--statistics", cwd=proj).stdout == ""
    done = spark("check", "--statistics", "--format", "sarif", cwd=proj)
    assert done.returncode == 2
    assert "--statistics writes text or json" in done.stderr


# ---- --exit-zero ----------------------------------------------------------------------------------


def test_exit_zero_reports_everything_and_exits_0(proj: Path) -> None:
    done = spark("check", "--exit-zero", cwd=proj)
    assert done.returncode == 0
    assert codes_in(done.stdout) == {"SPK903", "SPK103"}
    assert spark("check", "warned.spark", "--exit-zero", "--deny", "warnings", cwd=proj).returncode == 0


def test_exit_zero_keeps_a_usage_error_at_2(proj: Path) -> None:
    assert spark("check", "missing.spark", "--exit-zero", cwd=proj).returncode == 2
    assert spark("check", "--exit-zero", "--select", "SPK99", cwd=proj).returncode == 2


# ---- shell completion -----------------------------------------------------------------------------


def complete(cwd: Path, line: str) -> list[str]:
    """What bash's completion gets for the last word of `line` (empty after a trailing space)."""
    words = line.split()
    cword = len(words) if line.endswith(" ") else len(words) - 1
    done = spark(
        cwd=cwd,
        env={"_SPARK_COMPLETE": "bash_complete", "COMP_WORDS": line, "COMP_CWORD": str(cword)},
    )
    assert done.returncode == 0, done.stderr
    return [row.split(",", 1)[1] for row in done.stdout.splitlines() if row.startswith("plain,")]


@pytest.mark.parametrize("option", ["--select", "--extend-select", "--ignore"])
def test_completion_offers_codes(proj: Path, option: str) -> None:
    wanted = [c for c, doc in registry().items() if c.startswith("SPK90")]
    if option == "--ignore":
        wanted = [c for c in wanted if registry()[c].severity != "error"]
    assert complete(proj, f"spark check {option} SPK90") == wanted
    assert complete(proj, f"spark check {option} spk90") == wanted
    assert complete(proj, f"spark check {option} SPK103,SPK90") == [f"SPK103,{c}" for c in wanted]


def test_completion_of_ignore_offers_no_error(proj: Path) -> None:
    offered = complete(proj, "spark check --ignore SPK")
    assert offered and all(registry()[code].severity != "error" for code in offered)


def test_completion_offers_codes_models_and_accelerators_to_explain(proj: Path) -> None:
    catalog = load()
    assert complete(proj, "spark explain SPK10") == [c for c in registry() if c.startswith("SPK10")]
    assert complete(proj, "spark explain ") == [*registry(), *catalog.models, *catalog.accelerators]
    model = next(iter(catalog.models))
    assert model in complete(proj, f"spark explain {model[:3]}")


@pytest.mark.parametrize("command", ["check", "plan", "build"])
def test_completion_offers_the_deployments_of_the_specs_here(proj: Path, command: str) -> None:
    assert complete(proj, f"spark {command} -d ") == ["broken", "clean", "warned", "warned-too"]
    assert complete(proj, f"spark {command} --deployment war") == ["warned", "warned-too"]
    # Paths already typed narrow it to their specs.
    assert complete(proj, f"spark {command} clean.spark -d ") == ["clean"]


def test_completion_offers_the_targets_to_build(proj: Path) -> None:
    assert complete(proj, "spark build -t ") == list(kinds())
    assert complete(proj, "spark build --target k") == [k for k in kinds() if k.startswith("k")]


def test_completion_offers_models_accelerators_and_targets_to_init(proj: Path) -> None:
    from spark_dsl.targets.registry import all_targets

    catalog = load()
    assert complete(proj, "spark init --model ") == list(catalog.models)
    assert complete(proj, "spark init --accelerator ") == list(catalog.accelerators)
    assert complete(proj, "spark init --accelerator mi3") == [a for a in catalog.accelerators if a.startswith("mi3")]
    assert complete(proj, "spark init --target ") == [t.kind for t in all_targets() if not t.client]
