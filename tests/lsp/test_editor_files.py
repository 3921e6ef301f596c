"""The files under `editors/`: TextMate grammar, language configuration, VS Code and Vim."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[2]
EDITORS = REPO / "editors"
GRAMMAR: dict[str, Any] = json.loads((EDITORS / "spark.tmLanguage.json").read_text())
RULES: dict[str, Any] = GRAMMAR["repository"]


def _patterns(node: Any) -> list[str]:
    """Every regular expression in the grammar."""
    found = []
    if isinstance(node, dict):
        found += [node[k] for k in ("match", "begin", "end") if k in node]
        for value in node.values():
            found += _patterns(value)
    elif isinstance(node, list):
        for item in node:
            found += _patterns(item)
    return found


def _value_scope(text: str) -> str | None:
    """The scope the first matching value rule gives to the whole of `text`."""
    for rule in RULES["value"]["patterns"]:
        if "match" in rule and re.fullmatch(rule["match"], text):
            return rule.get("name") or rule["captures"]["1"]["name"]
    return None


def test_the_grammar_is_for_spark_files_and_its_regexes_compile() -> None:
    assert GRAMMAR["scopeName"] == "source.spark" and GRAMMAR["fileTypes"] == ["spark"]
    for pattern in _patterns(GRAMMAR):
        re.compile(pattern)
    for include in re.findall(r'"#([a-z]+)"', json.dumps(GRAMMAR)):
        assert include in RULES, f"#{include} is included but not defined"


def test_every_reserved_word_of_the_language_is_highlighted() -> None:
    lark = (REPO / "grammar" / "spark.lark").read_text()
    reserved = re.findall(r'^[A-Z]+: "([a-z]+)"$', lark, re.MULTILINE)
    assert set(reserved) == {"import", "profile", "deployment", "extends", "true", "false"}
    booleans = [r for r in RULES["value"]["patterns"] if r.get("name") == "constant.language.boolean.spark"]
    keyword_patterns = [
        RULES["import"]["match"],
        RULES["declaration"]["match"],
        RULES["extends"]["begin"],
        *(r["match"] for r in booleans),
    ]
    for word in reserved:
        line = f"{word} x" if word in ("profile", "deployment") else word
        assert any(re.search(p, line) for p in keyword_patterns), f"`{word}` is not a keyword"


def test_keys_blocks_and_declarations_are_told_apart() -> None:
    key = re.search(RULES["key"]["match"], "  max_model_len = 128K")
    assert key is not None and key.group(1) == "max_model_len"
    quoted = re.search(RULES["key"]["match"], '  "nvidia.com/gpu.product" = "B200"')
    assert quoted is not None and quoted.group(1) == '"nvidia.com/gpu.product"'
    block = re.search(RULES["block"]["match"], "  target kubernetes {")
    assert block is not None and block.groups() == ("target", "kubernetes")
    declaration = re.search(RULES["declaration"]["match"], "deployment muse-b200 extends a {")
    assert declaration is not None and declaration.groups() == ("deployment", "muse-b200")
    model = re.search(RULES["declaration"]["match"], "model my-llama {")
    assert model is not None and model.groups() == ("model", "my-llama")
    assert re.search(RULES["declaration"]["match"], "  model = my-llama") is None  # a key, not a declaration


@pytest.mark.parametrize(
    ("text", "scope"),
    [
        ("1h30m", "constant.numeric.quantity.spark"),
        ("64GiB", "constant.numeric.quantity.spark"),
        ("32_768", "constant.numeric.spark"),
        ("0.92", "constant.numeric.spark"),
        ("true", "constant.language.boolean.spark"),
        ("bf16-to-mxfp4", "constant.other.symbol.spark"),
        ("secret", "constant.other.symbol.spark"),
    ],
)
def test_values_get_their_scopes(text: str, scope: str) -> None:
    assert _value_scope(text) == scope


def test_ignore_comments_mark_the_directive_and_codes() -> None:
    directive, code = RULES["comment"]["patterns"]
    line = "# spark: ignore[SPK402, SPK404]"
    assert re.search(directive["match"], line)
    assert re.findall(code["match"], line) == ["SPK402", "SPK404"]


def test_language_configuration_matches_the_language() -> None:
    config = json.loads((EDITORS / "language-configuration.json").read_text())
    assert config["comments"] == {"lineComment": "#"}
    assert config["brackets"] == [["{", "}"], ["[", "]"], ["(", ")"]]
    assert re.fullmatch(config["wordPattern"], "bf16-to-mxfp4")
    assert re.search(config["indentationRules"]["increaseIndentPattern"], "  serve {  # c")
    assert re.search(config["indentationRules"]["decreaseIndentPattern"], "  }")


def test_the_vscode_extension_points_at_files_that_exist() -> None:
    package = json.loads((EDITORS / "package.json").read_text())
    contributes = package["contributes"]
    (language,) = contributes["languages"]
    (grammar,) = contributes["grammars"]
    assert language["extensions"] == [".spark"]
    assert (EDITORS / language["configuration"]).is_file()
    assert (EDITORS / grammar["path"]).is_file() and grammar["scopeName"] == "source.spark"
    # `main` is the bundle `npm run build` makes from extension.js (tests/test_vscode_extension.py
    # builds and packages it); the entry file is what must exist in the tree.
    build = package["scripts"]["build"].split()
    assert f"--outfile={package['main'].removeprefix('./')}" in build
    assert (EDITORS / build[1]).is_file()


def test_vim_detects_and_highlights_spark_files(tmp_path: Path) -> None:
    spec = tmp_path / "m.spark"
    spec.write_text('import "p.spark"\ndeployment d {\n  checkpoint = nvfp4  # spark: ignore[SPK402]\n}\n')
    out = tmp_path / "out"
    probe = (
        "for l in [1, 2, 3] | echo synIDattr(synID(l, match(getline(l), '\\S') + 1, 1), 'name')"
        " | endfor | echo synIDattr(synID(3, 39, 1), 'name') &filetype &shiftwidth"
    )
    subprocess.run(
        [
            "vim",
            "-Nu",
            "NONE",
            "-es",
            "-c",
            f"set rtp^={EDITORS / 'vim'}",
            "-c",
            "filetype plugin on",
            "-c",
            "syntax on",
            "-c",
            f"e {spec}",
            "-c",
            f"redir! > {out}",
            "-c",
            probe,
            "-c",
            "redir END",
            "-c",
            "qa!",
        ],
        check=False,
        timeout=30,
        capture_output=True,
    )
    assert out.read_text().split() == [
        "sparkImport",
        "sparkDeclare",
        "sparkKey",
        "sparkCode",
        "spark",
        "2",
    ]


def test_vim_highlights_a_model_declaration_but_not_the_model_key(tmp_path: Path) -> None:
    spec = tmp_path / "m.spark"
    spec.write_text("model my-llama {\n  layers = 32\n}\ndeployment d {\n  model = my-llama\n}\n")
    out = tmp_path / "out"
    probe = "for l in [1, 5] | echo synIDattr(synID(l, match(getline(l), '\\S') + 1, 1), 'name') | endfor"
    commands = ["filetype plugin on", "syntax on", f"e {spec}", f"redir! > {out}", probe, "redir END", "qa!"]
    subprocess.run(
        ["vim", "-Nu", "NONE", "-es", "-c", f"set rtp^={EDITORS / 'vim'}", *(a for c in commands for a in ("-c", c))],
        check=False,
        timeout=30,
        capture_output=True,
    )
    assert out.read_text().split() == ["sparkDeclare", "sparkKey"]
