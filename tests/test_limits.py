"""Depth and size limits through the real `spark` command: clear errors instead of recursion or overflow.

Nesting 10,000 levels deep, `extends` chains and diamond ladders, import chains of a
thousand files and integers of hundreds of digits each end in a located diagnostic (or
a clean run), never in exit 3.
"""

from __future__ import annotations

import json
import os
import re
import resource
import subprocess
import sys
from pathlib import Path

import pytest

HEAD = "model = muse-spark-open\n  accelerator = b200"


def spark(cwd: Path, *args: str, memory: int | None = None) -> subprocess.CompletedProcess[str]:
    """The real command; `memory` caps its address space (bytes), so a blow-up fails the run."""

    def cap() -> None:
        if memory is not None:
            resource.setrlimit(resource.RLIMIT_AS, (memory, memory))

    return subprocess.run(
        [sys.executable, "-m", "spark_dsl", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        env={**os.environ, "NO_COLOR": "1"},
        timeout=60,
        preexec_fn=cap,
    )


def codes(done: subprocess.CompletedProcess[str]) -> list[str]:
    both = done.stdout + done.stderr
    assert "Traceback" not in both and "internal error" not in both, both[-2000:]
    return re.findall(r"error\[(SPK\d{3})\]", done.stdout)


def deployment(body: str) -> str:
    return f"deployment d {{\n  {HEAD}\n  {body}\n}}\n"


NESTINGS = {
    "blocks": deployment("serve { " * 10_000 + "}" * 10_000),
    "lists": deployment("runtime { extra_args = " + "[" * 10_000 + "]" * 10_000 + " }"),
    "calls": deployment("parallel = " + "tp(" * 10_000 + ")" * 10_000),
    "mixed": deployment("a { " * 10 + "x = " + "[f(" * 5_000 + ")]" * 5_000 + " }" * 10),
}


@pytest.mark.parametrize("shape", NESTINGS)
def test_nesting_ten_thousand_deep_is_one_located_error(tmp_path: Path, shape: str) -> None:
    (tmp_path / "deep.spark").write_text(NESTINGS[shape], encoding="utf-8")
    for command in (["check"], ["plan"], ["build", "-o", "out"], ["fmt", "--check"], ["fmt"]):
        done = spark(tmp_path, *command, "deep.spark")
        assert done.returncode == 1, done.stdout + done.stderr
        if command[0] != "fmt":
            assert codes(done) == ["SPK008"]
        assert "nested more than 32 levels deep" in done.stdout + done.stderr
        assert "deep.spark:4:" in done.stdout + done.stderr  # the line of the 33rd level


def test_nesting_at_the_limit_still_checks(tmp_path: Path) -> None:
    # Brackets in comments and strings do not nest.
    ok = deployment("target shell {} # " + "[" * 40).replace("deployment d", "deployment e")
    (tmp_path / "ok.spark").write_text(ok.replace("b200", 'b200\n  runtime { image = "' + "(" * 40 + '" }'))
    # The deployment's `{` is level 1 and `serve {` level 2: 30 lists make 32 levels.
    (tmp_path / "deep.spark").write_text(deployment("serve { extra = " + "[" * 30 + "]" * 30 + " }"))
    done = spark(tmp_path, "check", "ok.spark", "deep.spark")
    assert codes(done) == ["SPK101"]  # `extra` is not a serve key: checked, not refused
    assert "deep.spark:4:11" in done.stdout


def chain(profiles: int) -> str:
    lines = ["profile c0 {\n  gpus = 8\n}"]
    lines += [f"profile c{i} extends c{i - 1} {{ }}" for i in range(1, profiles)]
    return "\n".join(lines) + f"\ndeployment d extends c{profiles - 1} {{\n  {HEAD}\n}}\n"


def diamond_ladder(rungs: int, cycle: bool = False) -> str:
    top = f"p{rungs}" if not cycle else f"p{rungs}, b1"
    lines = ["profile p0 extends " + top + " {\n  gpus = 8\n}" if cycle else "profile p0 {\n  gpus = 8\n}"]
    for i in range(1, rungs + 1):
        lines += [
            f"profile a{i} extends p{i - 1} {{ }}",
            f"profile b{i} extends p{i - 1} {{ }}",
            f"profile p{i} extends a{i}, b{i} {{ }}",
        ]
    return "\n".join(lines) + f"\ndeployment d extends p{rungs} {{\n  {HEAD}\n}}\n"


def test_a_500_profile_chain_resolves(tmp_path: Path) -> None:
    (tmp_path / "chain.spark").write_text(chain(500), encoding="utf-8")
    done = spark(tmp_path, "plan", "chain.spark", "--format", "json")
    assert codes(done) == [] and done.returncode == 0, done.stdout[-2000:]
    assert '"gpus"' in done.stdout and "c0" in done.stdout


def test_a_chain_past_the_limit_is_one_error_at_the_link_that_crosses_it(tmp_path: Path) -> None:
    (tmp_path / "chain.spark").write_text(chain(1_200), encoding="utf-8")
    done = spark(tmp_path, "check", "chain.spark")
    assert codes(done) == ["SPK124"]
    assert "chain.spark:1003:23" in done.stdout  # `profile c1000 extends c999`: the 1,001st profile
    assert "`extends` chain of `c1000` is more than 1,000 profiles long" in done.stdout


def test_a_diamond_ladder_resolves_once_per_profile(tmp_path: Path) -> None:
    (tmp_path / "ladder.spark").write_text(diamond_ladder(60), encoding="utf-8")
    done = spark(tmp_path, "plan", "ladder.spark", "--format", "json")
    assert codes(done) == [] and done.returncode == 0
    assert '"gpus"' in done.stdout


def full_ladder(profiles: int) -> str:
    """The issue's shape: rungs of two profiles, each extending both of the rung below (paths double per rung)."""
    lines = ["profile a0 {\n  gpus = 8\n}", "profile b0 { }"]
    for i in range(1, profiles // 2):
        lines += [f"profile a{i} extends a{i - 1}, b{i - 1} {{ }}", f"profile b{i} extends a{i - 1}, b{i - 1} {{ }}"]
    top = profiles // 2 - 1
    return "\n".join(lines) + f"\ndeployment d extends a{top}, b{top} {{\n  {HEAD}\n}}\n"


def test_a_ladder_two_wide_resolves_once_per_profile(tmp_path: Path) -> None:
    # 38 profiles of this shape took 21 s and 1.9 GB before resolution was memoised; 400 is 2**199 paths.
    (tmp_path / "ladder.spark").write_text(full_ladder(400), encoding="utf-8")
    done = spark(tmp_path, "plan", "ladder.spark", "--format", "json")
    assert codes(done) == [] and done.returncode == 0, done.stdout[-2000:]
    assert '"gpus"' in done.stdout


def test_a_cycle_in_a_diamond_ladder_is_reported_on_each_of_its_links(tmp_path: Path) -> None:
    (tmp_path / "ladder.spark").write_text(diamond_ladder(30, cycle=True), encoding="utf-8")
    done = spark(tmp_path, "check", "ladder.spark")
    found = codes(done)
    assert found and set(found) == {"SPK116"}, done.stdout[-3000:]
    # Each cycle found is reported on every one of its links, each link once: p0's link to p30
    # and the links of the rungs, the long cycle's help shortened.
    assert "ladder.spark:1:20" in done.stdout
    assert done.stdout.count("error[SPK116]") == len(set(re.findall(r"ladder\.spark:\d+:\d+", done.stdout)))
    assert "help: break the cycle p30 -> a30 -> p29 -> ... (56 more) -> a1 -> p0 -> p30" in done.stdout


def test_a_two_profile_cycle_is_reported_on_both_links(tmp_path: Path) -> None:
    (tmp_path / "c.spark").write_text("profile a extends b { }\nprofile b extends a { }\n", encoding="utf-8")
    done = spark(tmp_path, "check", "c.spark")
    assert codes(done) == ["SPK116", "SPK116"]
    assert "c.spark:1:19" in done.stdout and "break the cycle b -> a -> b" in done.stdout
    assert "c.spark:2:19" in done.stdout and "break the cycle a -> b -> a" in done.stdout


def test_an_import_chain_past_the_limit(tmp_path: Path) -> None:
    for i in range(1_200):
        link = f'import "f{i + 1}.spark"\n' if i < 1_199 else ""
        (tmp_path / f"f{i}.spark").write_text(link + f"profile p{i} {{ }}\n", encoding="utf-8")
    done = spark(tmp_path, "check", "f0.spark")
    assert codes(done) == ["SPK124"]
    assert "f63.spark:1:8" in done.stdout and "imports nest more than 64 files deep" in done.stdout


HUGE = "9" * 400
NUMBERS: dict[str, tuple[str, str]] = {
    "integer key": (f"gpus = {HUGE}", "SPK105"),
    "integer key, 5000 digits": ("gpus = " + "9" * 5_000, "SPK105"),
    "fraction key": (f"gpu_memory_utilization = {HUGE}", "SPK105"),
    "fraction key, decimals": (f"gpu_memory_utilization = 0.{HUGE}", "SPK105"),
    "count key": (f"max_model_len = {HUGE}", "SPK105"),
    "count quantity": (f"max_model_len = {HUGE}K", "SPK105"),
    "size quantity": (f"runtime {{ shm_size = {HUGE}GiB }}", "SPK105"),
    "duration": (f"target slurm {{ time = {HUGE}h }}", "SPK105"),
    "call argument": (f"parallel = dp({HUGE}) + tp", "SPK105"),
    "named argument": (f"speculative = dspark(tokens = {HUGE})", "SPK105"),
    "just past 2**53": ("gpus = 9_007_199_254_740_993", "SPK105"),
    "quantity of 40 parts": ("target slurm { time = " + "1h" * 40 + " }", "SPK105"),
}


@pytest.mark.parametrize("case", NUMBERS)
def test_huge_numbers_are_range_errors_at_the_number(tmp_path: Path, case: str) -> None:
    body, code = NUMBERS[case]
    (tmp_path / "n.spark").write_text(deployment(body), encoding="utf-8")
    for command in (["check"], ["plan"], ["build", "-o", "out"]):
        done = spark(tmp_path, *command, "n.spark")
        found = codes(done)
        assert found[:1] == [code], done.stdout[-1500:]
        assert "n.spark:4:" in done.stdout  # located at the number, on its line
        assert done.returncode == 1


# Long tokens: the lexer's patterns read a string or a quantity in one pass, whatever its length.
# Repeating a group without possessive quantifiers made Python's `re` keep backtracking state for
# every character: a 9 MB string took 3.5 GB and a 4 MB quantity 750 MB before a diagnostic.
MB = 1024 * 1024
LONG_TOKENS = {
    "string": deployment('runtime { image = "' + "x" * (9 * MB) + '" }'),
    "string of escapes": deployment('runtime { image = "' + "\\n" * (4 * MB) + '" }'),
    "quantity": deployment("target slurm { time = " + "1h" * (2 * MB) + " }"),
}


@pytest.mark.parametrize("shape", LONG_TOKENS)
def test_a_long_string_or_quantity_is_read_in_bounded_memory(tmp_path: Path, shape: str) -> None:
    (tmp_path / "long.spark").write_text(LONG_TOKENS[shape], encoding="utf-8")
    for command in (["check"], ["plan", "--format", "json"], ["build", "-o", "out"]):
        done = spark(tmp_path, *command, "long.spark", memory=768 * MB)
        assert done.returncode in (0, 1), (command, done.stderr[-1500:])
        codes(done)  # no traceback, no internal error (a MemoryError is one)


def test_diagnostics_on_a_long_line_quote_it_only_around_their_span(tmp_path: Path) -> None:
    # 5,000 duplicates on one line of 45 KB: quoting the whole line in each diagnostic printed
    # 560 MB and took 2 GB; each quotes 120 characters around its span now.
    (tmp_path / "one.spark").write_text(deployment("serve { " + "port = 1 " * 5_000 + "}"), encoding="utf-8")
    done = spark(tmp_path, "check", "one.spark", memory=768 * MB)
    assert codes(done) == ["SPK106"] * 4_999
    assert len(done.stdout) < 5 * MB
    lines = done.stdout.splitlines()
    quoted = [(text, lines[i + 1]) for i, text in enumerate(lines) if text.startswith("4 | ")]
    assert len(quoted) == 2 * 4_999  # each duplicate, and the first `port` in its note
    for text, marker in quoted:
        assert len(text) <= len("4 | ") + 3 + 120 + 3
        column = marker.index("^")
        assert text[column : column + 4] == "port", (text, marker)
    assert lines[3].endswith("...") and quoted[-2][0].startswith("4 | ...")  # the last duplicate


def test_a_file_of_more_than_100_000_tokens_is_one_error(tmp_path: Path) -> None:
    # The deployment's first three lines hold 9 tokens, then each `a=1` line 3: the 100,001st
    # token is the `=` of the 33,331st `a=1`, on line 33,334.
    (tmp_path / "long.spark").write_text(deployment("a=1\n" * 33_334), encoding="utf-8")
    where = "long.spark:33334:2"
    for command in (["check"], ["plan"], ["build", "-o", "out"], ["fmt", "--check"]):
        done = spark(tmp_path, *command, "long.spark")
        assert done.returncode == 1, done.stdout[-1500:] + done.stderr[-1500:]
        if command[0] != "fmt":
            assert codes(done) == ["SPK009"]
        assert "more than 100,000 tokens" in done.stdout + done.stderr
        assert where in done.stdout + done.stderr
    done = spark(tmp_path, "check", "long.spark", "--format", "json")
    assert [d["code"] for d in json.loads(done.stdout)["diagnostics"]] == ["SPK009"]


def test_a_file_of_exactly_100_000_tokens_is_read(tmp_path: Path) -> None:
    (tmp_path / "full.spark").write_text(deployment("a=1\n" * 33_330), encoding="utf-8")  # 9 + 99,990 + `}`
    done = spark(tmp_path, "check", "full.spark", "--format", "json")
    assert "SPK009" not in {d["code"] for d in json.loads(done.stdout)["diagnostics"]}


def test_whitespace_does_not_count_towards_the_token_limit(tmp_path: Path) -> None:
    (tmp_path / "airy.spark").write_text(deployment("\n" * 200_000 + " " * 200_000), encoding="utf-8")
    assert codes(spark(tmp_path, "check", "airy.spark")) == []


DENSE = {  # 1 MiB each: every line an error, or a million tokens on one line
    "duplicates": deployment("a=1\n" * 262_000),
    "unknown parents": "profile p extends " + ",".join(["a"] * 520_000) + " { }\n",
    "list items": deployment("serve { extra_args = [" + "1," * 520_000 + "] }"),
}


@pytest.mark.parametrize("shape", DENSE)
def test_a_dense_file_stops_at_the_token_limit_in_bounded_memory(tmp_path: Path, shape: str) -> None:
    # Before the limit: up to 1.6 GB and a minute for check --format json, and 18 GB for text.
    (tmp_path / "dense.spark").write_text(DENSE[shape], encoding="utf-8")
    for command in (["check"], ["check", "--format", "json"], ["fmt", "--check"]):
        done = spark(tmp_path, *command, "dense.spark", memory=768 * MB)
        assert done.returncode == 1, (command, done.stderr[-1500:])
        assert "more than 100,000 tokens" in done.stdout + done.stderr


def test_unknown_parents_in_a_large_scope_name_a_few_visible_profiles(tmp_path: Path) -> None:
    # 2,000 profiles, and one extending 4,000 unknown ones: each help line listed all 2,000
    # (64 MB of output) and each unknown name was compared with each profile (37 s).
    lines = [f"profile q{i} {{ }}" for i in range(2_000)]
    lines.append("profile p extends " + ", ".join(f"z{i}" for i in range(4_000)) + " { }")
    (tmp_path / "scope.spark").write_text("\n".join(lines) + "\n", encoding="utf-8")
    done = spark(tmp_path, "check", "scope.spark", "--format", "json")
    found = json.loads(done.stdout)["diagnostics"]
    assert [d["code"] for d in found] == ["SPK115"] * 4_000
    assert len(done.stdout) < 10 * MB
    listing = "profiles visible here: `p`, `q0`, `q1`, `q10`, `q100`, `q1000`, `q1001`, `q1002`, `q1003`, `q1004`"
    assert all(d["help"].startswith(listing + " and 1,991 more;") for d in found)
    # Each one's fix drops its own name: `z7, ` for the eighth.
    line = lines[-1]
    column = line.index("z7,") + 1
    (eighth,) = [d for d in found if d["column"] == column]
    (fix,) = eighth["fixes"]
    assert fix["message"] == "drop `z7` from `extends`"
    (edit,) = fix["edits"]
    assert line[edit["column"] - 1 : edit["end_column"] - 1] == "z7, "


def test_a_long_list_of_unknown_options_suggests_for_the_first_twenty(tmp_path: Path) -> None:
    flags = ", ".join(f'"--enable-log-request{i}"' for i in range(30))
    (tmp_path / "flags.spark").write_text(deployment(f"serve {{ extra_args = [{flags}] }}"), encoding="utf-8")
    done = spark(tmp_path, "check", "flags.spark", "--format", "json")
    found = [d for d in json.loads(done.stdout)["diagnostics"] if d["code"] == "SPK903"]
    assert len(found) == 30
    assert [("did you mean" in d["message"]) for d in found] == [True] * 20 + [False] * 10
    columns = [d["column"] for d in found]
    assert columns == sorted(columns) and len(set(columns)) == 30  # each at its own item
